"""A sub-agent's messages kept as a side chain beside the session, read back by a resume and by the importer
(issue 34, item 2), against the offline API with ``scripts.by_prompt`` telling the child's requests from the
parent's.

The layout is the one Claude Code 2.1.332 wrote (session 12, ``tests/conformance/make_sidechain_fixture.py``):
``S.jsonl`` and ``S/subagents/agent-<agentId>.jsonl`` with ``agent-<agentId>.meta.json``.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.claude_code import import_claude_code, read_session
from dreamloop.cli import main
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine
from dreamloop.errors import FileFormatError, TranscriptError, TranscriptWarning
from dreamloop.subagents import agent_id
from dreamloop.tools import builtin_tools
from dreamloop.trace import Trace
from dreamloop.transcript import SESSION_ENDED, side_chain_path

FIXTURES = Path(__file__).parent / "fixtures"
SESSIONS = FIXTURES / "claude-code-sessions"
S12 = SESSIONS / "12_dreamloop-compare-probe_agent_foreground_v2.1.332_scrubbed.jsonl"
PROMPT = "child: count the files"


def agent_call(prompt=PROMPT):
    return S.tool_use("Agent", {"description": "count files", "prompt": prompt})


def script(on_child_request=None):
    """Parent: an Agent call, then an answer; the child: a Glob, then its answer. ``on_child_request(index)`` runs
    as each of the child's requests arrives (what is on disk by then)."""
    child = [S.reply(S.tool_use("Glob", {"pattern": "*.md"})), S.reply("There are 3 files.")]
    policy = S.by_prompt([S.reply(agent_call()), S.reply("The child says 3.")], {PROMPT: child})

    def answer(body, index):
        if on_child_request is not None and PROMPT in json.dumps(body["messages"][0]):
            on_child_request(index)
        return policy(body, index)

    return answer


def engine(model, path, start=1):
    return QueryEngine(transcript=path, model=model, tools=builtin_tools(), sub_agents=True, workspace=FIXTURES,
                       permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids(start)))


def resume(path, model=None, start=500):
    return QueryEngine.resume(path, model=model, tools=builtin_tools(), sub_agents=True, workspace=FIXTURES,
                              permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids(start)))


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


async def run(engine, prompt="how many files?"):
    return [event async for event in engine.submit_message(prompt)]


async def test_the_child_is_written_beside_the_transcript_as_2_1_332_lays_it_out(offline, tmp_path):
    path = tmp_path / "session.jsonl"
    e = engine(offline(script()), path)
    await run(e)
    call = next(b for m in e.messages if m.type == "assistant" for b in m.message.content if b.type == "tool_use")
    side = side_chain_path(path, agent_id(call.id))
    assert side == tmp_path / "session" / "subagents" / f"agent-{agent_id(call.id)}.jsonl"
    records = lines(side)
    chained = [r for r in records if r.get("uuid")]
    assert all(r["isSidechain"] is True and r["agentId"] == agent_id(call.id) for r in records)
    assert {r["sessionId"] for r in records} == {lines(path)[0]["sessionId"]}
    assert chained[0]["type"] == "user" and chained[0]["parentUuid"] is None
    assert chained[0]["message"]["content"] == PROMPT
    assert [r["type"] for r in records] == ["user", "assistant", "progress", "user", "assistant"]
    assert all(b["parentUuid"] == a["uuid"] for a, b in zip(chained, chained[1:]))
    meta = json.loads(side.with_suffix(".meta.json").read_text())
    assert meta == {"agentType": "general-purpose", "description": "count files", "toolUseId": call.id}
    # the main file holds none of the child's messages; the agent id has 2.1.332's form
    assert all(not r.get("isSidechain") for r in lines(path))
    real = next((S12.with_suffix("") / "subagents").glob("agent-*.jsonl")).stem.removeprefix("agent-")
    assert len(agent_id(call.id)) == len(real) and agent_id(call.id)[0] == real[0] == "a"
    assert set(meta) <= set(json.loads(next((S12.with_suffix("") / "subagents").glob("*.meta.json")).read_text()))
    assert e.children[call.id].terminal.reason == "completed"


async def test_each_child_record_is_on_disk_before_the_child_goes_on(offline, tmp_path):
    path = tmp_path / "session.jsonl"
    seen = []

    def look(index):
        sides = list((tmp_path / "session" / "subagents").glob("agent-*.jsonl")) if (tmp_path / "session").exists() \
            else []
        seen.append([r["type"] for r in lines(sides[0])] if sides else None)

    await run(engine(offline(script(look)), path))
    # the child's first request: its prompt is on disk; its second: the response, the finished call, the results
    assert seen == [["user"], ["user", "assistant", "progress", "user"]]


async def test_a_resume_restores_the_children_and_a_crash_mid_child_loses_nothing(offline, tmp_path):
    live, image = tmp_path / "live", tmp_path / "image"
    live.mkdir()

    def crash(index):
        if (live / "session").exists() and len(lines(next((live / "session" / "subagents").glob("*.jsonl")))) > 1:
            shutil.copytree(live, image)  # what a kill during the child's second request leaves

    await run(engine(offline(script(crash)), live / "session.jsonl"))
    finished = resume(live / "session.jsonl")
    [(call_id, child)] = finished.children.items()
    assert len(child.checkpoints) == 2 and child.terminal.reason == "completed"
    assert child.resolve(child.checkpoints[-1].assistant_messages)[0].message.content[0].text == "There are 3 files."
    with pytest.warns(TranscriptWarning):
        cut = resume(image / "session.jsonl")
    answer = [b for m in cut.messages if m.type == "user" and isinstance(m.message["content"], list)
              for b in m.message["content"] if b.get("tool_use_id") == call_id]
    assert answer[0]["is_error"] is True and answer[0]["content"] == SESSION_ENDED
    [child] = cut.children.values()
    assert len(child.checkpoints) == 1  # the child's first call and its Glob result, as far as it got
    assert child.resolve(child.checkpoints[0].tool_results)[0].message["content"][0]["tool_use_id"]


async def test_a_torn_last_line_of_a_side_chain_is_set_aside_and_kept(offline, tmp_path):
    path = tmp_path / "session.jsonl"
    await run(engine(offline(script()), path))
    side = next((tmp_path / "session" / "subagents").glob("*.jsonl"))
    whole = side.read_bytes()
    side.write_bytes(whole + b'{"type": "assistant", "uuid": "torn')
    with pytest.warns(TranscriptWarning, match=rf"{side.name}: set aside a torn last line \(line 6, 35 bytes\)"):
        again = resume(path)
    assert len(next(iter(again.children.values())).checkpoints) == 2
    assert side.read_bytes().startswith(whole) and lines(side)[-1] == {
        "type": "torn_line", "line": 6, "text": '{"type": "assistant", "uuid": "torn'}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resume(path)  # nothing left to set aside


async def test_a_bad_line_inside_a_side_chain_is_an_error_naming_it_and_nothing_changes(offline, tmp_path):
    path = tmp_path / "session.jsonl"
    await run(engine(offline(script()), path))
    side = next((tmp_path / "session" / "subagents").glob("*.jsonl"))
    broken = side.read_text().splitlines()
    broken[1] = "not json"
    side.write_text("\n".join(broken) + "\n")
    before = (path.read_bytes(), side.read_bytes())
    with pytest.raises(TranscriptError, match=rf"{side.name}.*line 2"):
        resume(path)
    assert (path.read_bytes(), side.read_bytes()) == before
    with pytest.raises(FileFormatError, match=rf"{side.name}.*line 2"):
        import_claude_code(path)


def test_the_importer_nests_2_1_332s_side_chain_under_its_agent_call():
    trace = import_claude_code(S12)
    call = next(b for m in trace.resolve(trace.checkpoints[0].assistant_messages) for b in m.message.content
                if b.type == "tool_use")
    assert call.name == "Agent" and list(trace.children) == [call.id]
    child = trace.children[call.id]
    assert child.source["sidechain"] is True and len(child.checkpoints) == 2
    assert [m.type for m in child.resolve(child.checkpoints[0].state_messages)] == ["user"]
    assert any("nested under the call" in note for note in trace.checkpoints[0].notes)
    assert read_session(S12).side_chains == {call.id: "ad23fca827b57f574"}


def test_the_importer_nests_1_0_inline_side_chains_too():
    trace = import_claude_code(SESSIONS / "05_claude-code-viewer_5c0375b4_v1.0.108_inline-sidechain-task.jsonl")
    assert sorted(len(t.checkpoints) for t in trace.children.values()) == [3, 7]
    assert all(t.source["sidechain"] for t in trace.children.values())


def test_import_claude_code_prints_the_child_under_its_call(capsys):
    assert main(["import-claude-code", str(S12)]) == 0
    out = capsys.readouterr().out
    head = out.index("sub-agent of Agent call toolu_fake_0001: 2 model calls")
    assert out.index("tool_use  Agent(") < head < out.index("│ user: CHILDTASK") < out.index("│ assistant: The first")
    assert out.index("│ assistant: The first") < out.index("tool_result Agent")


async def test_import_claude_code_reads_dreamloops_own_session_with_its_children(offline, tmp_path, capsys):
    path = tmp_path / "session.jsonl"
    await run(engine(offline(script()), path))
    assert main(["import-claude-code", str(path)]) == 0
    out = capsys.readouterr().out
    assert "│ user: child: count the files" in out and "│ assistant: There are 3 files." in out


async def test_a_saved_trace_keeps_its_children_and_replay_prints_them(offline, tmp_path, capsys):
    e = engine(offline(script()), tmp_path / "session.jsonl")
    await run(e)
    trace = e.last_run.trace
    [call_id] = trace.children
    saved = trace.save(tmp_path / "trace.jsonl")
    again = Trace.load(saved)
    child, back = trace.children[call_id], again.children[call_id]
    assert list(again.children) == [call_id] and len(back.checkpoints) == len(child.checkpoints) == 2
    assert [m.type for m in back.resolve(back.checkpoints[-1].messages_after)] == \
        [m.type for m in child.resolve(child.checkpoints[-1].messages_after)]
    assert back.terminal.reason == "completed"
    assert main(["replay", str(saved)]) == 0
    out = capsys.readouterr().out
    assert out.index("sub-agent of Agent call") < out.index("│ assistant: There are 3 files.") < \
        out.index("tool_result Agent")
