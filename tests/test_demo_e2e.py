"""The main job end to end: the demo policy through the real loop, tools and offline API.

Three tasks on three workspaces, the `dreamloop demo` / `run` / `replay`
commands, and the workspace really changed with its own tests passing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dreamloop.cli import allow_test_commands, main
from dreamloop.demo import copy_sample_project, demo_policy
from dreamloop.query import QueryParams, query
from dreamloop.tools import builtin_tools

WORKSPACES = Path(__file__).parent / "fixtures" / "workspaces"


def copy_workspace(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(WORKSPACES / name, dest)
    return dest


def project_tests_pass(workspace: Path) -> bool:
    done = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-p", "check_*.py"],
                          cwd=workspace, capture_output=True, text=True)
    return done.returncode == 0


async def solve(prompt: str, workspace: Path, offline, **overrides):
    params = dict(messages=prompt, model=offline(demo_policy), tools=builtin_tools(), workspace=workspace,
                  permission_mode="accept-edits", can_use_tool=allow_test_commands(), max_turns=15)
    run = query(QueryParams(**{**params, **overrides}))
    async for _ in run:
        pass
    return run


async def test_change_value_on_the_sample_project(offline, tmp_path):
    workspace = copy_sample_project(tmp_path / "sample")
    assert not project_tests_pass(workspace)
    run = await solve("change value to 2", workspace, offline)
    assert run.terminal.reason == "completed"
    assert "value = 2" in (workspace / "config.py").read_text()
    assert project_tests_pass(workspace)
    tool_names = [b.name for m in run.messages if m.type == "assistant" for b in m.message.content if b.type == "tool_use"]
    assert {"Read", "Edit", "Bash"} <= set(tool_names)
    assert "tests pass" in run.messages[-1].message.content[-1].text


async def test_set_string_setting_in_named_file(offline, tmp_path):
    workspace = copy_workspace("service", tmp_path)
    run = await solve('set name to "beta" in settings.py', workspace, offline)
    assert run.terminal.reason == "completed"
    assert 'name = "beta"' in (workspace / "settings.py").read_text()
    assert project_tests_pass(workspace)


async def test_make_the_failing_test_pass(offline, tmp_path):
    workspace = copy_workspace("failing", tmp_path)
    assert not project_tests_pass(workspace)
    run = await solve("make the failing test pass", workspace, offline)
    assert run.terminal.reason == "completed"
    assert project_tests_pass(workspace)


async def test_denied_bash_is_reported_not_hidden(offline, tmp_path):
    workspace = copy_sample_project(tmp_path / "sample")
    run = await solve("change value to 2", workspace, offline, can_use_tool=None)
    answer = run.messages[-1].message.content[-1].text
    assert run.terminal.reason == "completed"
    assert "value = 2" in (workspace / "config.py").read_text()  # accept-edits allowed the Edit
    assert "permission" in answer.lower() or "denied" in answer.lower()


async def test_out_of_grammar_prompt_gets_an_honest_answer(offline, tmp_path):
    run = await solve("write me a web server", copy_sample_project(tmp_path / "s"), offline)
    assert run.terminal.reason == "completed"
    assert "--live" in run.messages[-1].message.content[-1].text


def test_demo_command_prints_a_real_run(capsys, tmp_path):
    trace = tmp_path / "demo.jsonl"
    assert main(["demo", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "reason=completed" in out and "+value = 2" in out and "turn_count=6" in out
    assert main(["replay", str(trace)]) == 0
    assert "reason=completed" in capsys.readouterr().out


def test_run_json_with_no_one_to_ask_denies_clearly(capsys, tmp_path):
    workspace = copy_sample_project(tmp_path / "sample")
    assert main(["run", "change value to 2", "--workspace", str(workspace), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["terminal"]["reason"] == "completed"
    denials = [b["content"] for m in result["transcript"] if m["type"] == "user"
               for b in (m["message"]["content"] if isinstance(m["message"]["content"], list) else [])
               if b.get("is_error")]
    assert denials and "no one to ask" in denials[0]
    assert "value = 1" in (workspace / "config.py").read_text()


@pytest.mark.parametrize("argv, says", [
    (["run", "hi", "--max-turns", "0"], "argument --max-turns: must be at least 1, got 0"),
    (["replay", "missing.jsonl"], "No such file"),
    (["run", "hi", "--live"], "--live needs ANTHROPIC_API_KEY"),
    (["run", "hi", "--workspace", "nowhere"], "--workspace nowhere is not a directory"),
    (["replay", "README.md"], "line 1: not a dreamloop trace"),
])
def test_bad_arguments_fail_clearly(argv, says, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "README.md").write_text("# not a trace\n")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exit:
        main(argv)
    assert exit.value.code == 2
    assert says in capsys.readouterr().err


def test_live_mode_talks_to_any_anthropic_compatible_endpoint(capsys, tmp_path, monkeypatch):
    """`run --live` through the SDK's own ANTHROPIC_BASE_URL, here the loopback fake API: the live code path."""
    from dreamloop.fake_api import serve

    workspace = copy_sample_project(tmp_path / "sample")
    with serve(demo_policy) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")
        status = main(["run", "change value to 2", "--live", "--model", "claude-scripted-1", "--workspace",
                       str(workspace), "--permission-mode", "bypass", "--json"])
        requests = list(server.api.requests)
    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["terminal"]["reason"] == "completed"
    assert "value = 2" in (workspace / "config.py").read_text()
    assert [r.path for r in requests][0] == "/v1/models/claude-scripted-1"  # the window, for the context pipeline
    messages = [r for r in requests if r.path.endswith("/v1/messages")]
    assert len(messages) == result["terminal"]["turn_count"]
    assert messages[0].headers["authorization"] == "<redacted>" and messages[0].streamed
