"""Stage 1, the tool-result budget (the conversation-loop text's 工具结果预算).

A ``tool_result`` larger than the budget is written to a file and replaced by
a preview and the file's path, wrapped in ``<persisted-output>``: the model
sees the start and can Read the rest back. It looks only at results that have
not been sent yet (``start``: the first new message), so it never changes a
prefix the API has cached. It knows nothing about thresholds of the whole
context or about the other stages.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from ..tokens import CHARS_PER_TOKEN, estimate_block_tokens
from .content import result_text, tool_result_blocks, with_result_text
from .records import Rewrite, StageResult

__all__ = ["PERSISTED_OUTPUT_TAG", "apply_tool_result_budget", "persisted_preview"]

PERSISTED_OUTPUT_TAG = "persisted-output"
"""The tag around a preview whose full text is in a file (dreamloop's choice of tag)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def persisted_preview(text: str, shown_path: str, preview_chars: int, tokens: int) -> str:
    """What the model sees instead of ``text``: its size, where the whole is, and its first characters."""
    size = len(text.encode("utf-8"))
    kb = f"{size / 1024:.1f} KB"
    return (f"<{PERSISTED_OUTPUT_TAG}>\nOutput too large ({kb}, about {tokens:,} tokens). "
            f"Full output saved to: {shown_path}\nRead it with the Read tool (offset and limit for a part).\n\n"
            f"Preview (first {min(preview_chars, len(text)):,} characters):\n{text[:preview_chars]}\n"
            f"</{PERSISTED_OUTPUT_TAG}>")


def apply_tool_result_budget(messages: list[Any], *, max_result_tokens: int, directory: Path,
                             preview_chars: int = 2000, uuid: Callable[[], str], start: int = 0,
                             root: Path | None = None) -> StageResult:
    """Persist every text ``tool_result`` in ``messages[start:]`` over ``max_result_tokens``; preview it.

    Each is written to ``directory/<tool_use_id>.txt`` (created if needed) and
    its content becomes ``persisted_preview(...)``, whose preview is at most
    half the budget (so a preview is always smaller than what it replaces);
    the path is shown relative to ``root`` when inside it (the workspace),
    else absolute. Results holding
    images and results already persisted are left alone. Returns a
    ``StageResult`` (copies with new uuids for the changed messages).
    Raises ``OSError`` if the directory cannot be written.
    """
    rewrite = Rewrite(messages, uuid)
    persisted = 0
    preview_chars = min(preview_chars, int(max_result_tokens * CHARS_PER_TOKEN / 2))
    for index in range(start, len(messages)):
        message = messages[index]
        blocks = tool_result_blocks(message)
        if not blocks:
            continue
        new_blocks, changed = [], False
        for block in message.message["content"]:
            text = result_text(block) if block in blocks else None
            tokens = estimate_block_tokens(block) if text is not None else 0
            if text is None or tokens <= max_result_tokens or text.startswith(f"<{PERSISTED_OUTPUT_TAG}>"):
                new_blocks.append(block)
                continue
            path = _write(directory, str(block.get("tool_use_id", "result")), text)
            shown = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else str(path)
            new_blocks.append(with_result_text(block, persisted_preview(text, shown, preview_chars, tokens)))
            changed = True
            persisted += 1
        if changed:
            rewrite.replace(index, new_blocks)
    detail = f"persisted {persisted} oversized tool result{'s' if persisted != 1 else ''} to {directory.name}/"
    return rewrite.result(detail)


def _write(directory: Path, tool_use_id: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = (directory / f"{_UNSAFE.sub('_', tool_use_id)}.txt").resolve()
    path.write_text(text, encoding="utf-8")
    return path
