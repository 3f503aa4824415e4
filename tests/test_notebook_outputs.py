"""What a notebook stores is the same on every machine: no temporary folder or home directory in any stored
output (text, HTML, a widget's snapshot) of any chapter or solution, in either edition. One instance found:
chapter 03b's stored inspector showed an attachment's ``path=/tmp/tmp.../project/CLAUDE.md``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").rglob("*.ipynb"))
MACHINE_PATH = re.compile(r"(?:/tmp/|/var/folders/|/private/var/|/home/(?!user/)[a-z_][\w-]*/|/Users/\w+/|/root/)"
                          r"|\btmp[a-z0-9_]{8}\b|dreamloop-\d{5,}")
"""A temporary folder (tempfile's, the kit's scratch root), or a user's home (``/home/user/`` is the placeholder
the scrubbed Claude Code sessions of chapter 10b use, the same everywhere)."""

REAL_OUTPUT = {("07_hooks.ipynb", "c07-15")}
"""Cells whose stored output quotes a real command's output as the model read it: chapter 07's inspector shows
the sample project's unittest traceback, which names the test file by its path in the run's scratch folder
(``dreamloop.scratch``: fixed width, so token counts do not move; nbval masks it, tests/nbval_sanitize.cfg).
Only the scratch root may appear there."""
SCRATCH = re.compile(r"/tmp/dreamloop-\d{10}/")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_no_stored_output_holds_a_machine_path(path):
    found = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            text = json.dumps(output, ensure_ascii=False)
            if (path.name, cell.get("id")) in REAL_OUTPUT:
                text = SCRATCH.sub("<scratch>/", text)
            found += [f"{cell.get('id')}: …{text[max(0, m.start() - 60):m.end() + 40]}…"
                      for m in MACHINE_PATH.finditer(text)]
    assert not found, f"{path.name}: {len(found)} machine path(s) in stored outputs:\n" + "\n".join(found[:5])


def test_the_pattern_finds_what_it_is_for():
    for text in ("path=/tmp/tmph581rt_e/project/CLAUDE.md", "/home/sam/x", "/var/folders/ab/T/x",
                 "in tmpawif41ri", "dreamloop-01000/x"):
        assert MACHINE_PATH.search(text), text
    for text in ("CLAUDE.md", "project/config.py", "~/.claude/CLAUDE.md", "tmp.txt"):
        assert not MACHINE_PATH.search(text), text
