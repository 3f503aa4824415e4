"""Cassettes: a live run recorded (requests, raw SSE, tool results) and replayed offline, both ways.

Recording goes through the live code path: ``dreamloop.live(base_url=...)``
against the loopback fake API (a real HTTP server on 127.0.0.1), so the SDK's
real HTTP client, SSE parser and the recorder's hook on it are exercised.
"""

from __future__ import annotations

import json

import pytest

import dreamloop as dl
from dreamloop.cli import main
from dreamloop.demo import copy_sample_project, demo_policy
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.errors import FileFormatError
from dreamloop.fake_api import serve
from dreamloop.tools.recorded import NO_RECORDED_RESULT, recorded_tools

SECRET = "sk-ant-api03-DO-NOT-WRITE-ME"
PROMPT = "change value to 2"


async def run_demo(model, workspace, tools=None):
    params = dl.QueryParams(messages=PROMPT, model=model, tools=tools or dl.builtin_tools(), workspace=workspace,
                            permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids()))
    run = dl.query(params)
    events = [event.model_dump(mode="json") async for event in run]
    return run, events


def script():
    """A run whose tools give the same bytes every time (the demo's test run prints its timing)."""
    return [
        dl.reply("Reading it.", dl.tool_use("Read", {"file_path": "config.py"})),
        dl.reply(dl.thinking("value is 1; edit it"), "Changing it.",
                 dl.tool_use("Edit", {"file_path": "config.py", "old_string": "value = 1", "new_string": "value = 2"})),
        dl.reply("Checking.", dl.tool_use("Read", {"file_path": "config.py"})),
        dl.reply("value is 2 now."),
    ]


@pytest.fixture
async def recorded(tmp_path):
    """A live run against the loopback fake API, recorded; the cassette path, the run's events, the requests."""
    path = tmp_path / "run.cassette.jsonl"
    with serve(script()) as server:
        model = dl.live("claude-scripted-1", api_key=SECRET, base_url=server.url, record=path)
        run, events = await run_demo(model, copy_sample_project(tmp_path / "live"))
        model.recorder.finish(run)
        requests = [r.body for r in server.api.requests]
    assert run.terminal.reason == "completed"
    return path, events, requests


async def test_the_cassette_holds_requests_raw_streams_and_tool_results_never_the_key(recorded):
    path, _, requests = recorded
    text = path.read_text()
    assert SECRET not in text and "x-api-key" not in text and "authorization" not in text.lower()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0] == {"kind": "cassette", "version": 1, "model": "claude-scripted-1"}
    exchanges = [r for r in lines if r["kind"] == "exchange"]
    assert [e["request"] for e in exchanges] == requests  # byte for byte what the server received, parsed
    assert all(e["sse"].startswith("event: message_start\n") and e["status"] == 200 for e in exchanges)
    results = [r for r in lines if r["kind"] == "tool_result"]
    assert [r["name"] for r in results] == ["Read", "Edit", "Read"]
    assert "value = 1" in results[0]["content"] and "value = 2" in results[2]["content"]


async def test_replay_with_tools_run_for_real_gives_identical_events(recorded, tmp_path):
    path, events, _ = recorded
    replay = dl.cassette(path)
    model = dl.offline(replay)
    workspace = copy_sample_project(tmp_path / "replay")
    run, replayed = await run_demo(model, workspace)
    assert replayed == events and replay.first_difference is None
    assert "value = 2" in (workspace / "config.py").read_text()  # the tools really ran
    assert [r.body for r in model.api.requests] == [e.request for e in replay.exchanges]


async def test_replay_with_recorded_tool_results_runs_nothing_and_gives_identical_events(recorded, tmp_path):
    path, events, _ = recorded
    replay = dl.cassette(path)
    workspace = copy_sample_project(tmp_path / "untouched")
    model = dl.offline(replay)
    run, replayed = await run_demo(model, workspace, tools=replay.tools(like=dl.builtin_tools()))
    assert replayed == events and replay.first_difference is None
    assert [r.body for r in model.api.requests] == [e.request for e in replay.exchanges]
    assert "value = 1" in (workspace / "config.py").read_text()  # nothing ran: the results came from the file


async def test_a_tool_result_that_differs_is_reported_as_the_first_difference(recorded, tmp_path):
    path, events, _ = recorded
    workspace = copy_sample_project(tmp_path / "other")
    config = workspace / "config.py"
    config.write_text("# a learner copy differs\n" + config.read_text())
    replay = dl.cassette(path)
    run, _ = await run_demo(dl.offline(replay), workspace)
    difference = replay.first_difference
    assert difference.index == 1 and difference.path == "messages.2.content.0.content"
    assert "a learner copy" not in difference.recorded and "a learner copy" in difference.replayed
    assert str(difference).startswith("request #1 differs from the recording at messages.2.content.0.content")
    assert run.terminal.reason == "completed"  # information, not an error: the recorded responses were served


async def test_a_call_the_recording_never_made_gets_an_error_result(offline):
    [read] = recorded_tools([{"name": "Read", "input_schema": {"type": "object", "properties": {}}}], [])
    model = offline([dl.reply(dl.tool_use("Read", {"file_path": "x"})), dl.reply("ok")])
    run = dl.query(dl.QueryParams(messages="go", model=model, tools=[read]))
    [message async for message in run]
    result = model.api.requests[1].body["messages"][-1]["content"][0]
    assert result["is_error"] and result["content"] == NO_RECORDED_RESULT


async def test_thinking_config_is_passed_through_on_the_live_path(tmp_path):
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with serve([dl.reply(dl.thinking("hm"), "Hi.")]) as server:
        model = dl.live("claude-scripted-1", api_key=SECRET, base_url=server.url, thinking=thinking)
        run = dl.query(dl.QueryParams(messages="hi", model=model, max_tokens=2048))
        [event async for event in run]
        body = [r for r in server.api.requests if r.path.endswith("/v1/messages")][0].body
    assert body["thinking"] == thinking and run.terminal.reason == "completed"


@pytest.mark.parametrize("line, problem", [
    ("{torn", "line 2: not JSON"),
    ('{"kind": "exchange", "request": {"model": "m"}}', "line 2: an exchange without its request"),
    ('{"kind": "tool_result", "name": "Read"}', "line 2: a tool_result record without tool_use_id"),
])
async def test_a_corrupt_cassette_is_an_error_naming_the_line(recorded, tmp_path, line, problem):
    path, _, _ = recorded
    lines = path.read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], line, *lines[1:]]) + "\n")
    with pytest.raises(FileFormatError, match=problem):
        dl.cassette(bad)


def test_a_file_that_is_not_a_cassette_says_so(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"kind": "trace", "version": 1}\n')
    with pytest.raises(FileFormatError, match="x.jsonl, line 1: not a dreamloop cassette"):
        dl.cassette(path)


async def test_a_cassette_torn_by_a_crash_replays_what_it_holds(recorded, tmp_path):
    path, _, _ = recorded
    torn = tmp_path / "torn.jsonl"
    torn.write_text(path.read_text()[:-40])
    replay = dl.cassette(torn)
    assert len(replay) == 3  # the last exchange was being written when the recorder stopped


def test_the_command_records_and_replays(tmp_path, capsys, monkeypatch):
    cassette = tmp_path / "run.cassette.jsonl"
    with serve(demo_policy) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        live = ["run", PROMPT, "--live", "--model", "claude-scripted-1", "--permission-mode", "bypass"]
        assert main([*live, "--workspace", str(copy_sample_project(tmp_path / "a")), "--record", str(cassette)]) == 0
    recorded = capsys.readouterr().out
    assert f"recorded 6 exchanges to {cassette}" in recorded and SECRET not in cassette.read_text()

    workspace = copy_sample_project(tmp_path / "b")
    assert main(["run", PROMPT, "--cassette", str(cassette), "--recorded-tools", "--permission-mode", "bypass",
                 "--workspace", str(workspace)]) == 0
    replayed = capsys.readouterr().out
    assert "replayed 6 of 6 recorded responses; every request matched the recording" in replayed
    def turns(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.startswith(("turn_count=", "assistant:", "  tool_"))]

    assert len(turns(recorded)) == 22 and turns(replayed) == turns(recorded)
    assert "value = 1" in (workspace / "config.py").read_text()


@pytest.mark.parametrize("argv, says", [
    (["run", "hi", "--recorded-tools"], "--recorded-tools replays a cassette's tool results"),
    (["run", "hi", "--cassette", "missing.jsonl"], "No such file"),
])
def test_replay_arguments_fail_clearly(argv, says, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and says in capsys.readouterr().err


async def test_json_replies_and_api_errors_are_recorded_and_replayed_too(tmp_path):
    from dreamloop.scripts import http_error

    path = tmp_path / "json.cassette.jsonl"
    model = dl.offline([http_error(500, retry_after_ms=1), dl.reply("Hi there.")], record=path)
    request = {"model": model.model, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    first = await model.client.messages.create(**request)  # not streamed; the SDK retries the 500
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert [(r["status"], "body" in r) for r in lines] == [(500, True), (200, True)]
    assert lines[0]["body"]["error"]["type"] == "api_error"

    replay = dl.cassette(path)
    again = await dl.offline(replay).client.messages.create(**request)
    assert again.content == first.content and replay.first_difference is None


def test_the_command_passes_thinking_through(tmp_path, capsys, monkeypatch):
    with serve([dl.reply(dl.thinking("plan"), "Done.")]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        assert main(["run", "hi", "--live", "--model", "claude-scripted-1", "--workspace", str(tmp_path),
                     "--thinking-budget", "2048"]) == 0
        body = [r for r in server.api.requests if r.path.endswith("/v1/messages")][0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048} and body["max_tokens"] == 64_000  # the model's own limit
    with pytest.raises(SystemExit):
        main(["run", "hi", "--workspace", str(tmp_path), "--thinking-budget", "100"])
    assert "at least 1024" in capsys.readouterr().err
