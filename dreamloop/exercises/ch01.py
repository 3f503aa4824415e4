"""Chapter 01: the four-step loop: the exercise checks."""

from __future__ import annotations

from typing import Any

from .. import scripts as S
from ..language import N_, tr
from ..messages import AssistantMessage, assistant_tool_uses, block_field
from ..minimal import agent_loop
from ..model import offline
from ._checking import (
    _EXHAUSTED,
    Verdict,
    _api_hint,
    _api_requests,
    _call,
    _dispatch,
    _Fail,
    _message,
    _read_tool,
    _require_callable,
    _run,
    _short,
    _text_of,
    _use,
    _verdict,
)

__all__ = ["check_find_tool_uses", "check_four_steps"]

_STOP_REASON_HINT = N_("whether to go round again comes from the tool_use blocks in the content, never from "
                        "stop_reason: the API's stop_reason is not always reliable (queryLoop() says so).")


def check_find_tool_uses(fn: Any) -> Verdict:
    """Check step 2: ``fn(response) -> list`` returns the response's tool_use blocks, in order, and nothing else."""
    todo = tr("return the tool_use blocks of response.content, in the order they come.")
    cases = {
        N_("text only"): _message(S.text("Hello!")),
        N_("text + one tool_use"): _message(S.text("Let me read it."), _use("toolu_1"), stop_reason="tool_use"),
        N_("two tool_use blocks"): _message(_use("toolu_1"), _use("toolu_2", file_path="greeter.py"),
                                            stop_reason="tool_use"),
        N_("text between calls"): _message(_use("toolu_7"), S.text("and also"), _use("toolu_3"), stop_reason="tool_use"),
        N_("thinking, then a call"): _message({"type": "thinking", "thinking": "config.py first", "signature": "c2ln"},
                                              _use("toolu_1"), stop_reason="tool_use"),
        N_("stop_reason tool_use, no block"): _message(S.text("Let me look"), stop_reason="tool_use"),
        N_("stop_reason end_turn, with a block"): _message(S.text("Reading."), _use("toolu_4"), stop_reason="end_turn"),
    }

    def body() -> str:
        _require_callable(fn, "find_tool_uses")
        for name, response in cases.items():
            case = tr(name)
            expected = [b.id for b in assistant_tool_uses(AssistantMessage(message=response))]
            got = _run(lambda: _call("find_tool_uses(response)", fn, response, hint=todo, todo=todo))
            if not isinstance(got, (list, tuple)):
                raise _Fail(tr("for '{case}' it returned {kind} {value}, not a list.", case=case,
                               kind=type(got).__name__, value=_short(repr(got), 60)),
                            tr("return a list (even an empty one) of the blocks."))
            if any(isinstance(b, str) for b in got):
                raise _Fail(tr("for '{case}' it returned {value}: strings, not blocks.", case=case,
                               value=_short(list(got), 80)),
                            tr("return the blocks themselves: step 3 needs each call's name and input, not only "
                               "its id."))
            ids = [block_field(b, "id", None) for b in got]
            if ids == expected:
                continue
            kinds = [block_field(b, "type", None) for b in got]
            if name.startswith("stop_reason"):
                hint = tr(_STOP_REASON_HINT)
            elif any(kind != "tool_use" for kind in kinds):
                hint = tr("you returned blocks of type {kinds}: keep only the tool_use ones.",
                          kinds=sorted({str(k) for k in kinds}))
            elif set(ids) < set(expected) or len(ids) < len(expected):
                hint = tr("a response can ask for several tools at once: keep every tool_use block, not only one.")
            else:
                hint = tr("keep the tool_use blocks in the order the response has them (results go back in that "
                          "order).")
            raise _Fail(tr("for '{case}' it found tool_use ids {ids}; the response has {expected}.", case=case,
                           ids=ids, expected=expected), hint)
        return tr("{count} responses, the same tool_use blocks as dreamloop found (stop_reason never decides).",
                  count=len(cases))

    return _verdict(tr("find tool_use blocks"), body)


def _four_step_scripts() -> dict[str, tuple[list[S.Turn], str]]:
    """Each script, and the idea a loop that fails on it (only there) most likely got wrong."""
    order = N_("each call gets one tool_result with its tool_use_id, in the order of the calls.")
    return {
        N_("one Read"): ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                          S.reply("value is 1.")], N_("the four steps, once: call, find tool_use, run it, append both.")),
        N_("two calls in one response"): ([
            S.reply(S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1"),
                    S.tool_use("Read", {"file_path": "notes.md"}, id="toolu_2")),
            S.reply("value is 1 and should be 2.")], order),
        N_("two tool turns"): ([
            S.reply("First config.py.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
            S.reply("Now the notes.", S.tool_use("Read", {"file_path": "notes.md"}, id="toolu_2")),
            S.reply("value is 1; the notes want 2.")],
            N_("keep the whole history: every request carries all earlier messages, then the new ones.")),
        N_("no tool at all"): ([S.reply("Hello! No tools needed.")],
                               N_("a response without tool_use ends the loop at once.")),
        N_("stop_reason tool_use, no tool_use block (F4)"): ([
            S.Turn(content=[S.text("Let me look.")], stop_reason="tool_use")], _STOP_REASON_HINT),
        N_("stop_reason end_turn, with a tool_use block"): ([
            S.Turn(content=[S.text("Reading."), S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")],
                   stop_reason="end_turn"),
            S.reply("value is 1.")], _STOP_REASON_HINT),
    }


def check_four_steps(fn: Any) -> Verdict:
    """Check a whole loop: ``await fn(model, messages, tools, run_tool)`` must send the same requests as
    ``dreamloop.agent_loop`` on six scripts (two with a ``stop_reason`` that disagrees with the blocks) and
    return the last response.

    ``tools`` is a list of tool definitions (dicts for the API), ``run_tool(name, input) -> str`` runs one.
    """
    todo = tr("the four steps in a while True: call the model with messages and tools; find the tool_use blocks "
              "(none: return the response); run each into a tool_result; append, and go round.")

    def body() -> str:
        _require_callable(fn, "my_agent_loop")
        sent = 0
        scripts = _four_step_scripts()
        for name, (script, idea) in scripts.items():
            idea, case = tr(idea), tr(name)
            prompt = [{"role": "user", "content": "What is value in config.py?"}]

            async def reference() -> list[Any]:
                model = offline(script, max_retries=0)
                await agent_loop(model, list(prompt), [_read_tool()])
                return [r.body for r in _api_requests(model)]

            async def learner() -> tuple[list[Any], Any]:
                model = offline(script, max_retries=0)
                tools = [_read_tool().to_api()]
                try:
                    final = await _call("my_agent_loop(...)", fn, model, list(prompt), tools, _dispatch,
                                        hint=idea, todo=todo)
                except _Fail as fail:
                    if "NotImplementedError" in fail.problem:
                        raise
                    if "stop_reason" in name:  # the idea behind the 400
                        raise _Fail(tr("script '{case}': {problem}", case=case, problem=fail.problem), idea) from None
                    if tr(_EXHAUSTED) in fail.problem:
                        raise _Fail(tr("script '{case}': {problem}", case=case, problem=fail.problem),
                                    tr("step 2 is also the way out: a response with no tool_use block ends the "
                                       "loop, and it is what the loop returns.")) from None
                    raise
                finally:
                    bodies = [(r.status, r.body, r.error) for r in _api_requests(model)]
                return bodies, final

            expected = _run(reference)
            got, final = _run(learner)
            for i, (status, request, error) in enumerate(got):
                if status == 400:
                    message = (error or {}).get("message", "")
                    raise _Fail(tr("script '{case}', request {n}: the offline API answered 400: {message}", case=case,
                                   n=i + 1, message=_short(message)),
                                idea if "stop_reason" in name else _api_hint(message, idea))
            if len(got) < len(expected):
                raise _Fail(tr("script '{case}': your loop sent {got} request(s); dreamloop.agent_loop sent "
                               "{expected}.", case=case, got=len(got), expected=len(expected)),
                            idea if "stop_reason" in name else
                            tr("go round again while the response has tool_use blocks."))
            for i, (want, (_, request, _)) in enumerate(zip(expected, got)):
                _compare_request(case, i, want, request, idea)
            if len(got) > len(expected):
                raise _Fail(tr("script '{case}': your loop sent {got} requests; expected {expected}.", case=case,
                               got=len(got), expected=len(expected)),
                            idea if "stop_reason" in name else
                            tr("return the response when it has no tool_use block."))
            if not hasattr(final, "content") or _text_of(final) != _text_of_script_end(script):
                raise _Fail(tr("script '{case}': your loop returned {value}; expected the last response.", case=case,
                               value=_short(repr(final), 80)),
                            tr("return the model's response itself (the Message) when it asks for no tool."))
            sent += len(got)
        return tr("{scripts} scripts, {requests} requests, each one the same as dreamloop.agent_loop sent.",
                  scripts=len(scripts), requests=sent)

    return _verdict(tr("four steps"), body)


def _text_of_script_end(script: list[S.Turn]) -> str:
    return "".join(b["text"] for b in script[-1].content if b["type"] == "text")


def _compare_request(script: str, i: int, want: dict[str, Any], got: dict[str, Any] | None, idea: str) -> None:
    where = tr("script '{case}', request {n}", case=script, n=i + 1)
    if got is None:
        raise _Fail(tr("{where}: the request body was not JSON.", where=where), idea)
    if [t.get("name") for t in got.get("tools", [])] != [t.get("name") for t in want.get("tools", [])]:
        raise _Fail(tr("{where}: tools {got}, not the tools your function was given.", where=where,
                       got=[t.get("name") for t in got.get("tools", [])]),
                    tr("send the tool definitions with every request: the model keeps nothing between requests."))
    want_messages, got_messages = want["messages"], got.get("messages", [])
    want_roles, got_roles = [m["role"] for m in want_messages], [m.get("role") for m in got_messages]
    if got_roles != want_roles:
        if "assistant" in want_roles and "assistant" not in got_roles:
            hint = tr("append the model's response as an assistant message before the results: the model must see "
                      "its own call to make sense of the result.")
        elif len(got_roles) < len(want_roles):
            hint = tr("keep the whole history: the model remembers nothing, so every request carries all earlier "
                      "messages, then this turn's.")
        else:
            hint = idea
        raise _Fail(tr("{where}: message roles {got}, not the conversation dreamloop.agent_loop sent.", where=where,
                       got=got_roles), hint)
    for j, (w, g) in enumerate(zip(want_messages, got_messages)):
        if _normal(w["content"]) == _normal(g.get("content")):
            continue
        hint = idea
        want_ids, got_ids = _result_ids(w["content"]), _result_ids(g.get("content"))
        if want_ids and sorted(got_ids) == sorted(want_ids) and got_ids != want_ids:
            hint = tr("put the tool_results in the order of the calls, not in any other order.")
        raise _Fail(tr("{where}, messages[{j}] ({role}): you sent {got}, not what dreamloop.agent_loop sent.",
                       where=where, j=j, role=w["role"], got=_short(g.get("content"), 160)), hint)


def _result_ids(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def _normal(content: Any) -> Any:
    """Content with the optional ``is_error: false`` removed (the API treats both alike)."""
    if isinstance(content, list):
        return [{k: v for k, v in b.items() if not (k == "is_error" and v is False)} if isinstance(b, dict) else b
                for b in content]
    return content
