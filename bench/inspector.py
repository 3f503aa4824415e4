"""How fast the StateInspector steps through a long trace (goal: < 50 ms per checkpoint).

Builds a 500-turn trace with the real loop on the offline API (a scripted
model that calls a trivial tool 499 times, then answers), then moves the
slider to several checkpoints and times each render (header + five panes).
"cold" is the first visit (messages rendered and cached by uuid), "warm" a
revisit. Also times the default cap (the latest 200 messages per pane)
against ``max_messages=None`` (all ~1,000). Not a test: read the medians.

    .venv/bin/python bench/inspector.py
"""

from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.model import offline
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.widgets import StateInspector, Timeline

TURNS = 500
POSITIONS = [0, 50, 125, 250, 375, 450, 498, 499]


class Step(BaseModel):
    n: int


@tool(Step, name="step", read_only=True)
async def step(input: Step) -> str:
    """Do one trivial step."""
    return f"step {input.n} done"


def policy(body: dict, index: int) -> S.Turn:
    if index < TURNS - 1:
        return S.reply(f"Turn {index + 1}: one more step.", S.tool_use("step", {"n": index}))
    return S.reply("All steps done.")


async def build_trace():
    run = query(QueryParams(messages="take 499 steps", model=offline(policy), tools=[step]))
    async for _ in run:
        pass
    assert run.terminal.turn_count == TURNS, run.terminal
    return run.trace


def time_moves(inspector: StateInspector, positions: list[int]) -> list[float]:
    times = []
    for position in positions:
        if inspector.slider.value == position:  # force a render even if the slider is already there
            inspector.slider.value = position - 1 if position else position + 1
        started = time.perf_counter()
        inspector.slider.value = position
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    started = time.perf_counter()
    trace = asyncio.run(build_trace())
    print(f"trace: {len(trace.checkpoints)} checkpoints, {len(trace.messages)} messages, "
          f"built in {time.perf_counter() - started:.1f} s")
    last = trace.checkpoints[-1]
    print(f"last checkpoint: {len(last.state_messages)} messages in State.messages")

    for label, cap in (("default (latest 200 per pane)", 200), ("max_messages=None (all)", None)):
        built = time.perf_counter()
        inspector = StateInspector(trace, max_messages=cap)
        build_ms = (time.perf_counter() - built) * 1000
        cold = time_moves(inspector, POSITIONS)
        warm = time_moves(inspector, POSITIONS[::-1])
        inspector.slider.value = TURNS - 1
        size = sum(len(p.value) for p in inspector.panes.values()) // 1024
        print(f"\n{label}: construct {build_ms:.1f} ms")
        print(f"  cold move  median {statistics.median(cold):6.2f} ms  max {max(cold):6.2f} ms")
        print(f"  warm move  median {statistics.median(warm):6.2f} ms  max {max(warm):6.2f} ms")
        print(f"  HTML at the last checkpoint: {size} KiB over five panes")

    started = time.perf_counter()
    Timeline(trace)
    print(f"\nTimeline of the 500 turns: {(time.perf_counter() - started) * 1000:.1f} ms")
    print("goal: < 50 ms per move")


if __name__ == "__main__":
    main()
