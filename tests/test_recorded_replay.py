"""Every recorded API response replays through the fake API and the SDK and yields what was recorded.

The reference for a recorded stream is what the SDK itself accumulates when
the recorded bytes are served by a transport that does nothing else; the
replay goes through ``FakeMessagesAPI`` + ``AnthropicModel.stream``. The
recorded request bodies of the cassettes are sent too, so they must pass the
fake API's validation (including request 2 of the parallel-tools and
thinking round trips). The two recorded 400 bodies are reproduced from
requests shaped like the ones that caused them.
"""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx2
import pytest

from dreamloop.fake_api import FakeMessagesAPI, load_cassette, load_recorded, recorded_turn, validate_request
from dreamloop.model import AnthropicModel

RECORDED = Path(__file__).parent / "fixtures" / "recorded"
STREAMS = sorted(p.name for p in RECORDED.glob("anthropic-stream-*"))
NONSTREAM_CASSETTES = sorted(p.name for p in RECORDED.glob("anthropic-nonstream-*.yaml"))
ERRORS = sorted(p.name for p in RECORDED.glob("anthropic-error-400-*.json"))
FALLBACK_REQUEST = {"model": "claude-scripted-1", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]}


def test_every_fixture_is_covered():
    covered = set(STREAMS) | set(NONSTREAM_CASSETTES) | set(ERRORS)
    data_files = {p.name for p in RECORDED.iterdir() if p.is_file() and p.suffix in (".sse", ".jsonl", ".yaml", ".json")}
    assert covered == data_files


def recorded_request(name: str) -> dict:
    """The request body recorded with a fixture (cassettes), or a plain valid one."""
    if name.endswith(".yaml"):
        return dict(load_cassette(RECORDED / name)[0].request)
    return dict(FALLBACK_REQUEST)


async def sdk_reference(sse_text: str) -> anthropic.types.Message:
    """What the SDK accumulates from the recorded bytes served as they are, by a bare transport."""

    def handler(request):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse_text.encode())

    client = anthropic.AsyncAnthropic(api_key="x", base_url="http://bare.invalid",
                                      http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    async with client.messages.stream(**FALLBACK_REQUEST) as stream:
        return await stream.get_final_message()


async def replay_stream(name: str):
    turn = recorded_turn(RECORDED / name)
    api = FakeMessagesAPI([turn])
    model = AnthropicModel(api.client(), "claude-scripted-1", api=api)
    request = recorded_request(name)
    request.pop("stream", None)
    request.pop("model", None)
    items = [item async for item in model.stream(**request)]
    return turn, model, items


@pytest.mark.parametrize("name", STREAMS)
async def test_recorded_stream_replays_through_the_model(name):
    turn, model, items = await replay_stream(name)
    *events, final = items
    reference = await sdk_reference(turn.sse.rstrip("\n") + "\n\n")  # the file lost its last blank line
    assert events[0].type == "message_start" and events[-1].type == "message_stop"
    assert final.id == reference.id and final.model == reference.model
    assert final.stop_reason == reference.stop_reason
    assert final.usage.output_tokens == reference.usage.output_tokens
    finished = [b.to_dict() for b in reference.content][: len(final.content)]
    assert [b.to_dict() for b in final.content] == finished
    assert model.api.requests[0].status == 200


async def test_text_then_tool_use_stream():
    _, model, items = await replay_stream("anthropic-stream-text-tooluse.sse")
    final = items[-1]
    assert final.stop_reason == "tool_use"
    assert final.content[0].text == "I'll check the current weather in Paris for you."
    tool = final.content[1]
    assert (tool.id, tool.name, tool.input) == ("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})
    deltas = [e.delta.partial_json for e in items[:-1] if e.type == "content_block_delta" and e.index == 1]
    assert deltas[0] == "" and len(deltas) == 5


async def test_tool_use_with_empty_input_stream():
    _, _, items = await replay_stream("anthropic-stream-tooluse-empty-input.jsonl")
    final = items[-1]
    assert final.stop_reason == "tool_use"
    assert final.content[1].name == "updateIssueList" and final.content[1].input == {}
    assert final.usage.input_tokens == 565 and final.usage.output_tokens == 48


async def test_max_tokens_cut_stream_drops_the_cut_tool_use():
    _, model, items = await replay_stream("anthropic-stream-tooluse-maxtokens-partial-json.sse")
    final = items[-1]
    assert final.stop_reason == "max_tokens"
    assert [b.type for b in final.content] == ["text"]
    assert final.content[0].text.startswith("I'll create a comprehensive tax guide")
    (cut,) = model.last_cut_blocks
    assert cut.block.name == "make_file" and cut.block.id == "toolu_01EKqbqmZrGRXy18eN7m9kvY"
    assert cut.partial_json.startswith('{"filename": "taxes.txt", "lines_of_text": [')
    assert cut.partial_json.endswith('"Filing taxes')


async def test_thinking_signature_stream():
    turn, _, items = await replay_stream("anthropic-stream-thinking-signature.yaml")
    final = items[-1]
    thinking = final.content[0]
    assert thinking.type == "thinking" and thinking.thinking.startswith("This is a straightforward question")
    assert thinking.signature.startswith("EvMCCkYICxgCKkCHP2cSuEdcJK")
    assert final.content[1].text.startswith("Here are the basic steps for safely crossing the street")
    assert final.stop_reason == "end_turn"


async def test_redacted_thinking_stream():
    turn, _, items = await replay_stream("anthropic-stream-redacted-thinking.yaml")
    final = items[-1]
    assert [b.type for b in final.content] == ["redacted_thinking", "redacted_thinking", "text"]
    assert final.content[0].data.startswith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe")
    assert final.content[1].data.endswith("GAE=")


@pytest.mark.parametrize("name", STREAMS)
async def test_recorded_stream_serves_a_non_streaming_request_too(name):
    turn = recorded_turn(RECORDED / name)
    client = FakeMessagesAPI([turn]).client()
    message = await client.messages.create(**FALLBACK_REQUEST)
    reference = await sdk_reference(turn.sse.rstrip("\n") + "\n\n")  # the file lost its last blank line
    assert message.stop_reason == reference.stop_reason
    assert [b.to_dict() for b in message.content] == [b.to_dict() for b in reference.content][: len(message.content)]


@pytest.mark.parametrize("name", NONSTREAM_CASSETTES)
async def test_recorded_round_trip_replays_request_by_request(name):
    interactions = load_cassette(RECORDED / name)
    api = FakeMessagesAPI([i.turn for i in interactions])
    client = api.client(max_retries=0)
    for interaction in interactions:
        message = await client.messages.create(**interaction.request)  # the recorded body must pass validation
        assert message.to_dict() == interaction.turn.body
    assert [r.status for r in api.requests] == [200] * len(interactions)
    assert [r.body for r in api.requests] == [i.request for i in interactions]


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDED.glob("*.yaml")))
def test_recorded_request_bodies_pass_validation(name):
    for interaction in load_cassette(RECORDED / name):
        assert validate_request(interaction.request) is None


def test_parallel_results_request_is_the_accepted_shape():
    request = load_cassette(RECORDED / "anthropic-nonstream-tooluse-parallel.yaml")[1].request
    results = request["messages"][2]["content"]
    calls = [b["id"] for b in request["messages"][1]["content"] if b["type"] == "tool_use"]
    assert [b["tool_use_id"] for b in results] == calls and len(calls) == 4
    dropped_one = json.loads(json.dumps(request))
    del dropped_one["messages"][2]["content"][3]
    assert validate_request(dropped_one).message.startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_013mnQZbgtK2oe3Mo3XKJsx3."
    )


def test_thinking_round_trip_edited_foreign_thinking_is_accepted():
    """The fake API cannot verify signatures it did not issue (real ones): it accepts them, edited or not."""
    request = json.loads(json.dumps(load_cassette(RECORDED / "anthropic-nonstream-thinking-tooluse-roundtrip.yaml")[1].request))
    request["messages"][1]["content"][0]["thinking"] += " (edited)"
    assert validate_request(request) is None


# ---------------------------------------------------------------------------
# The recorded 400s, reproduced

ERROR_REQUESTS = {
    # vercel/ai issue 8112: a client tool call sent back without its result
    "anthropic-error-400-tool-use-without-result.json": [
        {"role": "user", "content": [{"type": "text", "text": "Research the AI SDK."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_issue8112_custom", "name": "research_codebase",
                                           "input": {"question": "What is the AI SDK?"}}]},
        {"role": "user", "content": [{"type": "text", "text": "What did both tools find?"}]},
    ],
    # vercel/ai issue 21832: the tool call was dropped, its result was not; the two user turns merge
    "anthropic-error-400-unexpected-tool-use-id.json": [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "T1", "is_error": True,
                                      "content": "Invalid input for tool computer"}]},
    ],
}


@pytest.mark.parametrize("name", ERRORS)
async def test_recorded_400_is_reproduced_with_the_same_shape_and_wording(name):
    recorded = json.loads((RECORDED / name).read_text())
    api = FakeMessagesAPI([])
    with pytest.raises(anthropic.BadRequestError) as caught:
        await api.client().messages.create(model="claude-scripted-1", max_tokens=256, messages=ERROR_REQUESTS[name])
    body = caught.value.body
    assert body.keys() == recorded.keys() and body["error"].keys() == recorded["error"].keys()
    assert body["type"] == recorded["type"] and body["error"]["type"] == recorded["error"]["type"]
    assert body["error"]["message"] == recorded["error"]["message"]
    assert body["request_id"].startswith("req_")
    assert api.consumed == 0


@pytest.mark.parametrize("name", ERRORS)
async def test_recorded_400_replays_as_a_raw_turn(name):
    recorded = json.loads((RECORDED / name).read_text())
    api = FakeMessagesAPI(load_recorded(RECORDED / name))
    with pytest.raises(anthropic.BadRequestError) as caught:
        await api.client().messages.create(**FALLBACK_REQUEST)
    assert caught.value.api_message == recorded["error"]["message"]
    assert len(api.requests) == 1  # x-should-retry: false
