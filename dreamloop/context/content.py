"""Reading and rewriting the content of loop messages, for the context stages.

A stage never edits a message: it makes a copy with new content and a new
uuid (so the trace keeps both and the inspector can unfold the original).
Signed blocks (``thinking``, ``redacted_thinking``) and ``tool_use`` inputs
are never rewritten. This module knows nothing about when a stage runs.
"""

from __future__ import annotations

from typing import Any, Callable

from anthropic.types import TextBlock

from ..messages import AssistantMessage, UserMessage

__all__ = ["is_tool_result_message", "replace_content", "result_text", "tool_result_blocks", "with_result_text"]


def tool_result_blocks(message: Any) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a user message (empty for anything else)."""
    if not isinstance(message, UserMessage):
        return []
    content = message.message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def is_tool_result_message(message: Any) -> bool:
    """True for a user message that carries ``tool_result`` blocks (one turn's answers)."""
    return bool(tool_result_blocks(message))


def result_text(block: dict[str, Any]) -> str | None:
    """A ``tool_result``'s content as one string, or None if it holds anything but text (an image)."""
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    if all(isinstance(b, dict) and b.get("type") == "text" for b in content or []):
        return "\n".join(b.get("text", "") for b in content or [])
    return None


def with_result_text(block: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of a ``tool_result`` block whose content is ``text`` (``is_error`` and id kept)."""
    return {**block, "content": text}


def replace_content(message: Any, blocks: list[Any], uuid: Callable[[], str]) -> Any:
    """A copy of a user or assistant message with content ``blocks`` and a new uuid.

    For an assistant message ``blocks`` may hold SDK blocks or dicts (a dict
    ``{"type": "text", ...}`` becomes a ``TextBlock``); its usage,
    stop_reason and request id are kept.
    """
    if isinstance(message, AssistantMessage):
        sdk = [TextBlock(type="text", text=b["text"]) if isinstance(b, dict) else b for b in blocks]
        api = message.message.model_copy(update={"content": sdk})
        return message.model_copy(update={"uuid": uuid(), "message": api})
    payload = {**message.message, "content": blocks}
    return message.model_copy(update={"uuid": uuid(), "message": payload})
