"""Chapters 08 and 08b: the recovery branches: the exercise checks (``check_cut_recovery``, chapter 08;
``check_withdrawn`` and ``check_budget_continue``, chapter 08b)."""

from __future__ import annotations

from typing import Any

from ..deps import QueryDeps, counting_uuids
from ..language import N_, tr
from ..model import offline
from ..query import QueryParams, query
from ..recovery import MaxTokensCut, RecoveryOptions, TokenBudget, decide_recovery, decide_token_budget, state_changes
from ..scripts import Fault, reply, tool_use
from ..state import Continue, State, TokenBudgetTracking
from ._checking import _call, _Fail, _read_tool, _require_callable, _run, _short, _verdict

__all__ = ["check_budget_continue", "check_cut_recovery", "check_withdrawn"]

LIMIT, CAP = 4096, 64_000
"""The chapter's request: ``max_tokens=4096``; the model writes at most 64,000 (the escalated limit)."""

_OPTIONS = RecoveryOptions()


# ---------------------------------------------------------------------------
# Exercise 1: after a max_tokens cut, escalate once, then resume at most 3 times


def _cut_states() -> list[tuple[str, State]]:
    escalated = State(max_output_tokens_override=CAP)
    return [
        (N_("the first cut of a turn"), State()),
        (N_("cut again after the escalation"), escalated),
        (N_("cut after one resume"), escalated.model_copy(update={"max_output_tokens_recovery_count": 1})),
        (N_("cut after two resumes"), escalated.model_copy(update={"max_output_tokens_recovery_count": 2})),
        (N_("cut after three resumes"), escalated.model_copy(update={"max_output_tokens_recovery_count": 3})),
        (N_("the first cut of turn 2 (next_turn reset the counters)"), State(turn_count=2)),
    ]


def _same(got: Any, want: Continue | None) -> bool:
    if want is None or got is None:
        return got is want
    if not isinstance(got, Continue) or got.reason != want.reason:
        return False
    if want.reason == "max_output_tokens_escalate":
        return got.max_tokens == want.max_tokens
    return got.attempt == want.attempt


def _said(value: Any) -> str:
    if isinstance(value, Continue):
        extra = f", max_tokens={value.max_tokens}" if value.max_tokens is not None else ""
        extra += f", attempt={value.attempt}" if value.attempt is not None else ""
        return f"Continue(reason={value.reason!r}{extra})"
    return _short(repr(value), 80)


def check_cut_recovery(fn: Any) -> bool:
    """Check ``fn(state) -> dl.Continue | None``: what the loop does after a response cut at ``max_tokens`` that
    asked for no tool, with a 4,096-token request, a 64,000 escalation and at most 3 resumes a turn; on six
    States against ``dreamloop.recovery.decide_recovery``, then as a loop against an always-truncating model."""
    hint = tr("the State's counters say which rung this turn is on: max_output_tokens_override is set once the "
              "turn has escalated, max_output_tokens_recovery_count counts its resumes. Take the rungs in order, "
              "each no more often than the exercise allows; past the last one, give up.")
    todo = tr("return dl.Continue(reason='max_output_tokens_escalate', max_tokens=64000), "
              "dl.Continue(reason='max_output_tokens_recovery', attempt=n) or None, from the State's counters.")

    def decide(state: State, name: str) -> Any:
        case = tr(name)
        got = _run(lambda: _call(f"after_cut(<{case}>)", fn, state, hint=hint, todo=todo))
        if got is not None and not isinstance(got, Continue):
            raise _Fail(tr("for '{case}' it returned {got}; expected a dl.Continue or None.", case=case,
                           got=_short(repr(got), 80)), hint)
        return got

    def body() -> str:
        _require_callable(fn, "after_cut")
        for name, state in _cut_states():
            want = decide_recovery(MaxTokensCut(state.max_output_tokens_override or LIMIT, CAP), state, _OPTIONS)
            got = decide(state, name)
            if _same(got, want):
                continue
            why = ""
            if want is None and got is not None:
                why = tr(" Three resumes are the bound: without it an always-truncating model is asked forever.")
            elif want is not None and want.reason == "max_output_tokens_escalate" and got is not None \
                    and got.reason == "max_output_tokens_recovery":
                why = tr(" The first cut of a turn escalates: more room may finish the answer in one piece.")
            elif got is not None and got.reason == "max_output_tokens_escalate" and state.max_output_tokens_override:
                why = tr(" The limit was already raised this turn: escalating again changes nothing.")
            elif want is not None and got is None:
                why = tr(" This turn has a rung left to try: giving up now ends a run that could still finish.")
            elif want is not None and got.reason == want.reason == "max_output_tokens_escalate":
                why = tr(" The escalated limit is the one the exercise gives.")
            elif want is not None and got.reason == want.reason:
                why = tr(" The attempt is off: it numbers this turn's resumes, this one included.")
            raise _Fail(tr("for '{case}' you said {got}, which is not what the loop does.", case=tr(name),
                           got=_said(got)) + why, hint)
        state, passes = State(), 0
        while (step := decide(state, N_("the same turn, cut again"))) is not None:
            passes += 1
            if passes > 8:
                raise _Fail(tr("against a model that always hits max_tokens your rule goes round more than 8 times "
                               "in one turn: an unbounded resume loop."), hint)
            state = state.model_copy(update=state_changes(state, step))
        if passes != 4:
            raise _Fail(tr("against an always-truncating model your rule made {passes} recovery passes; the loop "
                           "makes 4 (one escalation, three resumes), so 5 requests.", passes=passes), hint)
        return tr("six States decided as the loop does; an always-truncating model gets 5 requests, then the run "
                  "ends.")

    return _verdict(tr("recovery after a max_tokens cut"), body)


# ---------------------------------------------------------------------------
# Exercise 2: what a failed attempt withdraws before the fallback model is asked


def _failures() -> list[tuple[str, list[Any], dict[str, Any]]]:
    overloaded = Fault(kind="stream_error", after_events=4, error_type="overloaded_error")
    paced = Fault(kind="stream_error", after_events=24, error_type="overloaded_error")
    with_call = reply(tool_use("Read", {"file_path": "config.py"}, id="toolu_1"),
                      "and then a lot more to say about that file, slowly", chunk_size=4, tokens_per_second=50,
                      fault=paced)  # the call starts (and ends) while the text still streams
    return [
        (N_("an overload after some text"), [reply("Sure, I'll", fault=overloaded), reply("Done.")], {}),
        (N_("an overload after a call had started (streaming tool execution)"), [with_call, reply("Done.")],
         {"streaming_tool_execution": True, "tools": [_read_tool()]}),
        (N_("an HTTP 529, nothing shown"), [reply(fault=Fault(kind="http_error", status=529, retry_after_ms=0)),
                                            reply("Done.")], {}),
    ]


async def _failed_attempt(script: list[Any], extra: dict[str, Any]) -> tuple[list[Any], list[str]]:
    """The events the failed attempt yielded, and the targets of the tombstones the loop yielded for it (asked again,
    or, when a call of it had started, kept as far as it finished: issue 32)."""
    run = query(QueryParams(messages="go", model=offline(script, max_retries=0), fallback_model="claude-fallback-1",
                            recovery=RecoveryOptions(overloads_before_fallback=1),
                            deps=QueryDeps(uuid=counting_uuids()), **extra))
    attempt: list[Any] = []
    targets: list[str] = []
    async for event in run:
        if event.type == "tombstone":
            targets.append(event.target_uuid)
        elif event.type == "system" and event.subtype == "model_fallback":
            break
        elif not targets:
            attempt.append(event)
    async for _ in run:
        pass
    return attempt, targets


def check_withdrawn(fn: Any) -> bool:
    """Check ``fn(events) -> list of ids``: the ``target_uuid`` of each tombstone the loop yields for a failed
    attempt (the response as far as it streamed, by the id its ``message_start`` gave; never the progress of a
    call that had started: such an attempt is kept, the call runs once and the model reads its result); on three
    failures, against the loop."""
    hint = tr("a tombstone withdraws what the person was shown and the loop does not keep: the partial response "
              "(which event carried its id?), if one began. A call that had started is never withdrawn. Stream "
              "events themselves are not messages; nothing is withdrawn twice.")
    todo = tr("return the ids to withdraw, in order: the partial response's id (from message_start), if one began.")

    def body() -> str:
        _require_callable(fn, "withdrawn")
        for name, script, extra in _failures():
            case = tr(name)
            events, want = _run(lambda: _failed_attempt(script, extra))
            got = _run(lambda: _call(f"withdrawn(<{case}>)", fn, list(events), hint=hint, todo=todo))
            if not isinstance(got, (list, tuple)):
                raise _Fail(tr("for '{case}' it returned {got}; expected a list of ids.", case=case,
                               got=_short(repr(got), 80)), hint)
            got = list(got)
            if got == want:
                continue
            if not got and want:
                raise _Fail(tr("for '{case}' you withdraw nothing: the failed attempt's partial text stays on screen "
                               "as if it were the answer, beside the fallback model's.", case=case), hint)
            missing = [t for t in want if t not in got]
            extra_ids = [t for t in got if t not in want]
            ran = [t for t in extra_ids if t in {e.uuid for e in events if e.type == "progress"}]
            if ran:
                raise _Fail(tr("for '{case}' you withdraw {extra}, the progress of a call that had started. Such a "
                               "call is never withdrawn: it runs once, to its end, and the model reads its result.",
                               case=case, extra=_short(ran, 80)), hint)
            if extra_ids:
                raise _Fail(tr("for '{case}' you withdraw {extra}, which the attempt never showed as a message.",
                               case=case, extra=_short(extra_ids, 80)), hint)
            if missing:
                kinds = _kinds(missing, events)
                raise _Fail(tr("for '{case}' you withdraw {got}; {count} more of what the attempt showed stay on "
                               "screen ({kinds}).", case=case, got=_short(got, 120), count=len(missing), kinds=kinds),
                            hint)
            if len(got) != len(set(got)):
                twice = sorted({t for t in got if got.count(t) > 1})
                raise _Fail(tr("for '{case}' you withdraw {twice} more than once; each shown message is withdrawn "
                               "once.", case=case, twice=", ".join(twice)), hint)
            raise _Fail(tr("for '{case}' you withdraw the right ids in another order, {got}; the loop withdraws them "
                           "in the order they were shown.", case=case, got=_short(got, 120)), hint)
        return tr("three failed attempts: the partial response withdrawn by its message_start id, a call that had "
                  "started kept, nothing withdrawn when nothing was shown.")

    return _verdict(tr("what a failed attempt withdraws"), body)


def _kinds(ids: list[str], events: list[Any]) -> str:
    """What the ids stand for, by kind ("the partial response", "2 progress messages"), never the ids."""
    progress = sum(1 for event in events if event.type == "progress" and event.uuid in ids)
    said = [tr("the partial response")] if progress < len(ids) else []
    if progress:
        said.append(tr("{count} progress message(s)", count=progress))
    return ", ".join(said)


# ---------------------------------------------------------------------------
# Exercise 3: the token budget, with diminishing returns


def _budget_cases() -> list[tuple[str, int, TokenBudgetTracking, int]]:
    t = TokenBudgetTracking
    return [
        (N_("a first answer of 300 tokens, budget 10,000"), 300, t(), 10_000),
        (N_("at 8,999 of 10,000"), 8_999, t(continuations=2, tokens=8_000, last_delta=4_000), 10_000),
        (N_("at 9,000 of 10,000"), 9_000, t(continuations=2, tokens=8_000, last_delta=4_000), 10_000),
        (N_("three continuations, +120 after +80"), 2_000, t(continuations=3, tokens=1_880, last_delta=80), 10_000),
        (N_("three continuations, +120 after +900"), 2_000, t(continuations=3, tokens=1_880, last_delta=900),
         10_000),
        (N_("three continuations, +700 after +80"), 2_580, t(continuations=3, tokens=1_880, last_delta=80), 10_000),
        (N_("two continuations, +120 after +80"), 2_000, t(continuations=2, tokens=1_880, last_delta=80), 10_000),
        (N_("four continuations, +10 after +10"), 1_010, t(continuations=4, tokens=1_000, last_delta=10), 10_000),
    ]


def check_budget_continue(fn: Any) -> bool:
    """Check ``fn(output_tokens, tracking, total) -> bool``: does a turn that ended go on
    (``token_budget_continuation``)? Under 90% of ``total`` and returns not diminishing (after 3 continuations,
    this one and the last each under 500 tokens); on eight cases against ``decide_token_budget``, then as a loop."""
    hint = tr("two questions, both about the whole run: is it still under the completion threshold of its budget, "
              "and have returns diminished (enough continuations made, and the last two steps each small)? This "
              "step is what was added since tracking.tokens; the one before it is tracking.last_delta.")
    todo = tr("return True to go on (a continuation), False to stop, from the tokens used and the tracking so far.")

    def decide(tokens: int, tracking: TokenBudgetTracking, total: int, name: str) -> bool:
        case = tr(name)
        got = _run(lambda: _call(f"keep_going(<{case}>)", fn, tokens, tracking, total, hint=hint, todo=todo))
        if not isinstance(got, bool):
            raise _Fail(tr("for '{case}' it returned {got}; expected True or False.", case=case,
                           got=_short(repr(got), 80)), hint)
        return got

    def body() -> str:
        _require_callable(fn, "keep_going")
        for name, tokens, tracking, total in _budget_cases():
            want = decide_token_budget(tokens, State(token_budget_tracking=tracking), TokenBudget(total=total)) \
                is not None
            got = decide(tokens, tracking, total, name)
            if got == want:
                continue
            raise _Fail(tr("for '{case}' you would go on; the loop stops.", case=tr(name)) if got else
                        tr("for '{case}' you would stop; the loop goes on.", case=tr(name)), hint)
        tracking, tokens, passes = TokenBudgetTracking(), 40, 0
        while decide(tokens, tracking, 10_000, N_("a model that answers in 40 tokens")):
            passes += 1
            if passes > 12:
                raise _Fail(tr("a model that adds 40 tokens a turn kept going more than 12 times under your rule: "
                               "returns diminish and the budget never fills, so it would run on and on."), hint)
            step = Continue(reason="token_budget_continuation", attempt=passes, output_tokens=tokens)
            tracking = state_changes(State(token_budget_tracking=tracking), step)["token_budget_tracking"]
            tokens += 40
        return tr("eight cases decided as the loop does; a 40-token model stops after {passes} continuations.",
                  passes=passes)

    return _verdict(tr("token budget continuation"), body)
