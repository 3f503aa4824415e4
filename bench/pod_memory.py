"""A learner's pod under the chart config's memory limit, on this machine: every chapter, then all in one kernel.

    sudo .venv/bin/python bench/pod_memory.py                # the limit of deploy/z2jh/config.yaml (make pod-memory)
    sudo .venv/bin/python bench/pod_memory.py --limit 768M --chapters 03 06

On Kubernetes a learner's pod is a memory cgroup whose limit is the chart's
``singleuser.memory.limit``: the single-user server, every kernel it starts and
every command a kernel runs are charged to it, and past the limit the kernel's
OOM killer ends a process in it. This builds the same thing here: a memory
cgroup (v1 or v2, whichever the machine has; creating one needs root) with
that limit, a Jupyter server (``jupyter lab``, the server and extension the
image's ``jupyterhub-singleuser`` runs) started inside it on 127.0.0.1, and a
learner's copy of the book made as the image makes it (``deploy/z2jh/copy_book.py``).
Through the server's REST API and kernel websocket, as the browser does
(``tests/hub/check_hub.py``'s ``run_cells``), it runs:

0. the server alone, before any kernel;
1. each chapter in a fresh kernel, the kernel shut down after it (a learner
   going through the book, closing each notebook): the peak of each;
2. then every chapter one after the other in one kernel (a learner who never
   restarts it): the peak of all;
3. then each chapter in a kernel of its own, every kernel left running (a
   learner who closes no notebook, before the 20-minute kernel culling),
   until the OOM killer ends a process: how many kernels fit under the limit,
   and whether what it ended was a kernel or the server itself.

Peaks, in MB (2**20 bytes): the cgroup's own high-water mark of its usage
(page cache included: what the limit is compared with, though the kernel
reclaims cache before it kills anything), and, sampled every 0.2 s, the
working set (usage less inactive file cache: what Kubernetes reports and
evicts by) and anonymous memory (the processes' own). It counts the OOM kills
of phases 0-2 and, on cgroup v1, how often usage reached the limit. Last, the
control: a process that allocates 64 MiB more than the limit in the same
cgroup must be killed, or the limit was not in force. Exit status 1 if a
chapter failed, a process was OOM-killed in phases 0-2, or the control was
not killed. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import nbformat
import yaml

from dreamloop.scratch import scratch_dir

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "deploy" / "z2jh" / "config.yaml"
MB = 2**20


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_hub = _load("dreamloop_check_hub", REPO / "tests" / "hub" / "check_hub.py")
copy_book = _load("dreamloop_copy_book", REPO / "deploy" / "z2jh" / "copy_book.py")


def byte_size(value: str | int | float) -> int:
    """A chart memory figure in bytes, read as JupyterHub reads it (``512M``, ``1G``: powers of 1024; a bare number
    is bytes); ``ValueError`` naming the value otherwise."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)\s*", str(value))
    if not match:
        raise ValueError(f"{value!r} is not a memory size like 512M or 1G")
    return int(float(match.group(1)) * 1024 ** " KMGT".index(match.group(2) or " "))


class MemoryCgroup:
    """A memory cgroup made under this process's own, with a limit; removed by ``remove()``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        name = f"dreamloop-pod-{os.getpid()}"
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        v1 = next((line.split(":", 2)[2] for line in lines if line.split(":")[1] == "memory"), None)
        if v1 is not None and Path("/sys/fs/cgroup/memory").is_dir():
            self.version, self.path = 1, Path("/sys/fs/cgroup/memory") / v1.lstrip("/") / name
        else:
            own = next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))
            self.version, self.path = 2, Path("/sys/fs/cgroup") / own.lstrip("/") / name
        self.path.mkdir()
        try:
            self._write("memory.limit_in_bytes" if self.version == 1 else "memory.max", str(limit))
            if self.version == 1:
                self._write("memory.swappiness", "0")  # no swap: what a Kubernetes node is
            else:
                self._write("memory.swap.max", "0")
        except OSError:
            self.path.rmdir()
            raise

    def _read(self, name: str) -> str:
        return (self.path / name).read_text()

    def _write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)

    def wrap(self, command: list[str]) -> list[str]:
        """``command`` run inside the cgroup from its first instruction (memory is charged where it is first used)."""
        return ["sh", "-c", f'echo $$ > "{self.path}/cgroup.procs" && exec "$@"', "sh", *command]

    def usage(self) -> int:
        return int(self._read("memory.usage_in_bytes" if self.version == 1 else "memory.current"))

    def stat(self) -> dict[str, int]:
        return {key: int(value) for key, value in (line.split() for line in self._read("memory.stat").splitlines())}

    def working_set_and_anon(self) -> tuple[int, int]:
        """(usage less inactive file cache, anonymous memory), bytes."""
        stat = self.stat()
        if self.version == 1:
            return max(0, self.usage() - stat.get("total_inactive_file", 0)), stat.get("total_rss", 0)
        return max(0, self.usage() - stat.get("inactive_file", 0)), stat.get("anon", 0)

    def high_water(self) -> int | None:
        """The cgroup's own peak usage since the last ``reset_high_water`` (None where the kernel keeps none)."""
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        return int(self._read(name)) if (self.path / name).exists() else None

    def reset_high_water(self) -> None:
        try:
            self._write("memory.max_usage_in_bytes" if self.version == 1 else "memory.peak", "0")
        except OSError:  # cgroup v2 before Linux 6.12: memory.peak cannot be reset; sampled peaks still are
            pass

    def oom_kills(self) -> int:
        text = self._read("memory.oom_control" if self.version == 1 else "memory.events")
        return int(re.search(r"^oom_kill (\d+)", text, re.M).group(1))

    def limit_hits(self) -> int | None:
        return int(self._read("memory.failcnt")) if self.version == 1 else None

    def pids(self) -> list[int]:
        return [int(pid) for pid in self._read("cgroup.procs").split()]

    def remove(self) -> None:
        deadline = time.monotonic() + 30
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.path.rmdir()


@dataclass
class Peaks:
    """Sampled peaks (bytes) of a phase."""

    working_set: int = 0
    anon: int = 0

    def take(self, cgroup: MemoryCgroup) -> None:
        working_set, anon = cgroup.working_set_and_anon()
        self.working_set, self.anon = max(self.working_set, working_set), max(self.anon, anon)


@dataclass
class Phase:
    """One measured run: a chapter in a fresh kernel, or all chapters in one kernel."""

    name: str
    seconds: float = 0.0
    high_water: int | None = None
    peaks: Peaks = field(default_factory=Peaks)
    errors: list[str] = field(default_factory=list)
    differences: int = 0


class Server:
    """A Jupyter server inside ``cgroup``, serving ``home`` on a free port of 127.0.0.1."""

    def __init__(self, cgroup: MemoryCgroup, home: Path, environment: dict[str, str]) -> None:
        self.token = secrets.token_hex(16)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.headers = {"Authorization": f"token {self.token}"}
        command = [str(Path(sys.executable).with_name("jupyter-lab")), "--no-browser", "--ServerApp.ip=127.0.0.1",
                   f"--ServerApp.port={self.port}", f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={home}", *(["--allow-root"] if os.getuid() == 0 else [])]
        self.log = (home.parent / "server.log").open("w")
        self.process = subprocess.Popen(cgroup.wrap(command), cwd=home, env=environment, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    async def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(headers=self.headers) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the server exited with {self.process.returncode}; see {self.log.name}")
                try:
                    if (await client.get(f"{self.url}/api/status")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.3)
        raise TimeoutError(f"the server did not answer in {timeout:.0f} s; see {self.log.name}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.log.close()


async def sample(cgroup: MemoryCgroup, phases: list[Phase]) -> None:
    """Every 0.2 s, the cgroup's working set and anonymous memory into the phase running (the last one)."""
    while True:
        if phases:
            phases[-1].peaks.take(cgroup)
        await asyncio.sleep(0.2)


async def run_chapters(server: Server, cgroup: MemoryCgroup, notebooks: list[Path], home: Path,
                       phase: Phase) -> None:
    """``notebooks`` one after the other in one new kernel (its session on the first), then the kernel stopped."""
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=60) as api:
        made = await api.post("/api/sessions", json={"path": str(notebooks[0].relative_to(home)), "type": "notebook",
                                                     "name": notebooks[0].name, "kernel": {"name": "python3"}})
        made.raise_for_status()
        kernel_id, session_id = made.json()["kernel"]["id"], made.json()["id"]
        channels = f"{server.url.replace('http', 'ws', 1)}/api/kernels/{kernel_id}/channels"
        try:
            for path in notebooks:
                stored = nbformat.read(path, as_version=4)
                fresh, errors = await check_hub.run_cells(channels, "learner", server.headers, stored)
                phase.errors += [f"{path.stem}: {error}" for error in errors]
                phase.differences += len(check_hub.build.output_differences(stored, fresh))
        finally:
            (await api.delete(f"/api/sessions/{session_id}")).raise_for_status()
    phase.seconds = time.monotonic() - started
    phase.high_water = cgroup.high_water()


async def open_kernels(server: Server, cgroup: MemoryCgroup, chapters: list[Path], home: Path) -> tuple[int, int]:
    """Each chapter in a kernel of its own, every kernel left running, until the OOM killer ends one or all ran:
    (kernels running when it did, or all of them; the working set then, bytes)."""
    before, sessions = cgroup.oom_kills(), []
    working_set = 0
    async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=60) as api:
        try:
            for path in chapters:
                made = await api.post("/api/sessions", json={"path": str(path.relative_to(home)), "type": "notebook",
                                                             "name": path.name, "kernel": {"name": "python3"}})
                made.raise_for_status()
                sessions.append(made.json()["id"])
                channels = f"{server.url.replace('http', 'ws', 1)}/api/kernels/{made.json()['kernel']['id']}/channels"
                running = asyncio.create_task(check_hub.run_cells(channels, "learner", server.headers,
                                                                  nbformat.read(path, as_version=4)))
                while not running.done() and cgroup.oom_kills() == before:
                    await asyncio.wait([running], timeout=0.2)
                    working_set = max(working_set, cgroup.working_set_and_anon()[0])
                if cgroup.oom_kills() > before:
                    running.cancel()
                    return len(sessions), working_set
        finally:
            for session in sessions:
                try:
                    await api.delete(f"/api/sessions/{session}")
                except httpx.HTTPError:  # the server itself was what the OOM killer ended
                    break
    return len(sessions), working_set


@dataclass
class Outcome:
    """What the phases' counters said, and how far kernels left open went."""

    oom_kills: int
    limit_hits: int | None
    kernels_open: int
    kernels_open_working_set: int
    kernels_open_killed: bool
    server_survived: bool


async def measure(cgroup: MemoryCgroup, chapters: list[Path], home: Path, environment: dict[str, str],
                  phases: list[Phase]) -> Outcome:
    """The server alone, each chapter in a fresh kernel, all in one kernel (into ``phases``); then kernels left
    open (``open_kernels``)."""
    server = Server(cgroup, home, environment)
    sampling = asyncio.create_task(sample(cgroup, phases))
    try:
        await server.wait_ready()
        phases.append(Phase("the server alone, no kernel"))
        await asyncio.sleep(3)
        phases[-1].high_water = cgroup.high_water()
        print(line(phases[-1], cgroup.limit), flush=True)
        for path in chapters:
            await asyncio.sleep(1)  # the last kernel's memory given back before the next phase starts
            cgroup.reset_high_water()
            phases.append(Phase(path.stem))
            await run_chapters(server, cgroup, [path], home, phases[-1])
            print(line(phases[-1], cgroup.limit), flush=True)
        await asyncio.sleep(1)
        cgroup.reset_high_water()
        phases.append(Phase(f"all {len(chapters)} chapters in one kernel"))
        await run_chapters(server, cgroup, chapters, home, phases[-1])
        print(line(phases[-1], cgroup.limit), flush=True)
        sampling.cancel()
        kills, hits = cgroup.oom_kills(), cgroup.limit_hits()
        await asyncio.sleep(1)
        opened, working_set = await open_kernels(server, cgroup, chapters, home)
        return Outcome(kills, hits, opened, working_set, cgroup.oom_kills() > kills, server.process.poll() is None)
    finally:
        sampling.cancel()
        server.stop()


def line(phase: Phase, limit: int) -> str:
    high = f"{phase.high_water / MB:6.0f}" if phase.high_water is not None else "     -"
    outcome = "ok" if not phase.errors else f"FAILED: {phase.errors[0]}"
    return (f"  {phase.name:<36} {phase.seconds:6.1f} s | usage peak {high} MB, working set "
            f"{phase.peaks.working_set / MB:4.0f} MB "
            f"({100 * phase.peaks.working_set / limit:3.0f}% of the limit), anon {phase.peaks.anon / MB:4.0f} MB"
            f" | outputs that differ {phase.differences} | {outcome}")


def control(cgroup: MemoryCgroup) -> bool:
    """A process allocating 64 MiB past the limit inside the cgroup is killed (SIGKILL): the limit is in force."""
    before = cgroup.oom_kills()
    code = f"x = bytearray({cgroup.limit + 64 * MB}); x[::4096] = b'1' * len(x[::4096])"
    result = subprocess.run(cgroup.wrap([sys.executable, "-c", code]), capture_output=True, timeout=120)
    return result.returncode in (-9, 137) and cgroup.oom_kills() > before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", help=f"memory limit, e.g. 1G (default: singleuser.memory.limit of {CONFIG.name})")
    parser.add_argument("--chapters", nargs="*", default=None, help="chapter numbers, e.g. 03 06 (default: all)")
    args = parser.parse_args(argv)
    memory = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["singleuser"]["memory"]
    try:
        limit = byte_size(args.limit or memory["limit"])
    except ValueError as error:
        parser.error(str(error))

    scratch = scratch_dir("pod-memory-")
    home = scratch / "home"
    book = scratch / "book"
    copy_book.copy_missing(REPO, book, copy_book.book_files(REPO))                       # the image build
    copy_book.copy_missing(book, home / "dreamloop", copy_book.book_files(REPO))         # the postStart hook
    notebooks = sorted((home / "dreamloop" / "notebooks").glob("[0-9]*.ipynb"))
    if args.chapters:
        notebooks = [path for path in notebooks if path.name.split("_")[0] in args.chapters]
        if not notebooks:
            parser.error(f"no chapter {' '.join(args.chapters)} in notebooks/")
    environment = {**os.environ, **check_hub.build.NB_ENV, "HOME": str(home),
                   "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        cgroup = MemoryCgroup(limit)
    except OSError as error:
        print(f"pod-memory: cannot make a memory cgroup here ({error}); it needs root and a writable "
              "/sys/fs/cgroup. Nothing measured.", file=sys.stderr)
        return 1
    load = os.getloadavg()
    print(f"pod-memory: a Jupyter server and its kernels in a memory cgroup (v{cgroup.version}) limited to "
          f"{limit / MB:.0f} MB (guarantee in the config: {memory.get('guarantee')}); {len(notebooks)} chapter(s) "
          f"from a learner's copy of the book; {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f}", flush=True)
    phases: list[Phase] = []
    started = time.monotonic()
    try:
        outcome = asyncio.run(measure(cgroup, notebooks, home, environment, phases))
        enforced = control(cgroup)
    finally:
        cgroup.remove()
    shutil.rmtree(scratch, ignore_errors=True)

    singles = phases[1:-1]
    failed = [phase for phase in phases if phase.errors]
    if singles:
        heaviest = max(singles, key=lambda phase: phase.peaks.working_set)
        print(f"heaviest chapter: {heaviest.name}, working set {heaviest.peaks.working_set / MB:.0f} MB, usage peak "
              f"{(heaviest.high_water or 0) / MB:.0f} MB, of a {limit / MB:.0f} MB limit")
    if len(phases) >= 3:
        every = phases[-1]
        print(f"{every.name}: working set {every.peaks.working_set / MB:.0f} MB, usage peak "
              f"{(every.high_water or 0) / MB:.0f} MB, of a {limit / MB:.0f} MB limit")
    victim = "a kernel (the server lived on)" if outcome.server_survived else "the server itself"
    open_text = (f"{outcome.kernels_open - 1} fitted; while kernel {outcome.kernels_open} ran its chapter the OOM "
                 f"killer ended {victim}" if outcome.kernels_open_killed else f"all {outcome.kernels_open} fitted")
    print(f"kernels left open, a chapter each: {open_text} (working set up to "
          f"{outcome.kernels_open_working_set / MB:.0f} MB)")
    load = os.getloadavg()
    hits = "(not counted on cgroup v2)" if outcome.limit_hits is None else f"{outcome.limit_hits} time(s)"
    killed = "killed: the limit was in force" if enforced else "NOT killed: the limit was not in force"
    print(f"OOM kills while the chapters ran: {outcome.oom_kills}; usage reached the limit {hits}; control (64 MiB "
          f"past the limit) {killed}; {time.monotonic() - started:.0f} s; load average after {load[0]:.1f} "
          f"{load[1]:.1f} {load[2]:.1f}")
    return 1 if failed or outcome.oom_kills or not enforced else 0


if __name__ == "__main__":
    sys.exit(main())
