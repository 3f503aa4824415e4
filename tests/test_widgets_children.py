"""The inspector and the live view open an Agent call's child run (issue 34, item 2): a nested StateInspector,
a way back, a stable repr, the child in the stored snapshot; a child the parent's Stop ended says so."""

from __future__ import annotations

import asyncio

import pytest

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.trace import Trace
from dreamloop.widgets import LiveView, StateInspector
from dreamloop.widgets.inspector import agent_calls
from dreamloop.widgets.static import STATIC_START


def agent(prompt="child: say three", description="count files", id="A1"):
    return S.tool_use("Agent", {"description": description, "prompt": prompt}, id=id)


def script():
    return S.by_prompt([S.reply("Asking a helper.", agent()), S.reply("The helper says 3.")],
                       {"child: say three": [S.reply(S.tool_use("Agent", {"description": "x", "prompt": "y"},
                                                                 id="C1")),
                                             S.reply("3")]})


async def finished_run(offline):
    run = query(QueryParams(messages="how many?", model=offline(script()), sub_agents=True))
    async for _ in run:
        pass
    return run


async def test_the_inspector_opens_the_call_s_child_and_goes_back(offline):
    run = await finished_run(offline)
    inspector = StateInspector(run.trace)
    assert inspector.agent_calls() == [("A1", "Agent · count files · completed, 2 turns")]
    assert inspector.child_picker.options == (("Agent · count files · completed, 2 turns", "A1"),)
    assert not inspector.open_button.disabled
    inspector.slider.value = 1  # the parent's answer: no Agent call there
    assert inspector.agent_calls() == [] and inspector.open_button.disabled
    inspector.slider.value = 0
    child = inspector.open_child()
    assert child.trace is run.trace.children["A1"] and len(child.trace.checkpoints) == 2
    assert inspector.child is child and list(inspector.children) == [inspector.children[0], child]
    assert repr(inspector) == "StateInspector(checkpoints=2, child=A1: StateInspector(checkpoints=2))"
    # the child's own history: its prompt first, and its own Agent call (unknown to it: an error result)
    assert child.trace.messages[child.checkpoint.state_messages[0]].message["content"] == "child: say three"
    html = inspector._repr_mimebundle_()["text/html"]
    assert html.startswith(STATIC_START) and "the child run of the call Agent · count files" in html
    assert "Terminal completed" in html and html.count("<table") == 1  # the child's table, not the parent's
    inspector.back_button.click()
    assert inspector.child is None and inspector.children[0] is inspector.slider
    assert repr(inspector) == "StateInspector(checkpoints=2)"
    parent_html = inspector.static_html()
    assert "sub-agent runs started here" in parent_html and "count files · completed, 2 turns" in parent_html


async def test_a_saved_trace_opens_its_child_the_same_way(offline, tmp_path):
    run = await finished_run(offline)
    run.trace.save(tmp_path / "t.jsonl")
    inspector = StateInspector(tmp_path / "t.jsonl")
    child = inspector.open_child("A1")
    assert [p.terminal.reason if p.terminal else None for p in child.trace.checkpoints] == [None, "completed"]
    with pytest.raises(KeyError, match="'nope'.*known: A1"):
        inspector.open_child("nope")


async def test_a_child_the_parent_s_stop_ended_says_it_was_stopped(offline):
    box = {}

    def policy(body, index):
        first = body["messages"][0]["content"]
        first = first if isinstance(first, str) else first[-1].get("text", "")
        if first.startswith("child:"):
            box["params"].abort.abort("stop pressed")
            return S.reply("never seen")
        return S.reply(agent())

    params = box["params"] = QueryParams(messages="go", model=offline(policy), sub_agents=True)
    run = query(params)
    async for _ in run:
        pass
    [child] = run.children
    assert child.terminal.reason.startswith("aborted_") and run.terminal.reason == "aborted_tools"
    point = run.trace.checkpoints[-1]
    [(call, label)] = agent_calls(run.trace, point)
    assert call == "A1" and label == (f"Agent · count files · stopped ({child.terminal.reason}): "
                                       "stopped when the parent was stopped (stop pressed)")
    nested = StateInspector(run.trace, index=point.index).open_child()
    assert nested.trace.checkpoints[-1].terminal.reason == child.terminal.reason


async def test_the_live_view_opens_a_child_run_from_the_call(offline):
    view = LiveView(throttle=0)
    assert view.calls.layout.display == "none"
    run = query(QueryParams(messages="how many?", model=offline(script()), sub_agents=True))
    seen_while_running = []
    async for event in view.follow(run):
        if event.type == "user" and list(event.source_tool_use_ids or ()) == ["A1"]:
            seen_while_running.append(list(view.child_picker.options))
    assert seen_while_running == [[("Agent · count files · completed, 2 turns", "A1")]]
    assert view.calls.layout.display is None
    child = view.open_child()
    assert child.trace is run.trace.children["A1"] and repr(view) == "LiveView()"
    assert "Terminal completed" in view._repr_mimebundle_()["text/html"].split("sub-agent runs started here")[1]
    view.back_button.click()
    assert view.child is None and list(view.child_box.children) == []
    with pytest.raises(KeyError, match="'B2'"):
        view.open_child("B2")
