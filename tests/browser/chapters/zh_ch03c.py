"""Chapter 03c in Chinese (``notebooks/zh/03c``), in the page: the common checks (stored outputs readable before the
run, every cell run without an error, the markdown rendered as meant), then every check
cell's verdict in Chinese.
"""

from __future__ import annotations

from lab import Chapter, check_verdicts


def check(ch: Chapter) -> None:
    check_verdicts(ch)
