"""Streaming tool execution: the StreamingToolExecutor's contract, the switch in the loop, F1, F13, F14.

Unit tests drive the executor directly (``add_tool``, ``get_remaining_results``, ``discard``); loop
tests run ``query()`` against the offline API with the switch on and off. The ``offline`` fixture
(conftest) asserts that no request the loop sent was rejected, so every interrupt test that sends a
follow-up request proves the transcript it left is valid.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re

import pytest
from anthropic.types import ToolUseBlock
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine
from dreamloop.endings import INTERRUPTED_TOOLS_NOTE
from dreamloop.query import QueryParams, query
from dreamloop.tools import (
    INTERRUPTED,
    NOT_STARTED,
    StreamingToolExecutor,
    ToolUseContext,
    builtin_tools,
    partition_tool_calls,
    run_tools,
    tool,
)

RECOVERY_OFF = {"recovery": False, "observed_output_limits": False, "fallback_model": False,  # chapters 08, 08b's
                "token_budget": False,
                "memory_files": False, "changed_files": False, "tool_use_summaries": False,  # chapter 03's
                "environment": False,  # chapter 06's
                "sub_agents": False, "background_tasks": False}  # chapter 12's
TOOLS_OFF = {"results_as_finished": False, "sibling_rule": False, "file_state": False}  # chapters 04 and 05's other switches


class Job(BaseModel):
    name: str
    seconds: float = 0.0
    fail: bool = False


def make_tools(log: list[str] | None = None):
    """``read`` (concurrency-safe), ``write`` (not) and a fake ``Bash`` (safe), each sleeping, logging start/end."""
    log = log if log is not None else []

    def sleeper(name: str, safe: bool):
        async def job(input: Job) -> str:
            log.append(f"start {input.name}")
            await asyncio.sleep(input.seconds)
            log.append(f"end {input.name}")
            if input.fail:
                raise RuntimeError(f"{input.name} failed")
            return f"{input.name} ok"

        return tool(Job, name=name, description="Sleep, then answer.", read_only=safe)(job)

    return [sleeper("read", True), sleeper("write", False), sleeper("Bash", True)]


def use(id: str, name: str, job: str, seconds: float = 0.0, **more) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id=id, name=name, input={"name": job, "seconds": seconds, **more})


async def drain(run):
    return [event async for event in run]


def requests_of(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def contents(message) -> list:
    return [block["content"] for block in message.message["content"]]


async def executor_results(calls, context, *, gap: float = 0.0):
    """Feed ``calls`` to a StreamingToolExecutor ``gap`` seconds apart; return (progress, results message)."""
    executor = StreamingToolExecutor(context)
    for call in calls:
        executor.add_tool(call)
        await asyncio.sleep(gap)
    updates = [u async for u in executor.get_remaining_results()]
    return updates[:-1], updates[-1]


# ---------------------------------------------------------------------------
# The ordering rule: partition_tool_calls' semantics, applied as calls arrive

SEQUENCES = {
    "R R W R": ["read", "read", "write", "read"],
    "W R R W": ["write", "read", "read", "write"],
    "R W W R R": ["read", "write", "write", "read", "read"],
    "W W": ["write", "write"],
    "R R R": ["read", "read", "read"],
}


@pytest.mark.parametrize("gap", [0.0, 0.02], ids=["all at once", "arriving one by one"])
@pytest.mark.parametrize("names", SEQUENCES.values(), ids=SEQUENCES.keys())
async def test_the_ordering_rule_matches_partition_tool_calls(names, gap):
    log: list[str] = []
    tools = make_tools(log)
    calls = [use(f"T{i}", name, f"c{i}", seconds=0.2) for i, name in enumerate(names)]
    _, message = await executor_results(calls, ToolUseContext(tools=tools, permission_mode="bypass"), gap=gap)

    batch_of = {call.id: n for n, batch in enumerate(partition_tool_calls(calls, tools)) for call in batch.tool_uses}
    at = {entry: position for position, entry in enumerate(log)}
    for a, b in itertools.combinations(calls, 2):  # a comes before b in the response
        a_end, b_start = at[f"end {a.input['name']}"], at[f"start {b.input['name']}"]
        if batch_of[a.id] != batch_of[b.id]:
            assert a_end < b_start, f"{b.id} started before {a.id} (an earlier batch) ended: {log}"
        else:
            assert b_start < a_end, f"{a.id} and {b.id} share a parallel batch but did not overlap: {log}"
    assert contents(message) == [f"c{i} ok" for i in range(len(names))]


async def test_a_safe_call_arriving_while_an_unsafe_one_runs_waits_for_it():
    log: list[str] = []
    context = ToolUseContext(tools=make_tools(log), permission_mode="bypass")
    executor = StreamingToolExecutor(context)
    executor.add_tool(use("T1", "write", "w1", seconds=0.1))
    await asyncio.sleep(0.02)
    executor.add_tool(use("T2", "read", "r2"))
    updates = [u async for u in executor.get_remaining_results()]
    assert log == ["start w1", "end w1", "start r2", "end r2"]
    assert updates[-1].source_tool_use_ids == ("T1", "T2")


async def test_max_concurrency_holds_for_streamed_calls_too():
    log: list[str] = []
    context = ToolUseContext(tools=make_tools(log), max_concurrency=1, permission_mode="bypass")
    await executor_results([use("T1", "read", "a", seconds=0.02), use("T2", "read", "b")], context)
    assert log == ["start a", "end a", "start b", "end b"]


async def test_results_in_call_order_with_shuffled_completion_times():
    """F2 through the executor: progress in completion order, results in call order."""
    delays = {"T1": 0.1, "T2": 0.3, "T3": 0.0, "T4": 0.2}  # finish T3, T1, T4, T2 (0.1 s apart: a loaded CI still keeps the order)
    calls = [use(i, "read", f"contents of {i}", seconds=s) for i, s in delays.items()]
    progress, message = await executor_results(calls, ToolUseContext(tools=make_tools(), permission_mode="bypass"))
    assert [p.tool_use_id for p in progress if p.data["stage"] == "done"] == ["T3", "T1", "T4", "T2"]
    assert message.source_tool_use_ids == ("T1", "T2", "T3", "T4")
    assert contents(message) == [f"contents of {i} ok" for i in ("T1", "T2", "T3", "T4")]


async def test_results_as_finished_lists_them_in_completion_order_both_ways():
    """The switch ``results_as_finished`` (Claude Code 2.1.332's order): the same order with or without
    the executor; the progress and the pairing by id are unchanged."""
    delays = {"T1": 0.1, "T2": 0.3, "T3": 0.0, "T4": 0.2}  # finish T3, T1, T4, T2 (0.1 s apart: a loaded CI still keeps the order)
    calls = [use(i, "read", f"contents of {i}", seconds=s) for i, s in delays.items()]
    context = ToolUseContext(tools=make_tools(), permission_mode="bypass", results_as_finished=True)
    _, streamed = await executor_results(calls, context)
    plain = [m async for m in run_tools(calls, context)][-1]
    for message in (streamed, plain):
        assert message.source_tool_use_ids == ("T3", "T1", "T4", "T2")
        assert [b["tool_use_id"] for b in message.message["content"]] == ["T3", "T1", "T4", "T2"]
        assert contents(message) == [f"contents of {i} ok" for i in ("T3", "T1", "T4", "T2")]


async def test_results_as_finished_in_the_loop_is_a_valid_request(offline):
    """The loop with the switch on: the next request carries the results as they finished (the offline
    API accepts any order; the ``offline`` fixture checks that no request was rejected)."""
    delays = {"T1": 0.06, "T2": 0.0}
    model = offline([S.reply("Two.", *[S.tool_use("read", {"name": i, "seconds": s}, id=i)
                                         for i, s in delays.items()]), S.reply("Done.")])
    params = QueryParams(messages="go", model=model, tools=make_tools(), permission_mode="bypass",
                         results_as_finished=True)
    run = query(params)
    await drain(run)
    assert run.terminal.reason == "completed"
    sent = requests_of(model)[-1]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in sent] == ["T2", "T1"]


# ---------------------------------------------------------------------------
# The sibling rule (F13), the same in run_tools() and in the executor


async def run_both(calls, tools):
    """The results message of run_tools() and of the executor for the same calls."""
    off = [m async for m in run_tools(calls, ToolUseContext(tools=tools, permission_mode="bypass",
                                                            sibling_rule=True))][-1]
    _, on = await executor_results(calls, ToolUseContext(tools=tools, permission_mode="bypass", sibling_rule=True))
    return off, on


async def test_a_failing_bash_call_cancels_running_siblings_and_starts_no_other():
    calls = [
        use("T1", "read", "quick read"),
        use("T2", "Bash", "make", seconds=0.05, fail=True),
        use("T3", "Bash", "slow", seconds=5),
        use("T4", "write", "after"),
    ]
    for message in await run_both(calls, make_tools()):
        blocks = message.message["content"]
        assert blocks[0] == {"type": "tool_result", "tool_use_id": "T1", "content": "quick read ok"}
        assert blocks[1]["is_error"] and blocks[1]["content"] == "Error: RuntimeError: make failed"
        assert blocks[2] == {"type": "tool_result", "tool_use_id": "T3", "is_error": True, "content":
                             "Cancelled while running because the call Bash failed; it may have made changes "
                             "before it stopped."}
        assert blocks[3] == {"type": "tool_result", "tool_use_id": "T4", "is_error": True,
                             "content": "Not started because the call Bash failed; this call never ran."}


async def test_without_the_sibling_rule_a_failing_bash_call_cancels_nothing():
    """The switch off (the library's default and ``dreamloop run``'s, as Claude Code 2.1.332 was observed
    in ``bash_fails_parallel`` / ``bash_fails_serial``): every call runs and keeps its own result."""
    calls = [use("T1", "read", "quick read"), use("T2", "Bash", "make", seconds=0.02, fail=True),
             use("T3", "Bash", "slow", seconds=0.1), use("T4", "write", "after")]
    off = [m async for m in run_tools(calls, ToolUseContext(tools=make_tools(), permission_mode="bypass"))][-1]
    _, on = await executor_results(calls, ToolUseContext(tools=make_tools(), permission_mode="bypass"))
    for message in (off, on):
        assert contents(message) == ["quick read ok", "Error: RuntimeError: make failed", "slow ok", "after ok"]


async def test_errors_of_other_tools_cancel_nothing():
    calls = [use("T1", "read", "missing", seconds=0.02, fail=True), use("T2", "read", "slow", seconds=0.1),
             use("T3", "write", "after")]
    for message in await run_both(calls, make_tools()):
        assert contents(message) == ["Error: RuntimeError: missing failed", "slow ok", "after ok"]


async def test_f13_one_failing_bash_among_parallel_siblings(tmp_path):
    """F13 with the real tools: a failing read-only Bash stops the slow Bash beside it; the Read had finished.

    The failing command is a ``grep`` that finds nothing (exit code 1) in a named pipe, so it fails when
    the test writes to the pipe: after the Read beside it has finished.
    """
    (tmp_path / "a").write_text("alpha\n")
    (tmp_path / "log.txt").write_text("line\n")
    os.mkfifo(tmp_path / "pipe")
    calls = [
        ToolUseBlock(type="tool_use", id="T1", name="Bash", input={"command": "grep nomatch pipe"}),
        ToolUseBlock(type="tool_use", id="T2", name="Bash", input={"command": "tail -f log.txt"}),  # never ends
        ToolUseBlock(type="tool_use", id="T3", name="Read", input={"file_path": "a"}),
    ]
    assert [len(b.tool_uses) for b in partition_tool_calls(calls, builtin_tools())] == [3]  # all run together

    def feed_the_pipe() -> None:  # blocks until grep has the pipe open
        with open(tmp_path / "pipe", "w") as pipe:
            pipe.write("something else\n")

    for streaming in (False, True):
        context = ToolUseContext(tools=builtin_tools(), workspace=tmp_path, sibling_rule=True)
        if streaming:
            executor = StreamingToolExecutor(context)
            for call in calls:
                executor.add_tool(call)
            updates = executor.get_remaining_results()
        else:
            updates = run_tools(calls, context)
        feeding = None
        async for update in updates:
            if update.type == "progress" and update.tool_use_id == "T3" and update.data["stage"] == "done":
                feeding = asyncio.create_task(asyncio.to_thread(feed_the_pipe))
            message = update
        await asyncio.wait_for(feeding, 5)
        t1, t2, t3 = message.message["content"]
        assert t1["is_error"] and t1["content"] == "Exit code: 1"
        assert t2["is_error"] and t2["content"] == ("Cancelled while running because the call Bash(grep nomatch pipe) "
                                                    "failed; it may have made changes before it stopped.")
        assert not t3.get("is_error") and "alpha" in t3["content"]


# ---------------------------------------------------------------------------
# discard(): the fallback path's contract


async def test_discard_stops_running_calls_and_leaves_nothing_behind():
    log: list[str] = []
    executor = StreamingToolExecutor(ToolUseContext(tools=make_tools(log), permission_mode="bypass"))
    executor.add_tool(use("T1", "read", "slow", seconds=5))
    executor.add_tool(use("T2", "write", "waits"))
    await asyncio.sleep(0.02)
    started = await asyncio.wait_for(executor.discard(), 1)
    assert started == ("T1",)
    assert log == ["start slow"]  # T1 was cancelled, T2 never ran
    assert [u async for u in executor.get_remaining_results()] == []
    with pytest.raises(RuntimeError, match="discarded or stopped early"):
        executor.add_tool(use("T3", "read", "late"))


async def test_closing_the_remaining_results_early_stops_the_calls():
    log: list[str] = []
    executor = StreamingToolExecutor(ToolUseContext(tools=make_tools(log), permission_mode="bypass"))
    executor.add_tool(use("T1", "read", "slow", seconds=5))
    remaining = executor.get_remaining_results()
    assert (await remaining.__anext__()).data["stage"] == "started"
    await asyncio.wait_for(remaining.aclose(), 1)
    assert log == ["start slow"]


# ---------------------------------------------------------------------------
# The switch in the loop


class PathInput(BaseModel):
    path: str


def file_tools(delays: dict[str, float] | None = None, ran: list[str] | None = None):
    """``Read`` (safe) and ``Write`` (not), sleeping ``delays[path]`` seconds; ``ran`` logs each start."""
    delays = delays or {}
    ran = ran if ran is not None else []

    @tool(PathInput, name="Read", read_only=True)
    async def read(input: PathInput) -> str:
        """Read a file."""
        ran.append(f"Read {input.path}")
        await asyncio.sleep(delays.get(input.path, 0))
        return f"contents of {input.path}"

    @tool(PathInput, name="Write")
    async def write(input: PathInput) -> str:
        """Write a file."""
        ran.append(f"Write {input.path}")
        await asyncio.sleep(delays.get(input.path, 0))
        return f"wrote {input.path}"

    return [read, write]


def paced(*blocks, tps: float = 300, **fields):
    return S.reply(*blocks, tokens_per_second=tps, chunk_size=4, **fields)


LONG_TEXT = "and then I keep explaining what I am doing " * 12


async def test_calls_start_while_the_model_still_streams(offline):
    model = offline([paced(S.tool_use("Read", {"path": "a"}, id="T1"), LONG_TEXT), S.reply("done")])
    run = query(QueryParams(messages="go", model=model, tools=file_tools(), streaming_tool_execution=True))
    events = await drain(run)
    kinds = [(e.type, getattr(e, "data", {}).get("stage")) for e in events if e.type != "stream_event"]
    assert kinds[:4] == [("stream_request_start", None), ("progress", "started"), ("progress", "done"),
                         ("assistant", None)]
    first_delta_after = next(i for i, e in enumerate(events) if e.type == "progress" and e.data["stage"] == "done")
    assert any(e.type == "stream_event" for e in events[first_delta_after:])  # the model was still talking
    assert run.terminal.reason == "completed"
    assert requests_of(model)[1]["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"}]
    assert run.trace.switches == {"streaming_tool_execution": True, "context": False, "hooks": False,
                                  **RECOVERY_OFF, **TOOLS_OFF}


async def test_off_means_no_call_starts_before_the_response_ends(offline):
    model = offline([paced(S.tool_use("Read", {"path": "a"}, id="T1"), "more text " * 5), S.reply("done")])
    run = query(QueryParams(messages="go", model=model, tools=file_tools()))
    events = [e for e in await drain(run) if e.type != "stream_event"]
    assert [e.type for e in events[:3]] == ["stream_request_start", "assistant", "progress"]
    assert run.trace.switches == {"streaming_tool_execution": False, "context": False, "hooks": False,
                                  **RECOVERY_OFF, **TOOLS_OFF}


async def test_a_call_cut_by_max_tokens_never_runs_but_the_complete_one_did(offline):
    ran: list[str] = []
    model = offline([S.max_tokens_cut(S.tool_use("Read", {"path": "a"}, id="T1"), "Writing",
                                      S.tool_use("Write", {"path": "b" * 200}, id="T2")), S.reply("ok")])
    run = query(QueryParams(messages="x", model=model, tools=file_tools(ran=ran), permission_mode="bypass",
                            streaming_tool_execution=True))
    await drain(run)
    assert ran == ["Read a"]
    assert requests_of(model)[1]["messages"][-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"}]


SAME_STATE_SCRIPTS = {
    "three reads": [S.reply("Reading.", *[S.tool_use("Read", {"path": p}) for p in "abc"]), S.reply("Read all.")],
    "read, write, read": [S.reply(S.tool_use("Read", {"path": "a"}), S.tool_use("Write", {"path": "b"}),
                                  S.tool_use("Read", {"path": "c"}), "Done soon."),
                          S.reply(S.tool_use("Read", {"path": "b"})), S.reply("All done.")],
    "unknown tool and bad input": [S.reply(S.tool_use("Nope", {}), S.tool_use("Read", {"wrong": 1})),
                                   S.reply("I see.")],
}


def checkpoint_without_events(point) -> dict:
    return point.model_dump(exclude={"events"})


@pytest.mark.parametrize("script", SAME_STATE_SCRIPTS.values(), ids=SAME_STATE_SCRIPTS.keys())
async def test_the_same_script_gives_the_same_state_with_the_switch_on_and_off(offline, script):
    async def one_run(streaming: bool):
        model = offline(script)
        run = query(QueryParams(messages="go", model=model, tools=file_tools({"a": 0.03, "c": 0.01}),
                                permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids()),
                                streaming_tool_execution=streaming))
        await drain(run)
        return run, requests_of(model)

    (off, off_requests), (on, on_requests) = await one_run(False), await one_run(True)
    assert on.terminal == off.terminal
    assert [checkpoint_without_events(p) for p in on.trace.checkpoints] == \
        [checkpoint_without_events(p) for p in off.trace.checkpoints]
    assert [m.model_dump() for m in on.messages] == [m.model_dump() for m in off.messages]
    assert on_requests == off_requests
    # what the State inspector shows, checkpoint by checkpoint, is the same too
    from dreamloop.widgets import StateInspector

    seen = [StateInspector(off.trace), StateInspector(on.trace)]
    for index in range(len(off.trace.checkpoints)):
        shown = []
        for inspector in seen:
            inspector.slider.value = index
            inspector.render()
            shown.append([inspector.header.value, *(pane.value for pane in inspector.panes.values())])
        assert shown[0] == shown[1]


# ---------------------------------------------------------------------------
# Interrupts with the switch on: every point leaves a transcript the API accepts


async def interrupted_session(offline, script_first, when, tools, *, after: float | None = None):
    """Run ``script_first`` with the switch on, abort at the first event for which ``when(event)`` holds
    (``after`` seconds later, as a click that lands mid-await), then send a follow-up; returns (the first
    Terminal, its closing results message, the engine)."""
    model = offline([script_first, S.reply("Understood.")])
    engine = QueryEngine(model=model, tools=tools, permission_mode="bypass", streaming_tool_execution=True)
    fired = False
    async for event in engine.submit_message("go"):
        if not fired and when(event):
            fired = True
            if after is None:
                engine.last_run.abort("stop")
            else:
                asyncio.get_running_loop().call_later(after, engine.last_run.abort, "stop")
    terminal = engine.terminal
    closing = [m for m in engine.messages if m.type == "user" and m.source_tool_use_ids]
    async for _ in engine.submit_message("never mind"):
        pass
    assert engine.terminal.reason == "completed"
    sent = requests_of(model)[-1]["messages"]
    assert sent[-1]["content"][-1] == {"type": "text", "text": "never mind"}
    return terminal, (closing[-1] if closing else None), engine


def once(*wanted: tuple[str, str]):
    """A ``when`` that holds once every (stage, tool_use_id) in ``wanted`` was seen in the progress."""
    seen: set[tuple[str, str]] = set()

    def when(event) -> bool:
        if event.type == "progress":
            seen.add((event.data["stage"], event.tool_use_id))
        return seen >= set(wanted)

    return when


async def test_interrupt_before_any_call_started(offline):
    first = paced(S.tool_use("Read", {"path": "a"}, id="T1"), LONG_TEXT)
    when = lambda e: e.type == "stream_event" and e.event.type == "content_block_stop"  # noqa: E731
    ran: list[str] = []
    terminal, closing, _ = await interrupted_session(offline, first, when, file_tools(ran=ran))
    assert terminal.reason == "aborted_streaming"
    assert ran == []
    assert contents(closing) == [NOT_STARTED]


async def test_f14_interrupt_while_one_call_runs_and_another_waits(offline):
    """F14: T1 (not safe) runs, T2 waits behind it: both is_error, with different texts."""
    first = paced(S.tool_use("Write", {"path": "slow"}, id="T1"), S.tool_use("Write", {"path": "b"}, id="T2"),
                  LONG_TEXT)
    ran: list[str] = []
    t2_complete = lambda e: e.type == "stream_event" and e.event.type == "content_block_stop" \
        and e.event.index == 1  # noqa: E731  (T1 started at its own block's end, long before)
    terminal, closing, _ = await interrupted_session(offline, first, t2_complete, file_tools({"slow": 5}, ran))
    assert terminal.reason == "aborted_streaming"
    assert ran == ["Write slow"]
    assert contents(closing) == [INTERRUPTED, NOT_STARTED]
    assert all(block["is_error"] for block in closing.message["content"])


async def test_interrupt_while_some_calls_run_keeps_the_finished_ones(offline):
    first = paced(S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "slow"}, id="T2"),
                  LONG_TEXT)
    terminal, closing, _ = await interrupted_session(offline, first, once(("done", "T1"), ("started", "T2")),
                                                     file_tools({"slow": 5}))
    assert terminal.reason == "aborted_streaming"
    assert contents(closing) == ["contents of a", INTERRUPTED]


async def test_interrupt_after_all_calls_finished_while_the_model_streams(offline):
    first = paced(S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2"), LONG_TEXT)
    terminal, closing, engine = await interrupted_session(offline, first, once(("done", "T1"), ("done", "T2")),
                                                          file_tools())
    assert terminal.reason == "aborted_streaming"
    assert contents(closing) == ["contents of a", "contents of b"]
    kept = [m for m in engine.messages if m.type == "assistant"][0]
    assert kept.message.stop_reason is None  # the partial message is kept, closed with the results
    assert [b.type for b in kept.message.content] == ["tool_use", "tool_use"]


async def test_interrupt_during_the_tool_phase(offline):
    first = S.reply(S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "slow"}, id="T2"))
    when = lambda e: e.type == "assistant"  # noqa: E731  (the stream ended; the click lands while T2 runs)
    terminal, closing, _ = await interrupted_session(offline, first, when, file_tools({"slow": 5}), after=0.05)
    assert terminal.reason == "aborted_tools"
    assert closing.message["content"][1]["content"] == INTERRUPTED


@pytest.mark.parametrize("streaming", [False, True], ids=["off", "on"])
async def test_f1_interrupt_while_parallel_tools_run(offline, streaming):
    model = offline([
        S.reply("Reading both", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2")),
        S.reply("Summary of a."),
    ])
    engine = QueryEngine(model=model, tools=file_tools({"b": 5}), streaming_tool_execution=streaming)
    when = once(("done", "T1"), ("started", "T2"))
    async for event in engine.submit_message("read a and b"):
        if when(event):
            engine.last_run.abort("interrupt")
    assert engine.terminal.reason in ("aborted_streaming", "aborted_tools") if streaming else "aborted_tools"
    results = [m for m in engine.messages if m.type == "user" and m.source_tool_use_ids][-1].message["content"]
    assert results == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"},
        {"type": "tool_result", "tool_use_id": "T2", "content": INTERRUPTED, "is_error": True},
    ]
    async for _ in engine.submit_message("never mind, summarise a"):
        pass
    sent = requests_of(model)[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["type"] for b in sent[2]["content"]] == ["tool_result", "tool_result", "text", "text"]
    assert sent[2]["content"][2]["text"] == INTERRUPTED_TOOLS_NOTE  # the model is told it was interrupted
    assert sent[2]["content"][3]["text"] == "never mind, summarise a"
    assert engine.terminal.reason == "completed"


@pytest.mark.parametrize("streaming", [False, True], ids=["off", "on"])
async def test_f14_in_the_tool_phase(offline, streaming):
    model = offline([S.reply(S.tool_use("Write", {"path": "slow"}, id="T1"), S.tool_use("Write", {"path": "b"},
                                                                                          id="T2")),
                     S.reply("ok")])
    engine = QueryEngine(model=model, tools=file_tools({"slow": 5}), permission_mode="bypass",
                         streaming_tool_execution=streaming)
    async for event in engine.submit_message("write"):
        if event.type == "progress" and event.data["stage"] == "started":
            asyncio.get_running_loop().call_later(0.05, engine.last_run.abort)  # a click mid-await
    results = [m for m in engine.messages if m.type == "user" and m.source_tool_use_ids][-1]
    assert contents(results) == [INTERRUPTED, NOT_STARTED]
    async for _ in engine.submit_message("go on"):
        pass


async def test_a_model_error_keeps_started_calls_real_or_interrupted_never_not_run(offline):
    model = offline([paced(S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "slow"}, id="T2"),
                           S.tool_use("Write", {"path": "c"}, id="T3"), LONG_TEXT,
                           fault=S.Fault(kind="stream_error", after_events=40))])
    ran: list[str] = []

    async def consume():
        run = query(QueryParams(messages="x", model=model, tools=file_tools({"slow": 5}, ran),
                                permission_mode="bypass", streaming_tool_execution=True))
        await drain(run)
        return run

    run = await asyncio.wait_for(consume(), 5)
    assert run.terminal.reason == "api_error"  # the stream's error event (no recovery here)
    t1, t2, t3 = run.messages[-2].message["content"]
    assert t1 == {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"}
    assert t2["is_error"] and t2["content"].startswith("Stopped while running because the model's response failed")
    assert t3["is_error"] and t3["content"].startswith("Not run: API error")
    assert ran == ["Read a", "Read slow"]


# ---------------------------------------------------------------------------
# A permission prompt while the model still streams


async def test_a_permission_prompt_while_streaming_lets_the_stream_go_on(offline):
    asked = asyncio.Event()
    events_while_asking: list[str] = []

    async def ask(tool_, input, reason):
        asked.set()
        for _ in range(200):  # answer only once the stream has gone on for a while
            if len(events_while_asking) >= 10:
                break
            await asyncio.sleep(0.01)
        from dreamloop.tools import Allow
        return Allow()

    ran: list[str] = []
    model = offline([paced(S.tool_use("Write", {"path": "a"}, id="T1"), LONG_TEXT), S.reply("written")])
    run = query(QueryParams(messages="write", model=model, tools=file_tools(ran=ran), ask=ask,
                            streaming_tool_execution=True))
    async for event in run:
        if asked.is_set() and event.type == "stream_event":
            events_while_asking.append(event.event.type)
    assert len(events_while_asking) >= 10
    assert ran == ["Write a"]
    assert run.terminal.reason == "completed"


# ---------------------------------------------------------------------------
# Seeing it: the live view, the timeline, the flowchart


async def test_the_live_view_lights_run_tools_while_the_model_streams(offline):
    from dreamloop.widgets import LiveView

    model = offline([paced(S.tool_use("Read", {"path": "a"}, id="T1"), LONG_TEXT), S.reply("done")])
    run = query(QueryParams(messages="go", model=model, tools=file_tools(), streaming_tool_execution=True))
    live = LiveView()
    both_lit = []
    async for event in live.follow(run):
        if event.type == "progress":
            both_lit.append((live.phase, live.also, 'id="phase-model" class="phase active"' in live.diagram.value,
                             'id="phase-tools" class="phase active"' in live.diagram.value))
    assert both_lit[0] == ("tools", frozenset({"model"}), True, True)
    assert live.phases[:6] == ["state", "context", "model", "tools", "decide", "check"]  # ran while streaming
    assert "model + tools" not in live.status.value  # the run ended: the Terminal is shown


async def test_the_timeline_shows_calls_overlapping_the_stream(offline):
    from dreamloop.widgets import Timeline

    async def one_run(streaming: bool):
        script = [paced(*[S.tool_use("Read", {"path": p}) for p in "ab"], LONG_TEXT), S.reply("done")]
        run = query(QueryParams(messages="go", model=offline(script), tools=file_tools({"a": 0.05, "b": 0.05}),
                                streaming_tool_execution=streaming))
        await drain(run)
        return Timeline(run.trace)

    off, on = await one_run(False), await one_run(True)
    assert off.turns[0].early() == [] and len(on.turns[0].early()) == 2
    assert on.turns[0].summary(times=False) == \
        "turn 1: model, tools: Read ×2 in parallel (started while the model streamed)"
    assert off.turns[0].summary(times=False) == "turn 1: model, tools: Read ×2 in parallel"
    assert 'class="stream-end"' in on.chart.value and 'class="stream-end"' not in off.chart.value

    from dreamloop.widgets import side_by_side

    both = side_by_side({"switch off": off.trace, "switch on": on.trace})
    assert repr(both) == "side_by_side('switch off', 'switch on')"
    first, second = both.timelines["switch off"], both.timelines["switch on"]
    stored = both._repr_mimebundle_()["text/html"]  # the stored output shows both charts, as images
    pictures = [base64.b64decode(data).decode() for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', stored)]
    assert len(pictures) == 2 and "<svg" not in stored
    assert 'class="stream-end"' not in pictures[0] and 'class="stream-end"' in pictures[1]
    assert first.seconds == second.seconds == max(first._end(), second._end())  # one time axis for both


def test_the_flowchart_lights_several_phases():
    from dreamloop.diagram import loop_flowchart_svg

    svg = loop_flowchart_svg(("model", "tools"))
    assert svg.count('class="phase active"') == 2
    assert loop_flowchart_svg("model").count('class="phase active"') == 1
    with pytest.raises(ValueError, match="unknown phase 'tool'"):
        loop_flowchart_svg(("model", "tool"))


async def test_the_trace_keeps_the_switches_through_save_and_load(offline, tmp_path):
    from dreamloop.trace import Trace

    run = query(QueryParams(messages="hi", model=offline([S.reply("hello")]), streaming_tool_execution=True))
    await drain(run)
    loaded = Trace.load(run.trace.save(tmp_path / "t.jsonl"))
    assert loaded.switches == {"streaming_tool_execution": True, "context": False, "hooks": False,
                                  **RECOVERY_OFF, **TOOLS_OFF}
    old = tmp_path / "old.jsonl"  # a trace saved before switches existed
    old.write_text('{"kind": "trace", "version": 1}\n')
    assert Trace.load(old).switches == {}


def test_query_params_list_their_switches():
    from dreamloop.model import offline as make_offline

    params = QueryParams(messages="hi", model=make_offline([]))
    assert params.switches() == {"streaming_tool_execution": False, "context": False, "hooks": False,
                                 **RECOVERY_OFF, **TOOLS_OFF}
    from dreamloop.hooks import Hooks

    on = QueryParams(messages="hi", model=make_offline([]), streaming_tool_execution=True, hooks=Hooks())
    assert on.switches() == {"streaming_tool_execution": True, "context": False, "hooks": True, **RECOVERY_OFF,
                             **TOOLS_OFF}


# ---------------------------------------------------------------------------
# `dreamloop run` is the production loop: the switch is on unless --no-streaming-tools


@pytest.mark.parametrize("flags, on", [([], True), (["--no-streaming-tools"], False)])
def test_dreamloop_run_turns_streaming_tools_on_by_default(flags, on, capsys, tmp_path):
    import json

    from dreamloop.cli import main
    from dreamloop.demo import copy_sample_project
    from dreamloop.trace import Trace

    workspace = copy_sample_project(tmp_path / "sample")
    trace = tmp_path / "run.jsonl"
    status = main(["run", "change value to 2", "--workspace", str(workspace), "--permission-mode", "bypass",
                   "--json", "--trace", str(trace), *flags])
    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["terminal"]["reason"] == "completed"
    switches = result["switches"]  # run turns every branch on (the context pipeline's options as JSON)
    assert {k: switches[k] for k in ("streaming_tool_execution", "hooks")} == {"streaming_tool_execution": on,
                                                                               "hooks": True}
    assert isinstance(switches["context"], dict) and Trace.load(trace).switches == switches
    assert "value = 2" in (workspace / "config.py").read_text()


# ---------------------------------------------------------------------------
# The ordering rule as a pure function

S_, U_ = True, False  # concurrency-safe, not


@pytest.mark.parametrize("calls, starting", [
    ([], []),
    ([(S_, "queued"), (S_, "queued"), (U_, "queued"), (S_, "queued")], [0, 1]),
    ([(U_, "queued"), (S_, "queued")], [0]),
    ([(S_, "running"), (S_, "queued")], [1]),
    ([(S_, "running"), (U_, "queued"), (S_, "queued")], []),  # the waiting Edit holds back the read after it
    ([(U_, "running"), (S_, "queued"), (S_, "queued")], []),
    ([(U_, "done"), (S_, "queued"), (S_, "queued"), (U_, "queued")], [1, 2]),
    ([(S_, "done"), (U_, "queued"), (U_, "queued")], [1]),  # one non-safe call at a time
    ([(S_, "done"), (S_, "running"), (S_, "queued"), (U_, "queued"), (S_, "queued")], [2]),
])
def test_ready_to_start(calls, starting):
    from dreamloop.tools import ready_to_start

    assert ready_to_start(calls) == starting


@pytest.mark.parametrize("streaming", [False, True], ids=["off", "on"])
async def test_a_denied_bash_call_cancels_nothing(offline, tmp_path, streaming):
    """A Bash call that never ran (denied) is not a failure of the plan: the calls after it run."""
    from dreamloop.tools import Deny

    async def no_rm(tool_, input, context):
        return Deny("rm is not allowed here") if input.get("command", "").startswith("rm") else dl_allow()

    def dl_allow():
        from dreamloop.tools import Allow
        return Allow()

    model = offline([S.reply(S.tool_use("Bash", {"command": "rm -rf build"}, id="T1"),
                             S.tool_use("Bash", {"command": "echo ok"}, id="T2")), S.reply("fine")])
    run = query(QueryParams(messages="x", model=model, tools=builtin_tools(), workspace=tmp_path, can_use_tool=no_rm,
                            streaming_tool_execution=streaming))
    await drain(run)
    assert contents(run.messages[2]) == ["rm is not allowed here", "ok"]


async def test_with_hooks_the_same_state_and_history_order_with_the_switch_on_and_off(offline):
    """Hooks' records are history (their context goes to the model): made while the model streams, they
    still come after the assistant message, with ids derived from their call, so nothing shifts."""
    from dreamloop.hooks import Hooks, PostToolUseDecision

    def lint(input):
        return PostToolUseDecision(additional_context=f"lint: {input.tool_input['path']} is fine")

    script = [paced(S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2"),
                    LONG_TEXT), S.reply("done")]

    async def one_run(streaming: bool):
        model = offline(script)
        engine = QueryEngine(model=model, tools=file_tools(), hooks=Hooks().add("post_tool_use", lint),
                             deps=QueryDeps(uuid=counting_uuids()), streaming_tool_execution=streaming)
        events = [event async for event in engine.submit_message("read a and b")]
        return engine, events, requests_of(model)

    (off, _, off_requests), (on, on_events, on_requests) = await one_run(False), await one_run(True)
    assert on_requests == off_requests

    def timeless(message):  # a hook record says how long the hook took: the one thing allowed to differ
        dumped = message.model_dump()
        if dumped["type"] == "attachment":
            dumped["attachment"].pop("durationMs", None)
        return dumped

    assert [timeless(m) for m in on.messages] == [timeless(m) for m in off.messages]
    assert [checkpoint_without_events(p) for p in on.last_run.trace.checkpoints] == \
        [checkpoint_without_events(p) for p in off.last_run.trace.checkpoints]
    kinds = [e.type for e in on_events if e.type not in ("stream_event", "progress")]
    assert kinds.index("assistant") < kinds.index("attachment")  # after the response, as with the switch off
    first_done = next(i for i, e in enumerate(on_events) if e.type == "progress" and e.data["stage"] == "done")
    assert first_done < next(i for i, e in enumerate(on_events) if e.type == "assistant")  # ran while streaming
    assert "lint: a is fine" in json.dumps(on_requests[1])
