"""Memory files: the CLAUDE.md files a run finds, reads and sends the model in its first user message.

Which files, in order (farthest first, so the nearest instructions come last):
the user's ``~/.claude/CLAUDE.md``; then, from the repository root (or the
workspace alone when it is not in a git repository) down to the workspace, each
folder's ``CLAUDE.md`` and ``CLAUDE.local.md``. Which files, and their order, are dreamloop's
design; dreamloop stops at the repository root. With a ``CLAUDE.md`` in the workspace, Claude
Code 2.1.332 opened its first message with one more context reminder (``memory_file``).
Reading never raises: a file too large, binary, not UTF-8, unreadable, or a
symlink that leads out of its folder tree is not sent, and a notice says why.
Imports (dreamloop's design): a line that is only ``@path`` (outside a code
fence) imports that file, relative to the importing file's folder; it is read
like a memory file and sent right after its importer, under its own heading
naming the importer (``MemoryFile.imported_by``), to ``MAX_IMPORT_DEPTH``
levels. An import that is missing, leads out of the tree, is binary, too large,
already sent (a cycle) or too deep is not sent, and a notice says why. With a
line ``@docs/style.md`` in the workspace's CLAUDE.md, Claude Code 2.1.332 sent
both that line and the imported file's words in its first request's leading
reminders (``memory_file_imports``), as dreamloop does.
``memory_reminder`` is the ``<system-reminder>`` text (dreamloop's own wording
around the files' text). ``stamp`` tells whether a file changed between turns.
This module knows nothing about the loop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .environment import git_root

__all__ = ["MAX_IMPORT_DEPTH", "MAX_MEMORY_BYTES", "MemoryFile", "find_memory_files", "imports_of", "memory_reminder",
           "nested_memory_files", "nested_memory_text", "read_memory_file", "read_memory_files", "read_with_imports",
           "stamp"]

MAX_MEMORY_BYTES = 40_000
"""The largest memory file sent (bytes); a larger one is left out with a notice (dreamloop's limit)."""

MAX_IMPORT_DEPTH = 5
"""How many levels of ``@path`` imports are followed below a memory file (dreamloop's limit)."""

Scope = Literal["user", "project", "local"]
_SAID = {"user": "the user's instructions for every project", "project": "project instructions",
         "local": "the user's private instructions for this project"}


@dataclass(frozen=True)
class MemoryFile:
    """One memory file as read: ``path``, ``scope`` (``user``, ``project`` for CLAUDE.md, ``local`` for
    CLAUDE.local.md), ``text`` (None when it is not sent), ``problem`` (why it is not sent, else None),
    ``stamp`` (what ``stamp(path)`` said when it was read: a change shows as a different stamp),
    ``imported_by`` (the memory file whose ``@path`` line imported it; None for a file found by its name)."""

    path: Path
    scope: Scope
    text: str | None
    problem: str | None = None
    stamp: tuple[int, int] | None = None
    imported_by: Path | None = None

    @property
    def notice(self) -> str | None:
        """The notice for the person when the file is not sent (None when it is)."""
        if not self.problem:
            return None
        if self.imported_by is not None:
            return f"Memory file {self.path}, imported by {self.imported_by}, was not sent: {self.problem}."
        return f"Memory file {self.path} was not sent: {self.problem}."


def find_memory_files(workspace: Path, home: Path) -> list[tuple[Path, Scope, Path]]:
    """The memory files that exist, in the order they are sent: ``(path, scope, tree)``; ``tree`` is the folder
    a symlink must stay in (``home/.claude`` for the user's file, else the repository root or the workspace).

    Only existing paths are listed (a symlink counts, even a broken one: reading says what is wrong).
    """
    workspace = Path(workspace).resolve()
    found: list[tuple[Path, Scope, Path]] = []
    user_tree = Path(home) / ".claude"
    if _exists(user_tree / "CLAUDE.md"):
        found.append((user_tree / "CLAUDE.md", "user", user_tree))
    top = git_root(workspace) or workspace
    folders = [workspace, *workspace.parents]
    for folder in reversed(folders[:folders.index(top) + 1] if top in folders else [workspace]):
        for name, scope in (("CLAUDE.md", "project"), ("CLAUDE.local.md", "local")):
            if _exists(folder / name):
                found.append((folder / name, scope, top))  # type: ignore[arg-type]
    return found


def nested_memory_files(workspace: Path, file: Path) -> list[tuple[Path, Scope, Path]]:
    """The memory files of the folders below ``workspace`` down to ``file``'s folder, farthest first, that
    exist: ``(path, scope, tree)`` as ``find_memory_files`` gives them (none for a file outside the workspace
    or in its root, whose files the run reads at its start)."""
    root = Path(workspace).resolve()
    folder = _key(file).parent
    if folder == root or not folder.is_relative_to(root):
        return []
    tree = git_root(root) or root
    folders = [folder, *folder.parents]
    found: list[tuple[Path, Scope, Path]] = []
    for each in reversed(folders[:folders.index(root)]):
        for name, scope in (("CLAUDE.md", "project"), ("CLAUDE.local.md", "local")):
            if _exists(each / name):
                found.append((each / name, scope, tree))  # type: ignore[arg-type]
    return found


def stamp(path: Path) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of ``path`` (following symlinks), or None when it is gone or unreadable."""
    try:
        info = Path(path).stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def read_memory_file(path: Path, scope: Scope, tree: Path, *, limit: int = MAX_MEMORY_BYTES) -> MemoryFile:
    """Read one memory file; never raises. ``tree``: the folder a symlink must resolve inside."""
    path = Path(path)
    now = stamp(path)
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        gone = "it is a symlink to nothing" if path.is_symlink() else "it no longer exists"
        return MemoryFile(path, scope, None, gone, now)
    if path.is_symlink() and not target.is_relative_to(Path(tree).resolve()):
        return MemoryFile(path, scope, None, f"it is a symlink to {target}, outside {tree}", now)
    if not target.is_file():
        return MemoryFile(path, scope, None, "it is not a regular file", now)
    try:
        size = target.stat().st_size
        if size > limit:
            return MemoryFile(path, scope, None, f"it is {size:,} bytes, over the {limit:,}-byte limit", now)
        data = target.read_bytes()
    except OSError as error:
        return MemoryFile(path, scope, None, f"it could not be read ({error.strerror or error})", now)
    if b"\0" in data:
        return MemoryFile(path, scope, None, "it is a binary file", now)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return MemoryFile(path, scope, None, f"it is not UTF-8 text (byte {error.start})", now)
    return MemoryFile(path, scope, text, None, now)


def read_memory_files(workspace: Path, home: Path, *, limit: int = MAX_MEMORY_BYTES) -> list[MemoryFile]:
    """Every memory file of ``workspace`` (and the user's in ``home``), read, in the order they are sent,
    each followed by what it imports (``read_with_imports``)."""
    out: list[MemoryFile] = []
    for path, scope, tree in find_memory_files(workspace, home):
        out += read_with_imports(path, scope, tree, limit=limit, seen={m.path for m in out})
    return out


def read_with_imports(path: Path, scope: Scope, tree: Path, *, limit: int = MAX_MEMORY_BYTES,
                      seen: set[Path] | None = None) -> list[MemoryFile]:
    """One memory file, then the files its ``@path`` lines import, depth first, to ``MAX_IMPORT_DEPTH``
    levels; never raises. ``seen``: paths already sent (an import of one is a cycle, not sent again)."""
    seen = set(seen or ())
    first = read_memory_file(path, scope, tree, limit=limit)
    out = [first]
    seen.add(_key(first.path))

    def follow(file: MemoryFile, depth: int) -> None:
        for target in imports_of(file):
            key = _key(target)
            if key in seen:
                out.append(MemoryFile(target, scope, None, "it is already included (an import cycle or a repeat)",
                                      stamp(target), file.path))
                continue
            seen.add(key)
            if depth >= MAX_IMPORT_DEPTH:
                out.append(MemoryFile(target, scope, None, f"it is more than {MAX_IMPORT_DEPTH} imports deep",
                                      stamp(target), file.path))
                continue
            if not _inside(target, tree):
                out.append(MemoryFile(target, scope, None, f"it is outside {tree}", stamp(target), file.path))
                continue
            imported = read_memory_file(target, scope, tree, limit=limit)
            out.append(MemoryFile(imported.path, scope, imported.text, imported.problem, imported.stamp, file.path))
            follow(imported, depth + 1)

    follow(first, 0)
    return out


def imports_of(file: MemoryFile) -> list[Path]:
    """The paths ``file``'s text imports: each line that is only ``@path`` (outside a ``` fence), taken
    relative to the file's folder (``~/`` is not expanded: a path is the workspace's business)."""
    if file.text is None:
        return []
    found, fenced = [], False
    for line in file.text.splitlines():
        bare = line.strip()
        if bare.startswith("```") or bare.startswith("~~~"):
            fenced = not fenced
            continue
        if fenced or len(bare) < 2 or not bare.startswith("@") or any(c.isspace() for c in bare):
            continue
        target = Path(bare[1:])
        found.append(Path(os.path.normpath(target if target.is_absolute() else file.path.parent / target)))
    return found


def _key(path: Path) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(path)


def _inside(path: Path, tree: Path) -> bool:
    try:
        return _key(path).is_relative_to(Path(tree).resolve())
    except (OSError, RuntimeError, ValueError):
        return False


def memory_reminder(files: list[MemoryFile]) -> str | None:
    """The ``<system-reminder>`` text that carries the memory files' text (None when none is sent).

    Each file under a heading with its path and scope; a file that is not sent is named with the reason,
    so the model knows the instructions exist.
    """
    if not files:
        return None
    parts = ["<system-reminder>",
             "Memory files (CLAUDE.md) found for this project. They hold instructions the user keeps for you; "
             "follow them where they apply, and let the user's own messages override them."]
    for file in files:
        parts.append("")
        origin = f", imported by {file.imported_by}" if file.imported_by is not None else ""
        parts.append(f"## {file.path} ({_SAID[file.scope]}{origin})")
        parts.append(file.text.rstrip("\n") if file.text is not None else f"(not included: {file.problem})")
    parts.append("</system-reminder>")
    return "\n".join(parts)


def nested_memory_text(files: list[MemoryFile]) -> str:
    """What goes inside the result of the call that first used a file in a folder with memory files
    (``Attachments.nested_memory``; dreamloop's wording): each file under a heading, as ``memory_reminder``."""
    parts = ["Memory files of the folder of the file you just used. They hold instructions the user keeps for "
             "that part of the project; follow them there."]
    for file in files:
        origin = f", imported by {file.imported_by}" if file.imported_by is not None else ""
        parts.append("")
        parts.append(f"## {file.path} ({_SAID[file.scope]}{origin})")
        parts.append(file.text.rstrip("\n") if file.text is not None else f"(not included: {file.problem})")
    return "\n".join(parts)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()
