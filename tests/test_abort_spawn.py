"""An abort while a command hook is being spawned ends the run (issue 24, item 1).

On CPython 3.11 a ``create_subprocess_exec`` cancelled mid-spawn waited for every process holding the
pipes it had not finished connecting: a hook whose shell had a child, aborted in that window, left
``query()`` waiting for ever. The sweep (``bench/abort_sweep.py``, which prints the full figures) fires
the abort at each event-loop iteration of the spawn window, 576 runs; here each point once.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from abort_sweep import COMMANDS, DEADLINE_S, WINDOW, one_run  # noqa: E402


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("k", range(WINDOW))
async def test_an_abort_in_the_spawn_window_ends_the_run(k, streaming):
    reason, took = await one_run(k, COMMANDS["child holds the pipes"], streaming=streaming)
    # with streaming tool execution the call starts while the stream is still read: an abort that lands before
    # the stream ended is aborted_streaming (F1), after it aborted_tools; either way a Terminal, in time
    ends = ("aborted_tools", "aborted_streaming") if streaming else ("aborted_tools",)
    assert reason in ends and took < DEADLINE_S


async def test_a_stream_that_fails_while_its_call_spawns_a_hook_ends_the_run():
    for k in range(WINDOW):
        reason, _ = await one_run(k, COMMANDS["child holds the pipes"], streaming=True, shape="stream fails")
        assert reason == "model_error"


async def test_a_cancelled_spawn_kills_the_whole_group(tmp_path):
    """The task itself cancelled mid-spawn: the shell's child does not outlive it."""
    from dreamloop.tools.process import start_process

    for k in range(WINDOW):
        pid = tmp_path / f"pid{k}"
        spawn = asyncio.ensure_future(start_process(
            "/bin/bash", "-c", f"sleep 30 & echo $! > {pid}; wait", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True))
        for _ in range(k):
            await asyncio.sleep(0)
        spawn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(spawn, DEADLINE_S)
        await asyncio.sleep(0.05)
        if pid.exists() and pid.read_text().strip():
            assert not Path(f"/proc/{pid.read_text().strip()}").exists() or \
                "Z" in Path(f"/proc/{pid.read_text().strip()}/stat").read_text().split()[2]
