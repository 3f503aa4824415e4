"""Chapter 03: queryLoop(): the exercise checks."""

from __future__ import annotations

from typing import Any

from .. import scripts as S
from ..deps import QueryDeps, counting_uuids
from ..language import N_, tr
from ..messages import user_message
from ..model import offline
from ..query import QueryParams, query
from ..state import State
from ._checking import (
    Verdict,
    _api_requests,
    _call,
    _Fail,
    _field,
    _read_tool,
    _require_callable,
    _run,
    _short,
    _text_of,
    _verdict,
)

__all__ = ["check_last_answer", "check_max_turns", "check_next_state"]


def _last_answer_cases() -> dict[str, tuple[Any, dict[str, Any]]]:
    return {
        N_("a Read, then the answer"): ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                                     S.reply("value is 1.")], {}),
        N_("a model that never stops, max_turns=2"): (lambda body, i: S.reply(f"Reading again ({i + 1}).",
                                                                            S.tool_use("Read", {"file_path": "config.py"})),
                                                  {"max_turns": 2}),
        N_("the API fails on the second request"): ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                                                 S.http_error(500, retry_after_ms=None)], {}),
        N_("no tool at all"): ([S.reply("Hello!")], {}),
    }


def _fresh_run(script: Any, extra: dict[str, Any]) -> Any:
    return query(QueryParams(messages="What is value in config.py?", model=offline(script, max_retries=0),
                             tools=[_read_tool()], deps=QueryDeps(uuid=counting_uuids()), **extra))


def check_last_answer(fn: Any) -> Verdict:
    """Check ``await fn(run) -> (text, reason)``: iterate a ``QueryRun`` to the end, return the text of the
    last assistant message and ``run.terminal.reason``. Compared with the package's own run of four scripts."""
    todo = tr("iterate the run to its end with async for, keep the last assistant message you see, then return "
              "its text and the run's Terminal reason.")
    terminal_hint = tr("an async generator has no return value: the Terminal is on the run object, readable once "
                       "the async for loop has ended.")

    def body() -> str:
        _require_callable(fn, "last_answer")
        reasons = []
        for name, (script, extra) in _last_answer_cases().items():
            case = tr(name)
            async def reference() -> tuple[str, str]:
                run = _fresh_run(script, extra)
                async for _ in run:
                    pass
                answers = [m for m in run.messages if m.type == "assistant"]
                return _text_of(answers[-1].message), run.terminal.reason

            async def learner() -> Any:
                return await _call("last_answer(run)", fn, _fresh_run(script, extra), todo=todo, hint=terminal_hint)

            want = _run(reference)
            got = _run(learner)
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise _Fail(tr("for '{case}' it returned {value}; expected a pair (text, reason).", case=case,
                               value=_short(repr(got), 100)),
                            tr("return two things: the text (a str) and the reason (a str)."))
            text, reason = got
            if reason != want[1]:
                raise _Fail(tr("for '{case}' the reason is {got!r}; the run ended {expected!r}.", case=case,
                               got=reason, expected=want[1]),
                            tr("a run can end in several ways (completed, max_turns, model_error, ...): read the "
                               "reason from run.terminal after the async for loop, don't assume one."))
            if str(text).strip() != want[0].strip():
                raise _Fail(tr("for '{case}' the text is {got!r}; the last assistant message says {expected!r}.",
                               case=case, got=_short(text, 80), expected=want[0]),
                            tr("the LAST assistant message of the run, whatever it asked for (it may still ask for "
                               "tools when max_turns or an error ends the run); its text blocks only."))
            reasons.append(reason)
        return tr("{count} runs read to the end; terminal reasons {reasons}.", count=len(reasons),
                  reasons=", ".join(reasons))

    return _verdict(tr("last answer and Terminal"), body)


def check_next_state(fn: Any) -> Verdict:
    """Check ``fn(state, messages_for_query, assistant_messages, tool_results) -> State``: the next State of
    the next_turn path (queryLoop(): messages, turn_count + 1, transition), against the package's trace."""
    todo = tr("build and return the dl.State the loop starts its next turn with (messages, turn_count, transition).")
    script = [S.reply("First config.py.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
              S.reply("Now the notes.", S.tool_use("Read", {"file_path": "notes.md"}, id="toolu_2")),
              S.reply("value is 1; the notes want 2.")]

    def body() -> str:
        _require_callable(fn, "next_state")

        async def reference() -> Any:
            run = _fresh_run(script, {})
            async for _ in run:
                pass
            return run.trace

        trace = _run(reference)
        points = trace.checkpoints
        for point, after in zip(points, points[1:]):
            state = State(messages=tuple(trace.resolve(point.state_messages)), turn_count=point.turn_count,
                          transition=point.transition)
            args = (state, trace.resolve(point.messages_for_query), trace.resolve(point.assistant_messages),
                    trace.resolve(point.tool_results))
            got = _run(lambda: _call("next_state(...)", fn, *args, hint=todo, todo=todo))
            where = tr("after turn_count={turn_count}", turn_count=point.turn_count)
            messages = getattr(got, "messages", None)
            if not isinstance(got, State) or messages is None:
                raise _Fail(tr("{where} it returned {kind}; expected a State.", where=where, kind=type(got).__name__),
                            tr("the loop carries a State from turn to turn: return dl.State(...) with its fields."))
            ids = [getattr(m, "uuid", None) for m in messages]
            if ids != after.state_messages:
                kinds = [getattr(m, "type", "?") for m in messages]
                want = [m.type for m in trace.resolve(after.state_messages)]
                if "assistant" not in kinds:
                    hint = tr("the model must see its own call before the result: keep this turn's assistant "
                              "messages.")
                elif sorted(map(str, ids)) == sorted(after.state_messages):
                    hint = tr("the order matters: the model must see its call before the result (what was sent, "
                              "what came back, then the results).")
                else:
                    hint = tr("the next turn starts from everything the model saw this turn, plus what this turn "
                              "added.")
                raise _Fail(tr("{where} the new messages are {got}; queryLoop() has {expected}.", where=where,
                               got=kinds, expected=want), hint)
            if getattr(got, "turn_count", None) != after.turn_count:
                raise _Fail(tr("{where} turn_count is {got}; expected {expected}.", where=where,
                               got=getattr(got, "turn_count", None), expected=after.turn_count),
                            tr("turn_count goes up by one each time a batch of tool results is handed on."))
            transition = getattr(got, "transition", None)
            reason = _field(transition, "reason")
            if reason != "next_turn":
                raise _Fail(tr("{where} transition is {got}; expected reason 'next_turn'.", where=where,
                               got=_short(repr(transition), 80)),
                            tr("transition records why the loop went round again (a dl.Continue with a reason); "
                               "tools ran and their results go back: that reason is next_turn."))
        # After a context stage, messages_for_query is shorter than State.messages; the next State
        # starts from what the model saw, not from the old history.
        point = points[-2]
        seen = trace.resolve(point.messages_for_query)
        dropped = user_message("(an old turn the context pipeline left out)")
        state = State(messages=(dropped, *seen), turn_count=point.turn_count, transition=point.transition)
        got = _run(lambda: _call("next_state(...)", fn, state, seen, trace.resolve(point.assistant_messages),
                                 trace.resolve(point.tool_results), hint=todo, todo=todo))
        if any(getattr(m, "uuid", None) == dropped.uuid for m in getattr(got, "messages", ())):
            raise _Fail(tr("when the context pipeline left a message out of messages_for_query, your next State "
                           "still has it."),
                        tr("build the next State from what the model saw this turn (messages_for_query), not from "
                           "state.messages: the pipeline may have shortened it."))
        return tr("{count} transitions, each the same State queryLoop() built (messages, turn_count, transition).",
                  count=len(points) - 1)

    return _verdict(tr("next State"), body)


_MAX_TURNS_CASES = ((3, 1), (3, 2), (3, 3), (3, 6), (1, 1), (1, 0), (2, 5), (4, 2))
"""(max_turns, tool_turns) pairs the prediction is checked on."""


def check_max_turns(fn: Any) -> Verdict:
    """Check a prediction: ``fn(max_turns, tool_turns) -> (requests, tool_batches, reason, turn_count)``.

    The model asks for a tool on its first ``tool_turns`` responses and then answers in words; the loop runs
    with ``max_turns``. ``reason`` and ``turn_count`` are the Terminal's. Checked against the package's loop
    on eight pairs, among them a model that would have answered on the very turn max_turns forbids.
    """
    todo = tr("return a tuple (requests, tool_batches, reason, turn_count) for a run of the loop with this "
              "max_turns and a model that calls a tool tool_turns times before it answers.")

    def body() -> str:
        _require_callable(fn, "predict")
        rows = []
        for max_turns, tool_turns in _MAX_TURNS_CASES:
            async def reference() -> tuple[int, int, str, int]:
                script = [*(S.reply(f"Reading ({i + 1}).", S.tool_use("Read", {"file_path": "config.py"}))
                            for i in range(tool_turns)), S.reply("value is 1.")]
                model = offline(script)
                run = query(QueryParams(messages="loop", model=model, tools=[_read_tool()], max_turns=max_turns,
                                        deps=QueryDeps(uuid=counting_uuids())))
                batches = 0
                async for event in run:
                    batches += event.type == "user" and bool(event.source_tool_use_ids)
                return len(_api_requests(model)), batches, run.terminal.reason, run.terminal.turn_count

            want = _run(reference)
            call = f"predict({max_turns}, {tool_turns})"
            got = _run(lambda: _call(call, fn, max_turns, tool_turns, hint=todo, todo=todo))
            if not isinstance(got, (tuple, list)) or len(got) != 4:
                raise _Fail(tr("{call} returned {value}; expected (requests, tool_batches, reason, turn_count).",
                               call=call, value=_short(repr(got), 80)),
                            tr("four values, in that order; reason is a string such as 'completed'."))
            got = tuple(got)
            if got == want:
                rows.append(want)
                continue
            requests, batches, reason, turn_count = got
            if reason != want[2] and want[2] == "completed":
                hint = tr("the limit only matters while the model keeps asking for tools: a model that stops asking "
                          "before the limit ends the run the ordinary way.")
            elif reason != want[2]:
                hint = tr("max_turns is checked after the tools ran and before the next request: a model that would "
                          "have answered on that next request never gets asked.")
            elif (requests, batches) != want[:2]:
                hint = tr("count the requests the loop sends and the batches of tools it runs: each turn the loop "
                          "starts sends one request, and its tools run before any check on max_turns.")
            else:
                hint = tr("turn_count in the Terminal: completed keeps the turn it ended in; max_turns carries the "
                          "turn the loop refused to start (like the max_turns_reached attachment).")
            raise _Fail(tr("{call}: you predicted {got}; the loop gave {expected}.", call=call, got=got,
                           expected=want), hint)
        return tr("your predictions match the loop on all {count} runs, e.g. predict(3, 3) = {example}: the answer "
                  "one request away never came.", count=len(rows), example=rows[2])

    return _verdict("max_turns", body)
