"""Path confinement: every path a built-in tool touches resolves inside the workspace root.

Relative paths are taken against the root; absolute paths are allowed only
inside it; ``..`` and symlinks are resolved first, so neither can lead out.
This is a guard against a model's mistakes, not a security boundary (a file
swapped for a symlink between the check and the use is not caught), and it
knows nothing about Bash, which is not confined at all.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["display_path", "resolve_in_workspace", "workspace_root"]


def workspace_root(workspace: Path | None) -> Path:
    """The resolved root directory; ``ValueError`` if there is none or it is not a directory."""
    if workspace is None:
        raise ValueError("no workspace: set ToolUseContext.workspace to the directory the tools may use")
    root = Path(workspace).resolve()
    if not root.is_dir():
        raise ValueError(f"the workspace is not a directory: {workspace}")
    return root


def resolve_in_workspace(root: Path, path: str | Path) -> Path:
    """``path`` resolved (symlinks and ``..`` followed) and checked to lie inside ``root``.

    ``root`` must already be resolved (see ``workspace_root``). Relative
    paths are taken against ``root``. Returns the resolved absolute path
    (which may not exist yet). Raises ``ValueError("path escapes the
    workspace: PATH")`` if it lies outside.

    >>> resolve_in_workspace(Path("/ws"), "../etc/passwd")   # doctest: +SKIP
    ValueError: path escapes the workspace: ../etc/passwd
    """
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()  # follows symlinks, even dangling ones
    if resolved != root and not resolved.is_relative_to(root):
        raise ValueError(f"path escapes the workspace: {path}")
    return resolved


def display_path(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` with ``/`` separators (``"."`` for the root itself).

    Results show these, so transcripts don't depend on where the workspace lives.
    """
    return path.relative_to(root).as_posix()
