"""`dreamloop compare`: shapes of real request logs, the MATCH rule, the scenario library, the command
without Claude Code, and the recorded expectations checked for dreamloop's side.

Claude Code's own side runs in `make conformance` (tests/conformance/), not here: `make test` needs no npm.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from dreamloop.compare import SCENARIOS, Ending, SideRun, differences, request_shapes, run_dreamloop, scenario
from dreamloop.compare.command import compare_main
from dreamloop.compare.conformance import Comparison, check, load_expectations, outcome
from dreamloop.compare.scenarios import events_into, events_through
from dreamloop.fake_api import FakeMessagesAPI
from dreamloop.fake_api.sse import message_events
from dreamloop.scripts import reply, text, tool_use

REPO = Path(__file__).resolve().parent.parent
EXPECTATIONS = REPO / "conformance" / "claude-code-2.1.332.json"
MODEL = "claude-sonnet-4-5"


def post(api: FakeMessagesAPI, body: dict) -> None:
    api.respond("POST", "/v1/messages", {"content-type": "application/json"}, json.dumps(body).encode())


def user(*blocks):
    return {"role": "user", "content": list(blocks)}


REMINDER = {"type": "text", "text": "<system-reminder>\nplaceholder\n</system-reminder>"}
PROMPT = {"type": "text", "text": "what is value?"}


def test_shapes_of_a_real_request_log():
    """What each request added, against the one before; the first message's leading reminders are context."""
    api = FakeMessagesAPI([reply("Reading.", tool_use("Read", {"file_path": "/w/config.py"})), reply("value is 1.")])
    first = [user(REMINDER, REMINDER, PROMPT)]
    post(api, {"model": MODEL, "max_tokens": 32000, "stream": True, "messages": first})
    assistant = {"role": "assistant", "content": [text("Reading."), {"type": "tool_use", "id": "toolu_fake_0001",
                                                                      "name": "Read", "input": {"file_path": "/w/c"}}]}
    result = user({"type": "tool_result", "tool_use_id": "toolu_fake_0001", "content": "value = 1",
                   "is_error": True, "cache_control": {"type": "ephemeral"}})
    post(api, {"model": MODEL, "max_tokens": 16000, "messages": [*first, assistant, result]})
    post(api, {"model": "claude-haiku-4-5", "max_tokens": 16000, "messages": [{"role": "user", "content": "x"}]})
    shapes, probes = request_shapes(api.requests, model=MODEL, fallback_model="claude-haiku-4-5")
    assert probes == 0 and len(shapes) == 3
    one, two, three = shapes
    assert (one.context, [str(a) for a in one.added], one.streamed, one.max_tokens_change) == \
        (2, ["user[text]"], True, "=")
    assert [str(a) for a in two.added] == ["assistant[text, tool_use]", "user[tool_result]"]
    assert two.tool_results == (("toolu_fake_0001", True),) and two.max_tokens_change == "-"
    assert not two.streamed and two.cache_control == ("messages[2]",)
    assert three.model == "fallback" and [str(a) for a in three.added] == ["user[text]"]


def test_claude_codes_probe_is_skipped_and_counted():
    api = FakeMessagesAPI([reply("value is 1.")])
    post(api, {"model": MODEL, "max_tokens": 10, "messages": [{"role": "system", "content": "x"}, user(PROMPT)]})
    post(api, {"model": MODEL, "max_tokens": 10, "messages": [user(PROMPT)]})
    assert api.requests[0].status == 400
    shapes, probes = request_shapes(api.requests, model=MODEL)
    assert probes == 1 and len(shapes) == 1 and shapes[0].status == 200


def side(*requests, reason="completed"):
    return SideRun("x", "0", list(requests), Ending(reason))


def base_shape():
    api = FakeMessagesAPI([reply("ok")])
    post(api, {"model": MODEL, "max_tokens": 100, "stream": True, "messages": [user(PROMPT)]})
    return request_shapes(api.requests, model=MODEL)[0][0]


@pytest.mark.parametrize("change, expected", [
    ({"status": 529}, "request 1: status 200 vs 529"),
    ({"streamed": False}, "request 1: streamed vs not streamed"),
    ({"max_tokens_change": "-"}, "request 1: max_tokens 100(=) vs 100(-)"),
    ({"model": "fallback"}, "request 1: model main vs fallback"),
    ({"tool_results": (("toolu_1", True),)}, "request 1: tool_results [] vs [toolu_1 ERR]"),
])
def test_each_part_of_the_match_rule_is_compared(change, expected):
    shape = base_shape()
    assert differences(side(shape), side(shape)) == []
    assert differences(side(shape), side(replace(shape, **change))) == [expected]


def test_request_count_ending_and_order():
    shape = base_shape()
    assert differences(side(shape), side(shape, shape)) == ["requests: 1 vs 2"]
    assert differences(side(shape), side(shape, reason="api_error")) == ["ending: completed vs api_error"]
    a = replace(shape, tool_results=(("t1", False), ("t2", True)))
    b = replace(shape, tool_results=(("t2", True), ("t1", False)))
    assert differences(side(a), side(b)) and differences(side(a), side(b), order_free=True) == []
    assert differences(side(shape), side(replace(shape, context=9, fields=("x",)))) == []  # reported, not compared


def test_a_counted_file_is_an_outcome_line_and_a_point_of_the_match_rule():
    shape = base_shape()
    once, twice = side(shape), side(shape)
    once.counted, twice.counted = {"count.txt": 1}, {"count.txt": 2}
    assert differences(once, twice) == ["count.txt: 1 line vs 2 lines"]
    assert outcome(twice)[-2:] == ["count.txt: 2 lines", "ending: completed"]
    absent = side(shape)
    absent.counted = {"count.txt": -1}
    assert differences(absent, once) == ["count.txt: absent vs 1 line"] and SideRun.from_data(
        twice.as_data()).counted == {"count.txt": 2}


@pytest.mark.parametrize("name", ["disconnect_after_bash_ran", "disconnect_while_bash_runs"])
def test_a_call_that_started_runs_once_per_id_on_dreamloops_side(name):
    """Issue 32's scenarios, dreamloop's side: the Bash call that had started when the connection dropped is
    kept and answered (count.txt: one line per tool_use id), as recorded for Claude Code 2.1.332 too."""
    expected = load_expectations(EXPECTATIONS)
    each = scenario(name)
    ours = run_dreamloop(each)[0]
    assert ours.counted == {"count.txt": 2}
    assert check(expected, [Comparison(name, None, ours, None, each.order_free)]) == []
    assert expected["scenarios"][name]["match"] and "count.txt: 2 lines" in expected["scenarios"][name]["claude_code"]


def test_the_library_covers_what_the_issue_names():
    names = {s.name for s in SCENARIOS}
    assert len(names) == len(SCENARIOS) >= 25
    for needed in ("plain_answer", "parallel_reads", "missing_and_unknown", "invalid_tool_input",
                   "bash_fails_parallel", "max_tokens_once", "max_tokens_always", "max_tokens_in_tool_json",
                   "max_tokens_with_thinking", "http_529", "http_529_fallback", "http_429_retry_after", "http_500",
                   "stream_error_before_block", "stream_error_inside_tool_use", "stream_error_after_tool_use",
                   "disconnect_during_text", "disconnect_inside_tool_use", "disconnect_after_tool_use",
                   "disconnect_after_bash_ran", "disconnect_while_bash_runs",
                   "prompt_too_long_once", "prompt_too_long_always", "prompt_too_long_after_tools",
                   "tool_use_without_block", "empty_text_block", "max_turns", "hook_pre_tool_use_exit_2",
                   "hook_pre_tool_use_deny", "hook_pre_tool_use_updated_input", "hook_post_tool_use_context",
                   "hook_stop_exit_2_once", "signed_thinking"):
        assert needed in names
    for each in SCENARIOS:
        assert each.script("/w") is not None and each.prompt.strip()
    with pytest.raises(KeyError, match="max_tokens_once"):
        scenario("max_tokens_onc")


def test_a_stream_fault_strikes_where_its_scenario_says():
    blocks = [text("Reading."), tool_use("Read", {"file_path": "/a/very/long/workspace/path/config.py"})]
    events = message_events({"id": "m", "content": [blocks[0], {**blocks[1], "id": "t"}],
                             "stop_reason": "end_turn", "usage": {}})
    inside = events[:events_into(blocks, 1)]
    assert inside[-1]["type"] == "content_block_delta" and inside[-1]["index"] == 1
    assert not any(e["type"] == "content_block_stop" and e["index"] == 1 for e in inside)
    through = events[:events_through(blocks, 1)]
    assert through[-1] == {"type": "content_block_stop", "index": 1}
    assert not any(e["type"] == "message_delta" for e in through)


def test_dreamloops_side_runs_against_its_own_server(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --keep (as make conformance gives) works from the side's workspace
    run, files = run_dreamloop(scenario("one_tool"), keep=Path("runs"))
    assert run.ending.reason == "completed" and run.ending.turns == 2
    assert [len(r.added) for r in run.requests] == [1, 2]
    assert run.requests[1].tool_results == (("toolu_fake_0001", False),)
    assert (files.workspace / "config.py").read_text() == "value = 1\n"


def test_without_claude_code_it_says_how_to_get_it_and_runs_dreamloop_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude on PATH
    monkeypatch.delenv("DREAMLOOP_CLAUDE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert compare_main(["plain_answer", "--json", str(tmp_path / "out.json")]) == 0
    out = capsys.readouterr().out
    assert "make conformance" in out and "plain_answer" in out and "dreamloop 1 req -> completed" in out
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["scenarios"][0]["verdict"] == "dreamloop only" and data["scenarios"][0]["claude_code"] is None


@pytest.mark.parametrize("argv, said", [
    (["no_such_scenario"], "no scenario 'no_such_scenario'"),
    (["--claude", "/no/such/claude", "plain_answer"], "--claude /no/such/claude: no such executable"),
    (["--jobs", "0"], "--jobs must be 1 or more"),
    (["--check", "missing.json"], "missing.json: cannot be read"),
])
def test_usage_errors_name_the_problem(argv, said, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        compare_main(argv)
    assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_list_prints_one_scenario_a_line(capsys):
    assert compare_main(["--list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(SCENARIOS) and lines[0].split()[0] == SCENARIOS[0].name


def test_the_expectations_file_records_every_scenario_without_anthropics_text():
    expected = load_expectations(EXPECTATIONS)
    assert expected["claude_code"] == "2.1.332"
    assert set(expected["scenarios"]) == {s.name for s in SCENARIOS}
    raw = EXPECTATIONS.read_text()
    assert "<system-reminder>" not in raw and "You are" not in raw
    for name, recorded in expected["scenarios"].items():
        assert recorded["claude_code"][-1].startswith("ending: ") and recorded["dreamloop"][-1].startswith("ending: ")
        assert recorded["match"] == (not recorded["differences"]), name


@pytest.mark.parametrize("name", ["max_tokens_once", "hook_pre_tool_use_exit_2"])
def test_dreamloops_side_is_as_recorded(name):
    """The check `make conformance` runs for every scenario, here for a few: dreamloop's outcome as recorded."""
    expected = load_expectations(EXPECTATIONS)
    each = scenario(name)
    ours = run_dreamloop(each)[0]
    assert check(expected, [Comparison(name, None, ours, None, each.order_free)]) == []


def test_a_changed_outcome_is_an_unexpected_change():
    expected = load_expectations(EXPECTATIONS)
    shape = base_shape()
    changed = side(shape, reason="model_error")
    changes = check(expected, [Comparison("plain_answer", None, changed, None)])
    assert len(changes) == 1 and changes[0].startswith("plain_answer: dreamloop changed: line 2:")
    assert outcome(changed)[-1] == "ending: model_error"


def test_a_note_appended_to_the_last_message_is_an_extension():
    """Claude Code adds its note to the user message it already sent; only the appended blocks are new."""
    api = FakeMessagesAPI([reply("ok"), reply("ok")])
    post(api, {"model": MODEL, "max_tokens": 10, "messages": [user(REMINDER, PROMPT)]})
    post(api, {"model": MODEL, "max_tokens": 10, "messages": [user(REMINDER, PROMPT, REMINDER)]})
    post(api, {"model": MODEL, "max_tokens": 10, "messages": [user(PROMPT, REMINDER)]})
    one, two, three = request_shapes(api.requests, model=MODEL)[0]
    assert [str(a) for a in one.added] == ["user[text]"] and one.context == 1
    assert [str(a) for a in two.added] == ["user+[reminder]"]
    assert [str(a) for a in three.added] == ["user[text, reminder]"]  # changed, not appended: the whole message


def test_a_change_is_asked_again_before_it_is_reported(tmp_path, monkeypatch, capsys):
    """--check runs a changed scenario again (timing can move a run) and reports it when every try shows it."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("DREAMLOOP_CLAUDE", raising=False)
    monkeypatch.chdir(tmp_path)
    expected = load_expectations(EXPECTATIONS)
    expected["scenarios"]["plain_answer"]["dreamloop"] = ["ending: model_error"]
    (tmp_path / "e.json").write_text(json.dumps(expected))
    assert compare_main(["plain_answer", "--check", str(tmp_path / "e.json")]) == 1
    out = capsys.readouterr().out
    assert out.count("running again") == 2 and "UNEXPECTED plain_answer: dreamloop changed" in out
