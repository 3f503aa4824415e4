"""The offline API's prompt cache, context window and Models endpoint, through the official SDK."""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from dreamloop import scripts as S
from dreamloop.fake_api import DEFAULT_CONTEXT_WINDOW, FakeMessagesAPI, PromptCache
from dreamloop.model import AnthropicModel
from dreamloop.tokens import estimate_request_tokens, request_segments

EPHEMERAL = {"type": "ephemeral"}
SYSTEM = "You are a careful assistant. " * 60  # ~480 tokens


def text(value, cached=False):
    return {"type": "text", "text": value, **({"cache_control": EPHEMERAL} if cached else {})}


def body(*turns, system=SYSTEM, cache_system=True, cache_last=True):
    """A request: alternating user/assistant texts; breakpoints on the system and on the last block."""
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": [text(t)]} for i, t in enumerate(turns)]
    if cache_last:
        messages[-1]["content"][-1]["cache_control"] = EPHEMERAL
    return {"model": "claude-scripted-1", "max_tokens": 100, "messages": messages,
            "system": [text(system, cached=cache_system)]}


LONG = ["question one " * 100, "answer one " * 100, "question two " * 100, "answer two " * 100, "question three " * 100]


def test_segments_add_up_to_the_estimate():
    request = {**body(*LONG), "tools": [{"name": "Read", "input_schema": {"type": "object", "properties": {}}}]}
    assert sum(s.tokens for s in request_segments(request)) == estimate_request_tokens(request)
    assert [s.breakpoint for s in request_segments(request) if s.breakpoint] == [True, True]


def test_a_growing_conversation_reads_what_the_last_turn_wrote():
    cache = PromptCache(min_tokens=256)
    first = cache.usage(body(*LONG[:3]))
    assert first.cache_read_input_tokens == 0 and first.input_tokens == 0
    assert first.cache_creation_input_tokens == estimate_request_tokens(body(*LONG[:3]))
    second = cache.usage(body(*LONG))
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.total == estimate_request_tokens(body(*LONG))
    assert second.cache_creation_input_tokens == second.total - first.total


def test_changing_an_old_message_breaks_the_prefix_from_there():
    cache = PromptCache(min_tokens=256)
    cache.usage(body(*LONG))
    changed = list(LONG)
    changed[1] = "[tool result cleared to save context]"
    again = cache.usage(body(*changed))
    system_only = sum(s.tokens for s in request_segments({"system": [text(SYSTEM)], "messages": []}))
    assert again.cache_read_input_tokens == system_only  # only the system prompt survived
    assert again.cache_creation_input_tokens == again.total - system_only


def test_no_breakpoint_no_cache_and_short_prefixes_are_not_kept():
    cache = PromptCache(min_tokens=256)
    plain = body(*LONG, cache_system=False, cache_last=False)
    assert cache.usage(plain).input_tokens == estimate_request_tokens(plain)
    tiny = body("hi", system="Be brief.")
    assert PromptCache().usage(tiny).cache_creation_input_tokens == 0 and cache.entries == 0


def test_a_hit_further_back_than_the_lookback_is_missed():
    cache = PromptCache(min_tokens=1, lookback=3)
    turns = [f"turn {n}" for n in range(9)]
    cache.usage(body(*turns[:3], system="s"))
    near = cache.usage(body(*turns[:5], system="s"))
    assert near.cache_read_input_tokens > 0
    far = PromptCache(min_tokens=1, lookback=3)
    far.usage(body(*turns[:3], system="s", cache_system=False))
    assert far.usage(body(*turns, system="s", cache_system=False)).cache_read_input_tokens == 0


async def test_usage_reports_the_cache_split_through_the_sdk():
    api = FakeMessagesAPI([S.reply("one"), S.reply("two")], cache_min_tokens=256)
    client = api.client()
    first = await client.messages.create(**body(*LONG[:3]))
    second = await client.messages.create(**body(*LONG))
    assert first.usage.cache_creation_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    counted = await client.messages.count_tokens(model="claude-scripted-1", messages=body(*LONG)["messages"],
                                                 system=body(*LONG)["system"])
    usage = second.usage
    billed = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    assert counted.input_tokens == billed


async def test_a_request_over_the_window_is_rejected_and_consumes_nothing():
    api = FakeMessagesAPI([S.reply("fits")], context_window=500)
    client = api.client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(**body(*LONG))
    tokens = estimate_request_tokens(body(*LONG))
    assert caught.value.body["error"]["message"] == f"prompt is too long: {tokens} tokens > 500 maximum"
    assert api.consumed == 0
    answer = await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert answer.content[0].text == "fits"


async def test_the_models_endpoint_reports_the_window():
    api = FakeMessagesAPI([], context_window=4321)
    model = AnthropicModel(api.client(), "claude-scripted-1", api=api)
    assert await model.context_window() == 4321
    assert await model.context_window() == 4321
    assert [r.path for r in api.requests] == ["/v1/models/claude-scripted-1"]  # asked once


async def test_an_endpoint_without_the_models_api_gives_the_default_window():
    def handler(request):
        return httpx2.Response(404, json={"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    client = anthropic.AsyncAnthropic(api_key="k", base_url="http://compat.invalid", max_retries=0,
                                      http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    assert await AnthropicModel(client, "other-model").context_window() == DEFAULT_CONTEXT_WINDOW
