"""What the model has seen of each file in one run: Write and Edit refuse a file it has not seen as it is.

A person saves an edit between the model's Read and its Write: without this record the Write overwrites it
silently. ``FileState`` keeps, for each file (by resolved path), the stamp (``mtime_ns``, size, a digest) the file had
when the model last saw all of it as it is: its Read, or its own Write or Edit of a file it had seen.
``QueryParams.file_state`` turns it on (the loop gives one ``FileState`` to every tool call of the run,
``ToolUseContext.file_state``); off, the file tools check nothing.

``check(tool, seen, now)`` is the pure decision, given the stamp the model saw (None: never) and the
file's stamp now (None: it does not exist):

* a file that does not exist may be written (Write creates it);
* a Write of an existing file never seen, or changed since it was seen, is refused: ``"not_read"`` or
  ``"modified"``;
* an Edit of a file never seen is refused (``"not_read"``); an Edit of a file changed since it was seen is
  applied when its old text still matches (``edit_after_change`` = ``"apply"``, as Claude Code 2.1.332 did
  in ``edit_after_change``) or refused (``"refuse"``).

An Edit applied to a file changed since it was seen does not make the file seen: the model saw neither the
person's change nor the result, so a later Write is refused until the file is read again (the person's change
survives; ``edit_after_change_then_write``). Every wording is dreamloop's own.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["EditAfterChange", "FileState", "Refusal", "check", "refusal_text", "stamp_of"]

Refusal = Literal["not_read", "modified"]
EditAfterChange = Literal["apply", "refuse"]

Stamp = tuple[int, int, bytes]

DIGEST_MAX_BYTES = 8 * 1024 * 1024
"""A file up to this size is stamped with a digest of its content too: a change of the same size within the
file system's clock tick (a few milliseconds) still counts; a larger one by ``mtime_ns`` and size alone."""


def stamp_of(path: Path) -> Stamp | None:
    """(``mtime_ns``, size, digest) of ``path``, or None when it does not exist (or cannot be read)."""
    try:
        info = os.stat(path)
        digest = b""
        if info.st_size <= DIGEST_MAX_BYTES:
            with open(path, "rb") as f:
                digest = hashlib.blake2b(f.read(), digest_size=16).digest()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, digest


def check(tool: str, seen: Stamp | None, now: Stamp | None, *,
          edit_after_change: EditAfterChange = "apply") -> Refusal | None:
    """Whether ``tool`` ("Write" or "Edit") may change a file the model saw as ``seen`` that is ``now`` on disk:
    None (go ahead) or why not."""
    if now is None:
        return None  # a new file (an Edit of it fails on its own: the file does not exist)
    if seen is None:
        return "not_read"
    if seen == now:
        return None
    if tool == "Edit" and edit_after_change == "apply":
        return None
    return "modified"


def refusal_text(refusal: Refusal, shown: str) -> str:
    """The ``is_error`` result's words for ``refusal`` of the file shown as ``shown``."""
    if refusal == "not_read":
        return f"{shown} has not been read yet in this conversation. Read it first, then change it."
    return (f"{shown} was modified since it was last read (by a command or a person). Read it again before "
            "changing it, so that no change is lost.")


@dataclass
class FileState:
    """One run's record of what the model has seen of each file: resolved path → stamp when seen.

    ``edit_after_change``: what an Edit of a file changed since it was seen does (``check``).
    """

    edit_after_change: EditAfterChange = "apply"
    seen: dict[Path, Stamp] = field(default_factory=dict)

    def refusal(self, tool: str, path: Path) -> Refusal | None:
        """``check`` for ``tool`` on ``path`` as it is now."""
        return check(tool, self.seen.get(path), stamp_of(path), edit_after_change=self.edit_after_change)

    def saw(self, path: Path) -> None:
        """The model has just seen ``path`` as it is (a Read, or its own change of a file it had seen)."""
        now = stamp_of(path)
        if now is None:
            self.seen.pop(path, None)
        else:
            self.seen[path] = now

    def current(self, path: Path) -> bool:
        """Whether the model has seen ``path`` as it is now."""
        return path in self.seen and self.seen[path] == stamp_of(path)

    def after_change(self, path: Path, was_current: bool) -> None:
        """After the model's own Write or Edit of ``path``: seen as it is now when the model knew all of it
        (``was_current``: it had seen the file as it was just before, or it wrote the whole file); otherwise
        the stamp it saw stays, which no longer matches: "modified since read" until it is read again."""
        if was_current:
            self.saw(path)
