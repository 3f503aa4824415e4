"""Chapter 02: tool_use / tool_result pairing: the exercise checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from anthropic.types import ToolUseBlock
from pydantic import BaseModel, ConfigDict

from ..fake_api import validate_request
from ..language import N_, tr
from ..messages import block_field
from ..tools import (
    FunctionTool,
    ToolUseContext,
    run_tools,
    tool_results_message,
)
from ._checking import (
    _MODEL,
    Verdict,
    _call,
    _Fail,
    _json_default,
    _read_file,
    _require_callable,
    _run,
    _short,
    _tool_use_blocks,
    _use,
    _verdict,
)

__all__ = ["check_answer_tool_uses", "check_close_dangling"]


class _AnyInput(BaseModel):
    model_config = ConfigDict(extra="allow")


def _function_tools(functions: dict[str, Callable[..., str]]) -> list[FunctionTool]:
    def wrap(function: Callable[..., str]) -> Callable[[_AnyInput], str]:
        return lambda input: function(**input.model_dump())

    return [FunctionTool(wrap(f), _AnyInput, name=name) for name, f in functions.items()]


def _accepted(tool_uses: list[ToolUseBlock], answer: dict[str, Any]) -> str | None:
    """The offline API's 400 message for [user, assistant(tool_uses), answer], or None if it accepts it."""
    body = {
        "model": _MODEL, "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [b.model_dump(mode="json", exclude_none=True) for b in tool_uses]},
            answer,
        ],
    }
    problem = validate_request(json.loads(json.dumps(body, default=_json_default)))
    return problem.message if problem else None


def _check_results_message(case: str, got: Any, expected: list[dict[str, Any]], tool_uses: list[ToolUseBlock],
                           error_hint: str) -> None:
    """Compare a learner's results message with the package's, naming the idea each difference breaks.

    ``case`` (shown) and ``error_hint`` are already translated.
    """
    if isinstance(got, list):
        raise _Fail(tr("for '{case}' it returned a list of {count} items; expected one user message.", case=case,
                       count=len(got)),
                    tr('all the results go back together in ONE user message: {"role": "user", "content": [...]}.'))
    if not isinstance(got, dict) or got.get("role") != "user" or not isinstance(got.get("content"), list):
        raise _Fail(tr("for '{case}' it returned {value}; expected a user message {shape}.", case=case,
                       value=_short(got, 120), shape='{"role": "user", "content": [tool_result blocks]}'),
                    tr("tool results travel in a user message whose content is a list of tool_result blocks."))
    blocks = got["content"]
    if blocks and block_field(blocks[0], "type", None) != "tool_result":
        raise _Fail(tr("for '{case}' the message starts with a {kind!r} block.", case=case,
                       kind=block_field(blocks[0], "type", None)),
                    tr("the tool_result blocks come first in the message; anything else goes after them."))
    ids = [block_field(b, "tool_use_id", None) for b in blocks]
    want_ids = [b["tool_use_id"] for b in expected]
    if ids != want_ids:
        if sorted(map(str, ids)) == sorted(want_ids):
            hint = tr("the calls fix the order: answer them in the order of tool_uses, whatever order the results "
                      "came in.")
        elif set(want_ids) - set(ids):
            hint = tr("every tool_use needs a tool_result with its id, also the calls that failed or never ran: "
                      "a missing one is a 400 on the next request.")
        else:
            hint = tr("one tool_result per tool_use, each with the id of its call (tool_use_id).")
        raise _Fail(tr("for '{case}' the tool_result ids are {ids}; the calls were {expected}.", case=case, ids=ids,
                       expected=want_ids), hint)
    for block, want in zip(blocks, expected):
        failed, should_fail = bool(block_field(block, "is_error", False)), bool(want.get("is_error"))
        if failed != should_fail:
            raise _Fail(tr("for '{case}' the result of {id} has is_error={got}; expected {expected}.", case=case,
                           id=want["tool_use_id"], got=failed, expected=should_fail), error_hint)
        content = block_field(block, "content", None)
        if should_fail:
            if not content or (isinstance(content, str) and not content.strip()):
                raise _Fail(tr("for '{case}' the error result of {id} has no text.", case=case,
                               id=want["tool_use_id"]),
                            tr("say what went wrong: the model reads the error and can correct its call."))
        elif content != want["content"]:
            raise _Fail(tr("for '{case}' the content of {id} is {got}; expected {expected}.", case=case,
                           id=want["tool_use_id"], got=_short(content, 80), expected=_short(want["content"], 80)),
                        tr("a result that arrived is kept as it is: its content is what the tool returned."))
    problem = _accepted(tool_uses, got)
    if problem:
        raise _Fail(tr("for '{case}' the offline API would answer 400: {problem}", case=case, problem=problem),
                    tr("the API's own rule for the pairing is in the 400's words above."))


def check_answer_tool_uses(fn: Any) -> Verdict:
    """Check step 3 with failures: ``fn(tool_uses, functions) -> user message`` answers every call, by id,
    in call order; an unknown tool and a function that raises become ``is_error`` results.

    Compared with ``dreamloop.run_tools`` on the same calls; the answer must also pass the offline API's rules.
    """
    todo = tr("return one user message that answers every call with a tool_result (its tool_use_id, in call "
              "order); a call that fails is answered too, as an error result.")
    error_hint = tr("a failure is a result, not an exception: an unknown tool or a function that raises gets a "
                    "tool_result with is_error set to True and a text saying what went wrong.")
    functions = {"Read": _read_file}
    cases = {
        N_("one call"): _tool_use_blocks(_use("toolu_1")),
        N_("two calls"): _tool_use_blocks(_use("toolu_1"), _use("toolu_2", file_path="notes.md")),
        N_("same tool twice, ids out of order"): _tool_use_blocks(_use("toolu_9", file_path="greeter.py"),
                                                                  _use("toolu_4")),
        N_("unknown tool"): _tool_use_blocks(_use("toolu_1"), _use("toolu_2", name="Wrte", file_path="x.py")),
        N_("tool raises"): _tool_use_blocks(_use("toolu_1", file_path="missing.py"), _use("toolu_2")),
    }

    def body() -> str:
        _require_callable(fn, "answer_tool_uses")
        for case, tool_uses in cases.items():
            async def reference() -> list[dict[str, Any]]:
                context = ToolUseContext(tools=_function_tools(functions), permission_mode="bypass")
                messages = [m async for m in run_tools(tool_uses, context) if m.type == "user"]
                return messages[-1].message["content"]

            expected = _run(reference)
            got = _run(lambda: _call("answer_tool_uses(tool_uses, functions)", fn, tool_uses, dict(functions),
                                     hint=error_hint, todo=todo))
            _check_results_message(tr(case), got, expected, tool_uses, error_hint)
        return tr("{count} cases: every tool_use answered by id, in call order, failures as is_error results.",
                  count=len(cases))

    return _verdict(tr("answer every tool_use"), body)


def check_close_dangling(fn: Any) -> Verdict:
    """Check ``fn(tool_uses, results) -> user message`` (the four-step-loop text's ``yieldMissingToolResultBlocks()``):
    every call answered in call order, collected results kept, the missing ones as ``is_error`` results.

    ``results`` maps tool_use_id → tool_result block, in completion order. Compared with
    ``dreamloop.tools.tool_results_message``; the answer must also pass the offline API's rules.
    """
    todo = tr("return one user message with an answer for every call in tool_uses: the result that arrived, "
              "or an error result saying it was interrupted.")

    def done(id: str, text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": id, "content": text}

    three = _tool_use_blocks(_use("toolu_1"), _use("toolu_2", file_path="notes.md"), _use("toolu_3", file_path="greeter.py"))
    cases = {
        N_("the second one never finished"): (three, {"toolu_3": done("toolu_3", "c"),
                                                      "toolu_1": done("toolu_1", "a")}),
        N_("all finished, in completion order 3, 1, 2"): (three, {"toolu_3": done("toolu_3", "c"),
                                                                  "toolu_1": done("toolu_1", "a"),
                                                                  "toolu_2": done("toolu_2", "b")}),
        N_("none finished"): (three, {}),
        N_("one call, finished with an error"): (three[:1], {"toolu_1": {**done("toolu_1", "Error: boom"),
                                                                         "is_error": True}}),
    }

    def body() -> str:
        _require_callable(fn, "close_dangling")
        for case, (tool_uses, results) in cases.items():
            expected = tool_results_message(tool_uses, results).message["content"]
            got = _run(lambda: _call("close_dangling(tool_uses, results)", fn, tool_uses, dict(results),
                                     hint=todo, todo=todo))
            _check_results_message(tr(case), got, expected, tool_uses,
                                   tr("a call that never finished gets an error result (is_error True) saying so; "
                                      "a result that did arrive is kept as it came, error or not."))
        return tr("{count} cases: every call answered in call order, dangling ones as is_error results.",
                  count=len(cases))

    return _verdict(tr("close dangling tool_use"), body)
