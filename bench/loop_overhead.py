"""What the production loop costs over the four-step loop, and what parallel batches buy.

1. A 200-turn scripted session with a trivial tool, on the same offline API:
   per-turn time of ``query()`` (every switch off) against ``agent_loop()``
   (goal: ratio <= 1.25). The two run in turns, REPEATS times, and the ratio
   is the median of the pairs, so a machine whose load changes affects both alike.
2. Four concurrency-safe tools of 200 ms each in one turn through ``query()``:
   wall time of the tool phase against 200 ms (goal: <= 1.1x).

Run: ``.venv/bin/python bench/loop_overhead.py``. Prints figures; not a test.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S

TURNS = 200
REPEATS = 5


class NoInput(BaseModel):
    pass


class SleepInput(BaseModel):
    ms: int


@dl.tool(NoInput, name="noop", read_only=True)
async def noop(input: NoInput) -> str:
    """Do nothing."""
    return "ok"


@dl.tool(SleepInput, name="sleep", read_only=True)
async def sleep(input: SleepInput) -> str:
    """Sleep for ms milliseconds."""
    await asyncio.sleep(input.ms / 1000)
    return "slept"


def session_script():
    """TURNS tool turns then an answer (a policy, so both loops get identical replies)."""
    def policy(body, index):
        if index < TURNS - 1:
            return S.reply("step", S.tool_use("noop", {}))
        return S.reply("done")
    return policy


async def time_agent_loop() -> float:
    model = dl.offline(session_script())
    start = time.perf_counter()
    await dl.agent_loop(model, [{"role": "user", "content": "go"}], [noop], max_tokens=1024)
    return (time.perf_counter() - start) / TURNS


async def time_query() -> float:
    model = dl.offline(session_script())
    run = dl.query(dl.QueryParams(messages="go", model=model, tools=[noop], max_tokens=1024))
    start = time.perf_counter()
    async for _ in run:
        pass
    assert run.terminal.reason == "completed" and run.terminal.turn_count == TURNS
    return (time.perf_counter() - start) / TURNS


async def time_parallel_batch() -> float:
    calls = [S.tool_use("sleep", {"ms": 200}, id=f"toolu_{i}") for i in range(4)]
    model = dl.offline([S.reply(*calls), S.reply("done")])
    run = dl.query(dl.QueryParams(messages="go", model=model, tools=[sleep]))
    started = finished = None
    async for event in run:
        if event.type == "progress" and event.data["stage"] == "started" and started is None:
            started = time.perf_counter()
        if event.type == "user" and event.source_tool_use_ids:
            finished = time.perf_counter()
    return finished - started


async def main() -> None:
    await time_query()  # warm up imports and caches
    pairs = [(await time_agent_loop(), await time_query()) for _ in range(REPEATS)]
    minimal = statistics.median(m for m, _ in pairs)
    production = statistics.median(p for _, p in pairs)
    ratio = statistics.median(p / m for m, p in pairs)
    print(f"{TURNS}-turn session, per turn: agent_loop {minimal * 1000:.2f} ms, query {production * 1000:.2f} ms")
    print(f"  ratio query/agent_loop = {ratio:.2f}  (goal <= 1.25)")
    batch = statistics.median([await time_parallel_batch() for _ in range(REPEATS)])
    print(f"four 200 ms concurrency-safe tools in one turn: {batch * 1000:.0f} ms")
    print(f"  ratio to 200 ms = {batch / 0.2:.2f}  (goal <= 1.1)")


if __name__ == "__main__":
    asyncio.run(main())
