"""The recorded expectations of ``dreamloop compare`` for a pinned ``claude`` version, and the check against them.

``conformance/claude-code-<version>.json`` (in the repository) holds, for each
scenario, what each side did as *outcome lines* (``outcome``: one line per
request, the scenario's own texts and where they arrived, what became of the
workspace, then the ending; shapes only), whether they MATCH, what differs, and
for a deliberate difference its ``reason`` and the ``chapter`` that tells the
learner. ``check`` compares a new comparison with it: an outcome line of either
side that changed is an *unexpected change* (the check fails), whatever Claude
Code's version; a side that did not run (Claude Code not installed) is not
checked. ``record`` writes the file, keeping each scenario's ``deliberate``
label (and, for the same version, the scenarios not run this time). The file
format::

    {"claude_code": "2.1.332", "scenarios": {NAME: {
        "claude_code": [LINE, ...], "dreamloop": [LINE, ...],
        "match": true, "differences": [...],
        "deliberate": {"reason": "...", "chapter": "08_recovery"} | null,
        "claude_code_context": N, "claude_code_turns": N, "dreamloop_turns": N}}}

with lines such as::

    "200 stream max_tokens=32000 main +user[text]"
    "200 stream max_tokens=32000 main +assistant[text, tool_use] user[tool_result] results[toolu_fake_0001:error]
        inside[toolu_fake_0001 57#8a1f0c2e]"   (one line)
    "texts: 'config.py is frozen' request 3 result toolu_fake_0002"
    "workspace: unchanged"
    "ending: completed"
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .shapes import RequestShape, SideRun, counted_lines, workspace_line

__all__ = ["Comparison", "Expectations", "changed_lines", "check", "load_expectations", "outcome", "record"]


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
    per request, ``texts: ...`` when the scenario names texts of its own, ``workspace: ...`` when it was
    looked at, ``NAME: N lines`` for each file the scenario counts, then ``ending: REASON``. A request's line::

        200 stream max_tokens=32000 main +assistant[text, tool_use] user[tool_result] results[toolu_fake_0001]
            inside[toolu_fake_0001 57#8a1f0c2e]

    (one line): status (``/error_type`` when an error was sent), streamed or not, the absolute ``max_tokens``,
    the model's role, the messages added, the tool_result ids (``:error`` for ``is_error``), and the
    reminders inside those results as ``length#hash`` (``shapes.reminder_digest``) after the id they were in.
    ``order_free``: ids sorted, and the reminders listed without ids (which result is last depends on timing).

    A sub-agent's requests (``Scenario.children``) follow the run's own, each line opening with the sub-agent's key
    (``CHILDTASK: 200 stream ...``), and two lines follow them: ``tools: main 7 with Agent, CHILDTASK 6`` (the tools
    each conversation's first request offered) and ``context: main 1, CHILDTASK 1`` (its leading reminders)."""
    probes = [f"probe: {run.probes} skipped"] if run.probes else []
    conversations = _conversation_lines(run)
    texts = ["texts: " + "; ".join(f"{said!r} {where}" for said, where in run.arrivals())] if run.markers else []
    workspace = [f"workspace: {workspace_line(run.workspace)}"] if run.workspace is not None else []
    counted = [f"{name}: {counted_lines(lines)}" for name, lines in sorted(run.counted.items())]
    return (probes + [_request_line(r, order_free) for r in run.requests] + conversations + texts + workspace
            + counted + [f"ending: {run.ending.reason}"])


def _conversation_lines(run: SideRun) -> list[str]:
    """With a sub-agent's requests among the run's: how many tools each conversation's first request offered
    (and whether ``Agent`` was one) and how many leading reminders it opened with (its context). Recorded, not
    part of the MATCH rule (the tool sets and the context are each side's own)."""
    firsts: dict[str, RequestShape] = {}
    for shape in run.requests:
        firsts.setdefault(shape.conversation, shape)
    if len(firsts) < 2 and "" in firsts:
        return []
    names = {key: key or "main" for key in firsts}
    tools = ", ".join(f"{names[k]} {s.tools}{' with Agent' if s.offers_agent else ''}" for k, s in firsts.items())
    context = ", ".join(f"{names[k]} {s.context}" for k, s in firsts.items())
    return [f"tools: {tools}", f"context: {context}"]


def _request_line(shape: RequestShape, order_free: bool) -> str:
    results = sorted(shape.tool_results) if order_free else list(shape.tool_results)
    status = (f"{shape.conversation}: " if shape.conversation else "") + f"{shape.status}" + (
        f"/{shape.error}" if shape.error else "")
    added = " ".join(str(a) for a in shape.added) or "nothing"
    line = (f"{status} {'stream' if shape.streamed else 'no-stream'} max_tokens={shape.max_tokens} "
            f"{shape.model} +{added}")
    if results:
        line += " results[" + " ".join(f"{i}{':error' if e else ''}" for i, e in results) + "]"
    if shape.result_reminders:
        if order_free:
            line += " inside[" + " ".join(sorted(f"{n}#{h}" for _, n, h in shape.result_reminders)) + "]"
        else:
            line += " inside[" + ", ".join(f"{i} {n}#{h}" for i, n, h in shape.result_reminders) + "]"
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
    """Unexpected changes of ``comparisons`` against ``expected``, one line per changed outcome line (empty:
    as recorded): ``NAME: dreamloop changed: line 2: was '...', now '...'``.

    A scenario not in the file is a change (record it). Both sides are checked wherever they ran, whatever
    the installed version (dreamloop's choice, so an upgrade never passes silently): a run of another version
    than the file's reports each line of its side that changed as a change since the file's version
    (``NAME: claude code changed since 2.1.332 (now 2.1.333): ...``). A side that did not run (no ``claude``
    binary) is not checked."""
    changes: list[str] = []
    version = expected.get("claude_code")
    for comparison in comparisons:
        recorded = expected["scenarios"].get(comparison.name)
        if recorded is None:
            changes.append(f"{comparison.name}: not in the expectations (re-record with --record)")
            continue
        sides = [("dreamloop", comparison.dreamloop)]
        if comparison.claude_code is not None:
            sides.append(("claude_code", comparison.claude_code))
        for key, run in sides:
            now = outcome(run, order_free=comparison.order_free)
            was = recorded.get(key, [])
            since = f" since {version} (now {run.version})" if key == "claude_code" and run.version != version else ""
            changes.extend(f"{comparison.name}: {key.replace('_', ' ')} changed{since}: {line}"
                           for line in changed_lines(was, now))
    return changes


def changed_lines(was: list[str], now: list[str]) -> list[str]:
    """Each outcome line that changed, was added or went away, numbered as recorded (``difflib``'s
    matching, so a request added in the middle is one change, not every line after it)."""
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, was, now, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            old = was[i1 + k] if i1 + k < i2 else None
            new = now[j1 + k] if j1 + k < j2 else None
            if old is not None and new is not None:
                out.append(f"line {i1 + k + 1}: was {old!r}, now {new!r}")
            elif old is not None:
                out.append(f"line {i1 + k + 1}: was {old!r}, now gone")
            else:
                out.append(f"new line after line {i2}: {new!r}")
    return out


def record(path: Path, comparisons: Iterable[Comparison], version: str) -> Expectations:
    """Write the expectations for ``version`` to ``path`` from ``comparisons`` (each must have both
    sides), keeping the ``deliberate`` labels of a file already there; returns what was written. When that
    file is for the same version, its scenarios that were not run this time and are still in the library are
    kept as they were (a scenario added or changed can be recorded alone); the scenarios are written in the
    library's order."""
    from .scenarios import SCENARIOS

    previous: dict[str, Any] = {}
    kept: dict[str, Any] = {}
    if Path(path).is_file():
        old = load_expectations(path)
        previous = old["scenarios"]
        if old.get("claude_code") == version:
            kept = {name: row for name, row in previous.items() if any(each.name == name for each in SCENARIOS)}
    scenarios: dict[str, Any] = kept
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
    order = {each.name: number for number, each in enumerate(SCENARIOS)}
    scenarios = dict(sorted(scenarios.items(), key=lambda item: order.get(item[0], len(order))))
    data = {"claude_code": version,
            "about": "What Claude Code and dreamloop did on each scenario of `dreamloop compare`, as shapes "
                     "(no text of Anthropic's). Checked by `make conformance`; re-recorded with "
                     "`dreamloop compare --record FILE`.",
            "scenarios": scenarios}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data
