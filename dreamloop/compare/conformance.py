"""The recorded expectations of ``dreamloop compare`` for a pinned ``claude`` version, and the check against them.

``conformance/claude-code-<version>.json`` (in the repository) holds, for each
scenario, what each side did as *outcome lines* (``outcome``: one line per
request, then the ending, shapes only), whether they MATCH, what differs, and
for a deliberate difference its ``reason`` and the ``chapter`` that tells the
learner. ``check`` compares a new comparison with it: an outcome of either side
that changed is an *unexpected change* (the check fails); a side that did not
run (Claude Code not installed) is not checked. ``record`` writes a new file,
keeping each scenario's ``deliberate`` label. The file format::

    {"claude_code": "2.1.332", "scenarios": {NAME: {
        "claude_code": [LINE, ...], "dreamloop": [LINE, ...],
        "match": true, "differences": [...],
        "deliberate": {"reason": "...", "chapter": "08_recovery"} | null,
        "claude_code_context": N}}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .shapes import RequestShape, SideRun, counted_lines

__all__ = ["Comparison", "Expectations", "check", "load_expectations", "outcome", "record"]


@dataclass
class Comparison:
    """One scenario compared: its ``name``, each side's run (``claude_code`` None when it did not run),
    ``differences`` (empty: MATCH; None when only one side ran), ``order_free``."""

    name: str
    claude_code: SideRun | None
    dreamloop: SideRun
    differences: list[str] | None
    order_free: bool = False

    @property
    def verdict(self) -> str:
        """``MATCH``, ``DIFFER`` or ``dreamloop only``."""
        if self.differences is None:
            return "dreamloop only"
        return "DIFFER" if self.differences else "MATCH"


Expectations = dict[str, Any]
"""The parsed expectations file (see the module's docstring)."""


def outcome(run: SideRun, *, order_free: bool = False) -> list[str]:
    """A side's run as the lines the check compares: ``probe: N skipped`` when there were probes, one
    per request (what the MATCH rule looks at), ``NAME: N lines`` for each file the scenario counts, then
    ``ending: REASON``. ``order_free``: each request's tool_result ids sorted."""
    probes = [f"probe: {run.probes} skipped"] if run.probes else []
    counted = [f"{name}: {counted_lines(lines)}" for name, lines in sorted(run.counted.items())]
    return probes + [_request_line(r, order_free) for r in run.requests] + counted + [f"ending: {run.ending.reason}"]


def _request_line(shape: RequestShape, order_free: bool) -> str:
    results = sorted(shape.tool_results) if order_free else list(shape.tool_results)
    status = f"{shape.status}" + (f"/{shape.error}" if shape.error else "")
    added = " ".join(str(a) for a in shape.added) or "nothing"
    line = (f"{status} {'stream' if shape.streamed else 'no-stream'} max_tokens({shape.max_tokens_change}) "
            f"{shape.model} +{added}")
    if results:
        line += " results[" + " ".join(f"{i}{':error' if e else ''}" for i, e in results) + "]"
    return line


def load_expectations(path: Path) -> Expectations:
    """The expectations file at ``path``; ``ValueError`` naming the file when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot be read ({error})") from None
    except ValueError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), dict):
        raise ValueError(f"{path}: not an expectations file (a mapping with `claude_code` and `scenarios`)")
    return data


def check(expected: Expectations, comparisons: Iterable[Comparison]) -> list[str]:
    """Unexpected changes of ``comparisons`` against ``expected``, one line each (empty: as recorded).

    A scenario not in the file is a change (record it); the ``claude_code`` side is
    checked only where it ran, and only against the version the file is for."""
    changes: list[str] = []
    version = expected.get("claude_code")
    for comparison in comparisons:
        recorded = expected["scenarios"].get(comparison.name)
        if recorded is None:
            changes.append(f"{comparison.name}: not in the expectations (re-record with --record)")
            continue
        sides = [("dreamloop", comparison.dreamloop)]
        if comparison.claude_code is not None and comparison.claude_code.version == version:
            sides.append(("claude_code", comparison.claude_code))
        for key, run in sides:
            now = outcome(run, order_free=comparison.order_free)
            was = recorded.get(key, [])
            if now != was:
                changes.append(f"{comparison.name}: {key.replace('_', ' ')} changed: {_first_change(was, now)}")
    return changes


def _first_change(was: list[str], now: list[str]) -> str:
    for number, (a, b) in enumerate(zip(was, now), start=1):
        if a != b:
            return f"line {number}: was {a!r}, now {b!r}"
    if len(was) != len(now):
        return f"{len(was)} lines were recorded, {len(now)} now"
    return "no difference"


def record(path: Path, comparisons: Iterable[Comparison], version: str) -> Expectations:
    """Write the expectations for ``version`` to ``path`` from ``comparisons`` (each must have both
    sides), keeping the ``deliberate`` labels of a file already there; returns what was written."""
    previous: dict[str, Any] = {}
    if Path(path).is_file():
        previous = load_expectations(path)["scenarios"]
    scenarios: dict[str, Any] = {}
    for comparison in comparisons:
        if comparison.claude_code is None or comparison.differences is None:
            raise ValueError(f"{comparison.name}: recording needs Claude Code's side too")
        label = previous.get(comparison.name, {}).get("deliberate")
        scenarios[comparison.name] = {
            "claude_code": outcome(comparison.claude_code, order_free=comparison.order_free),
            "dreamloop": outcome(comparison.dreamloop, order_free=comparison.order_free),
            "match": not comparison.differences,
            "differences": comparison.differences,
            "deliberate": label if comparison.differences else None,
            "claude_code_context": comparison.claude_code.requests[0].context if comparison.claude_code.requests else 0,
            "claude_code_turns": comparison.claude_code.ending.turns,
            "dreamloop_turns": comparison.dreamloop.ending.turns,
        }
    data = {"claude_code": version,
            "about": "What Claude Code and dreamloop did on each scenario of `dreamloop compare`, as shapes "
                     "(no text of Anthropic's). Checked by `make conformance`; re-recorded with "
                     "`dreamloop compare --record FILE`.",
            "scenarios": scenarios}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data
