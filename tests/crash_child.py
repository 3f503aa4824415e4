"""A session that gets killed: ``tests/test_crash.py`` runs this in a child process and SIGKILLs it.

    python tests/crash_child.py POINT TRANSCRIPT

Runs one ``QueryEngine`` prompt, with a transcript, on an offline script whose first response
asks for three tool calls. When the run reaches POINT (a ``POINTS`` entry) the process prints
``at POINT <finished call ids it saw>`` and stops right there; the parent kills it on seeing
that line. A call on the path ``"slow"`` never finishes, so nothing moves after the marker
either way. ``POINT`` ``resume_killed`` instead resumes TRANSCRIPT and is killed in the
middle of writing its repair. Not a test module: pytest does not collect it; the tests import
``TOOLS`` and ``CALLS`` from it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any, Callable

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids


class PathInput(BaseModel):
    path: str


@dl.tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file (the path "slow" never finishes)."""
    if input.path == "slow":
        await asyncio.Event().wait()
    return f"contents of {input.path}"


@dl.tool(PathInput, name="Note", read_only=True, concurrency_safe=False)
async def note(input: PathInput) -> str:
    """Write a note (runs alone: a batch of its own)."""
    return f"noted {input.path}"


TOOLS = [read, note]

CALLS = {  # the first response's tool calls, per shape of batch
    "three reads": [("T1", "Read", "a"), ("T2", "Read", "b"), ("T3", "Read", "c")],
    "one slow": [("T1", "Read", "a"), ("T2", "Read", "slow"), ("T3", "Read", "c")],
    "reads then a note": [("T1", "Read", "a"), ("T2", "Read", "b"), ("T3", "Note", "n")],
}

SEEN: list[str] = []  # ids of the finished calls whose event the caller received


def _done(event: Any) -> bool:
    return event.type == "progress" and event.data.get("stage") == "done"


def _started(tool_use_id: str) -> Callable[[Any], bool]:
    return lambda e: e.type == "progress" and e.data.get("stage") == "started" and e.tool_use_id == tool_use_id


def _nth_done(n: int) -> Callable[[Any], bool]:
    return lambda e: _done(e) and len(SEEN) == n


def _block_start(tool_use_id: str) -> Callable[[Any], bool]:
    return lambda e: (e.type == "stream_event" and e.event.type == "content_block_start"
                      and getattr(e.event.content_block, "id", None) == tool_use_id)


# POINT -> (calls, stop when the caller receives this event | tear the transcript write holding these bytes)
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


def hold(point: str) -> None:
    """Say where we are, then wait to be killed (exit 3 if nobody does: the test then fails)."""
    print(f"at {point} {','.join(SEEN)}", flush=True)
    time.sleep(120)
    os._exit(3)


def tear_write(point: str, needle: bytes, nth: int) -> None:
    """Make the nth transcript write holding ``needle`` stop halfway, as a kill during write() leaves it."""
    real_write, count = os.write, 0

    def write(fd: int, data: Any) -> int:
        nonlocal count
        if needle in bytes(data):
            count += 1
            if count == nth:
                real_write(fd, bytes(data)[: len(data) // 2])
                hold(point)
        return real_write(fd, data)

    os.write = write


def script(calls: str) -> list[S.Turn]:
    uses = [S.tool_use(name, {"path": path}, id=id) for id, name, path in CALLS[calls]]
    return [S.reply("Working on it.", *uses, chunk_size=4), S.reply("All done.")]


async def run(point: str, transcript: str) -> None:
    """Run the session until ``point`` (then hold), or to the end."""
    calls, stop, tear = POINTS[point]
    if tear:
        tear_write(point, *tear)
    engine = dl.QueryEngine(model=dl.offline(script(calls)), tools=TOOLS, transcript=transcript,
                            deps=QueryDeps(uuid=counting_uuids()))
    async for event in engine.submit_message("Read a, b and c."):
        if _done(event):
            SEEN.append(event.tool_use_id)
        if stop and stop(event):
            hold(point)


def resume(transcript: str) -> None:
    """Resume ``transcript``, killed halfway through writing the repair."""
    tear_write("resume_killed", b'"resume_repair"', 1)
    dl.QueryEngine.resume(transcript, model=dl.offline([]), tools=TOOLS, deps=QueryDeps(uuid=counting_uuids(500)))


if __name__ == "__main__":
    point, path = sys.argv[1], sys.argv[2]
    if point == "resume_killed":
        resume(path)
    else:
        asyncio.run(run(point, path))
    print("finished without being stopped", flush=True)
