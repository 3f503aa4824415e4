"""A workshop room on this machine: N learners run a chapter at the same moment, each in a kernel of their own.

    .venv/bin/python bench/room.py                       # chapter 03, 8 learners
    .venv/bin/python bench/room.py -n 32 --chapter 00

Each learner's run executes a copy of the chapter top to bottom in a fresh
kernel, all N started at once, each in a temporary folder of its own, with the
build's settings (``notebooks/build.py``: late output is waited for, and fails
loudly past the wait) and the notebook environment of ``make test`` (prompts
answer themselves, nothing is paced for a person to watch). It prints the wall
time, each run's time (p50, p95, max), the failures, the runs whose outputs
differ from the stored ones (as nbval judges them), the CPU seconds a run
costs, and peak memory (resident set size, sampled every 0.2 s): all kernels
together and one kernel. This is the worst case of a room, everyone pressing
Run All together; the README's "Running a workshop" turns the figures into a
sizing table. Exit status 1 if any run failed or differed. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import importlib.util
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import nbformat
import psutil

from dreamloop.scratch import scratch_dir

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("dreamloop_notebook_build", REPO / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

STARTUP_TIMEOUT_S = 600
"""How long a kernel may take to start when N start at once (nbclient's default, 60 s, is a room's first failure)."""


class Sampler:
    """Resident memory of this process's kernels, every ``interval`` seconds: the peak of all together and of one."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.peak_total_mb = 0.0
        self.peak_per_kernel_mb: dict[int, float] = {}

    async def run(self) -> None:
        me = psutil.Process()
        while True:
            total = 0.0
            for child in me.children(recursive=True):
                try:
                    mb = child.memory_info().rss / 2**20
                except psutil.Error:  # it ended between the listing and the reading
                    continue
                total += mb
                self.peak_per_kernel_mb[child.pid] = max(mb, self.peak_per_kernel_mb.get(child.pid, 0.0))
            self.peak_total_mb = max(self.peak_total_mb, total)
            await asyncio.sleep(self.interval)


async def learner(number: int, stored: nbformat.NotebookNode) -> tuple[float, str | None, list[str]]:
    """One learner's run: (seconds, failure or None, output differences)."""
    nb = copy.deepcopy(stored)
    folder = scratch_dir(f"room-{number}-")
    client = build.notebook_client(nb, folder, startup_timeout=STARTUP_TIMEOUT_S)
    started = time.monotonic()
    try:
        await client.async_execute()
    except Exception as error:  # noqa: BLE001 - a room counts every way a run can fail
        return time.monotonic() - started, f"{type(error).__name__}: {str(error).strip().splitlines()[-1:]}", []
    return time.monotonic() - started, None, build.output_differences(stored, nb)


async def room(path: Path, learners: int) -> int:
    for name, value in build.NB_ENV.items():
        os.environ.setdefault(name, value)
    stored = nbformat.read(path, as_version=4)
    load = os.getloadavg()
    print(f"room: {path.name}, {learners} learner(s) at once, each in its own kernel; "
          f"{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB; "
          f"load average before {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    sampler = Sampler()
    sampling = asyncio.create_task(sampler.run())
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.monotonic()
    results = await asyncio.gather(*(learner(n, stored) for n in range(1, learners + 1)))
    wall = time.monotonic() - started
    sampling.cancel()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    itself = resource.getrusage(resource.RUSAGE_SELF)
    kernel_cpu = (children.ru_utime + children.ru_stime) - (children_before.ru_utime + children_before.ru_stime)
    driver_cpu = (itself.ru_utime + itself.ru_stime) - (self_before.ru_utime + self_before.ru_stime)

    times = sorted(seconds for seconds, _, _ in results)
    failures = [(n, error) for n, (_, error, _) in enumerate(results, start=1) if error]
    differing = [(n, diffs) for n, (_, _, diffs) in enumerate(results, start=1) if diffs]
    per_kernel = sorted(sampler.peak_per_kernel_mb.values())
    print(f"wall {wall:.1f} s | per run p50 {percentile(times, 50):.1f} s, p95 {percentile(times, 95):.1f} s, "
          f"max {times[-1]:.1f} s | failures {len(failures)} | runs whose outputs differ {len(differing)}")
    print(f"CPU {kernel_cpu / learners:.1f} s per run in its kernel (all kernels {kernel_cpu:.1f} s; "
          f"this driver {driver_cpu:.1f} s)")
    if per_kernel:
        print(f"memory: peak {sampler.peak_total_mb:.0f} MB for all kernels together; one kernel's peak: "
              f"median {statistics.median(per_kernel):.0f} MB, max {per_kernel[-1]:.0f} MB")
    load = os.getloadavg()
    print(f"load average after {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    for n, error in failures[:5]:
        print(f"  run {n} failed: {error}")
    for n, diffs in differing[:5]:
        print(f"  run {n} differs: {'; '.join(diffs[:3])}")
    return 1 if failures or differing else 0


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile of sorted ``values`` (nearest rank)."""
    rank = max(1, round(p / 100 * len(values)))
    return values[min(rank, len(values)) - 1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--learners", type=int, default=8, help="runs at once (default 8)")
    parser.add_argument("--chapter", default="03", help="chapter number, e.g. 00 or 03 (default 03)")
    parser.add_argument("--notebook", type=Path, help="a notebook to run instead of a chapter")
    args = parser.parse_args(argv)
    path = args.notebook or next(iter(sorted((REPO / "notebooks").glob(f"{args.chapter}_*.ipynb"))), None)
    if path is None or not path.is_file():
        parser.error(f"no notebook for chapter {args.chapter!r} in notebooks/")
    if args.learners < 1:
        parser.error("--learners must be at least 1")
    return asyncio.run(room(path, args.learners))


if __name__ == "__main__":
    sys.exit(main())
