"""What the loop says when an iteration ends abnormally: the closing messages, built by pure functions.

When a run stops early (a Stop, a model error nothing recovered, a hook's bug) the transcript must stay
valid and both readers must learn what happened. This module builds, from plain data (the response that
arrived, the stream so far, the calls' results, which calls had started) and an id factory, the messages
that close the iteration, in the order they are yielded:

* the blocks that finished streaming, kept as the assistant message (``kept``), when no whole response
  arrived; a ``tool_use`` among them never ran unless streaming tool execution had started it;
* one ``tool_result`` for every call still without one (``results``), as the four-step-loop text's
  ``yieldMissingToolResultBlocks()`` gives them: a call that had started says it may have made changes;
* what the model reads next (a meta user message, ``INTERRUPTED_NOTE`` and its siblings: one per
  abort, whatever the point it landed at) and what the person reads (a ``SystemMessage`` notice).

A failed attempt at a request ends abnormally too, and says so: ``attempt_withdrawn`` (asked again: what it
showed is tombstoned) and ``attempt_kept`` (kept as far as it finished: the streaming fallback's ``keep`` and
``resume``, and any attempt a call of which had started); so do ``max_turns`` (``max_turns_reached``) and a
``stop_reason`` of ``tool_use`` without a block (``malformed_tool_use``). It also names the Terminal of an
unrecovered model error (``model_error``). Nothing here records,
yields or decides: the loop (``query.py``) calls one function where an ending is decided and records
what it returns. The words are dreamloop's own; Claude Code 2.1.38 also wrote a user message after a Stop
(``[Request interrupted by user]`` in
``tests/fixtures/claude-code-sessions/03_spotter_tool-heavy_v2.1.38_interrupts_queue-ops_local-commands.jsonl``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Literal, Mapping, Sequence

import anthropic

from anthropic.types import Message

from .errors import HookError, IncompleteStreamError, MalformedStreamError

from .messages import (AssistantMessage, AttachmentMessage, SystemMessage, TombstoneMessage, UserMessage,
                       assistant_tool_uses, user_message)
from .partial import PartialResponse, one_call_per_id, visible
from .recovery import MALFORMED_TOOL_USE_MESSAGE, STREAM_RESUME_MESSAGE, is_prompt_too_long, reminder
from .state import Terminal, TerminalReason
from .tools import USER_INTERRUPT, Unfinished, model_failure, tool_results_message
from .tools.cancellation import hook_failure

__all__ = [
    "INTERRUPTED_COMPACTION_NOTE", "INTERRUPTED_NOTE", "INTERRUPTED_STOP_HOOKS_NOTE", "INTERRUPTED_TOOLS_NOTE",
    "CANCELLED", "Closing", "Interruption", "Phase", "attempt_kept", "attempt_withdrawn", "close_stream", "error_text", "hook_raised",
    "hook_stopped", "interrupted", "is_interrupted_note", "malformed_tool_use",
    "max_turns_reached", "model_error", "model_failed", "notice", "raised", "stop_notices", "stream_interrupted",
    "tools_interrupted",
]

Ids = Callable[[], str]
"""Where a message's uuid comes from (``QueryDeps.uuid``): called once per message, in yield order."""

INTERRUPTED_NOTE = "[The person stopped this request before the response was finished.]"
"""What the model is told after an abort while it streamed (a meta user message, dreamloop's words)."""
INTERRUPTED_TOOLS_NOTE = "[The person stopped this request while its tool calls ran.]"
"""What the model is told after an abort while tools ran."""
INTERRUPTED_STOP_HOOKS_NOTE = "[The person stopped this request after your response, while the stop hooks ran.]"
"""What the model is told after an abort while the stop hooks ran (dreamloop's words)."""
INTERRUPTED_COMPACTION_NOTE = "[The person stopped this request while the conversation was being compacted.]"
"""What the model is told after an abort during a compaction, auto or reactive (dreamloop's words)."""

Interruption = Literal["streaming", "response_arrived", "tools_started", "retry_wait", "tools", "tools_done",
                       "stop_hooks", "compaction"]
"""Where an abort landed: while the model streamed; after its response arrived (before its tools ran, or
with streaming tool execution while they ran); while the loop waited to ask again (an overload's back-off);
while tools ran; after every call had finished; while the stop hooks ran; during a compaction."""

_SAID: dict[str, tuple[str, str]] = {  # where -> (the model's note, the person's notice)
    "streaming": (INTERRUPTED_NOTE, "Interrupted while the model was streaming."),
    "response_arrived": (INTERRUPTED_NOTE, "Interrupted after the model's response arrived, before its tools ran."),
    "tools_started": (INTERRUPTED_NOTE, "Interrupted after the model's response arrived, while its tools ran."),
    "retry_wait": (INTERRUPTED_NOTE, "Interrupted while waiting to ask the model again."),
    "tools": (INTERRUPTED_TOOLS_NOTE, "Interrupted while tools were running."),
    "tools_done": (INTERRUPTED_TOOLS_NOTE, "Interrupted after every tool call had finished."),
    "stop_hooks": (INTERRUPTED_STOP_HOOKS_NOTE, "Interrupted while the stop hooks ran."),
    "compaction": (INTERRUPTED_COMPACTION_NOTE, "Interrupted while the conversation was being compacted."),
}


Phase = Literal["context", "stream", "recovery", "stop_checks", "tools"]
"""The loop's phase an exception left (``raised``): the context pipeline (phase 2), the model's attempts (3),
recovery, the stop checks (4 without tool_use) or the tools (4 with it; phase 5 awaits nothing)."""

CANCELLED: Mapping[Phase, TerminalReason] = {
    "context": "aborted_streaming", "stream": "aborted_streaming", "recovery": "aborted_streaming",
    "stop_checks": "stop_hook_prevented", "tools": "aborted_tools"}
"""The Terminal reason of a run whose task was cancelled in each phase (dreamloop's names: an abort at the same
point ends the same way)."""


@dataclass(frozen=True)
class Closing:
    """The messages that close an iteration (or an attempt), by role: ``withdrawn`` (tombstones of what was shown
    and is not kept), ``kept`` (the finished blocks of a broken or stopped stream, as the assistant message),
    ``results`` (the user message answering every unanswered call), ``notes`` (what the model reads and the
    person's notices). ``messages`` is the order they are yielded in."""

    kept: AssistantMessage | None = None
    results: UserMessage | None = None
    notes: tuple[UserMessage | SystemMessage, ...] = ()
    withdrawn: tuple[TombstoneMessage, ...] = ()

    @property
    def messages(self) -> list[Any]:
        return [*self.withdrawn, *(m for m in (self.kept, self.results) if m is not None), *self.notes]


def notice(uuid: Ids, subtype: str, content: str, level: str = "info", **extra: Any) -> SystemMessage:
    """A notice for the person (``SystemMessage``: UI only, never sent to the model)."""
    return SystemMessage(uuid=uuid(), subtype=subtype, content=content, level=level, **extra)


def interrupted(where: Interruption, uuid: Ids) -> tuple[UserMessage, SystemMessage]:
    """The two messages of an abort at ``where``: the note the model reads (a meta user message, its id
    drawn first) and the ``interrupted`` notice the person reads. Every abort point leaves exactly this."""
    said, shown = _SAID[where]
    return user_message(said, is_meta=True, uuid=uuid()), notice(uuid, "interrupted", shown, "warning")


def is_interrupted_note(message: Any) -> bool:
    """Is ``message`` one of the notes ``interrupted`` gives the model?"""
    notes = {said for said, _ in _SAID.values()}
    return getattr(message, "type", None) == "user" and getattr(message, "is_meta", False) \
        and message.message.get("content") in notes


def close_stream(response: Sequence[AssistantMessage], partial: PartialResponse, results: Mapping[str, Any],
                 started: Collection[str], why: Unfinished, uuid: Ids) -> Closing:
    """Keep the blocks that finished streaming and answer their ``tool_use`` calls.

    ``response``: the assistant messages that arrived whole (then ``partial`` is not looked at);
    ``partial``: the stream so far; ``results``: tool_use_id -> the result of each call that ended;
    ``started``: ids of the calls that had started. As the four-step-loop text has it, every dangling
    tool_use gets an error result (``yieldMissingToolResultBlocks()``), so the next request is valid; keeping
    the blocks the person already saw is dreamloop's choice. A call that streaming tool execution already ran
    keeps its result; one it had started gets ``why.running``, the others ``why.not_started``.
    """
    kept = None
    if not response:
        unfinished = partial.message()
        if unfinished is not None:
            unfinished, _ = one_call_per_id(unfinished)
        if unfinished is not None and any(visible(b) for b in unfinished.content):
            kept = AssistantMessage(uuid=uuid(), message=unfinished)
    tool_uses = [block for message in (*response, *([kept] if kept else [])) for block in assistant_tool_uses(message)]
    answers = tool_results_message(tool_uses, results, why, started=started, uuid=uuid()) if tool_uses else None
    return Closing(kept=kept, results=answers)


def stream_interrupted(response: Sequence[AssistantMessage], partial: PartialResponse, results: Mapping[str, Any],
                       started: Collection[str], uuid: Ids, *, waiting: bool = False) -> Closing:
    """An abort while the model streamed (or, ``waiting``, while the loop waited to ask it again): what finished
    is kept, its calls answered (``USER_INTERRUPT``), then the note and the notice."""
    where: Interruption = ("retry_wait" if waiting else "tools_started" if response and started else
                           "response_arrived" if response else "streaming")
    closing = close_stream(response, partial, results, started, USER_INTERRUPT, uuid)
    return Closing(closing.kept, closing.results, interrupted(where, uuid))


def tools_interrupted(tool_uses: Sequence[Any], results: Mapping[str, Any], started: Collection[str],
                      delivered: bool, uuid: Ids) -> Closing:
    """An abort while tools ran: finished results stay; the others say whether they had started (F14); the model
    is told in a note after them.

    ``delivered``: the results message was already yielded (the abort came while the caller handled it):
    every call is answered, so only the note and the notice are added, and the notice says so (the
    four-step-loop text checks for an abort at the checkpoint after the tool phase).
    """
    if delivered:
        return Closing(notes=interrupted("tools_done", uuid))
    said, shown = _SAID["tools"]
    note = user_message(said, is_meta=True, uuid=uuid())  # its id first: the order the ids were always drawn in
    answers = tool_results_message(tool_uses, results, USER_INTERRUPT, started=started, uuid=uuid())
    return Closing(results=answers, notes=(note, notice(uuid, "interrupted", shown, "warning")))


def hook_raised(tool_uses: Sequence[Any], results: Mapping[str, Any], started: Collection[str], delivered: bool,
                error: Exception, uuid: Ids) -> Closing:
    """A Python hook raised (``hook_stopped``): every call of the response still without a result gets one
    (finished ones keep theirs; ``delivered``: the results message was already yielded), then the notice."""
    answers = None if delivered or not tool_uses else tool_results_message(
        tool_uses, results, hook_failure(str(error)), started=started, uuid=uuid())
    said = notice(uuid, "hook_error", f"The run ended because a hook raised: {error}", "error")
    return Closing(results=answers, notes=(said,))


def raised(phase: Phase, error: BaseException, turn_count: int, *, response: Sequence[AssistantMessage],
           partial: PartialResponse, results: Mapping[str, Any], started: Collection[str], tool_uses: Sequence[Any],
           delivered: bool, uuid: Ids) -> tuple[Terminal, Closing]:
    """How an exception that leaves the loop in ``phase`` ends the run (it propagates after): the Terminal and
    the messages that close the transcript (kept, not yielded).

    A Python hook's bug (``HookError``: a tool hook, a stop hook, a ``pre_compact`` hook) ends ``hook_stopped``
    with ``hook_raised``'s closing. A cancelled task ends as ``CANCELLED`` names the phase: while the model
    streamed, what finished is kept and its calls answered (``stream_interrupted``); while tools ran, every
    call is answered (``tools_interrupted``); elsewhere nothing is added.
    """
    if isinstance(error, HookError):
        terminal = Terminal(reason="hook_stopped", turn_count=turn_count, error=str(error))
        return terminal, hook_raised(tool_uses, results, started, delivered, error, uuid)
    closing = (stream_interrupted(response, partial, results, started, uuid) if phase == "stream" else
               tools_interrupted(tool_uses, results, started, delivered, uuid) if phase == "tools" else Closing())
    return Terminal(reason=CANCELLED[phase], turn_count=turn_count), closing


def model_failed(response: Sequence[AssistantMessage], partial: PartialResponse, results: Mapping[str, Any],
                 started: Collection[str], error: Exception, terminal: Terminal, uuid: Ids) -> Closing:
    """An unrecovered model error: close the transcript, then tell the person (never the model)."""
    closing = close_stream(response, partial, results, started, model_failure(terminal.error or ""), uuid)
    subtype = {IncompleteStreamError: "incomplete_response", MalformedStreamError: "malformed_stream"}.get(
        type(error), "api_error")
    return Closing(closing.kept, closing.results, (notice(uuid, subtype, terminal.error or "", "error"),))


def model_error(error: Exception, turn_count: int) -> Terminal:
    """The Terminal of an unrecovered model error: ``prompt_too_long``, ``image_error``, ``api_error`` (an API
    error response), each as Claude Code 2.1.332 named its ending (``prompt_too_long_once``, ``image_rejected``,
    ``http_529``), or ``model_error`` (an incomplete or malformed stream, anything else: the four-step-loop
    text's ending for a model error nothing recovers)."""
    if isinstance(error, IncompleteStreamError):
        return Terminal(reason="model_error", turn_count=turn_count, error=f"Incomplete response: {error}")
    if isinstance(error, MalformedStreamError):
        return Terminal(reason="model_error", turn_count=turn_count, error=f"Malformed stream: {error}")
    said = getattr(error, "api_message", None) or str(error)
    if is_prompt_too_long(error):
        return Terminal(reason="prompt_too_long", turn_count=turn_count, error=said)
    if isinstance(error, anthropic.BadRequestError) and "image" in said.lower():
        return Terminal(reason="image_error", turn_count=turn_count, error=said)
    if isinstance(error, anthropic.APIStatusError):
        return Terminal(reason="api_error", turn_count=turn_count, error=f"API error: {error_text(error)}")
    return Terminal(reason="model_error", turn_count=turn_count, error=f"API error: {error_text(error)}")


def error_text(error: Exception) -> str:
    """``overloaded_error: Overloaded (HTTP 529)`` from an SDK error's ``type`` and ``api_message``."""
    kind, said = getattr(error, "type", None), getattr(error, "api_message", None)
    if kind and said:
        status = getattr(error, "status_code", None)
        return f"{kind}: {said}" + (f" (HTTP {status})" if status and status != 200 else "")
    return getattr(error, "message", None) or str(error)


def hook_stopped(attachments: Sequence[Any], uuid: Ids) -> SystemMessage | None:
    """The notice that ends the run when a tool hook said ``continue: false`` (``hook_stopped``), or None."""
    for attachment in (m.attachment for m in attachments if m.type == "attachment"):
        if attachment.get("type") == "hook_stopped_continuation":
            return notice(uuid, "hook_stopped", f"{attachment['hookName']} hook stopped the run: "
                                                f"{attachment['stopReason']}", "warning")
    return None


def stop_notices(stop_reason: str | None, *, recovered: bool, limit: int | None, escalated: bool, resumes: int,
                 uuid: Ids) -> list[SystemMessage]:
    """Warnings when a response asks for no tools but its stop_reason says something else.

    ``recovered``: recovery acts on a ``max_tokens`` cut (escalate or resume); then a cut that recovery could
    not mend is the withheld error, shown now (an error, never assistant text), with the ``limit`` of the last
    request, whether it was ``escalated`` and how many ``resumes`` it had; with recovery off, a warning that
    the loop ends here.
    """
    if stop_reason == "tool_use":
        return [notice(uuid, "stop_reason_without_tool_use", "The model's stop_reason was tool_use but it sent no "
                       "tool_use block; nothing to run.", "warning")]
    if stop_reason == "max_tokens" and recovered:
        return [notice(uuid, "max_output_tokens",
                       f"The response was cut at max_tokens ({limit:,}) again after recovery "
                       f"({'escalated, ' if escalated else ''}{resumes} resume{'s' if resumes != 1 else ''}), "
                       "so the loop ends here.", "error")]
    if stop_reason == "max_tokens":
        return [notice(uuid, "max_output_tokens",
                       "The response was cut at max_tokens (recovery is off), so the loop ends here.", "warning")]
    return []


def attempt_withdrawn(step: str, error: Exception, shown: dict[str, Any] | None, yielded: Sequence[str],
                      started: Sequence[str], uuid: Ids, *, model: str, fallback: str | None, switched: bool,
                      overloads: int, most: int, failures: int) -> list[Any]:
    """A failed attempt that is asked again (``step``: ``fallback``, ``retry``, ``resend``, ``non_streaming``): a
    tombstone for the partial response ``shown`` (by the id its ``message_start`` gave, with what was shown of it)
    and for each message it ``yielded`` (its assistant message, its progress), then the notice: which model, how
    many ``overloads`` in a row of at most ``most``, what happens next. ``started``: calls a discarded executor had
    started (their effects may remain; ``decide_attempt`` keeps such an attempt, so there are none)."""
    why = f"{step}: {error_text(error)}"
    tombstones = [TombstoneMessage(uuid=uuid(), target_uuid=shown["id"], reason=why, message=shown)] if shown else []
    tombstones += [TombstoneMessage(uuid=uuid(), target_uuid=target, reason=why) for target in yielded]
    ran = (f" Tool calls it had started were stopped or had finished; their effects may remain: "
           f"{', '.join(started)}." if started else "")
    if step == "fallback":
        cause = "was not found" if getattr(error, "status_code", None) == 404 else (
            f"was overloaded {overloads} time{'s' if overloads != 1 else ''} in a row")
        said = f"{model} {cause}: switching to {fallback} for the rest of the run, and asking it the same request.{ran}"
        told = notice(uuid, "model_fallback", said, "warning", metadata={
            "from": model, "to": fallback, "overloads": overloads, "discarded": list(started)})
    elif step == "retry":
        then = "the fallback model" if fallback is not None and not switched else "giving up"
        said = f"{model} is overloaded ({error_text(error)}): asking again ({overloads}/{most} before {then}).{ran}"
        told = notice(uuid, "api_retry", said, "warning", metadata={
            "model": model, "overloads": overloads, "limit": most, "discarded": list(started)})
    else:  # the streaming fallback: the same request again, streamed or not
        how = "without streaming" if step == "non_streaming" else "streaming"
        said = (f"The stream broke ({error_text(error)}): what it showed is withdrawn, and the same request "
                f"goes again, {how}.{ran}")
        told = notice(uuid, "streaming_fallback", said, "warning", metadata={
            "step": step, "failures": failures, "discarded": list(started)})
    return [*tombstones, told]


def attempt_kept(step: str, error: Exception, cut: dict[str, Any] | None, finished: Message | None,
                 started: Sequence[str], uuid: Ids, request_id: str | None) -> Closing:
    """A broken stream kept as far as it finished (``step``: ``keep`` or ``resume``): a tombstone for the response
    as shown when a block of it was ``cut`` (what it showed beyond the finished blocks), the ``finished`` blocks as
    the assistant message, the notice, and for ``resume`` the note asking the model to go on. ``started``: calls
    that had started, which is why an attempt that would have been withdrawn is kept (``decide_attempt``)."""
    why = f"streaming_fallback: {error_text(error)}"
    tombstone = TombstoneMessage(uuid=uuid(), target_uuid=cut["id"], reason=why, message=cut) if cut else None
    kept = None
    if finished is not None and any(visible(block) for block in finished.content):
        kept = AssistantMessage(uuid=uuid(), message=finished, request_id=request_id)
    said = ("its finished tool calls run as if the response had ended there" if step == "keep" else
            "its finished text stays, the unfinished tool call is dropped, and the model is asked to go on")
    if started:  # a call that started is never withdrawn: it runs once, and the model reads its result
        said += f"; {', '.join(started)} had started, so the response is not asked for again"
    notes: tuple[Any, ...] = (notice(uuid, "streaming_fallback", f"The stream broke ({error_text(error)}): {said}.",
                                     "warning", metadata={"step": step, **({"started": list(started)} if started
                                                                           else {})}),)
    if step == "resume":
        notes += (user_message(reminder(STREAM_RESUME_MESSAGE), is_meta=True, uuid=uuid()),)
    return Closing(kept=kept, notes=notes, withdrawn=(tombstone,) if tombstone else ())


def max_turns_reached(next_turn_count: int, max_turns: int, uuid: Ids) -> AttachmentMessage:
    """The ``max_turns_reached`` attachment: the turn the loop refused to start and the limit."""
    return AttachmentMessage(uuid=uuid(), attachment={"type": "max_turns_reached", "max_turns": max_turns,
                                                      "turn_count": next_turn_count})


def malformed_tool_use(retries: int, limit: int, response: Sequence[AssistantMessage], uuid: Ids) -> list[Any]:
    """``stop_reason`` said ``tool_use`` but no tool_use block came, for the ``retries + 1``-th time in this turn.
    Within ``limit``: the ``response`` withdrawn (tombstones), a notice and the note that asks again; past it, the
    one notice of the ``malformed_tool_use_exhausted`` ending (its ``content`` is the Terminal's error)."""
    if retries >= limit:
        return [notice(uuid, "stop_reason_without_tool_use", f"The model's stop_reason was tool_use without a "
                       f"tool_use block {retries + 1} times in this turn, so the loop ends here.", "error")]
    why = "malformed_tool_use_retry: stop_reason tool_use without a tool_use block"
    out: list[Any] = [TombstoneMessage(uuid=uuid(), target_uuid=m.uuid, reason=why) for m in response]
    out.append(notice(uuid, "stop_reason_without_tool_use", "The model's stop_reason was tool_use but it sent no "
                      f"tool_use block: its response is set aside and it is asked again ({retries + 1}/{limit}).",
                      "warning"))
    return [*out, user_message(reminder(MALFORMED_TOOL_USE_MESSAGE), is_meta=True, uuid=uuid())]

