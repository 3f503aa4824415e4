"""Path confinement: every path a built-in tool touches resolves inside the workspace root.

Relative paths are taken against the root; absolute paths are allowed only
inside it; ``..`` and symlinks are resolved first, so neither can lead out.
Then the file is opened one directory at a time from the root, never following
a link (``open_in_workspace``: ``openat`` with ``O_NOFOLLOW``), so a file or a
directory swapped for a symlink between the check and the open (by a hook, a
Bash command, another process) makes the open fail instead of reaching outside.
It knows nothing about Bash, which is not confined at all, and it trusts the
directories above the root.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["display_path", "open_in_workspace", "resolve_in_workspace", "workspace_root"]


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


def open_in_workspace(root: Path, path: Path, flags: int, *, make_dirs: bool = False) -> int:
    """Open ``path`` (from ``resolve_in_workspace``) with ``os.open`` ``flags``, following no link from ``root`` down.

    Each directory below ``root`` is opened relative to the one above it with ``O_NOFOLLOW``, and so is the
    file, so a component that became a symlink since ``path`` was resolved fails the open: ``ValueError("...
    changed while it was being opened ...")``. ``make_dirs`` creates missing directories on the way (Write).
    Returns the file descriptor (the caller closes it); raises ``OSError`` as ``os.open`` does. Where the
    system cannot open relative to a directory (Windows) it opens ``path`` directly.
    """
    parts = path.relative_to(root).parts
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "the workspace root is a directory", str(root))
    if os.open not in os.supports_dir_fd:  # pragma: no cover - not POSIX
        return os.open(path, flags, 0o666)
    nofollow, directory = os.O_NOFOLLOW, os.O_DIRECTORY | os.O_RDONLY | os.O_CLOEXEC
    try:
        fd = os.open(root, directory | nofollow)
        try:
            for part in parts[:-1]:
                try:
                    below = os.open(part, directory | nofollow, dir_fd=fd)
                except FileNotFoundError:
                    if not make_dirs:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    below = os.open(part, directory | nofollow, dir_fd=fd)
                os.close(fd)
                fd = below
            return os.open(parts[-1], flags | nofollow | os.O_CLOEXEC, 0o666, dir_fd=fd)
        finally:
            os.close(fd)
    except OSError as error:
        if error.errno == errno.ELOOP or (error.errno == errno.ENOTDIR and _a_link_on_the_way(root, parts)):
            raise ValueError(f"{display_path(root, path)} changed while it was being opened (a link appeared "
                             "on its way from the workspace root); it was not opened") from None
        raise


def _a_link_on_the_way(root: Path, parts: tuple[str, ...]) -> bool:
    """Whether the root or a directory below it on the way to the file is a symlink now."""
    here = root
    for part in ("", *parts[:-1]):
        here = here / part if part else here
        if here.is_symlink():
            return True
    return False


def display_path(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` with ``/`` separators (``"."`` for the root itself).

    Results show these, so transcripts don't depend on where the workspace lives.
    """
    return path.relative_to(root).as_posix()
