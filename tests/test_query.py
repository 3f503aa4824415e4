"""query(): phases, State, Terminal reasons and the field cases F1–F5, F10.

Every test runs the real loop against the offline API; the ``offline``
fixture (conftest) asserts that no request the loop sent was rejected.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.engine import QueryEngine
from dreamloop.messages import AttachmentMessage, user_message
from dreamloop.endings import INTERRUPTED_NOTE, INTERRUPTED_TOOLS_NOTE
from dreamloop.query import QueryParams, query
from dreamloop.tools import builtin_tools, tool


class PathInput(BaseModel):
    path: str


class NoInput(BaseModel):
    pass


def reader(delays: dict[str, float] | None = None):
    """A concurrency-safe tool that 'reads' a path after a delay."""
    delays = delays or {}

    @tool(PathInput, name="Read", read_only=True)
    async def read(input: PathInput) -> str:
        """Read a file."""
        await asyncio.sleep(delays.get(input.path, 0))
        return f"contents of {input.path}"

    return read


@tool(NoInput, name="f", read_only=True)
async def noop(input: NoInput) -> str:
    """Do nothing."""
    return "ok"


async def drain(run):
    return [event async for event in run]


def requests_of(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


# ---------------------------------------------------------------------------
# The ordinary path: two turns, State and transition


async def test_tool_turn_then_answer_completes_with_two_states(offline):
    model = offline([
        S.reply("Reading a.", S.tool_use("Read", {"path": "a"}, id="T1")),
        S.reply("a says hello."),
    ])
    run = query(QueryParams(messages="read a", model=model, tools=[reader()]))
    events = await drain(run)

    assert run.terminal.reason == "completed"
    assert run.terminal.turn_count == 2
    kinds = [e.type for e in events if e.type != "stream_event"]
    assert kinds == ["stream_request_start", "assistant", "progress", "progress", "user",
                     "stream_request_start", "assistant"]
    first, second = run.trace.checkpoints
    assert (first.turn_count, first.transition, first.next_transition.reason) == (1, None, "next_turn")
    assert (second.turn_count, second.transition.reason) == (2, "next_turn")
    assert second.state_messages == first.messages_after
    second_request = requests_of(model)[1]["messages"]
    assert [m["role"] for m in second_request] == ["user", "assistant", "user"]
    assert second_request[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"}]


async def test_terminal_is_unavailable_before_the_end(offline):
    run = query(QueryParams(messages="hi", model=offline([S.reply("hello")])))
    with pytest.raises(RuntimeError, match="not ended yet"):
        run.terminal
    await drain(run)
    assert run.terminal.reason == "completed"


def test_params_need_a_model():
    with pytest.raises(ValueError, match="AnthropicModel"):
        QueryParams(messages="hi", model="claude")


# F1 (interrupt while parallel tools run) is in test_streaming_tools.py, with the switch off and on.


async def test_cancelled_task_closes_transcript_and_reraises(offline):
    model = offline([S.reply(S.tool_use("Read", {"path": "slow"}, id="T1"))])
    run = query(QueryParams(messages="read", model=model, tools=[reader({"slow": 10})]))

    tool_started = asyncio.Event()

    async def consume():
        async for event in run:
            if event.type == "progress" and event.data["stage"] == "started":
                tool_started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(tool_started.wait(), 10)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert run.terminal.reason == "aborted_tools"
    assert [m.type for m in run.messages[-3:]] == ["user", "user", "system"]  # the results, the note, the notice
    assert run.messages[-3].message["content"][0]["is_error"] is True
    assert run.messages[-2].is_meta and run.messages[-2].message["content"] == INTERRUPTED_TOOLS_NOTE


async def test_an_interrupted_read_is_not_told_it_may_have_changed_things(offline):
    """A learner pressed Stop while chapter 03's Read ran: the result said it "may have made changes" (issue 35)."""
    from dreamloop.tools import INTERRUPTED

    model = offline([S.reply(S.tool_use("Read", {"path": "slow"}, id="T1"))])
    run = query(QueryParams(messages="read", model=model, tools=[reader({"slow": 10})]))
    async for event in run:
        if event.type == "progress" and event.data["stage"] == "started":
            run.abort()
    assert run.terminal.reason == "aborted_tools"
    (result,) = run.messages[-3].message["content"]
    assert result["content"] == INTERRUPTED and "unless it only reads" in result["content"]


async def test_abort_while_streaming(offline):
    model = offline([S.reply("word " * 200, tokens_per_second=400), S.reply("ok")])
    engine = QueryEngine(model=model)
    async for event in engine.submit_message("talk"):
        if event.type == "stream_event" and event.event.type == "content_block_delta":
            engine.last_run.abort()
    assert engine.terminal.reason == "aborted_streaming"
    async for _ in engine.submit_message("go on"):
        pass
    assert engine.terminal.reason == "completed"
    # the next request tells the model the person stopped it (Claude Code's session files show it does too)
    sent = [r.body for r in model.api.requests if r.path.endswith("/v1/messages")][-1]["messages"]
    assert [b["text"] for b in sent[-1]["content"]][-2:] == [INTERRUPTED_NOTE, "go on"]


async def test_abort_while_streaming_answers_finished_tool_use(offline):
    model = offline([
        S.reply(S.tool_use("Read", {"path": "a"}, id="T1"), "and now a long text " * 40, tokens_per_second=500),
        S.reply("ok"),
    ])
    engine = QueryEngine(model=model, tools=[reader()])
    async for event in engine.submit_message("read"):
        if event.type == "stream_event" and event.event.type == "content_block_delta" \
                and event.event.delta.type == "text_delta":
            engine.last_run.abort()
    assert engine.terminal.reason == "aborted_streaming"
    closing, note = engine.messages[-3:-1]
    assert closing.type == "user" and note.message["content"] == INTERRUPTED_NOTE  # the model is told
    assert closing.message["content"][0]["tool_use_id"] == "T1"
    assert closing.message["content"][0]["is_error"] is True
    async for _ in engine.submit_message("again"):
        pass
    assert engine.terminal.reason == "completed"


# ---------------------------------------------------------------------------
# F3: queued input and attachments beside the results


async def test_f3_queued_text_and_attachment_follow_results(offline):
    model = offline([S.reply(S.tool_use("Read", {"path": "make"}, id="T1")), S.reply("done")])
    queued = [
        AttachmentMessage(attachment={"type": "queued_command", "prompt": "also check README"}),
        AttachmentMessage(attachment={"type": "edited_file", "path": "a.py", "summary": "one line changed"}),
    ]
    run = query(QueryParams(messages="make", model=model, tools=[reader()],
                            queued_input=lambda: [queued.pop(0) for _ in range(len(queued))]))
    await drain(run)
    last = requests_of(model)[1]["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text", "text"]
    assert last["content"][1]["text"] == "also check README"
    assert "a.py" in last["content"][2]["text"]


async def test_engine_queue_drained_at_phase_5(offline):
    model = offline([S.reply(S.tool_use("Read", {"path": "x"}, id="T1")), S.reply("done")])
    engine = QueryEngine(model=model, tools=[reader({"x": 0.05})])
    async for event in engine.submit_message("go"):
        if event.type == "progress" and event.data["stage"] == "started":
            engine.enqueue("also check README")
    assert requests_of(model)[1]["messages"][-1]["content"][-1] == {"type": "text", "text": "also check README"}
    assert engine.queue == []


# ---------------------------------------------------------------------------
# F4: stop_reason tool_use without a tool_use block; incomplete streams


@pytest.mark.parametrize("content", [[], [S.text("Let me look")]])
async def test_f4_stop_reason_tool_use_without_block_completes(offline, content):
    model = offline([S.Turn(content=content, stop_reason="tool_use")])
    run = query(QueryParams(messages="look", model=model, tools=[reader()]))
    events = await drain(run)
    assert run.terminal.reason == "completed"
    assert len(requests_of(model)) == 1
    warnings = [e for e in events if e.type == "system"]
    assert warnings and warnings[0].subtype == "stop_reason_without_tool_use"
    assert not any(e.type == "progress" for e in events)
    assert all(m.type != "assistant" or m.message.content for m in run.messages)


async def test_f4_stream_cut_before_message_delta_is_model_error(offline):
    model = offline([S.reply("partial answer", S.tool_use("Read", {"path": "a"}, id="T1"), stop_reason=None)])
    run = query(QueryParams(messages="x", model=model, tools=[reader()]))
    events = await drain(run)
    assert run.terminal.reason == "model_error"
    notice = [e for e in events if e.type == "system"][0]
    assert notice.subtype == "incomplete_response"
    assert [m.type for m in run.messages[-3:]] == ["assistant", "user", "system"]
    assert run.messages[-2].message["content"][0]["is_error"] is True  # the dangling tool_use answered


# ---------------------------------------------------------------------------
# F5: empty text blocks never go back


async def test_f5_empty_text_block_is_not_replayed(offline):
    model = offline([
        S.reply(S.text(""), S.tool_use("f", {}, id="T1"), S.tool_use("f", {}, id="T2")),
        S.reply("done"),
    ])
    run = query(QueryParams(messages="go", model=model, tools=[noop]))
    await drain(run)
    assistant = requests_of(model)[1]["messages"][1]
    assert [b["type"] for b in assistant["content"]] == ["tool_use", "tool_use"]


# ---------------------------------------------------------------------------
# F10 and the other Terminal reasons


async def test_f10_max_turns(offline, tmp_path):
    model = offline(lambda body, i: S.reply(S.tool_use("Bash", {"command": "echo noop"})))
    run = query(QueryParams(messages="loop", model=model, tools=builtin_tools(), workspace=tmp_path,
                            permission_mode="bypass", max_turns=3))
    events = await drain(run)
    assert len(requests_of(model)) == 3
    assert run.terminal.reason == "max_turns"
    reached = [e for e in events if e.type == "attachment"]
    assert reached[-1].attachment == {"type": "max_turns_reached", "max_turns": 3, "turn_count": 4}
    # the source: both carry nextTurnCount (the turn the loop refused to start)
    assert run.terminal.turn_count == reached[-1].attachment["turn_count"] == 4
    assert run.trace.checkpoints[-1].turn_count == 3  # the State the last turn ran in
    third_results = [e for e in events if e.type == "user"][-1]
    assert third_results.message["content"][0]["content"].strip() == "noop"


async def test_max_turns_1_still_runs_the_first_tools(offline):
    model = offline([S.reply(S.tool_use("f", {}, id="T1"))])
    run = query(QueryParams(messages="x", model=model, tools=[noop], max_turns=1))
    await drain(run)
    assert run.terminal.reason == "max_turns"
    assert run.terminal.turn_count == 2
    assert run.messages[-2].message["content"][0]["content"] == "ok"


async def test_unrecovered_api_error_is_api_error(offline):
    model = offline([S.http_error(500)] * 3)
    run = query(QueryParams(messages="x", model=model))
    events = await drain(run)
    assert run.terminal.reason == "api_error"  # an API error response (Claude Code 2.1.332 names it so)
    assert [e.subtype for e in events if e.type == "system"] == ["api_error"]
    assert "500" in run.terminal.error or "Internal" in run.terminal.error


async def test_mid_stream_error_answers_dangling_tool_use(offline):
    model = offline([S.stream_error(S.tool_use("f", {}, id="T1"), "more text", after_events=6)])
    run = query(QueryParams(messages="x", model=model, tools=[noop]))
    await drain(run)
    assert run.terminal.reason == "api_error"
    assert run.terminal.error == "API error: overloaded_error: Overloaded"
    kinds = [m.type for m in run.messages]
    assert kinds[-3:] == ["assistant", "user", "system"]
    assert run.messages[-2].message["content"][0]["tool_use_id"] == "T1"


async def test_prompt_too_long_terminal_keeps_error_out_of_history(offline):
    model = offline([S.prompt_too_long(210_000)])
    run = query(QueryParams(messages="x", model=model))
    await drain(run)
    assert run.terminal.reason == "prompt_too_long"
    assert "prompt is too long" in run.terminal.error
    assert not any(m.type == "assistant" for m in run.messages)


async def test_max_tokens_cut_never_runs_the_cut_tool(offline):
    ran = []

    @tool(PathInput, name="Write", read_only=False)
    async def write(input: PathInput) -> str:
        """Write."""
        ran.append(input.path)
        return "written"

    model = offline([S.max_tokens_cut("Writing", S.tool_use("Write", {"path": "a" * 200}))])
    run = query(QueryParams(messages="x", model=model, tools=[write], permission_mode="bypass"))
    events = await drain(run)
    assert ran == []
    assert run.terminal.reason == "completed"
    assert [e.subtype for e in events if e.type == "system"] == ["max_output_tokens"]


# ---------------------------------------------------------------------------
# Tools through the loop: bad input and unknown tool are results, not exceptions


async def test_bad_input_and_unknown_tool_become_error_results(offline):
    model = offline([
        S.reply(S.tool_use("Read", {"wrong": 1}, id="T1"), S.tool_use("Nope", {}, id="T2")),
        S.reply("I see the errors."),
    ])
    run = query(QueryParams(messages="x", model=model, tools=[reader()]))
    await drain(run)
    blocks = requests_of(model)[1]["messages"][-1]["content"]
    assert blocks[0]["is_error"] and "path" in blocks[0]["content"]
    assert blocks[1] == {"type": "tool_result", "tool_use_id": "T2",
                         "content": "Error: No such tool available: Nope", "is_error": True}
    assert run.terminal.reason == "completed"


async def test_transcript_is_persisted_and_resumable(offline, tmp_path):
    path = tmp_path / "session.jsonl"
    model = offline([S.reply(S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("done"), S.reply("again")])
    engine = QueryEngine(model=model, tools=[reader()], transcript=path)
    async for _ in engine.submit_message("read a"):
        pass
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["user", "assistant", "progress", "user", "assistant"]
    assert [r["parentUuid"] for r in records] == [None] + [r["uuid"] for r in records[:-1]]
    assert len(engine.messages) == 4  # the finished call's record is not a loop message
    resumed = QueryEngine.resume(path, model=model, tools=[reader()])
    assert [m.uuid for m in resumed.messages] == [m.uuid for m in engine.messages]
    assert resumed.repair is None
    async for _ in resumed.submit_message("once more"):
        pass
    assert len(path.read_text().splitlines()) == 7
    assert requests_of(model)[2]["messages"][-1]["content"] == [{"type": "text", "text": "once more"}]


async def test_trace_round_trips_through_jsonl(offline, tmp_path):
    from dreamloop.trace import Trace

    model = offline([S.reply(S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("done")])
    run = query(QueryParams(messages=[user_message("read a")], model=model, tools=[reader()]))
    await drain(run)
    loaded = Trace.load(run.trace.save(tmp_path / "t.jsonl"))
    assert len(loaded) == 2 and loaded.terminal == run.terminal
    assert [m.uuid for m in loaded.resolve(loaded.checkpoints[1].messages_after)] == [m.uuid for m in run.messages]


async def test_counting_uuids_make_every_id_deterministic(offline):
    from dreamloop.deps import QueryDeps, counting_uuids

    async def one_run():
        model = offline([S.reply(S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("done")])
        run = query(QueryParams(messages="read a", model=model, tools=[reader()],
                                deps=QueryDeps(uuid=counting_uuids())))
        await drain(run)
        return [m.uuid for m in run.messages], list(run.trace.messages)

    first, second = await one_run(), await one_run()
    assert first == second
    assert first[0][0] == "00000000-0000-4000-8000-000000000001"
