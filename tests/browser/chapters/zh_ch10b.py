"""Chapter 10b in Chinese (``notebooks/zh/10b``), in the page: the common checks (stored outputs readable before the
run, every cell run without an error, the markdown and its Mermaid figures rendered as meant, which in Chinese
also means emphasis that CommonMark's rules still see next to CJK punctuation), then every check cell's verdict
in Chinese. Chapter zh/03 checks the widgets' Chinese labels and the fonts (``zh_ch03.py``).
"""

from __future__ import annotations

from lab import Chapter, check_verdicts


def check(ch: Chapter) -> None:
    check_verdicts(ch)
