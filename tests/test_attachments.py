"""What the loop adds between turns (phase 5) and at the start of a run (stage 5's preamble), and how a run
ends: memory files, changed-file notices, queued input, tool-use summaries, the environment, the cleanup."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import subprocess
from pathlib import Path

import pytest

from dreamloop.recovery import RecoveryOptions

from dreamloop import scripts as S
from dreamloop.attachments import changed_file_text
from dreamloop.file_notices import MAX_DIFF_LINES
from dreamloop.cleanup import ABNORMAL
from dreamloop.context import ContextOptions
from dreamloop.context.environment import IDENTITY, run_system_prompt, without_environment
from dreamloop.context.memory import MAX_MEMORY_BYTES, find_memory_files, memory_reminder, read_memory_files
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine
from dreamloop.hooks import Hooks, StopDecision
from dreamloop.model import offline as make_offline
from dreamloop.query import QueryParams, query
from dreamloop.summaries import ToolUseSummaries, describe_batch
from dreamloop.tools import builtin_tools

DAY = datetime.date(2026, 1, 2)


def deps(home: Path) -> QueryDeps:
    return QueryDeps(uuid=counting_uuids(), today=lambda: DAY, home=home, platform="linux")


@pytest.fixture
def place(tmp_path):
    """``(workspace, home)``: a workspace with config.py, and an empty home."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "config.py").write_text("value = 1\n")
    return workspace, home


def params(model, workspace, home, **switches):
    return QueryParams(messages="what is value?", model=model, tools=builtin_tools(), workspace=workspace,
                       permission_mode="bypass", deps=deps(home), **switches)


async def drain(run):
    return [event async for event in run]


def bodies(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def texts(content):
    return [b["text"] for b in content if b.get("type") == "text"]


# ---------------------------------------------------------------------------
# 1. memory files


def test_memory_files_are_found_farthest_first(tmp_path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    workspace = repo / "pkg" / "sub"
    workspace.mkdir(parents=True)
    (repo / ".git").mkdir()
    (home / ".claude").mkdir(parents=True)
    for path in (home / ".claude" / "CLAUDE.md", repo / "CLAUDE.md", repo / "pkg" / "CLAUDE.local.md",
                 workspace / "CLAUDE.md", tmp_path / "CLAUDE.md"):  # the last is above the repository: not read
        path.write_text(f"from {path.parent.name}\n")
    found = [(path.relative_to(tmp_path).as_posix(), scope) for path, scope, _ in find_memory_files(workspace, home)]
    assert found == [("home/.claude/CLAUDE.md", "user"), ("repo/CLAUDE.md", "project"),
                     ("repo/pkg/CLAUDE.local.md", "local"), ("repo/pkg/sub/CLAUDE.md", "project")]


def test_outside_a_repository_only_the_workspace_is_read(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "CLAUDE.md").write_text("parent\n")
    (workspace / "CLAUDE.md").write_text("mine\n")
    assert [p.name for p, _, _ in find_memory_files(workspace, tmp_path / "nohome")] == ["CLAUDE.md"]
    assert [f.text for f in read_memory_files(workspace, tmp_path / "nohome")] == ["mine\n"]


async def test_memory_files_open_the_first_user_message_of_every_request(offline, place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("Answer in one sentence.\n")
    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"})), S.reply("1.")])
    run = query(params(model, workspace, home, memory_files=True))
    await drain(run)
    first = [body["messages"][0]["content"] for body in bodies(model)]
    assert first[0] == first[1]  # byte-stable: the cached prefix survives the turn
    reminder, prompt = texts(first[0])
    assert reminder.startswith("<system-reminder>") and "Answer in one sentence." in reminder
    assert str(workspace / "CLAUDE.md") in reminder and prompt == "what is value?"
    assert run.messages[0].message["content"] == "what is value?"  # not in the history: sent, not kept


async def test_memory_files_off_sends_nothing_more(offline, place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("Answer in one sentence.\n")
    model = offline([S.reply("1.")])
    await drain(query(params(model, workspace, home)))
    assert bodies(model)[0]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "what is value?"}]}]
    assert "system" not in bodies(model)[0]


@pytest.mark.parametrize("make, said", [
    (lambda p: p.write_bytes(b"x" * (MAX_MEMORY_BYTES + 1)), "over the 40,000-byte limit"),
    (lambda p: p.write_bytes(b"rules\0\1\2"), "binary"),
    (lambda p: p.write_bytes("caf\xe9".encode("latin-1")), "not UTF-8"),
    (lambda p: p.mkdir(), "not a regular file"),
    (lambda p: p.symlink_to(p.parent.parent / "secret.txt"), "symlink to"),
    (lambda p: p.symlink_to(p.parent / "nowhere.md"), "symlink to nothing"),
], ids=["huge", "binary", "latin-1", "a folder", "symlink out", "broken symlink"])
async def test_a_memory_file_that_cannot_be_sent_gets_a_notice(offline, place, make, said):
    workspace, home = place
    (workspace.parent / "secret.txt").write_text("not for the model\n")
    make(workspace / "CLAUDE.md")
    model = offline([S.reply("1.")])
    run = query(params(model, workspace, home, memory_files=True))
    events = await drain(run)
    assert run.terminal.reason == "completed"
    notice = [e for e in events if e.type == "system" and e.subtype == "memory_file_skipped"]
    assert len(notice) == 1 and said in notice[0].content and notice[0].level == "warning"
    reminder = texts(bodies(model)[0]["messages"][0]["content"])[0]
    assert "(not included: " in reminder and "not for the model" not in reminder


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_memory_file_gets_a_notice(place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("x\n")
    (workspace / "CLAUDE.md").chmod(0)
    [file] = read_memory_files(workspace, home)
    assert file.text is None and "could not be read" in file.notice


def test_no_memory_file_no_reminder():
    assert memory_reminder([]) is None


async def test_a_memory_file_changed_or_removed_between_turns_is_sent_again(offline, place):
    workspace, home = place
    memory = workspace / "CLAUDE.md"
    memory.write_text("Answer in one sentence.\n")
    local = workspace / "CLAUDE.local.md"
    local.write_text("mine\n")

    def policy(body, index):
        if index == 1:
            memory.write_text("Answer in two sentences.\n")
            local.unlink()
        if index < 2:
            return S.reply("Listing.", S.tool_use("Glob", {"pattern": "*.py"}))
        return S.reply("done")

    model = offline(policy)
    run = query(params(model, workspace, home, memory_files=True, changed_files=True))
    events = await drain(run)
    changed = [e.attachment for e in events if e.type == "attachment"]
    assert [(a["type"], Path(a["path"]).name, a["change"]) for a in changed] == [
        ("memory_changed", "CLAUDE.md", "changed"), ("memory_changed", "CLAUDE.local.md", "removed")]
    last = bodies(model)[2]["messages"][-1]["content"]
    assert any("Answer in two sentences." in t for t in texts(last))


# ---------------------------------------------------------------------------
# 2. changed-file notices


def _read_edit_policy(workspace, change):
    def policy(body, index):
        if index == 0:
            return S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"}))
        if index == 1:
            change(workspace / "config.py")
            return S.reply("Listing.", S.tool_use("Glob", {"pattern": "*.py"}))
        return S.reply("done")
    return policy


@pytest.mark.parametrize("change, expect", [
    (lambda p: p.write_text("value = 7\n"), ("modified", "value = 7")),
    (lambda p: p.unlink(), ("deleted", "has been deleted")),
], ids=["modified", "deleted"])
async def test_a_file_read_that_changes_on_disk_gets_a_notice(offline, place, change, expect):
    workspace, home = place
    model = offline(_read_edit_policy(workspace, change))
    run = query(params(model, workspace, home, changed_files=True))
    events = await drain(run)
    [notice] = [e.attachment for e in events if e.type == "attachment"]
    assert (notice["type"], notice["change"]) == ("changed_file", expect[0])
    assert expect[1] in texts(bodies(model)[2]["messages"][-1]["content"])[-1]
    assert len(bodies(model)) == 3 and run.terminal.reason == "completed"


async def test_a_notice_is_printed_by_its_path_in_the_workspace_live_and_replayed(offline, place):
    """The printed run names the file as the workspace has it, so a stored output holds no temporary path."""
    import io

    from rich.console import Console

    from dreamloop.render import print_run, print_trace

    workspace, home = place
    run = query(params(offline(_read_edit_policy(workspace, lambda p: p.write_text("value = 7\n"))), workspace,
                       home, changed_files=True))
    live, replayed = io.StringIO(), io.StringIO()
    await print_run(run, Console(file=live, width=100, color_system=None))
    print_trace(run.trace, Console(file=replayed, width=100, color_system=None))
    assert "  attachment changed_file config.py (modified)" in live.getvalue().splitlines()
    assert str(workspace) not in live.getvalue() and str(workspace) not in replayed.getvalue()


async def test_no_notice_for_the_loops_own_edit_or_with_the_switch_off(offline, place):
    workspace, home = place
    script = [S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"})),
              S.reply("Editing.", S.tool_use("Edit", {"file_path": "config.py", "old_string": "1",
                                                      "new_string": "2"})),
              S.reply("Listing.", S.tool_use("Glob", {"pattern": "*.py"})),
              S.reply("done")]
    run = query(params(offline(script), workspace, home, changed_files=True))
    assert not [e for e in await drain(run) if e.type == "attachment"]
    assert (workspace / "config.py").read_text() == "value = 2\n"
    model = offline(_read_edit_policy(workspace, lambda p: p.write_text("value = 9\n")))
    assert not [e for e in await drain(query(params(model, workspace, home))) if e.type == "attachment"]


def test_a_change_notice_is_bounded(tmp_path):
    big = tmp_path / "big.txt"
    before = "".join(f"line {n}\n" for n in range(1000))
    big.write_text(before.replace("line", "LINE"))
    said = changed_file_text(big, tmp_path, before)
    assert said.count("\n") <= MAX_DIFF_LINES + 2 and "more diff lines" in said
    big.write_bytes(b"\0\1")
    assert "binary" in changed_file_text(big, tmp_path, before)


# ---------------------------------------------------------------------------
# 3. queued input when the turn has no tool call


async def test_input_queued_during_a_text_answer_starts_the_next_run(offline, tmp_path):
    model = offline([S.reply("First answer."), S.reply("Second answer.")])
    engine = QueryEngine(model=model, deps=QueryDeps(uuid=counting_uuids()), transcript=tmp_path / "t.jsonl")
    events = []
    async for event in engine.submit_message("first question"):
        events.append(event)
        if event.type == "stream_request_start" and len(events) == 1:
            engine.enqueue("and a second one")
    assert engine.queue == []
    assert len(bodies(model)) == 2 and engine.terminal.reason == "completed"
    sent = bodies(model)[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert texts(sent[-1]["content"]) == ["and a second one"]
    assert [e.type for e in events].count("stream_request_start") == 2
    assert engine.last_run.params.messages[-1].message["content"] == "and a second one"


# ---------------------------------------------------------------------------
# 4. tool-use summaries


async def test_a_batch_summary_is_yielded_in_the_next_iteration(offline, place):
    workspace, home = place
    (workspace / "notes.md").write_text("two\n")
    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"}),
                             S.tool_use("Read", {"file_path": "notes.md"})), S.reply("done")])
    run = query(params(model, workspace, home, tool_use_summaries=True))
    events = [e for e in await drain(run) if e.type not in ("stream_event", "progress")]
    kinds = [e.type for e in events]
    assert kinds == ["stream_request_start", "assistant", "user", "stream_request_start", "assistant",
                     "tool_use_summary"]
    summary = events[-1]
    assert summary.summary == "Read config.py, Read notes.md"
    assert summary.tool_use_ids == tuple(b.id for b in events[1].message.content if b.type == "tool_use")
    assert len(bodies(model)) == 2  # offline: written here, no request of its own
    assert all(m["role"] != "tool_use_summary" for m in bodies(model)[1]["messages"])


async def test_a_failing_summary_is_skipped_with_a_notice(offline, place):
    workspace, home = place

    async def broken(uses, results):
        raise RuntimeError("the summary model is down")

    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"})), S.reply("done")])
    run = query(params(model, workspace, home, tool_use_summaries=ToolUseSummaries(summarize=broken)))
    events = await drain(run)
    assert run.terminal.reason == "completed" and not [e for e in events if e.type == "tool_use_summary"]
    [notice] = [e for e in events if e.type == "system"]
    assert notice.subtype == "tool_use_summary_failed" and "the summary model is down" in notice.content


async def test_the_summary_does_not_hold_up_the_next_request(offline, place):
    workspace, home = place
    finished = asyncio.Event()

    async def slow(uses, results):
        await asyncio.sleep(0.3)
        finished.set()
        return "slow summary"

    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"})), S.reply("done")])
    run = query(params(model, workspace, home, tool_use_summaries=ToolUseSummaries(summarize=slow)))
    order = []
    async for event in run:
        if event.type in ("stream_request_start", "tool_use_summary"):
            order.append((event.type, finished.is_set()))
    # the second request went out while the summary was still being made; the summary came after it
    assert order == [("stream_request_start", False), ("stream_request_start", False), ("tool_use_summary", True)]


def test_describe_batch_counts_failures():
    class Use:
        def __init__(self, id, name, input):
            self.id, self.name, self.input = id, name, input

    uses = [Use("a", "Bash", {"command": "python -m unittest"}), Use("b", "Read", {"file_path": "/x/y/config.py"})]
    assert describe_batch(uses, {"a": {"is_error": True}}) == "Bash python -m unittest, Read config.py (1 failed)"


# ---------------------------------------------------------------------------
# 5. system prompt and environment


async def test_the_environment_follows_the_system_prompt_and_the_date_opens_the_first_message(offline, place):
    workspace, home = place
    model = offline([S.reply("1.")])
    await drain(query(params(model, workspace, home, environment=True, system_prompt=run_system_prompt())))
    body = bodies(model)[0]
    identity, environment = [b["text"] for b in body["system"]]
    assert identity == IDENTITY
    assert environment.splitlines() == ["<environment>", f"Working directory: {workspace}", "Platform: linux",
                                        "Git repository: no", "</environment>"]
    assert texts(body["messages"][0]["content"])[0] == "<system-reminder>\nThe date today: 2026-01-02.\n</system-reminder>"
    stripped = without_environment(body)
    assert [b["text"] for b in stripped["system"]] == [IDENTITY]
    assert texts(stripped["messages"][0]["content"]) == ["what is value?"]


async def test_the_environment_goes_through_the_context_pipeline_too(offline, place):
    workspace, home = place
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    model = offline([S.reply("1.")])
    options = ContextOptions(system_prompt=True, prompt_caching=True)
    await drain(query(params(model, workspace, home, environment=True, memory_files=True, context=options,
                             system_prompt="be brief")))
    body = bodies(model)[0]
    assert [b["text"].splitlines()[0] for b in body["system"]] == ["be brief", "<environment>"]
    assert f"Git repository: yes (root: {workspace})" in body["system"][1]["text"]
    assert "cache_control" in body["system"][-1]


def test_system_prompt_flags():
    assert run_system_prompt() == IDENTITY
    assert run_system_prompt("mine") == "mine"
    assert run_system_prompt(None, "more") == f"{IDENTITY}\n\nmore"


# ---------------------------------------------------------------------------
# 6. cleanup on an abnormal end, per Terminal


def _endless(body, index):
    return S.reply("Again.", S.tool_use("Read", {"file_path": "config.py"}))


ENDINGS = {
    "max_turns": (_endless, dict(max_turns=1)),
    "model_error": ([S.disconnect("Value", after_events=2)] * 3, {}),  # a failure with no API error response
    "api_error": ([S.http_error(500)] * 3, {}),
    "malformed_tool_use_exhausted": (lambda body, index: S.reply("Reading.", stop_reason="tool_use"),
                                     dict(recovery=RecoveryOptions(malformed_tool_use_retries=2))),
    "prompt_too_long": ([S.prompt_too_long()], {}),
    "blocking_limit": ([S.reply("never")], dict(context=ContextOptions(blocking_limit={"limit": 10}))),
    "image_error": ([S.http_error(400, message="Could not process image")], {}),
    "stop_hook_prevented": ([S.reply("done")], dict(hooks=Hooks().add(
        "stop", lambda i: StopDecision(continue_=False, stop_reason="enough")))),
    "hook_stopped": ([S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"})), S.reply("done")],
                     dict(hooks=Hooks().add("post_tool_use", lambda i: {"continue": False, "stopReason": "enough"}))),
}


@pytest.mark.parametrize("reason", sorted(ABNORMAL))
async def test_each_abnormal_end_cleans_up_and_says_why(offline, place, reason, tmp_path):
    workspace, home = place
    script, switches = ENDINGS[reason]
    model = (make_offline if reason == "image_error" else offline)(script, max_retries=0)  # a 400 on purpose
    engine = QueryEngine(model=model, tools=builtin_tools(), workspace=workspace, permission_mode="bypass",
                         deps=deps(home), transcript=tmp_path / "t.jsonl", tool_use_summaries=True, **switches)
    events = [e async for e in engine.submit_message("what is value?")]
    run = engine.last_run
    assert run.terminal.reason == reason
    ended = run.ended
    assert ended.subtype == "run_ended" and ended.metadata["reason"] == reason and reason in ended.content
    assert ended not in events and ended not in run.messages  # not yielded, not history
    assert run.trace.checkpoints[-1].events[-1]["uuid"] == ended.uuid  # the trace
    if reason == "max_turns":  # the batch's summary had been started: the end cancels it and says so
        assert ended.metadata["cancelled"] and "tool-use summary" in ended.content


async def test_a_normal_end_needs_no_notice(offline, place):
    workspace, home = place
    run = query(params(offline([S.reply("1.")]), workspace, home))
    await drain(run)
    assert run.ended is None


# ---------------------------------------------------------------------------
# 7. the widgets show them as their own kinds


async def test_the_live_view_folds_a_batch_under_its_summary_and_the_inspector_shows_both(offline, place):
    from dreamloop.widgets import LiveView, StateInspector

    workspace, home = place
    model = offline(_read_edit_policy(workspace, lambda p: p.write_text("value = 7\n")))
    run = query(params(model, workspace, home, changed_files=True, tool_use_summaries=True))
    live = LiveView()
    await live.watch(run)
    transcript = live.transcript.value
    assert transcript.count('<details class="dl-fold">') == 2 and "Read config.py</summary>" in transcript
    inspector = StateInspector(run.trace)
    inspector.slider.value = len(run.trace.checkpoints) - 1
    shown = inspector.panes["attachments"].value
    assert "attachment · changed_file" not in shown  # the changed_file came at the second checkpoint
    inspector.slider.value = 1
    shown = inspector.panes["attachments"].value
    assert "tool_use_summary" in shown and "attachment · changed_file" in shown and "value = 7" in shown


def test_a_cassette_recorded_in_one_folder_replays_in_another(tmp_path, capsys):
    from dreamloop.cli import main
    from dreamloop.demo import copy_sample_project

    cassette = tmp_path / "run.cassette.jsonl"
    first, second = copy_sample_project(tmp_path / "one"), copy_sample_project(tmp_path / "two")
    assert main(["run", "set retries to 5", "--workspace", str(first), "--permission-mode", "bypass",
                 "--record", str(cassette)]) == 0
    sent = [json.loads(line)["request"] for line in cassette.read_text().splitlines() if '"request"' in line]
    assert str(first) in json.dumps(sent[0]["system"])  # the environment names the folder it ran in
    capsys.readouterr()
    assert main(["run", "set retries to 5", "--workspace", str(second), "--permission-mode", "bypass",
                 "--cassette", str(cassette), "--recorded-tools"]) == 0
    assert "every request matched the recording" in capsys.readouterr().out


async def test_a_live_summary_is_one_small_request_outside_the_conversation(offline):
    from dreamloop.summaries import _ask

    class Use:
        id, name, input = "toolu_1", "Read", {"file_path": "config.py"}

    model = offline([S.reply("Read the config")])
    said = await _ask(model, ToolUseSummaries(), [Use()], {"toolu_1": {"content": "value = 1"}})
    [body] = bodies(model)
    assert said == "Read the config"
    assert body["model"] == "claude-haiku-4-5" and body["max_tokens"] == 60 and "tools" not in body
    assert "- Read config.py" in body["messages"][0]["content"]
