"""Request anatomies (``dreamloop.compare.anatomy``) and ``CompareView``: shapes only, never a request's text.

The recorded anatomies of chapter 11 (``conformance/claude-code-<pinned>.requests.json``) must agree with the
recorded expectations (``conformance/claude-code-<pinned>.json``): the same outcome lines for both sides and
the same differences, so the chapter's views and its conformance table cannot tell two stories.
"""

from __future__ import annotations

import json
import re

import pytest

from dreamloop.compare.anatomy import ANATOMY_SCENARIOS, conformance_file, load_anatomies, request_anatomy
from dreamloop.compare.conformance import load_expectations, outcome
from dreamloop.compare.scenarios import scenario
from dreamloop.compare.shapes import SideRun
from dreamloop.compare.sides import expectations_name
from dreamloop.widgets import CompareView

SECRETS = ("You are a very secret system prompt", "a secret tool description", "secret reminder words",
           "the user's secret prompt")


def body(marked: int) -> dict:
    """A request body with text in every place Anthropic's text can be; ``marked``: the message with cache_control."""
    messages = [
        {"role": "user", "content": [{"type": "text", "text": f"<system-reminder>{SECRETS[2]}</system-reminder>"},
                                     {"type": "text", "text": SECRETS[3]}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": f"ok<system-reminder>{SECRETS[2]}</system-reminder>"}]},
    ]
    messages[marked]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": "m", "max_tokens": 100, "stream": True, "messages": messages,
            "system": [{"type": "text", "text": SECRETS[0], "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "Read", "description": SECRETS[1], "input_schema": {"type": "object"}}]}


def test_an_anatomy_keeps_shapes_and_no_text():
    first = body(0)
    first["messages"] = first["messages"][:1]
    a = request_anatomy(first, previous=None, model="m")
    b = request_anatomy(body(2), previous=first["messages"], model="m")
    dumped = json.dumps([a, b])
    assert not any(secret in dumped for secret in SECRETS)
    assert a["system"] == [{"length": len(SECRETS[0]), "hash": a["system"][0]["hash"], "cache": True}]
    assert re.fullmatch(r"[0-9a-f]{8}", a["system"][0]["hash"])
    assert b["tools"] == {"count": 1, "cache": False} and b["fields"] == sorted(body(2))
    # the marker moved from message 0 to message 2: message 0 is still the same message, not new
    assert b["added"] == 1 and [m["new"] for m in b["messages"]] == [False, True, True]
    assert [blk["kind"] for blk in b["messages"][0]["blocks"]] == ["reminder", "text"]
    reminder = f"<system-reminder>{SECRETS[2]}</system-reminder>"
    assert b["messages"][2]["blocks"][0] | {"length": 0} == {"kind": "tool_result", "cache": True, "length": 0,
                                                            "id": "toolu_1", "is_error": False, "inside": 1,
                                                            "reminders": [{"length": len(reminder),
                                                                           "hash": b["messages"][2]["blocks"][0]
                                                                           ["reminders"][0]["hash"]}]}


def test_the_recorded_anatomies_agree_with_the_recorded_expectations():
    recorded = load_anatomies()
    expected = load_expectations(conformance_file(expectations_name()))
    assert recorded["claude_code"] == expected["claude_code"]
    assert tuple(recorded["scenarios"]) == ANATOMY_SCENARIOS
    for name, sides in recorded["scenarios"].items():
        row = expected["scenarios"][name]
        for key in ("claude_code", "dreamloop"):
            side = sides[key]
            run = SideRun.from_data({"side": key, "version": side["version"], "probes": side["probes"],
                                     "requests": [r["shape"] for r in side["requests"]], "ending": side["ending"],
                                     "markers": side["markers"], "workspace": side["workspace"]})
            assert outcome(run, order_free=scenario(name).order_free) == row[key], (name, key)
        view = CompareView(name, sides["claude_code"], sides["dreamloop"], order_free=scenario(name).order_free)
        assert view.differences == row["differences"] and (view.verdict == "MATCH") == row["match"], name


def test_the_recorded_file_holds_no_text_but_ours():
    """Every string in the anatomies file is a key, a kind, a name, an id, a hash or a scenario's own words."""
    text = conformance_file(expectations_name(kind="requests")).read_text(encoding="utf-8")
    strings = set(re.findall(r'"((?:[^"\\]|\\.)*)"', text))
    ours = {s.about for s in map(scenario, ANATOMY_SCENARIOS)}
    long = [s for s in strings if len(s) > 40 and s not in ours and not s.startswith("Each request of chapter 11")]
    assert not long, long
    assert "<system-reminder>" not in text


@pytest.mark.parametrize("name", ["one_tool", "stream_error_inside_tool_use"])
def test_compare_view_steps_both_sides_and_stores_no_svg(name):
    sides = load_anatomies()["scenarios"][name]
    view = CompareView(name, sides["claude_code"], sides["dreamloop"], index=1)
    assert repr(view).startswith(f"CompareView({name!r}: Claude Code 2.1.332 ")
    first = [column.value for column in view.columns]
    view.slider.value = 2
    assert [column.value for column in view.columns] != first and "request 2 of" in view.header.value
    html = view._repr_mimebundle_()["text/html"]
    assert "<svg" not in html and "<script" not in html and f"request {view.slider.max} of" in html
    if len(sides["dreamloop"]["requests"]) < view.slider.max:  # a side that sent fewer requests says so
        view.slider.value = view.slider.max
        assert "this side sent" in view.columns[1].value
