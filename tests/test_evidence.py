"""Every claim about Claude Code or the source texts names its evidence, and the evidence shows it (docs/evidence.md).

A claim is a sentence, list item or table row of a chapter's Markdown (both editions), the README or a
package docstring that names Claude Code or the source texts. Its evidence is a source text by name, a
Claude Code version with a ``dreamloop compare`` scenario (or a recorded session file) in backticks, or
dreamloop's own choice. A claim without evidence fails the test, which names the file, the cell or line and
the sentence.

Named is not shown: a claim that cites a scenario or a session file rests on *facts* that the recordings must
hold (``conformance/claude-code-2.1.332.json``, its request anatomies, the kept session files), and a claim
that cites a source text rests on a *quotation* the text must hold (``../shared/seeds/``; skipped, saying so,
where the texts are absent). The registry (``tests/evidence_facts.py``) says which sentence, in each edition,
rests on which; a fact that no longer holds fails here naming every sentence that cites it.
``python tests/test_evidence.py -v`` prints the counts per file and each claim without evidence;
``--facts`` prints every fact with the sentences resting on it.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from evidence_registry import CONV, FOUR, SESSIONS, At, Recordings, Registry, Shipped, claude_code_program, source_texts

ROOT = Path(__file__).resolve().parent.parent

_SUBJECT = re.compile(r"Claude Code|\bthe source\b|\bsource texts?\b|\bthe (?:two )?texts'|\bboth texts\b|"
                      r"\bthe two texts\b|conversation-loop text|four-step-loop text|源码|源文本|原文|两篇|《对话循环》|四步循环一文",
                      re.I)
_NOT_A_CLAIM = re.compile(r"\bnpm\b|make conformance|--claude\b|ANTHROPIC_|~/\.claude|\.claude-code/|"
                          r"\binstall", re.I)
_TEXT = re.compile(r"conversation-loop text|four-step-loop text|\bboth texts\b|\bthe two texts\b|"
                   r"《对话循环》|四步循环一文|两篇原文", re.I)
_CHOICE = re.compile(r"dreamloop's (?:own|choice|name|names|words|design|default)|"
                     r"dreamloop (?:的选择|自己的|的命名|的设计|的用词|的默认值)")
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
    cell: str | None = None
    names: frozenset[str] = frozenset()
    texts: frozenset[str] = frozenset()


def scenario_names() -> set[str]:
    from dreamloop.compare.scenarios import SCENARIOS

    return {scenario.name for scenario in SCENARIOS}


def session_names() -> set[str]:
    return {path.name for path in SESSIONS.glob("*.json*")} if SESSIONS.is_dir() else set()


def names_evidence(text: str, observed: set[str]) -> bool:
    """Whether ``text`` names a source text, an observation (a version and a scenario or session file in
    backticks) or dreamloop's own choice."""
    if _TEXT.search(text) or _CHOICE.search(text):
        return True
    ticked = {name.strip() for name in _TICKED.findall(text)}
    ticked |= {name.rsplit("/", 1)[-1] for name in ticked}
    return bool(_VERSION.search(text)) and bool(ticked & observed)


def units(markdown: str, headers: dict[str, str] | None = None) -> list[str]:
    """The sentences, list items and table rows of ``markdown`` (code blocks and headings left out).
    ``headers``, when given, receives each table row's header line (by the row's text)."""
    markdown = _CODE_BLOCK.sub("", markdown)
    found: list[str] = []
    for block in re.split(r"\n\s*\n", markdown):
        lines = [line for line in block.splitlines() if not line.lstrip("> ").startswith("#")]
        if not lines:
            continue
        if all(line.lstrip("> ").startswith("|") for line in lines):  # a table: one unit per row, header left out
            separator = re.compile(r"[>\s]*\|[\s:|-]+\|?\s*")
            header = len(lines) > 1 and separator.fullmatch(lines[1])
            rows = [line for line in lines[2 if header else 0:] if not separator.fullmatch(line)]
            if header and headers is not None:
                headers.update({row: lines[0] for row in rows})
            found += rows
            continue
        items = re.split(r"\n(?=[>\s]*(?:[*-]|\d+\.)\s)", "\n".join(lines))  # list items
        for item in items:
            text = " ".join(part.strip("> ").strip() for part in item.splitlines())
            found += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*`(\"])|(?<=[。！？])", text) if s.strip()]
    return found


_NAMES_CONV = re.compile(r"conversation-loop text|《对话循环》|\bboth texts\b|\bthe two texts\b|两篇原文", re.I)
_NAMES_FOUR = re.compile(r"four-step-loop text|四步循环一文|\bboth texts\b|\bthe two texts\b|两篇原文",
                         re.I)


_AMBIGUOUS = {"max_turns"}  # a scenario's name that is also an ending's
_AS_A_SCENARIO = re.compile(r"scenario|场景|--max-turns")


def cited_names(text: str, observed: set[str]) -> frozenset[str]:
    """The scenarios and session files ``text`` names in backticks (``max_turns``, also an ending's name, only
    where the text speaks of a scenario or of ``--max-turns``)."""
    ticked = {name.strip() for name in _TICKED.findall(text)}
    ticked |= {name.rsplit("/", 1)[-1] for name in ticked}
    if not _AS_A_SCENARIO.search(text):
        ticked -= _AMBIGUOUS
    return frozenset(ticked & observed)


def cited_texts(text: str) -> frozenset[str]:
    """The source texts ``text`` names (``FOUR``, ``CONV``; "both texts" names the two)."""
    bare = _TICKED.sub("", text)
    return frozenset(key for key, pattern in ((CONV, _NAMES_CONV), (FOUR, _NAMES_FOUR)) if pattern.search(bare))


_EVIDENCE_HEADER = re.compile(r"\b(?:evidence|依据)\s*\|\s*$")


def claims_in(markdown: str, path: str, where: str, observed: set[str], cell: str | None = None) -> list[Claim]:
    """The claims of ``markdown``. A row of a table whose header names Claude Code or a text (``| what broke the
    stream | what Claude Code 2.1.332 did | scenario |``) is a claim, the header's words counting as its own; an
    evidence table's header only names its columns."""
    found = []
    headers: dict[str, str] = {}
    for unit in units(markdown, headers):
        header = headers.get(unit, "")
        if _EVIDENCE_HEADER.search(header):
            header = ""
        bare = _TICKED.sub("", unit + " " + header)
        if _SUBJECT.search(bare) and not _NOT_A_CLAIM.search(unit):
            found.append(Claim(path, where, unit, names_evidence(unit + " " + header, observed), cell,
                               cited_names(unit, observed), cited_texts(unit)))
    return found


def chapter_claims(path: Path, observed: set[str]) -> list[Claim]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            found += claims_in(source, _rel(path), f"cell {index} ({cell.get('id')})", observed, cell.get("id"))
    return found


def markdown_claims(path: Path, observed: set[str]) -> list[Claim]:
    text = path.read_text(encoding="utf-8")
    found = []
    for block_start, block in _blocks_with_lines(text):
        found += claims_in(block, _rel(path), f"line {block_start}", observed)
    return found


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def docstrings(tree: ast.AST) -> list[ast.Expr]:
    """The docstrings of a module: a module's, a class's or a function's, and an attribute's (a string right
    after an assignment, as Sphinx and the IDEs read it: ``READ_DEFAULT_LINES = 2000`` then its text)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and _is_text(body[0]):
                found.append(body[0])
            found += [after for before, after in zip(body, body[1:])
                      if isinstance(before, (ast.Assign, ast.AnnAssign)) and _is_text(after)]
    return found


def docstring_claims(path: Path, observed: set[str]) -> list[Claim]:
    found = []
    for doc in docstrings(ast.parse(path.read_text(encoding="utf-8"))):
        text = doc.value.value.replace("``", "`")  # an RST literal is a code span
        found += claims_in(text, _rel(path), f"line {doc.lineno}", observed)
    return found


def all_claims() -> list[Claim]:
    observed = scenario_names() | session_names()
    found = markdown_claims(ROOT / "README.md", observed)
    found += markdown_claims(ROOT / "notebooks" / "zh" / "README.md", observed)
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
    header = claim("| point | the source texts | Claude Code 2.1.332 | evidence |\n|---|---|---|---|\n"
                   "| x | y | z | w |")
    assert header == []  # an evidence table's header names columns, not a claim
    rows = claim("| what broke | what Claude Code 2.1.332 did | scenario |\n|---|---|---|\n"
                 "| x | resent | `bash_fails_parallel` |")
    assert [c.evidence for c in rows] == [True]  # another table's header is part of each row's claim
    assert claim("| what broke | what it did |\n|---|---|\n| x | resent |") == []
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


# -- the evidence shows the sentence (the registry: tests/evidence_facts.py) -----------------------------------

@pytest.fixture(scope="module")
def registry() -> Registry:
    import evidence_facts

    return evidence_facts.REGISTRY


@pytest.fixture(scope="module")
def recordings() -> Recordings:
    return Recordings()


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def located(claims: list[Claim], at: At) -> list[Claim]:
    """The claims ``at`` points at: same file, same cell, the fragment in the sentence."""
    fragment = _squeeze(at.fragment)
    return [c for c in claims if c.path == at.path and c.cell == at.cell and fragment in _squeeze(c.text)]


def backing(claims: list[Claim], registry: Registry) -> dict[int, list]:
    """For each claim (by its index in ``claims``), the registry's entries that locate it."""
    found: dict[int, list] = {}
    index = {id(c): i for i, c in enumerate(claims)}
    for entry in registry.claims:
        for at in entry.at:
            for claim in located(claims, at):
                found.setdefault(index[id(claim)], []).append(entry)
    return found


def _show(claim: Claim) -> str:
    return f"{claim.path} {claim.where}: {claim.text}"


def test_every_sentence_of_the_registry_is_one_claim(claims, registry):
    """A registry entry whose sentence changed (or moved, or is no longer a claim) fails here: update its
    fragment, or the facts it rests on."""
    problems = []
    for entry in registry.claims:
        for at in entry.at:
            found = located(claims, at)
            if len(found) != 1:
                problems.append(f"{at}: {len(found)} claims hold this fragment"
                                + "".join(f"\n    {_show(c)}" for c in found))
    assert not problems, "registry sentences not found exactly once:\n" + "\n".join(problems)


def test_the_registry_names_only_what_it_defines(registry):
    unknown = sorted({key for entry in registry.claims for key in entry.rests_on}
                     - set(registry.facts) - set(registry.quotes))
    unused = sorted(set(registry.facts) - {key for entry in registry.claims for key in entry.rests_on})
    unused += sorted(set(registry.quotes) - {key for entry in registry.claims for key in entry.rests_on})
    assert not unknown, f"claims rest on keys the registry does not define: {unknown}"
    assert not unused, f"facts or quotations no claim rests on: {unused}"


def test_every_observation_rests_on_a_checked_fact(claims, registry):
    """A claim that cites a scenario or a session file rests on a fact about each one it cites."""
    backed = backing(claims, registry)
    problems = []
    for i, claim in enumerate(claims):
        if not claim.names:
            continue
        entries = backed.get(i, [])
        if not entries:
            problems.append(f"no facts: {_show(claim)}")
            continue
        subjects = {s for e in entries for key in e.rests_on if key in registry.facts
                    for s in registry.facts[key].subjects}
        missing = sorted(claim.names - subjects)
        if missing:
            problems.append(f"no fact about {', '.join(missing)}: {_show(claim)}")
    assert not problems, ("claims citing a scenario or a session file without a fact that shows it "
                          "(tests/evidence_facts.py):\n" + "\n".join(problems))


def test_every_text_citation_rests_on_a_quotation(claims, registry):
    """A claim that cites a source text rests on a quotation of that text (for both texts, one of each)."""
    backed = backing(claims, registry)
    problems = []
    for i, claim in enumerate(claims):
        if not claim.texts:
            continue
        quoted = set()
        for entry in backed.get(i, []):
            for key in entry.rests_on:
                if key in registry.quotes:
                    quoted |= set(registry.quotes[key].texts)
        missing = sorted(claim.texts - quoted)
        if missing:
            problems.append(f"no quotation of the {' and '.join(missing)} text: {_show(claim)}")
    assert not problems, ("claims citing a source text without a quotation (tests/evidence_facts.py):\n"
                          + "\n".join(problems))


def _citations(key: str, registry: Registry, claims: list[Claim]) -> str:
    lines = []
    for entry in registry.citing(key):
        for at in entry.at:
            found = located(claims, at)
            lines.append(f"    {found[0].path} {found[0].where}: {found[0].text}" if len(found) == 1 else f"    {at}")
    return "\n".join(lines) or "    (no sentence)"


def test_the_facts_hold(claims, registry, recordings):
    """Every fact holds against the pinned recordings; a re-recording that changes one names each sentence
    (both editions) that rests on it."""
    failed = []
    for key, fact in registry.facts.items():
        problems = fact.failures(recordings)
        if problems:
            failed.append(f"{key} ({', '.join(fact.subjects)}): {fact.says}\n  " + "\n  ".join(problems)
                          + "\n  cited by:\n" + _citations(key, registry, claims))
    assert not failed, "facts the recordings no longer show:\n" + "\n".join(failed)


def test_the_quotations_are_in_the_texts(claims, registry):
    texts = source_texts()
    if texts is None:
        pytest.skip("the source texts are not here (../shared/seeds/ or $DREAMLOOP_SEEDS): quotations unchecked")
    failed = []
    for key, quote in registry.quotes.items():
        problems = quote.failures(texts)
        if problems:
            failed.append(f"{key}: {quote.words!r}: {'; '.join(problems)}\n  cited by:\n"
                          + _citations(key, registry, claims))
    assert not failed, "quotations the texts do not hold:\n" + "\n".join(failed)


def test_the_names_shipped_are_in_claude_codes_program(claims, registry):
    """A name said to be Claude Code's own (an ending no scenario reaches) is in its installed program."""
    program = claude_code_program()
    if program is None:
        pytest.skip("Claude Code 2.1.332 is not installed here (make conformance): shipped names unchecked")
    failed = []
    for key, fact in registry.facts.items():
        if isinstance(fact, Shipped):
            problems = fact.program_failures(program)
            if problems:
                failed.append(f"{key}: {fact.says}\n  " + "\n  ".join(problems) + "\n  cited by:\n"
                              + _citations(key, registry, claims))
    assert not failed, "names Claude Code's program does not hold:\n" + "\n".join(failed)


def test_a_changed_recording_fails_and_names_both_editions(tmp_path, claims, registry):
    """The check can fail: a copy of the conformance file in which one scenario ended otherwise fails the facts
    about it, and the message names the English and the Chinese sentence citing them."""
    recordings = Recordings()
    doctored = json.loads(recordings.conformance_path.read_text(encoding="utf-8"))
    doctored["scenarios"]["max_tokens_always"]["claude_code"][-1] = "ending: completed"
    path = tmp_path / "doctored.json"
    path.write_text(json.dumps(doctored), encoding="utf-8")
    recordings.conformance_path = path
    failing = [key for key, fact in registry.facts.items() if fact.failures(recordings)]
    assert failing and all("max_tokens_always" in registry.facts[key].subjects for key in failing)
    cited = "\n".join(_citations(key, registry, claims) for key in failing)
    assert "notebooks/08_recovery.ipynb" in cited and "notebooks/zh/08_recovery.ipynb" in cited


_CAMEL_NAME = re.compile(r"^[a-z]+[A-Z]\w*(?:\(\))?$|\.ts$")
_TOKEN = re.compile(r"[A-Za-z_][\w./-]*\w")
_CODE = re.compile(r"`([^`\n]+)`")


def _source_column(claim: Claim) -> str | None:
    """The source texts' column of an evidence-table row (its second cell), or None for a sentence."""
    if not claim.text.lstrip("> ").startswith("|"):
        return None
    cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", claim.text.strip().strip("|"))]
    return cells[1] if len(cells) >= 5 else None


def test_names_credited_to_a_text_are_in_it(claims, registry):
    """In a claim citing a text, each TypeScript-looking name (camelCase, a ``.ts`` file) is in a text; in an
    evidence table's source-texts column, every name in a code span is. A name the claim says is in neither text
    rests on an ``Absent`` quotation instead."""
    texts = source_texts()
    if texts is None:
        pytest.skip("the source texts are not here (../shared/seeds/ or $DREAMLOOP_SEEDS): names unchecked")
    every_text = "".join(texts.values())
    backed = backing(claims, registry)
    problems = []
    for i, claim in enumerate(claims):
        if not claim.texts:
            continue
        absent = {re.sub(r"\s+", "", q.words) for e in backed.get(i, []) for key in e.rests_on
                  if key in registry.quotes and not hasattr(registry.quotes[key], "text")
                  for q in [registry.quotes[key]]}
        column = _source_column(claim)
        if column is not None:
            names = [t for code in _CODE.findall(column) for t in _TOKEN.findall(code)]
        else:
            names = [code for code in _CODE.findall(claim.text) if _CAMEL_NAME.search(code)]
        for name in names:
            bare = re.sub(r"\s+", "", name)
            bare = bare[:-2] if bare.endswith("()") else bare
            if bare not in every_text and bare not in absent:
                problems.append(f"`{name}` is in neither text: {_show(claim)}")
    assert not problems, "names credited to the source texts that they do not hold:\n" + "\n".join(problems)


def test_the_retired_labels_are_gone(claims):
    """"dreamloop's own reading" is retired: a statement is a text's (quoted), an observation (a fact), or
    dreamloop's choice with no claim about Claude Code inside it."""
    retired = re.compile(r"own reading|dreamloop's reading|dreamloop 自己的解读|dreamloop 的解读|自己对它们的解读")
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "notebooks").rglob("*.ipynb"))]:
        if ".ipynb_checkpoints" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{_rel(path)}: …{m.group(0)}…" for m in retired.finditer(text)]
    for path in sorted((ROOT / "dreamloop").rglob("*.py")):
        found += [f"{_rel(path)}: …{m.group(0)}…" for m in retired.finditer(path.read_text(encoding="utf-8"))]
    assert not found, "the retired label is still used:\n" + "\n".join(found)


def _markdown_and_docstrings() -> list[tuple[str, str]]:
    found = [("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                found.append((f"{_rel(path)} {cell.get('id')}", "".join(cell["source"])))
    for path in sorted((ROOT / "dreamloop").rglob("*.py")):
        if "zh" in path.relative_to(ROOT / "dreamloop").parts:
            continue
        found += [(_rel(path), inspect.cleandoc(doc.value.value))
                  for doc in docstrings(ast.parse(path.read_text(encoding="utf-8"))) if doc.value.value.strip()]
    return found


_CAMEL = re.compile(r"(?<![\w.])[a-z]+[A-Z][A-Za-z0-9]*(?![\w])|[\w/.-]+\.ts\b")


def test_no_internal_names_that_nothing_here_shows(registry):
    """A TypeScript-looking name (camelCase, a ``.ts`` file) in a chapter, the README or a docstring is one this
    repository can show: it is in a source text, a kept session file or a scenario's own definition
    (``compare/scenarios.py``: the hook protocol's fields), or the registry says where it comes from
    (``evidence_facts.NAMES``: the DOM, Mermaid, unittest...). Claude Code's internals that nothing here shows
    are not named."""
    texts = source_texts()
    shown = "".join(path.read_text(encoding="utf-8") for path in SESSIONS.glob("*.json*"))
    shown += (ROOT / "dreamloop" / "compare" / "scenarios.py").read_text(encoding="utf-8")
    problems, unchecked = [], set()
    for where, text in _markdown_and_docstrings():
        for code in _CODE.findall(text.replace("``", "`")):
            for name in _CAMEL.findall(code):
                if name in registry.names or name in shown:
                    continue
                if texts is None:
                    unchecked.add(name)  # a text's name, maybe: unchecked without the texts
                    continue
                if re.sub(r"\s+", "", name) not in "".join(texts.values()):
                    problems.append(f"{where}: `{name}`")
    assert not problems, "names nothing here shows (drop them, or say where they come from):\n" + "\n".join(
        sorted(set(problems)))
    if unchecked:
        pytest.skip(f"the source texts are not here (../shared/seeds/ or $DREAMLOOP_SEEDS): {len(unchecked)} names "
                    "that only a text could show are unchecked")


def main() -> None:
    """Print, per file, the claims, those without evidence and those whose evidence is checked (``-v``: each
    claim without evidence; ``--facts``: every fact and quotation with the sentences resting on it)."""
    import evidence_facts

    registry = evidence_facts.REGISTRY
    claims = all_claims()
    backed = backing(claims, registry)
    if "--facts" in sys.argv:
        for key, fact in {**registry.facts, **registry.quotes}.items():
            says = getattr(fact, "says", None) or f"{getattr(fact, 'words', '')!r}"
            print(f"{key}: {says}\n{_citations(key, registry, claims)}")
        return
    by_path: dict[str, list[int]] = {}
    for i, claim in enumerate(claims):
        by_path.setdefault(claim.path, []).append(i)
    total = without = checked = cited = 0
    for path, found in by_path.items():
        bare = [i for i in found if not claims[i].evidence]
        citing = [i for i in found if claims[i].names or claims[i].texts]
        done = [i for i in citing if i in backed]
        total, without = total + len(found), without + len(bare)
        cited, checked = cited + len(citing), checked + len(done)
        print(f"{len(found):4d} claims {len(bare):4d} without evidence {len(citing):4d} citing {len(done):4d} "
              f"checked  {path}")
        if "-v" in sys.argv:
            for i in bare:
                print(f"       {claims[i].where}: {claims[i].text[:160]}")
    print(f"{total:4d} claims {without:4d} without evidence {cited:4d} citing a scenario, a session file or a text; "
          f"{checked:4d} of them resting on checked facts or quotations; {len(registry.facts)} facts, "
          f"{len(registry.quotes)} quotations, {len(registry.claims)} registered claims (each in one or both editions)")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    main()
