"""The kit's temporary folders: one root per user, and nothing left behind by a process that was killed.

Chapters, the demo and the CLI work on copies of the sample project in
temporary folders. ``scratch_dir()`` makes each one under a single root per
user, ``$TMPDIR/dreamloop-<uid>`` (mode 0700), in a subfolder that belongs to
the process that made it. The names have a fixed width (uid and pid
zero-padded), so a path's length, and with it the token count of a request
that quotes it, is the same for every user and process. The process holds a lock (``flock``) on its own lock
file for as long as it lives; the operating system releases the lock however
the process ends (a normal exit, SIGKILL, a hub stopping a server, an nbval
run killing its kernel). A normal exit removes the process's folders at once;
whatever a killed process left is removed the next time any process of the
kit makes a folder (``remove_stale()``), because its lock is free.
This module knows nothing about what goes in the folders.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import stat
import tempfile
import threading
from pathlib import Path

try:  # POSIX; elsewhere folders are removed at a normal exit only
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["remove_stale", "scratch_dir", "scratch_root"]

_LOCK_SUFFIX = ".lock"
_lock = threading.Lock()
_owners: dict[Path, _Owner] = {}  # this process's subfolder under each root it used (TMPDIR can change)


def scratch_root() -> Path:
    """The user's root for the kit's temporary folders: ``<tempdir>/dreamloop-<uid, 10 digits>``, made (mode 0700).

    ``<tempdir>`` is Python's ``tempfile.gettempdir()`` (``$TMPDIR``, else
    ``/tmp``). Raises ``PermissionError`` if the path exists but is not a
    private directory of this user (a link, another user's, readable by others):
    set ``TMPDIR`` to a directory of your own then.
    """
    user = f"{os.getuid():010d}" if hasattr(os, "getuid") else os.getlogin()
    root = Path(tempfile.gettempdir()) / f"dreamloop-{user}"
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = root.lstat()
    private = stat.S_ISDIR(info.st_mode) and not info.st_mode & 0o077
    if not private or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise PermissionError(f"{root} is not a private directory of this user (a link, another user's, or open to "
                              "others), so the kit will not put its temporary folders there; set TMPDIR to a "
                              "directory of your own")
    return root


def scratch_dir(prefix: str = "") -> Path:
    """A new empty folder for this process (``<root>/<process>/<prefix><random>``), resolved; removed when it ends.

    Removed at a normal exit of the process; after a crash or a kill, by the
    next ``scratch_dir()`` of any process of this user (``remove_stale()`` runs
    first, every time). ``prefix`` names the folder for a person reading
    ``ls`` (``"ch04-"``). Threads may call it at once.

    >>> folder = scratch_dir("demo-")
    >>> folder.name.startswith("demo-") and not any(folder.iterdir())
    True
    """
    root = scratch_root()
    remove_stale()
    owner = _this_process(root)
    while True:
        folder = owner.folder / f"{prefix}{secrets.token_hex(4)}"
        try:
            folder.mkdir(mode=0o700)
            return folder.resolve()
        except FileExistsError:
            continue


def remove_stale() -> list[Path]:
    """Remove the folders of processes that ended without removing them (killed, crashed); return what went.

    A process's folders are stale when nothing holds its lock, which only
    happens once the process is gone. Safe to call from any number of
    processes at once. Without ``fcntl`` (Windows) it removes nothing.
    """
    if fcntl is None:  # pragma: no cover
        return []
    root = scratch_root()
    removed = []
    for lock_path in sorted(root.glob(f"*{_LOCK_SUFFIX}")):
        name = lock_path.name[: -len(_LOCK_SUFFIX)]
        if any(owner.name == name for owner in _owners.values()):
            continue
        try:
            handle = os.open(lock_path, os.O_RDWR)
        except FileNotFoundError:  # another process is removing it
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # its process is alive (or another cleaner has it)
            os.close(handle)
            continue
        try:
            folder = root / name
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
            lock_path.unlink(missing_ok=True)
        finally:
            os.close(handle)
    return removed


class _Owner:
    """This process's subfolder and the lock that says it is alive (held until the process ends)."""

    def __init__(self, root: Path) -> None:
        self.pid = os.getpid()
        self.name = f"{self.pid:07d}-{secrets.token_hex(4)}"  # pid_max is at most 4194304: 7 digits
        self.folder = root / self.name
        self.lock_path = root / f"{self.name}{_LOCK_SUFFIX}"
        # Locked before it gets its name, so no cleaner ever sees it unlocked.
        hidden = root / f".{self.name}{_LOCK_SUFFIX}.new"
        self._handle = os.open(hidden, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        if fcntl is not None:
            fcntl.flock(self._handle, fcntl.LOCK_EX)
        os.replace(hidden, self.lock_path)
        self.folder.mkdir(mode=0o700)
        atexit.register(self.remove)

    def remove(self) -> None:
        """At a normal exit: remove this process's folders and its lock file (not in a forked child)."""
        if os.getpid() != self.pid:
            return
        shutil.rmtree(self.folder, ignore_errors=True)
        self.lock_path.unlink(missing_ok=True)
        os.close(self._handle)


def _this_process(root: Path) -> _Owner:
    with _lock:
        owner = _owners.get(root)
        if owner is None or owner.pid != os.getpid():  # first use, or a forked child making its own
            owner = _owners[root] = _Owner(root)
        return owner
