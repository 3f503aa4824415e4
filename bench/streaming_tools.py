"""What streaming tool execution buys: one turn's wall time with the switch off, on, and the ideal.

A paced offline model answers with three concurrency-safe tool calls of 1 s each, then about 2 s of
text. With the switch off the calls start when the response ends (turn ≈ stream + 1 s); with it on
each starts at its block's ``content_block_stop``. The ideal is ``max(stream end, each call's block
stop + 1 s)``. Goal: the switch on gets >= 90 % of the ideal saving. Also printed: the per-turn cost
of the executor on a 200-turn session of instant tools (switch on / off).

Run: ``.venv/bin/python bench/streaming_tools.py``. Prints figures; not a test.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S

CALL_SECONDS = 1.0
TOKENS_PER_SECOND = 50
TEXT = "While those files are read, here is what I am looking for in each of them. " * 5  # ~2 s at 50 tok/s
REPEATS = 3
TURNS = 200


class PathInput(BaseModel):
    path: str


@dl.tool(PathInput, name="Read", read_only=True)
async def slow_read(input: PathInput) -> str:
    """Read a file (takes CALL_SECONDS)."""
    await asyncio.sleep(CALL_SECONDS)
    return f"contents of {input.path}"


def paced_script() -> list[dl.Turn]:
    calls = [S.tool_use("Read", {"path": name}) for name in ("a.py", "b.py", "c.py")]
    return [S.reply(*calls, TEXT, tokens_per_second=TOKENS_PER_SECOND), S.reply("Done.")]


async def one_turn(streaming: bool) -> dict[str, float]:
    """Seconds since the request started: each tool block's stop, the stream's end, the results message."""
    run = dl.query(dl.QueryParams(messages="read a, b and c", model=dl.offline(paced_script()), tools=[slow_read],
                                  streaming_tool_execution=streaming))
    start = stream_end = results = None
    stops: list[float] = []
    open_tools: set[int] = set()
    async for event in run:
        now = time.perf_counter()
        if event.type == "stream_request_start" and start is None:
            start = now
        elif event.type == "stream_event" and results is None:
            raw = event.event
            if raw.type == "content_block_start" and raw.content_block.type == "tool_use":
                open_tools.add(raw.index)
            elif raw.type == "content_block_stop" and raw.index in open_tools:
                stops.append(now - start)
            elif raw.type == "message_stop":
                stream_end = now - start
        elif event.type == "user" and event.source_tool_use_ids and results is None:
            results = now - start
    assert run.terminal.reason == "completed" and len(stops) == 3
    return {"turn": results, "stream": stream_end, "ideal": max(stream_end, *(s + CALL_SECONDS for s in stops))}


async def per_turn(streaming: bool) -> float:
    @dl.tool(PathInput, name="noop", read_only=True)
    async def noop(input: PathInput) -> str:
        """Do nothing."""
        return "ok"

    def policy(body, index):
        return S.reply("step", S.tool_use("noop", {"path": "x"})) if index < TURNS - 1 else S.reply("done")

    run = dl.query(dl.QueryParams(messages="go", model=dl.offline(policy), tools=[noop],
                                  streaming_tool_execution=streaming))
    started = time.perf_counter()
    async for _ in run:
        pass
    assert run.terminal.turn_count == TURNS
    return (time.perf_counter() - started) / TURNS


async def main() -> None:
    off = [await one_turn(False) for _ in range(REPEATS)]
    on = [await one_turn(True) for _ in range(REPEATS)]
    turn_off = statistics.median(r["turn"] for r in off)
    turn_on = statistics.median(r["turn"] for r in on)
    ideal = statistics.median(r["ideal"] for r in on)
    stream = statistics.median(r["stream"] for r in on)
    print(f"one turn: 3 concurrency-safe calls of {CALL_SECONDS:.0f} s, then text; stream {stream:.2f} s")
    print(f"  switch off {turn_off:.2f} s (stream + {turn_off - stream:.2f} s), switch on {turn_on:.2f} s, "
          f"ideal {ideal:.2f} s")
    saving, best = turn_off - turn_on, turn_off - ideal
    print(f"  saving {saving:.2f} s of an ideal {best:.2f} s = {saving / best:.0%}  (goal >= 90%)")
    await per_turn(False)  # warm up
    cost_off = statistics.median([await per_turn(False) for _ in range(REPEATS)])
    cost_on = statistics.median([await per_turn(True) for _ in range(REPEATS)])
    print(f"{TURNS}-turn session of instant tools, per turn: off {cost_off * 1000:.2f} ms, on {cost_on * 1000:.2f} ms "
          f"(ratio {cost_on / cost_off:.2f})")


if __name__ == "__main__":
    asyncio.run(main())
