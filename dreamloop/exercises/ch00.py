"""Chapter 00: setup and a tour: the exercise checks."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import Any

from .. import scripts as S
from ..deps import QueryDeps, counting_uuids
from ..messages import assistant_tool_uses
from ..model import offline
from ..query import QueryParams, query
from ..tools import builtin_tools
from ._checking import (
    _api_requests,
    _Fail,
    _run,
    _short,
    _text_of,
    _verdict,
)

__all__ = ['check_setup', 'check_hello_script', 'check_tool_script']

def check_setup() -> bool:
    """Check that this environment can run the book: packages, versions, one offline round trip."""

    def body() -> str:
        import anthropic
        import ipywidgets

        problems = []
        if tuple(int(p) for p in anthropic.__version__.split(".")[:2]) < (2, 14):
            problems.append(f"anthropic {anthropic.__version__} is older than 2.14")
        if int(ipywidgets.__version__.split(".")[0]) < 8:
            problems.append(f"ipywidgets {ipywidgets.__version__} is older than 8")
        try:
            import ipykernel

            if tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < (7, 4):
                problems.append(f"ipykernel {ipykernel.__version__} is older than 7.4 (buttons won't work while a cell runs)")
        except ImportError:
            pass  # not in a kernel: fine for the checks
        if problems:
            raise _Fail("; ".join(problems) + ".", "run `make venv` (or pip install -e '.[lab,test]') in the repo.")

        async def round_trip() -> str:
            model = offline([S.reply("pong")])
            async with model.client.messages.stream(model=model.model, max_tokens=16,
                                                    messages=[{"role": "user", "content": "ping"}]) as stream:
                return _text_of(await stream.get_final_message())

        if _run(round_trip) != "pong":
            raise _Fail("the offline Messages API did not answer.", "reinstall the package: pip install -e .")
        return "anthropic SDK, ipywidgets and the offline Messages API all work (no network, no key)."

    return _verdict("setup", body)


def check_hello_script(script: Any) -> bool:
    """Check a one-turn script whose reply is the text "Hello, loop!" (run through ``query()``)."""
    hint = 'a script is a list of turns: script = [dl.reply("Hello, loop!")]'

    def body() -> str:
        turns = _as_script(script, hint)

        async def play() -> tuple[str, Any, int]:
            model = offline(turns)
            run = query(QueryParams(messages="Say hello.", model=model, deps=QueryDeps(uuid=counting_uuids())))
            async for _ in run:
                pass
            answers = [m for m in run.messages if m.type == "assistant"]
            return (_text_of(answers[-1].message) if answers else ""), run.terminal, len(_api_requests(model))

        answer, terminal, requests = _run(play)
        if answer.strip() != "Hello, loop!":
            raise _Fail(f"the model's last answer was {answer!r}, not 'Hello, loop!'.", hint)
        if terminal.reason != "completed" or requests != 1:
            raise _Fail(f"the run ended {terminal.reason} after {requests} requests; expected completed after 1.",
                        "one turn with text only: no tool_use, so the loop stops after the first request.")
        return "one request, the model said 'Hello, loop!', Terminal completed at turn_count=1."

    return _verdict("hello script", body)


def check_tool_script(script: Any) -> bool:
    """Check a two-turn script: Read config.py (built-in tool, sample project), then an answer naming the value 1."""
    hint = ('turn 1: dl.reply("Let me read it.", dl.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")); '
            'turn 2: dl.reply("value is 1.")')

    def body() -> str:
        turns = _as_script(script, hint)
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

        run = _run(play)
        answers = [m for m in run.messages if m.type == "assistant"]
        calls = [b for b in assistant_tool_uses(answers[0])] if answers else []
        if not calls or calls[0].name != "Read" or calls[0].input.get("file_path") != "config.py":
            got = ", ".join(f"{c.name}({_short(c.input)})" for c in calls) or "no tool_use"
            raise _Fail(f"the first response asked for {got}; expected Read with file_path 'config.py'.", hint)
        results = [b for m in run.messages if m.type == "user" and m.source_tool_use_ids
                   for b in m.message["content"]]
        if any(r.get("is_error") for r in results):
            raise _Fail(f"a tool_result came back with is_error: {_short(results[0].get('content'))}", hint)
        if run.terminal.reason != "completed" or run.terminal.turn_count != 2:
            raise _Fail(f"the run ended {run.terminal.reason} at turn_count={run.terminal.turn_count}; "
                        "expected completed at turn_count=2.", "exactly two turns: one tool_use, then a text answer.")
        if "1" not in _text_of(answers[-1].message):
            raise _Fail("the final answer does not mention the value 1.", hint)
        return "Read(config.py) ran, its tool_result went back, and the answer came at turn_count=2."

    return _verdict("tool script", body)


def _as_script(script: Any, hint: str) -> list[S.Turn]:
    if isinstance(script, S.Turn):
        raise _Fail("you passed one Turn, not a script.", "wrap it in a list: [dl.reply(...)]")
    if isinstance(script, str) or not isinstance(script, Sequence) or not script:
        raise _Fail(f"expected a non-empty list of turns, got {type(script).__name__}.", hint)
    wrong = [type(t).__name__ for t in script if not isinstance(t, S.Turn)]
    if wrong:
        raise _Fail(f"every item must be a Turn (made with dl.reply(...)); found {wrong[0]}.", hint)
    return list(script)


