"""Chapter 00: setup and a tour: the exercise checks (writing scripts for the offline model)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from typing import Any

from .. import scripts as S
from ..deps import QueryDeps, counting_uuids
from ..errors import ScriptExhausted
from ..language import tr
from ..messages import assistant_tool_uses
from ..model import offline
from ..query import QueryParams, query
from ..tools import builtin_tools
from ._checking import (
    Verdict,
    _api_requests,
    _Fail,
    _run,
    _short,
    _text_of,
    _verdict,
)

__all__ = ["check_hello_script", "check_setup", "check_tool_script"]


def check_setup() -> Verdict:
    """Check that this environment can run the book: packages, versions, one offline round trip."""

    def body() -> str:
        import anthropic
        import ipywidgets

        problems = []
        older = tr("{package} {version} is older than {needed}")
        if tuple(int(p) for p in anthropic.__version__.split(".")[:2]) < (2, 14):
            problems.append(older.format(package="anthropic", version=anthropic.__version__, needed="2.14"))
        if int(ipywidgets.__version__.split(".")[0]) < 8:
            problems.append(older.format(package="ipywidgets", version=ipywidgets.__version__, needed="8"))
        try:
            import ipykernel

            if tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < (7, 4):
                problems.append(older.format(package="ipykernel", version=ipykernel.__version__, needed="7.4") +
                                tr(" (buttons won't work while a cell runs)"))
        except ImportError:
            pass  # not in a kernel: fine for the checks
        if problems:
            raise _Fail(tr("; ").join(problems) + tr("."),
                        tr("run `make venv` (or pip install -e '.[lab,test]') in the repo."))

        async def round_trip() -> str:
            model = offline([S.reply("pong")])
            async with model.client.messages.stream(model=model.model, max_tokens=16,
                                                    messages=[{"role": "user", "content": "ping"}]) as stream:
                return _text_of(await stream.get_final_message())

        if _run(round_trip) != "pong":
            raise _Fail(tr("the offline Messages API did not answer."), tr("reinstall the package: pip install -e ."))
        return tr("anthropic SDK, ipywidgets and the offline Messages API all work (no network, no key).")

    return _verdict(tr("setup"), body)


def check_hello_script(script: Any) -> Verdict:
    """Check a one-turn script whose reply is the text "Hello, loop!" (run through ``query()``)."""
    first = tr("a script is a list of turns, one per request the model will get; dl.reply(...) makes a turn "
               "from what the model says.")

    def body() -> str:
        turns = _as_script(script, first)

        async def play() -> tuple[str, Any, int]:
            model = offline(turns)
            run = query(QueryParams(messages="Say hello.", model=model, deps=QueryDeps(uuid=counting_uuids())))
            async for _ in run:
                pass
            answers = [m for m in run.messages if m.type == "assistant"]
            return (_text_of(answers[-1].message) if answers else ""), run, len(_api_requests(model))

        no_tool = tr("a turn with a tool_use makes the loop call the model again; a greeting needs no tool.")
        try:
            answer, run, requests = _run(play)
        except ScriptExhausted:
            raise _Fail(tr("the loop asked the model a second time and your script had no turn for it."),
                        no_tool) from None
        calls = [b.name for m in run.messages if m.type == "assistant" for b in assistant_tool_uses(m)]
        if calls:
            raise _Fail(tr("the first turn asks for a tool ({tools}), so the loop went round again.",
                           tools=", ".join(calls)), no_tool)
        if answer.strip() != "Hello, loop!":
            raise _Fail(tr("the model's answer was {answer!r}, not 'Hello, loop!'.", answer=answer),
                        tr("the text of the turn is what the model says, character for character (one text block)."))
        if run.terminal.reason != "completed" or requests != 1:
            raise _Fail(tr("the run ended {reason} after {requests} requests; expected completed after 1.",
                           reason=run.terminal.reason, requests=requests),
                        tr("one turn with text only: no tool_use, so the loop stops after the first request."))
        return tr("one request, the model said 'Hello, loop!', Terminal completed at turn_count=1.")

    return _verdict(tr("hello script"), body)


_VALUE_1 = re.compile(r"\bvalue\b\D{0,25}?(?<![\d.])1(?!\d|\.\d)", re.IGNORECASE)
"""The answer states that value is 1: "value = 1", "value is 1." (not "value is 10", not "I read 1 file")."""


def check_tool_script(script: Any) -> Verdict:
    """Check a two-turn script: Read config.py (built-in tool, sample project), then an answer stating value is 1."""
    first = tr("a script is a list of turns, one per request: here two. In turn 1 the model calls the built-in "
               "Read tool (a tool_use block, made with dl.tool_use, inside dl.reply); in turn 2 it answers in words.")
    two_turns = tr("exactly two turns: one with the tool_use, then one answer without any tool_use (a script "
                   "that runs out of turns ends the run with model_error).")

    def body() -> str:
        turns = _as_script(script, first)
        from ..demo import copy_sample_project

        async def play() -> Any:
            workspace = copy_sample_project()
            try:
                model = offline(turns)
                run = query(QueryParams(messages="What is value in config.py?", model=model, tools=builtin_tools(),
                                        workspace=workspace, max_turns=4, deps=QueryDeps(uuid=counting_uuids())))
                async for _ in run:
                    pass
                return run
            finally:
                shutil.rmtree(workspace, ignore_errors=True)

        try:
            run = _run(play)
        except ScriptExhausted:
            raise _Fail(tr("the loop asked the model more often than your script has turns."), two_turns) from None
        answers = [m for m in run.messages if m.type == "assistant"]
        calls = list(assistant_tool_uses(answers[0])) if answers else []
        if not calls:
            raise _Fail(tr("the first response asked for no tool_use: the model answered without reading the file."),
                        tr("turn 1 must call Read: put a tool_use block (dl.tool_use) in the first dl.reply."))
        call = calls[0]
        if call.name != "Read":
            raise _Fail(tr("the first response asked for {name}({input}); the built-in tool is called 'Read'.",
                           name=call.name, input=_short(call.input)),
                        tr("tool names are exact (case too): the API only knows the names the loop sent in its "
                           "tool definitions."))
        if not isinstance(call.input, dict) or call.input.get("file_path") != "config.py":
            raise _Fail(tr("the first response asked for Read({input}); expected file_path 'config.py'.",
                           input=_short(call.input)),
                        tr("the tool's input is a dict whose keys are its input schema's fields: Read takes "
                           "file_path."))
        results = [b for m in run.messages if m.type == "user" and m.source_tool_use_ids
                   for b in m.message["content"]]
        if any(r.get("is_error") for r in results):
            bad = next(r for r in results if r.get("is_error"))
            raise _Fail(tr("a tool_result came back with is_error: {content}", content=_short(bad.get("content"))),
                        tr("the loop answered your call with an error the model would have to read; fix the call."))
        if run.terminal.turn_count != 2 or run.terminal.reason != "completed":
            raise _Fail(tr("the run ended {reason} at turn_count={turn_count}; expected completed at turn_count=2.",
                           reason=run.terminal.reason, turn_count=run.terminal.turn_count), two_turns)
        said = _text_of(answers[-1].message)
        if not _VALUE_1.search(said):
            raise _Fail(tr("the final answer {said!r} does not say that value is 1.", said=said),
                        tr("the answer should state what the tool_result showed, naming value and its number "
                           "(a 1 somewhere in the text is not enough)."))
        return tr("Read(config.py) ran, its tool_result went back, and the answer came at turn_count=2.")

    return _verdict(tr("tool script"), body)


def _as_script(script: Any, first: str) -> list[S.Turn]:
    if script is None:
        raise _Fail(tr("the script is still None: the exercise is not done yet."), first)
    if isinstance(script, S.Turn):
        raise _Fail(tr("you passed one Turn, not a script."), tr("a script is a list of turns, even when it has one."))
    if isinstance(script, str) or not isinstance(script, Sequence) or not script:
        raise _Fail(tr("expected a non-empty list of turns, got {kind} {value}.", kind=type(script).__name__,
                       value=_short(repr(script), 60)), first)
    wrong = [type(t).__name__ for t in script if not isinstance(t, S.Turn)]
    if wrong:
        raise _Fail(tr("every item must be a Turn; found {kind}.", kind=wrong[0]),
                    tr("dl.text and dl.tool_use make content blocks; dl.reply(...) puts blocks into a Turn."))
    return list(script)
