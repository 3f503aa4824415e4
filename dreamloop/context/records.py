"""What a context stage reports: its result, the notice the loop yields, and the per-turn record.

A stage returns a ``StageResult``: the messages after it and which new
message stands for which old ones (``replaced``). The pipeline turns every
change into one ``SystemMessage`` (subtype = the stage's name) with the
tokens before and after, and keeps a ``ContextRecord`` per turn for the trace
and the context meter. This module knows nothing about how a stage decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..messages import SystemMessage
from .content import replace_content

__all__ = ["ContextRecord", "Rewrite", "StageResult", "stage_notice"]


@dataclass(frozen=True)
class StageResult:
    """The messages after one stage and what it changed.

    * ``messages``: the new list (the input list itself when nothing changed).
    * ``replaced``: new message uuid → the uuids of the messages it stands for
      (one for a cleared or trimmed message, a run for a fold, the whole head
      for a summary); empty when nothing changed.
    * ``detail``: one line for the notice (``"cleared 4 old tool results"``).
    * ``first_changed``: the index of the first message that changed (None: none).
    """

    messages: list[Any]
    replaced: dict[str, tuple[str, ...]] = field(default_factory=dict)
    detail: str = ""
    first_changed: int | None = None

    @property
    def changed(self) -> bool:
        return bool(self.replaced)


class Rewrite:
    """A stage's edits of a message list, copy-on-write: the list is copied at the first change.

    ``replace(index, blocks)`` puts a copy of ``messages[index]`` with content ``blocks`` and a new uuid
    (``replace_content``) in its place and records which message it stands for; ``result(detail)`` is the
    stage's ``StageResult`` (the input list itself, and no detail, when nothing changed).
    """

    def __init__(self, messages: list[Any], uuid: Callable[[], str]) -> None:
        self.messages, self.out, self.uuid = messages, messages, uuid
        self.replaced: dict[str, tuple[str, ...]] = {}
        self.first: int | None = None

    def replace(self, index: int, blocks: list[Any]) -> None:
        message = self.messages[index]
        if self.out is self.messages:
            self.out = list(self.messages)
        copy = replace_content(message, blocks, self.uuid)
        self.out[index] = copy
        self.replaced[copy.uuid] = (message.uuid,)
        self.first = index if self.first is None else min(self.first, index)

    def result(self, detail: str) -> StageResult:
        return StageResult(self.out, self.replaced, detail if self.replaced else "", self.first)


def stage_notice(stage: str, detail: str, before: int, after: int, *, uuid: Callable[[], str],
                 level: str = "info", subtype: str | None = None, **metadata: Any) -> SystemMessage:
    """The ``SystemMessage`` a stage yields: ``subtype`` (default: the stage's name), a readable line with
    the tokens before and after, and ``metadata`` ``{stage, tokens_before, tokens_after, ...}``."""
    saved = before - after
    line = f"{stage}: {detail} ({before:,} → {after:,} tokens" + (f", −{saved:,})" if saved > 0 else ")")
    return SystemMessage(uuid=uuid(), subtype=subtype or stage, content=line, level=level,  # type: ignore[arg-type]
                         metadata={"stage": stage, "tokens_before": before, "tokens_after": after, **metadata})


@dataclass
class ContextRecord:
    """What phase 2 did in one iteration (``Checkpoint.context`` in the trace, read by the context meter).

    ``window`` and ``thresholds`` (name → tokens); ``tokens_in``: the history's
    tokens before the stages; ``tokens``: the request's tokens as sent;
    ``stages``: one ``{stage, before, after}`` per stage that changed something;
    ``staged_folds``: folds staged and not committed; ``compaction``: the
    summarising request's ``usage``, when there was one; ``seconds``: how long
    the pipeline took.
    """

    window: int
    thresholds: dict[str, int]
    tokens_in: int = 0
    tokens: int = 0
    stages: list[dict[str, Any]] = field(default_factory=list)
    staged_folds: int = 0
    compaction: dict[str, int] | None = None
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"window": self.window, "thresholds": self.thresholds, "tokens_in": self.tokens_in,
                "tokens": self.tokens, "stages": self.stages, "staged_folds": self.staged_folds,
                "compaction": self.compaction, "seconds": round(self.seconds, 6)}
