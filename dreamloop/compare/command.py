"""``dreamloop compare``: the command line of the comparison.

    dreamloop compare [SCENARIO ...] [--claude PATH] [--json FILE] [--details] [--list]
                      [--check FILE] [--record FILE] [--keep DIR] [--jobs N] [--timeout S]

Each scenario runs through both loops (``sides.py``), each against its own
offline API server; one row per scenario says what each side sent and how it
ended, then ``MATCH`` or ``DIFFER`` with what differs. Without a ``claude``
binary (``--claude PATH``, or ``make conformance`` to install the pinned one) it
says how to get it and runs dreamloop's side alone. ``--check FILE`` compares
both sides with the file whatever the installed version: it says which
versions it compared, and a line of Claude Code's side that changed under
another version is reported as a change since the file's. Exit status: 0; 1
when ``--check`` finds an unexpected change; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from .conformance import Comparison, check, load_expectations, record
from .scenarios import SCENARIOS, Scenario, scenario
from .shapes import SideRun, counted_lines, differences, workspace_line
from .sides import CLAUDE_CODE_VERSION, DEFAULT_TIMEOUT, claude_code_version, find_claude, run_claude_code, \
    run_dreamloop

CHECK_TRIES = 3
"""How often ``--check`` runs a scenario whose outcome changed before it reports the change (dreamloop's choice:
a side that runs a real program can vary with timing, a retry's back-off racing a dropped connection, and only a
change that stays is one)."""

__all__ = ["CHECK_TRIES", "add_compare_arguments", "compare_main", "compare_scenarios", "run_compare"]

HOW_TO_GET = (f"Claude Code is not installed here: `make conformance` installs @anthropic-ai/claude-code@"
              f"{CLAUDE_CODE_VERSION} with npm into .claude-code/ (Anthropic's terms apply to it), or give "
              "--claude PATH; running dreamloop's side alone.")


def add_compare_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``dreamloop compare``."""
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="scenarios to run (default: all; --list)")
    parser.add_argument("--claude", metavar="PATH", help="the claude executable (default: $DREAMLOOP_CLAUDE, "
                        "./.claude-code/node_modules/.bin/claude, then claude on PATH)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every comparison here as data")
    parser.add_argument("--details", action="store_true", help="print each side's requests under its row")
    parser.add_argument("--list", action="store_true", help="print the scenarios, one a line, and stop")
    parser.add_argument("--check", type=Path, metavar="FILE",
                        help="compare the outcomes with recorded expectations; exit 1 on an unexpected change")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="write the outcomes as the expectations (needs Claude Code; keeps the labels)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep each run's files (workspace, HOME with Claude Code's session file, output)")
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="scenarios run at once (default: 2)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"seconds a side may take on one scenario (default: {DEFAULT_TIMEOUT:.0f})")
    return parser


def compare_main(argv: Sequence[str] | None = None) -> int:
    """``dreamloop compare`` as a function (tests and ``python -m``); returns the exit status."""
    parser = add_compare_arguments(argparse.ArgumentParser(prog="dreamloop compare", description=__doc__))
    return run_compare(parser.parse_args(argv), parser)


def compare_scenarios(chosen: Sequence[Scenario], *, claude: str | None, version: str | None = None,
                      jobs: int = 2, timeout: float = DEFAULT_TIMEOUT, keep: Path | None = None,
                      on_done=None) -> list[Comparison]:
    """Run each scenario on both sides (dreamloop's only when ``claude`` is None), ``jobs`` at a time;
    the comparisons in the order given. ``on_done(comparison)`` is called as each one ends."""
    version = version or (claude_code_version(claude) if claude else None)

    def one(each: Scenario) -> Comparison:
        theirs = run_claude_code(each, claude, version=version, timeout=timeout, keep=keep)[0] if claude else None
        ours = run_dreamloop(each, timeout=timeout, keep=keep)[0]
        found = differences(theirs, ours, order_free=each.order_free) if theirs is not None else None
        comparison = Comparison(each.name, theirs, ours, found, each.order_free)
        if on_done is not None:
            on_done(comparison)
        return comparison

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, chosen))


def run_compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Check the arguments (a problem: ``parser.error``), run, print the table; the exit status."""
    if args.list:
        for each in SCENARIOS:
            print(f"{each.name:32} {each.about}")
        return 0
    try:
        chosen = [scenario(name) for name in args.scenarios] if args.scenarios else list(SCENARIOS)
        expected = load_expectations(args.check) if args.check else None
    except (KeyError, ValueError) as error:
        parser.error(str(error).strip("'\""))
    if args.jobs < 1 or args.timeout <= 0:
        parser.error("--jobs must be 1 or more and --timeout above 0")
    claude = find_claude(args.claude)
    if args.claude and claude is None:
        parser.error(f"--claude {args.claude}: no such executable")
    if claude is None:
        if args.record:
            parser.error("--record needs Claude Code; " + HOW_TO_GET)
        print(HOW_TO_GET, flush=True)
    version = claude_code_version(claude) if claude else None
    if claude:
        print(f"Claude Code {version} ({claude}) and dreamloop, {len(chosen)} scenario(s), {args.jobs} at a time",
              flush=True)
    started = time.monotonic()
    comparisons = compare_scenarios(chosen, claude=claude, version=version, jobs=args.jobs, timeout=args.timeout,
                                    keep=args.keep, on_done=lambda c: _print_row(c, args.details))
    matched = sum(1 for c in comparisons if c.verdict == "MATCH")
    both = sum(1 for c in comparisons if c.differences is not None)
    print(f"{matched} of {both} MATCH" if both else f"{len(comparisons)} scenario(s), dreamloop's side only",
          f"({time.monotonic() - started:.0f} s)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(_as_data(comparisons, version), indent=1) + "\n", encoding="utf-8")
    status = 0
    if expected is not None:
        recorded = expected.get("claude_code")
        if claude and version != recorded:
            print(f"Claude Code {version} is not the version {args.check} was recorded with ({recorded}): "
                  f"each line of its side that changed is reported as a change since {recorded}", flush=True)
        changes = check(expected, comparisons)
        for _ in range(CHECK_TRIES - 1):  # a timing-dependent run is asked again before it is called a change
            changed = {line.split(":", 1)[0] for line in changes}
            if not changed:
                break
            print(f"running again (timing can move a run): {', '.join(sorted(changed))}", flush=True)
            again = compare_scenarios([c for c in chosen if c.name in changed], claude=claude, version=version,
                                      jobs=args.jobs, timeout=args.timeout, keep=args.keep)
            comparisons = [next((a for a in again if a.name == c.name), c) for c in comparisons]
            changes = check(expected, again)
        for line in changes:
            print(f"UNEXPECTED {_visible(line)}")
        unlabelled = [c.name for c in comparisons if c.name in expected["scenarios"] and
                      not expected["scenarios"][c.name].get("match") and
                      not expected["scenarios"][c.name].get("deliberate")]
        compared = (f"Claude Code {version} and dreamloop against Claude Code {recorded}'s recording" if claude
                    else f"dreamloop alone against Claude Code {recorded}'s recording")
        print(f"check against {args.check} ({compared}): {len(changes)} unexpected change(s)"
              + (f"; {len(unlabelled)} recorded difference(s) not yet labelled deliberate" if unlabelled else ""))
        status = 1 if changes else 0
    if args.record:
        record(args.record, comparisons, version or "unknown")
        print(f"recorded {len(comparisons)} scenario(s) to {args.record}")
    return status


def _print_row(comparison: Comparison, details: bool) -> None:
    cells = [f"{comparison.name:32}"]
    if comparison.claude_code is not None:
        cells.append(f"claude-code {_side_cell(comparison.claude_code)}")
    cells.append(f"dreamloop {_side_cell(comparison.dreamloop)}")
    cells.append(comparison.verdict)
    print("  ".join(cells), flush=True)
    for line in comparison.differences or []:
        print(f"    - {line}")
    if details:
        for side in (comparison.claude_code, comparison.dreamloop):
            if side is None:
                continue
            print(f"    {side.side} {side.version}:" + (f" (probe skipped: {side.probes})" if side.probes else "")
                  + (f" ({side.retries} api_retry)" if side.retries else ""))
            for number, shape in enumerate(side.requests, start=1):
                print(f"      {number}. {shape.summary()}")
            if side.workspace is not None:
                print(f"      workspace: {workspace_line(side.workspace)}")
            for name, lines in sorted(side.counted.items()):
                print(f"      {name}: {counted_lines(lines)} when the run ended")
            for note in side.notes:
                print(f"      note: {_visible(note)}")
    sys.stdout.flush()


def _side_cell(run: SideRun) -> str:
    turns = run.ending.turns
    turns = "" if turns is None else f", {turns} turn{'' if turns == 1 else 's'}"
    probe = " +probe" if run.probes else ""
    return f"{len(run.requests)} req{probe} -> {run.ending.reason}{turns}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(text: str) -> str:
    """Control characters shown as ``\\xNN``: a child's stderr never drives the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _as_data(comparisons: list[Comparison], version: str | None) -> dict:
    return {"claude_code": version, "scenarios": [
        {"name": c.name, "verdict": c.verdict, "differences": c.differences, "order_free": c.order_free,
         "claude_code": c.claude_code.as_data() if c.claude_code else None, "dreamloop": c.dreamloop.as_data()}
        for c in comparisons]}
