"""Chapter 09: every ending and every transition: the exercise checks."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Iterator, Optional, get_args

from pydantic import Field, create_model

from ..deps import QueryDeps, counting_uuids
from ..errors import ScriptExhausted
from ..language import N_, tr
from ..model import offline
from ..query import QueryParams, query
from ..recovery import RecoveryOptions
from ..scripts import Turn
from ..state import ContinueReason, TerminalReason
from ._checking import _call, _Fail, _read_tool, _require_callable, _run, _short, _verdict

__all__ = ["PHASES", "WHERE_DECIDED", "check_switches_by", "check_trigger", "check_where_decided"]

PHASES = ("context", "stream", "recovery", "tools", "stop", "next")
"""Where ``_query_loop`` decides: phase 2 (the context pipeline), 3 (the stream), the recovery step after
it, 4 (the tools, or the stop checks), 5 (the next State)."""

WHERE_DECIDED: dict[str, frozenset[str]] = {
    "completed": frozenset({"stop"}),
    "aborted_streaming": frozenset({"stream"}),
    "aborted_tools": frozenset({"tools"}),
    "max_turns": frozenset({"next"}),
    "model_error": frozenset({"stream", "recovery"}),
    "prompt_too_long": frozenset({"stream", "recovery"}),
    "blocking_limit": frozenset({"context"}),
    "image_error": frozenset({"stream", "recovery"}),
    "stop_hook_prevented": frozenset({"stop"}),
    "hook_stopped": frozenset({"tools", "context"}),  # context: a pre_compact hook (dreamloop's own)
    "api_error": frozenset({"stream", "recovery", "stop"}),  # stop: max_tokens cuts that outlasted the resumes
    "malformed_tool_use_exhausted": frozenset({"stop"}),
    "next_turn": frozenset({"next"}),
    "max_output_tokens_escalate": frozenset({"recovery"}),
    "max_output_tokens_recovery": frozenset({"recovery"}),
    "reactive_compact_retry": frozenset({"recovery"}),
    "collapse_drain_retry": frozenset({"recovery"}),
    "stop_hook_blocking": frozenset({"stop"}),
    "token_budget_continuation": frozenset({"stop"}),
    "streaming_fallback_resume": frozenset({"stream"}),
    "malformed_tool_use_retry": frozenset({"stop"}),
}
"""The answer key of ``check_where_decided``: each Terminal and Continue reason → the phase(s) of
``_query_loop`` where it is decided (an unrecovered error ends the run where the stream ended, or
after recovery declined)."""

_WHY = {
    "hook_stopped": N_("a hook said continue: false while the tools ran; the loop ends after the tools, before "
                       "the next State (the stop hooks are another event)."),
    "max_turns": N_("max_turns is checked at phase 5, after the tools ran and before the next request."),
    "blocking_limit": N_("the blocking limit is the pipeline's last stage: nothing is sent, so the stream never "
                         "starts."),
    "token_budget_continuation": N_("the budget is checked with the stop checks, when a turn asks for no tool."),
    "stop_hook_blocking": N_("the stop hooks run at phase 4 when the model asked for no tool."),
    "next_turn": N_("tool results are handed on at phase 5, where the next State is built."),
    "completed": N_("a response without tool_use goes to the stop checks; when nothing sends it back, the run "
                    "ends."),
    "aborted_streaming": N_("the abort signal fired while the model streamed: the run ends where the stream "
                            "ended."),
    "aborted_tools": N_("the abort signal fired while the tools ran: the run ends after their results are "
                        "answered."),
    "model_error": N_("an error the stream returned ends the run right after the stream, when no recovery pass "
                      "takes it."),
    "prompt_too_long": N_("the API's 400 comes back from the stream; the drain and the compaction are tried first, "
                          "right after it."),
    "image_error": N_("the API's 400 about media comes back from the stream and no recovery pass takes it."),
    "max_output_tokens_escalate": N_("a response cut at max_tokens is seen when the stream ends; recovery decides."),
    "max_output_tokens_recovery": N_("a response cut at max_tokens is seen when the stream ends; recovery decides."),
    "reactive_compact_retry": N_("the 400 (prompt is too long) is withheld when the stream ends; recovery "
                                 "decides."),
    "collapse_drain_retry": N_("the 400 (prompt is too long) is withheld when the stream ends; recovery decides."),
    "stop_hook_prevented": N_("the stop hooks run at phase 4 when the model asked for no tool."),
    "api_error": N_("an API error response ends the run where the stream ended, or after recovery declined it, or "
                    "at the stop checks when max_tokens cuts outlasted the resumes."),
    "malformed_tool_use_exhausted": N_("a response without tool_use goes to the stop checks; there the loop sees "
                                       "that stop_reason said tool_use."),
    "malformed_tool_use_retry": N_("a response without tool_use goes to the stop checks; there the loop sees "
                                   "that stop_reason said tool_use."),
    "streaming_fallback_resume": N_("the stream broke part-way: phase 3 decides what to keep and asks again."),
}


def check_where_decided(fn: Any) -> bool:
    """Check ``fn(reason) -> str``: the phase of the loop where each Terminal and Continue reason is decided,
    one of ``PHASES`` (``"context"``, ``"stream"``, ``"recovery"``, ``"tools"``, ``"stop"``, ``"next"``);
    all twenty-one reasons against ``WHERE_DECIDED``."""
    hint = tr("follow _query_loop top to bottom: phase 2 may end the run before any request; after the stream come "
              "recovery's passes; phase 4 is the tools or, without tool_use, the stop checks; phase 5 builds the "
              "next State after the max_turns check.")
    todo = tr("return one of {phases} for each reason.", phases=", ".join(PHASES))

    def body() -> str:
        _require_callable(fn, "where_decided")
        reasons = [*get_args(TerminalReason), *get_args(ContinueReason)]
        for reason in reasons:
            got = _run(lambda: _call(f"where_decided({reason!r})", fn, reason, hint=hint, todo=todo))
            if got not in PHASES:
                raise _Fail(tr("for {reason!r} it returned {got}; expected one of {phases}.", reason=reason,
                               got=_short(repr(got), 60), phases=PHASES), hint)
            if got not in WHERE_DECIDED[reason]:
                why = tr(_WHY[reason]) if reason in _WHY else ""
                raise _Fail(tr("{reason!r} is not decided in '{got}'. ", reason=reason, got=got) + why, hint)
        return tr("all {count} reasons placed where the loop decides them.", count=len(reasons))

    return _verdict(tr("where each reason is decided"), body)


# ---------------------------------------------------------------------------
# Exercise 2: trigger a chain of transitions on purpose

WANTED = [None, "max_output_tokens_escalate", "max_output_tokens_recovery", "next_turn"]
"""The transitions ``check_trigger``'s run must go through, checkpoint by checkpoint, before it ends completed."""


async def _transitions(script: list[Any]) -> tuple[list[str | None], str, int]:
    model = offline(list(script))
    run = query(QueryParams(messages="go", model=model, tools=[_read_tool()], recovery=RecoveryOptions(),
                            deps=QueryDeps(uuid=counting_uuids())))
    try:
        async for _ in run:
            pass
    except ScriptExhausted:
        ending = tr("with the script run out (the model was asked once more than it has turns)")
    else:
        ending = run.terminal.reason
    reasons = [p.transition.reason if p.transition else None for p in run.trace.checkpoints]
    if not run.done:
        reasons.append(run.state.transition.reason if run.state and run.state.transition else None)
    return reasons, ending, sum(1 for r in model.api.requests if r.path.endswith("/v1/messages"))


def check_trigger(fn: Any) -> bool:
    """Check ``fn() -> list of dl.Turn``: a script that, run with ``recovery=dl.RecoveryOptions()`` and a Read
    tool, goes through ``WANTED`` (escalate, resume, next_turn) and ends ``completed``."""
    hint = tr("recovery acts on a response cut at max_tokens that asks for no tool, and the rungs come in order "
              "within a turn; only tool results handed on start the next turn; a response without tool_use, "
              "not cut, ends the run.")
    todo = tr("return a list of dl.reply(...) turns; stop_reason='max_tokens' makes a response cut.")

    def body() -> str:
        _require_callable(fn, "script")
        script = _run(lambda: _call("script()", fn, hint=hint, todo=todo))
        if not isinstance(script, (list, tuple)) or not all(isinstance(t, Turn) for t in script):
            raise _Fail(tr("script() returned {got}; expected a list of dl.Turn (dl.reply(...)).",
                           got=_short(repr(script), 80)), hint)
        reasons, ending, requests = _run(lambda: _transitions(script))
        if reasons == WANTED and ending == "completed":
            return tr("escalate, resume, next_turn, completed: {requests} requests, all on purpose.", requests=requests)
        if reasons[:len(WANTED)] == WANTED:
            more = reasons[len(WANTED):]
            raise _Fail(tr("the run went through {wanted} and then {then!r}; it should end completed right after "
                           "next_turn.", wanted=WANTED[1:], then=more or ending), hint)
        raise _Fail(tr("your script's transitions were {reasons} and it ended {ending!r}; wanted {wanted} then "
                       "completed.", reasons=reasons, ending=ending, wanted=WANTED), hint)

    return _verdict(tr("transitions on purpose"), body)


# ---------------------------------------------------------------------------
# Exercise 3: which switches a chapter may turn on


@contextmanager
def _one_more_switch() -> Iterator[dict[str, Any]]:
    """``dl.QueryParams`` is, for a moment, a subclass with one more switch (chapter 07) and one more field
    that is no switch though it names a chapter: what a later version of the kit might hold. Yields its fields."""
    import dreamloop

    later = create_model("QueryParams", __base__=QueryParams,
                         speculative_edits=(bool, Field(False, json_schema_extra={"switch": True, "chapter": "07"})),
                         trace_label=(Optional[str], Field(None, json_schema_extra={"chapter": "06"})))
    modules = [m for m in (dreamloop, sys.modules.get("dreamloop.query")) if getattr(m, "QueryParams", None) is QueryParams]
    for module in modules:
        module.QueryParams = later
    try:
        yield later.model_fields
    finally:
        for module in modules:
            module.QueryParams = QueryParams


def _switches_by(chapter: int, fields: dict[str, Any] | None = None) -> set[str]:
    """The answer key: the switches explained in chapter ``chapter`` or before."""
    found = set()
    for name, info in (QueryParams.model_fields if fields is None else fields).items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("switch") and int(extra["chapter"]) <= chapter:
            found.add(name)
    return found


def check_switches_by(fn: Any) -> bool:
    """Check ``fn(chapter) -> set of names``: the ``QueryParams`` switches a chapter may turn on (those
    explained in that chapter or before: the field's ``json_schema_extra["chapter"]``); chapters 4 to 10."""
    hint = tr("read dl.QueryParams.model_fields: a switch's field has json_schema_extra {'switch': True, 'chapter': "
              "'NN'} (a string); a chapter may turn on what it or an earlier chapter explained. Other fields "
              "(max_turns, tools, ...) are not switches.")
    todo = tr("return the set of switch names with a chapter number at most the given one.")

    def body() -> str:
        _require_callable(fn, "switches_by")
        for chapter in range(4, 11):
            want = _switches_by(chapter)
            got = _run(lambda: _call(f"switches_by({chapter})", fn, chapter, hint=hint, todo=todo))
            if not isinstance(got, (set, frozenset, list, tuple)):
                raise _Fail(tr("switches_by({chapter}) returned {got}; expected a set of names.", chapter=chapter,
                               got=_short(repr(got), 80)), hint)
            got = set(got)
            if got != want:
                extra, missing = sorted(got - want), sorted(want - got)
                said = ""
                if extra:
                    said += (tr(" {extra} is not a switch by chapter {chapter}.", extra=extra, chapter=chapter)
                             if len(extra) == 1 else
                             tr(" {extra} are not a switch by chapter {chapter}.", extra=extra, chapter=chapter))
                if missing:
                    said += (tr(" It leaves out {count} switch a chapter up to {chapter} explained.",
                                count=len(missing), chapter=chapter) if len(missing) == 1 else
                             tr(" It leaves out {count} switches chapters up to {chapter} explained.",
                                count=len(missing), chapter=chapter))
                raise _Fail(tr("switches_by({chapter}) = {got}.", chapter=chapter, got=sorted(got)) + said, hint)
        for chapter in (6, 7):
            with _one_more_switch() as fields:
                want = _switches_by(chapter, fields)
                got = _run(lambda: _call(f"switches_by({chapter})", fn, chapter, hint=hint, todo=todo))
            got = set(got) if isinstance(got, (set, frozenset, list, tuple)) else got
            if got != want:
                raise _Fail(tr("with one more switch in dl.QueryParams (as a later version of the kit might add), "
                               "switches_by({chapter}) = {got}: it does not follow the fields.", chapter=chapter,
                               got=sorted(got) if isinstance(got, set) else _short(repr(got), 80)),
                            tr("read the switches from dl.QueryParams.model_fields each time, not from a list you "
                               "write by hand: a field is a switch when its json_schema_extra says 'switch': True."))
        return tr("chapters 4 to 10, and a QueryParams with one more switch: each chapter may turn on what it and the "
                  "chapters before it explained.")

    return _verdict(tr("the switchboard's rule"), body)
