"""The blocks a model stream had finished when it was interrupted.

When the abort signal fires mid-stream, queryLoop() keeps the content blocks
that were already complete (and answers any ``tool_use`` among them), so the
person keeps what they saw and the transcript stays valid. ``PartialResponse``
follows the raw stream events and knows, at any moment, which blocks got
their ``content_block_stop``. The SDK accumulates the full message; this only
answers "what was finished so far".
"""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message

__all__ = ["PartialResponse"]


class PartialResponse:
    """Feed raw stream events with ``add(event)``; ``message()`` gives the finished blocks.

    ``add`` returns the block (an API-shaped dict) that ``event`` finished, if
    it was a ``content_block_stop``; else None.
    """

    def __init__(self) -> None:
        self._start: Any = None
        self._open: dict[int, dict[str, Any]] = {}
        self._json: dict[int, str] = {}
        self._done: list[dict[str, Any]] = []

    def add(self, event: Any) -> dict[str, Any] | None:
        kind = event.type
        if kind == "message_start":
            self._start = event.message
        elif kind == "content_block_start":
            self._open[event.index] = event.content_block.model_dump(mode="json", exclude_none=True)
            self._json[event.index] = ""
        elif kind == "content_block_delta":
            self._apply(event.index, event.delta)
        elif kind == "content_block_stop" and event.index in self._open:
            block = self._open.pop(event.index)
            raw = self._json.pop(event.index, "")
            if block.get("type") == "tool_use" and raw:
                block["input"] = json.loads(raw)
            self._done.append(block)
            return block
        return None

    def _apply(self, index: int, delta: Any) -> None:
        block = self._open.get(index)
        if block is None:
            return
        if delta.type == "text_delta":
            block["text"] = block.get("text", "") + delta.text
        elif delta.type == "input_json_delta":
            self._json[index] += delta.partial_json
        elif delta.type == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.thinking
        elif delta.type == "signature_delta":
            block["signature"] = delta.signature

    def message(self) -> Message | None:
        """The SDK ``Message`` of the finished blocks (``stop_reason`` None), or None if none finished."""
        if self._start is None or not self._done:
            return None
        data = self._start.model_dump(mode="json")
        data.update(content=self._done, stop_reason=None)
        return Message.model_validate(data)
