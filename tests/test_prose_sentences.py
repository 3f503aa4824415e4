"""No paragraph of the prose a person reads stops in the middle of its sentence (issue 37).

The README's "Record once, replay offline" ended "... and the recorded response is", and the next paragraph
began: a cut that no other test saw. Here every paragraph and list item of the README, the Chinese edition's
README, ``docs/`` and the chapters' markdown cells (both editions, solutions too) must end as a sentence
ends: ``.`` ``!`` ``?`` ``:`` ``;`` or their Chinese forms, before any closing brackets, quotes or emphasis.
Code (fenced or indented), tables, headings, HTML, images and a line that is only a bold label
(``**Questions**``) are not sentences. Two paragraphs of one file that open with the same bold lead-in
(``**Fonts.**`` twice, another slip of the README) are a copy left behind. And a README names things a user
can look up: no field case number (``F17``: the field cases are the contributors', in ``docs/design.md``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", ROOT / "notebooks" / "zh" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CHAPTERS = sorted((ROOT / "notebooks").glob("**/[0-9][0-9]*_*.ipynb"))

SENTENCE_END = set(".!?:;。！？：；")
CLOSERS = ")]\"'*_”’」）》"
FENCE = re.compile(r"(`{3,}|~{3,})")
LIST_ITEM = re.compile(r"([*+-]|\d+[.)])\s")
NOT_PROSE = ("|", "#", "<", "![", "[![")
BOLD_LABEL = re.compile(r"\*\*[^*]+\*\*")
LEAD_IN = re.compile(r"(?:[*+-]\s+)?\*\*([^*]+)\*\*")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each prose paragraph and list item of markdown ``text`` (lines from 1)."""
    found: list[tuple[int, str]] = []
    lines: list[str] = []
    start, fence, code = 0, None, False

    def close() -> None:
        if lines:
            found.append((start, " ".join(line.strip() for line in lines)))
            lines.clear()

    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if fence is not None:
            fence = None if stripped.startswith(fence) else fence
            continue
        if opening := FENCE.match(stripped):
            close()
            fence = opening.group(1)
            continue
        if not stripped:
            close()
            code = False
            continue
        if code or not lines and re.match(r"( {4}|\t)", line):  # an indented code block
            code = True
            continue
        if stripped.startswith(NOT_PROSE) or re.fullmatch(r"[-*_]{3,}", stripped) or BOLD_LABEL.fullmatch(stripped):
            close()
            continue
        if LIST_ITEM.match(stripped):  # each item is a unit of its own
            close()
        if not lines:
            start = number
        lines.append(line)
    close()
    return found


def unfinished(text: str) -> list[tuple[int, str]]:
    """The paragraphs of ``text`` that do not end as a sentence ends."""
    cut = []
    for number, paragraph in paragraphs(text):
        end = paragraph.rstrip()
        while end and end[-1] in CLOSERS:
            end = end[:-1].rstrip()
        if not end or end[-1] not in SENTENCE_END:
            cut.append((number, paragraph))
    return cut


def repeated_lead_ins(text: str) -> list[tuple[int, str]]:
    """Paragraphs that open with the bold lead-in of an earlier paragraph of the same text."""
    seen: set[str] = set()
    repeated = []
    for number, paragraph in paragraphs(text):
        if lead := LEAD_IN.match(paragraph):
            if lead.group(1) in seen:
                repeated.append((number, lead.group(1)))
            seen.add(lead.group(1))
    return repeated


def texts() -> list[tuple[str, str]]:
    """``(where, markdown)``: each document, and each markdown cell of each chapter."""
    found = [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in DOCUMENTS]
    for path in CHAPTERS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                found.append((f"{path.relative_to(ROOT)} cell {cell.get('id')}", "".join(cell["source"])))
    return found


# -- the detector itself, on the instance and its siblings --------------------------------------------------

CUT = """**Record once, replay offline.** `dl.offline(dl.cassette(path))` (CLI:
`--cassette`) replays the model's side event for event: with the tools run for real (a request that
differs from the recording is reported as `cassette.first_difference`, and the recorded response is

**Your own Claude Code sessions.** Claude Code keeps every session in a file.
"""


@pytest.mark.parametrize("text", [
    CUT,
    "A sentence that stops on a comma,\n\nThe next one.\n",
    "* an item cut in the middle of\n* a whole item.\n",
    "An opening bracket that never closes (as here\n",
    "一段没有结尾的中文\n\n下一段。\n",
    "Text, then a code block:\n\n```python\nx = 1\n```\n\nand the text after it never ends\n",
], ids=["the instance", "a comma", "a list item", "an open bracket", "Chinese", "after a code block"])
def test_the_detector_finds_a_paragraph_cut_off(text):
    assert len(unfinished(text)) == 1


@pytest.mark.parametrize("text", [
    "A sentence (with a remark).\n", "It says *so*.\n", "It is `code`.\n", "Run this:\n\n```bash\nmake test\n```\n",
    "| a | table\n|---|---\n| without | stops\n", "## A heading\n\nText.\n", "**Questions**\n\n1. Why?\n",
    "Indented code follows:\n\n    python -m unittest\n", "中文的句子。\n", "A quote: “like this.”\n",
    "![an image](images/x.png)\n",
], ids=["brackets", "emphasis", "code span", "a fence", "a table", "a heading", "a bold label", "indented code",
        "Chinese", "a quote", "an image"])
def test_the_detector_passes_what_ends_as_a_sentence_or_is_no_sentence(text):
    assert unfinished(text) == []


def test_the_detector_finds_a_lead_in_left_twice():
    assert repeated_lead_ins("**Fonts.** One.\n\n**Other.** Two.\n\n**Fonts.** Three.\n") == [(5, "Fonts.")]


# -- the prose ----------------------------------------------------------------------------------------------


def test_every_paragraph_ends_as_a_sentence_ends():
    every = texts()
    checked = sum(len(paragraphs(text)) for _, text in every)
    assert len(every) > 300 and checked > 1000  # what is read: the documents and every chapter's markdown
    cut = [f"{where}, line {number}: ...{paragraph[-80:]}" for where, text in every
           for number, paragraph in unfinished(text)]
    assert not cut, "paragraphs that stop before their sentence ends:\n" + "\n".join(cut)


def test_no_document_repeats_a_paragraph_s_lead_in():
    repeated = [f"{where}, line {number}: **{lead}** again" for where, text in texts()
                for number, lead in repeated_lead_ins(text)]
    assert not repeated, "\n".join(repeated)


READMES = [ROOT / "README.md", ROOT / "notebooks" / "zh" / "README.md"]
CASE_NUMBER = re.compile(r"(?<![\w/.-])F\d{1,2}(?![\w/.-])")


def test_the_detector_finds_a_field_case_number():
    assert CASE_NUMBER.findall("context with the call's result (F17); F1–F17 and (F6，墓碑)") == ["F17", "F1", "F17", "F6"]
    assert CASE_NUMBER.findall("a key F12345, docs/F17.md, file-F3, F5x") == []


def test_a_readme_names_no_field_case_by_its_number():
    found = [f"{path.relative_to(ROOT)}, line {number}: {line.strip()[:100]}" for path in READMES
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if CASE_NUMBER.search(line)]
    assert not found, "a user cannot look up a field case from the README; name the thing:\n" + "\n".join(found)
