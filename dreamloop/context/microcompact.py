"""Stage 3, microcompact (the conversation-loop text's Microcompact): old results cleared, in batches.

The content of an old ``tool_result`` becomes ``[Old tool result content
cleared]``; the call and its id stay, so the pair is intact and the model can
see that something was there. What the model just read is never cleared: the
results of the newest ``keep_recent`` tool-result messages stay, and always
those of the current and the previous turn (field case F16: read in turn N,
edit in turn N+1). Clearing changes old messages, which breaks the cached
prefix from there on, so the pipeline clears in one batch when it is worth it
rather than a little every turn. This module knows nothing about thresholds.
"""

from __future__ import annotations

from typing import Any, Callable

from ..tokens import estimate_block_tokens
from .content import is_tool_result_message, tool_result_blocks, with_result_text
from .records import Rewrite, StageResult

__all__ = ["CLEARED", "ALWAYS_KEPT_TURNS", "clearable_tool_results", "microcompact_messages", "protected_from"]

CLEARED = "[tool result cleared to save context]"
"""What a cleared result says instead of its content: dreamloop's words (no scenario clears a result, and
Claude Code's own words are not copied here)."""

ALWAYS_KEPT_TURNS = 2
"""Tool-result messages never cleared, counting from the newest: the current and the previous turn's."""

_CLEARED_TOKENS = estimate_block_tokens({"type": "tool_result", "tool_use_id": "", "content": CLEARED})


def protected_from(messages: list[Any], keep_recent: int) -> int:
    """The index from which no tool result is cleared: the newest ``max(keep_recent, 2)`` tool-result messages.

    Reads backwards only as far as it needs (O(recent), not O(history)).
    """
    wanted = max(keep_recent, ALWAYS_KEPT_TURNS)
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if is_tool_result_message(messages[index]):
            seen += 1
            if seen == wanted:
                return index
    return 0


def clearable_tool_results(messages: list[Any], *, keep_recent: int, start: int = 0) -> list[tuple[int, str, int]]:
    """The results microcompact would clear: ``(message index, tool_use_id, tokens saved)``, oldest first.

    Only results in ``messages[start:protected_from(...)]`` whose content is
    longer than the marker and not cleared yet.
    """
    found = []
    for index in range(start, protected_from(messages, keep_recent)):
        for block in tool_result_blocks(messages[index]):
            if block.get("content") == CLEARED:
                continue
            saved = estimate_block_tokens(block) - _CLEARED_TOKENS
            if saved > 0:
                found.append((index, str(block.get("tool_use_id")), saved))
    return found


def microcompact_messages(messages: list[Any], *, keep_recent: int, uuid: Callable[[], str],
                          start: int = 0) -> StageResult:
    """Clear every result ``clearable_tool_results`` names; returns a ``StageResult`` (copies, new uuids)."""
    targets: dict[int, set[str]] = {}
    saved = 0
    for index, tool_use_id, tokens in clearable_tool_results(messages, keep_recent=keep_recent, start=start):
        targets.setdefault(index, set()).add(tool_use_id)
        saved += tokens
    rewrite = Rewrite(messages, uuid)
    count = 0
    for index, ids in targets.items():
        message = messages[index]
        blocks = [with_result_text(b, CLEARED) if isinstance(b, dict) and b.get("tool_use_id") in ids
                  and b.get("type") == "tool_result" else b for b in message.message["content"]]
        rewrite.replace(index, blocks)
        count += len(ids)
    return rewrite.result(f"cleared {count} old tool result{'s' if count != 1 else ''}")
