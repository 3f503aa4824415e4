"""Every claim about Claude Code or the source texts names its evidence (docs/evidence.md).

A claim is a sentence, list item or table row of a chapter's Markdown (both editions), the README or a
package docstring that names Claude Code or the source texts. Its evidence is a source text by name, a
Claude Code version with a ``dreamloop compare`` scenario (or a recorded session file) in backticks, or
dreamloop's own choice. A claim without evidence fails the test, which names the file, the cell or line and
the sentence; ``python tests/test_evidence.py -v`` prints the counts per file and each such claim.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "tests" / "fixtures" / "claude-code-sessions"

_SUBJECT = re.compile(r"Claude Code|\bthe source\b|\bsource texts?\b|\bthe (?:two )?texts'|\bboth texts\b|"
                      r"\bthe two texts\b|conversation-loop text|four-step-loop text|源码|源文本|原文|两篇|《对话循环》|《四步循环》|"
                      r"《执行循环》", re.I)
_NOT_A_CLAIM = re.compile(r"\bnpm\b|make conformance|--claude\b|ANTHROPIC_|~/\.claude|\.claude-code/|"
                          r"\binstall", re.I)
_TEXT = re.compile(r"conversation-loop text|four-step-loop text|\bboth texts\b|\bthe two texts\b|"
                   r"《对话循环》|《四步循环》|《执行循环》|两篇原文", re.I)
_CHOICE = re.compile(r"dreamloop's (?:own|choice|name|names|words|design|default)|"
                     r"dreamloop (?:的选择|自己的|的命名|的设计|的用词)")
_VERSION = re.compile(r"\b\d+\.\d+\.\d+\b")
_TICKED = re.compile(r"`([^`\n]+)`")
_CODE_BLOCK = re.compile(r"```.*?```", re.S)


@dataclass(frozen=True)
class Claim:
    """One sentence, list item or table row naming Claude Code or the texts; ``where``: ``cell 12`` or ``line 40``."""

    path: str
    where: str
    text: str
    evidence: bool


def scenario_names() -> set[str]:
    from dreamloop.compare.scenarios import SCENARIOS

    return {scenario.name for scenario in SCENARIOS}


def session_names() -> set[str]:
    return {path.name for path in SESSIONS.glob("*")} if SESSIONS.is_dir() else set()


def names_evidence(text: str, observed: set[str]) -> bool:
    """Whether ``text`` names a source text, an observation (a version and a scenario or session file in
    backticks) or dreamloop's own choice."""
    if _TEXT.search(text) or _CHOICE.search(text):
        return True
    ticked = {name.strip() for name in _TICKED.findall(text)}
    ticked |= {name.rsplit("/", 1)[-1] for name in ticked}
    return bool(_VERSION.search(text)) and bool(ticked & observed)


def units(markdown: str) -> list[str]:
    """The sentences, list items and table rows of ``markdown`` (code blocks and headings left out)."""
    markdown = _CODE_BLOCK.sub("", markdown)
    found: list[str] = []
    for block in re.split(r"\n\s*\n", markdown):
        lines = [line for line in block.splitlines() if not line.lstrip("> ").startswith("#")]
        if not lines:
            continue
        if all(line.lstrip("> ").startswith("|") for line in lines):  # a table: one unit per row, header left out
            separator = re.compile(r"[>\s]*\|[\s:|-]+\|?\s*")
            header = len(lines) > 1 and separator.fullmatch(lines[1])
            found += [line for line in lines[2 if header else 0:] if not separator.fullmatch(line)]
            continue
        items = re.split(r"\n(?=[>\s]*(?:[*-]|\d+\.)\s)", "\n".join(lines))  # list items
        for item in items:
            text = " ".join(part.strip("> ").strip() for part in item.splitlines())
            found += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*`(\"])|(?<=[。！？])", text) if s.strip()]
    return found


def claims_in(markdown: str, path: str, where: str, observed: set[str]) -> list[Claim]:
    found = []
    for unit in units(markdown):
        bare = _TICKED.sub("", unit)
        if _SUBJECT.search(bare) and not _NOT_A_CLAIM.search(unit):
            found.append(Claim(path, where, unit, names_evidence(unit, observed)))
    return found


def chapter_claims(path: Path, observed: set[str]) -> list[Claim]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            found += claims_in(source, _rel(path), f"cell {index}", observed)
    return found


def markdown_claims(path: Path, observed: set[str]) -> list[Claim]:
    text = path.read_text(encoding="utf-8")
    found = []
    for block_start, block in _blocks_with_lines(text):
        found += claims_in(block, _rel(path), f"line {block_start}", observed)
    return found


def docstring_claims(path: Path, observed: set[str]) -> list[Claim]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                found += claims_in(body[0].value.value, _rel(path), f"line {body[0].lineno}", observed)
    return found


def all_claims() -> list[Claim]:
    observed = scenario_names() | session_names()
    found = markdown_claims(ROOT / "README.md", observed)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        found += chapter_claims(path, observed)
    for path in sorted((ROOT / "dreamloop").rglob("*.py")):
        if "zh" not in path.relative_to(ROOT / "dreamloop").parts:  # the zh modules hold translations
            found += docstring_claims(path, observed)
    return found


def _blocks_with_lines(text: str) -> list[tuple[int, str]]:
    text = _CODE_BLOCK.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    blocks, start, current = [], 1, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            if not current:
                start = number
            current.append(line)
        elif current:
            blocks.append((start, "\n".join(current)))
            current = []
    if current:
        blocks.append((start, "\n".join(current)))
    return blocks


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# -- the tests ----------------------------------------------------------------------------------------------

def test_the_detector_knows_a_claim_and_its_evidence():
    observed = {"bash_fails_parallel"}
    claim = lambda text: claims_in(text, "x.md", "line 1", observed)  # noqa: E731
    assert claim("The loop ends here.") == []
    assert [c.evidence for c in claim("Claude Code retries twice.")] == [False]
    assert [c.evidence for c in claim("Claude Code 2.1.332 cancelled nothing (`bash_fails_parallel`).")] == [True]
    assert [c.evidence for c in claim("Claude Code 2.1.332 cancelled nothing.")] == [False]  # which scenario?
    assert [c.evidence for c in claim("Claude Code cancelled nothing (`bash_fails_parallel`).")] == [False]
    assert [c.evidence for c in claim("The conversation-loop text names five phases.")] == [True]
    assert [c.evidence for c in claim("The source names five phases.")] == [False]
    assert [c.evidence for c in claim("The note's words are dreamloop's own; Claude Code sends one too.")] == [True]
    assert claim("`make conformance` installs Claude Code with npm.") == []
    assert claim("```\nClaude Code retries\n```") == []
    assert [c.text for c in claim("One. Claude Code retries. Two.")] == ["Claude Code retries."]
    rows = claim("| point | evidence |\n|---|---|\n| retries | Claude Code 2.1.332, `bash_fails_parallel` |")
    assert [c.evidence for c in rows] == [True]
    header = claim("| point | the source texts | Claude Code 2.1.332 | evidence |\n|---|---|---|---|\n| x | y | z | w |")
    assert header == []  # a header names columns, not a claim
    assert [c.evidence for c in claim("源码在固定的检查点检查它的信号。")] == [False]
    assert [c.evidence for c in claim("《对话循环》在固定的检查点检查信号。")] == [True]


@pytest.fixture(scope="module")
def claims() -> list[Claim]:
    return all_claims()


def test_every_claim_names_its_evidence(claims):
    missing = [f"{c.path} {c.where}: {c.text}" for c in claims if not c.evidence]
    assert not missing, "claims without evidence (docs/evidence.md):\n" + "\n".join(missing)


def test_there_are_claims_to_check(claims):
    paths = {c.path for c in claims}
    assert "README.md" in paths and "notebooks/08_recovery.ipynb" in paths and "notebooks/zh/08_recovery.ipynb" in paths
    assert any(p.startswith("dreamloop/") for p in paths) and len(claims) > 400


CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")) + sorted((ROOT / "notebooks" / "zh").glob(
    "[0-9][0-9]*_*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: _rel(p))
def test_a_chapter_has_one_evidence_table_and_no_old_boxes(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "**In the source.**" not in text and "**源码中的对应。**" not in text, _rel(path)
    assert "**Where dreamloop differs**" not in text and "**dreamloop 与源码的不同之处**" not in text, _rel(path)
    tables = re.findall(r"^\|[^\n]*\b(?:evidence|依据)\s*\|\s*$", text, re.M)
    assert len(tables) == 1, f"{_rel(path)}: {len(tables)} evidence tables (one per chapter)"


def main() -> None:
    """Print, per file, the claims and those without evidence (``-v``: each of those)."""
    by_path: dict[str, list[Claim]] = {}
    for claim in all_claims():
        by_path.setdefault(claim.path, []).append(claim)
    total = without = 0
    for path, found in by_path.items():
        bare = [c for c in found if not c.evidence]
        total, without = total + len(found), without + len(bare)
        print(f"{len(found):4d} claims {len(bare):4d} without evidence  {path}")
        if "-v" in sys.argv:
            for claim in bare:
                print(f"       {claim.where}: {claim.text[:160]}")
    print(f"{total:4d} claims {without:4d} without evidence  in all")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
