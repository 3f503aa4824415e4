"""Content blocks of a type the SDK does not know (a newer API's) are kept and sent back as received (issue 38).

The instance: the streaming fallback's non-streamed answer carried ``{"type": "future_block", "payload": ...}``.
The SDK's own parser read it as a ``TextBlock`` with ``text`` and ``citations`` None; the first request sent
the block without its own nulls, and after a dump and a load (a transcript, a trace, a resume) the two Nones
had become fields of the block: the resumed session sent ``citations: null, text: null``, which a strict API
may refuse. Here every placement of such a block, streamed and not, goes through each way a session is saved
and loaded, and the JSON the API would be sent must stay byte-identical. The property test generates the same
placements (``unknown_block_turns``, invariant ``blocks_round_trip``).
"""

from __future__ import annotations

import json

import pytest

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.fake_api import RawTurn
from dreamloop.fake_api.cassette import cassette
from dreamloop.messages import AssistantMessage, UnknownContentBlock, normalize_messages_for_api
from dreamloop.recovery import RecoveryOptions
from dreamloop.scripts import Fault, Turn
from dreamloop.tools import tool
from dreamloop.trace import Trace
from pydantic import BaseModel

# the key order is not the SDK's (type first), and the block holds nulls of its own, at the top and nested
FUTURE = {"payload": {"x": [1, None], "text": None}, "type": "future_block", "note": None}
TEXT = {"type": "text", "text": "Also text."}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "probe", "input": {"n": 1}}

PLACEMENTS = {
    "alone": Turn(content=[FUTURE]),
    "beside text and tool_use": Turn(content=[TEXT, FUTURE, CALL]),
    "in a text answer cut by max_tokens": Turn(content=[FUTURE, TEXT], stop_reason="max_tokens"),
    "before a tool_use cut by max_tokens": Turn(content=[TEXT, FUTURE, CALL], fault=Fault(kind="max_tokens_cut")),
}
BROKEN = Turn(content=[TEXT], fault=Fault(kind="stream_error", after_events=1, error_type="api_error"))


class ProbeInput(BaseModel):
    n: int = 0


@tool(ProbeInput, name="probe", read_only=True)
async def probe(input: ProbeInput) -> str:
    """Probe."""
    return f"probed {input.n}"


def sent(messages) -> str:
    """The JSON the API would be sent for these loop messages: what must stay byte-identical."""
    return json.dumps(normalize_messages_for_api(list(messages)))


def bodies(model) -> list[str]:
    return [json.dumps(r.body) for r in model.api.requests if r.path.endswith("/v1/messages")]


async def session(model, path=None, prompt="go"):
    # max_resumes=1: the text cut by max_tokens is resumed (the cut message, its unknown block too, stays)
    engine = QueryEngine(model=model, tools=[probe], transcript=path, deps=QueryDeps(uuid=counting_uuids()),
                         recovery=RecoveryOptions(max_output_tokens_escalate=False, max_resumes=1))
    async for _ in engine.submit_message(prompt):
        pass
    return engine


def script(turn: Turn, streamed: bool) -> list[Turn]:
    """``turn`` streamed, or as the streaming fallback's non-streamed answer after a stream that broke at once."""
    return [turn, S.reply("next"), S.reply("after")] if streamed else [BROKEN, turn, S.reply("next"), S.reply("after")]


def kept(engine) -> list[UnknownContentBlock]:
    return [b for m in engine.messages if m.type == "assistant" for b in m.message.content if b.type == "future_block"]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "non-streamed"])
@pytest.mark.parametrize("placement", PLACEMENTS)
async def test_an_unknown_block_survives_every_way_a_session_is_saved_and_loaded(offline, tmp_path, placement,
                                                                                  streamed):
    model = offline(script(PLACEMENTS[placement], streamed), record=tmp_path / "run.cassette.jsonl")
    path = tmp_path / "session.jsonl"
    engine = await session(model, path)
    assert engine.terminal.reason == "completed"
    if not streamed:
        assert [r.body.get("stream") for r in model.api.requests][:2] == [True, None]  # the fallback's request
    (block,) = kept(engine)
    assert isinstance(block, UnknownContentBlock) and block.model_dump() == FUTURE  # as served, nothing added
    if not streamed:  # the JSON body read as it came: its keys in their order too
        assert json.dumps(block.model_dump()) == json.dumps(FUTURE)
    history = sent(engine.messages)
    assert json.dumps(FUTURE) in history or json.dumps(block.model_dump()) in history

    # model_dump -> validate, in Python and as JSON
    for message in (m for m in engine.messages if m.type == "assistant"):
        for again in (AssistantMessage.model_validate(message.model_dump()),
                      AssistantMessage.model_validate(message.model_dump(mode="json")),
                      AssistantMessage.model_validate_json(message.model_dump_json())):
            assert sent([again]) == sent([message])

    # the transcript: reloaded, then resumed, and the resumed session's next request
    assert sent(load_transcript(path)) == history
    resumed = QueryEngine.resume(path, model=model, tools=[probe], deps=QueryDeps(uuid=counting_uuids(100)))
    assert sent(resumed.messages) == history
    async for _ in resumed.submit_message("and now?"):
        pass
    last = model.api.requests[-1].body["messages"]
    assert json.dumps(last[: len(json.loads(history))]) == history

    # the trace: saved, loaded, saved again
    trace = engine.last_run.trace
    saved = trace.save(tmp_path / "trace.jsonl")
    loaded = Trace.load(saved)
    assert {u: sent([m]) for u, m in loaded.messages.items()} == {u: sent([m]) for u, m in trace.messages.items()}
    assert loaded.save(tmp_path / "again.jsonl").read_bytes() == saved.read_bytes()

    # the cassette: replayed, the same requests byte for byte and the same history
    model.recorder.finish(engine.last_run)
    replay = offline(cassette(tmp_path / "run.cassette.jsonl"))
    again = await session(replay)
    assert bodies(replay) == bodies(model)[: len(bodies(replay))] and sent(again.messages) == history


async def test_the_trace_keeps_the_stream_event_of_an_unknown_block_as_the_wire_held_it(offline):
    engine = await session(offline(script(PLACEMENTS["alone"], streamed=True)))
    starts = [e["event"]["content_block"] for p in engine.last_run.trace.checkpoints for e in p.events
              if e["type"] == "stream_event" and e["event"]["type"] == "content_block_start"]
    assert starts == [FUTURE]  # its nulls kept (the trace wrote events without their nulls: the note was lost)


async def test_a_message_the_sdk_parsed_is_set_right_when_it_becomes_an_assistant_message(offline):
    """The SDK's parser gives an unknown block another class; AssistantMessage keeps what the wire held."""
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-scripted-1",
            "content": [FUTURE, TEXT], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}
    model = offline([RawTurn(body=body)])
    parsed = await model.client.messages.create(model="claude-scripted-1", max_tokens=64,
                                                messages=[{"role": "user", "content": "go"}])
    assert type(parsed.content[0]).__name__ == "TextBlock" and parsed.content[0].text is None  # the SDK's reading
    message = AssistantMessage(message=parsed)
    assert isinstance(message.message.content[0], UnknownContentBlock)
    assert normalize_messages_for_api([message])[0]["content"] == [FUTURE, TEXT]
    again = AssistantMessage.model_validate(message.model_dump(mode="json"))
    assert sent([again]) == sent([message])


def test_an_unknown_block_dumps_as_received_whatever_the_options():
    block = UnknownContentBlock.model_validate(FUTURE)
    for dumped in (block.model_dump(), block.model_dump(mode="json", exclude_none=True),
                   block.model_dump(exclude_unset=True, exclude_defaults=True),
                   json.loads(block.model_dump_json(exclude_none=True))):
        assert json.dumps(dumped) == json.dumps(FUTURE)
    dumped = block.model_dump()
    dumped["payload"]["x"].append(2)  # a dump is a copy: changing it leaves the block as it was
    assert block.model_dump() == FUTURE


async def test_a_non_streamed_answer_that_is_not_a_message_ends_the_run_model_error(offline):
    bad = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-scripted-1",
           "content": [{"type": "text"}], "stop_reason": "end_turn", "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}
    engine = await session(offline([BROKEN, RawTurn(body=bad)]))
    assert engine.terminal.reason == "model_error"
    assert "not a valid Message" in engine.terminal.error and "text" in engine.terminal.error


async def test_a_non_streamed_answer_with_an_unknown_block_is_noted_as_a_streamed_one_is(offline):
    engine = await session(offline(script(PLACEMENTS["alone"], streamed=False)))
    (notice,) = [m for m in engine.messages if m.type == "system" and m.subtype == "unknown_stream_content"]
    assert "content block type 'future_block'" in notice.content and "sent back as received" in notice.content


async def test_a_printed_run_and_its_saved_trace_show_the_block_by_its_type(offline, tmp_path):
    import io

    from dreamloop.render import SafeConsole, print_trace

    engine = await session(offline(script(PLACEMENTS["beside text and tool_use"], streamed=True)))
    printed = []
    for trace in (engine.last_run.trace, Trace.load(engine.last_run.trace.save(tmp_path / "t.jsonl"))):
        console = SafeConsole(file=io.StringIO(), width=100)
        print_trace(trace, console)
        printed.append(console.file.getvalue())
    assert "(future_block: a block type this version does not know, kept as received)" in printed[0]
    assert printed[0] == printed[1]
