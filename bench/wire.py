"""How fast the offline wire is: fake API → httpx2 MockTransport → anthropic SDK → AnthropicModel.

Prints streamed events per second for one ~2,000-event response, split by
layer (rendering the Reply alone; the SDK's raw stream; AnthropicModel.stream
on top), and the per-request overhead of small responses, streamed and not.
Not a test: numbers depend on the machine; the ratios are what to read.

    .venv/bin/python bench/wire.py
"""

from __future__ import annotations

import asyncio
import json
import time

from dreamloop.fake_api import FakeMessagesAPI
from dreamloop.model import offline
from dreamloop.scripts import reply

MESSAGES = [{"role": "user", "content": "tell me a long story"}]
BIG = reply("word " * 1600, chunk_size=4)  # 2,000 text deltas + 7 other events
SMALL_REQUESTS = 300


def render_only() -> tuple[int, float]:
    """Events and seconds to validate, render and encode the big reply, no HTTP client at all."""
    api = FakeMessagesAPI(lambda body, index: BIG)
    body = json.dumps({"model": "m", "max_tokens": 64, "messages": MESSAGES, "stream": True}).encode()
    started = time.perf_counter()
    answer = api.respond("POST", "/v1/messages", {}, body)
    return len(answer.frames or ()), time.perf_counter() - started


async def sdk_raw_stream() -> tuple[int, float]:
    """Events and seconds through the SDK's raw ``create(stream=True)`` (pings are dropped by the SDK)."""
    client = FakeMessagesAPI(lambda body, index: BIG).client()
    started = time.perf_counter()
    stream = await client.messages.create(model="m", max_tokens=64, messages=MESSAGES, stream=True)
    count = 0
    async for _ in stream:
        count += 1
    return count, time.perf_counter() - started


async def model_stream() -> tuple[int, float]:
    """Events and seconds through ``AnthropicModel.stream`` (the SDK's stream helper + our checks)."""
    model = offline(lambda body, index: BIG)
    started = time.perf_counter()
    count = -1  # the final Message is not an event
    async for _ in model.stream(messages=MESSAGES, max_tokens=64):
        count += 1
    return count, time.perf_counter() - started


async def per_request(streamed: bool) -> float:
    """Milliseconds per small request (a two-word reply), after one warm-up request."""
    model = offline(lambda body, index: reply("ok then"))
    client = model.client

    async def once() -> None:
        if streamed:
            async for _ in model.stream(messages=MESSAGES, max_tokens=64):
                pass
        else:
            await client.messages.create(model="m", max_tokens=64, messages=MESSAGES)

    await once()
    started = time.perf_counter()
    for _ in range(SMALL_REQUESTS):
        await once()
    return (time.perf_counter() - started) * 1000 / SMALL_REQUESTS


async def main() -> None:
    await model_stream()  # warm-up: the SDK imports lazily on first use
    rendered, render_s = render_only()
    raw_events, raw_s = await sdk_raw_stream()
    model_events, model_s = await model_stream()
    print(f"one response of {rendered} SSE frames ({model_events} events after the SDK drops pings)")
    print(f"  fake API render+encode only : {rendered / render_s:>10,.0f} frames/s  ({render_s * 1000:6.1f} ms)")
    print(f"  + SDK raw stream            : {raw_events / raw_s:>10,.0f} events/s  ({raw_s * 1000:6.1f} ms)")
    print(f"  + AnthropicModel.stream     : {model_events / model_s:>10,.0f} events/s  ({model_s * 1000:6.1f} ms)")
    print(f"  AnthropicModel / raw SDK time: {model_s / raw_s:.2f}x;  fake API share of raw SDK time: {render_s / raw_s:.0%}")
    streamed_ms = await per_request(streamed=True)
    plain_ms = await per_request(streamed=False)
    print(f"per small request ({SMALL_REQUESTS} requests): AnthropicModel.stream {streamed_ms:.2f} ms, "
          f"non-streaming create {plain_ms:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
