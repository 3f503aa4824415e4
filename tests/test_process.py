"""The one process runner (issue 39, item 2): ``bash -c`` in its own group, output captured while it runs,
its group killed however it ends, nothing left open. The Bash tool and command hooks run through it
(``tests/test_tools_bash.py``, ``tests/test_hooks.py`` hold their behaviour)."""

from __future__ import annotations

import asyncio
import time
import os
from pathlib import Path

import pytest

from dreamloop.tools.process import CommandProcess, run_command


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def alive(pid: int) -> bool:
    """Still running 2 s after its group was killed (SIGKILL lands when the process is next scheduled, which on a
    loaded machine can be after ``kill`` returned; a zombie nobody reaped yet counts as gone)."""
    for _ in range(200):
        if not running(pid):
            return False
        time.sleep(0.01)
    return True


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def wait_for_file(path: Path) -> str:
    for _ in range(200):
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never written")


async def test_output_is_readable_while_it_runs_and_close_ends_the_whole_group(tmp_path):
    """What a command kept beyond one call needs: its output so far, then an end that takes its jobs too."""
    before = open_fds()
    child = await CommandProcess.start(f"sleep 30 & echo $! > {tmp_path / 'bg'}; echo started; sleep 30",
                                       cwd=tmp_path, env=os.environ, limit=1000)
    background = int(await wait_for_file(tmp_path / "bg"))
    for _ in range(200):
        if child.stdout.text():
            break
        await asyncio.sleep(0.01)
    assert child.stdout.text() == "started\n" and child.returncode is None and running(background)
    assert await child.wait(0.05) is False  # still running
    assert await child.close() == "" and await child.close() == ""  # the second close does nothing more
    assert child.returncode is not None and not alive(child.pid) and not alive(background)
    assert open_fds() == before


async def test_stdin_the_command_never_reads_and_stderr_on_its_own(tmp_path):
    big = b"x" * (1 << 20)  # more than a pipe holds: the feeder must not hold the command up
    done = await run_command("echo out; echo err >&2; exit 3", cwd=tmp_path, env=os.environ, timeout_s=10,
                             limit=100, stdin=big, merge_stderr=False)
    assert (done.code, done.stdout, done.stderr, done.left_running) == (3, "out\n", "err\n", "")
    done = await run_command("head -c 5", cwd=tmp_path, env=os.environ, timeout_s=10, limit=100, stdin=big)
    assert (done.code, done.stdout) == (0, "xxxxx")


async def test_each_stream_is_kept_to_the_limit_and_the_rest_counted(tmp_path):
    done = await run_command("printf 'a%.0s' $(seq 1 50); printf 'b%.0s' $(seq 1 30) >&2", cwd=tmp_path,
                             env=os.environ, timeout_s=10, limit=20, merge_stderr=False)
    assert done.stdout == "a" * 20 + "\n[output truncated] 30 more characters not shown"
    assert done.stderr == "b" * 20 + "\n[output truncated] 10 more characters not shown"


async def test_a_timeout_is_no_exit_code(tmp_path):
    done = await run_command("echo before; sleep 30", cwd=tmp_path, env=os.environ, timeout_s=0.2, limit=100)
    assert (done.code, done.stdout) == (None, "before\n")


async def test_a_cancel_kills_the_group_before_it_propagates_and_leaves_nothing_open(tmp_path):
    before = open_fds()
    task = asyncio.ensure_future(run_command(f"sleep 30 & echo $! > {tmp_path / 'bg'}; sleep 30", cwd=tmp_path,
                                             env=os.environ, timeout_s=60, limit=100, stdin=b"{}"))
    background = int(await wait_for_file(tmp_path / "bg"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not alive(background) and open_fds() == before


async def test_a_command_that_cannot_start_raises_and_leaves_nothing_open(tmp_path):
    before = open_fds()
    with pytest.raises(OSError):
        await run_command("true", cwd=tmp_path / "gone", env=os.environ, timeout_s=5, limit=10, stdin=b"x")
    assert open_fds() == before


async def test_a_cancel_at_any_point_of_the_start_leaves_no_descriptor_to_the_loop(tmp_path, caplog):
    """Cancelled while the pipes are being handed to their transports: a descriptor closed under a transport
    makes the loop log 'Exception in callback ... Bad file descriptor' (and could hit a reused one)."""
    before = open_fds()
    for k in range(12):
        task = asyncio.ensure_future(run_command(f"sleep 30 & echo $! > {tmp_path / f'bg{k}'}; sleep 30",
                                                 cwd=tmp_path, env=os.environ, timeout_s=60, limit=100,
                                                 stdin=b"{}", merge_stderr=bool(k % 2)))
        for _ in range(k):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.01)
        pid = tmp_path / f"bg{k}"
        if pid.exists() and pid.read_text().strip():
            assert not alive(int(pid.read_text()))
    assert open_fds() == before
    assert not [r for r in caplog.records if r.levelname == "ERROR"], [r.getMessage() for r in caplog.records]


async def test_close_returns_only_once_its_readers_have_ended(tmp_path):
    """A process that left the group keeps the output open, so its reader is still waiting when the command is
    closed: close() cancels it and returns only once it has ended (none of a command's tasks outlives it)."""
    child = await CommandProcess.start(f"setsid sleep 30 & echo $! > {tmp_path / 'left'}; sleep 30", cwd=tmp_path,
                                       env=os.environ, limit=100)
    left = int(await wait_for_file(tmp_path / "left"))
    try:
        assert await child.close(drain=False) == ""
        assert asyncio.all_tasks() == {asyncio.current_task()}
    finally:
        os.kill(left, 9)
