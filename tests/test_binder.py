"""The Binder configuration: what repo2docker reads builds the kit, on a tested Python, with ipykernel >= 7.4.

repo2docker (what Binder runs) looks for its configuration in ``binder/`` or
``.binder/`` if one exists, and then ignores the top level; both at once is an
error. In ``.binder/``: ``runtime.txt`` (``python-X.Y``) picks the Python, and
``requirements.txt`` is installed with that Python's pip from the repository
root, into the one environment where JupyterLab and the kernel run. A
``Dockerfile`` there would replace all of this, and an ``environment.yml`` would
make it ignore ``runtime.txt``. No image is built here (no container engine);
``make binder-check`` runs the same install command in a fresh venv.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / ".binder"


def requirement_lines() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def lab_extra() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [Requirement(r) for r in project["optional-dependencies"]["lab"]]


def test_binder_reads_the_hidden_folder_only():
    assert BINDER.is_dir() and not (REPO / "binder").exists()  # both at once: repo2docker refuses
    assert sorted(p.name for p in BINDER.iterdir()) == ["requirements.txt", "runtime.txt"]
    for overriding in ("Dockerfile", "environment.yml", "Pipfile", "default.nix"):
        assert not (BINDER / overriding).exists()


def test_python_is_a_tested_one_in_3_11_to_3_13():
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    match = re.fullmatch(r"python-3\.(\d+)", runtime)
    assert match, runtime
    assert 11 <= int(match.group(1)) <= 13
    requires = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert Version(f"3.{match.group(1)}") in SpecifierSet(requires)


def test_the_kit_is_installed_with_its_lab_extra_and_ipykernel_7_4():
    lines = requirement_lines()
    assert ".[lab]" in lines  # the repository itself, not editable, from the root repo2docker runs pip in
    assert not any(line.startswith(("-e", "--editable")) for line in lines)
    pins = {Requirement(line).name: Requirement(line).specifier for line in lines if not line.startswith(".")}
    for specifiers in (pins["ipykernel"], *(r.specifier for r in lab_extra() if r.name == "ipykernel")):
        assert Version("7.4") in specifiers and Version("7.3.9") not in specifiers  # Stop acts mid-cell from 7.4
    assert "jupyterlab" in {r.name for r in lab_extra()}


def test_the_readme_says_how_binder_opens_chapter_00_and_has_no_badge_to_nowhere():
    """The project has no public repository address: a badge would point at a placeholder (it did: OWNER/dreamloop,
    issue 35). The README gives the Binder address to fill in, and it opens a chapter that exists."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "badge_logo.svg" not in readme and "OWNER/" not in readme
    link = re.search(r"https://mybinder\.org/v2/gh/YOU/REPO/HEAD\?urlpath=([^`\s)]+)", readme)
    assert link, "README does not say how to open the book on Binder"
    urlpath = link.group(1)
    assert urlpath.startswith("lab/tree/")
    assert (REPO / urlpath.removeprefix("lab/tree/")).is_file()
