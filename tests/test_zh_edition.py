"""The Chinese edition cannot drift from the English one: each zh notebook is its English twin, cell for cell.

For every chapter ``notebooks/NN_*.ipynb`` there is ``notebooks/zh/NN_*.ipynb`` (and the same for
``solutions/``): the same cells, in the same order, with the same ids, types and tags. Code is the same
once comments are stripped (and the docstrings of plain helper functions, which are comments too; a
decorated function's docstring can be what a decorator reads, e.g. a tool's description, so it stays). The
one difference allowed is the line ``ex.language("zh")`` in the first code cell. Prose is Chinese: each
markdown cell has Chinese in it, and so does each comment that says something in words. Each zh cell
records which English it was translated from (``metadata.translated_from``: the first 12 hex digits of the
SHA-1 of the English cell's source), so a change to the English prose fails here until the translation is
updated. A check cell's stored output is one verdict line, in Chinese.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ZH = NOTEBOOKS / "zh"
SWITCH = 'ex.language("zh")'
CJK = re.compile(r"[\u4e00-\u9fff]")

ENGLISH = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")) + sorted((NOTEBOOKS / "solutions").glob("[0-9][0-9]*_*.ipynb"))
PAIRS = [(path, ZH / path.relative_to(NOTEBOOKS)) for path in ENGLISH]


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def free_docstrings(code: str) -> set[tuple[int, int]]:
    """(line, column) of the docstrings that are only comments: the module's and undecorated functions'."""
    try:
        tree = compile(code, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return set()
    found = set()
    for node in [tree, *ast.walk(tree)]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.decorator_list:
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            found.add((body[0].value.lineno, body[0].value.col_offset))
    return found


def code_tokens(code: str) -> list[tuple[int, str]]:
    """The cell's tokens without comments, blank lines and free docstrings: what must be the same."""
    skip = free_docstrings(code)
    kept = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER):
            continue
        if token.type == tokenize.STRING and token.start in skip:
            continue
        kept.append((token.type, token.string))
    return kept


def comments(code: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.COMMENT]


def wordy(comment: str) -> bool:
    """A comment that says something in English words (three lowercase words in a row), not a name or a path."""
    return bool(re.search(r"(?<![\w./-])[a-z]{2,}[,;:]?\s+[a-z]{2,}[,;:]?\s+[a-z]{2,}(?![\w./(-])", comment))


@pytest.mark.parametrize("english, chinese", PAIRS, ids=[str(e.relative_to(NOTEBOOKS)) for e, _ in PAIRS])
def test_each_chapter_has_its_chinese_twin_cell_for_cell(english, chinese):
    assert chinese.exists(), f"{chinese.relative_to(NOTEBOOKS)} is missing: translate {english.name}"
    en, zh = cells(english), cells(chinese)
    assert [(c["cell_type"], c.get("id")) for c in zh] == [(c["cell_type"], c.get("id")) for c in en], \
        "the same cells, in the same order, with the same ids"
    first_code = True
    for number, (a, b) in enumerate(zip(en, zh), start=1):
        where = f"{chinese.name} cell {number} ({a.get('id')})"
        assert a.get("metadata", {}).get("tags", []) == b.get("metadata", {}).get("tags", []), where
        if a["cell_type"] == "markdown":
            assert CJK.search(source(b)), f"{where}: the markdown is not translated"
            continue
        zh_code = source(b)
        if first_code:
            assert zh_code.count(SWITCH) == 1, f"{where}: the first code cell says {SWITCH} once"
            zh_code = "\n".join(line for line in zh_code.split("\n") if line.split("#")[0].strip() != SWITCH)
            first_code = False
        else:
            assert SWITCH not in zh_code, f"{where}: {SWITCH} belongs in the first code cell only"
        assert code_tokens(zh_code) == code_tokens(source(a)), f"{where}: the code differs from the English"
        untranslated = [c for c in comments(zh_code) if wordy(c) and not CJK.search(c)]
        assert not untranslated, f"{where}: comments still in English: {untranslated}"


def fingerprint(cell: dict) -> str:
    return hashlib.sha1(source(cell).encode("utf-8")).hexdigest()[:12]


@pytest.mark.parametrize("english, chinese", PAIRS, ids=[str(e.relative_to(NOTEBOOKS)) for e, _ in PAIRS])
def test_each_translation_is_of_the_english_as_it_is_now(english, chinese):
    if not chinese.exists():
        pytest.skip("no twin yet (the test above says so)")
    stale = [(b.get("id"), b.get("metadata", {}).get("translated_from"), fingerprint(a))
             for a, b in zip(cells(english), cells(chinese))
             if b.get("metadata", {}).get("translated_from") != fingerprint(a)]
    assert not stale, (f"{english.name}: these cells changed since they were translated (id, translated from, the "
                       f"English now): {stale}; update their Chinese, then their metadata.translated_from")


@pytest.mark.parametrize("chinese", [zh for _, zh in PAIRS], ids=[str(z.relative_to(NOTEBOOKS)) for _, z in PAIRS])
def test_a_stored_check_cell_shows_one_chinese_verdict_line(chinese):
    if not chinese.exists():
        pytest.skip("no twin yet (the test above says so)")
    checks = [c for c in cells(chinese) if c["cell_type"] == "code" and "ex.check_" in source(c)]
    assert checks
    for cell in checks:
        outputs = cell.get("outputs", [])
        assert [o["output_type"] for o in outputs] == ["stream"], source(cell)
        text = "".join(outputs[0]["text"])
        assert text[:2] in ("✅ ", "❌ ") and text.count("✅") + text.count("❌") == 1, text
        assert CJK.search(text) and "Hint:" not in text, text
        if "solutions" in str(chinese):
            assert text.startswith("✅"), text


def test_no_chinese_notebook_without_its_english_twin():
    english = {p.relative_to(NOTEBOOKS) for p in ENGLISH}
    for path in sorted(ZH.glob("[0-9][0-9]*_*.ipynb")) + sorted((ZH / "solutions").glob("[0-9][0-9]*_*.ipynb")):
        assert path.relative_to(ZH) in english, f"{path.relative_to(NOTEBOOKS)} has no English twin"


def test_the_comparison_catches_what_it_must():
    """The rules above, on small cells: comments and free docstrings may differ; code and tool docstrings not."""
    assert code_tokens("x = 1  # one\n") == code_tokens("x = 1  # 一\n")
    assert code_tokens('def f():\n    """Say hi."""\n    return 1\n') == \
        code_tokens('def f():\n    """打招呼。"""\n    return 1\n')
    assert code_tokens('@dl.tool(I)\ndef f(i):\n    """Count."""\n') != code_tokens('@dl.tool(I)\ndef f(i):\n    """数。"""\n')
    assert code_tokens('print("hi")\n') != code_tokens('print("你好")\n')
    assert code_tokens("await f()\n") != code_tokens("await g()\n")
    assert wordy("# plain, stable text") and not wordy("# Read, Write, Edit") and not wordy("# noqa: E501")
