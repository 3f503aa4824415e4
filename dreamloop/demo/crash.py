"""A session that gets killed: a real process, stopped at a named point of its run and hard-killed.

``crash_session(transcript, point)`` runs one ``QueryEngine`` prompt with a transcript in a
child process (``python -m dreamloop.demo.crash POINT TRANSCRIPT``) on an offline script whose
first response asks for three tool calls. When the run reaches ``point`` the child prints
``at POINT <finished call ids it saw>`` and stops right there; the parent kills it on reading
that line (SIGKILL; TerminateProcess on Windows), so the transcript holds exactly what a crash
at that point leaves. For chapter 10 and the crash tests; what a resume makes of it is
``QueryEngine.resume``'s business (``inspect_transcript`` shows both). Knows nothing about
the transcript format.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from ..deps import QueryDeps, counting_uuids
from ..engine import QueryEngine
from ..model import offline
from ..scripts import Turn, reply, tool_use
from ..tools import tool

__all__ = ["CALLS", "POINTS", "TOOLS", "crash_session", "run_until"]


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file (the path "slow" never finishes)."""
    if input.path == "slow":
        await asyncio.Event().wait()
    return f"contents of {input.path}"


@tool(PathInput, name="Note", read_only=True, concurrency_safe=False)
async def note(input: PathInput) -> str:
    """Write a note (runs alone: a batch of its own)."""
    return f"noted {input.path}"


TOOLS = [read, note]
"""The session's tools: ``Read`` (parallel-safe; the path ``"slow"`` never finishes) and ``Note`` (runs alone)."""

CALLS = {
    "three reads": [("T1", "Read", "a"), ("T2", "Read", "b"), ("T3", "Read", "c")],
    "one slow": [("T1", "Read", "a"), ("T2", "Read", "slow"), ("T3", "Read", "c")],
    "reads then a note": [("T1", "Read", "a"), ("T2", "Read", "b"), ("T3", "Note", "n")],
}
"""The first response's tool calls ``(id, tool, path)`` for each shape of batch."""

_SEEN: list[str] = []  # ids of the finished calls whose event the caller received


def _done(event: Any) -> bool:
    return event.type == "progress" and event.data.get("stage") == "done"


def _started(tool_use_id: str) -> Callable[[Any], bool]:
    return lambda e: e.type == "progress" and e.data.get("stage") == "started" and e.tool_use_id == tool_use_id


def _nth_done(n: int) -> Callable[[Any], bool]:
    return lambda e: _done(e) and len(_SEEN) == n


def _block_start(tool_use_id: str) -> Callable[[Any], bool]:
    return lambda e: (e.type == "stream_event" and e.event.type == "content_block_start"
                      and getattr(e.event.content_block, "id", None) == tool_use_id)


POINTS: dict[str, tuple[str, Callable[[Any], bool] | None, tuple[bytes, int] | None]] = {
    "mid_stream": ("three reads", _block_start("T2"), None),
    "mid_batch": ("one slow", _nth_done(2), None),
    "between_batches": ("reads then a note", _started("T3"), None),
    "after_results_saved": ("three reads", _nth_done(3), None),
    "between_turns": ("three reads", lambda e: e.type == "stream_request_start" and e.turn_count == 2, None),
    "torn_first_write": ("three reads", None, (b'"type": "user"', 1)),
    "torn_result_record": ("three reads", None, (b'"stage": "done"', 3)),
    "torn_results_message": ("three reads", None, (b'"role": "user", "content": [{"type": "tool_result"', 1)),
}
"""Where a session can be killed: ``point -> (CALLS key, stop when the caller receives an event
this is true of, or None; tear the nth transcript write holding these bytes, or None)``.

* ``mid_stream``: while the first response streams (its T2 block has started).
* ``mid_batch``: T1 and T3 finished, T2 (``"slow"``) still runs (field case F11).
* ``between_batches``: T1 and T2 (one parallel batch) finished, T3 (``Note``) just started.
* ``after_results_saved``: all three results written, the results message not yet.
* ``between_turns``: the results message written, the second request about to start.
* ``torn_first_write`` / ``torn_result_record`` / ``torn_results_message``: killed halfway
  through writing the prompt / T3's finished-call record / the results message.
* ``resume_killed`` (not in this table): ``QueryEngine.resume`` killed halfway through
  writing its repair.
"""


def _hold(point: str) -> None:
    """Say where we are, then wait to be killed (exit 3 if nobody does within two minutes)."""
    print(f"at {point} {','.join(_SEEN)}", flush=True)
    time.sleep(120)
    os._exit(3)


def _tear_writes(point: str, needle: bytes, nth: int) -> None:
    """Make the nth ``os.write`` holding ``needle`` stop halfway, as a kill during write() leaves it."""
    real_write, count = os.write, 0

    def write(fd: int, data: Any) -> int:
        nonlocal count
        if needle in bytes(data):
            count += 1
            if count == nth:
                real_write(fd, bytes(data)[: len(data) // 2])
                _hold(point)
        return real_write(fd, data)

    os.write = write


def _script(calls: str) -> list[Turn]:
    uses = [tool_use(name, {"path": path}, id=id) for id, name, path in CALLS[calls]]
    return [reply("Working on it.", *uses, chunk_size=4), reply("All done.")]


async def run_until(point: str, transcript: str | Path) -> None:
    """Run the session in this process until ``point``, then hold there until killed.

    For a kernel that is to die mid-run (``await run_until("mid_batch", path)`` in a cell,
    then restart the kernel); ``crash_session`` runs it in a child process instead.
    """
    calls, stop, tear = POINTS[point]
    if tear:
        _tear_writes(point, *tear)
    engine = QueryEngine(model=offline(_script(calls)), tools=TOOLS, transcript=transcript,
                         deps=QueryDeps(uuid=counting_uuids()))
    async for event in engine.submit_message("Read a, b and c."):
        if _done(event):
            _SEEN.append(event.tool_use_id)
        if stop and stop(event):
            _hold(point)


def _resume_until_killed(transcript: str) -> None:
    _tear_writes("resume_killed", b'"resume_repair"', 1)
    QueryEngine.resume(transcript, model=offline([]), tools=TOOLS, deps=QueryDeps(uuid=counting_uuids(500)))


def crash_session(transcript: str | Path, point: str = "mid_batch", *, timeout: float = 120) -> list[str]:
    """Run the session in a child process, kill it hard at ``point``; return the finished calls it saw.

    ``point``: a ``POINTS`` key or ``"resume_killed"`` (resume ``transcript`` and die while
    writing the repair). Returns the ids of the calls whose finished event the session had
    received when it died (``["T1", "T3"]`` for ``mid_batch``). Raises ``RuntimeError`` if the
    child did not reach ``point`` within ``timeout`` seconds (with its stderr) or was not
    killed by the kill.
    """
    if point not in POINTS and point != "resume_killed":
        raise ValueError(f"unknown point {point!r}: one of {', '.join([*POINTS, 'resume_killed'])}")
    child = subprocess.Popen([sys.executable, "-m", "dreamloop.demo.crash", point, str(transcript)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(timeout, child.kill)  # a child that never gets there ends the wait
    watchdog.start()
    try:
        line = child.stdout.readline()  # the marker, or "" if the child ended without one
        if not line.startswith(f"at {point}"):
            child.kill()
            _, err = child.communicate()
            raise RuntimeError(f"the session never reached {point}: {line!r}\n{err}")
        child.kill()
        code = child.wait(timeout=60)
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()
    if os.name == "posix" and code != -signal.SIGKILL:
        raise RuntimeError(f"the session ended with code {code}, not by the kill")
    return [id for id in (line.split() + [""])[2].split(",") if id]


if __name__ == "__main__":
    where, path = sys.argv[1], sys.argv[2]
    if where == "resume_killed":
        _resume_until_killed(path)
    else:
        asyncio.run(run_until(where, path))
    print("finished without being stopped", flush=True)
