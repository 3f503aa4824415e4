"""Scripted turns for the offline Messages API: what the fake model answers.

A script is either a list of ``Turn`` (request n gets item n) or a policy, a
function ``(request_body: dict, index: int) -> Turn``. Every HTTP request to
``/v1/messages`` consumes the next item, faults included, so an SDK retry after
a scripted 529 takes the following item. This module only describes turns;
``fake_api`` serves them.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Sequence, Union

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Fault",
    "Policy",
    "Script",
    "Turn",
    "by_prompt",
    "disconnect",
    "http_error",
    "max_tokens_cut",
    "prompt_too_long",
    "reply",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
]


class Fault(BaseModel):
    """A failure the fake API produces instead of (or in the middle of) a normal reply.

    * ``http_error``: answer HTTP ``status`` (429, 500, 529, ...) with the API's error
      body; ``retry_after_ms`` sets the ``retry-after-ms`` header (the SDK honours a positive value only:
      ``0`` leaves it to its own backoff, 0.5 s and doubling, so a quick retry is ``1``).
    * ``stream_error``: a 200 stream that sends an SSE ``event: error``
      (``error_type``, default ``overloaded_error``) after ``after_events`` events.
    * ``disconnect``: the connection drops after ``after_events`` events.
    * ``max_tokens_cut``: the stream stops inside the last tool_use's JSON (no
      ``content_block_stop``) and ends with ``stop_reason: max_tokens``.
    * ``prompt_too_long``: HTTP 400 ``prompt is too long: N tokens > M maximum``
      (``prompt_tokens`` = N, default the request's estimate; ``max_tokens_limit`` = M).

    An unknown field is a ``ValidationError`` (a typo never silently drops a setting).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["http_error", "stream_error", "disconnect", "max_tokens_cut", "prompt_too_long"]
    status: int = 529
    error_type: str | None = None
    message: str | None = None
    retry_after_ms: int | None = None
    after_events: int = 3
    prompt_tokens: int | None = None
    max_tokens_limit: int = 200_000


class Turn(BaseModel):
    """One scripted model response.

    * ``content``: API content blocks as dicts (``text``, ``tool_use``,
      ``thinking``, ``redacted_thinking``); a ``tool_use`` without ``id`` gets a
      deterministic one.
    * ``stop_reason``: default ``"tool_use"`` if a tool_use block is present, else
      ``"end_turn"``; ``None`` sends no ``message_delta`` (an incomplete stream).
    * ``usage``: overrides the estimated ``input_tokens`` / ``output_tokens``.
    * ``chunk_size``: characters per ``text_delta`` / ``input_json_delta``.
    * ``tokens_per_second``: pacing of the deltas (``None``: as fast as possible).
    * ``fault``: see ``Fault``. ``model``: the model name to report.

    An unknown field is a ``ValidationError``, in Python and in a script file
    (``dreamloop serve-fake --script``): a typo never silently drops a setting.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    content: list[dict[str, Any]] = []
    stop_reason: str | None = "auto"
    usage: dict[str, int] | None = None
    chunk_size: int = 16
    tokens_per_second: float | None = None
    fault: Fault | None = None
    model: str | None = None

    def resolved_stop_reason(self) -> str | None:
        """The stop_reason to send: ``"auto"`` becomes ``tool_use`` or ``end_turn``."""
        if self.stop_reason != "auto":
            return self.stop_reason
        return "tool_use" if any(b.get("type") == "tool_use" for b in self.content) else "end_turn"


Policy = Callable[[dict[str, Any], int], Turn]
"""A function of the request body (parsed JSON) and its index (0-based) to a ``Turn``."""

Script = Union[Sequence[Turn], Policy]


# ---------------------------------------------------------------------------
# Constructors, so a script reads like the conversation it plays


def text(value: str) -> dict[str, Any]:
    """A ``text`` content block."""
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> dict[str, Any]:
    """A ``tool_use`` content block; ``id`` defaults to a deterministic ``toolu_…``."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": input or {}}
    if id is not None:
        block["id"] = id
    return block


def thinking(value: str) -> dict[str, Any]:
    """A ``thinking`` block; the fake API signs it, and checks the signature on replay."""
    return {"type": "thinking", "thinking": value}


def reply(*blocks: dict[str, Any] | str, **fields: Any) -> Turn:
    """A ``Turn`` from blocks (a plain string is a text block): ``reply("Hi")``."""
    content = [text(b) if isinstance(b, str) else b for b in blocks]
    return Turn(content=content, **fields)


def http_error(status: int = 529, *, retry_after_ms: int | None = 5, message: str | None = None) -> Turn:
    """A turn answered by HTTP ``status`` with the API's error body."""
    return Turn(fault=Fault(kind="http_error", status=status, retry_after_ms=retry_after_ms, message=message))


def stream_error(*blocks: dict[str, Any] | str, after_events: int = 3, error_type: str = "overloaded_error") -> Turn:
    """A 200 stream that starts ``blocks`` and then sends an SSE ``error`` event."""
    return reply(*blocks, fault=Fault(kind="stream_error", after_events=after_events, error_type=error_type))


def disconnect(*blocks: dict[str, Any] | str, after_events: int = 3) -> Turn:
    """A stream whose connection drops after ``after_events`` SSE events."""
    return reply(*blocks, fault=Fault(kind="disconnect", after_events=after_events))


def max_tokens_cut(*blocks: dict[str, Any] | str) -> Turn:
    """A stream cut by ``max_tokens`` inside the last tool_use's JSON."""
    return reply(*blocks, stop_reason="max_tokens", fault=Fault(kind="max_tokens_cut"))


def prompt_too_long(prompt_tokens: int | None = None, maximum: int = 200_000) -> Turn:
    """A 400 ``prompt is too long: N tokens > M maximum``."""
    return Turn(fault=Fault(kind="prompt_too_long", status=400, prompt_tokens=prompt_tokens, max_tokens_limit=maximum))


def by_prompt(main: Sequence[Turn], children: dict[str, Sequence[Turn]]) -> Policy:
    """A policy that tells a sub-agent's requests from the parent's: a request whose first user message holds a
    key of ``children`` (a child's prompt, or a marker in it) gets that child's next turn; every other request
    gets ``main``'s next. Each list is played in order; a request past its list's end is a ``ValueError`` naming
    the list (the script is shorter than the run)."""
    queues = {key: list(turns) for key, turns in children.items()}
    played = {key: 0 for key in children}
    main_turns, main_played = list(main), [0]

    def policy(body: dict[str, Any], index: int) -> Turn:
        first = _first_text(body)
        key = next((k for k in queues if k in first), None)
        turns, count = (queues[key], played[key]) if key is not None else (main_turns, main_played[0])
        if count >= len(turns):
            which = f"the child's turns for {key!r}" if key is not None else "the main turns"
            raise ValueError(f"by_prompt: request {index} asks for turn {count + 1} of {which}, which has "
                             f"{len(turns)}")
        if key is not None:
            played[key] += 1
        else:
            main_played[0] += 1
        return turns[count]

    return policy


def _first_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    content = messages[0].get("content", "") if messages and isinstance(messages[0], dict) else ""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
