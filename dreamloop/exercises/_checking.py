"""What every chapter's checks share: the verdict printer, running a learner's code safely, a tiny Read tool.

A check body returns the ✅ summary or raises ``_Fail(problem, hint)``; ``_verdict`` prints it and
returns a ``Verdict`` (truthy when passed, shown as nothing in a notebook, so a check cell shows only
the printed line) and never raises. ``_run`` runs async work on a fresh event loop in a worker thread
(a notebook's loop is already running); ``_call`` turns any exception in the learner's code into a
``_Fail``, and an untouched stub's ``NotImplementedError`` into the first rung of the hint ladder.

The hint ladder: the untouched exercise's first ❌ says what to do (never the answer); each later ❌
names the idea the answer got wrong; the code of the answer is only in ``notebooks/solutions/``.
Every text a check prints goes through ``tr`` (``dreamloop.language``): English by default, Chinese after
``language("zh")``; a new text needs its entry in ``dreamloop/zh/`` (a test says which are missing).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from anthropic.types import Message, ToolUseBlock
from pydantic import BaseModel, ValidationError

from ..language import N_, tr
from ..messages import block_field
from ..model import AnthropicModel
from ..tools import FunctionTool

TIMEOUT_S = 20.0
"""How long a check waits for the learner's code before it reports a hang."""

_MODEL = "claude-scripted-1"


# ---------------------------------------------------------------------------
# Reporting: one verdict per check, never an exception


class Verdict:
    """What a check returns: ``bool(verdict)`` is True when it passed (``verdict == True`` too).

    It displays as nothing in a notebook (``_ipython_display_`` shows nothing): the check has already
    printed its ✅ / ❌ line, so a check cell shows that line and its hint, never a stray True/False.
    """

    __slots__ = ("passed",)

    def __init__(self, passed: bool) -> None:
        self.passed = bool(passed)

    def __bool__(self) -> bool:
        return self.passed

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (bool, Verdict)):
            return self.passed == bool(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.passed)

    def __repr__(self) -> str:
        return f"Verdict(passed={self.passed})"

    def _ipython_display_(self) -> None:
        """Nothing to show: the ✅ / ❌ line is already printed above."""


class _Fail(Exception):
    """A ❌ verdict: what is wrong, and a hint on how to fix it."""

    def __init__(self, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


def _verdict(title: str, body: Callable[[], str]) -> Verdict:
    """Run ``body`` (which returns the ✅ summary or raises ``_Fail``); print the verdict; never raise.

    ``title`` and the texts ``body`` returns or raises are already in the learner's language (``tr``).
    """
    try:
        summary = body()
    except _Fail as fail:
        print(_failed(title, fail.problem, fail.hint))
        return Verdict(False)
    except BaseException as exc:  # noqa: BLE001 - a check must never raise, not even on Ctrl-C
        if isinstance(exc, KeyboardInterrupt):
            print(_failed(title, tr("interrupted before the check finished."), tr("run the cell again.")))
        else:
            print(_failed(title, tr("the check could not run your answer ({kind}: {error}).",
                                    kind=type(exc).__name__, error=_short(exc)),
                          tr("make sure the cell that defines your answer ran without errors, then run this one "
                             "again.")))
        return Verdict(False)
    print(tr("✅ {title}: {summary}", title=title, summary=summary))
    return Verdict(True)


def _failed(title: str, problem: str, hint: str) -> str:
    return tr("❌ {title}: {problem}\n   Hint: {hint}", title=title, problem=problem, hint=hint)


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
            tr("your code did not finish within {timeout:g} s.", timeout=timeout),
            tr("look for a loop that never ends (a while True without a return, or one that never awaits); "
               "if the kernel stays busy, restart it (Kernel → Restart Kernel)."),
        )
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _call(what: str, fn: Callable[..., Any], *args: Any, hint: str, todo: str = "") -> Any:
    """Call the learner's ``fn`` (sync or async); turn any exception into a ``_Fail`` naming it.

    ``todo`` says what the function should do, for the untouched stub (``NotImplementedError``): the
    first rung of the hint ladder. ``hint`` is for any other exception. Both are already translated.
    """
    try:
        value = fn(*args)
        if inspect.isawaitable(value):
            value = await value
        return value
    except NotImplementedError as exc:
        raise _Fail(tr("{what} raised NotImplementedError({error!r}): the exercise is not done yet.",
                       what=what, error=_stub_message(_short(exc))), _replace_stub(todo)) from None
    except ValidationError as exc:  # a model built with a wrong field: said as a sentence, not pydantic's dump
        raise _Fail(tr("{what} built a {model} that pydantic refused: {error}", what=what, model=exc.title,
                       error=_validation_sentence(exc)), _validation_hint(exc) or hint) from None
    except BaseException as exc:  # noqa: BLE001 - the learner's exception becomes the verdict
        explained = _explain(exc)
        raise _Fail(tr("{what} raised {kind}: {error}", what=what, kind=type(exc).__name__, error=explained),
                    _api_hint(explained, hint)) from None


def _validation_sentence(exc: ValidationError) -> str:
    """A pydantic ``ValidationError`` as one line: each refused field, what it got, and pydantic's reason."""
    said = []
    for error in exc.errors()[:3]:
        field = ".".join(str(part) for part in error["loc"]) or exc.title
        said.append(tr("{field} got {value} ({reason})", field=field, value=_short(repr(error.get("input")), 60),
                       reason=error["msg"]))
    return "; ".join(said)


def _validation_hint(exc: ValidationError) -> str | None:
    """For a field given a plain value where a dreamloop class belongs (``transition="next_turn"``): build it."""
    import dreamloop

    for error in exc.errors():
        found = re.search(r"instance of (\w+)", error["msg"])
        if found and found.group(1) in dreamloop.__all__ and error["loc"]:
            return tr("{field} takes a dl.{kind}, not a {given}: build one, dl.{kind}(...), as the chapter does.",
                      field=error["loc"][0], kind=found.group(1), given=type(error.get("input")).__name__)
    return None


_STUB_MESSAGES = frozenset({
    N_("return the tool_use blocks of response.content"),
    N_("call the model, find tool_use, run tools, append, repeat"),
    N_("one tool_result per call; failures become is_error results"),
    N_("answer every call, in call order"),
    N_("async for over the run, then run.terminal"),
    N_("return dl.State(messages=..., turn_count=..., transition=...)"),
    N_("return (requests, tool_batches, reason, turn_count)"),
    N_("return the memory files, in the order they are sent"),
    N_("return the (type, what) pairs phase 5 attaches"),
    N_("return a list of batches, each a list of tool_use ids"),
    N_("Allow the test command; otherwise the tool's own decision"),
    N_("return the names of the queued calls that may start now"),
    N_("return {'role': 'user', 'content': [...]}"),
    N_("return the index where the kept tail starts"),
    N_("the first threshold-triggered stage that acts, or None"),
    N_("the tool_use ids of the results to clear"),
    N_("block while the tests fail, None when they pass"),
    N_("deny a recursive rm, None for anything else"),
    N_("escalate once, then resume at most 3 times"),
    N_("the ids a failed attempt withdraws"),
    N_("True to go on, False to stop"),
    N_("the phase where the loop decides it"),
    N_("a script whose run goes through those transitions, then ends completed"),
    N_("the switches explained by this chapter"),
    N_("split the calls left without a result into saved and lost"),
    N_("find the first checkpoint whose run was interrupted"),
    N_("count the main thread's model calls"),
    N_("Claude Code's (requests, ending) on this scenario"),
    N_("one count per request: the reminders it added"),
    N_("'parent' or the prompt of the sub-agent that sent it, per request"),
    N_("the number of the first request that carries the notification, or None"),
})
"""The messages of the untouched exercises' ``raise NotImplementedError(...)``, as the chapters write them: a
check shows such a message in the learner's language (the chapter's code is the same in both editions)."""


def _stub_message(message: str) -> str:
    """An untouched exercise's message in the learner's language; any other message as the learner wrote it."""
    return tr(message) if message in _STUB_MESSAGES else message


def _replace_stub(todo: str) -> str:
    """The first rung of the ladder for a stub that still raises NotImplementedError: what to write."""
    if todo:
        return tr("replace the `raise NotImplementedError(...)` line with your code: {todo}", todo=todo)
    return tr("replace the `raise NotImplementedError(...)` line with your code.")


def _explain(exc: BaseException) -> str:
    """The learner-facing text of an exception, naming the offline API's verdicts."""
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        text = body["error"].get("message", text)
    if "ScriptExhausted" in text or "script has no item" in text:
        return tr(_EXHAUSTED)
    if status == 400:
        return tr("the offline API answered 400 invalid_request_error: {message}", message=_short(text))
    return _short(text)


_EXHAUSTED = N_("the model was asked more often than the script has turns: the loop did not stop when a "
               "response had no tool_use.")
"""What a learner's loop that asked the model once too often is told (``tr(_EXHAUSTED)`` is in its ❌ line)."""

_API_RULE_HINTS = {
    "unexpected `tool_use_id`": N_("a tool_result must answer a tool_use of the message just before it: "
                                   "append the assistant message (the response's content) before the results."),
    "were found without `tool_result`": N_("every tool_use needs its tool_result in the very next user message."),
    "Did not find": N_("the tool_result blocks must come first in the user message; text goes after them."),
    "content blocks must": N_("don't send empty text blocks."),
    "non-empty content": N_("don't send a message with empty content."),
}
"""The offline API's 400 wording (English, as the real API's) → the rule it names, as a hint."""


def _api_hint(text: str, default: str) -> str:
    """The hint for an offline-API 400 message: the rule it names, else ``default``."""
    return next((tr(hint) for key, hint in _API_RULE_HINTS.items() if key in text), default)


def _require_callable(fn: Any, name: str) -> None:
    if not callable(fn):
        raise _Fail(tr("expected a function, got {kind} {value}.", kind=type(fn).__name__,
                       value=_short(repr(fn), 80)),
                    tr("pass the function itself: check(...)({name}) without calling it first.", name=name))


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
    content = block_field(message, "content", None) or []
    if isinstance(content, str):
        return content
    return "".join(block_field(b, "text", "") for b in content if block_field(b, "type", None) == "text")


# ---------------------------------------------------------------------------
# Building blocks the checks of several chapters use


def _message(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> Message:
    return Message.model_validate({
        "id": "msg_check", "type": "message", "role": "assistant", "model": _MODEL, "content": list(blocks),
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    })


def _use(id: str, name: str = "Read", **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id, "name": name, "input": input or {"file_path": "config.py"}}


def _tool_use_blocks(*blocks: dict[str, Any]) -> list[ToolUseBlock]:
    return [ToolUseBlock.model_validate(b) for b in blocks]
