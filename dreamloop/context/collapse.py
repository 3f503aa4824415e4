"""Stage 4, context collapse (the conversation-loop text's Context Collapse): low-information runs folded.

A low-information pair is an assistant message that only calls tools (with
little text) followed by the user message of their results, every result
short. A run of at least ``min_pairs`` such pairs (at most ``max_pairs``: a longer
unbroken run is folded in pieces of ``max_pairs``), older than the newest
``keep_recent`` messages, is *staged* as a ``Fold``; committing it replaces
the run by one compact user message listing each call and the start of its
result (the pairs inside stay intact in the trace, so the inspector can
unfold them). Folds cut only at pair boundaries, so every remaining
``tool_use`` keeps its ``tool_result``. Staged folds not yet committed are
what the recovery branch ``collapse_drain_retry`` commits all at once
(``drain_collapses``): it loses less than a full compaction. This module
knows nothing about thresholds or the API.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from ..messages import AssistantMessage, UserMessage, user_message
from ..tokens import MESSAGE_OVERHEAD, TokenCounter, estimate_block_tokens
from .content import result_text, tool_result_blocks
from .options import ContextCollapse
from .records import StageResult

__all__ = ["COLLAPSED_TAG", "CollapseDrain", "Fold", "commit_folds", "drain_collapses", "find_folds",
           "fold_savings", "fold_text", "staged_collapses"]

COLLAPSED_TAG = "collapsed"
"""The tag around a fold's text: ``<collapsed calls="3">…</collapsed>``."""


@dataclass(frozen=True)
class Fold:
    """A staged fold: the run of messages it replaces (``uuids``, in order) and its compact ``text``."""

    uuids: tuple[str, ...]
    text: str
    calls: int


@dataclass(frozen=True)
class CollapseDrain:
    """What ``drain_collapses`` did: the new ``messages``, how many folds it ``committed``, the ``result``."""

    messages: list[Any]
    committed: int
    result: StageResult


def _low_information_pair(assistant: Any, answer: Any, options: ContextCollapse) -> bool:
    if not isinstance(assistant, AssistantMessage) or not isinstance(answer, UserMessage):
        return False
    blocks = assistant.message.content
    uses = [b.id for b in blocks if b.type == "tool_use"]
    if not uses or any(b.type not in ("tool_use", "text") for b in blocks):  # signed thinking is never folded
        return False
    if sum(len(b.text) for b in blocks if b.type == "text") > options.max_text_chars:
        return False
    results = tool_result_blocks(answer)
    if len(results) != len(answer.message["content"]) or [r.get("tool_use_id") for r in results] != uses:
        return False
    return all(result_text(r) is not None and estimate_block_tokens(r) <= options.max_result_tokens for r in results)


def fold_text(pairs: list[tuple[Any, Any]]) -> str:
    """The compact view of a run: one line per call, ``name {input} → the start of its result``."""
    lines = []
    for assistant, answer in pairs:
        results = {r.get("tool_use_id"): r for r in tool_result_blocks(answer)}
        for block in assistant.message.content:
            if block.type != "tool_use":
                continue
            result = results.get(block.id, {})
            text = " ".join((result_text(result) or "").split())
            shown = text if len(text) <= 80 else text[:79] + "…"
            error = " (is_error)" if result.get("is_error") else ""
            args = json.dumps(block.input, ensure_ascii=False, sort_keys=True)
            args = args if len(args) <= 80 else args[:79] + "…"
            lines.append(f"- {block.name} {args} → {shown}{error}")
    return f'<{COLLAPSED_TAG} calls="{len(lines)}">\n' + "\n".join(lines) + f"\n</{COLLAPSED_TAG}>"


def find_folds(messages: list[Any], options: ContextCollapse, *, start: int = 0,
               end: int | None = None, close_open: bool = False) -> tuple[list[Fold], int]:
    """Stage the folds in ``messages[start:end]`` (``end`` default: before the newest ``keep_recent``).

    Returns the folds, oldest first, and where the next scan should start:
    the first message of a run still open at ``end`` (it may grow), else the
    first message not yet looked at. Reading in pieces finds the same folds
    as reading everything at once. ``close_open``: a run still open at ``end``
    is staged too, as it is now (what a drain commits).
    """
    end = max(len(messages) - options.keep_recent, 0) if end is None else end
    folds: list[Fold] = []
    run: list[tuple[Any, Any]] = []
    run_start = index = start

    def close() -> None:
        if len(run) >= options.min_pairs:
            uuids = tuple(u for a, r in run for u in (a.uuid, r.uuid))
            folds.append(Fold(uuids, fold_text(run), sum(len(tool_result_blocks(r)) for _, r in run)))

    while index + 1 < end:  # a pair that crosses ``end`` is looked at next time
        if _low_information_pair(messages[index], messages[index + 1], options):
            if not run:
                run_start = index
            run.append((messages[index], messages[index + 1]))
            index += 2
            if len(run) == options.max_pairs:  # an unbroken run is folded in pieces as it ages, never held open
                close()
                run = []
            continue
        if run:
            close()
            run = []
        index += 1
    if run and close_open:
        close()
    return folds, (run_start if run else max(min(index, end), start))


def commit_folds(messages: list[Any], folds: list[Fold], *, uuid: Callable[[], str]) -> StageResult:
    """Replace each fold's run by one ``is_meta`` user message holding its text.

    A fold whose messages are no longer all present, in order, is skipped (it
    is stale: an earlier stage rewrote one of them). Returns a ``StageResult``.
    """
    if not folds:
        return StageResult(messages)
    position = {m.uuid: i for i, m in enumerate(messages)}
    spans = []
    for fold in folds:
        at = position.get(fold.uuids[0])
        if at is None or tuple(m.uuid for m in messages[at:at + len(fold.uuids)]) != fold.uuids:
            continue
        spans.append((at, fold))
    if not spans:
        return StageResult(messages)
    out: list[Any] = []
    replaced: dict[str, tuple[str, ...]] = {}
    cursor = 0
    calls = 0
    for at, fold in sorted(spans, key=lambda s: s[0]):
        out.extend(messages[cursor:at])
        folded = user_message(fold.text, is_meta=True, uuid=uuid())
        out.append(folded)
        replaced[folded.uuid] = fold.uuids
        cursor = at + len(fold.uuids)
        calls += fold.calls
    out.extend(messages[cursor:])
    detail = f"folded {calls} tool calls in {len(spans)} run{'s' if len(spans) != 1 else ''} into compact views"
    return StageResult(out, replaced, detail, min(at for at, _ in spans))


def fold_savings(fold: Fold, messages_by_uuid: dict[str, Any], counter: TokenCounter) -> int:
    """About how many tokens committing ``fold`` saves (its run's tokens minus the fold's)."""
    run = [messages_by_uuid[u] for u in fold.uuids if u in messages_by_uuid]
    before = sum(counter.of(m).tokens + MESSAGE_OVERHEAD for m in run)
    return before - counter.count([user_message(fold.text, is_meta=True)]) + MESSAGE_OVERHEAD


def staged_collapses(messages: list[Any], options: ContextCollapse) -> list[Fold]:
    """Every fold that could be staged in ``messages`` now (read from the start, a run that reaches
    the newest ``keep_recent`` included as it is; for recovery)."""
    return find_folds(messages, options, close_open=True)[0]


def drain_collapses(messages: list[Any], options: ContextCollapse, *, uuid: Callable[[], str]) -> CollapseDrain:
    """Commit every staged fold at once (the recovery branch ``collapse_drain_retry``).

    Returns a ``CollapseDrain``: ``committed`` is how many folds were
    committed (0: nothing to drain, so the caller should go on to reactive
    compaction). Pure apart from the new uuids.
    """
    result = commit_folds(messages, staged_collapses(messages, options), uuid=uuid)
    return CollapseDrain(result.messages, len(result.replaced), result)
