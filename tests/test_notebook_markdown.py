"""Every chapter's markdown, as a renderer will read it: no wrapped line that turns into a list, no stray
math, no link or image to a file that is not there.

The browser check (tests/browser, ``lab.check_markdown``) looks at the same cells as JupyterLab draws them;
this test reads the sources, so `make test` catches the same faults without a browser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(NOTEBOOKS.glob("*/*.ipynb"))

_NUMBERED = re.compile(r"^(\s*)(\d+)[.)]\s")
_ITEM = re.compile(r"^\s*(\d+[.)]|[-*+])\s")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose_lines(source: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with their numbers."""
    lines, fenced = [], False
    for number, line in enumerate(source.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text())["cells"]
    return [(i + 1, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_no_wrapped_line_becomes_a_numbered_list(path):
    """"(chapter\\n   05) add" renders as a nested list item "5." (or "E."): reword such a line.

    A numbered line is an item of the list it continues when its indent is that of an earlier item (a
    sibling); a new list starts at 1. Anything else is a wrapped line that happens to start with a number.
    """
    for cell, source in markdown_cells(path):
        indents: set[int] = set()  # the indents of the items of the current list
        blank = True
        for number, line in prose_lines(source):
            if not line.strip():
                blank = True
                continue
            indent = len(line) - len(line.lstrip())
            numbered = _NUMBERED.match(line)
            if numbered:
                if numbered.group(2) != "1" and indent not in indents:
                    pytest.fail(f"{path.name} cell {cell} line {number}: {line.strip()!r} continues the text "
                                "before it but starts with a number: it renders as a numbered list item")
                indents.add(indent)
            elif _ITEM.match(line):
                indents.add(indent)
            elif blank and indent == 0:
                indents.clear()  # a paragraph after a blank line ends the list
            blank = False


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_no_dollar_outside_code(path):
    """JupyterLab renders $...$ as math: a $ belongs in a code span."""
    for cell, source in markdown_cells(path):
        for number, line in prose_lines(source):
            outside = re.sub(r"``.*?``|`[^`]*`", "", line)
            if "$" in outside:
                pytest.fail(f"{path.name} cell {cell} line {number}: a $ outside code: {line.strip()!r}")


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_links_and_images_point_at_files_that_exist(path):
    for cell, source in markdown_cells(path):
        for number, line in prose_lines(source):
            outside = re.sub(r"`[^`]*`", "", line)
            for target in _LINK.findall(outside):
                if re.match(r"[a-z]+:", target) or target.startswith("#"):
                    continue
                assert (path.parent / target.split("#")[0]).exists(), \
                    f"{path.name} cell {cell} line {number}: {target} does not exist"


_UNWRITTEN = ("still to be written", "not written yet", "尚未写完", "还没有写")
_CHAPTER_REF = re.compile(r"(?:chapters?|Next:\s*\*\*)\s*(\d\d)\b[^.\n]{0,60}?(?:still to be written|not written yet|to come)"
                          r"|(?:still to be written|not written yet)[^.\n]{0,20}?(\d\d)")
EVERY = sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)  # both editions


@pytest.mark.parametrize("path", EVERY, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_no_chapter_that_exists_is_called_unwritten(path):
    """Every chapter 00-10 exists: none is announced as still to be written (any cell, any edition, however the
    line is wrapped)."""
    written = {p.name.split("_")[0] for p in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")}
    cells = json.loads(path.read_text())["cells"]
    for number, cell in enumerate(cells, start=1):
        text = " ".join("".join(cell["source"]).split())
        for phrase in _UNWRITTEN:
            assert phrase not in text, f"{path.name} cell {number}: a chapter said to be unwritten ({phrase})"
        for match in _CHAPTER_REF.finditer(text):
            chapter = match.group(1) or match.group(2)
            assert chapter not in written, f"{path.name} cell {number}: chapter {chapter} exists: {match.group(0)!r}"


_HISTORY = re.compile(r"\bissue\s?\d+|\bseen publicly\b|公开报告", re.I)
_FIELD_CASE = re.compile(r"\b[Ff]ield cases?\b|实地案例|(?<![\w-])F\d{1,2}\b")
_FIELD_CASE_LINK = re.compile(r"\[[^\]]*\]\((?:\.\./)+docs/design\.md#field-cases\)")


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_no_word_from_the_projects_own_history(path):
    """A learner cannot open "issue 24" or "seen publicly"; a field case ("F17") is a link to the table in
    docs/design.md that says what it is (issue 35, item 9)."""
    for cell, source in markdown_cells(path):
        for number, line in prose_lines(source):
            outside = re.sub(r"`[^`]*`", "", line)
            where = f"{path.name} cell {cell} line {number}"
            assert not _HISTORY.search(outside), f"{where}: {_HISTORY.search(outside).group(0)!r} in {line.strip()!r}"
            bare = _FIELD_CASE.search(_FIELD_CASE_LINK.sub("", outside))
            assert not bare, f"{where}: {bare.group(0)!r} is not a link to docs/design.md#field-cases: {line.strip()!r}"
