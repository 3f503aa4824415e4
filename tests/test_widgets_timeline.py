"""Timeline from real traces: a parallel batch shows as overlapping spans, a serial one does not."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.trace import Trace
from dreamloop.widgets import Timeline


class PathInput(BaseModel):
    path: str


def sleeper(*, parallel: bool):
    @tool(PathInput, name="Read", read_only=True, concurrency_safe=parallel)
    async def read(input: PathInput) -> str:
        """Read a file (0.1 s)."""
        await asyncio.sleep(0.1)
        return f"contents of {input.path}"

    return read


async def four_reads(offline, *, parallel: bool):
    model = offline([S.reply(*[S.tool_use("Read", {"path": p}) for p in "abcd"]), S.reply("done")])
    run = query(QueryParams(messages="read", model=model, tools=[sleeper(parallel=parallel)]))
    async for _ in run:
        pass
    return run


async def test_parallel_batch_overlaps(offline, tmp_path):
    run = await four_reads(offline, parallel=True)
    timeline = Timeline(run)
    assert repr(timeline) == "Timeline(turns=2)"
    assert timeline._repr_mimebundle_()["text/plain"] == "Timeline(turns=2)"

    first, second = timeline.turns
    assert [s.label for s in first.tools] == ["Read"] * 4
    assert all(a.start < b.end and b.start < a.end for a in first.tools for b in first.tools)
    assert all(s.seconds >= 0.09 for s in first.tools)
    assert len(first.batches()) == 1 and len(first.model) == 1 and not second.tools
    assert first.model[0].end <= min(s.start for s in first.tools)

    summary = timeline.summary().splitlines()
    assert summary[0].startswith("turn 1: model ") and "tools: Read ×4 in parallel " in summary[0]
    assert summary[1].startswith("turn 2: model ") and summary[1].endswith("no tools")
    assert summary[2].startswith("total ")
    assert timeline.summary(times=False) == "turn 1: model, tools: Read ×4 in parallel\nturn 2: model, no tools"
    chart = timeline.chart.value
    assert chart.count('fill="#dd6b20"') == 4 + 1  # four bars and the legend
    assert "Read ×4 in parallel" in chart

    loaded = Timeline(Trace.load(run.trace.save(tmp_path / "t.jsonl")))
    assert loaded.summary() == timeline.summary()


async def test_serial_calls_do_not_overlap(offline):
    timeline = Timeline(await four_reads(offline, parallel=False))
    tools = timeline.turns[0].tools
    assert all(a.end <= b.start for a, b in zip(tools, tools[1:]))
    assert len(timeline.turns[0].batches()) == 4
    assert "Read 0." in timeline.summary() and "in parallel" not in timeline.summary()
