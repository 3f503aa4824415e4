"""`dreamloop compare`: shapes of real request logs, the MATCH rule, the scenario library, the command
without Claude Code, and the recorded expectations checked for dreamloop's side.

Claude Code's own side runs in `make conformance` (tests/conformance/), not here: `make test` needs no npm.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from dreamloop.compare import SCENARIOS, Ending, SideRun, differences, request_shapes, run_dreamloop, scenario
from dreamloop.compare.command import compare_main
from dreamloop.compare.conformance import Comparison, changed_lines, check, load_expectations, outcome, record
from dreamloop.compare.scenarios import events_into, events_through
from dreamloop.compare.sides import CLAUDE_CODE_VERSION, expectations_name
from dreamloop.fake_api import FakeMessagesAPI
from dreamloop.fake_api.sse import message_events
from dreamloop.scripts import reply, text, tool_use

REPO = Path(__file__).resolve().parent.parent
EXPECTATIONS = REPO / "conformance" / expectations_name()
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
    ({"max_tokens": 64000}, "request 1: max_tokens 100 vs 64000"),
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
    inside = replace(shape, result_reminders=(("t1", 57, "8a1f0c2e"),))
    assert differences(side(shape), side(inside)) == []  # reported (in the outcome lines), not compared


def test_an_absolute_limit_is_compared_even_when_neither_side_changed_it():
    """Both sides kept their first limit (the old rule's "=" on both), but one sent 32000 and the other 64000."""
    shape = base_shape()
    ours, theirs = replace(shape, max_tokens=32000), replace(shape, max_tokens=64000)
    assert ours.max_tokens_change == theirs.max_tokens_change == "="
    assert differences(side(ours, ours), side(theirs, theirs)) == ["request 1: max_tokens 32000 vs 64000",
                                                                 "request 2: max_tokens 32000 vs 64000"]
    assert outcome(side(ours))[0] == "200 stream max_tokens=32000 main +user[text]"


def result_request(content, markers=()):
    """A second request whose tool_result holds ``content`` (a string or text blocks), shaped with ``markers``."""
    api = FakeMessagesAPI([reply("ok"), reply("ok")])
    first = [user(REMINDER, PROMPT)]
    post(api, {"model": MODEL, "max_tokens": 10, "messages": first})
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}]}
    post(api, {"model": MODEL, "max_tokens": 10, "messages": [
        *first, call, user({"type": "tool_result", "tool_use_id": "toolu_1", "content": content})]})
    return request_shapes(api.requests, model=MODEL, markers=markers)[0]


def test_reminders_inside_a_result_are_kept_as_lengths_and_hashes_with_numbers_blanked():
    counted = "<system-reminder>\n<total_tokens>14975110 tokens left</total_tokens>\n</system-reminder>"
    other = counted.replace("14975110", "96")
    one = result_request("1\tvalue = 1\n" + counted)[1]
    two = result_request([{"type": "text", "text": "1\tvalue = 1"}, {"type": "text", "text": other}])[1]
    assert len(one.result_reminders) == 1 and one.result_reminders == two.result_reminders
    (ident, length, digest), = one.result_reminders
    assert ident == "toolu_1" and length == len(counted) - 7 and re.fullmatch(r"[0-9a-f]{8}", digest)
    line = outcome(side(one))[0]
    assert line.endswith(f"results[toolu_1] inside[toolu_1 {length}#{digest}]") and "tokens left" not in line
    assert outcome(side(one), order_free=True)[0].endswith(f"inside[{length}#{digest}]")
    assert outcome(side(result_request("plain")[1]))[0].endswith("results[toolu_1]")


def test_a_scenarios_own_texts_are_found_where_they_arrived():
    hook = "<system-reminder>\nhook additional context: config.py is generated\n</system-reminder>"
    shapes = result_request("PreToolUse:Edit hook error: config.py is frozen\n" + hook,
                            markers=("config.py is frozen", "config.py is generated", "value = 7", "placeholder"))
    assert shapes[0].texts == (("placeholder", "context"),)
    assert shapes[1].texts == (("config.py is frozen", "result toolu_1"),
                               ("config.py is generated", "reminder inside result toolu_1"))
    run = replace(side(*shapes), markers=("config.py is frozen", "value = 7"))
    assert run.arrivals() == [("config.py is frozen", "request 2 result toolu_1"), ("value = 7", "never")]
    assert outcome(run)[-2:] == ["texts: 'config.py is frozen' request 2 result toolu_1; 'value = 7' never",
                                 "ending: completed"]
    other = replace(run, requests=[shapes[0], replace(shapes[1], texts=())])
    assert differences(run, other) == ["text 'config.py is frozen': request 2 result toolu_1 vs never"]
    assert SideRun.from_data(run.as_data()).arrivals() == run.arrivals()


def test_what_became_of_the_workspace_is_compared(tmp_path):
    from dreamloop.compare.sides import workspace_changes

    each = scenario("read_then_edit")
    for name, content in each.files.items():
        (tmp_path / name).write_text(content)
    assert workspace_changes(each, tmp_path) == ()
    (tmp_path / "config.py").write_text("value = 2\n")
    (tmp_path / "greeter.py").unlink()
    assert workspace_changes(each, tmp_path) == ("config.py changed", "greeter.py removed")
    shape = base_shape()
    edited, kept = replace(side(shape), workspace=("config.py changed",)), replace(side(shape), workspace=())
    assert differences(edited, kept) == ["workspace: config.py changed vs unchanged"]
    assert outcome(kept)[-2] == "workspace: unchanged"
    assert differences(edited, side(shape)) == []  # a side not looked at is not compared on it


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
    assert expected["claude_code"] == CLAUDE_CODE_VERSION
    assert set(expected["scenarios"]) == {s.name for s in SCENARIOS}
    raw = EXPECTATIONS.read_text()
    assert "<system-reminder>" not in raw and "You are" not in raw
    for name, recorded in expected["scenarios"].items():
        assert recorded["claude_code"][-1].startswith("ending: ") and recorded["dreamloop"][-1].startswith("ending: ")
        assert recorded["match"] == (not recorded["differences"]), name


@pytest.mark.parametrize("name", ["max_tokens_once", "hook_pre_tool_use_exit_2", "results_in_finishing_order",
                                  "output_limit_streaming_fallback"])
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
    assert changes and all(line.startswith("plain_answer: dreamloop changed: ") for line in changes)
    assert any("now 'ending: model_error'" in line for line in changes)
    assert outcome(changed)[-1] == "ending: model_error"


def test_each_changed_line_is_reported_and_an_inserted_line_is_one_change():
    was = ["a", "b", "c", "ending: completed"]
    assert changed_lines(was, was) == []
    assert changed_lines(was, ["a", "x", "b", "c", "ending: completed"]) == ["new line after line 1: 'x'"]
    assert changed_lines(was, ["a", "B", "c", "ending: api_error"]) == [
        "line 2: was 'b', now 'B'", "line 4: was 'ending: completed', now 'ending: api_error'"]
    assert changed_lines(was, ["a", "ending: completed"]) == ["line 2: was 'b', now gone", "line 3: was 'c', now gone"]


def test_another_claude_code_version_is_checked_and_its_changes_are_reported_since_the_files():
    """The file's version is not the one that ran: Claude Code's side is still compared, each change named as
    a change since the file's version (issue 31: a doctored 2.1.331 file checked with 2.1.332 passed)."""
    expected = load_expectations(EXPECTATIONS)
    expected["claude_code"] = "2.1.331"
    recorded = expected["scenarios"]["plain_answer"]
    theirs = SideRun("claude-code", CLAUDE_CODE_VERSION, [], Ending("completed"))
    ours = SideRun("dreamloop", "0", [], Ending("completed"))
    changes = check(expected, [Comparison("plain_answer", theirs, ours, [], False)])
    assert any(line.startswith(f"plain_answer: claude code changed since 2.1.331 (now {CLAUDE_CODE_VERSION}): ")
               for line in changes)
    assert any(line.startswith("plain_answer: dreamloop changed: ") for line in changes)
    same = SideRun.from_data({"side": "claude-code", "version": CLAUDE_CODE_VERSION, "requests": [],
                              "ending": {"reason": "completed"}})
    expected["scenarios"]["plain_answer"] = {**recorded, "claude_code": outcome(same), "dreamloop": outcome(ours)}
    assert check(expected, [Comparison("plain_answer", same, ours, [], False)]) == []  # the same lines: no change


def test_recording_one_scenario_keeps_the_others_of_the_same_version(tmp_path):
    path = tmp_path / "e.json"
    path.write_text(EXPECTATIONS.read_text())
    theirs = SideRun("claude-code", CLAUDE_CODE_VERSION, [base_shape()], Ending("completed"), workspace=())
    ours = SideRun("dreamloop", "0", [base_shape()], Ending("completed"), workspace=())
    written = record(path, [Comparison("plain_answer", theirs, ours, [], False)], CLAUDE_CODE_VERSION)
    before = load_expectations(EXPECTATIONS)["scenarios"]
    assert list(written["scenarios"]) == [s.name for s in SCENARIOS]
    assert written["scenarios"]["plain_answer"]["claude_code"] == outcome(theirs)
    assert all(written["scenarios"][name] == row for name, row in before.items() if name != "plain_answer")
    other = record(tmp_path / "other.json", [Comparison("plain_answer", theirs, ours, [], False)], "9.9.9")
    assert list(other["scenarios"]) == ["plain_answer"]


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


def test_the_pinned_version_is_written_once():
    """The Makefile reads the pin from `compare/sides.py`; the recorded files are named from it."""
    makefile = (REPO / "Makefile").read_text()
    assert CLAUDE_CODE_VERSION not in makefile and "dreamloop/compare/sides.py" in makefile
    sides = (REPO / "dreamloop" / "compare" / "sides.py").read_text()
    assert re.findall(r'^CLAUDE_CODE_VERSION = "([^"]*)"', sides, re.M) == [CLAUDE_CODE_VERSION]
    assert (REPO / "conformance" / expectations_name()).is_file()
    assert (REPO / "conformance" / expectations_name(kind="requests")).is_file()


# -- sub-agents: a child's requests are a conversation of their own (issue 34 item 4) -------------------------

CHILD_PROMPT = {"type": "text", "text": "CHILDTASK-1: read the file"}


def child_and_parent_log():
    """A parent's two requests with a child's two between them, as the server receives them in some order."""
    api = FakeMessagesAPI([reply("ok")] * 4)
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_agent_1", "name": "Agent", "input": {}}]}
    read = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {}}]}
    tools = [{"name": name, "description": "x", "input_schema": {"type": "object"}} for name in ("Agent", "Read")]
    post(api, {"model": MODEL, "max_tokens": 10, "tools": tools, "messages": [user(REMINDER, REMINDER, PROMPT)]})
    post(api, {"model": MODEL, "max_tokens": 10, "tools": tools[1:], "messages": [user(REMINDER, CHILD_PROMPT)]})
    post(api, {"model": MODEL, "max_tokens": 10, "tools": tools, "messages": [
        user(REMINDER, REMINDER, PROMPT), call, user({"type": "tool_result", "tool_use_id": "toolu_agent_1",
                                                      "content": "launched"})]})
    post(api, {"model": MODEL, "max_tokens": 10, "tools": tools[1:], "messages": [
        user(REMINDER, CHILD_PROMPT), read, user({"type": "tool_result", "tool_use_id": "toolu_r", "content": "x"})]})
    return api


def test_a_childs_requests_are_shaped_apart_from_its_parents():
    api = child_and_parent_log()
    mixed, _ = request_shapes(api.requests, model=MODEL)  # without the key: one conversation, shapes that mislead
    assert [str(a) for a in mixed[1].added] == ["user[reminder, text]"]
    shapes, _ = request_shapes(api.requests, model=MODEL, children=("CHILDTASK-1",))
    assert [s.conversation for s in shapes] == ["", "", "CHILDTASK-1", "CHILDTASK-1"]
    assert [s.context for s in shapes] == [2, 0, 1, 0]
    assert [str(a) for a in shapes[1].added] == ["assistant[tool_use]", "user[tool_result]"]
    assert [str(a) for a in shapes[3].added] == ["assistant[tool_use]", "user[tool_result]"]
    assert [(s.tools, s.offers_agent) for s in shapes] == [(2, True), (2, True), (1, False), (1, False)]
    lines = outcome(SideRun("x", "0", shapes, Ending("completed")))
    assert lines[2].startswith("CHILDTASK-1: 200 no-stream max_tokens=10 main +user[text]")
    assert lines[4:6] == ["tools: main 2 with Agent, CHILDTASK-1 1", "context: main 2, CHILDTASK-1 1"]
    alone = SideRun("x", "0", shapes[:2], Ending("completed"))
    assert differences(SideRun("x", "0", shapes, Ending("completed")), alone) == ["CHILDTASK-1 requests: 2 vs 0"]
    changed = [*shapes[:3], replace(shapes[3], status=529)]
    assert differences(SideRun("x", "0", shapes, Ending("completed")), SideRun("x", "0", changed, Ending("completed"))) \
        == ["CHILDTASK-1 request 2: status 200 vs 529"]


def test_a_notifications_run_names_are_emptied_before_hashing():
    from dreamloop.compare.shapes import reminder_digest

    one = "<system-reminder>\n<task-id>bjiwvhrcb</task-id>\n<output-file>/tmp/a/x.output</output-file>\n</system-reminder>"
    two = "<system-reminder>\n<task-id>zq</task-id>\n<output-file>/tmp/bb/yy.output</output-file>\n</system-reminder>"
    assert reminder_digest(one) == reminder_digest(two)
    assert reminder_digest(one) != reminder_digest(one.replace("task-id>", "task-name>"))


def test_the_sub_agent_scenarios_name_their_children_and_the_stop_is_not_one():
    for name, keys in (("sub_agent_call", ("CHILDTASK-1",)), ("two_sub_agents", ("CHILDTASK-1", "CHILDTASK-2"))):
        assert scenario(name).children == keys
    assert not any("stop" in s.name and "sub_agent" in s.name for s in SCENARIOS)
    assert "Stop while a sub-agent runs" in (REPO / "docs" / "compare.md").read_text(encoding="utf-8")
