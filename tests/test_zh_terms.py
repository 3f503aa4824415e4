"""One name for one thing in the Chinese edition: no variant that ``notebooks/zh/glossary.md`` lists appears in it.

The glossary's section "一物一名" is a table: the term the edition uses, where it comes from (a source text or the
book's choice), the variants it replaces, and the scope ("全书", or "第 06 章" for a row that only holds where
the chapter is about the context pipeline). The edition is every markdown cell of ``notebooks/zh/`` (chapters and
solutions), ``notebooks/zh/README.md`` and every Chinese text of ``dreamloop/zh/`` (what the checks and widgets
show). Code in backticks is not prose and is left out; so are the loop's phases ("阶段 1" to "阶段 5") and a
variant named as what a source text calls the thing (right after "称为" or "称作"). The glossary itself, whose
table shows the variants, is not part of what is searched.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ZH = ROOT / "notebooks" / "zh"
GLOSSARY = ZH / "glossary.md"
CJK = re.compile(r"[\u4e00-\u9fff]")
QUOTED = re.compile(r"“([^”]+)”")
ASIDE = re.compile(r"（[^（）]*）")


def rows() -> list[tuple[list[str], list[str], str]]:
    """(terms, variants, scope) for each row of the glossary's "一物一名" table."""
    text = GLOSSARY.read_text(encoding="utf-8")
    section = text.split("## 一物一名", 1)[1].split("\n## ", 1)[0]
    found = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not QUOTED.search(cells[2]):
            continue
        terms = QUOTED.findall(ASIDE.sub("", cells[0]))
        variants = QUOTED.findall(ASIDE.sub("", cells[2]))
        found.append((terms, variants, cells[3]))
    return found


def edition() -> list[tuple[str, str]]:
    """(where, text) for every piece of Chinese prose in the edition."""
    pieces = []
    for path in sorted(ZH.glob("**/*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                pieces.append((f"{path.relative_to(ROOT)}#{cell.get('id')}", "".join(cell["source"])))
    pieces.append((str((ZH / "README.md").relative_to(ROOT)), (ZH / "README.md").read_text(encoding="utf-8")))
    for path in sorted((ROOT / "dreamloop" / "zh").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                for value in node.values:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str) and CJK.search(value.value):
                        pieces.append((f"{path.relative_to(ROOT)}:{value.lineno}", value.value))
    return pieces


def in_scope(where: str, scope: str) -> bool:
    if scope == "全书":
        return True
    number = re.fullmatch(r"第 (\d\d) 章", scope)
    assert number, f"glossary.md: unknown scope {scope!r} (write 全书 or 第 NN 章)"
    return f"/{number[1]}_" in where or where.startswith(f"dreamloop/zh/ch{number[1]}.py")


def variants_in(text: str, terms: list[str], variants: list[str]) -> list[str]:
    prose = re.sub(r"`[^`\n]*`", " ", text).replace("<br/>", "")
    prose = re.sub(r"阶段 ?[1-5](–5)?", " ", prose)
    for term in sorted(terms, key=len, reverse=True):
        prose = prose.replace(term, "\u3000" * len(term))
    hits = []
    for variant in variants:
        for match in re.finditer(re.escape(variant), prose):
            if re.search(r"(称为|称作)$", prose[:match.start()]):
                continue
            hits.append(f"“{variant}” in …{text[max(0, match.start() - 20):match.end() + 20]}…")
    return hits


def variant_hits() -> list[str]:
    pieces = edition()
    return [f"{where}: {hit}" for terms, variants, scope in rows() for where, text in pieces
            if in_scope(where, scope) for hit in variants_in(text, terms, variants)]


def test_the_glossary_lists_the_variants():
    found = rows()
    assert len(found) >= 10, "glossary.md: the 一物一名 table lost its rows"
    assert all(terms and variants for terms, variants, _ in found)


def test_the_check_finds_a_variant():
    assert variants_in("第一条 user 消息以八个上下文 reminder 块开头", ["用户消息"], ["user 消息"])
    assert not variants_in("未观察到（`user 消息`）", ["未观察到"], ["未观察", "user 消息"])
    assert variants_in("06 · 上下文管线", ["压缩管线"], ["上下文管线"])
    assert variants_in('C["2 · 上下文<br/>管线"]', ["压缩管线"], ["上下文管线"])
    assert not variants_in("阶段 5 会注入附件", ["步"], ["阶段"])
    assert not variants_in("原文称为内存文件", ["记忆文件"], ["内存文件"])


def test_no_variant_in_the_chinese_edition():
    hits = variant_hits()
    assert not hits, f"{len(hits)} variant(s) the glossary replaces:\n" + "\n".join(hits)
