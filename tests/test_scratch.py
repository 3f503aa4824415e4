"""The kit's temporary folders: one root per user, gone after a normal exit, and after a kill by the next process.

Every test uses its own ``TMPDIR`` (so its root is its own), in this process
and in the processes and kernels it starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from dreamloop.demo import copy_sample_project
from dreamloop.scratch import remove_stale, scratch_dir, scratch_root


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    """TMPDIR = a fresh folder, here and for child processes; returns the environment for them."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    return {**os.environ, "TMPDIR": str(tmp_path)}


def python(code: str, env: dict[str, str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True, **kwargs)


MAKE_AND_WAIT = ("from dreamloop.demo import copy_sample_project; import sys, time\n"
                 "print(copy_sample_project(), flush=True)\n"
                 "time.sleep(120)\n")


def test_one_private_root_per_user(tmpdir_env, tmp_path):
    folder = scratch_dir("ch04-")  # even when this process made folders under another root before
    root = scratch_root()
    assert root == tmp_path / f"dreamloop-{os.getuid():010d}"
    assert folder.parent.parent == root and folder.name.startswith("ch04-")
    assert oct(root.stat().st_mode & 0o777) == "0o700"
    assert copy_sample_project().parent == folder.parent  # the demo's copies go there too
    assert scratch_dir() != scratch_dir()


def test_a_root_that_is_not_private_is_refused(tmpdir_env, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"dreamloop-{os.getuid():010d}").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PermissionError, match="set TMPDIR"):
        scratch_dir()
    (tmp_path / f"dreamloop-{os.getuid():010d}").unlink()
    (tmp_path / f"dreamloop-{os.getuid():010d}").mkdir(mode=0o755)
    os.chmod(tmp_path / f"dreamloop-{os.getuid():010d}", 0o755)
    with pytest.raises(PermissionError, match="not a private directory"):
        scratch_dir()


def test_a_normal_exit_removes_the_process_folders(tmpdir_env):
    done = subprocess.run([sys.executable, "-c", "from dreamloop.scratch import scratch_dir; print(scratch_dir())"],
                          env=tmpdir_env, capture_output=True, text=True, check=True)
    assert not os.path.exists(done.stdout.strip())
    assert os.listdir(scratch_root()) == []


def test_a_killed_process_leaves_nothing_once_another_makes_a_folder(tmpdir_env):
    alive = python(MAKE_AND_WAIT, tmpdir_env)
    killed = python(MAKE_AND_WAIT, tmpdir_env)
    try:
        alive_copy, killed_copy = alive.stdout.readline().strip(), killed.stdout.readline().strip()
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert os.path.exists(f"{killed_copy}/config.py")  # SIGKILL runs no cleanup
        removed = remove_stale()
        assert [str(p) for p in removed] == [os.path.dirname(killed_copy)]
        assert not os.path.exists(killed_copy)
        assert os.path.exists(f"{alive_copy}/config.py")  # a live process's folders are never touched
        assert remove_stale() == []
    finally:
        for process in (alive, killed):
            process.kill()
            process.wait(timeout=30)


@pytest.mark.slow
def test_a_killed_kernel_leaves_no_workspace_behind(tmpdir_env, tmp_path):
    """What nbval or a hub does to a kernel: SIGKILL. The chapter's workspaces go with the next kit process."""
    from jupyter_client import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(tmp_path), env=tmpdir_env)
    client = manager.client()
    client.start_channels()
    outputs: list[str] = []
    try:
        client.wait_for_ready(timeout=120)
        reply = client.execute_interactive(
            "from dreamloop.demo import copy_sample_project; from dreamloop.scratch import scratch_dir\n"
            "print(copy_sample_project()); print(scratch_dir('ch04-'))", timeout=120,
            output_hook=lambda msg: outputs.append(msg["content"].get("text", "")))
        assert reply["content"]["status"] == "ok"
        workspaces = "".join(outputs).split()
        assert len(workspaces) == 2 and all(os.path.isdir(w) for w in workspaces)
        manager.signal_kernel(signal.SIGKILL)
        deadline = time.monotonic() + 60
        while manager.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not manager.is_alive()
        assert all(os.path.isdir(w) for w in workspaces)  # a killed kernel ran no cleanup
        next_process = subprocess.run(
            [sys.executable, "-c", "from dreamloop.scratch import scratch_dir; scratch_dir()"], env=tmpdir_env)
        assert next_process.returncode == 0
        assert not any(os.path.exists(w) for w in workspaces)
        assert os.listdir(scratch_root()) == []
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)



def test_no_chapter_makes_a_temporary_folder_of_its_own():
    """A chapter's folders come from scratch_dir() (or dreamloop.desk.place()): tempfile's stay behind after a run.

    Chapters 03b, 03c and 06 once made theirs with tempfile.mkdtemp, one more folder in /tmp per run, never removed.
    """
    import json
    from pathlib import Path

    notebooks = Path(__file__).resolve().parent.parent / "notebooks"
    chapters = sorted(notebooks.rglob("[01][0-9]*_*.ipynb"))
    assert len(chapters) >= 4 * 18
    found = [f"{path.relative_to(notebooks)} cell {number}"
             for path in chapters
             for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1)
             if cell["cell_type"] == "code" and "tempfile" in "".join(cell["source"])]
    assert not found, f"use dreamloop.scratch.scratch_dir() instead of tempfile in: {found}"
