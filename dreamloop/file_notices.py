"""What one turn's file-change notices say: the changed lines of each file, within a budget for the turn.

Phase 5 (``attachments.py``) finds the files the model read that changed on disk since (by a command, a
person, a formatter: a notice says what changed, never who); this module words them. ``notices(changes)``
is the pure decision, given each change (``Change``: the name shown, the text the model last saw, the text
now):

* a file's notice shows a bounded diff of its changed lines (``diff_lines``: at most ``MAX_DIFF_LINES``
  lines and ``MAX_DIFF_CHARS`` characters, and how many more there are), not its first lines;
* one turn's notices share ``TURN_BUDGET_CHARS`` (about ten files' worth): every changed file is named, in
  the order given, and its lines are shown while they fit; a file past the budget is named with a line that
  says to read it again. A change is announced once (the caller records it as announced).

A deleted, binary or unreadable file, or one whose earlier text was not kept (``Change.before`` None), is
named with what is known. Every wording is dreamloop's own.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["MAX_DIFF_CHARS", "MAX_DIFF_LINES", "TURN_BUDGET_CHARS", "Change", "Notice", "diff_lines", "notices"]

MAX_DIFF_LINES = 40
"""The most diff lines one file's notice shows (dreamloop's choice)."""
MAX_DIFF_CHARS = 1_000
"""The most characters of diff one file's notice shows (dreamloop's choice: about 250 tokens)."""
TURN_BUDGET_CHARS = 12_000
"""The most characters one turn's file-change notices show in all: about ten files' worth, about 3,000 tokens
(dreamloop's choice); past it, a file is named only."""

_NAMED_ONLY = "The file {name}, which you read earlier, changed on disk since; read it again to see how."


@dataclass(frozen=True)
class Change:
    """One file that changed since the model saw it: ``name`` (as shown), ``before`` (the text the model last
    saw, or None when it was not kept), ``now`` (its text now; None: deleted), ``problem`` (it cannot be shown
    now: binary, unreadable; the words)."""

    name: str
    before: str | None
    now: str | None
    problem: str | None = None


def diff_lines(before: str, now: str) -> str:
    """The changed lines of ``before`` → ``now`` as a unified diff (one line of context, ``@@`` hunks giving line
    numbers, no file headers), at most ``MAX_DIFF_LINES`` lines and ``MAX_DIFF_CHARS`` characters, then a line
    saying how many more there are."""
    lines = list(difflib.unified_diff(before.splitlines(), now.splitlines(), n=1, lineterm=""))[2:]
    shown, size = [], 0
    for line in lines[:MAX_DIFF_LINES]:
        line = line if len(line) <= 200 else line[:200] + "…"
        if size + len(line) + 1 > MAX_DIFF_CHARS:
            break
        shown.append(line)
        size += len(line) + 1
    more = len(lines) - len(shown)
    tail = f"\n(… {more} more diff line{'s' if more != 1 else ''}; read the file for the rest)" if more else ""
    return "\n".join(shown) + tail


def _full(change: Change) -> str:
    head = f"The file {change.name}, which you read earlier, changed on disk since"
    if change.now is None:
        return f"The file {change.name}, which you read earlier, has been deleted since."
    if change.problem is not None:
        return f"{head}: {change.problem}; read it again if you need it."
    if change.before is None:
        return f"{head}; read it again to see how."
    if change.before == change.now:
        return f"{head}, but its text is the same."
    return f"{head}. The changed lines (- as you read it, + now):\n{diff_lines(change.before, change.now)}"


@dataclass(frozen=True)
class Notice:
    """One change's notice: ``text`` (what the model reads) and ``shown`` (its lines were shown; False: named
    only, past the turn's budget)."""

    text: str
    shown: bool


def notices(changes: list[Change], budget: int = TURN_BUDGET_CHARS) -> list[Notice]:
    """One notice per change, in order: the full notice while it fits in what is left of the turn's ``budget``
    (characters), else the file named only (a named-only line never counts against the budget: every file is
    named)."""
    out, used = [], 0
    for change in changes:
        full = _full(change)
        if used + len(full) <= budget:
            out.append(Notice(full, True))
            used += len(full)
        else:
            out.append(Notice(_NAMED_ONLY.format(name=change.name), False))
    return out
