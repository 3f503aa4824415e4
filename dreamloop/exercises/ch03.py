"""Chapter 03: queryLoop(): the exercise checks."""

from __future__ import annotations

from typing import Any

from .. import scripts as S
from ..deps import QueryDeps, counting_uuids
from ..messages import user_message
from ..model import offline
from ..query import QueryParams, query
from ..state import State
from ._checking import (
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

__all__ = ['check_last_answer', 'check_next_state', 'check_max_turns']

def _last_answer_cases() -> dict[str, tuple[Any, dict[str, Any]]]:
    return {
        "a Read, then the answer": ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                                     S.reply("value is 1.")], {}),
        "a model that never stops, max_turns=2": (lambda body, i: S.reply(f"Reading again ({i + 1}).",
                                                                            S.tool_use("Read", {"file_path": "config.py"})),
                                                  {"max_turns": 2}),
        "the API fails on the second request": ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                                                 S.http_error(500, retry_after_ms=None)], {}),
        "no tool at all": ([S.reply("Hello!")], {}),
    }


def _fresh_run(script: Any, extra: dict[str, Any]) -> Any:
    return query(QueryParams(messages="What is value in config.py?", model=offline(script, max_retries=0),
                             tools=[_read_tool()], deps=QueryDeps(uuid=counting_uuids()), **extra))


def check_last_answer(fn: Any) -> bool:
    """Check ``await fn(run) -> (text, reason)``: iterate a ``QueryRun`` to the end, return the text of the
    last assistant message and ``run.terminal.reason``. Compared with the package's own run of four scripts."""
    hint = ('iterate the run to the end with async for, remembering the last event whose type is "assistant"; '
            "its text blocks are in event.message.content. Only then read run.terminal.reason.")

    def body() -> str:
        _require_callable(fn, "last_answer")
        reasons = []
        for case, (script, extra) in _last_answer_cases().items():
            async def reference() -> tuple[str, str]:
                run = _fresh_run(script, extra)
                async for _ in run:
                    pass
                answers = [m for m in run.messages if m.type == "assistant"]
                return _text_of(answers[-1].message), run.terminal.reason

            async def learner() -> Any:
                return await _call("last_answer(run)", fn, _fresh_run(script, extra), hint=hint)

            want = _run(reference)
            got = _run(learner)
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise _Fail(f"for '{case}' it returned {_short(repr(got), 100)}; expected a pair (text, reason).", hint)
            text, reason = got
            if reason != want[1]:
                raise _Fail(f"for '{case}' the reason is {reason!r}; the run ended {want[1]!r}.",
                            "read run.terminal.reason after the async for loop ends (an async generator can't "
                            "return a value, so the run object keeps it).")
            if str(text).strip() != want[0].strip():
                raise _Fail(f"for '{case}' the text is {_short(text, 80)!r}; the last assistant message says "
                            f"{want[0]!r}.", hint)
            reasons.append(reason)
        return f"{len(reasons)} runs read to the end; terminal reasons {', '.join(reasons)}."

    return _verdict("last answer and Terminal", body)


def check_next_state(fn: Any) -> bool:
    """Check ``fn(state, messages_for_query, assistant_messages, tool_results) -> State``: the next State of
    the next_turn path (queryLoop(): messages, turn_count + 1, transition), against the package's trace."""
    hint = ("return a dl.State whose messages are messages_for_query, then assistant_messages, then "
            'tool_results; turn_count one more than state\'s; transition a dl.Continue with reason "next_turn".')
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
            got = _run(lambda: _call("next_state(...)", fn, *args, hint=hint))
            where = f"after turn_count={point.turn_count}"
            messages = getattr(got, "messages", None)
            if messages is None:
                raise _Fail(f"{where} it returned {type(got).__name__}; expected a State.", hint)
            ids = [getattr(m, "uuid", None) for m in messages]
            if ids != after.state_messages:
                kinds = [getattr(m, "type", "?") for m in messages]
                want = [m.type for m in trace.resolve(after.state_messages)]
                raise _Fail(f"{where} the new messages are {kinds}; queryLoop() has {want}.",
                            "the model must see its call before the result: messages_for_query, then "
                            "assistant_messages, then tool_results.")
            if getattr(got, "turn_count", None) != after.turn_count:
                raise _Fail(f"{where} turn_count is {getattr(got, 'turn_count', None)}; expected {after.turn_count}.",
                            "turn_count goes up by one each time a batch of tool results is handed on.")
            transition = getattr(got, "transition", None)
            reason = _field(transition, "reason")
            if reason != "next_turn":
                raise _Fail(f"{where} transition is {_short(repr(transition), 80)}; expected reason 'next_turn'.",
                            'transition records why the loop went round: dl.Continue(reason="next_turn").')
        # After a context stage, messages_for_query is shorter than State.messages; the next State
        # starts from what the model saw, not from the old history.
        point = points[-2]
        seen = trace.resolve(point.messages_for_query)
        dropped = user_message("(an old turn the context pipeline left out)")
        state = State(messages=(dropped, *seen), turn_count=point.turn_count, transition=point.transition)
        got = _run(lambda: _call("next_state(...)", fn, state, seen, trace.resolve(point.assistant_messages),
                                 trace.resolve(point.tool_results), hint=hint))
        if any(getattr(m, "uuid", None) == dropped.uuid for m in getattr(got, "messages", ())):
            raise _Fail("when the context pipeline left a message out of messages_for_query, your next State "
                        "still has it.", "build the next State from messages_for_query (what the model saw), "
                        "not from state.messages: [*messages_for_query, *assistant_messages, *tool_results].")
        return f"{len(points) - 1} transitions, each the same State queryLoop() built (messages, turn_count, transition)."

    return _verdict("next State", body)


def check_max_turns(fn: Any) -> bool:
    """Check a prediction: ``fn(max_turns) -> (requests, tool_batches)`` for a model that always asks for a tool,
    against the package's loop for max_turns 1 to 4."""
    hint = ("the max_turns check comes after the tools ran and before the next request: count a request and a "
            "tool batch for each turn the loop is allowed to start.")

    def body() -> str:
        _require_callable(fn, "predict")
        rows = []
        for max_turns in range(1, 5):
            async def reference() -> tuple[int, int]:
                model = offline(lambda body, i: S.reply(S.tool_use("Read", {"file_path": "config.py"})))
                run = query(QueryParams(messages="loop", model=model, tools=[_read_tool()], max_turns=max_turns,
                                        deps=QueryDeps(uuid=counting_uuids())))
                batches = 0
                async for event in run:
                    batches += event.type == "user" and bool(event.source_tool_use_ids)
                return len(_api_requests(model)), batches

            want = _run(reference)
            got = _run(lambda: _call(f"predict({max_turns})", fn, max_turns, hint=hint))
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise _Fail(f"predict({max_turns}) returned {_short(repr(got), 80)}; expected (requests, tool_batches).", hint)
            if tuple(got) != want:
                raise _Fail(f"with max_turns={max_turns} you predicted {tuple(got)}; the loop sent {want[0]} "
                            f"request(s) and ran {want[1]} tool batch(es).", hint)
            rows.append(f"{max_turns}→{want}")
        return "predictions match the loop: " + ", ".join(rows) + " (max_turns ends with Terminal max_turns)."

    return _verdict("max_turns", body)


