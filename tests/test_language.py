"""The kit in another language: every text the package shows a learner has its Chinese entry, and only those.

The package marks each learner-facing text with ``tr("...")`` (shown now) or ``N_("...")`` (kept as data,
shown later with ``tr``); this reads those calls from the source, so a new check or label without its
``dreamloop/zh/`` entry fails here, not in front of a learner in English. The exercise checks' own behaviour
under ``language("zh")`` is held in tests/test_exercises_zh.py, the widgets' in tests/test_widgets_zh.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dreamloop.language as L
from dreamloop import zh

PACKAGE = Path(L.__file__).resolve().parent
CJK = re.compile(r"[\u3400-\u9fff\uff01-\uff5e\u3000-\u303f]")


def _literals(tree: ast.AST, where: str, found: dict[str, list[str]]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tr", "N_") \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            found.setdefault(node.args[0].value, []).append(f"{where}:{node.lineno}")


NOTEBOOKS = PACKAGE.parent / "notebooks"


def marked_texts() -> dict[str, list[str]]:
    """Every literal text passed to ``tr`` / ``N_`` in the package, and in the English chapters' code (a chapter
    prints its own labels through ``tr`` so that its Chinese twin, the same code, prints them in Chinese),
    and the ``dreamloop compare`` scenarios' descriptions (chapter 11 prints them) → where ("file:line")."""
    import json

    from dreamloop.compare.scenarios import SCENARIOS

    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "zh" and path.parent.parent == PACKAGE:
            continue
        _literals(ast.parse(path.read_text(encoding="utf-8")), str(path.relative_to(PACKAGE)), found)
    for path in sorted(NOTEBOOKS.glob("[01][0-9]*_*.ipynb")) + sorted(NOTEBOOKS.glob("solutions/[01][0-9]*_*.ipynb")):
        for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1):
            if cell["cell_type"] == "code" and "tr(" in "".join(cell["source"]):
                tree = compile("".join(cell["source"]), path.name, "exec",
                               ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                _literals(tree, f"{path.relative_to(NOTEBOOKS)} cell {number}", found)
    for scenario in SCENARIOS:
        found.setdefault(scenario.about, []).append(f"compare/scenarios.py: {scenario.name}")
    return found


def braces(text: str) -> list[str]:
    """The ``{...}`` parts of a text (placeholders and literal JSON alike), sorted."""
    return sorted(re.findall(r"\{[^{}]*\}", text))


def test_the_package_marks_its_texts():
    texts = marked_texts()
    assert len(texts) > 300
    assert any(where[0].startswith("exercises/") for where in texts.values())
    assert any(where[0].startswith("widgets/") for where in texts.values())


def test_every_marked_text_has_its_chinese():
    catalogue = zh.texts()
    missing = {text: where for text, where in marked_texts().items() if text not in catalogue}
    assert not missing, "no Chinese for (add them to dreamloop/zh/):\n" + "\n".join(
        f"  {where[0]}: {text!r}" for text, where in sorted(missing.items(), key=lambda kv: kv[1][0]))


def test_no_entry_without_its_text():
    """An entry no code asks for is an English text that was changed or removed: its Chinese is stale."""
    stale = sorted(set(zh.texts()) - set(marked_texts()))
    assert not stale, f"entries no code uses (the English changed?): {stale}"


def test_each_translation_keeps_its_fields_and_is_chinese():
    for english, chinese in zh.texts().items():
        assert braces(chinese) == braces(english), (english, chinese)
        letters = re.sub(r"\{[^{}]*\}|`[^`]*`|[^A-Za-z]", "", english)
        if letters and not re.fullmatch(r"[A-Za-z_]+", english.strip("{} ")):
            assert CJK.search(chinese) or chinese == english, (english, chinese)


def test_no_f_string_is_marked():
    """``tr(f"...")`` would make a key that changes with its values: fields go in as keywords."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tr", "N_") \
                    and node.args:
                assert not isinstance(node.args[0], ast.JoinedStr), f"{path.name}:{node.lineno}"


def test_a_check_raises_only_translated_texts():
    """A ``_Fail(problem, hint)`` or a ``_verdict(title, ...)`` built from a literal would stay English."""
    def literal(node: ast.AST) -> bool:
        return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)) \
            or (isinstance(node, ast.BinOp) and (literal(node.left) or literal(node.right))) \
            or (isinstance(node, ast.IfExp) and (literal(node.body) or literal(node.orelse)))

    for path in sorted((PACKAGE / "exercises").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id == "_Fail":
                for arg in node.args:
                    assert not literal(arg), f"{path.name}:{node.lineno}: _Fail with an untranslated text"
            if node.func.id == "_verdict" and node.args:
                title = node.args[0]
                assert not literal(title) or (isinstance(title, ast.Constant)
                                              and re.fullmatch(r"[a-z_]+", title.value)), \
                    f"{path.name}:{node.lineno}: a check title must go through tr (or be an identifier)"


def test_the_setting():
    assert L.language() == "en"
    try:
        assert L.language("zh") == "zh" and L.language() == "zh"
        assert L.tr("waiting for your answer…") != "waiting for your answer…"
        assert L.language("zh-CN") == "zh"
    finally:
        L.language("en")
    assert L.tr("waiting for your answer…") == "waiting for your answer…"
    assert L.tr("for '{case}' it returned a list of {count} items; expected one user message.", case="x",
                count=2) == "for 'x' it returned a list of 2 items; expected one user message."
    with pytest.raises(ValueError, match="'en', 'zh'"):
        L.language("fr")
    assert L.language() == "en"


def test_a_missing_text_is_shown_in_english_and_remembered():
    try:
        L.language("zh")
        assert L.tr("a text no catalogue has {x}", x=1) == "a text no catalogue has 1"
    finally:
        L.language("en")
    assert ("zh", "a text no catalogue has {x}") in L.missing()
    L._missing.discard(("zh", "a text no catalogue has {x}"))


def test_a_text_made_from_a_template_is_shown_from_its_template():
    """``tr_formatted``: the template whose words match the whole text gives the values, its translation shows them."""
    from dreamloop.claude_code import NOTES
    from dreamloop.tools.permissions import ASK_REASONS

    reasons = list(ASK_REASONS.values())
    assert L.tr_formatted("Edit wants to change config.py", reasons) == "Edit wants to change config.py"  # English
    try:
        L.language("zh")
        assert L.tr_formatted("Edit wants to change config.py", reasons) == "Edit 要修改 config.py"
        assert L.tr_formatted("Bash wants to run: rm -f a; ls", reasons) == "Bash 要运行：rm -f a; ls"
        assert L.tr_formatted("Edit would change config.py", reasons) == "Edit would change config.py"
        assert L.tr_formatted("Deleting files is not allowed.", reasons) == "Deleting files is not allowed."
        note = NOTES["call_lines"].format(number=3, model="m", id="msg_1", count=2, first=5, last=6)
        assert L.tr_formatted(note, NOTES.values()) == "第 3 次模型调用：m，消息 msg_1，在文件里占 2 条记录（第 5–6 行）"
        assert L.tr_formatted("one 1 and 2 and 1", ["one {a} and {b} and {a}"]) == "one 1 and 2 and 1"  # not in zh
    finally:
        L.language("en")
    assert ("zh", "one {a} and {b} and {a}") in L.missing()
    L._missing.discard(("zh", "one {a} and {b} and {a}"))
    assert not [m for m in L.missing() if "wants to" in m[1] or "model call" in m[1]]


def test_every_template_made_text_reads_back():
    """Each built-in reason and note template, filled with values, is found again by ``tr_formatted``."""
    from dreamloop.claude_code import NOTES
    from dreamloop.tools.permissions import ASK_REASONS
    from string import Formatter

    catalogue = zh.texts()
    for templates in (ASK_REASONS.values(), NOTES.values()):
        for template in templates:
            fields = {name: f"<{name}>" for _, name, _, _ in Formatter().parse(template) if name}
            try:
                L.language("zh")
                shown = L.tr_formatted(template.format(**fields), templates)
            finally:
                L.language("en")
            assert shown == catalogue[template].format(**fields), template
