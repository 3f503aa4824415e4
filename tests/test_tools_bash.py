"""Bash: output, exit codes, timeout, cap, cwd, process-group kill, read-only allowlist."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from dreamloop.tools.environment import REDACTED

from dreamloop.tools import (
    INTERRUPTED,
    BashTool,
    Deny,
    ToolUseContext,
    builtin_tools,
    is_read_only_command,
    partition_tool_calls,
    run_tools,
    tool_results_message,
)


async def bash(root: Path | None, command: str, **context) -> dict:
    input = {"command": command, **context.pop("input", {})}
    context = ToolUseContext(tools=[BashTool()], workspace=root, **{"permission_mode": "bypass", **context})
    messages = [m async for m in run_tools([{"id": "T1", "name": "Bash", "input": input}], context)]
    return messages[-1].message["content"][0]


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_output_and_cwd(tmp_path):
    (tmp_path / "hello.txt").write_text("hi\n")
    result = await bash(tmp_path, "pwd; cat hello.txt; echo oops >&2")
    assert result == {"type": "tool_result", "tool_use_id": "T1", "content": f"{tmp_path.resolve()}\nhi\noops"}


async def test_nonzero_exit_is_an_error_ending_with_the_code(tmp_path):
    result = await bash(tmp_path, "echo failing; exit 3")
    assert result["is_error"] and result["content"] == "failing\nExit code: 3"
    assert (await bash(tmp_path, "false"))["content"] == "Exit code: 1"


async def test_no_output(tmp_path):
    assert (await bash(tmp_path, "true"))["content"] == "(Bash completed with no output)"


async def test_timeout_kills_the_command(tmp_path):
    start = time.perf_counter()
    result = await bash(tmp_path, "echo started; sleep 10", input={"timeout": 200})
    assert time.perf_counter() - start < 2
    assert result["is_error"] and result["content"] == "started\nCommand timed out after 0.2s"
    result = await bash(tmp_path, "sleep 10", bash_timeout_s=0.1)
    assert result["content"] == "Command timed out after 0.1s"


async def test_output_is_capped(tmp_path):
    result = await bash(tmp_path, "seq 1 100000", max_output_chars=50)
    text = result["content"]
    assert text.startswith("1\n2\n3\n") and "[output truncated]" in text
    assert len(text) < 150 and not result.get("is_error")


async def test_background_jobs_do_not_hold_the_call(tmp_path):
    start = time.perf_counter()
    result = await bash(tmp_path, "sleep 5 & echo $! > bg.pid; echo done")
    assert result["content"] == "done" and time.perf_counter() - start < 1.5
    pid = int((tmp_path / "bg.pid").read_text())
    for _ in range(100):
        if not alive(pid):
            break
        await asyncio.sleep(0.02)
    assert not alive(pid)


async def test_bash_needs_a_workspace():
    result = await bash(None, "echo hi")
    assert result["is_error"] and "no workspace" in result["content"]


async def test_cancelling_kills_the_process_group(tmp_path):
    context = ToolUseContext(tools=[BashTool()], workspace=tmp_path, permission_mode="bypass")
    calls = [{"id": "T1", "name": "Bash", "input": {"command": "sleep 30 & echo $! > child.pid; exec sleep 30"}}]
    results: dict = {}

    async def consume():
        async for message in run_tools(calls, context):
            if message.type == "progress" and message.data["stage"] == "done":
                results[message.tool_use_id] = message.data["result"]

    task = asyncio.create_task(consume())
    pid_file = tmp_path / "child.pid"
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    child = int(pid_file.read_text())
    assert alive(child)
    start = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.perf_counter() - start < 1
    for _ in range(500):  # SIGKILL is sent before CancelledError propagates; on a loaded machine
        if not alive(child):  # the kernel may take a while to show it dead (seen: > 2 s at load 9 on 2 cores)
            break
        await asyncio.sleep(0.02)
    assert not alive(child)
    assert tool_results_message(calls, results, started={"T1"}).message["content"] == [
        {"type": "tool_result", "tool_use_id": "T1", "content": INTERRUPTED, "is_error": True}
    ]


async def test_cancelled_while_spawning_still_kills_the_process_group(tmp_path, monkeypatch):
    """Under load the spawn can finish after bash already runs; a cancel then must not leak the group."""
    spawn = asyncio.create_subprocess_exec

    async def slow_spawn(*args, **kwargs):  # the spawn returns late, as on a loaded machine
        proc = await spawn(*args, **kwargs)
        await asyncio.sleep(0.5)
        return proc

    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_spawn)
    context = ToolUseContext(tools=[BashTool()], workspace=tmp_path, permission_mode="bypass")
    calls = [{"id": "T1", "name": "Bash", "input": {"command": "sleep 30 & echo $! > child.pid; exec sleep 30"}}]

    async def consume():
        async for _ in run_tools(calls, context):
            pass

    task = asyncio.create_task(consume())
    pid_file = tmp_path / "child.pid"
    for _ in range(200):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.01)
    child = int(pid_file.read_text())
    task.cancel()  # while the spawn has not returned yet
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if not alive(child):
            break
        await asyncio.sleep(0.02)
    assert not alive(child)


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("ls -la src", True),
        ("cat README.md", True),
        ("grep -n VALUE src/main.py", True),
        ("git status", True),
        ("git diff HEAD", True),
        ("pwd", True),
        ("echo hello world", True),
        ("rm -rf build", False),
        ("git commit -m x", False),
        ("git diff --output=patch.txt", False),
        ("ls; rm x", False),
        ("cat a > b", False),
        ("cat a | sh", False),
        ("echo $(whoami)", False),
        ("cat ~/.ssh/id_rsa", False),
        ("cat /etc/passwd", False),
        ("cat ../secret.txt", False),
        ("grep -f/etc/passwd x", False),
        ("python -c 'print(1)'", False),
        ("echo 'unbalanced", False),
        ("", False),
    ],
)
def test_read_only_allowlist(command, read_only):
    assert is_read_only_command(command) is read_only


async def test_default_mode_runs_read_only_commands_and_asks_for_the_rest(tmp_path):
    (tmp_path / "a.txt").write_text("A\n")
    (tmp_path / "link").symlink_to("/etc/passwd")
    asked = []

    async def ask(tool, input, reason):
        asked.append(reason)
        return Deny("not now")

    context = ToolUseContext(tools=builtin_tools(), workspace=tmp_path, ask=ask)
    calls = [
        {"id": "T1", "name": "Bash", "input": {"command": "cat a.txt"}},
        {"id": "T2", "name": "Bash", "input": {"command": "touch b.txt"}},
        {"id": "T3", "name": "Bash", "input": {"command": "cat link"}},  # a symlink out: ask
    ]
    contents = []
    for call in calls:  # one at a time: a denied Bash call would stop the calls after it (the sibling rule)
        messages = [m async for m in run_tools([call], context)]
        contents += [b["content"] for b in messages[-1].message["content"]]
    assert contents == ["A", "not now", "not now"]
    assert asked == ["Bash wants to run: touch b.txt", "Bash wants to run: cat link"]
    assert not (tmp_path / "b.txt").exists()


def test_only_read_only_bash_is_concurrency_safe():
    calls = [
        {"id": "1", "name": "Bash", "input": {"command": "ls"}},
        {"id": "2", "name": "Bash", "input": {"command": "git status"}},
        {"id": "3", "name": "Bash", "input": {"command": "make"}},
        {"id": "4", "name": "Read", "input": {"file_path": "a"}},
    ]
    batches = partition_tool_calls(calls, builtin_tools())
    assert [[c["id"] for c in b.tool_uses] for b in batches] == [["1", "2"], ["3"], ["4"]]


# ---------------------------------------------------------------------------
# Issue 9: the kit's credentials stay out of commands; a process that outlives its call is named


def test_command_environment_drops_the_credentials_and_any_variable_holding_the_key():
    from dreamloop.tools import command_environment

    base = {"PATH": "/bin", "ANTHROPIC_API_KEY": "sk-1", "ANTHROPIC_AUTH_TOKEN": "tok", "MY_KEY": "sk-live-xyz",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "EMPTY": ""}
    assert command_environment(["sk-live-xyz", ""], base=base) == {
        "PATH": "/bin", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "EMPTY": ""}
    assert command_environment(["sk-live-xyz"], base=base, pass_credentials=True) == base  # the documented opt-in


async def test_bash_env_holds_no_credentials_unless_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-1")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "secret-token-2")
    monkeypatch.setenv("CORP_CLAUDE_KEY", "sk-ant-corp-3")  # the variable the key came through
    monkeypatch.setenv("HARMLESS", "visible")
    output = (await bash(tmp_path, "env", secrets=("sk-ant-corp-3",)))["content"]
    assert "HARMLESS=visible" in output
    for secret in ("sk-ant-secret-1", "secret-token-2", "sk-ant-corp-3"):
        assert secret not in output

    context = ToolUseContext(tools=[BashTool(pass_credentials=True)], workspace=tmp_path, permission_mode="bypass",
                             secrets=("sk-ant-corp-3",))
    messages = [m async for m in run_tools([{"id": "T1", "name": "Bash", "input": {"command": "env"}}], context)]
    opted_in = messages[-1].message["content"][0]["content"]
    # the command got the key (pass_credentials), but what it printed is redacted before it enters the history
    assert f"ANTHROPIC_API_KEY={REDACTED}" in opted_in and f"CORP_CLAUDE_KEY={REDACTED}" in opted_in
    assert "sk-ant-secret-1" not in opted_in and "sk-ant-corp-3" not in opted_in


async def test_the_loop_hands_the_models_key_to_no_command(tmp_path, monkeypatch, offline):
    """`env` through the loop: the key is not in the transcript, the trace or the tool results."""
    from dreamloop import scripts as S
    from dreamloop.query import QueryParams, query

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-shown")
    monkeypatch.setenv("OFFLINE_KEY_COPY", "offline-not-a-key")  # the offline model's own key, under another name
    model = offline([S.reply(S.tool_use("Bash", {"command": "env"}, id="T1")), S.reply("done")])
    run = query(QueryParams(messages="show env", model=model, tools=[BashTool()], workspace=tmp_path,
                            permission_mode="bypass"))
    async for _ in run:
        pass
    saved = run.trace.save(tmp_path / "trace.jsonl").read_text()
    transcript = "\n".join(m.model_dump_json() for m in run.messages)
    assert "PATH=" in transcript
    for text in (saved, transcript):
        assert "sk-ant-never-shown" not in text and "OFFLINE_KEY_COPY" not in text


ESCAPE = "setsid sh -c 'touch ready; exec sleep 3' & until [ -e ready ]; do sleep 0.01; done; echo started"


async def test_a_process_that_leaves_the_group_is_named_and_the_call_ends_cleanly(tmp_path):
    started = time.monotonic()
    # bash waits until the child has left the group (it touches `ready` after setsid), so the group kill at
    # bash's exit cannot catch it before it escapes (a race that once made this test flaky).
    result = await bash(tmp_path, ESCAPE)
    assert time.monotonic() - started < 3
    assert result["content"].startswith("started\n[note] the command left pid ")
    assert "(sleep 3) running outside its process group" in result["content"]
    assert not result.get("is_error")


def test_no_event_loop_is_closed_error_after_the_loop_ends(tmp_path):
    """The pipe is closed with the call, so nothing is left for the garbage collector to close on a dead loop."""
    import gc
    import sys

    seen = []
    previous, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        loop = asyncio.new_event_loop()
        try:
            result = loop.run_until_complete(bash(tmp_path, ESCAPE))
        finally:
            loop.close()
        gc.collect()
    finally:
        sys.unraisablehook = previous
    assert result["content"].startswith("started")
    assert [str(u.exc_value) for u in seen] == []  # was: RuntimeError('Event loop is closed')
