"""Every run ends in a Terminal, whatever the stream holds, and no abort point double-books (issue 9).

Streams are served raw (``RawTurn``) so they can break the protocol or look
like a later API version; the ``offline`` fixture (conftest) asserts that no
request the loop sent was rejected.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.errors import ScriptExhausted
from dreamloop.fake_api import RawTurn
from dreamloop.messages import user_message
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool

# -- a raw stream, event by event -------------------------------------------

START = {"type": "message_start", "message": {
    "id": "msg_raw", "type": "message", "role": "assistant", "model": "claude-scripted-1", "content": [],
    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}
STOP = {"type": "message_stop"}


def delta(stop_reason="end_turn"):
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 7}}


def text_block(index, value="Looking."):
    return [{"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": value}},
            {"type": "content_block_stop", "index": index}]


def tool_block(index, raw_json, id="T1", name="probe"):
    return [{"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}},
            {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": raw_json}},
            {"type": "content_block_stop", "index": index}]


def raw(*events):
    """A RawTurn streaming ``events``; a str is sent as a frame verbatim."""
    frames = [e if isinstance(e, str) else f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
    return RawTurn(sse="".join(frames))


class ProbeInput(BaseModel):
    n: int = 0


def probe_tool(calls):
    @tool(ProbeInput, name="probe", read_only=True)
    async def probe(input: ProbeInput) -> str:
        """Record the call."""
        calls.append(input.n)
        return f"probed {input.n}"

    return probe


async def drain(run):
    return [event async for event in run]


def requests_of(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages") and r.status == 200]


# ---------------------------------------------------------------------------
# A stream corrupt as a stream: model_error, honest text, dangling calls answered

CORRUPT = {
    "no message_start": ([*text_block(0), delta(), STOP], "content_block_start before message_start"),
    "delta for a block never started": (
        [START, *tool_block(0, '{"n": 1}'), {"type": "content_block_delta", "index": 5,
                                             "delta": {"type": "text_delta", "text": "x"}}, delta(), STOP],
        "content_block_delta for block 5, which never started"),
    "stop for a block never started": (
        [START, *tool_block(0, '{"n": 1}'), {"type": "content_block_stop", "index": 3}, delta(), STOP],
        "content_block_stop for block 3, which never started"),
    "a data frame that is not JSON": (
        [START, *tool_block(0, '{"n": 1}'), "event: content_block_start\ndata: {not json\n\n", delta(), STOP],
        "a data frame of the stream is not JSON"),
    "an event that is not an object": (
        [START, *tool_block(0, '{"n": 1}'), "event: content_block_start\ndata: [1, 2]\n\n", delta(), STOP],
        "a stream event without a type"),
    "a text delta for a tool_use block": (
        [START, *tool_block(0, '{"n": 1}')[:2],
         {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}, delta(), STOP],
        "a text_delta for block 0, a tool_use block"),
    "an empty stream": ([], "the stream ended without message_start"),
}


@pytest.mark.parametrize("events, said", CORRUPT.values(), ids=CORRUPT.keys())
async def test_a_corrupt_stream_ends_model_error_and_answers_dangling_calls(offline, events, said):
    calls = []
    model = offline([raw(*events), S.reply("fine now")])
    engine = QueryEngine(model=model, tools=[probe_tool(calls)], deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message("go"):
        pass
    terminal = engine.terminal
    assert terminal.reason == "model_error"
    assert terminal.error.startswith("Malformed stream: ") and said in terminal.error
    notice = engine.messages[-1]
    assert (notice.type, notice.subtype, notice.level) == ("system", "malformed_stream", "error")
    assert calls == []
    finished_tool_use = any(m.type == "assistant" for m in engine.messages)
    if finished_tool_use:  # T1 finished before the stream broke: kept, answered, never run
        results = engine.messages[-2].message["content"]
        assert results[0]["tool_use_id"] == "T1" and results[0]["is_error"]
        assert results[0]["content"].startswith("Not run: Malformed stream")
    async for _ in engine.submit_message("again"):  # the transcript is valid for the next request
        pass
    assert engine.terminal.reason == "completed"


# ---------------------------------------------------------------------------
# What a later API version may add: reported, kept, the run goes on


async def test_an_unknown_stop_reason_is_reported_and_the_run_goes_on(offline):
    calls = []
    model = offline([raw(START, *tool_block(0, '{"n": 1}'), delta("some_future_reason"), STOP), S.reply("done")])
    run = query(QueryParams(messages="go", model=model, tools=[probe_tool(calls)]))
    events = await drain(run)
    assert run.terminal.reason == "completed" and run.terminal.turn_count == 2
    assert calls == [1]
    (notice,) = [e for e in events if e.type == "system"]
    assert notice.subtype == "unknown_stop_reason" and "'some_future_reason'" in notice.content
    assert run.messages[1].message.stop_reason == "some_future_reason"


async def test_an_unknown_event_and_delta_type_are_reported_and_ignored(offline):
    model = offline([raw(START, {"type": "future_event", "x": 1}, *text_block(0, "Hi")[:2],
                         {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "y": 2}},
                         text_block(0)[2], delta(), STOP)])
    run = query(QueryParams(messages="go", model=model))
    events = await drain(run)
    assert run.terminal.reason == "completed"
    (notice,) = [e for e in events if e.type == "system"]
    assert notice.subtype == "unknown_stream_content"
    assert "event type 'future_event'" in notice.content and "delta type 'future_delta'" in notice.content
    assert [b.text for b in run.messages[1].message.content] == ["Hi"]


async def test_an_unknown_block_is_kept_sent_back_as_received_and_survives_the_transcript(offline, tmp_path):
    future = {"type": "future_block", "data": {"nested": [1, None]}, "note": None}
    events = [START, {"type": "content_block_start", "index": 0, "content_block": future},
              {"type": "content_block_stop", "index": 0}, *text_block(1, "Also text."), delta(), STOP]
    model = offline([raw(*events), S.reply("next")])
    path = tmp_path / "session.jsonl"
    engine = QueryEngine(model=model, transcript=path, deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message("go"):
        pass
    assert engine.terminal.reason == "completed"
    assert [m.subtype for m in engine.messages if m.type == "system"] == ["unknown_stream_content"]

    reloaded = load_transcript(path)
    assert [m.model_dump(mode="json") for m in reloaded] == [m.model_dump(mode="json") for m in engine.messages]
    resumed = QueryEngine.resume(path, model=model, deps=QueryDeps(uuid=counting_uuids(100)))
    async for _ in resumed.submit_message("and now?"):
        pass
    sent = requests_of(model)[1]["messages"][1]
    assert sent == {"role": "assistant", "content": [future, {"type": "text", "text": "Also text."}]}


@pytest.mark.parametrize("raw_json, sent", [
    ('{"n": ', "text that is not a JSON object: '{\"n\": '"),
    ("[1, 2]", "a JSON array: [1, 2]"),
    ("7", "a JSON number: 7"),
    ('"seven"', "text that is not a JSON object: 'seven'"),
    ("null", "a JSON null: null"),
])
async def test_a_finished_tool_use_whose_input_is_not_an_object_never_runs(offline, raw_json, sent):
    calls = []
    model = offline([raw(START, *text_block(0), *tool_block(1, raw_json), *tool_block(2, '{"n": 2}', id="T2"),
                         delta("tool_use"), STOP),
                     S.reply("I will send an object next time.")])
    run = query(QueryParams(messages="go", model=model, tools=[probe_tool(calls)]))
    await drain(run)
    assert run.terminal.reason == "completed" and run.terminal.turn_count == 2
    assert calls == [2]  # T2 ran; T1 never did
    second = requests_of(model)[1]["messages"]
    assert second[1]["content"][1] == {"type": "tool_use", "id": "T1", "name": "probe", "input": {}}
    first_result = second[2]["content"][0]
    assert first_result["tool_use_id"] == "T1" and first_result["is_error"] is True
    assert first_result["content"] == f"Error: probe was not run: its input must be a JSON object, but the model sent {sent}"


async def test_a_script_bug_stays_an_exception(offline):
    model = offline([S.reply("only one")])
    engine = QueryEngine(model=model)
    async for _ in engine.submit_message("one"):
        pass
    with pytest.raises(ScriptExhausted):
        async for _ in engine.submit_message("two"):
            pass

    def policy(body, index):
        raise ZeroDivisionError("a learner's bug")

    with pytest.raises(ZeroDivisionError, match="a learner's bug"):
        await drain(query(QueryParams(messages="hi", model=offline(policy))))


# ---------------------------------------------------------------------------
# Aborts: no double bookkeeping at any point


async def test_abort_when_the_results_arrive_adds_no_second_results_message(offline):
    """Issue 9, item 2: the closing path used to add a second identical results message."""
    calls = []
    model = offline([S.reply(S.tool_use("probe", {"n": 1}, id="T1")), S.reply("ok")])
    engine = QueryEngine(model=model, tools=[probe_tool(calls)])
    async for event in engine.submit_message("go"):
        if event.type == "user" and event.source_tool_use_ids:
            engine.last_run.abort()
    assert engine.terminal.reason == "aborted_tools"
    results = [m for m in engine.messages if m.type == "user" and m.source_tool_use_ids]
    assert len(results) == 1 and results[0].message["content"][0]["content"] == "probed 1"
    assert engine.messages[-1].subtype == "interrupted"
    assert engine.messages[-1].content == "Interrupted after every tool call had finished."
    async for _ in engine.submit_message("go on"):
        pass
    last = requests_of(model)[1]["messages"][-1]["content"]
    assert [b.get("tool_use_id") for b in last] == ["T1", None, None]  # one result, the interrupt note, the text
    assert calls == [1]


async def _abort_at(offline, k):
    """Run a two-tool-turn session, abort at the k-th event; return the engine, model, events seen."""
    calls = []
    model = offline([
        S.reply("Probing", S.tool_use("probe", {"n": 1}, id="T1"), S.tool_use("probe", {"n": 2}, id="T2")),
        S.reply(S.tool_use("probe", {"n": 3}, id="T3")),
        S.reply("done"),
        S.reply("after"),
    ])
    engine = QueryEngine(model=model, tools=[probe_tool(calls)], deps=QueryDeps(uuid=counting_uuids()))
    seen = []
    async for event in engine.submit_message("go"):
        seen.append(event.type)
        if len(seen) == k:
            engine.last_run.abort()
    return engine, model, seen, calls


async def test_an_abort_at_every_event_index_leaves_one_result_per_call(offline):
    _, _, events, _ = await _abort_at(offline, 0)
    for k in range(1, len(events) + 1):
        engine, model, _, calls = await _abort_at(offline, k)
        assert engine.terminal.reason in ("aborted_streaming", "aborted_tools", "completed"), k
        assert sorted(calls) == sorted(set(calls)), k  # no call ran twice
        history = [m for m in engine.messages if m.type in ("user", "assistant")]
        for i, message in enumerate(history):
            uses = [b.id for b in message.message.content if b.type == "tool_use"] if message.type == "assistant" else []
            if uses:
                answers = [b["tool_use_id"] for b in history[i + 1].message["content"] if b.get("type") == "tool_result"]
                assert answers == uses, (k, answers, uses)
        async for _ in engine.submit_message("continue"):  # the offline fixture rejects any invalid request
            pass


# ---------------------------------------------------------------------------
# A blank prompt is refused when QueryParams is built; F12: no empty block at any depth


@pytest.mark.parametrize("prompt", ["", "   \n", [{"type": "text", "text": " "}], []])
async def test_a_blank_prompt_is_refused_before_anything_is_sent(offline, tmp_path, prompt):
    model = offline([S.reply("never")])
    with pytest.raises(ValueError, match="prompt is blank") as caught:
        QueryParams(messages=prompt if isinstance(prompt, str) else [user_message(prompt)], model=model)
    assert caught.value.errors()[0]["loc"] == ("messages",)  # the field is named
    path = tmp_path / "session.jsonl"
    engine = QueryEngine(model=model, transcript=path)
    with pytest.raises(ValueError, match="prompt is blank"):
        async for _ in engine.submit_message(prompt):
            pass
    assert engine.messages == [] and not path.exists() and model.api.requests == []


@pytest.mark.parametrize("content", ["", "  ", [], [{"type": "text", "text": ""}],
                                     [{"type": "text", "text": " "}, {"type": "text", "text": ""}]])
@pytest.mark.parametrize("is_error", [True, False])
async def test_f12_an_empty_result_is_never_sent(offline, content, is_error):
    from dreamloop.tools import ToolResult

    @tool(ProbeInput, name="quiet", read_only=True)
    async def quiet(input: ProbeInput) -> ToolResult:
        """Fail (or succeed) without a word."""
        return ToolResult(content, is_error=is_error)

    model = offline([S.reply(S.tool_use("quiet", {}, id="T1")), S.reply("ok")])
    run = query(QueryParams(messages="go", model=model, tools=[quiet]))
    await drain(run)
    (result,) = requests_of(model)[1]["messages"][-1]["content"]
    said = "(quiet failed with no error message)" if is_error else "(quiet completed with no output)"
    assert result == {"type": "tool_result", "tool_use_id": "T1", "content": said, **({"is_error": True} if is_error else {})}


async def test_f12_blank_blocks_inside_a_result_are_dropped_the_rest_kept(offline):
    from dreamloop.tools import ToolResult

    blocks = [{"type": "text", "text": ""}, {"type": "text", "text": "stderr: boom"}]

    @tool(ProbeInput, name="loud", read_only=True)
    async def loud(input: ProbeInput) -> ToolResult:
        """Fail with one empty and one real block."""
        return ToolResult(blocks, is_error=True)

    model = offline([S.reply(S.tool_use("loud", {}, id="T1")), S.reply("ok")])
    await drain(query(QueryParams(messages="go", model=model, tools=[loud])))
    (result,) = requests_of(model)[1]["messages"][-1]["content"]
    assert result["content"] == [{"type": "text", "text": "stderr: boom"}] and result["is_error"] is True


# ---------------------------------------------------------------------------
# Issue 24 item 6: one tool_use id twice in one response


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("same_input", [True, False])
async def test_a_repeated_tool_use_id_runs_once_and_the_session_goes_on(offline, streaming, same_input):
    from dreamloop.tools import tool

    class Input(BaseModel):
        path: str

    ran = []

    @tool(Input, name="Write")
    async def write(input: Input) -> str:
        """Write a file."""
        ran.append(input.path)
        return f"wrote {input.path}"

    second = {"path": "a"} if same_input else {"path": "b"}
    model = offline([S.reply("w", S.tool_use("Write", {"path": "a"}, id="T1"), S.tool_use("Write", second, id="T1"),
                             S.tool_use("Write", {"path": "c"}, id="T2")),
                     S.reply("done"), S.reply("and again")])
    engine = QueryEngine(model=model, tools=[write], permission_mode="bypass", streaming_tool_execution=streaming)
    async for _ in engine.submit_message("go"):
        pass
    assert ran == ["a", "c"] and engine.terminal.reason == "completed"
    request = [r.body for r in model.api.requests][1]
    sent = request["messages"]
    assert [b["id"] for b in sent[1]["content"] if b["type"] == "tool_use"] == ["T1", "T2"]
    results = [b for b in sent[2]["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == ["T1", "T2"]
    assert "used the tool_use id T1 more than once" in sent[2]["content"][-1]["text"]
    assert any(m.type == "system" and m.subtype == "duplicate_tool_use_id" for m in engine.messages)
    async for _ in engine.submit_message("next"):
        pass
    assert engine.terminal.reason == "completed"  # the offline fixture: no request was rejected


# ---------------------------------------------------------------------------
# A Stop from inside the loop's own task (issue 32's new abort points found it)


@pytest.mark.parametrize("answer", ["a long answer that streams for a while " * 4, "x"])
async def test_a_stop_fired_from_inside_the_loops_own_task_ends_in_a_terminal(offline, answer):
    """The property test's instance: the abort fired from the script's policy, which runs in the loop's own task
    while the request is in flight. The cancel landed at the task's next await, outside any guard, and
    CancelledError escaped the loop. Now it lands at the next guarded await: the run ends aborted_streaming, the
    model told, and the next prompt goes on."""
    from dreamloop.endings import INTERRUPTED_NOTE, is_interrupted_note

    def policy(body, index):
        if index == 0:
            engine.last_run.abort()
        return S.reply(answer if index == 0 else "the next answer")

    engine = QueryEngine(model=offline(policy), deps=QueryDeps(uuid=counting_uuids()))
    [e async for e in engine.submit_message("go")]
    assert engine.terminal.reason == "aborted_streaming"
    assert [m.message["content"] for m in engine.messages if is_interrupted_note(m)] == [INTERRUPTED_NOTE]
    [e async for e in engine.submit_message("again")]
    assert engine.terminal.reason == "completed"


async def test_a_hook_that_fires_the_stop_and_waits_is_cut_short(offline):
    """A stop hook fires the abort from the loop's own task and then awaits: the Stop lands at that await."""
    import asyncio
    import time

    from dreamloop.hooks import Hooks

    async def stopping(input):
        engine.last_run.abort()
        await asyncio.sleep(30)

    engine = QueryEngine(model=offline([S.reply("done")]), hooks=Hooks().add("stop", stopping))
    started = time.monotonic()
    [e async for e in engine.submit_message("go")]
    assert engine.terminal.reason == "stop_hook_prevented" and time.monotonic() - started < 5
    assert engine.messages[-1].content == "Interrupted while the stop hooks ran."
