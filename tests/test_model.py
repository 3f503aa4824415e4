"""AnthropicModel: raw events in wire order, then the final Message; pacing; request ids; count_tokens."""

from __future__ import annotations

import contextlib
import time

import anthropic
import pytest
from anthropic.types import (
    Message,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
)

from dreamloop.model import AnthropicModel, live, offline
from dreamloop.scripts import Turn, reply, thinking, tool_use
from dreamloop.tokens import estimate_request_tokens

MESSAGES = [{"role": "user", "content": "read src/app.py"}]
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}]


async def collect(model, **params):
    return [item async for item in model.stream(messages=MESSAGES, max_tokens=1024, tools=TOOLS, **params)]


async def test_text_and_tool_use_turn_streams_raw_events_then_the_message():
    model = offline([reply("Let me read the file.", tool_use("read_file", {"path": "src/app.py"}), chunk_size=8)])
    *events, final = await collect(model)

    assert [e.type for e in events] == (
        ["message_start", "content_block_start"] + ["content_block_delta"] * 3 + ["content_block_stop"]
        + ["content_block_start"] + ["content_block_delta"] * 4 + ["content_block_stop", "message_delta", "message_stop"]
    )
    raw_types = (RawMessageStartEvent, RawContentBlockStartEvent, RawContentBlockDeltaEvent, RawContentBlockStopEvent,
                 RawMessageDeltaEvent, RawMessageStopEvent)
    assert all(type(e) in raw_types for e in events)  # raw wire events, not the SDK helper's parsed ones
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta" and e.index == 0) == "Let me read the file."
    json_deltas = [e.delta.partial_json for e in events if e.type == "content_block_delta" and e.index == 1]
    assert json_deltas[0] == "" and "".join(json_deltas) == '{"path": "src/app.py"}'

    assert type(final) is Message
    assert final.id == "msg_fake_0001" and final.model == "claude-scripted-1"
    assert final.stop_reason == "tool_use"
    assert [b.to_dict() for b in final.content] == [
        {"type": "text", "text": "Let me read the file."},
        {"type": "tool_use", "id": "toolu_fake_0001", "name": "read_file", "input": {"path": "src/app.py"}},
    ]
    assert final.usage.input_tokens == estimate_request_tokens(model.api.requests[0].body)
    assert final.usage.output_tokens > 0
    assert model.last_cut_blocks == []


async def test_message_delta_usage_is_cumulative_and_turn_usage_overrides():
    model = offline([reply("Hi", usage={"input_tokens": 1234, "output_tokens": 56})])
    *events, final = await collect(model)
    delta = next(e for e in events if e.type == "message_delta")
    assert delta.usage.output_tokens == 56 and delta.usage.input_tokens == 1234
    assert (final.usage.input_tokens, final.usage.output_tokens) == (1234, 56)


async def test_thinking_is_signed_and_replays():
    model = offline([reply(thinking("Plan: read it."), tool_use("read_file", {"path": "a"})), reply("Done.")])
    *_, first = await collect(model)
    assert first.content[0].type == "thinking" and first.content[0].signature
    history = MESSAGES + [
        {"role": "assistant", "content": [b.to_dict() for b in first.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[1].id, "content": "x = 1"}]},
    ]
    final = [i async for i in model.stream(messages=history, max_tokens=1024, tools=TOOLS)][-1]
    assert final.content[0].text == "Done."


async def test_pacing_spreads_deltas_in_time():
    paced = offline([reply("x" * 70, chunk_size=7, tokens_per_second=200)])  # 10 deltas of 2 tokens: ~10 ms each
    started = time.monotonic()
    stamps = []
    async for item in paced.stream(messages=MESSAGES, max_tokens=1024):
        if getattr(item, "type", None) == "content_block_delta":
            stamps.append(time.monotonic() - started)
    assert len(stamps) == 10
    assert stamps[-1] - stamps[0] >= 0.06  # the deltas really arrive one by one
    assert stamps[-1] < 2.0


async def test_request_id_is_recorded_also_on_errors():
    model = offline([reply("ok")], max_retries=0)
    await collect(model)
    assert model.last_request_id == "req_fake_0001" == model.api.requests[0].request_id
    with pytest.raises(anthropic.BadRequestError):
        await model.stream(messages=[{"role": "assistant", "content": "Hi"}], max_tokens=64).__anext__()
    assert model.last_request_id == "req_fake_0002"


async def test_count_tokens_uses_the_estimator_and_consumes_nothing():
    model = offline([reply("ok")])
    counted = await model.count_tokens(messages=MESSAGES, tools=TOOLS, system="Be brief.")
    body = model.api.requests[0].body
    assert counted == estimate_request_tokens(body) and "max_tokens" not in body
    assert model.api.consumed == 0
    *_, final = await collect(model)
    assert final.content[0].text == "ok"


async def test_stopping_early_closes_the_stream():
    model = offline([reply("a long answer " * 20, chunk_size=4), reply("next")])
    async with contextlib.aclosing(model.stream(messages=MESSAGES, max_tokens=1024)) as items:
        async for item in items:
            if item.type == "content_block_delta":
                break
    *_, final = await collect(model)
    assert final.content[0].text == "next"


def test_sync_client_streams_too():
    model = offline([reply("sync works", tool_use("read_file", {"path": "a"}))])
    client = model.api.sync_client()
    with client.messages.stream(model="claude-scripted-1", max_tokens=64, messages=MESSAGES, tools=TOOLS) as stream:
        final = stream.get_final_message()
    assert final.content[1].input == {"path": "a"}


def test_constructors():
    offline_model = offline([Turn()], model="claude-test")
    assert offline_model.model == "claude-test" and offline_model.api is not None
    assert repr(offline_model) == "AnthropicModel('claude-test', offline)"
    live_model = live(api_key="sk-test-not-used", base_url="http://127.0.0.1:9")
    assert live_model.api is None and str(live_model.client.base_url).startswith("http://127.0.0.1:9")
    assert isinstance(AnthropicModel(live_model.client, "m").client, anthropic.AsyncAnthropic)


async def test_bytes_that_are_not_a_stream_raise_malformed_stream_error():
    """Issue 9: what the SDK's SSE decoder cannot read is a corrupt stream, not an exception of its own."""
    import httpx2

    from dreamloop.errors import MalformedStreamError

    start = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
             b'"role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,'
             b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n')
    for body, said in [(start + b"event: content_block_start\ndata: \xff\xfe\n\n", "not UTF-8"),
                       (start + b"event: content_block_start\ndata: {oops\n\n", "not JSON")]:
        transport = httpx2.MockTransport(lambda request, body=body: httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=body))
        client = anthropic.AsyncAnthropic(api_key="k", base_url="http://test.invalid", max_retries=0,
                                          http_client=httpx2.AsyncClient(transport=transport))
        with pytest.raises(MalformedStreamError, match=said) as caught:
            [item async for item in AnthropicModel(client, "m").stream(messages=MESSAGES, max_tokens=16)]
        assert caught.value.partial.id == "m" and caught.value.partial.content == []


# ---------------------------------------------------------------------------
# An error event leaves no generator of the SDK's stream suspended (found while building issue 34's item 3)


@pytest.mark.parametrize("after_events", [0, 2, 5])
async def test_an_error_event_leaves_no_generator_of_the_stream_suspended(after_events):
    """The SDK raises for an ``error`` event a level above the generators that read the body (its own, httpx's, the
    offline API's): they were left suspended at a ``yield``, held until the event loop shuts down (in a kernel:
    never), each then closed in a task of its own."""
    import gc
    import types

    from dreamloop.scripts import stream_error

    def suspended():
        gc.collect()
        return {id(o): o.__qualname__ for o in gc.get_objects()
                if isinstance(o, types.AsyncGeneratorType) and o.ag_frame is not None and not o.ag_running}

    before = suspended()
    model = offline([stream_error("hello there, a reply cut by an error", after_events=after_events)])
    with pytest.raises(anthropic.APIStatusError):
        await collect(model)
    left = [name for key, name in suspended().items() if key not in before]
    assert left == []
