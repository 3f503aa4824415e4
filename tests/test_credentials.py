"""The API key never reaches a tool's output, a hook, a request, the transcript, the trace or --json (issue 24, item 10).

A real ``dreamloop run --live`` process (the key in its environment, as a person runs it) against the
loopback fake API. A hook and a Bash command each try every way to the key: their environment (also a
copy under another name) and ``/proc/$PPID/environ``, the environment dreamloop started with, which
``os.environ`` cannot change (so ``dreamloop run`` starts again with the key moved to a pipe). What they
print is redacted before it enters anything; no hook gets a copy in its environment. Then every artefact
is searched for the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dreamloop.scripts as S
from dreamloop.demo import copy_sample_project
from dreamloop.fake_api import serve
from dreamloop.tools.environment import REDACTED, command_environment, redact

KEY = "sk-ant-api03-THE-KEY-MUST-NOT-LEAK-0123456789"
LOOK = "env; cat /proc/$PPID/environ | tr '\\0' '\\n'"


def test_redact_and_the_environment_of_commands(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("MY_COPY_OF_THE_KEY", KEY)
    env = command_environment()
    assert KEY not in env.values() and "MY_COPY_OF_THE_KEY" not in env
    assert redact(f"x={KEY}!") == f"x={REDACTED}!"


def test_no_artefact_holds_the_key(tmp_path):
    workspace = copy_sample_project(tmp_path / "sample")
    hook_env = tmp_path / "hook-env.txt"
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"env > {hook_env}; {LOOK}"}]}],
        "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": f"{LOOK} >&2; exit 1"}]}]}}))
    script = [S.reply("Looking.", S.tool_use("Bash", {"command": LOOK})), S.reply("Done.")]
    trace = tmp_path / "run.trace.jsonl"
    with serve(script) as server:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "MY_COPY_OF_THE_KEY": KEY, "ANTHROPIC_BASE_URL": server.url,
               "NO_COLOR": "1"}
        done = subprocess.run([sys.executable, "-m", "dreamloop.cli", "run", "look around", "--live", "--model",
                               "claude-scripted-1", "--workspace", str(workspace), "--permission-mode", "bypass",
                               "--settings", str(settings), "--trace", str(trace), "--json"],
                              env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        requests = json.dumps([r.body for r in server.api.requests])
    assert done.returncode == 0, done.stderr
    assert hook_env.exists() and KEY not in hook_env.read_text()  # (c) no hook gets any copy
    assert "ANTHROPIC_BASE_URL" in requests and "MY_COPY_OF_THE_KEY" not in requests  # the Bash call read
    # /proc/$PPID/environ: dreamloop started again with the key and its copy out of its environment
    artefacts = {"requests": requests, "--json": done.stdout, "stderr": done.stderr, "trace": trace.read_text(),
                 "hook env": hook_env.read_text()}
    leaked = [name for name, text in artefacts.items() if KEY in text]
    assert not leaked
