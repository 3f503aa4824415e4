"""Raw stream events → the response they add up to, and which of its blocks finished.

``PartialResponse`` follows one model stream event by event. The model call
(``model.py``) builds its final ``Message`` with it; the loop keeps its own,
to know what had finished when the abort signal fired (queryLoop() keeps the
finished blocks and answers their ``tool_use`` calls). The rules:

* a stream that is corrupt as a stream (an event before ``message_start``, a
  delta or stop for a block never started, an event that is not an object)
  raises ``MalformedStreamError``;
* what a later API version may add (an unknown event, delta or block type)
  is kept or noted in ``unknown``, never an error;
* a ``tool_use``'s input JSON is parsed at its ``content_block_stop``; JSON that
  does not parse is kept as the raw text (the loop never runs such a call).

It knows nothing about HTTP, the SDK's client, or the loop. What the loop says about a response it goes on
from (a tool_use id used twice, content or a stop_reason this version does not know) is built here too
(``odd_response_notices``, ``repeated_ids_note``).
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message

from .errors import MalformedStreamError
from .messages import KNOWN_BLOCK_TYPES, KNOWN_STOP_REASONS, SystemMessage, UserMessage, content_block, user_message

__all__ = ["PartialResponse", "odd_response_notices", "one_call_per_id", "repeated_ids_note", "unknown_content",
           "visible"]

_EVENT_TYPES = {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
                "message_delta", "message_stop", "ping"}
_DELTA_FIELDS = {  # delta type -> (the block types it applies to, its text field)
    "text_delta": ({"text"}, "text"),
    "input_json_delta": ({"tool_use", "server_tool_use"}, "partial_json"),
    "thinking_delta": ({"thinking"}, "thinking"),
    "signature_delta": ({"thinking"}, "signature"),
    "citations_delta": ({"text"}, "citation"),
}
_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                 "server_tool_use")


class PartialResponse:
    """Feed raw stream events with ``add(event)``; ``message()`` gives the response so far.

    ``add`` returns the block ``event`` finished (the SDK block), if it was a
    ``content_block_stop``; else None. ``saw_message_delta``: the stream said
    how it stopped (``stop_reason``).
    ``unknown``: one note per kind of thing this SDK version does not know
    (``"event type 'x'"``, ``"delta type 'y'"``, ``"content block type 'z'"``), in order.
    """

    def __init__(self) -> None:
        self._start: Message | None = None
        self._blocks: dict[int, dict[str, Any]] = {}  # index -> block as JSON, as far as it came
        self._json: dict[int, list[str]] = {}
        self._done: dict[int, Any] = {}  # index -> the finished SDK block
        self._delta: dict[str, Any] = {}
        self._usage: dict[str, Any] = {}
        self.saw_message_delta = False
        self.unknown: list[str] = []

    # -- following the stream --------------------------------------------

    def add(self, event: Any) -> Any:
        """Take the next raw event (an SDK ``RawMessageStreamEvent``). Raises ``MalformedStreamError``."""
        kind = getattr(event, "type", None)
        if not isinstance(kind, str):
            raise MalformedStreamError(f"a stream event without a type: {_preview(event)}", partial=self.message())
        if kind not in _EVENT_TYPES:
            self._note(f"event type {kind!r}")
            return
        if kind == "ping":
            return
        if kind == "message_start":
            self._begin(event)
            return
        if self._start is None:
            raise MalformedStreamError(f"{kind} before message_start")
        if kind == "content_block_start":
            self._open_block(event)
        elif kind == "content_block_delta":
            self._apply(self._open_index(event, kind), getattr(event, "delta", None))
        elif kind == "content_block_stop":
            index = self._open_index(event, kind)
            self._close_block(index)
            return self._done[index]
        elif kind == "message_delta":
            self._message_delta(event)
        return None

    def _begin(self, event: Any) -> None:
        if self._start is not None:
            raise MalformedStreamError("a second message_start in one stream", partial=self.message())
        data = _as_dict(getattr(event, "message", None))
        try:
            self._start = Message.model_validate({**data, "content": [], "stop_reason": None, "stop_sequence": None})
        except ValueError as error:
            raise MalformedStreamError(f"message_start does not hold a valid Message ({error})") from None

    def _open_block(self, event: Any) -> None:
        index, data = getattr(event, "index", None), _as_dict(getattr(event, "content_block", None))
        if not _is_index(index) or not isinstance(data.get("type"), str):
            raise MalformedStreamError(f"content_block_start without an index and a typed block: {_preview(event)}",
                                       partial=self.message())
        if index in self._blocks:
            raise MalformedStreamError(f"content_block_start for block {index}, which had already started",
                                       partial=self.message())
        if data["type"] not in KNOWN_BLOCK_TYPES:
            self._note(f"content block type {data['type']!r}")
        self._blocks[index] = data
        self._json[index] = []

    def _open_index(self, event: Any, kind: str) -> int:
        index = getattr(event, "index", None)
        if not _is_index(index) or index not in self._blocks:
            raise MalformedStreamError(f"{kind} for block {index!r}, which never started", partial=self.message())
        if index in self._done:
            raise MalformedStreamError(f"{kind} for block {index}, which had already stopped", partial=self.message())
        return index

    def _apply(self, index: int, delta: Any) -> None:
        block, kind = self._blocks[index], getattr(delta, "type", None)
        if kind not in _DELTA_FIELDS:
            self._note(f"delta type {kind!r}")
            return
        applies_to, field = _DELTA_FIELDS[kind]
        value = getattr(delta, field, None)
        if block["type"] not in applies_to or value is None:
            raise MalformedStreamError(f"a {kind} for block {index}, a {block['type']} block", partial=self.message())
        if kind == "input_json_delta":
            self._json[index].append(str(value))
        elif kind == "signature_delta":
            block["signature"] = value
        elif kind == "citations_delta":
            block["citations"] = [*(block.get("citations") or []), _as_dict(value)]
        else:
            block[field] = str(block.get(field) or "") + str(value)

    def _close_block(self, index: int) -> None:
        block, raw = self._blocks[index], "".join(self._json.pop(index, []))
        if raw:
            try:
                block["input"] = json.loads(raw)
            except ValueError:
                block["input"] = raw  # kept as received; never run (tools/orchestration.py says so)
        try:
            self._done[index] = content_block(block)
        except ValueError as error:
            raise MalformedStreamError(f"block {index} is not valid: {error}", partial=self.message()) from None

    def _message_delta(self, event: Any) -> None:
        self.saw_message_delta = True
        delta = getattr(event, "delta", None)
        for field in ("stop_reason", "stop_sequence", "stop_details", "container"):
            value = getattr(delta, field, None)
            if value is not None or field in ("stop_reason", "stop_sequence"):
                self._delta[field] = value
        usage = getattr(event, "usage", None)
        for field in _USAGE_FIELDS:
            value = getattr(usage, field, None)
            if value is not None:
                self._usage[field] = value

    def _note(self, what: str) -> None:
        if what not in self.unknown:
            self.unknown.append(what)

    # -- reading -----------------------------------------------------------

    def message(self) -> Message | None:
        """The SDK ``Message`` of the finished blocks, in stream order; None before ``message_start``.

        ``stop_reason`` is what ``message_delta`` said (None if it never came);
        usage is ``message_start``'s, updated by ``message_delta``'s totals.
        """
        if self._start is None:
            return None
        blocks = [self._done[i] for i in sorted(self._done)]
        usage = self._start.usage.model_copy(update=self._usage) if self._usage else self._start.usage
        return self._start.model_copy(update={**self._delta, "content": blocks, "usage": usage})

    def shown(self) -> dict[str, Any] | None:
        """What a person was shown of the response, for a tombstone: ``{"id", "model", "content"}``.

        ``content`` holds every block as far as it came, finished or not, in stream order (a
        tool_use's input as the raw JSON text received, if it never finished); None before
        ``message_start``.
        """
        if self._start is None:
            return None
        content = []
        for index in sorted(self._blocks):
            if index in self._done:
                content.append(_as_dict(self._done[index]))
                continue
            block = dict(self._blocks[index])
            if index in self._json and self._json[index]:
                block["partial_json"] = "".join(self._json[index])
            content.append(block)
        return {"id": self._start.id, "model": self._start.model, "content": content}

    def cut_blocks(self) -> list[tuple[int, dict[str, Any], str]]:
        """Blocks that started but never stopped: ``(index, block JSON so far, raw tool JSON received)``."""
        return [(i, dict(b), "".join(self._json.get(i, []))) for i, b in sorted(self._blocks.items())
                if i not in self._done]


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)
    return {}


def _preview(event: Any) -> str:
    text = repr(_as_dict(event) or event)
    return text if len(text) <= 200 else text[:200] + "…"


def one_call_per_id(message: Message) -> tuple[Message, list[str]]:
    """``message`` without the ``tool_use`` blocks that repeat an earlier block's id, and the repeated ids.

    Models and proxies have sent one id twice; run twice, the call's effects happen twice, and the next
    request (two results, or two tool_use blocks, for one id) is rejected, and every later one with it.
    """
    seen: set[str] = set()
    repeated: list[str] = []
    kept = []
    for block in message.content:
        if block.type == "tool_use":
            if block.id in seen:
                repeated += [] if block.id in repeated else [block.id]
                continue
            seen.add(block.id)
        kept.append(block)
    return (message.model_copy(update={"content": kept}) if repeated else message), repeated


def visible(block: Any) -> bool:
    """Does ``block`` show something (a text block that is not blank, or any other block)? An assistant
    message with no visible block is never appended (F4)."""
    return block.type != "text" or bool(block.text.strip())


def odd_response_notices(repeated: list[str], unknown: list[str], stop_reason: str | None,
                         uuid: Any) -> list[SystemMessage]:
    """Warnings about a whole response the run goes on from: tool_use ids it used more than once (``repeated``:
    only the first block of each is kept), what this version does not know (``unknown``: a later API may send it),
    a ``stop_reason`` it does not know."""
    notices = []
    if repeated:
        notices.append(SystemMessage(uuid=uuid(), subtype="duplicate_tool_use_id", level="warning", content=(
            f"The response used the tool_use id {', '.join(repeated)} more than once; only the first block with "
            "that id is kept, run and answered (the API accepts one tool_use and one result per id).")))
    if unknown:
        notices.append(SystemMessage(uuid=uuid(), subtype="unknown_stream_content", level="warning", content=(
            f"The response held what this version of dreamloop does not know: {', '.join(unknown)}. "
            "Unknown blocks are kept and sent back as received; the rest is ignored.")))
    if stop_reason is not None and stop_reason not in KNOWN_STOP_REASONS:
        notices.append(SystemMessage(uuid=uuid(), subtype="unknown_stop_reason", level="warning", content=(
            f"The model stopped with stop_reason {stop_reason!r}, which this version does not know; the loop goes "
            "on from the content blocks.")))
    return notices


def unknown_content(partial: PartialResponse, assistant_messages: list[Any]) -> list[str]:
    """What a response held that this version does not know: the stream's unknown events and deltas, and each
    unknown block type of the finished messages (a non-streamed answer, the streaming fallback's, has no stream)."""
    unknown = [*partial.unknown]
    for message in assistant_messages:
        for block in message.message.content:
            said = f"content block type {block.type!r}"
            if block.type not in KNOWN_BLOCK_TYPES and said not in unknown:
                unknown.append(said)
    return unknown


def repeated_ids_note(repeated: list[str], uuid: Any) -> UserMessage:
    """What the model is told after its calls ran, when its response used a tool_use id more than once: why a
    block it sent got no result of its own (a meta user message)."""
    return user_message(f"Note: your response used the tool_use id {', '.join(repeated)} more than once. Only the "
                        "first tool_use block with each id was run and answered; the repeated block was dropped. "
                        "Give every tool_use a unique id.", is_meta=True, uuid=uuid())

