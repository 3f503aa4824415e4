"""Pacing for a person: slow only when someone can click, the same run otherwise, and Stop still immediate."""

from __future__ import annotations


import pytest
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.widgets import paced, person_watching, slowed


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file."""
    return f"contents of {input.path}"


@pytest.mark.parametrize("value, watching", [(None, True), ("", True), ("0", True), ("1", False),
                                             ("allow", False), ("deny", False)])
def test_a_person_watches_unless_the_notebook_targets_run(monkeypatch, value, watching):
    if value is None:
        monkeypatch.delenv("DREAMLOOP_AUTO_ANSWER", raising=False)
    else:
        monkeypatch.setenv("DREAMLOOP_AUTO_ANSWER", value)
    assert person_watching() is watching


def test_paced_changes_the_pace_only():
    script = [S.reply("Hi.", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("Done.")]
    slow = paced(script, tokens_per_second=5)
    assert [t.content for t in slow] == [t.content for t in script]
    assert {(t.tokens_per_second, t.chunk_size) for t in slow} == {(5, 4)}
    policy = paced(lambda body, index: script[index], tokens_per_second=7, chunk_size=2)
    assert policy({}, 1).content == script[1].content and policy({}, 1).tokens_per_second == 7


async def test_a_slowed_tool_is_the_same_tool_and_stops_at_once(offline):
    (slow,) = slowed([read], 30.0)
    assert slow.name == "Read" and slow.to_api() == read.to_api() and slow.is_concurrency_safe(None)
    model = offline([S.reply(S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("Done.")])
    run = query(QueryParams(messages="read a", model=model, tools=[slow]))
    async for event in run:
        if event.type == "progress" and event.data.get("stage") == "started":
            run.abort("stop button")  # the 30 s wait is an await: the abort cancels it
    assert run.terminal.reason == "aborted_tools"
    (answer,) = [m for m in run.messages if m.type == "user" and m.source_tool_use_ids]
    result = answer.message["content"][0]
    assert result["is_error"] and "Interrupted" in result["content"]
