"""LiveView on real runs: streamed text, tool calls, phases, and the Stop button stopping the loop."""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.widgets import LiveView


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file; 'slow' takes 5 s."""
    await asyncio.sleep(5 if input.path == "slow" else 0)
    if input.path == "bad":
        raise ValueError("no <such> file")
    return f"contents of {input.path}"


@tool(PathInput, name="Edit")
async def edit(input: PathInput) -> str:
    """Edit a file (not concurrency-safe: it waits for the reads)."""
    return f"edited {input.path}"


async def test_watch_shows_text_tools_phases_and_terminal(offline):
    model = offline([
        S.reply("Let me read.", S.tool_use("Read", {"path": "a"}, id="T1"),
                S.tool_use("Read", {"path": "bad"}, id="T2")),
        S.reply("a has contents."),
    ])
    run = query(QueryParams(messages="read", model=model, tools=[read]))
    live = LiveView()
    assert repr(live) == "LiveView()" and live._repr_mimebundle_()["text/plain"] == "LiveView()"
    assert live.stop_button.disabled  # nothing to stop yet

    terminal = await live.watch(run)

    assert terminal is run.terminal and terminal.reason == "completed"
    assert live.terminal is terminal
    assert live.stop_button.disabled
    assert "Terminal" in live.status.value and "reason=<b>completed</b>" in live.status.value
    transcript = live.transcript.value
    assert "Let me read." in transcript and "a has contents." in transcript
    assert "turn_count=1" in transcript and "turn_count=2" in transcript and "transition=next_turn" in transcript
    assert "contents of a" in transcript and "ran ✓" in transcript
    assert "ran ✗" in transcript and ">is_error</span>" in transcript
    assert "no &lt;such&gt; file" in transcript and "<such>" not in transcript
    assert live.phases == ["state", "context", "model", "decide", "tools", "check",
                           "next", "state", "context", "model", "decide", "stop", "terminal"]
    assert 'id="phase-terminal" class="phase active"' in live.diagram.value


async def test_follow_passes_every_event_and_lights_phases_as_it_goes(offline):
    model = offline([S.reply(S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("done")])
    run = query(QueryParams(messages="read", model=model, tools=[read]))
    live = LiveView()
    lit = []
    events = []
    async for event in live.follow(run):
        events.append(event.type)
        lit.append((event.type, live.phase))
        if event.type == "stream_request_start":
            assert not live.stop_button.disabled  # Stop is live while the run is
    assert ("stream_request_start", "model") in lit
    assert ("assistant", "decide") in lit and ("progress", "tools") in lit and ("user", "check") in lit
    assert events.count("stream_request_start") == 2 and events[-1] == "assistant"


async def test_stop_button_stops_streaming(offline):
    model = offline([S.reply("word " * 300, tokens_per_second=300)])
    run = query(QueryParams(messages="talk", model=model))
    live = LiveView()
    started = time.monotonic()
    deltas = 0
    async for event in live.follow(run):
        if event.type == "stream_event" and event.event.type == "content_block_delta":
            deltas += 1
            if deltas == 5:
                live.stop_button.click()  # as a person would: the callback hops onto the loop
    assert run.terminal.reason == "aborted_streaming"
    assert run.trace.terminal.reason == "aborted_streaming"
    assert time.monotonic() - started < 2
    assert deltas < 20
    # what streamed before the stop is still shown, in the transcript, and the Stop note after it (issue 35)
    transcript = live.transcript.value
    assert "word word" in transcript and not live.stream.value
    assert transcript.index("word word") < transcript.index("The person stopped this request")
    assert "reason=<b>aborted_streaming</b>" in live.status.value
    assert live.stop_button.disabled
    assert live.phases[-2:] == ["model", "terminal"]


async def test_stop_button_stops_tools(offline):
    model = offline([S.reply("Reading.", S.tool_use("Read", {"path": "slow"}, id="T1"))])
    run = query(QueryParams(messages="read", model=model, tools=[read]))
    live = LiveView()
    started = time.monotonic()
    async for event in live.follow(run):
        if event.type == "progress" and event.data["stage"] == "started":
            asyncio.get_running_loop().call_later(0.05, live.stop_button.click)  # a click mid-await
    assert run.terminal.reason == "aborted_tools"
    assert time.monotonic() - started < 2
    transcript = live.transcript.value
    assert "Read" in transcript and "Interrupted by user" in transcript and "cut short ✗" in transcript
    assert "reason=<b>aborted_tools</b>" in live.status.value
    assert live.phases[-3:] == ["tools", "check", "terminal"]


async def test_streaming_updates_are_throttled(offline):
    model = offline([S.reply("hello world " * 40, chunk_size=4, tokens_per_second=1000)])
    run = query(QueryParams(messages="talk", model=model))
    live = LiveView(throttle=0.05)
    updates = []
    live.stream.observe(lambda change: updates.append(change["new"]), names="value")
    deltas = 0
    async for event in live.follow(run):
        if event.type == "stream_event" and event.event.type == "content_block_delta":
            deltas += 1
            if deltas == 50:
                assert "hello world" in live.stream.value  # text shows up while it streams
    assert deltas >= 100
    assert 2 <= len(updates) <= deltas // 4
    assert live.stream.value == ""  # the finished message moved into the transcript
    assert live.transcript.value.count("hello world") == 40


async def test_a_stopped_turn_says_ran_cut_short_never_started(offline):
    """Stop while one call runs and one waits behind it (F14): each card says which, with its input, below the
    assistant message that asked for them (streaming tool execution starts calls before that message ends)."""
    model = offline([S.reply("Reading, then editing.", S.tool_use("Read", {"path": "a.txt"}, id="T1"),
                             S.tool_use("Read", {"path": "slow"}, id="T2"), S.tool_use("Edit", {"path": "c"}, id="T3"))])
    run = query(QueryParams(messages="go", model=model, tools=[read, edit], streaming_tool_execution=True))
    live = LiveView()
    async for event in live.follow(run):
        if event.type == "progress" and event.data["stage"] == "started" and event.tool_use_id == "T2":
            asyncio.get_running_loop().call_later(0.05, live.stop_button.click)
    transcript = live.transcript.value
    assert "ran ✓" in transcript and "cut short ✗" in transcript and "never started ✗" in transcript
    assert "null" not in transcript and '{"path": "c"}' in transcript.replace("&quot;", '"')
    assert transcript.index("Reading, then editing.") < transcript.index("cut short ✗")
