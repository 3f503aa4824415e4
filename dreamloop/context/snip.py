"""Stage 2, snip (the conversation-loop text's Snip 压缩): old long contents trimmed, marked.

The bluntest cut: a long text block or ``tool_result`` in a message older
than the newest ``keep_recent`` keeps its first characters and a line saying
how many were removed. ``thinking`` blocks (signed), ``tool_use`` inputs and
text the loop wrote itself (``is_meta``: summaries, folds) are never touched,
nor the message the caller spares (``spare``: the pipeline passes the person's
newest request, ``autocompact.latest_request_index``, when
``ContextOptions.keep_latest_request`` is on, so a compaction keeps it word for
word; dreamloop's choice, which neither text describes). It knows nothing
about when it should run (the pipeline asks it over the snip threshold).
"""

from __future__ import annotations

from typing import Any, Callable

from ..messages import AssistantMessage, UserMessage
from .content import result_text, with_result_text
from .records import Rewrite, StageResult

__all__ = ["snip_messages", "snip_text"]


def snip_text(text: str, keep_chars: int) -> str:
    """``text`` cut to its first ``keep_chars`` characters and a marker: ``[snipped: N of M characters]``."""
    removed = len(text) - keep_chars
    return f"{text[:keep_chars]}\n[snipped: {removed:,} of {len(text):,} characters removed from this old message]"


def snip_messages(messages: list[Any], *, keep_recent: int, max_chars: int, keep_chars: int,
                  uuid: Callable[[], str], start: int = 0, spare: int | None = None) -> StageResult:
    """Trim every text block and text ``tool_result`` longer than ``max_chars`` in ``messages[start:-keep_recent]``.

    ``spare``: the index of one message left as it is (None: none). The pipeline passes the person's newest
    request (``latest_request_index``) when ``keep_latest_request`` is on, so the text a compaction keeps after
    its summary is the person's, not a trimmed one (dreamloop's choice); older requests are trimmed.
    Returns a ``StageResult`` (changed messages copied with new uuids).
    A snipped text is shorter than ``max_chars``, so snipping twice changes nothing.
    """
    rewrite = Rewrite(messages, uuid)
    cut = 0
    for index in range(start, max(len(messages) - keep_recent, start)):
        if index == spare:
            continue
        message = messages[index]
        blocks, changed = _snipped_blocks(message, max_chars, keep_chars)
        if not changed:
            continue
        rewrite.replace(index, blocks)
        cut += changed
    count = len(rewrite.replaced)
    detail = f"trimmed {cut} long block{'s' if cut != 1 else ''} in {count} old message{'s' if count != 1 else ''}"
    return rewrite.result(detail)


def _snipped_blocks(message: Any, max_chars: int, keep_chars: int) -> tuple[list[Any], int]:
    if isinstance(message, AssistantMessage):
        blocks: list[Any] = []
        changed = 0
        for block in message.message.content:
            if block.type == "text" and len(block.text) > max_chars:
                blocks.append({"type": "text", "text": snip_text(block.text, keep_chars)})
                changed += 1
            else:
                blocks.append(block)
        return blocks, changed
    if not isinstance(message, UserMessage) or message.is_meta:  # loop-written text (summaries, folds) stays
        return [], 0
    content = message.message.get("content")
    if isinstance(content, str):
        return ([{"type": "text", "text": snip_text(content, keep_chars)}], 1) if len(content) > max_chars else ([], 0)
    blocks, changed = [], 0
    for block in content or []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and len(block.get("text", "")) > max_chars:
            blocks.append({**block, "text": snip_text(block["text"], keep_chars)})
            changed += 1
        elif kind == "tool_result":
            text = result_text(block)
            if text is not None and len(text) > max_chars:
                blocks.append(with_result_text(block, snip_text(text, keep_chars)))
                changed += 1
            else:
                blocks.append(block)
        else:
            blocks.append(block)
    return blocks, changed
