"""The solved exercises, read from ``notebooks/solutions/`` (the notebooks are the one copy of them).

``solutions("04")`` is what chapter 04's solved notebook defines: each code cell's imports, definitions and
assignments run in one namespace (with ``dl`` and ``ex``); what a cell only shows or checks (``ex.check_...(fn)``,
a bare expression, a loop that runs something) is left out, so loading a chapter runs nothing.
"""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path
from typing import Any

SOLUTIONS = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)


@functools.cache
def solutions(chapter: str) -> dict[str, Any]:
    """The names chapter ``chapter`` (``"04"``, ``"07b"``) solves its exercises with, from its solved notebook."""
    (path,) = SOLUTIONS.glob(f"{chapter}_*.ipynb")
    namespace: dict[str, Any] = {"__name__": f"solutions_{chapter}"}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]), filename=str(path))
        tree.body = [node for node in tree.body if isinstance(node, _KEPT) and not _runs_something(node)]
        exec(compile(tree, str(path), "exec"), namespace)  # noqa: S102  (the repo's own solved notebook)
    return namespace


def _runs_something(node: ast.AST) -> bool:
    """An assignment whose value awaits or runs a query (``run = dl.query(...)``): the notebook's demonstration."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)):
        return False
    return any(isinstance(sub, ast.Await) for sub in ast.walk(node))


@functools.cache
def solved() -> dict[str, Any]:
    """Every check a solved notebook calls, by name (``"check_partition"``), with what it hands the check: the
    solution as the notebook has it (``ex.check_partition(partition)`` -> chapter 04's ``partition``)."""
    found: dict[str, Any] = {}
    for path in sorted(SOLUTIONS.glob("[01][0-9]*_*.ipynb")):
        namespace = solutions(path.name.split("_", 1)[0])
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            for node in ast.walk(ast.parse("".join(cell["source"]))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "ex"
                        and node.func.attr.startswith("check_")):
                    found[node.func.attr] = eval(compile(ast.Expression(node.args[0]), str(path), "eval"),  # noqa: S307
                                                 namespace)
    return found
