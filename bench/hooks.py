"""What hooks cost per tool call: a 100-turn scripted session with a trivial tool, run four ways.

1. hooks off (``QueryParams(hooks=None)``), the baseline;
2. hooks on, none registered (``Hooks()``): the branch alone (goal: <= 1.1x);
3. one Python ``pre_tool_use`` hook and one ``post_tool_use`` hook (no opinion);
4. the same two as command hooks (``exit 0``): two ``bash`` processes per call, the price of
   Claude Code's contract (printed in ms per call, for a sense of scale; no goal).

Run: ``.venv/bin/python bench/hooks.py``. Prints figures; not a test.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.hooks import CommandHook

TURNS = 100
REPEATS = 3


class NoInput(BaseModel):
    pass


@dl.tool(NoInput, name="noop", read_only=True)
async def noop(input: NoInput) -> str:
    """Do nothing."""
    return "ok"


def policy(body, index):
    return S.reply("step", S.tool_use("noop", {})) if index < TURNS - 1 else S.reply("done")


def python_hooks() -> dl.Hooks:
    return dl.Hooks().add("pre_tool_use", lambda i: None).add("post_tool_use", lambda i: None)


def command_hooks() -> dl.Hooks:
    return dl.Hooks().add("pre_tool_use", CommandHook("exit 0")).add("post_tool_use", CommandHook("cat >/dev/null"))


async def per_turn(hooks: dl.Hooks | None) -> float:
    run = dl.query(dl.QueryParams(messages="go", model=dl.offline(policy), tools=[noop], hooks=hooks))
    start = time.perf_counter()
    async for _ in run:
        pass
    assert run.terminal.reason == "completed" and run.terminal.turn_count == TURNS
    return (time.perf_counter() - start) / TURNS


async def main() -> None:
    ways = {"hooks off": lambda: None, "Hooks() empty": dl.Hooks, "2 Python hooks": python_hooks,
            "2 command hooks": command_hooks}
    times = {name: statistics.median([await per_turn(make()) for _ in range(REPEATS)]) for name, make in ways.items()}
    base = times["hooks off"]
    for name, seconds in times.items():
        print(f"{name:<16} {seconds * 1000:7.2f} ms per turn   {seconds / base:5.2f}x")
    print(f"empty Hooks() vs off: {times['Hooks() empty'] / base:.2f}x (goal <= 1.1x); "
          f"a command hook costs ~{(times['2 command hooks'] - base) / 2 * 1000:.1f} ms per call")


if __name__ == "__main__":
    asyncio.run(main())
