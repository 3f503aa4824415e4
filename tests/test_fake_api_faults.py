"""Each scripted fault, and what the official SDK (and AnthropicModel) make of it.

Retries are the SDK's own policy (2 retries by default: 3 attempts), and each
attempt takes the next script item. Scripted HTTP errors send
``retry-after-ms: 5``, so retries cost milliseconds.
"""

from __future__ import annotations

import json

import anthropic
import httpx2
import pytest

from dreamloop.errors import IncompleteStreamError, ScriptExhausted
from dreamloop.fake_api import FakeMessagesAPI
from dreamloop.model import offline
from dreamloop.scripts import (
    Turn,
    disconnect,
    http_error,
    max_tokens_cut,
    prompt_too_long,
    reply,
    stream_error,
    tool_use,
)

MESSAGES = [{"role": "user", "content": "write the file"}]


async def run(model, **params):
    """All items ``model.stream()`` yields (events…, final Message)."""
    return [item async for item in model.stream(messages=MESSAGES, max_tokens=1024, **params)]


async def test_500_is_retried_and_the_retry_takes_the_next_item():
    model = offline([http_error(500, retry_after_ms=5), reply("Recovered.")])
    *_, final = await run(model)
    assert final.content[0].text == "Recovered."
    requests = model.api.requests
    assert [r.status for r in requests] == [500, 200]
    assert [r.script_index for r in requests] == [0, 1]
    assert [r.headers["x-stainless-retry-count"] for r in requests] == ["0", "1"]
    assert model.last_request_id == "req_fake_0002"


async def test_529_comes_straight_back_the_loop_counts_it():
    model = offline([http_error(529)] * 3 + [reply("never reached")])
    with pytest.raises(anthropic.OverloadedError) as caught:
        await run(model)
    assert caught.value.status_code == 529
    assert caught.value.type == "overloaded_error" and caught.value.api_message == "Overloaded"
    assert len(model.api.requests) == 1 and model.api.consumed == 1  # the SDK retries 429/5xx, not 529
    assert model.last_request_id == "req_fake_0001"


async def test_429_becomes_rate_limit_error_when_retries_run_out():
    model = offline([http_error(429)] * 3)
    with pytest.raises(anthropic.RateLimitError) as caught:
        await run(model)
    assert caught.value.type == "rate_limit_error"
    assert [r.status for r in model.api.requests] == [429, 429, 429]
    assert model.api.requests[0].headers.get("x-should-retry") is None  # request headers: nothing forced


async def test_500_is_internal_server_error():
    model = offline([http_error(500)], max_retries=0)
    with pytest.raises(anthropic.InternalServerError) as caught:
        await run(model)
    assert caught.value.status_code == 500
    assert caught.value.body["error"] == {"type": "api_error", "message": "Internal server error"}


async def test_error_event_inside_a_200_stream_is_not_retried():
    model = offline([stream_error("Sure, I'll start by", after_events=4), reply("not used")])
    seen = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        async for item in model.stream(messages=MESSAGES, max_tokens=1024):
            seen.append(item.type)
    error = caught.value
    assert type(error) is anthropic.APIStatusError  # not OverloadedError: the HTTP status was 200
    assert error.status_code == 200 and error.type == "overloaded_error"
    assert error.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
                          "request_id": "req_fake_0001"}
    assert seen == ["message_start", "content_block_start", "content_block_delta"]  # the ping is dropped by the SDK
    assert len(model.api.requests) == 1 and model.api.requests[0].error["type"] == "overloaded_error"


async def test_disconnect_mid_stream_is_an_incomplete_response():
    model = offline([disconnect("Reading the file now, then editing it.", tool_use("read_file", {"path": "a"}),
                                after_events=8)])
    with pytest.raises(IncompleteStreamError) as caught:
        await run(model)
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)
    partial = caught.value.partial
    assert partial.stop_reason is None
    assert [b.type for b in partial.content] == ["text"]  # only finished blocks; the tool_use never started
    assert partial.content[0].text == "Reading the file now, then editing it."


async def test_disconnect_without_streaming_is_a_connection_error():
    api = FakeMessagesAPI([disconnect("x")])
    with pytest.raises(anthropic.APIConnectionError) as caught:
        await api.client(max_retries=0).messages.create(model="m", max_tokens=10, messages=MESSAGES)
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)


async def test_max_tokens_cut_removes_the_cut_tool_use():
    model = offline([max_tokens_cut("I'll write it.", tool_use("write_file", {"path": "taxes.txt", "text": "x" * 80}))])
    items = await run(model)
    *events, final = items
    assert final.stop_reason == "max_tokens"
    assert [b.type for b in final.content] == ["text"]  # the loop can never run the cut call
    stops = [e.index for e in events if e.type == "content_block_stop"]
    assert stops == [0]  # the tool_use block (index 1) never got content_block_stop
    (cut,) = model.last_cut_blocks
    assert cut.index == 1 and cut.block.type == "tool_use" and cut.block.name == "write_file"
    assert cut.partial_json.startswith('{"path": "taxes.txt"')
    with pytest.raises(ValueError):
        json.loads(cut.partial_json)


async def test_max_tokens_cut_without_streaming_drops_the_block():
    api = FakeMessagesAPI([max_tokens_cut("I'll write it.", tool_use("write_file", {"path": "a"}))])
    message = await api.client().messages.create(model="m", max_tokens=10, messages=MESSAGES)
    assert message.stop_reason == "max_tokens" and [b.type for b in message.content] == ["text"]


async def test_prompt_too_long_is_a_bad_request_and_not_retried():
    model = offline([prompt_too_long(250_000), reply("not used")])
    with pytest.raises(anthropic.BadRequestError) as caught:
        await run(model)
    assert caught.value.api_message == "prompt is too long: 250000 tokens > 200000 maximum"
    assert len(model.api.requests) == 1 and model.api.consumed == 1


async def test_prompt_too_long_default_reads_true():
    model = offline([prompt_too_long(maximum=1_000)], max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await run(model)
    tokens = int(caught.value.api_message.split()[4])
    assert tokens > 1_000 and caught.value.api_message.endswith("tokens > 1000 maximum")


async def test_missing_stop_reason_is_an_incomplete_stream():
    model = offline([Turn(content=[{"type": "text", "text": "Half an answer"}], stop_reason=None)])
    with pytest.raises(IncompleteStreamError) as caught:
        await run(model)
    assert caught.value.partial.stop_reason is None
    assert caught.value.partial.content[0].text == "Half an answer"


async def test_script_exhausted_surfaces_as_itself_without_retries():
    model = offline([reply("only one")])
    await run(model)
    with pytest.raises(ScriptExhausted, match=r"no item for model request #2 \(it has 1\)"):
        await run(model)
    assert [r.status for r in model.api.requests] == [200, 500]  # x-should-retry: false, no retry


async def test_a_policy_bug_surfaces_as_itself():
    def policy(body, index):
        raise KeyError("oops")

    model = offline(policy)
    with pytest.raises(KeyError) as caught:
        await run(model)
    assert isinstance(caught.value.__cause__, anthropic.InternalServerError)
    assert model.api.consumed == 0


def test_a_broken_recorded_stream_asked_for_without_streaming_is_a_server_error():
    """The soak's instance: the streaming fallback asks non-streaming, and the script's next item is a stream
    that breaks the protocol (a frame that is not JSON; a delta for a block never started). No script error:
    the server failing, as a non-streaming reply has no stream to break."""
    from dreamloop.fake_api.recorded import RawTurn
    from dreamloop.fake_api.replies import raw_reply

    start = ('event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1", "type": "message", '
             '"role": "assistant", "model": "m", "content": [], "stop_reason": null, "stop_sequence": null, '
             '"usage": {"input_tokens": 1, "output_tokens": 1}}}\n\n')
    for broken in ("event: content_block_delta\ndata: {oops\n\n",
                   'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 3, '
                   '"delta": {"type": "text_delta", "text": "x"}}\n\n'):
        reply = raw_reply(RawTurn(sse=start + broken), request={"stream": False}, request_id="req_1")
        body = json.loads(b"".join(frame for _, frame in reply.frames) if reply.frames else reply.body)
        assert reply.status == 500 and body["error"] == {"type": "api_error", "message": "Internal server error"}
