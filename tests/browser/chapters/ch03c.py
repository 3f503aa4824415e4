"""Chapter 03c in the page: the common checks (stored outputs readable before the run, every cell run without an
error, the markdown rendered as meant), then the exercise's check cell's verdict.
"""

from __future__ import annotations

from lab import Chapter, check_verdicts


def check(ch: Chapter) -> None:
    check_verdicts(ch)
