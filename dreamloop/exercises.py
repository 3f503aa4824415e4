"""The chapters' exercise checks: each compares a learner's answer with the package, the answer key.

Every ``check_*`` prints "✅ <what passed>" or "❌ <what is wrong>" plus a
"Hint:" line, returns True or False, and never raises: a wrong answer, a
wrong type, an exception in the learner's code (``NotImplementedError`` from
an unfinished stub included) and a hang all end as a ❌ that says what to fix.
Checks are plain calls, also for ``async def`` answers: code that needs the
model runs against the offline API on a fresh event loop in a worker thread
(a notebook's own loop is already running). This module knows nothing about
notebooks or widgets.

    import dreamloop.exercises as ex
    ex.check_four_steps(my_agent_loop)     # chapter 01
"""

from __future__ import annotations

import asyncio
import inspect
import json
import shutil
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from anthropic.types import Message, ToolUseBlock
from pydantic import BaseModel, ConfigDict

from . import scripts as S
from .cli import allow_test_commands
from .deps import QueryDeps, counting_uuids
from .fake_api import validate_request
from .messages import AssistantMessage, assistant_tool_uses, user_message
from .minimal import agent_loop
from .model import AnthropicModel, offline
from .query import QueryParams, query
from .state import State
from .tools import (
    Allow,
    Ask,
    Deny,
    FunctionTool,
    ToolUseContext,
    builtin_tools,
    partition_tool_calls,
    run_tools,
    tool_results_message,
)

__all__ = [
    "check_answer_tool_uses",
    "check_can_use_tool",
    "check_close_dangling",
    "check_find_tool_uses",
    "check_four_steps",
    "check_hello_script",
    "check_last_answer",
    "check_max_turns",
    "check_next_state",
    "check_partition",
    "check_setup",
    "check_tool_definition",
    "check_tool_script",
]

TIMEOUT_S = 20.0
"""How long a check waits for the learner's code before it reports a hang."""

_MODEL = "claude-scripted-1"


# ---------------------------------------------------------------------------
# Reporting: one verdict per check, never an exception


class _Fail(Exception):
    """A ❌ verdict: what is wrong, and a hint on how to fix it."""

    def __init__(self, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def _verdict(title: str, body: Callable[[], str]) -> bool:
    """Run ``body`` (which returns the ✅ summary or raises ``_Fail``); print the verdict; never raise."""
    try:
        summary = body()
    except _Fail as fail:
        print(f"❌ {title}: {fail.problem}\n   Hint: {fail.hint}")
        return False
    except BaseException as exc:  # noqa: BLE001 - a check must never raise, not even on Ctrl-C
        if isinstance(exc, KeyboardInterrupt):
            print(f"❌ {title}: interrupted before the check finished.\n   Hint: run the cell again.")
        else:
            print(f"❌ {title}: the check could not run your answer ({type(exc).__name__}: {_short(exc)}).\n"
                  "   Hint: make sure the cell that defines your answer ran without errors, then run this one again.")
        return False
    print(f"✅ {title}: {summary}")
    return True


def _short(value: Any, limit: int = 220) -> str:
    """One line of at most ``limit`` characters (JSON for dicts and lists)."""
    if isinstance(value, (dict, list, tuple)):
        try:
            text = json.dumps(value, default=_json_default)
        except (TypeError, ValueError):
            text = repr(value)
    elif isinstance(value, BaseException):
        text = str(value) or type(value).__name__
    else:
        text = str(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return repr(value)


def _run(make: Callable[[], Awaitable[Any]], timeout: float | None = None) -> Any:
    """``await make()`` on a fresh event loop in a worker thread; its value, or its exception raised here.

    A notebook's event loop is already running (no ``asyncio.run`` there), and
    the learner's code may block; the worker keeps both problems out of the
    kernel's loop. A run that outlives ``timeout`` is reported as a hang (the
    thread is a daemon and is left to finish on its own).
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = exc

    timeout = TIMEOUT_S if timeout is None else timeout
    worker = threading.Thread(target=target, name="dreamloop-exercise-check", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise _Fail(
            f"your code did not finish within {timeout:g} s.",
            "look for a loop that never ends (a while True without a return, or one that never awaits); "
            "if the kernel stays busy, restart it (Kernel → Restart Kernel).",
        )
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _call(what: str, fn: Callable[..., Any], *args: Any, hint: str) -> Any:
    """Call the learner's ``fn`` (sync or async); turn any exception into a ``_Fail`` naming it."""
    try:
        value = fn(*args)
        if inspect.isawaitable(value):
            value = await value
        return value
    except NotImplementedError as exc:
        raise _Fail(f"{what} raised NotImplementedError({_short(exc)!r}).",
                    "replace the `raise NotImplementedError(...)` line with your code.") from None
    except BaseException as exc:  # noqa: BLE001 - the learner's exception becomes the verdict
        explained = _explain(exc)
        raise _Fail(f"{what} raised {type(exc).__name__}: {explained}", _api_hint(explained, hint)) from None


def _explain(exc: BaseException) -> str:
    """The learner-facing text of an exception, naming the offline API's verdicts."""
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        text = body["error"].get("message", text)
    if "ScriptExhausted" in text or "script has no item" in text:
        return ("the model was asked more often than the script has turns: the loop did not stop when a "
                "response had no tool_use.")
    if status == 400:
        return f"the offline API answered 400 invalid_request_error: {_short(text)}"
    return _short(text)


_API_RULE_HINTS = {
    "unexpected `tool_use_id`": "a tool_result must answer a tool_use of the message just before it: "
                                "append the assistant message (the response's content) before the results.",
    "were found without `tool_result`": "every tool_use needs its tool_result in the very next user message.",
    "Did not find": "the tool_result blocks must come first in the user message; text goes after them.",
    "content blocks must": "don't send empty text blocks.",
    "non-empty content": "don't send a message with empty content.",
}


def _api_hint(text: str, default: str) -> str:
    """The hint for an offline-API 400 message: the rule it names, else ``default``."""
    return next((hint for key, hint in _API_RULE_HINTS.items() if key in text), default)


def _require_callable(fn: Any, name: str) -> None:
    if not callable(fn):
        raise _Fail(f"expected a function, got {type(fn).__name__} {_short(repr(fn), 80)}.",
                    f"pass the function itself: check(...)({name}) without calling it first.")


def _field(block: Any, key: str, default: Any = None) -> Any:
    if isinstance(block, dict):
        return block.get(key, default)
    return getattr(block, key, default)


# ---------------------------------------------------------------------------
# Shared fixtures: a tiny file system and a Read tool over it


class _ReadInput(BaseModel):
    file_path: str


_FILES = {"config.py": "value = 1\n", "greeter.py": 'name = "greeter"\n', "notes.md": "Remember: value must be 2.\n"}
"""The files the checks' Read tool can see."""


def _read_file(file_path: str) -> str:
    if file_path not in _FILES:
        raise FileNotFoundError(f"no such file: {file_path}")
    return _FILES[file_path]


def _read_tool() -> FunctionTool:
    return FunctionTool(lambda input: _read_file(input.file_path), _ReadInput, name="Read",
                        description="Read a text file.", read_only=True)


def _dispatch(name: str, input: dict[str, Any]) -> str:
    """The learner's ``run_tool(name, input)`` for the checks' tools."""
    if name != "Read":
        raise KeyError(f"no tool named {name}")
    return _read_file(**input)


def _api_requests(model: AnthropicModel) -> list[Any]:
    return [r for r in model.api.requests if r.path.endswith("/v1/messages")]


def _text_of(message: Any) -> str:
    content = _field(message, "content") or []
    if isinstance(content, str):
        return content
    return "".join(_field(b, "text", "") for b in content if _field(b, "type") == "text")


# ---------------------------------------------------------------------------
# Chapter 00: setup and a tour


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
        from .demo import copy_sample_project

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


# ---------------------------------------------------------------------------
# Chapter 01: the four-step loop


def _message(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> Message:
    return Message.model_validate({
        "id": "msg_check", "type": "message", "role": "assistant", "model": _MODEL, "content": list(blocks),
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    })


def _use(id: str, name: str = "Read", **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input or {"file_path": "config.py"}}


def check_find_tool_uses(fn: Any) -> bool:
    """Check step 2: ``fn(response) -> list`` returns the response's tool_use blocks, in order, and nothing else."""
    hint = 'keep the blocks whose .type is "tool_use", in the order they come: [b for b in response.content if ...]'
    cases = {
        "text only": _message(S.text("Hello!")),
        "text + one tool_use": _message(S.text("Let me read it."), _use("toolu_1"), stop_reason="tool_use"),
        "two tool_use blocks": _message(_use("toolu_1"), _use("toolu_2", file_path="greeter.py"), stop_reason="tool_use"),
        "text between calls": _message(_use("toolu_7"), S.text("and also"), _use("toolu_3"), stop_reason="tool_use"),
        "thinking, then a call": _message({"type": "thinking", "thinking": "config.py first", "signature": "c2ln"},
                                          _use("toolu_1"), stop_reason="tool_use"),
        "stop_reason tool_use, no block": _message(S.text("Let me look"), stop_reason="tool_use"),
        "stop_reason end_turn, with a block": _message(S.text("Reading."), _use("toolu_4"), stop_reason="end_turn"),
    }

    def body() -> str:
        _require_callable(fn, "find_tool_uses")
        for name, response in cases.items():
            expected = [b.id for b in assistant_tool_uses(AssistantMessage(message=response))]
            got = _run(lambda: _call("find_tool_uses(response)", fn, response, hint=hint))
            if not isinstance(got, (list, tuple)):
                raise _Fail(f"for '{name}' it returned {type(got).__name__}, not a list.", hint)
            ids = [_field(b, "id") for b in got]
            if ids != expected:
                raise _Fail(f"for '{name}' it found tool_use ids {ids}; the response has {expected}.",
                            "needs_follow_up comes from the blocks, never from stop_reason; " + hint
                            if name.startswith("stop_reason") else hint)
        return f"{len(cases)} responses, the same tool_use blocks as dreamloop found (stop_reason never decides)."

    return _verdict("find tool_use blocks", body)


def _four_step_scripts() -> dict[str, list[S.Turn]]:
    return {
        "one Read": [S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                     S.reply("value is 1.")],
        "two calls in one response": [
            S.reply(S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1"),
                    S.tool_use("Read", {"file_path": "notes.md"}, id="toolu_2")),
            S.reply("value is 1 and should be 2.")],
        "two tool turns": [
            S.reply("First config.py.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
            S.reply("Now the notes.", S.tool_use("Read", {"file_path": "notes.md"}, id="toolu_2")),
            S.reply("value is 1; the notes want 2.")],
        "no tool at all": [S.reply("Hello! No tools needed.")],
    }


def check_four_steps(fn: Any) -> bool:
    """Check a whole loop: ``await fn(model, messages, tools, run_tool)`` must send the same requests as
    ``dreamloop.agent_loop`` on four scripts and return the last response.

    ``tools`` is a list of tool definitions (dicts for the API), ``run_tool(name, input) -> str`` runs one.
    """
    hint = ("1 call the model with messages and tools; 2 keep the tool_use blocks, none → return the response; "
            "3 one tool_result per call with its tool_use_id; 4 append the assistant message, then a user message "
            "of the results; go round.")

    def body() -> str:
        _require_callable(fn, "my_agent_loop")
        sent = 0
        for name, script in _four_step_scripts().items():
            prompt = [{"role": "user", "content": "What is value in config.py?"}]

            async def reference() -> list[Any]:
                model = offline(script, max_retries=0)
                await agent_loop(model, list(prompt), [_read_tool()])
                return [r.body for r in _api_requests(model)]

            async def learner() -> tuple[list[Any], Any]:
                model = offline(script, max_retries=0)
                tools = [_read_tool().to_api()]
                try:
                    final = await _call("my_agent_loop(...)", fn, model, list(prompt), tools, _dispatch, hint=hint)
                finally:
                    bodies = [(r.status, r.body, r.error) for r in _api_requests(model)]
                return bodies, final

            expected = _run(reference)
            got, final = _run(learner)
            for i, (status, request, error) in enumerate(got):
                if status == 400:
                    message = (error or {}).get("message", "")
                    raise _Fail(f"script '{name}', request {i + 1}: the offline API answered 400: {_short(message)}",
                                _api_hint(message, hint))
            if len(got) < len(expected):
                raise _Fail(f"script '{name}': your loop sent {len(got)} request(s); dreamloop.agent_loop sent "
                            f"{len(expected)}.", "go round again while the response has tool_use blocks; " + hint)
            for i, (want, (_, request, _)) in enumerate(zip(expected, got)):
                _compare_request(name, i, want, request, hint)
            if len(got) > len(expected):
                raise _Fail(f"script '{name}': your loop sent {len(got)} requests; expected {len(expected)}.",
                            "stop (return the response) when it has no tool_use block.")
            if _text_of(final) != _text_of_script_end(script):
                raise _Fail(f"script '{name}': your loop returned {_short(repr(final), 80)}; expected the last response.",
                            "return the model's response (the Message) when it asks for no tool.")
            sent += len(got)
        return f"4 scripts, {sent} requests, each one the same as dreamloop.agent_loop sent."

    return _verdict("four steps", body)


def _text_of_script_end(script: list[S.Turn]) -> str:
    return "".join(b["text"] for b in script[-1].content if b["type"] == "text")


def _compare_request(script: str, i: int, want: dict[str, Any], got: dict[str, Any] | None, hint: str) -> None:
    where = f"script '{script}', request {i + 1}"
    if got is None:
        raise _Fail(f"{where}: the request body was not JSON.", hint)
    if [t.get("name") for t in got.get("tools", [])] != [t.get("name") for t in want.get("tools", [])]:
        raise _Fail(f"{where}: tools {[t.get('name') for t in got.get('tools', [])]}; expected "
                    f"{[t.get('name') for t in want.get('tools', [])]}.", "send the tool definitions with every request.")
    want_messages, got_messages = want["messages"], got.get("messages", [])
    want_roles, got_roles = [m["role"] for m in want_messages], [m.get("role") for m in got_messages]
    if got_roles != want_roles:
        raise _Fail(f"{where}: message roles {got_roles}; dreamloop.agent_loop sent {want_roles}.", hint)
    for j, (w, g) in enumerate(zip(want_messages, got_messages)):
        if _normal(w["content"]) != _normal(g.get("content")):
            raise _Fail(f"{where}, messages[{j}] ({w['role']}): you sent {_short(g.get('content'), 160)}; "
                        f"expected {_short(w['content'], 160)}.", hint)


def _normal(content: Any) -> Any:
    """Content with the optional ``is_error: false`` removed (the API treats both alike)."""
    if isinstance(content, list):
        return [{k: v for k, v in b.items() if not (k == "is_error" and v is False)} if isinstance(b, dict) else b
                for b in content]
    return content


# ---------------------------------------------------------------------------
# Chapter 02: tool_use / tool_result pairing


def _tool_use_blocks(*blocks: dict[str, Any]) -> list[ToolUseBlock]:
    return [ToolUseBlock.model_validate(b) for b in blocks]


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
                           hint: str, error_hint: str) -> None:
    if not isinstance(got, dict) or got.get("role") != "user" or not isinstance(got.get("content"), list):
        raise _Fail(f"for '{case}' it returned {_short(got, 120)}; expected a user message "
                    '{"role": "user", "content": [tool_result blocks]}.', hint)
    blocks = got["content"]
    ids = [_field(b, "tool_use_id") for b in blocks]
    want_ids = [b["tool_use_id"] for b in expected]
    if ids != want_ids:
        raise _Fail(f"for '{case}' the tool_result ids are {ids}; the calls were {want_ids}.",
                    "one tool_result per tool_use, same id, in call order; " + hint)
    for block, want in zip(blocks, expected):
        if _field(block, "type") != "tool_result":
            raise _Fail(f"for '{case}' a block has type {_field(block, 'type')!r}.", 'each block is {"type": "tool_result", ...}.')
        failed, should_fail = bool(_field(block, "is_error", False)), bool(want.get("is_error"))
        if failed != should_fail:
            raise _Fail(f"for '{case}' the result of {want['tool_use_id']} has is_error={failed}; expected {should_fail}.",
                        error_hint)
        content = _field(block, "content")
        if should_fail:
            if not content or (isinstance(content, str) and not content.strip()):
                raise _Fail(f"for '{case}' the error result of {want['tool_use_id']} has no text.",
                            "say what went wrong, the model reads it: " + error_hint)
        elif content != want["content"]:
            raise _Fail(f"for '{case}' the content of {want['tool_use_id']} is {_short(content, 80)}; "
                        f"expected {_short(want['content'], 80)}.", hint)
    problem = _accepted(tool_uses, got)
    if problem:
        raise _Fail(f"for '{case}' the offline API would answer 400: {problem}", hint)


def check_answer_tool_uses(fn: Any) -> bool:
    """Check step 3 with failures: ``fn(tool_uses, functions) -> user message`` answers every call, by id,
    in call order; an unknown tool and a function that raises become ``is_error`` results.

    Compared with ``dreamloop.run_tools`` on the same calls; the answer must also pass the offline API's rules.
    """
    hint = ('return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, '
            '"content": functions[use.name](**use.input)} for use in tool_uses]}')
    error_hint = ('an unknown tool or an exception is a result too: {"type": "tool_result", "tool_use_id": use.id, '
                  '"content": "Error: ...", "is_error": True}; never let it escape the loop.')
    functions = {"Read": _read_file}
    cases = {
        "one call": _tool_use_blocks(_use("toolu_1")),
        "two calls": _tool_use_blocks(_use("toolu_1"), _use("toolu_2", file_path="notes.md")),
        "same tool twice, ids out of order": _tool_use_blocks(_use("toolu_9", file_path="greeter.py"), _use("toolu_4")),
        "unknown tool": _tool_use_blocks(_use("toolu_1"), _use("toolu_2", name="Wrte", file_path="x.py")),
        "tool raises": _tool_use_blocks(_use("toolu_1", file_path="missing.py"), _use("toolu_2")),
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
                                     hint=error_hint))
            _check_results_message(case, got, expected, tool_uses, hint, error_hint)
        return f"{len(cases)} cases: every tool_use answered by id, in call order, failures as is_error results."

    return _verdict("answer every tool_use", body)


def check_close_dangling(fn: Any) -> bool:
    """Check ``fn(tool_uses, results) -> user message`` (the source's ``yieldMissingToolResultBlocks()``):
    every call answered in call order, collected results kept, the missing ones as ``is_error`` results.

    ``results`` maps tool_use_id → tool_result block, in completion order. Compared with
    ``dreamloop.tools.tool_results_message``; the answer must also pass the offline API's rules.
    """
    hint = ("walk tool_uses, not results: the calls fix the order, and each one needs an answer. Use the "
            'result that arrived, else an is_error result with the text "Interrupted by user".')

    def done(id: str, text: str) -> dict[str, Any]:
        return {"type": "tool_result", "tool_use_id": id, "content": text}

    three = _tool_use_blocks(_use("toolu_1"), _use("toolu_2", file_path="notes.md"), _use("toolu_3", file_path="greeter.py"))
    cases = {
        "all finished, in completion order 3, 1, 2": (three, {"toolu_3": done("toolu_3", "c"), "toolu_1": done("toolu_1", "a"),
                                                              "toolu_2": done("toolu_2", "b")}),
        "the second one never finished": (three, {"toolu_3": done("toolu_3", "c"), "toolu_1": done("toolu_1", "a")}),
        "none finished": (three, {}),
        "one call, finished with an error": (three[:1], {"toolu_1": {**done("toolu_1", "Error: boom"), "is_error": True}}),
    }

    def body() -> str:
        _require_callable(fn, "close_dangling")
        for case, (tool_uses, results) in cases.items():
            expected = tool_results_message(tool_uses, results).message["content"]
            got = _run(lambda: _call("close_dangling(tool_uses, results)", fn, tool_uses, dict(results), hint=hint))
            _check_results_message(case, got, expected, tool_uses, hint,
                                   "a call without a result gets an is_error result; one that has a result keeps it.")
        return f"{len(cases)} cases: every call answered in call order, dangling ones as is_error results."

    return _verdict("close dangling tool_use", body)


# ---------------------------------------------------------------------------
# Chapter 03: queryLoop()


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


# ---------------------------------------------------------------------------
# Chapter 04: tools


def check_tool_definition(tool: Any) -> bool:
    """Check a ``WordCount`` tool: schema from its pydantic input (``text: str``, ``unique: bool = False``),
    read-only and concurrency-safe, right results, and bad input turned into ``is_error`` results."""
    hint = ("class WordCountInput(BaseModel): text: str; unique: bool = False — then "
            "@dl.tool(WordCountInput, name=\"WordCount\", read_only=True) on a function returning str(count).")

    def body() -> str:
        if not hasattr(tool, "to_api") or not hasattr(tool, "input_model"):
            raise _Fail(f"expected a tool (made with @dl.tool or a BaseTool subclass), got {type(tool).__name__}.", hint)
        if getattr(tool, "name", None) != "WordCount":
            raise _Fail(f"the tool is named {getattr(tool, 'name', None)!r}; expected 'WordCount'.", hint)
        schema = tool.to_api().get("input_schema", {})
        props = schema.get("properties", {})
        if props.get("text", {}).get("type") != "string" or props.get("unique", {}).get("type") != "boolean":
            raise _Fail(f"input_schema properties are {_short(props, 160)}; expected text (string) and unique (boolean).", hint)
        if schema.get("required") != ["text"]:
            raise _Fail(f"input_schema required is {schema.get('required')}; expected ['text'] (unique has a default).", hint)
        sample = tool.input_model.model_validate({"text": "a b"})
        if not (tool.is_read_only(sample) and tool.is_concurrency_safe(sample)):
            raise _Fail("the tool is not read-only and concurrency-safe.",
                        "counting words changes nothing: read_only=True (concurrency_safe follows it).")
        calls = [
            ({"text": "the cat saw the dog"}, False, "5"),
            ({"text": "the cat saw the dog", "unique": True}, False, "4"),
            ({"text": "  spaced   out\nwords "}, False, "3"),
            ({}, True, "InputValidationError"),
            ({"text": "hi", "unique": "maybe"}, True, "InputValidationError"),
        ]
        uses = [{"type": "tool_use", "id": f"toolu_{i + 1}", "name": "WordCount", "input": c[0]} for i, c in enumerate(calls)]

        async def run_calls() -> list[dict[str, Any]]:
            context = ToolUseContext(tools=[tool])
            messages = [m async for m in run_tools(uses, context) if m.type == "user"]
            return messages[-1].message["content"]

        results = _run(run_calls)
        for (input, should_fail, want), result in zip(calls, results):
            failed = bool(result.get("is_error"))
            if failed and not should_fail:
                raise _Fail(f"WordCount({_short(input)}) failed: {_short(result['content'], 160)}", hint)
            if should_fail and not (failed and want in str(result["content"])):
                raise _Fail(f"WordCount({_short(input)}) should be an InputValidationError result, got "
                            f"{_short(result['content'], 100)}.", "let the pydantic model validate: no defaults for text, "
                            "unique typed bool.")
            if not should_fail and str(result["content"]).strip() != want:
                raise _Fail(f"WordCount({_short(input)}) returned {_short(result['content'], 60)!r}; expected {want!r}.",
                            "split on whitespace (text.split()); with unique, count the distinct words (len(set(...))).")
        return "schema from pydantic, read-only and concurrency-safe, 3 right answers, 2 bad inputs as is_error results."

    return _verdict("WordCount tool", body)


def _partition_cases() -> dict[str, list[dict[str, Any]]]:
    def read(i: str, path: str = "config.py") -> dict[str, Any]:
        return _use(i, "Read", file_path=path)

    def edit(i: str) -> dict[str, Any]:
        return _use(i, "Edit", file_path="config.py", old_string="1", new_string="2")

    def bash(i: str, command: str) -> dict[str, Any]:
        return _use(i, "Bash", command=command)

    return {
        "R R W R": [read("toolu_1"), read("toolu_2", "notes.md"), edit("toolu_3"), read("toolu_4")],
        "one read": [read("toolu_1")],
        "two edits": [edit("toolu_1"), edit("toolu_2")],
        "unknown tool between reads": [read("toolu_1"), _use("toolu_2", "Wrte", file_path="x"), read("toolu_3")],
        "invalid input": [read("toolu_1"), _use("toolu_2", "Read", path="config.py"), read("toolu_3")],
        "Bash depends on the command": [bash("toolu_1", "ls"), bash("toolu_2", "cat config.py"),
                                        bash("toolu_3", "python -m unittest"), bash("toolu_4", "ls tests")],
    }


def check_partition(fn: Any) -> bool:
    """Check ``fn(tool_uses, tools) -> list of batches`` (each a list of tool_use ids or blocks), against
    ``dreamloop.tools.partition_tool_calls``: consecutive concurrency-safe calls share a batch, others run alone."""
    hint = ("for each call: find the tool by name, validate the input (tool.input_model.model_validate), ask "
            "tool.is_concurrency_safe(parsed); unknown or invalid → unsafe. Add a safe call to the last batch if that "
            "batch is safe, else start a new batch.")

    def body() -> str:
        _require_callable(fn, "partition")
        tools = builtin_tools()
        for case, uses in _partition_cases().items():
            blocks = _tool_use_blocks(*uses)
            want = [[b.id for b in batch.tool_uses] for batch in partition_tool_calls(blocks, tools)]
            got = _run(lambda: _call("partition(tool_uses, tools)", fn, blocks, tools, hint=hint))
            try:
                ids = [[b if isinstance(b, str) else _field(b, "id") for b in batch] for batch in got]
            except TypeError:
                raise _Fail(f"for '{case}' it returned {_short(repr(got), 100)}; expected a list of lists.", hint) from None
            if ids != want:
                raise _Fail(f"for '{case}' your batches are {ids}; partition_tool_calls gives {want}.", hint)
        return f"{len(_partition_cases())} cases, the same batches as partition_tool_calls (input decides, not just the name)."

    return _verdict("partition tool calls", body)


def check_can_use_tool(fn: Any) -> bool:
    """Check ``async fn(tool, input, context) -> Allow | Deny | Ask``: allow Bash for the project's test command
    (``python -m unittest`` / ``python3 -m unittest``, no shell syntax), else the tool's own decision. Compared
    with ``dreamloop.cli.allow_test_commands()`` in the default mode."""
    hint = ('if tool.name == "Bash" and the command starts with "python -m unittest" or "python3 -m unittest" and '
            "contains none of ; | & $ ` < > → Allow(); otherwise return await "
            "tool.check_permissions(tool.input_model.model_validate(input), context).")
    calls = [
        ("Read", {"file_path": "config.py"}),
        ("Bash", {"command": "python -m unittest discover -s tests"}),
        ("Bash", {"command": "python3 -m unittest -v"}),
        ("Bash", {"command": "python -m unittest; rm -rf ~"}),
        ("Bash", {"command": "pip install requests"}),
        ("Bash", {"command": "ls"}),
        ("Edit", {"file_path": "config.py", "old_string": "1", "new_string": "2"}),
        ("Write", {"file_path": "../outside.txt", "content": "x"}),
    ]

    def body() -> str:
        _require_callable(fn, "can_use_tool")
        from .demo import copy_sample_project

        async def decide(policy: Any, learner: bool) -> list[Any]:
            workspace = copy_sample_project()
            try:
                tools = {t.name: t for t in builtin_tools()}
                context = ToolUseContext(tools=list(tools.values()), workspace=workspace)
                out = []
                for name, input in calls:
                    if learner:
                        out.append(await _call(f"can_use_tool({name}, {_short(input, 60)}, context)", policy,
                                               tools[name], dict(input), context, hint=hint))
                    else:
                        out.append(await policy(tools[name], dict(input), context))
                return out
            finally:
                shutil.rmtree(workspace, ignore_errors=True)

        want = _run(lambda: decide(allow_test_commands(), False))
        got = _run(lambda: decide(fn, True))
        for (name, input), w, g in zip(calls, want, got):
            if not isinstance(g, (Allow, Deny, Ask)):
                raise _Fail(f"for {name}({_short(input, 60)}) it returned {_short(repr(g), 60)}; expected Allow(), "
                            "Deny(reason) or Ask(reason).", hint)
            if type(g) is not type(w):
                raise _Fail(f"for {name}({_short(input, 60)}) you decided {type(g).__name__}; expected {type(w).__name__}.",
                            hint)
        return f"{len(calls)} calls, the same Allow / Ask / Deny as dreamloop's allow_test_commands()."

    return _verdict("can_use_tool", body)
