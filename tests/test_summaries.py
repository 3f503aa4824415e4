"""Tool-use summaries that hang (issue 33, item 9): waited for at most ``grace_s`` past the next response,
dropped with a trace notice, never holding up a request; the live request's own timeout."""

from __future__ import annotations

import asyncio
import datetime
import time
from types import SimpleNamespace

from dreamloop import scripts as S
from dreamloop.abort import AbortController
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.query import QueryParams, query
from dreamloop.summaries import ToolUseSummaries, finish_summary, start_summary
from dreamloop.tools import builtin_tools


def params(model, workspace, summaries):
    return QueryParams(messages="what is value?", model=model, tools=builtin_tools(), workspace=workspace,
                       permission_mode="bypass", tool_use_summaries=summaries,
                       deps=QueryDeps(uuid=counting_uuids(), today=lambda: datetime.date(2026, 1, 2),
                                      home=workspace, platform="linux"))


async def test_a_summary_that_hangs_is_dropped_after_the_grace_and_holds_up_nothing(offline, tmp_path):
    (tmp_path / "config.py").write_text("value = 1\n")
    cancelled = []

    async def hangs(uses, results):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    turn = S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"}))
    model = offline([turn, turn, turn, S.reply("done")])
    run = query(params(model, tmp_path, ToolUseSummaries(summarize=hangs, grace_s=0.2)))
    started = time.monotonic()
    events = [event async for event in run]
    took = time.monotonic() - started
    assert run.terminal.reason == "completed"
    dropped = [e for e in events if e.type == "system" and e.subtype == "tool_use_summary_dropped"]
    assert len(dropped) == 3 and all("dropped" in e.content for e in dropped)  # one per batch, in the trace
    assert len(cancelled) == 3 and not [e for e in events if e.type == "tool_use_summary"]
    assert took < 3  # three hung summaries cost about 0.2 s each, never an hour


async def test_a_summary_done_within_the_grace_is_kept(offline, tmp_path):
    (tmp_path / "config.py").write_text("value = 1\n")

    async def quick(uses, results):
        await asyncio.sleep(0.05)
        return "read config"

    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"})), S.reply("done")])
    events = [e async for e in query(params(model, tmp_path, ToolUseSummaries(summarize=quick, grace_s=1.0)))]
    assert [e.summary for e in events if e.type == "tool_use_summary"] == ["read config"]
    assert not [e for e in events if getattr(e, "subtype", None) == "tool_use_summary_dropped"]


async def test_the_live_summary_request_has_a_short_timeout():
    asked = {}

    class Messages:
        async def create(self, **kwargs):
            asked.update(kwargs)
            return SimpleNamespace(content=[SimpleNamespace(type="text", text="Read config")])

    model = SimpleNamespace(client=SimpleNamespace(messages=Messages()))  # a live model: no offline api
    use = SimpleNamespace(id="t1", name="Read", input={"file_path": "config.py"})
    pending = start_summary(ToolUseSummaries(), model, [use], {"t1": {}})
    deps = SimpleNamespace(uuid=counting_uuids())
    [message] = await finish_summary(pending, deps, AbortController())
    assert message.summary == "Read config" and asked["timeout"] == 10.0  # not the SDK's 600 s
    assert ToolUseSummaries().grace_s == 1.0
