"""Chapter 01: the four-step loop: the exercise checks."""

from __future__ import annotations

from typing import Any

from .. import scripts as S
from ..messages import AssistantMessage, assistant_tool_uses
from ..minimal import agent_loop
from ..model import offline
from ._checking import (
    _api_hint,
    _api_requests,
    _call,
    _dispatch,
    _Fail,
    _field,
    _message,
    _read_tool,
    _require_callable,
    _run,
    _short,
    _text_of,
    _use,
    _verdict,
)

__all__ = ['check_find_tool_uses', 'check_four_steps']

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


