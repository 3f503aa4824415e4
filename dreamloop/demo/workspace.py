"""The demo's workspace: the sample project shipped in the package, and fresh copies of it.

The agent edits a copy, never the package. This module only copies files; it
knows nothing of the tools that later work inside the copy.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from dreamloop.scratch import scratch_dir

__all__ = ["copy_sample_project", "sample_project_path"]

_SKIP = ("__pycache__", ".pytest_cache", ".DS_Store")


def sample_project_path() -> Traversable:
    """The sample project inside the installed package (a ``pathlib.Path`` for a normal install).

    Read it, don't edit it: ``copy_sample_project()`` gives a workspace to change.
    """
    return files("dreamloop.demo") / "sample_project"


def copy_sample_project(dest: Path | None = None) -> Path:
    """Copy the sample project to ``dest`` (default: a fresh temporary folder) and return it.

    The default folder is the kit's (``dreamloop.scratch.scratch_dir``): it is
    removed when this process ends, even if it is killed (then by the next
    kit process). Give ``dest`` for a copy that stays.
    ``dest`` may exist if it is empty; byte-code caches are not copied. The
    returned path is absolute and resolved (no symlinks), ready to be a
    workspace root. Raises ``FileExistsError`` if ``dest`` has files in it.

    >>> root = copy_sample_project()
    >>> sorted(p.name for p in root.iterdir())
    ['README.md', 'config.py', 'greeter.py', 'tests']
    """
    if dest is None:
        dest = scratch_dir("sample-")
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty; the sample project goes to an empty directory")
    _copy_tree(sample_project_path(), dest)
    return dest.resolve()


def _copy_tree(source: Traversable, dest: Path) -> None:
    # Traversable, not shutil.copytree: works from a zip or wheel as well as a directory.
    dest.mkdir(parents=True, exist_ok=True)
    for item in sorted(source.iterdir(), key=lambda i: i.name):
        if item.name in _SKIP or item.name.endswith(".pyc"):
            continue
        if item.is_dir():
            _copy_tree(item, dest / item.name)
        else:
            (dest / item.name).write_bytes(item.read_bytes())
