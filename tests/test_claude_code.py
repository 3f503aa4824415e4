"""Claude Code session files rebuilt as traces (dreamloop.claude_code, import_claude_code).

The expected figures for the four named sessions were derived by hand from the
files (tests/fixtures/claude-code-sessions, copied from the shared fixtures with
their SOURCES.md), by reading them record by record: for each line, its type,
uuid, parentUuid, message.id and content blocks. "Model call" = one distinct
message.id on the branch's assistant records; "tool pair" = a tool_use block
answered by a tool_result block with its id; "interrupt" = a
"[Request interrupted by user…]" marker. Line numbers are 1-based.

04 (sniffly, v1.0.17, 21 lines, one branch):
    call 1 = lines 3-5 (msg …aVXnZ6: text, tool_use S4tRFR, tool_use N3N4hq), results lines 6-7;
    call 2 = lines 8-11 (msg …uKViZu: text + 3 Bash tool_use u92cRN, aNgBmo, SBY8bo), results lines
    12-14, of which 13 and 14 are is_error permission rejections ("The user doesn't want to …");
    line 15 is "[Request interrupted by user for tool use]", line 16 "continue" starts a new run;
    call 3 = lines 17-18 (msg …XQriTM: 2 tool_use), results 19-20; call 4 = line 21 (msg …sFavHj, text).
    → 4 model calls, 7 tool pairs, 2 is_error, 1 interrupt (after call 2, with tools pending:
    aborted_tools). Runs: calls 1-2 (turn_count 1, 2), calls 3-4 (1, 2).
02 (claude-code-log, v2.1.42, 61 lines): the system record on line 16 has two children, the
    prompts on lines 18 and 38 (a rewind). Walking back from the last record (line 61) reaches
    38 → 16 → 14 → 13 → 10 → 9 → 7…3 → 2 (a progress record is the root). On that branch:
    hPo25U (lines 4-7), tNcLfH (10), sjYcpf (14), 4X7w8K (39-41), tQj2qJ (46-48), muojYA (53-55)
    → 6 model calls; tool pairs mS8j1f (7→9) and mijpZV (10→13) → 2; no interrupt. The other
    branch ends at line 33: the 3 shared calls plus CXfoQx (19-21), W4W25K (26-28), Xxhnrm (33).
01 (fasthooks, v2.0.76, 63 lines): 12 message ids (Te3GMH, C3HzWy, 2L7Gz9, th4VhT, LvtxPV,
    me6RZc, rtdHDn, iVeBZN, xTLt8Y, pPxEy4, NXjWd1, 7TtBKB); 10 tool pairs (HwFh2s, UfK1s6,
    vCoZoH, AXSfQW, ZbhRh6, MA4amM, jc656P, Dk1wSh, dEU4zf, gvoUhN), 2 is_error (AXSfQW line
    30, Dk1wSh line 48); no interrupt; the compaction boundary (line 59) comes after the last
    call (lines 54-55), so every call is in epoch 0; 5 prompts → 5 runs (the 5th has 4 calls).
05 (claude-code-viewer, v1.0.108, 53 lines): main thread jZjnMA, o1poH3, EYREvX, Ufwtgs, imKzVF,
    TgubZn, LuRaSX, pFGfGU, BSudRC, VuzhiH → 10 model calls, one run; 13 tool pairs (aW2SPc,
    sgMTfP, QcApEG, A9GMcS, HGQife, NJ7gjC, Euucy7, QcJH44, KRziMZ, DkYwvc, pvYMVW, fSRuKi,
    ndBEGN), 2 is_error (HGQife line 15, DkYwvc line 46); no interrupt. Two sidechains
    (isSidechain, roots on lines 16 and 26): 3 calls / 2 pairs and 7 calls / 6 pairs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dreamloop.claude_code import NOT_IN_THE_FILE, REQUESTS_IN_THE_FILE, SYNTHESIZED_RESULT, import_claude_code, read_session
from dreamloop.cli import main
from dreamloop.errors import FileFormatError
from dreamloop.fake_api import validate_request
from dreamloop.messages import normalize_messages_for_api
from dreamloop.trace import Trace
from dreamloop.widgets import StateInspector

from conformance.scrub import placeholder, scrub_records, scrub_text

SESSIONS = Path(__file__).parent / "fixtures" / "claude-code-sessions"


def session_file(number: str) -> Path:
    return next(SESSIONS.glob(f"{number}_*.jsonl"))


def figures(trace: Trace) -> dict[str, object]:
    """Model calls, tool pairs, is_error results, interrupts and turn counts, read off a trace."""
    tool_uses, results = set(), {}
    for point in trace.checkpoints:
        for message in trace.resolve(point.assistant_messages):
            tool_uses |= {b.id for b in message.message.content if b.type == "tool_use"}
        for message in trace.resolve(point.tool_results):
            for block in message.message["content"]:
                results[block["tool_use_id"]] = block
    return {
        "calls": len(trace.checkpoints),
        "pairs": len(tool_uses & set(results)),
        "errors": sum(1 for b in results.values() if b.get("is_error")),
        "interrupts": sum(1 for p in trace.checkpoints if p.terminal and p.terminal.reason.startswith("aborted")),
        "turns": [p.turn_count for p in trace.checkpoints],
    }


@pytest.mark.parametrize("number, calls, pairs, errors, interrupts, turns", [
    ("04", 4, 7, 2, 1, [1, 2, 1, 2]),
    ("02", 6, 2, 0, 0, [1, 2, 3, 1, 1, 1]),
    ("01", 12, 10, 2, 0, [1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 3, 4]),
    ("05", 10, 13, 2, 0, list(range(1, 11))),
])
def test_named_sessions_match_the_figures_read_by_hand(number, calls, pairs, errors, interrupts, turns):
    trace = import_claude_code(session_file(number))
    assert figures(trace) == {"calls": calls, "pairs": pairs, "errors": errors, "interrupts": interrupts,
                              "turns": turns}


def test_the_interrupt_in_04_ends_the_run_with_the_pending_calls_rejected():
    trace = import_claude_code(session_file("04"))
    point = trace.checkpoints[1]
    assert point.terminal.reason == "aborted_tools" and point.next_transition is None
    blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
    assert [b.get("is_error", False) for b in blocks] == [False, True, True]  # git add ran; commit and push rejected
    assert any("rejected by the person at the permission prompt" in note for note in point.notes)
    interrupt = [m for m in trace.resolve(point.attachments) if m.type == "user"]
    assert interrupt[0].message["content"][0]["text"] == "[Request interrupted by user for tool use]"
    following = trace.checkpoints[2]
    assert (following.turn_count, following.transition) == (1, None)
    prompt = trace.resolve(following.messages_for_query)[-1]
    assert prompt.message["content"] == "continue"


def test_an_interrupt_after_the_tools_finished_ends_the_next_request_streaming():
    # 03 (v2.1.38): line 17 answers the Bash call of lines 12-13, then line 18 is the plain
    # "[Request interrupted by user]": the calls were done, so the person stopped the next request
    # while it streamed (nothing of it was written). The same again at line 39, after line 38.
    trace = import_claude_code(session_file("03"))
    ends = [(p.index, p.terminal.reason, p.terminal.turn_count) for p in trace.checkpoints if p.terminal]
    assert ends == [(1, "aborted_streaming", 3), (3, "aborted_streaming", 3)]
    assert any("while it was streaming" in n for n in trace.checkpoints[1].notes)


def test_02_lists_both_branches_and_opens_the_abandoned_one_by_prefix():
    session = read_session(session_file("02"))
    default, other = session.branches
    assert default.default and (default.tip_line, default.model_calls) == (61, 6)
    assert (other.tip_line, other.model_calls, other.sidechain) == (33, 6, False)
    assert "I very much like this idea" in other.own_prompt
    trace = session.trace(other.tip[:8])
    ids = [m.message.id[-6:] for p in trace.checkpoints for m in trace.resolve(p.assistant_messages)]
    assert ids == ["hPo25U", "tNcLfH", "sjYcpf", "CXfoQx", "W4W25K", "Xxhnrm"]
    with pytest.raises(KeyError, match="no branch"):
        session.steps("ffffffff")


def test_05_keeps_sidechains_apart_and_opens_one_on_its_own():
    session = read_session(session_file("05"))
    main_thread = session.steps()
    sidechain_uuids = {json.loads(line)["uuid"] for line in session_file("05").read_text().splitlines()
                       if json.loads(line).get("isSidechain")}
    seen = {u for point in main_thread for u in [*point.state_messages, *point.assistant_messages,
                                                  *point.tool_results]}
    assert len(sidechain_uuids) == 22 and not seen & sidechain_uuids  # SOURCES: 22 sidechain records
    sidechains = sorted((b.tip_line, b.model_calls) for b in session.branches if b.sidechain)
    assert sidechains == [(22, 3), (40, 7)]
    notes = [n for point in main_thread for n in point.notes if "sidechain branch" in n]
    assert len(notes) == 2  # each Task call says where its subagent's conversation is
    trace = import_claude_code(session_file("05"), branch="1af6128d")
    assert figures(trace)["calls"] == 7 and figures(trace)["pairs"] == 6 and trace.source["sidechain"]


def test_parallel_results_fanned_out_in_2_1_are_all_found():
    # 07 (2.1.114): three Agent calls in one response; each result's parentUuid is its own tool_use
    # record, so a plain walk back from the leaf would keep one of them.
    trace = read_session(session_file("07")).trace()
    calls = lambda point: [b for m in trace.resolve(point.assistant_messages) for b in m.message.content  # noqa: E731
                           if b.type == "tool_use"]
    agents = next(p for p in trace.checkpoints if [b.name for b in calls(p)] == ["Agent"] * 3)
    answered = {b["tool_use_id"] for m in trace.resolve(agents.tool_results) for b in m.message["content"]}
    assert answered == {b.id for b in calls(agents)} and not any("synthesized" in n for n in agents.notes)


@pytest.mark.parametrize("path", sorted(SESSIONS.glob("*.jsonl")), ids=lambda p: p.name[:2])
def test_every_rebuilt_exchange_passes_the_offline_api_validation(path):
    session = read_session(path)
    for branch in session.branches:
        trace = session.trace(branch.tip)
        for point in trace.checkpoints:
            request = {"model": "m", "max_tokens": 1024,
                       "messages": normalize_messages_for_api(trace.resolve(point.messages_for_query))}
            assert validate_request(request) is None, (path.name, branch.tip, point.index)
        assert trace.source["rejected_exchanges"] == []


def test_the_inspector_says_what_the_file_does_not_hold():
    trace = import_claude_code(session_file("04"))
    inspector = StateInspector(trace, index=1)
    header = inspector.header.value
    assert "not the system prompt and not the tool" in header and "definitions" in header
    assert "04_sniffly" in header and "aborted_tools" in header and "rejected by the person" in header
    assert "no system prompt and no tool definitions" in inspector.panes["messages_for_query"].value
    inspector.slider.value = 3
    assert "reason=<b>completed</b>" in inspector.header.value


def test_a_trace_saved_and_loaded_keeps_its_source_and_notes(tmp_path):
    trace = import_claude_code(session_file("01"))
    loaded = Trace.load(trace.save(tmp_path / "t.jsonl"))
    assert loaded.source == trace.source and loaded.source["note"] == NOT_IN_THE_FILE
    assert [p.notes for p in loaded.checkpoints] == [p.notes for p in trace.checkpoints]
    assert [p.model_dump() for p in loaded.checkpoints] == [p.model_dump() for p in trace.checkpoints]


def test_hidden_thinking_is_shown_as_hidden():
    trace = import_claude_code(session_file("07"))
    inspector = StateInspector(trace)
    assert "(hidden: only its signature was kept)" in inspector.panes["assistant_messages"].value
    assert any("thinking hidden" in n for n in trace.checkpoints[0].notes)


# ---------------------------------------------------------------------------
# Made-up files for the edges: a crash, an orphan result, torn and corrupt lines


def record(kind, uuid, parent, content, **extra):
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("mid"), model="claude-x", type="message",
                       usage={"input_tokens": 5, "output_tokens": 2})
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": message, **extra}


def write(path, records, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail, encoding="utf-8")
    return path


def crashed_session():
    return [
        record("user", "u1", None, "list the files"),
        record("assistant", "a1", "u1",
               [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}], mid="msg_1"),
        # Claude Code died here: no tool_result for toolu_1; the person came back later
        record("user", "u2", "a1", "are you still there?"),
        record("assistant", "a2", "u2", [{"type": "text", "text": "Yes."}], mid="msg_2"),
    ]


def test_a_dangling_tool_use_gets_a_synthesized_result_marked_as_such(tmp_path):
    trace = read_session(write(tmp_path / "s.jsonl", crashed_session())).trace()
    first, second = trace.checkpoints
    [made] = trace.resolve(first.tool_results)
    assert made.uuid == "synthesized-toolu_1" and made.is_meta
    assert made.message["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1",
                                        "content": SYNTHESIZED_RESULT, "is_error": True}]
    assert any(n.startswith("synthesized is_error tool_result for toolu_1") for n in first.notes)
    assert trace.source["rejected_exchanges"] == []  # the synthesized result keeps the next exchange valid


def test_an_exchange_the_api_would_reject_is_reported(tmp_path):
    records = [
        record("user", "u1", None, "hi"),
        record("assistant", "a1", "u1", [{"type": "text", "text": "Hello."}], mid="msg_1"),
        record("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "?"}]),
        record("assistant", "a2", "u2", [{"type": "text", "text": "Hm."}], mid="msg_2"),
    ]
    trace = import_claude_code(write(tmp_path / "s.jsonl", records))
    assert trace.source["rejected_exchanges"] == [1]
    assert any("the real API would have rejected this exchange" in n and "toolu_nowhere" in n
               for n in trace.checkpoints[1].notes)


def test_api_errors_are_shown_beside_the_call_they_follow(tmp_path):
    records = crashed_session()[:2] + [
        record("user", "u1r", "a1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]),
        {"type": "system", "subtype": "api_error", "uuid": "s1", "parentUuid": "u1r", "level": "error",
         "error": {"cause": {"code": "ECONNRESET"}}, "retryAttempt": 1, "maxRetries": 10, "retryInMs": 517.3},
        record("assistant", "a9", "s1", [{"type": "text", "text": "API Error: Connection error."}], mid="msg_9"),
    ]
    records[-1]["message"]["model"] = "<synthetic>"
    trace = read_session(write(tmp_path / "s.jsonl", records)).trace()
    [point] = trace.checkpoints  # the synthetic message is not a model call
    notices = [(m.subtype, m.content) for m in trace.resolve(point.attachments)]
    assert notices == [("api_error", "API error: ECONNRESET (retry 1/10, next in 0.5 s)"),
                       ("api_error", "API Error: Connection error.")]


def test_a_torn_last_line_and_unknown_records_are_tolerated(tmp_path):
    records = [{"type": "some-future-record", "whatever": 1}, *crashed_session(),
               {"type": "queue-operation", "operation": "enqueue", "content": "x"}]
    session = read_session(write(tmp_path / "s.jsonl", records, tail='{"type": "assistant", "uuid": "a3", "mess'))
    assert session.torn_line == 7 and len(session.steps()) == 2
    assert any("1× queue-operation (enqueue)" in n for n in session.steps()[-1].notes)


def test_an_empty_file_has_no_branch_and_an_empty_trace(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    assert read_session(path).branches == [] and len(import_claude_code(path)) == 0


@pytest.mark.parametrize("line, problem", [
    ("{not json", "line 2: not JSON"),
    ("[1, 2]", "line 2: a JSON list, not an object"),
    ('{"type": "user", "uuid": "u9", "message": {"role": "user"}}', "line 2: a user record without message.content"),
])
def test_a_corrupt_line_is_an_error_naming_it(tmp_path, line, problem):
    records = crashed_session()
    text = json.dumps(records[0]) + "\n" + line + "\n" + "".join(json.dumps(r) + "\n" for r in records[1:])
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=problem) as caught:
        read_session(path)
    assert caught.value.line == 2 and isinstance(caught.value, ValueError)


# ---------------------------------------------------------------------------
# The command


def test_import_claude_code_prints_saves_and_lists(tmp_path, capsys):
    source = shutil.copy(session_file("02"), tmp_path / "session.jsonl")
    assert main(["import-claude-code", str(source), "--list-branches"]) == 0
    listed = capsys.readouterr().out
    assert "2 branch(es)" in listed and "(default)" in listed and "line 18: I very much like" in listed

    out = tmp_path / "trace.jsonl"
    assert main(["import-claude-code", str(source), "--branch", "95b483e6", "--trace", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "not the system prompt and not the tool" in printed
    assert "6 exchanges rebuilt; every one passes the offline API's validation" in printed
    assert Trace.load(out).source["branch"].startswith("95b483e6")


def test_import_claude_code_names_a_corrupt_line(tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"type": "user"}\n{oops\n{"type": "summary"}\n')
    with pytest.raises(SystemExit) as exit_:
        main(["import-claude-code", str(path)])
    assert exit_.value.code == 2
    assert "bad.jsonl, line 1: a user record without a uuid" in capsys.readouterr().err


# --- Claude Code 2.1.332: the file records the requests as sent -------------------------------------
# 09, 10 and 11 are `dreamloop compare` runs of Claude Code 2.1.332 (scenarios max_tokens_always,
# prompt_too_long_after_tools, hook_stop_exit_2_once), scrubbed by tests/conformance/make_fixtures.py:
# Anthropic's text replaced by placeholders of the same length, hashes and digests recomputed.
# 09: request 1 (line 19) → msg_fake_0001 cut by max_tokens (line 20); the meta "resume" record
# (line 21, same promptId) and request 2 (line 23, base request 1, keep 1, tail: the response and the
# reminder) → msg_fake_0002 (26); the same twice more (27-32); then line 33 is the synthetic API-error
# message (apiError max_output_tokens). Claude Code's result: terminal_reason api_error, num_turns 4.
# 10: three Read turns (requests at lines 19, 31, 37), then request 4 (line 43, 7 messages) has no
# response: line 44 is the synthetic "prompt is too long" message (400). Claude Code: prompt_too_long.
# 11: msg_fake_0001 ends the turn (line 20); the stop hook's feedback is a meta user record (line 24,
# rowSource hook) and the stop_hook_summary (25); request 2 (27) → msg_fake_0002 (28), which ends.


def test_a_2_1_332_file_gives_each_call_the_request_it_was_sent():
    session = read_session(session_file("10"))
    assert session.versions == ["2.1.332"] and len(session.requests) == 4
    assert all(r.digest_ok and not r.missing for r in session.requests.values())
    trace = session.trace()
    assert trace.source["note"] == REQUESTS_IN_THE_FILE and trace.source["requests"] == 4
    assert [p.request["line"] for p in trace.checkpoints] == [19, 31, 37]
    assert [p.request["messages"] for p in trace.checkpoints] == [1, 3, 5]
    assert [p.request["reminders"] for p in trace.checkpoints] == [8, 9, 10]
    assert trace.checkpoints[0].request["cache_control"] == ["system[0]", "system[1]", "messages[0].content[8]"]
    first = trace.checkpoints[0]
    [sent] = trace.resolve(first.messages_for_query)
    texts = [b["text"] for b in sent.message["content"]]
    assert sum(t.startswith("<system-reminder>") for t in texts) == 8 and texts[-1] == "what is value in config.py?"
    assert first.messages_for_query != first.state_messages  # the conversation holds the prompt alone
    for before, point in zip(trace.checkpoints, trace.checkpoints[1:]):  # a response sent back is the same message
        assert before.assistant_messages[0] in point.messages_for_query
    [ui_only] = [n for n in first.notes if n.startswith("UI-only records")]
    [rendered] = [n for n in first.notes if "rendered into the next request" in n]
    assert "attachment (environment)" in rendered and "(sent to the model)" in rendered
    assert "attachment (environment)" not in ui_only and "api-request" not in ui_only
    assert "attachment (prompt_snapshot)" in ui_only  # the snapshot of the system prompt is not sent as such
    assert any("its digest matches the recorded one" in n for n in first.notes)


def test_a_refused_request_and_the_synthetic_error_end_the_run_as_claude_code_did():
    trace = import_claude_code(session_file("10"))
    last = trace.checkpoints[-1]
    assert [p.terminal.reason if p.terminal else None for p in trace.checkpoints] == [None, None, "prompt_too_long"]
    assert last.terminal.turn_count == 4  # the refused request was turn 4's (Claude Code: num_turns 4)
    assert any("then request" in n and "line 43, 7 messages" in n and "got no response" in n for n in last.notes)
    assert "prompt is too long: 200001 tokens" in last.terminal.error  # the API's own words, kept in the fixture


def test_max_tokens_resumes_continue_one_prompt_until_claude_code_gives_up():
    trace = import_claude_code(session_file("09"))
    points = trace.checkpoints
    assert [(p.turn_count, p.transition.reason if p.transition else None,
             p.transition.attempt if p.transition else None) for p in points] == [
        (1, None, None), (1, "max_output_tokens_recovery", 1), (1, "max_output_tokens_recovery", 2),
        (1, "max_output_tokens_recovery", 3)]
    assert [p.next_transition.reason if p.next_transition else None for p in points] == \
        ["max_output_tokens_recovery"] * 3 + [None]
    assert [p.terminal.reason if p.terminal else None for p in points] == [None, None, None, "model_error"]
    assert trace.terminal.reason == "model_error" and trace.terminal.turn_count == 1
    # the resume reminder is in the State (meta) and, as a <system-reminder> block, in the request
    resume = [m for m in trace.resolve(points[1].state_messages) if m.type == "user" and m.is_meta]
    assert len(resume) == 1
    assert [p.request["messages"] for p in points] == [1, 3, 5, 7]
    assert [p.request["params"]["max_tokens"] for p in points] == [32000] * 4  # 2.1.332 resumed without raising the limit first


def test_a_stop_hook_that_blocks_continues_the_same_prompt():
    trace = import_claude_code(session_file("11"))
    assert [(p.turn_count, p.transition.reason if p.transition else None, p.terminal.reason if p.terminal else None)
            for p in trace.checkpoints] == [(1, None, None), (1, "stop_hook_blocking", "completed")]


@pytest.mark.parametrize("number", ["09", "10", "11"])
def test_the_2_1_332_fixtures_hold_no_anthropic_text(number):
    records = [json.loads(line) for line in session_file(number).read_text().splitlines()]
    shape = next(r["shape"] for r in records if r["type"] == "api-request-shape")
    assert all(b["text"].startswith("[scrubbed ") for b in shape["system"])
    assert all(t["description"].startswith("[scrubbed ") for t in shape["tools"])
    text = session_file(number).read_text()
    insides = text.split("<system-reminder>")[1:]
    assert insides and all(part.lstrip("\\n").startswith("[scrubbed ") for part in insides)
    for record in records:
        if record["type"] == "user" and record.get("isMeta"):
            assert "[scrubbed " in json.dumps(record["message"]["content"])


def test_scrubbing_keeps_lengths_and_the_rebuild(tmp_path):
    assert len(placeholder("x" * 500)) == 500 and placeholder("x" * 500).startswith("[scrubbed 500 chars sha256:")
    assert scrub_text("ok <system-reminder>secret words</system-reminder> ok") == \
        f"ok <system-reminder>{placeholder('secret words')}</system-reminder> ok"
    records = [json.loads(line) for line in session_file("11").read_text().splitlines()]
    again = write(tmp_path / "again.jsonl", scrub_records(records))  # scrubbed twice: still the same rebuild
    assert all(r.digest_ok for r in read_session(again).requests.values())
    one, two = import_claude_code(session_file("11")), import_claude_code(again)
    assert [(p.transition, p.terminal, p.request["system"]) for p in one.checkpoints] == \
        [(p.transition, p.terminal, p.request["system"]) for p in two.checkpoints]


def test_the_inspector_shows_the_recorded_request():
    inspector = StateInspector(import_claude_code(session_file("09")), index=3)
    pane = inspector.panes["messages_for_query"].value
    assert "request as sent (line 31): model claude-sonnet-4-5, max_tokens 32000" in pane
    assert "digest checked" in pane and "messages[6].content[0]" in pane and "with the reminders" in pane
    assert "Read (" in pane  # the tools, by name and description length
    assert "reason=<b>model_error</b>" in inspector.header.value
    assert "records each request as sent" in inspector.header.value


def test_import_claude_code_says_the_file_records_the_requests(capsys):
    assert main(["import-claude-code", str(session_file("09"))]) == 0
    out = capsys.readouterr().out
    assert "records each request as sent" in " ".join(out.split())
    assert "max_output_tokens_recovery" in out and "reason=model_error" in out and "reason=completed" not in out


def test_each_call_is_validated_as_the_whole_request_would_be(tmp_path):
    """The importer validates each request by extending the one before (time linear in the file); every
    call's rejection is still what validating its whole request gives, on the fixtures and on a generated
    session with defects (a lost result, a doubled one, a blank text) and compactions."""
    from dreamloop.claude_code import _rejection

    records, parent = [], None

    def add(kind, **fields):
        nonlocal parent
        uuid = f"00000000-0000-4000-8000-{len(records):012d}"
        records.append({"parentUuid": parent, "type": kind, "uuid": uuid, "sessionId": "s", **fields})
        parent = uuid

    add("user", message={"role": "user", "content": "read the files"})
    for n in range(12):
        result = [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"file {n}"}]
        content = {3: [{"type": "text", "text": "go on"}], 6: result * 2, 9: [*result, {"type": "text", "text": " "}]}
        add("assistant", message={"id": f"msg_{n}", "role": "assistant", "model": "m", "content": [
            {"type": "text", "text": f"reading {n}"}, {"type": "tool_use", "id": f"toolu_{n}", "name": "Read",
                                                        "input": {}}]})
        add("user", message={"role": "user", "content": content.get(n, result)})
        if n in (4, 10):
            gone, parent = parent, None
            add("system", subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=gone + "x")
            add("user", isCompactSummary=True, message={"role": "user", "content": f"Summary of {n} files."})
    add("assistant", message={"id": "msg_end", "role": "assistant", "model": "m",
                              "content": [{"type": "text", "text": "done"}]})
    generated = tmp_path / "defects.jsonl"
    generated.write_text("".join(json.dumps(r) + "\n" for r in records))
    checked = rejected = 0
    for path in [*sorted(SESSIONS.glob("*.jsonl")), generated]:
        session = read_session(path)
        for branch in session.branches:
            trace = session.trace(branch.tip)
            for point in trace.checkpoints:
                [output] = trace.resolve(point.assistant_messages)
                whole = _rejection(trace.resolve(point.state_messages), output)
                said = [n for n in point.notes if n.startswith("the real API would have rejected this exchange: ")]
                assert said == ([f"the real API would have rejected this exchange: {whole}"] if whole else []), \
                    (path.name, point.index)
                assert (point.index in trace.source["rejected_exchanges"]) is (whole is not None)
                checked += 1
                rejected += whole is not None
    assert checked > 50 and rejected >= 3
