"""Background commands and Stops: processes started and left after N runs (goal 0), and ms per run.

Each run: the model starts 1-3 background commands (some end at once, some sleep, one writes a lot), then either
waits for them (the run delivers their notifications), stops one with TaskStop, or is stopped (a Stop at a
random point). After each run, every command's pid (each writes it to a file first) is checked: a live one is
"left". ``python bench/background_processes.py [RUNS]`` (default 1000).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from dreamloop import scripts as S
from dreamloop.model import offline
from dreamloop.query import QueryParams, query
from dreamloop.tools import BashTool
from dreamloop.tools.background import TaskOutputTool, TaskStopTool

COMMANDS = ["true", "exit 2", "sleep 0.05", "sleep 0.2; echo late", "yes x | head -c 200000", "sleep 30"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def one_run(rng: random.Random, folder: Path, number: int) -> tuple[int, int, str]:
    count = rng.randint(1, 3)
    calls = []
    for k in range(count):
        command = rng.choice(COMMANDS)
        calls.append(S.tool_use("Bash", {"command": f"echo $$ >> pids; {command}", "run_in_background": True},
                                id=f"T{number}_{k}"))
    ending = rng.choice(["wait", "task_stop", "stop"])
    script = [S.reply(*calls)]
    if ending == "task_stop":
        script.append(S.reply(S.tool_use("TaskStop", {"task_id": "bash_1"}, id=f"S{number}")))
    script += [S.reply("waiting")] + [S.reply("noted")] * 4
    params = QueryParams(messages="go", model=offline(script), tools=[BashTool(), TaskOutputTool(), TaskStopTool()],
                         workspace=folder, permission_mode="bypass", background_tasks=True, tool_timeout_s=0.5)
    run = query(params)
    if ending == "stop":
        asyncio.get_running_loop().call_later(rng.uniform(0.0, 0.15), params.abort.abort)
    async for _ in run:
        pass
    pids = [int(line) for line in (folder / "pids").read_text().split()] if (folder / "pids").exists() else []
    (folder / "pids").unlink(missing_ok=True)
    return len(pids), sum(1 for pid in pids if _alive(pid)), run.terminal.reason


async def main(runs: int) -> None:
    rng = random.Random(34)
    started = left = 0
    endings: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for number in range(runs):
            s, l, reason = await one_run(rng, Path(tmp), number)
            started, left = started + s, left + l
            endings[reason] = endings.get(reason, 0) + 1
        elapsed = time.perf_counter() - t0
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    print(f"runs: {runs}; background processes started: {started}; left running: {left} (goal 0); "
          f"tasks left: {len(tasks)}; {elapsed / runs * 1000:.1f} ms/run; endings: {dict(sorted(endings.items()))}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
