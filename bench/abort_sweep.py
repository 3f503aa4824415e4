"""The abort swept over a command hook's spawn window: every run must end in a Terminal within 5 s (issue 24, item 1).

A ``pre_tool_use`` command hook is being started (``create_subprocess_exec``) for a few event-loop
iterations after the call's ``started`` progress. The abort (``run.abort()``, the notebook's Stop)
fires k iterations after that progress, k = 0 .. ``WINDOW`` - 1, so every point of the spawn window
is hit, with streaming tool execution off and on, for a hook that exits at once and one whose shell
has a child holding its pipes (``sleep 30; true``: on CPython 3.11 a cancelled spawn waited for
that child). A third shape fails the stream (a dropped connection) while the call starts its hook.

Run: ``.venv/bin/python bench/abort_sweep.py [ROUNDS]`` (default 12 rounds: 12 x 3 shapes x 2 modes x
``WINDOW`` = 576 runs). Prints runs, hangs and the Terminals; exits 1 on a hang.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.hooks import CommandHook, Hooks
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool

WINDOW = 8  # event-loop iterations from the call's `started` progress past the end of the hook's spawn
DEADLINE_S = 5.0  # a run must end this soon after the abort
COMMANDS = {"exits at once": "true", "child holds the pipes": "sleep 30; true"}


class _Path(BaseModel):
    path: str


@tool(_Path, name="Read", read_only=True)
async def _read(input: _Path) -> str:
    """Read a file."""
    return "contents"


def _script(shape: str) -> list:
    call = S.tool_use("Read", {"path": "a"}, id="T1")
    if shape == "stream fails":  # the tool_use block completes, then the connection drops
        return [S.disconnect("r", call, after_events=6), S.reply("ok")]
    return [S.reply("r", call), S.reply("ok")]


async def one_run(k: int, command: str, *, streaming: bool, shape: str = "plain") -> tuple[str | None, float]:
    """(the Terminal's reason, or None if the run hung; seconds from the abort to the end)."""
    model = dl.offline(_script(shape))
    hooks = Hooks(timeout=60).add("pre_tool_use", CommandHook(command))
    run = query(QueryParams(messages="go", model=model, tools=[_read], hooks=hooks,
                            streaming_tool_execution=streaming))
    fired: list[float] = []

    async def abort_after(iterations: int) -> None:
        for _ in range(iterations):
            await asyncio.sleep(0)
        fired.append(time.monotonic())
        run.abort("stop button")

    async def drain() -> None:
        async for event in run:
            if event.type == "progress" and event.data.get("stage") == "started" and not fired:
                asyncio.ensure_future(abort_after(k))

    task = asyncio.ensure_future(drain())
    done, _ = await asyncio.wait({task}, timeout=DEADLINE_S + 5)
    if not done:
        task.cancel()
        return None, float("inf")
    task.result()
    took = time.monotonic() - fired[0] if fired else 0.0
    return (run.terminal.reason if took <= DEADLINE_S else None), took


async def sweep(rounds: int) -> tuple[int, int, Counter, float]:
    """(runs, hangs, Terminal reasons, slowest end after an abort in seconds)."""
    runs, hangs, reasons, slowest = 0, 0, Counter(), 0.0
    for _ in range(rounds):
        for shape, command in (("plain", COMMANDS["exits at once"]), ("plain", COMMANDS["child holds the pipes"]),
                               ("stream fails", COMMANDS["child holds the pipes"])):
            for streaming in (False, True):
                for k in range(WINDOW):
                    reason, took = await one_run(k, command, streaming=streaming, shape=shape)
                    runs += 1
                    hangs += reason is None
                    reasons[reason or "HUNG"] += 1
                    slowest = max(slowest, took)
    return runs, hangs, reasons, slowest


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    started = time.perf_counter()
    runs, hangs, reasons, slowest = asyncio.run(sweep(rounds))
    print(f"abort swept over the command hook's spawn window ({WINDOW} event-loop iterations, "
          f"streaming tool execution off and on, 3 shapes): {runs} runs, {hangs} hangs, "
          f"slowest end after the abort {slowest * 1000:.0f} ms, {time.perf_counter() - started:.1f} s")
    print("  terminals: " + ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items())))
    return 1 if hangs else 0


if __name__ == "__main__":
    sys.exit(main())
