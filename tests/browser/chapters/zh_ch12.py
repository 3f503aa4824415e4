"""Chapter 12 in Chinese (``notebooks/zh/12``), in the page: the common checks, every check cell's verdict in
Chinese, and the parent's and the child's inspectors as chapter 12 checks them (``check_inspectors`` in
``ch12.py``; the first messages are the script's own words, the same in both editions). Saves
``zh-child-inspector.png``.
"""

from __future__ import annotations

from chapters.ch12 import check_inspectors
from lab import Chapter, check_verdicts

SCREENSHOTS = ("zh-child-inspector.png",)


def check(ch: Chapter) -> None:
    check_verdicts(ch)
    check_inspectors(ch, "zh-child-inspector.png")
