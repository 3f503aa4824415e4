"""Tests that read what `make conformance` left: `DREAMLOOP_CONFORMANCE_RUNS` names the folder of kept runs
(`runs/<scenario>/<side>/...`); without it (as in `make test`) these tests are skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def conformance_runs() -> Path:
    where = os.environ.get("DREAMLOOP_CONFORMANCE_RUNS")
    if not where or not Path(where).is_dir():
        pytest.skip("no conformance runs here (make conformance sets DREAMLOOP_CONFORMANCE_RUNS)")
    return Path(where)


@pytest.fixture(scope="session")
def claude_code_sessions(conformance_runs: Path) -> dict[str, Path]:
    """Scenario name -> the session file Claude Code wrote in that run (skipped when Claude Code did not run)."""
    found = {run.parent.name: next(iter(sorted((run / "home" / ".claude" / "projects").glob("*/*.jsonl"))), None)
             for run in conformance_runs.glob("*/claude-code")}
    found = {name: path for name, path in found.items() if path is not None}
    if not found:
        pytest.skip("Claude Code did not run (not installed): no session files")
    return found
