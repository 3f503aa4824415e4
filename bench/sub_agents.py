"""What a sub-agent call costs over the child's own requests (issue 34's closing note), in ms.

Three runs on the same offline API, in turns, REPEATS times (medians, so a machine whose load changes affects
all alike):

* ``parent``: a prompt, one ``Agent`` call whose child makes CHILD_TURNS requests (a tool call each but the
  last), then the parent's answer: 2 + CHILD_TURNS requests;
* ``plain``: the same parent with a trivial tool in place of ``Agent``: its 2 requests;
* ``child``: the child's run alone, as a top-level ``query()``: its CHILD_TURNS requests.

The call's own cost is ``parent - plain - child``: building the child's QueryParams, its State, trace and tool
context, forwarding its end to the parent's trace. No goal yet: the figure is noisy on a shared machine (the
spread is printed).

Run: ``.venv/bin/python bench/sub_agents.py``. Prints figures; not a test.
"""

from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S

CHILD_TURNS = 3
REPEATS = 15
CHILD_PROMPT = "child: probe three times"


class NoInput(BaseModel):
    pass


@dl.tool(NoInput, name="noop", read_only=True)
async def noop(input: NoInput) -> str:
    """Do nothing."""
    return "ok"


def child_turns() -> list:
    return [*[S.reply("step", S.tool_use("noop", {})) for _ in range(CHILD_TURNS - 1)], S.reply("child done")]


async def timed(params: dl.QueryParams) -> float:
    run = dl.query(params)
    start = time.perf_counter()
    async for _ in run:
        pass
    elapsed = time.perf_counter() - start
    assert run.terminal.reason == "completed", run.terminal
    return elapsed * 1000


async def parent() -> float:
    script = S.by_prompt([S.reply(S.tool_use("Agent", {"description": "probe", "prompt": CHILD_PROMPT})),
                          S.reply("parent done")], {CHILD_PROMPT: child_turns()})
    return await timed(dl.QueryParams(messages="go", model=dl.offline(script), tools=[noop], sub_agents=True))


async def plain() -> float:
    script = [S.reply(S.tool_use("noop", {})), S.reply("parent done")]
    return await timed(dl.QueryParams(messages="go", model=dl.offline(script), tools=[noop]))


async def child() -> float:
    return await timed(dl.QueryParams(messages=CHILD_PROMPT, model=dl.offline(child_turns()), tools=[noop]))


async def main() -> None:
    for warm in (parent, plain, child):
        await warm()
    rows: dict[str, list[float]] = {"parent": [], "plain": [], "child": [], "overhead": []}
    for _ in range(REPEATS):
        a, b, c = await parent(), await plain(), await child()
        rows["parent"].append(a)
        rows["plain"].append(b)
        rows["child"].append(c)
        rows["overhead"].append(a - b - c)
    print(f"sub-agent call, child of {CHILD_TURNS} requests, {REPEATS} repeats (median ms)")
    for name, values in rows.items():
        print(f"  {name:<9} {statistics.median(values):7.2f}  (min {min(values):.2f}, max {max(values):.2f})")
    print(f"  the call's own cost: {statistics.median(rows['overhead']):.2f} ms over its child's "
          f"{CHILD_TURNS} requests")


if __name__ == "__main__":
    asyncio.run(main())
