"""Hooks without the loop: matchers, decisions from Claude Code's JSON, combination, settings files,
and command hooks (exit codes per event, JSON on stdout, bad JSON, timeouts, huge output, stdin only,
the environment). The loop's use of hooks is in test_hooks_loop.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import warnings

import pytest

from dreamloop.errors import HookError
from dreamloop.hooks import (
    MAX_OUTPUT_CHARS,
    CommandHook,
    Hooks,
    PostToolUseDecision,
    PreCompactDecision,
    PreToolUseDecision,
    StopDecision,
    UnsupportedHookWarning,
    UserPromptSubmitDecision,
    combine,
    describe_record,
    load_hooks,
    matches,
    run_hooks,
    run_pre_compact_hooks,
    stop_verdict,
)

PY = sys.executable


def event_input(hooks: Hooks, event: str, workspace, **extra):
    fields = {
        "user_prompt_submit": {"prompt": "change value to 2"},
        "pre_tool_use": {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "T1"},
        "post_tool_use": {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "T1",
                          "tool_response": "config.py"},
        "pre_compact": {"trigger": "auto"},
        "stop": {"stop_hook_active": False},
    }[event]
    return hooks.input(event, workspace=workspace, **{**fields, **extra})


def value_of(event: str) -> str | None:
    return {"pre_tool_use": "Bash", "post_tool_use": "Bash", "pre_compact": "auto"}.get(event)


async def run_command(tmp_path, event: str, command: str, **hook_options):
    hooks = Hooks(**hook_options).add(event, CommandHook(command))
    return await run_hooks(hooks, event_input(hooks, event, tmp_path), value=value_of(event), tool_use_id="T1")


EVENTS = ["user_prompt_submit", "pre_tool_use", "post_tool_use", "pre_compact", "stop"]


# ---------------------------------------------------------------------------
# Matchers


@pytest.mark.parametrize(("matcher", "name", "expected"), [
    (None, "Bash", True), ("", "Bash", True), ("*", "Read", True),
    ("Bash", "Bash", True), ("Bash", "BashTool", False), ("Bash", "bash", False),
    ("Edit|Write", "Write", True), ("Edit|Write", "Read", False),
    ("Notebook.*", "NotebookEdit", True), ("mcp__.*__write.*", "mcp__fs__write_file", True),
    ("^Re", "Read", True), ("^Re", "Grep", False),
])
def test_matchers_follow_claude_code(matcher, name, expected):
    assert matches(matcher, name) is expected


def test_events_without_a_matcher_match_everything():
    assert matches("Bash", None)


def test_a_bad_regex_matcher_is_refused_when_added():
    with pytest.raises(ValueError, match="not a valid regular expression"):
        Hooks().add("pre_tool_use", lambda i: None, matcher="Bash(")
    with pytest.raises(ValueError, match="unknown hook event"):
        Hooks().add("PreToolUse", lambda i: None)


# ---------------------------------------------------------------------------
# Decisions from the JSON Claude Code hooks print


def test_pre_tool_use_reads_hook_specific_output():
    d = PreToolUseDecision.model_validate({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no",
        "updatedInput": {"command": "ls"}}})
    assert (d.decision, d.reason, d.updated_input) == ("deny", "no", {"command": "ls"})


@pytest.mark.parametrize(("old", "new"), [("approve", "allow"), ("block", "deny")])
def test_pre_tool_use_deprecated_decision_names(old, new):
    assert PreToolUseDecision.model_validate({"decision": old, "reason": "r"}).decision == new


def test_common_fields_and_additional_context():
    d = PostToolUseDecision.model_validate({
        "continue": False, "stopReason": "enough", "systemMessage": "fyi",
        "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: ok"}})
    assert (d.continue_, d.stop_reason, d.system_message, d.additional_context) == (False, "enough", "fyi", "lint: ok")
    assert d.said() == {"continue": False, "stop_reason": "enough", "system_message": "fyi",
                        "additional_context": "lint: ok"}
    assert PostToolUseDecision(continue_=False).continue_ is False  # the Python spelling


# ---------------------------------------------------------------------------
# Several hooks: the most restrictive wins


def test_deny_beats_ask_beats_allow():
    allow, ask, deny = (PreToolUseDecision(decision=d, reason=d) for d in ("allow", "ask", "deny"))
    assert combine("pre_tool_use", [allow, ask, deny, PreToolUseDecision()]).decision == "deny"
    assert combine("pre_tool_use", [allow, ask]).reason == "ask"
    assert combine("pre_tool_use", [allow, PreToolUseDecision()]).decision == "allow"
    assert combine("pre_tool_use", []).decision is None


def test_two_denies_give_both_reasons_and_first_updated_input_wins():
    d = combine("pre_tool_use", [PreToolUseDecision(decision="deny", reason="a"),
                                 PreToolUseDecision(decision="deny", reason="b")])
    assert d.reason == "a\nb"
    u = combine("pre_tool_use", [PreToolUseDecision(updated_input={"x": 1}), PreToolUseDecision(updated_input={"x": 2})])
    assert u.updated_input == {"x": 1}


def test_one_block_blocks_and_contexts_add_up():
    d = combine("post_tool_use", [PostToolUseDecision(additional_context="one"),
                                  PostToolUseDecision(decision="block", reason="bad", additional_context="two"),
                                  PostToolUseDecision()])
    assert (d.decision, d.reason, d.additional_context) == ("block", "bad", "one\ntwo")
    assert combine("stop", [StopDecision(), StopDecision(decision="block", reason="tests")]).decision == "block"


def test_continue_false_from_any_hook_stops():
    d = combine("stop", [StopDecision(decision="block", reason="x"), StopDecision(continue_=False, stop_reason="done")])
    assert d.continue_ is False and d.stop_reason == "done"


@pytest.mark.parametrize(("decision", "blocks", "verdict"), [
    (StopDecision(), 0, "stop"),
    (StopDecision(decision="block", reason="r"), 0, "block"),
    (StopDecision(decision="block", reason="r"), 7, "block"),
    (StopDecision(decision="block", reason="r"), 8, "guard"),
    (StopDecision(continue_=False), 0, "prevent"),
    (StopDecision(decision="block", continue_=False), 8, "prevent"),  # continue: false wins over block
    (StopDecision(), 8, "stop"),
])
def test_stop_verdict(decision, blocks, verdict):
    assert stop_verdict(decision, blocks, 8) == verdict


# ---------------------------------------------------------------------------
# Settings files


def write_settings(path, hooks):
    path.write_text(json.dumps({"permissions": {"allow": []}, "hooks": hooks}))
    return path


def test_load_hooks_reads_a_claude_code_settings_file(tmp_path):
    path = write_settings(tmp_path / "settings.json", {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a.sh", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "b.sh"}, {"type": "command", "command": "b.sh"}]}],
    })
    hooks = load_hooks(path)
    assert [(e.event, e.matcher, e.hook) for e in hooks.entries] == [
        ("pre_tool_use", "Bash", CommandHook("a.sh", 5.0)), ("stop", None, CommandHook("b.sh")),
        ("stop", None, CommandHook("b.sh"))]
    assert len(hooks.matching("stop")) == 1  # an identical command runs once
    assert hooks.matching("pre_tool_use", "Read") == []
    assert hooks.unsupported == []


def test_unsupported_hooks_are_reported_not_dropped(tmp_path):
    path = write_settings(tmp_path / "s.json", {
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
    })
    with pytest.warns(UnsupportedHookWarning, match="prompt"):
        hooks = load_hooks(path)
    assert len(hooks.unsupported) == 2
    assert any("SessionStart" in line for line in hooks.unsupported)
    assert "unsupported=2" in repr(hooks)


async def test_an_unsupported_hook_leaves_a_record_each_time_its_event_fires(tmp_path):
    path = write_settings(tmp_path / "s.json", {"Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}]}]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hooks = load_hooks(path)
    outcome = await run_hooks(hooks, event_input(hooks, "stop", tmp_path))
    (record,) = outcome.records
    assert record.attachment["type"] == "hook_non_blocking_error"
    assert "'prompt' hooks are not supported" in record.attachment["content"]
    assert outcome.decision == StopDecision()


@pytest.mark.parametrize("kind", ["command", "prompt"])
def test_a_bad_matcher_names_its_file_whatever_the_hook(tmp_path, kind):
    """Before the settings loader had its own module, an unsupported hook's bad matcher was refused without the
    file's name (issue 39, item 2)."""
    path = write_settings(tmp_path / "s.json", {"PreToolUse": [{"matcher": "[bad", "hooks": [
        {"type": kind, "command": "true", "prompt": "ok?"}]}]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"s\.json: PreToolUse: matcher '\[bad' is not a valid regular"):
            load_hooks(path)


@pytest.mark.parametrize("text", ["{not json", '{"hooks": {"Stop": "x"}}', '{"hooks": {"Stop": [{"hooks": [{}]}]}}'])
def test_a_broken_settings_file_is_a_clear_error(tmp_path, text):
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="settings.json: not a Claude Code settings file"):
        load_hooks(path)


def test_several_settings_files_merge_in_order(tmp_path):
    a = write_settings(tmp_path / "a.json", {"Stop": [{"hooks": [{"type": "command", "command": "a"}]}]})
    b = write_settings(tmp_path / "b.json", {"Stop": [{"hooks": [{"type": "command", "command": "b"}]}]})
    assert [e.hook.command for e in load_hooks(a, b).entries] == ["a", "b"]


# ---------------------------------------------------------------------------
# Command hooks: exit codes per event


EXIT_2 = {
    "pre_tool_use": PreToolUseDecision(decision="deny", reason="PreToolUse:Bash hook error: [CMD]: nope"),
    "post_tool_use": PostToolUseDecision(decision="block", reason="[CMD]: nope"),
    "user_prompt_submit": UserPromptSubmitDecision(decision="block", reason="nope"),
    "stop": StopDecision(decision="block", reason="[CMD]: nope"),
    "pre_compact": PreCompactDecision(system_message="nope"),
}


@pytest.mark.parametrize("event", EVENTS)
async def test_exit_2_means_what_the_reference_says_per_event(tmp_path, event):
    command = "echo ignored-json-on-stdout; echo nope >&2; exit 2"
    outcome = await run_command(tmp_path, event, command)
    expected = EXIT_2[event]
    reason = getattr(expected, "reason", None)
    if reason:
        expected = expected.model_copy(update={"reason": reason.replace("CMD", command)})
    assert outcome.decision == expected
    (record,) = outcome.records
    assert record.attachment["type"] == "hook_blocking_error"
    assert (record.attachment["exitCode"], record.attachment["stderr"]) == (2, "nope\n")


@pytest.mark.parametrize("event", EVENTS)
@pytest.mark.parametrize(("command", "code"), [("echo broken >&2; exit 1", 1), ("no-such-command-dreamloop", 127)])
async def test_other_exit_codes_are_non_blocking_errors(tmp_path, event, command, code):
    outcome = await run_command(tmp_path, event, command)
    assert outcome.decision == type(EXIT_2[event])()  # no effect at all
    (record,) = outcome.records
    assert record.attachment["type"] == "hook_non_blocking_error"
    assert record.attachment["exitCode"] == code
    assert record.attachment["content"].startswith(f"Failed with non-blocking status code {code}: ")


@pytest.mark.parametrize("event", EVENTS)
async def test_exit_0_with_json_on_stdout_is_a_decision(tmp_path, event):
    said = {"continue": False, "stopReason": "enough", "systemMessage": "note"}
    outcome = await run_command(tmp_path, event, f"echo '{json.dumps(said)}'")
    assert (outcome.decision.continue_, outcome.decision.stop_reason, outcome.decision.system_message) == \
        (False, "enough", "note")
    assert outcome.records[0].attachment["type"] == "hook_success"
    assert outcome.records[-1].attachment == {
        "type": "hook_stopped_continuation", "hookEvent": outcome.records[0].attachment["hookEvent"],
        "hookName": outcome.hook_name, "toolUseID": "T1", "stopReason": "enough"}


async def test_exit_0_json_decisions_per_event(tmp_path):
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "not here"}}
    assert (await run_command(tmp_path, "pre_tool_use", f"echo '{json.dumps(deny)}'")).decision == \
        PreToolUseDecision(decision="deny", reason="not here")
    block = {"decision": "block", "reason": "tests fail"}
    assert (await run_command(tmp_path, "stop", f"echo '{json.dumps(block)}'")).decision == \
        StopDecision(decision="block", reason="tests fail")
    context = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: 2 warnings"}}
    assert (await run_command(tmp_path, "post_tool_use", f"echo '{json.dumps(context)}'")).decision == \
        PostToolUseDecision(additional_context="lint: 2 warnings")


async def test_plain_stdout_is_context_only_for_user_prompt_submit(tmp_path):
    prompt = await run_command(tmp_path, "user_prompt_submit", "echo 'Current branch: main'")
    assert prompt.decision == UserPromptSubmitDecision(additional_context="Current branch: main")
    stop = await run_command(tmp_path, "stop", "echo 'just talking'")
    assert stop.decision == StopDecision()
    assert stop.records[0].attachment["content"] == "just talking"  # shown to the person


@pytest.mark.parametrize("stdout", ['{"decision": "maybe"}', '{"decision": "block", ', '{"continue": "perhaps"}'])
async def test_bad_json_is_a_non_blocking_error(tmp_path, stdout):
    outcome = await run_command(tmp_path, "stop", f"printf '%s' '{stdout}'")
    assert outcome.decision == StopDecision()
    record = outcome.records[0].attachment
    assert record["type"] == "hook_non_blocking_error" and record["content"].startswith("Bad JSON on stdout")


async def test_a_command_that_hangs_is_killed_with_its_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    command = f"sleep 60 & echo $! > {pidfile}; wait"
    started = time.monotonic()
    outcome = await run_command(tmp_path, "pre_tool_use", command, timeout=0.5)
    took = time.monotonic() - started
    record = outcome.records[0].attachment
    assert record["type"] == "hook_non_blocking_error" and record["exitCode"] is None
    assert "timed out after 0.5s" in record["content"]
    assert outcome.decision == PreToolUseDecision()  # a timeout decides nothing: the call goes on
    assert took < 30
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(child):
        await asyncio.sleep(0.05)
    assert not _alive(child), "the hook's background child outlived the timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead
        return stat.read().split()[2] != "Z"


async def test_a_per_hook_timeout_from_the_settings_file_is_used(tmp_path):
    path = write_settings(tmp_path / "s.json", {"Stop": [{"hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 0.3}]}]})
    hooks = load_hooks(path)
    outcome = await run_hooks(hooks, event_input(hooks, "stop", tmp_path))
    assert "timed out after 0.3s" in outcome.records[0].attachment["content"]


async def test_megabytes_of_output_are_capped(tmp_path):
    outcome = await run_command(tmp_path, "stop", f"{PY} -c \"import sys; sys.stdout.write('x' * 5_000_000); "
                                                  "sys.stderr.write('y' * 3_000_000)\"")
    record = outcome.records[0].attachment
    assert record["exitCode"] == 0
    assert len(record["stdout"]) < MAX_OUTPUT_CHARS + 200 and "[output truncated] 4970000 more" in record["stdout"]
    assert len(record["stderr"]) < MAX_OUTPUT_CHARS + 200


async def test_the_input_goes_on_stdin_only(tmp_path):
    seen = tmp_path / "seen.json"
    hooks = Hooks().add("pre_tool_use", CommandHook(f"cat > {seen}"))
    dangerous = {"command": "echo $(touch pwned) `touch pwned2`; rm -rf ./nothing && echo '; touch pwned3'"}
    outcome = await run_hooks(hooks, hooks.input("pre_tool_use", workspace=tmp_path, tool_name="Bash",
                                                 tool_input=dangerous, tool_use_id="T1"), value="Bash")
    assert outcome.records[0].attachment["exitCode"] == 0
    got = json.loads(seen.read_text())
    assert got["tool_input"] == dangerous
    assert (got["hook_event_name"], got["tool_name"], got["tool_use_id"], got["cwd"]) == \
        ("PreToolUse", "Bash", "T1", str(tmp_path))
    assert set(got) == {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
                        "tool_name", "tool_input", "tool_use_id"}
    assert not any(p.name.startswith("pwned") for p in tmp_path.iterdir())


async def test_a_command_that_never_reads_stdin_is_fine(tmp_path):
    hooks = Hooks().add("pre_tool_use", CommandHook("exit 0"))
    big = {"command": "x" * 1_000_000}
    outcome = await run_hooks(hooks, hooks.input("pre_tool_use", workspace=tmp_path, tool_name="Bash",
                                                 tool_input=big, tool_use_id="T1"), value="Bash")
    assert outcome.records[0].attachment["exitCode"] == 0


async def test_the_environment_has_the_project_dir_and_not_the_kits_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-secret")
    monkeypatch.setenv("DREAMLOOP_TEST_VISIBLE", "yes")
    outcome = await run_command(tmp_path, "stop", "env")
    env = dict(line.split("=", 1) for line in outcome.records[0].attachment["stdout"].splitlines() if "=" in line)
    assert env["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    assert env["DREAMLOOP_TEST_VISIBLE"] == "yes"
    assert "ANTHROPIC_API_KEY" not in env and "ANTHROPIC_AUTH_TOKEN" not in env
    assert (await run_command(tmp_path, "stop", "pwd")).records[0].attachment["stdout"].strip() == str(tmp_path)


# ---------------------------------------------------------------------------
# Python hooks and running several


async def test_python_hooks_sync_async_dict_or_none(tmp_path):
    async def deny(input):
        return PreToolUseDecision(decision="deny", reason=f"not {input.tool_input['command']}")

    hooks = (Hooks()
             .add("pre_tool_use", lambda input: None)
             .add("pre_tool_use", lambda input: {"hookSpecificOutput": {"permissionDecision": "ask"}})
             .add("pre_tool_use", deny, matcher="Bash")
             .add("pre_tool_use", lambda input: PreToolUseDecision(decision="allow"), matcher="Read"))
    outcome = await run_hooks(hooks, event_input(hooks, "pre_tool_use", tmp_path), value="Bash", tool_use_id="T1")
    assert outcome.decision == PreToolUseDecision(decision="deny", reason="not ls")
    assert [r.attachment["decision"] for r in outcome.records] == [{}, {"decision": "ask"}, {
        "decision": "deny", "reason": "not ls"}]
    assert [r.attachment["callable"] for r in outcome.records][2] == \
        "test_python_hooks_sync_async_dict_or_none.<locals>.deny"
    assert all(r.attachment["toolUseID"] == "T1" and r.attachment["type"] == "hook_success" for r in outcome.records)


async def test_matching_hooks_run_concurrently(tmp_path):
    arrived = []
    both = asyncio.Event()

    async def wait_for_the_other(input):
        arrived.append(1)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)  # run one at a time and this never returns in time

    hooks = Hooks().add("stop", wait_for_the_other).add("stop", wait_for_the_other)
    outcome = await run_hooks(hooks, event_input(hooks, "stop", tmp_path))
    assert len(outcome.records) == 2


async def test_a_python_hook_that_raises_is_your_bug(tmp_path):
    def broken(input):
        return input.tool_input["path"]  # KeyError: a Bash call has no path

    hooks = Hooks().add("pre_tool_use", broken)
    with pytest.raises(HookError, match="pre_tool_use hook .*broken raised KeyError") as raised:
        await run_hooks(hooks, event_input(hooks, "pre_tool_use", tmp_path), value="Bash")
    assert isinstance(raised.value.__cause__, KeyError)
    wrong = Hooks().add("stop", lambda input: "block")
    with pytest.raises(HookError, match="returned str"):
        await run_hooks(wrong, event_input(wrong, "stop", tmp_path))


async def test_pre_compact_exit_2_is_for_the_person_and_compaction_goes_on(tmp_path):
    hooks = Hooks().add("pre_compact", CommandHook("echo 'saving a copy first' >&2; exit 2"), matcher="auto")
    hooks.add("pre_compact", CommandHook("echo never"), matcher="manual")
    outcome = await run_pre_compact_hooks(hooks, trigger="auto", workspace=tmp_path)
    assert outcome.decision == PreCompactDecision(system_message="saving a copy first")
    assert not outcome.stopped and len(outcome.records) == 1
    assert outcome.hook_name == "PreCompact:auto"


def test_describe_record_is_one_stable_line():
    record = {"type": "hook_blocking_error", "hookName": "PreToolUse:Bash", "command": "./no-rm.sh",
              "exitCode": 2, "decision": {"decision": "deny", "reason": "PreToolUse:Bash hook error: [x]: no"},
              "durationMs": 12}
    assert describe_record(record) == "PreToolUse:Bash hook ./no-rm.sh (exit 2) → deny: PreToolUse:Bash hook error: [x]: no"
    assert describe_record({"type": "hook_additional_context", "hookName": "PostToolUse:Edit",
                            "content": ["a", "b"]}) == "PostToolUse:Edit → to the model: a / b"


async def test_a_hook_that_cannot_start_is_a_non_blocking_error(tmp_path):
    hooks = Hooks().add("post_tool_use", CommandHook("true"))
    input = event_input(hooks, "post_tool_use", tmp_path / "gone")
    outcome = await run_hooks(hooks, input, value="Bash")
    record = outcome.records[0].attachment
    assert (record["type"], record["exitCode"]) == ("hook_non_blocking_error", 126)
    assert "could not start the hook" in record["content"]
