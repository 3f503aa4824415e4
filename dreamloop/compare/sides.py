"""Running one scenario on one side: ``claude -p`` or ``dreamloop run --live``.

Each run gets its own fresh offline API server (``serve``, loopback only) with
the scenario's script, its own temporary folder (``workspace/`` with the
scenario's files, ``home/`` as ``HOME``, ``scratch/`` for hooks and the
settings file) and its own process group, killed whole when the run outlives
``timeout`` seconds. Every request the side sent is in the server's log,
rejected ones included, and becomes shapes (``shapes.request_shapes``).

Claude Code gets what the issue that built this names: ``ANTHROPIC_BASE_URL``,
a placeholder ``ANTHROPIC_API_KEY``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``,
a fresh ``HOME``, ``CLAUDE_CODE_MAX_RETRIES=2`` (three attempts, as the
``anthropic`` SDK's default that dreamloop keeps; without it 2.1.332 retries a
529 ten times with back-off) and ``claude -p PROMPT --output-format
stream-json --verbose --permission-mode acceptEdits --model M``. dreamloop
gets ``dreamloop run PROMPT --live --json --model M --permission-mode
accept-edits`` (``bypass`` when the scenario allows Bash). Neither side is
given the real key, and no request leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamloop.fake_api import serve

from .scenarios import Scenario
from .shapes import Ending, SideRun, request_shapes

__all__ = ["CLAUDE_CODE_VERSION", "PLACEHOLDER_KEY", "SideFiles", "claude_code_version", "expectations_name",
           "find_claude", "run_claude_code", "run_dreamloop", "workspace_changes"]

CLAUDE_CODE_VERSION = "2.1.332"
"""The pinned Claude Code version, in this one place: the version ``make conformance`` installs (the Makefile
reads it from this line) and whose recorded files it checks against (``expectations_name``)."""


def expectations_name(version: str = CLAUDE_CODE_VERSION, kind: str = "") -> str:
    """The file name of a version's recorded expectations (``claude-code-2.1.332.json``), or with ``kind``
    ``"requests"`` of its request anatomies (``claude-code-2.1.332.requests.json``), under ``conformance/``."""
    return f"claude-code-{version}{'.' + kind if kind else ''}.json"
PLACEHOLDER_KEY = "sk-ant-placeholder-not-a-key"
DEFAULT_TIMEOUT = 90.0
"""Seconds one side's run of one scenario may take before its process group is killed."""
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


@dataclass(frozen=True)
class SideFiles:
    """Where a run's files are: ``root`` (kept only when asked), ``workspace``, ``home``, ``output``
    (the side's stdout: stream-json lines or ``--json``), ``session`` (the session file ``claude -p``
    wrote under ``home``, if any)."""

    root: Path
    workspace: Path
    home: Path
    output: Path
    session: Path | None


def find_claude(given: str | None = None) -> str | None:
    """The ``claude`` executable to run: ``given``, else ``$DREAMLOOP_CLAUDE``, else the copy
    ``make conformance`` installs (``.claude-code/node_modules/.bin/claude`` under the current
    directory), else ``claude`` on ``PATH``; None when there is none."""
    for candidate in (given, os.environ.get("DREAMLOOP_CLAUDE"),
                      str(Path.cwd() / ".claude-code" / "node_modules" / ".bin" / "claude")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    if given:
        return None
    return shutil.which("claude")


def claude_code_version(claude: str) -> str:
    """``claude --version``'s number (``2.1.332``), or ``unknown``."""
    try:
        out = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=30,
                             env=_base_env(Path(tempfile.gettempdir())), stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.split()[0] if out.split() else "unknown"


def run_claude_code(scenario: Scenario, claude: str, *, version: str | None = None,
                    timeout: float = DEFAULT_TIMEOUT, keep: Path | None = None,
                    log: list[Any] | None = None) -> tuple[SideRun, SideFiles]:
    """Run ``scenario`` through ``claude`` (the path given, ``--claude PATH``) against a fresh offline API;
    its ``SideRun`` and files. ``keep``: a folder to keep the run's files in (else they are removed, except what
    ``SideFiles`` names is gone). ``log``: a list that receives the offline API's ``ReceivedRequest``s
    (the bodies as sent, Anthropic's text included: show them, never store them). Never raises for what
    the run does; a timeout is an ending."""
    with _run_folder(scenario, "claude-code", keep) as (files, settings):
        args = [claude, "-p", scenario.prompt, "--output-format", "stream-json", "--verbose",
                "--permission-mode", "acceptEdits", *_shared_flags(scenario, settings)]
        if scenario.allow:
            args += ["--allowedTools", ",".join(scenario.allow)]
        env = {**_base_env(files.home), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "CLAUDE_CODE_MAX_RETRIES": "2", "DISABLE_AUTOUPDATER": "1", **scenario.env}
        if scenario.thinking_budget:
            env["MAX_THINKING_TOKENS"] = str(scenario.thinking_budget)
        side, files = _run(scenario, "claude-code", version or claude_code_version(claude), args, env, files,
                           timeout, log)
        _read_claude_output(side, files.output)
        sessions = sorted((files.home / ".claude" / "projects").glob("*/*.jsonl"))
        files = SideFiles(files.root, files.workspace, files.home, files.output, sessions[0] if sessions else None)
        return side, files


def run_dreamloop(scenario: Scenario, *, timeout: float = DEFAULT_TIMEOUT,
                  keep: Path | None = None, log: list[Any] | None = None) -> tuple[SideRun, SideFiles]:
    """Run ``scenario`` through ``dreamloop run --live`` (this interpreter's dreamloop) against a fresh
    offline API; its ``SideRun`` and files (``log``: as ``run_claude_code``'s). Never raises for what
    the run does."""
    from dreamloop import __version__

    with _run_folder(scenario, "dreamloop", keep) as (files, settings):
        args = [sys.executable, "-m", "dreamloop", "run", scenario.prompt, "--live", "--json",
                "--workspace", str(files.workspace), "--permission-mode", "bypass" if scenario.allow else "accept-edits",
                *_shared_flags(scenario, settings)]
        if scenario.thinking_budget:
            args += ["--thinking-budget", str(scenario.thinking_budget)]
        env = {**_base_env(files.home), "NO_COLOR": "1", "PYTHONPATH": _package_root()}
        side, files = _run(scenario, "dreamloop", __version__, args, env, files, timeout, log)
        _read_dreamloop_output(side, files.output)
        return side, files


def _shared_flags(scenario: Scenario, settings: Path | None) -> list[str]:
    """The flags both commands spell alike: ``--model``, ``--fallback-model``, ``--max-turns``, ``--settings``."""
    flags = ["--model", scenario.model]
    if scenario.fallback_model:
        flags += ["--fallback-model", scenario.fallback_model]
    if scenario.max_turns is not None:
        flags += ["--max-turns", str(scenario.max_turns)]
    if settings is not None:
        flags += ["--settings", str(settings)]
    return flags


def _package_root() -> str:
    import dreamloop

    return str(Path(dreamloop.__file__).resolve().parent.parent)


def _base_env(home: Path) -> dict[str, str]:
    env = {name: os.environ[name] for name in _KEEP_ENV if name in os.environ}
    env.update(HOME=str(home), ANTHROPIC_API_KEY=PLACEHOLDER_KEY)
    return env


class _run_folder:
    """A run's folder: workspace with the scenario's files, home, scratch, the settings file."""

    def __init__(self, scenario: Scenario, side: str, keep: Path | None) -> None:
        self.scenario, self.side, self.keep = scenario, side, keep

    def __enter__(self) -> tuple[SideFiles, Path | None]:
        if self.keep is not None:
            self.root = self.keep.resolve() / self.scenario.name / self.side  # absolute: each side runs in its workspace
            shutil.rmtree(self.root, ignore_errors=True)
            self.root.mkdir(parents=True)
        else:
            self.root = Path(tempfile.mkdtemp(prefix=f"dreamloop-compare-{self.side}-"))
        workspace, home, scratch = (self.root / name for name in ("workspace", "home", "scratch"))
        for folder in (workspace, home, scratch):
            folder.mkdir()
        for name, content in self.scenario.files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)  # a file in a subfolder (pkg/CLAUDE.md)
            (workspace / name).write_text(content, encoding="utf-8")
        settings_data = self.scenario.settings(str(workspace), str(scratch))
        settings = None
        if settings_data is not None:
            settings = scratch / "settings.json"
            settings.write_text(json.dumps(settings_data, indent=2), encoding="utf-8")
        files = SideFiles(self.root, workspace, home, self.root / "output.jsonl", None)
        return files, settings

    def __exit__(self, *exc: object) -> None:
        if self.keep is None:
            shutil.rmtree(self.root, ignore_errors=True)


def _run(scenario: Scenario, side: str, version: str, args: list[str], env: dict[str, str], files: SideFiles,
         timeout: float, log: list[Any] | None = None) -> tuple[SideRun, SideFiles]:
    """Serve the script, run ``args`` in its own process group (killed whole at ``timeout``), shape
    the request log. The ending is filled in by the side's reader; here only a timeout is known."""
    started = time.monotonic()
    notes: list[str] = []
    with serve(scenario.script(str(files.workspace)), model=scenario.model) as server:
        env = {**env, "ANTHROPIC_BASE_URL": server.url}
        with open(files.output, "wb") as output:
            process = subprocess.Popen(args, cwd=files.workspace, env=env, stdin=subprocess.DEVNULL,
                                       stdout=output, stderr=subprocess.PIPE, start_new_session=True)
            try:
                _, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                _, stderr = process.communicate()
                notes.append(f"killed after {timeout:.0f} s")
        requests = list(server.api.requests)
    counted = {name: _lines(files.workspace / name) for name in scenario.counts}
    if log is not None:
        log.extend(requests)
    shapes, probes = request_shapes(requests, model=scenario.model, fallback_model=scenario.fallback_model,
                                    markers=scenario.markers, children=scenario.children)
    ending = Ending("timeout") if notes else Ending("no_result")
    tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    if process.returncode not in (0, None) and tail:
        notes.append("stderr: " + " | ".join(line[:200] for line in tail))
    run = SideRun(side=side, version=version, requests=shapes, ending=ending, probes=probes,
                  seconds=time.monotonic() - started, notes=notes, markers=scenario.markers,
                  workspace=workspace_changes(scenario, files.workspace), counted=counted)
    return run, files


def workspace_changes(scenario: Scenario, workspace: Path) -> tuple[str, ...]:
    """What became of the scenario's files once the run ended: ``config.py changed`` / ``config.py removed``
    for each that is not as the scenario wrote it, in the scenario's order (files a side added are not
    looked at: dreamloop's choice)."""
    out: list[str] = []
    for name, content in scenario.files.items():
        path = workspace / name
        try:
            now = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            out.append(f"{name} removed")
            continue
        except (OSError, UnicodeDecodeError):
            now = None
        if now != content:
            out.append(f"{name} changed")
    return tuple(out)


def _lines(path: Path) -> int:
    """How many lines ``path`` holds (-1: it is not there)."""
    try:
        return len(path.read_bytes().splitlines())
    except OSError:
        return -1


def _kill_group(process: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read_claude_output(side: SideRun, output: Path) -> None:
    """The ``result`` line's ``terminal_reason``, ``num_turns``, ``is_error``; ``api_retry`` lines counted."""
    for line in output.read_text(encoding="utf-8", errors="replace").split("\n"):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        if event.get("type") == "system" and event.get("subtype") == "api_retry":
            side.retries += 1
        elif event.get("type") == "result" and side.ending.reason != "timeout":
            side.ending = Ending(str(event.get("terminal_reason") or event.get("subtype") or "no_result"),
                                 event.get("num_turns"), event.get("is_error"))


def _read_dreamloop_output(side: SideRun, output: Path) -> None:
    """``--json``'s ``terminal``: its ``reason`` and ``turn_count``."""
    try:
        data = json.loads(output.read_text(encoding="utf-8", errors="replace"))
        terminal = data["terminal"]
    except (ValueError, KeyError, TypeError):
        return
    if side.ending.reason != "timeout":
        side.ending = Ending(str(terminal["reason"]), terminal.get("turn_count"), terminal["reason"] != "completed")
