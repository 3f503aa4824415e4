"""Commands as child processes: ``bash -c COMMAND`` in its own process group, its output read as it comes.

Owns the one way dreamloop runs a command (the Bash tool and command hooks; next, commands that outlive
one call): start it (``start_process``: a start that a cancellation can neither hang nor leave a process
group behind), feed its stdin, capture each output stream up to a limit while it runs (the rest counted),
wait for it with a timeout, and end it: the whole group killed when the command ends, times out or is
cancelled (background jobs never outlive it), what is left of the output drained, the process reaped. The
output pipes are dreamloop's, not the subprocess transport's, so a process that left the group (``setsid``)
and keeps them open is cut off when the command ends, and named. It knows nothing about tools, hooks,
permissions or what the output means.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from .base import cap_output

__all__ = ["DRAIN_S", "Capture", "CommandProcess", "Finished", "TailCapture", "run_command", "start_process"]

DRAIN_S = 2.0
"""Seconds to wait for the rest of the output, and then for the exit, once the process group is killed."""

_POLL_S = 0.05  # how often to check whether bash exited while its output pipes stay open


@dataclass(frozen=True)
class Finished:
    """How a command ended (``run_command``).

    * ``code``: its exit code; None if it timed out (its group was killed).
    * ``stdout``, ``stderr``: what it wrote, each kept to the limit (``Capture.text``); ``stderr`` is ""
      when it was merged into ``stdout``.
    * ``left_running``: a note naming the processes that left the group and still held the output open
      when the command ended (they are not stopped; what they write later is not read); "" if none.
    """

    code: int | None
    stdout: str
    stderr: str = ""
    left_running: str = ""


class Capture:
    """The first ``limit`` characters of a byte stream, decoded as UTF-8 as they arrive; counts the rest.

    ``text()`` may be read at any time, while the stream is still open too.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.omitted = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def drain(self, stream: asyncio.StreamReader) -> None:
        """Read ``stream`` to its end."""
        while chunk := await stream.read(65536):
            self._add(self._decoder.decode(chunk))
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        room = max(self.limit - self.size, 0)
        kept = text[:room]
        self.parts.append(kept)
        self.size += len(kept)
        self.omitted += len(text) - len(kept)

    def text(self) -> str:
        """What was kept, with ``[output truncated] N more characters not shown`` if anything was not."""
        return cap_output("".join(self.parts), self.limit, omitted=self.omitted)


class TailCapture(Capture):
    """The last ``limit`` characters of a byte stream (a background command's: what it wrote last matters; dreamloop's
    choice); counts what was dropped from the front. However much is written, at most ``2 * limit`` is held."""

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size > 2 * self.limit:
            kept = "".join(self.parts)[-self.limit:]
            self.omitted += self.size - len(kept)
            self.parts, self.size = [kept], len(kept)

    def text(self) -> str:
        """What was kept, after ``[N earlier characters not shown]`` if anything was dropped."""
        joined = "".join(self.parts)
        kept = joined[-self.limit:]
        omitted = self.omitted + len(joined) - len(kept)
        return f"[{omitted} earlier characters not shown]\n{kept}" if omitted else kept


class CommandProcess:
    """``bash -c COMMAND`` running in its own process group, its output captured as it arrives.

    ``await CommandProcess.start(...)`` starts one; ``stdout`` / ``stderr`` (``Capture``, ``stderr`` None when
    merged) hold what it wrote so far; ``await wait(timeout_s)`` waits for its exit; ``await close()`` ends it
    (kills its group, drains, reaps; say ``drain=False`` when there is no time to wait for the output). Whoever
    starts one must close it, however it ends: ``run_command`` is the whole life of a command within one call;
    a command kept beyond one call holds its ``CommandProcess`` until its owner ends.
    """

    def __init__(self, proc: asyncio.subprocess.Process, outputs: list[tuple[int, Capture]],
                 feed: int | None = None) -> None:
        self.proc = proc
        self.stdout = outputs[0][1]
        self.stderr = outputs[1][1] if len(outputs) > 1 else None
        self._outputs = outputs
        self._feed_fd = feed
        self._fds = [fd for fd, _ in outputs] + ([feed] if feed is not None else [])  # ours to close
        self._output_files: list[Any] = []  # their pipe transports' (``_handed_over``)
        self._pipes: list[asyncio.BaseTransport] = []
        self._readers: list[asyncio.Task] = []
        self._feeder: asyncio.Task | None = None
        self._closed = False

    @classmethod
    async def start(cls, command: str, *, cwd: str | Path, env: Mapping[str, str], limit: int,
                    stdin: bytes | None = None, merge_stderr: bool = True, tail: bool = False) -> "CommandProcess":
        """Start ``/bin/bash -c command`` in ``cwd`` with ``env``; each output stream kept to ``limit``
        characters (its head; ``tail=True``: its last characters, ``TailCapture``). ``stdin``: the bytes fed to it (then closed), or None (``/dev/null``); ``merge_stderr``:
        stderr interleaved with stdout as written (else captured on its own).

        Raises ``OSError`` if it cannot start (no bash, the directory is gone); cancelled while starting, the
        group is killed before ``CancelledError`` propagates.
        """
        pipes = [os.pipe() for _ in range(1 if merge_stderr else 2)]
        feed = os.pipe() if stdin is not None else None
        mine = [read for read, _ in pipes] + ([feed[1]] if feed else [])
        try:
            proc = await start_process(
                "/bin/bash", "-c", command, cwd=cwd, env=dict(env),
                stdin=feed[0] if feed else asyncio.subprocess.DEVNULL,
                stdout=pipes[0][1], stderr=asyncio.subprocess.STDOUT if merge_stderr else pipes[1][1],
                start_new_session=True)  # its own process group, so all of it can be killed  # fmt: skip
        except BaseException:
            for fd in mine:
                os.close(fd)
            raise
        finally:
            for fd in [write for _, write in pipes] + ([feed[0]] if feed else []):
                os.close(fd)  # the child's ends: it holds them now
        kind = TailCapture if tail else Capture
        child = cls(proc, [(read, kind(limit)) for read, _ in pipes], feed[1] if feed else None)
        try:
            await child._connect(stdin or b"")
        except BaseException:
            await child.close(drain=False)
            raise
        return child

    async def _connect(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        for fd, capture in self._outputs:
            stream = asyncio.StreamReader()
            self._readers.append(asyncio.ensure_future(capture.drain(stream)))
            file = self._handed_over(fd, "rb")
            self._output_files.append(file)
            pipe, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), file)
            self._pipes.append(pipe)
        if self._feed_fd is not None:
            self._feeder = asyncio.ensure_future(self._feed(self._feed_fd, data))

    def _handed_over(self, fd: int, mode: str) -> Any:
        """``fd`` as a file for a pipe transport, which owns it from now on (it closes it, even when its
        connection is cancelled): it must never be closed here, or a callback the transport scheduled
        would meet a closed (or reused) descriptor."""
        self._fds.remove(fd)
        return os.fdopen(fd, mode, buffering=0)

    async def _feed(self, fd: int, data: bytes) -> None:
        """Write ``data`` to stdin and close it; a command that does not read it is fine."""
        loop = asyncio.get_running_loop()
        protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
        transport, _ = await loop.connect_write_pipe(lambda: protocol, self._handed_over(fd, "wb"))
        self._pipes.append(transport)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            writer.write(data)
            await writer.drain()
        transport.close()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        """Its exit code, once it has exited (None while it runs)."""
        return self.proc.returncode

    @property
    def output_closed(self) -> bool:
        """Every output stream reached its end (the command and all it started closed them)."""
        return all(reader.done() for reader in self._readers)

    async def wait(self, timeout_s: float) -> bool:
        """Wait until bash exits (True) or ``timeout_s`` seconds pass (False); the group is not touched.

        While its output is open, ``returncode`` is polled: a background job holding the pipes must not make
        a command that exited look as if it still ran.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.proc.returncode is None and not self.output_closed:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            await asyncio.wait(set(self._readers), timeout=min(_POLL_S, remaining),
                               return_when=asyncio.ALL_COMPLETED)
        if self.proc.returncode is None:  # output closed; the exit follows
            try:
                await asyncio.wait_for(self.proc.wait(), max(deadline - loop.time(), 0))
            except TimeoutError:
                return False
        return True

    async def close(self, *, drain: bool = True) -> str:
        """End it: kill its process group, read what is left of the output (at most ``DRAIN_S``; not with
        ``drain=False``), reap it (at most ``DRAIN_S``) and cut off the pipes. Returns the note naming what
        left the group holding the output open ("" if nothing did). Closing twice does nothing more."""
        if self._closed:
            return ""
        self._closed = True
        _kill_group(self.proc)  # the command on a timeout or a cancel; background jobs it left behind otherwise
        left = ""
        try:
            if drain and self._readers:
                await asyncio.wait(set(self._readers), timeout=DRAIN_S)
                if not self.output_closed:
                    left = _left_running(self._output_files[0].fileno())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), DRAIN_S)
        finally:
            tasks = [*self._readers, *([self._feeder] if self._feeder else [])]
            for task in tasks:
                task.cancel()
            for pipe in self._pipes:
                pipe.close()  # a process that left the group may still hold the other end: cut it off
            for fd in self._fds:  # never handed to a transport (the start was cancelled first)
                os.close(fd)
            self._fds = []
            if self.proc.returncode is None:  # cancelled while reaping: take the group down once more
                _kill_group(self.proc)
            await asyncio.gather(*tasks, return_exceptions=True)  # none of its tasks outlives it
        return left


async def run_command(command: str, *, cwd: str | Path, env: Mapping[str, str], timeout_s: float, limit: int,
                      stdin: bytes | None = None, merge_stderr: bool = True) -> Finished:
    """Run ``/bin/bash -c command`` to its end, or until ``timeout_s``; see ``CommandProcess.start``.

    Its process group is killed when bash exits (background jobs don't outlive it), on the timeout and on
    cancellation (before ``CancelledError`` propagates). Raises ``OSError`` if it cannot start.
    """
    child = await CommandProcess.start(command, cwd=cwd, env=env, limit=limit, stdin=stdin,
                                       merge_stderr=merge_stderr)
    try:
        exited = await child.wait(timeout_s)
        left = await child.close()
    except BaseException:  # cancelled (or failed) while running: take the group down
        await child.close(drain=False)
        raise
    return Finished(child.returncode if exited else None, child.stdout.text(),
                    child.stderr.text() if child.stderr else "", left)


async def start_process(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
    """``create_subprocess_exec`` that a cancellation can neither hang nor leave a process group behind.

    The process runs (and may fork) before ``create_subprocess_exec`` returns. Cancelling it in
    that window makes asyncio kill bash alone, leaking its children, and on CPython 3.11 it can
    wait for ever: the cancelled creation closes the transport and waits for pipes it had not yet
    connected, which only close when every process holding them (a child of bash's) has exited.
    So the start is shielded from the cancellation; a cancelled start waits for it to finish (an
    uncancelled start finishes at once: it is cancelling it that can hang), however often it is
    cancelled meanwhile, kills the whole group, and re-raises. Nothing of it outlives the caller:
    left running, the start would be cancelled by ``asyncio.run``'s shutdown, which then hangs.
    """
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(*args, **kwargs))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        while not starting.done():
            with contextlib.suppress(asyncio.CancelledError):  # re-raised below, once the start is over
                await asyncio.wait({starting})
        if starting.cancelled() or starting.exception() is not None:
            raise
        proc = starting.result()
        _kill_group(proc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), DRAIN_S)
        raise


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _left_running(read_end: int) -> str:
    """A note naming the processes that still hold the output pipe (they left the process group)."""
    holders = []
    with contextlib.suppress(OSError):
        pipe = f"pipe:[{os.fstat(read_end).st_ino}]"
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") == pipe for fd in os.listdir(f"/proc/{pid}/fd")):
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        argv = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                    holders.append(f"pid {pid} ({argv})")
    who = ", ".join(holders) if holders else "a process"
    return (f"[note] the command left {who} running outside its process group (setsid, nohup...), still holding "
            "its output open; it was not stopped, and its further output is not shown.")
