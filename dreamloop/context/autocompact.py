"""Stage 6, autocompact (the conversation-loop text's Autocompact: the history summarised), and history.

Compaction is a model request like any other: the history before a recent
tail (the *head*) goes to the same model with a request to summarise it, and
what comes back becomes one user message. The cut is moved to a
``tool_use``/``tool_result`` pair boundary, so no kept result loses its call
and the summariser's input never ends on an unanswered call (field case F8).
A ``compact_boundary`` ``SystemMessage`` records the compaction; the new
context is ``[boundary, summary, *tail]``, or ``[boundary, summary, request, *tail]`` when the person's newest
request (``latest_request``) was in the head: it is kept word for word after the summary, so the model can
tell what it was asked last (dreamloop's choice, which neither text describes). ``messages_after_compact_boundary``
is where every later request starts (the four-step-loop text's 压缩边界之后的消息):
the transcript keeps everything before the boundary, the model never sees it
again. ``compact_conversation`` is the one entry point, for the autocompact
stage, for the reactive recovery after a ``prompt is too long`` 400, and for a
manual ``/compact``; the ``pre_compact`` hooks run before it (``PreCompact``: the
pipeline asks them, in one place, whichever compaction it is). This module
knows nothing about thresholds or when it is called.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Mapping

import anthropic
from anthropic.types import Message

from ..abort import AbortController
from ..errors import CompactionFailed, StreamError
from ..messages import (AssistantMessage, AttachmentMessage, SystemMessage, UserMessage, normalize_messages_for_api,
                        user_message)
from ..tokens import TokenCounter
from .content import is_tool_result_message

__all__ = [
    "COMPACT_SYSTEM_PROMPT",
    "SUMMARY_PREFIX",
    "Compaction",
    "CompactTrigger",
    "PreCompact",
    "PreCompactResult",
    "compact_conversation",
    "compact_prompt",
    "compaction_cut",
    "is_compact_boundary",
    "is_compaction_request",
    "is_person_request",
    "latest_request",
    "latest_request_index",
    "messages_after_compact_boundary",
    "pre_compact_result",
]

CompactTrigger = Literal["auto", "manual", "reactive"]
"""Why a compaction runs: the autocompact stage, a person's ``/compact``, or recovery after a 400."""

@dataclass(frozen=True)
class PreCompactResult:
    """What the ``pre_compact`` hooks said before a compaction.

    * ``instructions``: added to the summarising request's instructions (None: nothing to add).
    * ``messages``: records and notices for the person (UI only), yielded before the compaction.
    * ``stop`` / ``stop_reason``: a hook asked to end the run (Terminal ``hook_stopped``); no compaction.
    """

    instructions: str | None = None
    messages: tuple[Any, ...] = ()
    stop: bool = False
    stop_reason: str = ""


PreCompact = Callable[[CompactTrigger, "str | None"], Awaitable["PreCompactResult | str | None"]]
"""``async pre_compact(trigger, custom_instructions) -> PreCompactResult | str | None``: called just before
a compaction (the ``pre_compact`` hook event); a plain string is extra instructions."""


def pre_compact_result(said: Any) -> PreCompactResult:
    """What a ``pre_compact`` callable returned, as a ``PreCompactResult``."""
    if isinstance(said, PreCompactResult):
        return said
    return PreCompactResult(instructions=said or None)

COMPACT_SYSTEM_PROMPT = "You summarise a coding session so that the work can go on from the summary alone."
"""The summarising request's system prompt, in dreamloop's words (no scenario records what Claude Code sends,
and its own words are not copied here); ``is_compaction_request`` recognises it."""

SUMMARY_PREFIX = ("This conversation continues an earlier one that no longer fit in the context window; "
                  "what it covered is summarised below.\n\n")
"""How the summary message begins (the model reads it as the first message of the new context): dreamloop's
words (Claude Code's own are not copied here)."""


def compact_prompt(custom_instructions: str | None = None) -> str:
    """The user turn that asks for the summary (plus ``custom_instructions``, if any)."""
    prompt = (
        "Write a summary of the conversation so far that is detailed enough to continue the work without "
        "the earlier messages. Cover, in this order:\n"
        "1. Primary request: the user's requests and intent, quoted where exact words matter.\n"
        "2. Key details: files, names, values and commands that matter.\n"
        "3. Errors met and how they were fixed.\n"
        "4. Done so far, and what is still pending.\n"
        "5. Current work and the next step.\n"
        "Answer with the summary only, as plain text. Do not call any tools."
    )
    if custom_instructions:
        prompt += f"\n\nAdditional instructions:\n{custom_instructions}"
    return prompt


def _joined(*parts: str | None) -> str | None:
    return "\n\n".join(part for part in parts if part) or None


def is_compaction_request(body: Mapping[str, Any]) -> bool:
    """True if a Messages API request body is a summarising request (for scripts and policies)."""
    system = body.get("system")
    if isinstance(system, list):
        system = "".join(b.get("text", "") for b in system if isinstance(b, dict))
    return system == COMPACT_SYSTEM_PROMPT


def is_compact_boundary(message: Any) -> bool:
    """True for a ``compact_boundary`` system message."""
    return isinstance(message, SystemMessage) and message.subtype == "compact_boundary"


# ---------------------------------------------------------------------------
# Where the history lives


def messages_after_compact_boundary(messages: list[Any] | tuple[Any, ...]) -> list[Any]:
    """The messages from the last ``compact_boundary`` on (all of them if there is none).

    In a transcript the kept tail sits *before* the boundary (it was written
    first); the boundary names it (``metadata["kept"]``), so it is put back
    right after the summary. In the loop's own State the tail already follows
    the summary and nothing moves. Pure; O(len).
    """
    at = next((i for i in range(len(messages) - 1, -1, -1) if is_compact_boundary(messages[i])), None)
    if at is None:
        return list(messages)
    boundary = messages[at]
    after = list(messages[at:])
    kept = (boundary.metadata or {}).get("kept") or []
    if at == 0 or not kept:
        return after
    present = {m.uuid for m in after}
    earlier = {m.uuid: m for m in messages[:at]}
    relinked = [earlier[u] for u in kept if u in earlier and u not in present]
    if not relinked:
        return after
    summary_uuid = (boundary.metadata or {}).get("summary_uuid")
    place = 2 if len(after) > 1 and after[1].uuid == summary_uuid else 1
    return after[:place] + relinked + after[place:]


# ---------------------------------------------------------------------------
# The cut


def _sent(message: Any) -> bool:
    if isinstance(message, (UserMessage, AssistantMessage)):
        return True
    return isinstance(message, AttachmentMessage) and bool(normalize_messages_for_api([message]))


def compaction_cut(messages: list[Any], keep_recent: int) -> int:
    """Where the kept tail starts: before the newest ``keep_recent`` sent messages, moved to a pair boundary.

    The tail never starts with a ``tool_result`` message whose ``tool_use`` is
    left behind: the cut moves back to the assistant message that made the
    call (the four-step-loop text pairs every result with its call by id, and
    the API refuses one without the other). 0 means there is
    nothing before the tail to summarise.
    """
    cut, seen = len(messages), 0
    while cut > 0 and seen < keep_recent:
        cut -= 1
        seen += _sent(messages[cut])
    while 0 < cut < len(messages) and is_tool_result_message(messages[cut]):
        cut -= 1
        while cut > 0 and not isinstance(messages[cut], AssistantMessage):
            cut -= 1
    if not any(_sent(m) for m in messages[:cut]):
        return 0
    return cut


# ---------------------------------------------------------------------------
# The latest request


def is_person_request(message: Any) -> bool:
    """True for a message holding the person's own text: a prompt (a user message that is not ``is_meta`` and
    carries no ``tool_result``, with some text), or queued input (a ``queued_command`` attachment)."""
    if isinstance(message, AttachmentMessage):
        said = message.attachment
        return said.get("type") == "queued_command" and bool(str(said.get("prompt", "")).strip())
    if not isinstance(message, UserMessage) or message.is_meta or is_tool_result_message(message):
        return False
    content = message.message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return any(isinstance(b, dict) and b.get("type") == "text" and str(b.get("text", "")).strip()
               for b in content or [])


def latest_request_index(messages: list[Any] | tuple[Any, ...], start: int = 0) -> int | None:
    """Where the person's newest request is in ``messages[start:]``: the index (in ``messages``) of the last
    ``is_person_request`` message there, or None when there is none.

    With ``start=0``, the message ``latest_request`` picks over the whole history, found from the end: pure;
    O(messages after it). The snip stage leaves it whole, so a compaction keeps its text word for word
    (dreamloop's choice).
    """
    return next((i for i in range(len(messages) - 1, start - 1, -1) if is_person_request(messages[i])), None)


def latest_request(head: list[Any], tail: list[Any]) -> Any | None:
    """The person's newest request, when it is in ``head`` (the part a compaction summarises); else None.

    Newest over ``[*head, *tail]`` by position (``latest_request_index``); None when it is in ``tail`` (kept as
    it is anyway) or there is none. Pure; O(len). ``compact_conversation`` keeps what it returns word for word
    right after the summary (dreamloop's choice: neither text says what becomes of the person's last words).
    """
    at = latest_request_index([*head, *tail])
    return head[at] if at is not None and at < len(head) else None


# ---------------------------------------------------------------------------
# compact_conversation()


@dataclass(frozen=True)
class Compaction:
    """A finished compaction.

    * ``messages``: the new context, ``[boundary, summary, *tail]`` (the next ``messages_for_query``), or
      ``[boundary, summary, request, *tail]`` when the person's latest request was kept (``request``).
    * ``boundary``: the ``compact_boundary`` ``SystemMessage`` (``metadata``: ``trigger``,
      ``pre_tokens``, ``tokens_before``, ``tokens_after``, ``summary_uuid``, ``kept``, ``replaced``).
    * ``summary``: the ``is_meta`` user message holding the model's summary.
    * ``head`` / ``tail``: the messages summarised and the messages kept as they were.
    * ``tokens_before`` / ``tokens_after``: the request's size before and after (estimates).
    * ``usage``: the summarising response's ``usage`` (dict).
    * ``hook_messages``: what the ``pre_compact`` hooks said (UI only), to yield before the boundary.
    * ``request``: the person's latest request, from the head, kept word for word after the summary (its uuid
      first in ``metadata["kept"]``); None when it was in the tail, there was none, or the switch was off.
    """

    messages: list[Any]
    boundary: SystemMessage
    summary: UserMessage
    head: list[Any]
    tail: list[Any]
    tokens_before: int
    tokens_after: int
    usage: dict[str, Any] = field(default_factory=dict)
    hook_messages: tuple[Any, ...] = ()
    request: Any = None


async def compact_conversation(
    messages: list[Any],
    *,
    model: Any,
    uuid: Callable[[], str],
    keep_recent: int = 4,
    max_tokens: int = 2048,
    trigger: CompactTrigger = "auto",
    custom_instructions: str | None = None,
    abort: AbortController | None = None,
    count: Callable[[list[Any]], int] | None = None,
    origins: Mapping[str, tuple[str, ...]] | None = None,
    opening: Any = None,
    keep_latest_request: bool = True,
) -> Compaction:
    """Summarise the head of ``messages`` with ``model``; keep the newest ``keep_recent``.

    ``messages``: the context after the last boundary (loop messages).
    ``model``: an ``AnthropicModel``; the summarising request has
    ``COMPACT_SYSTEM_PROMPT``, no tools, the head and ``compact_prompt()``, and
    at most ``max_tokens`` of output (``custom_instructions`` added to the ask). The
    ``pre_compact`` hooks are the caller's to run first (``ContextPipeline`` does, for
    autocompact and the reactive compaction alike). ``abort``: the run's signal (the
    request is cancelled with it; ``abort.Aborted`` propagates).
    ``count(messages)`` sizes a request holding ``messages`` (default: the
    messages alone, ``TokenCounter().count``); the pipeline adds its system
    prompt, tools and user context. ``origins`` maps a rewritten message's
    uuid to the transcript uuids it came from (for ``metadata["kept"]``).
    ``opening``: the meta user message the run's requests open with (stage 5's
    user context: memory files, the date), or None; the summarising request
    opens with it too, so it shares the conversation's prefix (and its cache).
    ``keep_latest_request``: when the person's newest request (``latest_request``) is in the head, it is
    also kept as it is, right after the summary (dreamloop's choice; False: only the summary's paraphrase).

    Raises ``CompactionFailed`` when there is nothing to summarise, the
    request fails (an SDK error, an incomplete or malformed stream) or the
    answer has no text.

    Example (offline: the script answers the summarising request)::

        done = await compact_conversation(history, model=dl.offline([dl.reply("We read a.py ...")]),
                                          uuid=deps.uuid, keep_recent=2)
        done.messages   # [compact_boundary, summary, *the last 2 messages]
    """
    cut = compaction_cut(messages, keep_recent)
    head, tail = list(messages[:cut]), list(messages[cut:])
    if not normalize_messages_for_api(head):
        raise CompactionFailed("nothing to summarise: every message is in the kept tail")
    sent = normalize_messages_for_api([opening, *head] if opening is not None else head)
    ask = {"type": "text", "text": compact_prompt(custom_instructions)}
    if sent[-1]["role"] == "user":
        sent[-1] = {"role": "user", "content": [*sent[-1]["content"], ask]}
    else:
        sent.append({"role": "user", "content": [ask]})
    answer: Message | None = None
    try:
        with abort.guard() if abort is not None else nullcontext():
            async for item in model.stream(messages=sent, max_tokens=max_tokens, system=COMPACT_SYSTEM_PROMPT):
                if isinstance(item, Message):
                    answer = item
    except (anthropic.APIError, StreamError) as error:  # incomplete or malformed streams too
        said = getattr(error, "api_message", None) or getattr(error, "message", None) or str(error)
        raise CompactionFailed(f"the summarising request failed: {said}") from error
    text = "".join(b.text for b in answer.content if b.type == "text").strip() if answer else ""
    if not text:
        raise CompactionFailed("the model answered the summarising request without any text")
    summary = user_message(SUMMARY_PREFIX + text, is_meta=True, uuid=uuid())
    request = latest_request(head, tail) if keep_latest_request else None
    new = [summary, *([request] if request is not None else []), *tail]
    count = count or TokenCounter().count
    before = count(messages)
    after = count(new)
    origins = origins or {}
    kept = [original for m in new[1:] for original in origins.get(m.uuid, (m.uuid,))]
    usage = answer.usage.model_dump(mode="json", exclude_none=True) if answer is not None else {}
    boundary = SystemMessage(
        uuid=uuid(), subtype="compact_boundary", level="info",
        content=f"Conversation compacted ({trigger}): {len(head)} messages summarised, {len(tail)} kept "
                f"({before:,} → {after:,} tokens, −{before - after:,})",
        metadata={"stage": "autocompact", "trigger": trigger, "pre_tokens": before, "tokens_before": before,
                  "tokens_after": after, "summary_uuid": summary.uuid, "kept": kept,
                  "replaced": {summary.uuid: [m.uuid for m in head]}, "usage": usage},
    )
    return Compaction([boundary, *new], boundary, summary, head, tail, before, after, usage, request=request)
