"""`dreamloop run` and `sample` as a person at a shell meets them: exit codes per Terminal reason, checks
before anything runs, the workspace said at the start, denied edits said on stderr, --json totals, --help.

Runs that need a particular Terminal talk to the loopback fake API through `--live` and the SDK's own
ANTHROPIC_BASE_URL (the live code path); Ctrl-C is a real SIGINT to a real `dreamloop` process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import get_args

import pytest

import dreamloop.scripts as S
from dreamloop.cli import EXIT_CODES, main
from dreamloop.demo import copy_sample_project
from dreamloop.fake_api import serve
from dreamloop.state import TerminalReason

REPO = Path(__file__).resolve().parent.parent
DREAMLOOP = [sys.executable, "-m", "dreamloop.cli"]


@pytest.fixture
def sample(tmp_path):
    return copy_sample_project(tmp_path / "sample")


@pytest.fixture
def live_env(monkeypatch):
    """--live against a loopback fake API: ``with live_env(script) as server: main([... "--live" ...])``."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")

    def start(script):
        server = serve(script)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        return server

    return start


def run_json(capsys, *argv):
    status = main(["run", *argv, "--json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out), captured.err


# ---------------------------------------------------------------------------
# The table itself


def test_every_terminal_reason_has_its_own_exit_code():
    assert set(EXIT_CODES) == set(get_args(TerminalReason))
    assert EXIT_CODES["completed"] == 0
    others = [code for reason, code in EXIT_CODES.items() if reason != "completed"]
    assert len(set(others)) == len(others) and min(others) == 3  # 1: a crash, 2: a usage error
    assert max(others) < 126  # the shell's own codes start at 126


def test_help_and_readme_list_every_exit_code(capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    help_text = capsys.readouterr().out
    readme = (REPO / "README.md").read_text()
    for reason, code in EXIT_CODES.items():
        assert re.search(rf"^\s*{code}\s+{reason}\b", help_text, re.M), (reason, code)
        assert f"| {code} | `{reason}`" in readme, (reason, code)
    for code, meaning in ((1, "crash"), (2, "usage error")):
        assert re.search(rf"^\s*{code}\s+.*{meaning}", help_text, re.M)
        assert re.search(rf"\| {code} \| .*{meaning}", readme)


def test_help_texts_say_defaults_and_limits(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    from dreamloop.model import DEFAULT_LIVE_MODEL

    assert f"--model NAME model name (default: {DEFAULT_LIVE_MODEL} with --live" in text
    assert "--max-turns N end with Terminal max_turns" in text
    assert "--workspace DIR root the tools are confined to" in text


# ---------------------------------------------------------------------------
# One test per exit code


def test_exit_0_completed_says_the_workspace_first(capsys, sample):
    status = main(["run", "change value to 2", "--workspace", str(sample), "--permission-mode", "accept-edits"])
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines()[0] == f"workspace: {sample}"
    assert "value = 2" in (sample / "config.py").read_text()


def test_exit_1_is_an_unexpected_crash_only(sample):
    """A crash (here: json.dumps broken under the CLI) is Python's status 1 with a traceback, never a Terminal."""
    code = ("import json, sys; from dreamloop.cli import main; json.dumps = None; "
            f"sys.exit(main(['run', 'change value to 2', '--workspace', {str(sample)!r}, '--json']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "TypeError" in done.stderr
    assert 1 not in EXIT_CODES.values()


@pytest.mark.parametrize("argv, says", [
    (["run", ""], "dreamloop run: error: the prompt is empty"),
    (["run", "   "], "dreamloop run: error: the prompt is empty"),
    (["run", "hi", "--max-turns", "0"], "argument --max-turns: must be at least 1, got 0"),
    (["run", "hi", "--max-turns", "two"], "argument --max-turns: expected a whole number, got 'two'"),
    (["run", "hi", "--trace", "missing-dir/run.jsonl"], "--trace missing-dir/run.jsonl: the directory missing-dir "
                                                        "does not exist"),
    (["run", "hi", "--trace", "."], "--trace . is a directory"),
    (["run", "hi", "--trace", "dangling.jsonl"], "--trace dangling.jsonl is a link to"),
    (["run", "hi", "--workspace", "nowhere"], "--workspace nowhere is not a directory"),
    (["run", "hi", "--live"], "--live needs ANTHROPIC_API_KEY"),
    (["demo", "--trace", "missing-dir/demo.jsonl"], "the directory missing-dir does not exist"),
    (["replay", "missing.jsonl"], "No such file"),
    (["replay", "."], "is a directory"),
    (["sample", "full"], "is not empty"),
    (["serve-fake", "--script", "turns.yaml"], "dreamloop serve-fake: error: script 'turns.yaml': no such file"),
    (["serve-fake", "--script", "nosuchmodule:policy"], "no module named 'nosuchmodule'"),
    (["serve-fake", "--script", "json:policy"], "module 'json' has no 'policy'"),
    (["serve-fake", "--port", "99999"], "argument --port: a port is 0-65535"),
    (["run", "hi", "--no-recovery", "--no-recovery-branch", "collapse_drain_retry"],
     "--no-recovery-branch collapse_drain_retry with --no-recovery: --no-recovery already turns every part off"),
    (["run", "hi", "--no-context", "--no-stage", "snip"], "--no-stage snip with --no-context"),
    (["run", "hi", "--fallback-model", ""], "dreamloop run: error: --fallback-model: the name is blank"),
    (["run", "hi", "--fallback-model", "  "], "dreamloop run: error: --fallback-model: the name is blank"),
    (["run", "hi", "--model", "claude-x-1", "--fallback-model", "claude-x-1"],
     "dreamloop run: error: --fallback-model: 'claude-x-1' is the main model; a fallback must be another model"),
])
def test_exit_2_usage_errors_name_the_flag_and_run_nothing(argv, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "no-such-dir" / "run.jsonl")
    (tmp_path / "config.py").write_text("value = 1\n")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(SystemExit) as done:
        main(argv)
    captured = capsys.readouterr()
    assert done.value.code == 2
    assert says in captured.err
    assert "Value error" not in captured.err  # pydantic's wording stays out of a usage error
    assert "workspace:" not in captured.out  # checked before the run started
    assert (tmp_path / "config.py").read_text() == "value = 1\n"


def test_a_bad_trace_path_fails_before_any_edit(sample, capsys):
    before = (sample / "config.py").read_text()
    with pytest.raises(SystemExit) as done:
        main(["run", "change value to 2", "--workspace", str(sample), "--permission-mode", "accept-edits",
              "--trace", str(sample / "no-such-dir" / "run.jsonl")])
    assert done.value.code == 2
    assert (sample / "config.py").read_text() == before


def test_the_package_itself_is_never_a_workspace(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit) as done:
        main(["run", "change value to 2"])
    assert done.value.code == 2
    assert "dreamloop sample DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "change value to 2", "--workspace", str(REPO / "dreamloop" / "demo")])


def test_exit_3_ctrl_c_while_the_model_streams(sample):
    slow = S.reply("Let me think about this for quite a while before I answer anything at all. " * 4,
                   tokens_per_second=20, chunk_size=4)
    status, out, err = _interrupt(sample, [slow], when=lambda server, out: server.api.requests)
    assert status == EXIT_CODES["aborted_streaming"] == 3, err
    assert "reason=aborted_streaming" in out and "stopping (Ctrl-C" in err


def test_exit_4_ctrl_c_while_a_tool_runs(sample):
    script = [S.reply("Waiting.", S.tool_use("Bash", {"command": "sleep 20"}, id="toolu_1")), S.reply("Done.")]
    status, out, err = _interrupt(sample, script, when=lambda server, out: "tool_use  Bash" in out,
                                  extra=["--permission-mode", "bypass"])
    assert status == EXIT_CODES["aborted_tools"] == 4, err
    assert "reason=aborted_tools" in out and "Interrupted by user" in out


def test_exit_5_max_turns(sample, capsys):
    status, result, _ = run_json(capsys, "change value to 2", "--workspace", str(sample), "--max-turns", "2")
    assert status == EXIT_CODES["max_turns"] == 5
    assert result["terminal"] == {"reason": "max_turns", "turn_count": 3, "error": None}


def test_exit_6_model_error(sample, capsys, live_env):
    with live_env([S.reply("Let me", stop_reason=None)]):  # a stream that ends without message_delta
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample))
    assert status == EXIT_CODES["model_error"] == 6
    assert "Incomplete response" in result["terminal"]["error"]


def test_exit_13_api_error_when_an_error_event_has_nothing_left_to_try(sample, capsys, live_env):
    with live_env([S.stream_error("Let me", error_type="overloaded_error")] * 3):
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample), "--no-recovery-branch", "streaming_fallback")
    assert status == EXIT_CODES["api_error"] == 13
    assert "overloaded_error" in result["terminal"]["error"]


def test_exit_7_prompt_too_long(sample, capsys, live_env):
    with live_env([S.prompt_too_long(250_000)]):
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample))
    assert status == EXIT_CODES["prompt_too_long"] == 7
    assert result["terminal"]["reason"] == "prompt_too_long"


def test_exit_9_image_error(sample, capsys, live_env):
    with live_env([S.http_error(400, message="Could not process image")]):
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample))
    assert status == EXIT_CODES["image_error"] == 9
    assert result["terminal"]["reason"] == "image_error"


def test_exit_8_blocking_limit(sample, capsys):
    """The blocking limit is checked unless autocompact and reactive compaction are both on (the source:
    they own an over-long context); with reactive compaction off, nothing is sent."""
    status, result, _ = run_json(capsys, "change value to 2", "--workspace", str(sample), "--context-window", "400",
                                 "--no-recovery-branch", "reactive_compact_retry")
    assert status == EXIT_CODES["blocking_limit"] == 8
    assert result["terminal"]["reason"] == "blocking_limit" and result["usage"]["requests"] == 0


def test_with_autocompact_and_reactive_compaction_on_the_blocking_limit_is_not_checked(sample, capsys):
    status, result, _ = run_json(capsys, "change value to 2", "--workspace", str(sample), "--context-window", "400")
    assert result["terminal"]["reason"] != "blocking_limit" and result["usage"]["requests"] >= 1


def settings_file(tmp_path, event, output):
    """A Claude Code settings file whose one command hook on ``event`` prints ``output`` (JSON) and exits 0."""
    path = tmp_path / "settings.json"
    command = f"printf '%s' {json.dumps(json.dumps(output))}"
    path.write_text(json.dumps({"hooks": {event: [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]}}))
    return str(path)


def test_exit_10_stop_hook_prevented(sample, capsys, tmp_path):
    hook = settings_file(tmp_path, "Stop", {"continue": False, "stopReason": "the reviewer says stop"})
    status, result, _ = run_json(capsys, "change value to 2", "--workspace", str(sample), "--settings", hook,
                                 "--permission-mode", "accept-edits")
    assert status == EXIT_CODES["stop_hook_prevented"] == 10
    assert result["terminal"]["reason"] == "stop_hook_prevented"
    assert any(m["type"] == "system" and "the reviewer says stop" in m["content"] for m in result["transcript"])


def test_exit_11_hook_stopped(sample, capsys, tmp_path):
    hook = settings_file(tmp_path, "PostToolUse", {"continue": False, "stopReason": "enough reading"})
    status, result, _ = run_json(capsys, "change value to 2", "--workspace", str(sample), "--settings", hook,
                                 "--permission-mode", "accept-edits")
    assert status == EXIT_CODES["hook_stopped"] == 11
    assert result["terminal"] == {"reason": "hook_stopped", "turn_count": 1, "error": None}
    assert "value = 1" in (sample / "config.py").read_text()  # stopped after the first read, before any edit


# The recovery branches are on in `run` (chapters 08 and 08b): the same exit codes, after recovery tried (and bounded).


def test_exit_7_prompt_too_long_after_recovery_tried_and_without_it(sample, capsys, live_env):
    with live_env([S.prompt_too_long(250_000)] * 2):
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample))
        said = [m["subtype"] for m in result["transcript"] if m["type"] == "system"]
        assert status == 7 and said == ["reactive_compact_failed", "api_error"]  # nothing to compact in one message
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample), "--no-recovery")
    assert status == 7 and [m["subtype"] for m in result["transcript"] if m["type"] == "system"] == ["api_error"]
    assert result["switches"]["recovery"] is False


def test_exit_13_api_error_after_the_fallback_model_was_overloaded_too(sample, capsys, live_env):
    with live_env([S.http_error(529, retry_after_ms=1)] * 6) as server:
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1", "--workspace",
                                     str(sample), "--fallback-model", "claude-fallback-1")
        models = [r.body["model"] for r in server.api.requests if r.path.endswith("/v1/messages")]
    assert status == EXIT_CODES["api_error"] == 13
    assert models == ["claude-scripted-1"] * 3 + ["claude-fallback-1"] * 3  # each 529 counted, as Claude Code does
    assert result["switches"]["fallback_model"] == "claude-fallback-1"
    assert [m["subtype"] for m in result["transcript"] if m["type"] == "system"].count("model_fallback") == 1


def test_exit_13_when_the_resumes_are_exhausted_and_the_texts_way_with_flags(sample, capsys, live_env):
    cut = S.reply("more and more", stop_reason="max_tokens")
    with live_env([cut] * 4 + [cut] * 5 + [S.reply("short")] * 4) as server:
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample))
        assert status == 13 and result["terminal"]["reason"] == "api_error"  # Claude Code 2.1.332: no escalation
        assert result["usage"]["requests"] == 4 and result["transcript"][-1]["subtype"] == "max_output_tokens"
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample), "--recovery-branch", "max_output_tokens_escalate",
                                     "--max-tokens-exhausted", "completed",  # the source text's way
                                     "--max-tokens", "4096")  # below the escalated 64,000
        assert status == 0 and result["terminal"]["reason"] == "completed"
        assert result["usage"]["requests"] == 5
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1",
                                     "--workspace", str(sample), "--token-budget", "5000",
                                     "--no-recovery-branch", "max_output_tokens_escalate")
    assert status == 0 and result["usage"]["requests"] == 4  # the answer and 3 budget continuations
    assert result["switches"]["recovery"]["max_output_tokens_escalate"] is False
    assert result["switches"]["token_budget"]["total"] == 5000
    assert server.api.requests


def _interrupt(workspace: Path, script, *, when, extra=()):
    """Start `dreamloop run --live` against the fake API, send SIGINT once ``when(server, stdout)``."""
    with serve(script) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-not-a-key", "ANTHROPIC_BASE_URL": server.url,
               "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
        proc = subprocess.Popen([*DREAMLOOP, "run", "wait", "--live", "--model", "claude-scripted-1",
                                 "--workspace", str(workspace), *extra], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, text=True)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + 90  # a loaded CI machine: the first response can take a while
            while not when(server, "".join(lines)):
                if time.monotonic() > deadline or proc.poll() is not None:
                    ended = proc.poll()
                    if ended is None:
                        proc.kill()
                    pytest.fail(f"never reached the point to interrupt (exit status {ended}); stdout: "
                                f"{''.join(lines)[-500:]!r}; stderr: {proc.stderr.read()[-1500:]!r}; "
                                f"requests: {[r.status for r in server.api.requests]}")
                time.sleep(0.05)
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
            reader.join(5)
            err = proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
    return proc.returncode, "".join(lines), err


# ---------------------------------------------------------------------------
# What a person is told


def test_denied_edits_are_said_on_stderr_with_the_fix(sample, capsys):
    status = main(["run", "change value to 2", "--workspace", str(sample)])
    captured = capsys.readouterr()
    assert status == 0  # the loop completed: the model was told, and said so
    assert "value = 1" in (sample / "config.py").read_text()
    assert "needed permission and there was no terminal to ask on" in captured.err
    assert "Edit: Edit wants to change config.py" in captured.err
    assert "re-run with --permission-mode accept-edits" in captured.err


def test_json_is_pure_and_carries_token_totals(sample, capsys):
    status, result, err = run_json(capsys, "change value to 2", "--workspace", str(sample),
                                   "--permission-mode", "accept-edits")
    assert status == 0 and f"workspace: {sample}" in err
    answers = [m for m in result["transcript"] if m["type"] == "assistant"]
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    assert result["usage"] == {
        **{key: sum(m["message"]["usage"][key] for m in answers) for key in keys},
        "requests": len(answers),
    }
    usage = result["usage"]
    assert usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"] > 0
    assert usage["cache_read_input_tokens"] > 0  # run turns prompt caching on: later requests read the prefix


def test_sample_copies_a_workspace_to_try(tmp_path, capsys):
    assert main(["sample", str(tmp_path / "play")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "play" / "config.py").read_text().count("value = 1") == 1
    assert f"--workspace {tmp_path / 'play'}" in out


def test_every_readme_run_example_is_safe():
    """No README example edits the directory it is typed in: each `run` names a workspace to work in."""
    readme = (REPO / "README.md").read_text()
    runs = [line for line in readme.splitlines() if re.match(r"\s*(\.venv/bin/)?dreamloop run ", line)]
    assert runs
    for line in runs:
        assert "--workspace" in line, line


def test_run_offers_agent_unless_no_sub_agents(sample, capsys, live_env):
    """`dreamloop run` offers Agent, a call without run_in_background in the background (the observed preset:
    sub_agent_call); --no-sub-agents offers none, like the other --no- flags."""
    with live_env([S.reply("value is 1."), S.reply("value is 1.")]) as server:
        status, result, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1", "--workspace", str(sample))
        _, off, _ = run_json(capsys, "hi", "--live", "--model", "claude-scripted-1", "--workspace", str(sample),
                             "--no-sub-agents")
        tools = [[t["name"] for t in r.body["tools"]] for r in server.api.requests if r.path.endswith("/v1/messages")]
    assert status == 0 and result["switches"]["sub_agents"]["background_by_default"] is True
    assert off["switches"]["sub_agents"] is False
    assert "Agent" in tools[0] and "Agent" not in tools[1] and len(tools[0]) == len(tools[1]) + 1
