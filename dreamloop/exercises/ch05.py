"""Chapter 05: streaming tool execution and interrupts: the exercise checks."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from pydantic import BaseModel

from ..language import N_, tr
from ..messages import block_field
from ..tools import (
    USER_INTERRUPT,
    FunctionTool,
    StreamingToolExecutor,
    ToolUseContext,
    ready_to_start,
    tool_results_message,
)
from ._checking import (
    Verdict,
    _call,
    _Fail,
    _require_callable,
    _run,
    _short,
    _tool_use_blocks,
    _use,
    _verdict,
)
from .ch02 import _check_results_message

__all__ = ["SCENARIOS", "check_interrupt_results", "check_ordering_rule", "check_run_together"]

TICK_S = 0.1
"""How long one tick of a scenario lasts when the check plays it."""

SCENARIOS: dict[str, list[tuple[str, str, int, int]]] = {
    "A": [("a", "Read", 0, 4), ("b", "Read", 1, 4), ("c", "Read", 2, 4)],
    "B": [("a", "Read", 0, 2), ("b", "Read", 5, 2)],
    "C": [("a", "Read", 0, 4), ("b", "Edit", 1, 2), ("c", "Read", 2, 2)],
    "D": [("a", "Edit", 0, 3), ("b", "Read", 1, 3), ("c", "Read", 2, 3)],
}
"""Exercise 1's scenarios: per call (name, tool, the tick its block completes in the stream, ticks it runs).
Read is concurrency-safe, Edit is not."""


# ---------------------------------------------------------------------------
# Exercise 1: which calls run together


class _Job(BaseModel):
    name: str
    ticks: int


def _scenario_tools() -> list[FunctionTool]:
    async def run(input: _Job) -> str:
        await asyncio.sleep(input.ticks * TICK_S)
        return f"{input.name} done"

    return [FunctionTool(run, _Job, name="Read", read_only=True), FunctionTool(run, _Job, name="Edit")]


async def _play(calls: list[tuple[str, str, int, int]]) -> list[list[str]]:
    """Run a scenario through the package's StreamingToolExecutor; the groups of calls whose runs overlapped."""
    executor = StreamingToolExecutor(ToolUseContext(tools=_scenario_tools(), permission_mode="bypass"))
    names: dict[str, str] = {}

    async def arrive() -> None:
        clock = 0
        for n, (name, tool, at, ticks) in enumerate(calls, start=1):
            await asyncio.sleep((at - clock) * TICK_S)
            clock = at
            names[f"toolu_{n}"] = name
            executor.add_tool({"id": f"toolu_{n}", "name": tool, "input": {"name": name, "ticks": ticks}})

    arriving = asyncio.create_task(arrive())
    await asyncio.sleep(0)
    order: list[tuple[str, str]] = []  # (stage, name) in the order they happened
    while True:
        async for update in executor.get_remaining_results():
            if update.type == "progress":
                order.append((update.data["stage"], names[update.tool_use_id]))
        if arriving.done() and len({name for stage, name in order if stage == "done"}) == len(calls):
            break
        await asyncio.sleep(TICK_S / 4)  # more calls are still to arrive
    await arriving
    return _overlapping(order)


def _overlapping(order: list[tuple[str, str]]) -> list[list[str]]:
    """Group calls whose runs overlapped (chains of overlaps join), in the order the groups started."""
    groups: list[list[str]] = []
    running: set[str] = set()
    for stage, name in order:
        if stage == "started":
            if not running:
                groups.append([])
            groups[-1].append(name)
            running.add(name)
        elif stage == "done":
            running.discard(name)
    return groups


def _normalised(groups: Any, names: list[str], scenario: str, hint: str) -> list[list[str]]:
    if groups is None:
        raise _Fail(tr("scenario {scenario} has no prediction yet: the exercise is not done yet.", scenario=scenario),
                    hint)
    try:
        out = [sorted(str(name) for name in group) for group in groups]
    except TypeError:
        raise _Fail(tr("scenario {scenario}: {value} is not a list of groups (lists of names).", scenario=scenario,
                       value=_short(repr(groups), 80)), hint) from None
    flat = sorted(name for group in out for name in group)
    if flat != sorted(names):
        raise _Fail(tr("scenario {scenario}: your groups name {got}; every call of the scenario ({calls}) belongs to "
                       "exactly one group.", scenario=scenario, got=flat, calls=", ".join(sorted(names))), hint)
    return out


def check_run_together(prediction: Any) -> Verdict:
    """Check a prediction of which calls run at the same time, with streaming tool execution on.

    ``prediction`` maps each scenario of ``SCENARIOS`` ("A" ... "D") to its groups: a list of lists of call
    names, one group per set of calls whose runs overlap (a call that runs alone is a group of one), in the
    order the groups start. The check plays each scenario through ``StreamingToolExecutor``.
    """
    hint = tr('for each scenario, write a list of groups of call names, like [["x", "y"], ["z"]]: calls that run at '
              "the same time share a group. Draw each call on a line of ticks: it may start when its block is "
              "complete (its tick), if the ordering rule lets it.")

    def body() -> str:
        if not isinstance(prediction, dict):
            raise _Fail(tr('expected a dict of scenarios ("A" ... "D"), got {kind}.', kind=type(prediction).__name__),
                        hint)
        predicted = {}
        for scenario, calls in SCENARIOS.items():
            predicted[scenario] = _normalised(prediction.get(scenario), [c[0] for c in calls], scenario, hint)
        for scenario, calls in SCENARIOS.items():
            played = _run(lambda: _play(calls))
            want = [sorted(group) for group in played]
            if predicted[scenario] != want:
                what = _rule_hint(scenario)
                raise _Fail(tr("scenario {scenario}: you predicted {got}, but the executor did not run these calls "
                               "that way.", scenario=scenario, got=predicted[scenario]), what)
        return tr("{count} scenarios, the same groups as StreamingToolExecutor ran.", count=len(SCENARIOS))

    return _verdict(tr("which calls run together"), body)


def _rule_hint(scenario: str) -> str:
    return tr({
        "A": N_("three reads that arrive while the others still run: safe calls start at once beside safe calls."),
        "B": N_("a call that finished before the next one arrived did not run beside it, even in the same batch."),
        "C": N_("a non-safe call (Edit) waits for the calls before it and holds back the calls after it."),
        "D": N_("nothing starts beside a running non-safe call; the reads that waited for it start together."),
    }[scenario])


# ---------------------------------------------------------------------------
# Exercise 2: the ordering rule


_RULE_CASES: list[list[tuple[bool, str]]] = [
    [(True, "queued"), (True, "queued"), (False, "queued"), (True, "queued")],
    [(False, "queued"), (True, "queued"), (True, "queued")],
    [(True, "running"), (True, "queued")],
    [(True, "running"), (False, "queued"), (True, "queued")],
    [(False, "running"), (True, "queued"), (True, "queued")],
    [(False, "done"), (True, "queued"), (True, "queued"), (False, "queued")],
    [(True, "done"), (False, "queued"), (False, "queued")],
    [(True, "done"), (True, "running"), (True, "queued"), (False, "queued"), (True, "queued")],
    [(False, "done"), (False, "done"), (True, "done")],
    [],
]


def _rule_cases() -> list[list[tuple[bool, str]]]:
    generator = random.Random(5)  # fixed: the same cases every time
    made = []
    for _ in range(40):
        size = generator.randint(1, 6)
        done = generator.randint(0, size)
        running = generator.randint(0, size - done)
        statuses = ["done"] * done + ["running"] * running + ["queued"] * (size - done - running)
        made.append([(generator.random() < 0.6, status) for status in statuses])
    return _RULE_CASES + made


def check_ordering_rule(fn: Any) -> Verdict:
    """Check ``fn(calls) -> names``: which queued calls may start now, compared with ``ready_to_start``.

    ``calls``: the calls of one response in call order, each ``{"name", "safe", "status"}`` (status
    ``"queued"``, ``"running"`` or ``"done"``); the answer lists the names of the queued calls to start now.
    """
    todo = tr("return the names of the queued calls that may start now, walking the calls in order and applying "
              "the two halves of the ordering rule.")

    def body() -> str:
        _require_callable(fn, "ready")
        cases = _rule_cases()
        for case in cases:
            calls = [{"name": "abcdefgh"[i], "safe": safe, "status": status} for i, (safe, status) in enumerate(case)]
            want = ["abcdefgh"[i] for i in ready_to_start(case)]
            got = _run(lambda: _call("ready(calls)", fn, [dict(c) for c in calls], hint=todo, todo=todo))
            if not isinstance(got, (list, tuple)) or list(got) != want:
                shown = ", ".join(f"{c['name']} {tr('safe') if c['safe'] else tr('not safe')} {c['status']}"
                                  for c in calls)
                raise _Fail(tr("for [{calls}] you start {got}, not what the rule starts.", calls=shown,
                               got=_short(got, 60)),
                            _rule_idea(case, got if isinstance(got, (list, tuple)) else [], want))
        return tr("{count} situations, the same calls started as the package's ready_to_start.", count=len(cases))

    return _verdict(tr("the ordering rule"), body)


def _rule_idea(case: list[tuple[bool, str]], got: Any, want: list[str]) -> str:
    """The half of the rule a wrong answer missed."""
    safe = {"abcdefgh"[i]: s for i, (s, _) in enumerate(case)}
    extra = [n for n in got if n in safe and n not in want]
    if any(not safe[n] for n in extra):
        return tr("a non-safe call never starts beside another call, whether it was running already or you just "
                  "started it: a call you start counts as running for the calls after it.")
    if extra:
        return tr("a non-safe call that must wait holds back every call after it, even safe ones: the order of "
                  "the calls is kept.")
    return tr("a queued safe call starts at once beside other safe calls; only a running non-safe call keeps it "
              "waiting.")


# ---------------------------------------------------------------------------
# Exercise 3: what an interrupted call is told


def check_interrupt_results(fn: Any) -> Verdict:
    """Check ``fn(tool_uses, results, started) -> user message`` after an interrupt (field case F14).

    ``results`` maps tool_use_id → tool_result block (the calls that finished); ``started`` is the set of
    ids that had started. Every call answered in call order; a finished call keeps its result; a call that
    had started says ``INTERRUPTED``, one that had not ``NOT_STARTED``. Compared with
    ``tool_results_message(tool_uses, results, USER_INTERRUPT, started=started)``.
    """
    todo = tr("return one user message that answers every call of tool_uses in order: the result of a call that "
              "finished, and for the others an error result whose text says whether the call had started.")

    objects = tr("tool_uses are the response's ToolUseBlock objects (as in response.content), not the dicts the "
                 "chapter built by hand: read use.id and use.name, not use[\"id\"]. results holds dicts.")

    def done(id: str, text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": id, "content": text}

    three = _tool_use_blocks(_use("toolu_1"), _use("toolu_2", name="Edit", file_path="config.py"),
                             _use("toolu_3", file_path="notes.md"))
    cases = {
        N_("one finished, one running, one waiting"): (three, {"toolu_1": done("toolu_1", "a")}, {"toolu_1", "toolu_2"}),
        N_("none had started"): (three, {}, set()),
        N_("all had started, the last finished first"): (three, {"toolu_3": done("toolu_3", "c")},
                                                        {"toolu_1", "toolu_2", "toolu_3"}),
        N_("all finished"): (three[:2], {"toolu_2": done("toolu_2", "b"), "toolu_1": done("toolu_1", "a")},
                         {"toolu_1", "toolu_2"}),
    }

    def body() -> str:
        _require_callable(fn, "close")
        for name, (tool_uses, results, started) in cases.items():
            case = tr(name)
            expected = tool_results_message(tool_uses, results, USER_INTERRUPT, started=started).message["content"]
            got = _run(lambda: _call("close(tool_uses, results, started)", fn, tool_uses, dict(results), set(started),
                                     hint=objects, todo=todo))
            _check_results_message(case, got, expected, tool_uses,
                                   tr("a call without a result gets an is_error result; one that has a result keeps "
                                      "it."))
            for block, want in zip(got["content"], expected):
                if want.get("is_error") and block_field(block, "content", None) != want["content"]:
                    which = tr("had started") if want["tool_use_id"] in started else tr("never started")
                    raise _Fail(tr("for '{case}' {id} {which}, and your result says {said!r}.", case=case,
                                   id=want["tool_use_id"], which=which, said=_short(block_field(block, "content", None), 70)),
                                tr("the model must tell a call that may have had effects (it had started) from one "
                                   "that had none (it never started): use the package's two texts, one for each."))
        return tr("{count} cases: results in call order, 'while running' and 'never started' told apart.",
                  count=len(cases))

    return _verdict(tr("interrupted results"), body)
