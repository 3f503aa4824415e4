"""The Chinese catalogue: for each English text the kit shows a learner, its Chinese, written by people.

One module per part, each a dict ``TEXTS`` (English → Chinese): ``checking`` (what every check says),
``ch00`` ... (each chapter's checks), ``widgets`` (the widgets' fixed labels and the flowchart). A chapter
that adds checks adds its module to ``PARTS``. ``tests/test_language.py`` finds every text the package marks
with ``tr`` / ``N_`` and fails on one without an entry here, on an entry no code uses, and on a translation
whose ``{fields}`` differ from the English. Terms follow the two source texts (``notebooks/zh/glossary.md``).
"""

from __future__ import annotations

from importlib import import_module

PARTS = ("checking", "ch00", "ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "ch10", "ch11", "ch12", "widgets")
"""The catalogue's modules, in the book's order."""


def texts() -> dict[str, str]:
    """Every part's ``TEXTS`` in one dict; a text in two parts is an error (each text has one home)."""
    merged: dict[str, str] = {}
    for part in PARTS:
        for english, chinese in import_module(f"{__name__}.{part}").TEXTS.items():
            if english in merged:
                raise ValueError(f"dreamloop.zh.{part}: {english!r} is already in another part")
            merged[english] = chinese
    return merged
