"""StateInspector over real traces: slider, header, panes, pairing, escaping, live refresh, loading."""

from __future__ import annotations

import asyncio
import re

from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.trace import Trace
from dreamloop.widgets import PANES, StateInspector


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file."""
    await asyncio.sleep(0)
    if input.path == "evil":
        return "<script>alert('x')</script>"
    if input.path == "missing":
        raise FileNotFoundError(input.path)
    return f"contents of {input.path}"


def three_turns():
    return [
        S.reply("Reading two files.", S.tool_use("Read", {"path": "evil"}, id="T1"),
                S.tool_use("Read", {"path": "missing"}, id="T2")),
        S.reply(S.thinking("one more"), "And a third.", S.tool_use("Read", {"path": "c"}, id="T3")),
        S.reply("All read."),
    ]


async def finished_run(offline):
    run = query(QueryParams(messages="read them", model=offline(three_turns()), tools=[read]))
    async for _ in run:
        pass
    return run


async def test_slider_steps_through_checkpoints(offline):
    run = await finished_run(offline)
    inspector = StateInspector(run.trace)

    assert repr(inspector) == "StateInspector(checkpoints=3)"
    assert inspector._repr_mimebundle_()["text/plain"] == "StateInspector(checkpoints=3)"
    assert (inspector.slider.description, inspector.slider.min, inspector.slider.max) == ("checkpoint", 0, 2)
    assert tuple(inspector.panes) == PANES
    assert list(inspector.tabs.titles) == list(PANES)

    first = {name: pane.value for name, pane in inspector.panes.items()}
    assert "turn_count=<b>1</b>" in inspector.header.value
    assert "Reading two files." in first["assistant_messages"]
    assert "2 messages" not in first["messages"] and "1 message " in first["messages"]

    inspector.slider.value = 1
    second = {name: pane.value for name, pane in inspector.panes.items()}
    assert all(second[name] != first[name] for name in ("messages", "assistant_messages", "tool_results"))
    assert "And a third." in second["assistant_messages"] and "Reading two files." not in second["assistant_messages"]
    assert "one more" in second["assistant_messages"]  # the thinking block
    header = inspector.header.value
    assert "turn_count=<b>2</b>" in header and "transition=<b>next_turn</b>" in header
    assert "changed: turn_count 1→2, transition None→next_turn, +2 messages" in header
    assert "Terminal" not in header

    inspector.slider.value = 2
    header = inspector.header.value
    assert "turn_count=<b>3</b>" in header
    assert "Terminal" in header and "reason=<b>completed</b>" in header
    assert "(none)" in inspector.panes["tool_results"].value


async def test_new_messages_are_marked(offline):
    inspector = StateInspector(await finished_run(offline), index=1)
    messages = inspector.panes["messages"].value
    assert messages.count(">new</span>") == 2  # the assistant message and its tool results
    assert "3 messages, 2 new" in messages
    assert "2 new" in inspector.panes["messages_for_query"].value
    inspector.slider.value = 0
    assert ">new</span>" not in inspector.panes["messages"].value


async def test_tool_results_are_paired_and_errors_marked(offline):
    inspector = StateInspector(await finished_run(offline))
    results = inspector.panes["tool_results"].value
    assert len(re.findall(r"for <b[^>]*>Read</b>", results)) == 2
    assert "T1" in results and "T2" in results
    assert ">is_error</span>" in results and "dl-m-error dl-errbox" in results  # red frame
    assert "FileNotFoundError" in results
    calls = inspector.panes["assistant_messages"].value
    assert "tool_use" in calls and "T1" in calls and "&quot;path&quot;: &quot;evil&quot;" in calls


async def test_everything_is_escaped(offline):
    inspector = StateInspector(await finished_run(offline))
    for index in range(3):
        inspector.slider.value = index
        for pane in inspector.panes.values():
            assert "<script>" not in pane.value
    inspector.slider.value = 0
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in inspector.panes["tool_results"].value


async def test_refresh_follows_a_live_trace(offline):
    trace = Trace()
    run = query(QueryParams(messages="read them", model=offline(three_turns()), tools=[read]), trace=trace)
    inspector = StateInspector(trace)
    assert repr(inspector) == "StateInspector(checkpoints=0)"
    assert "No checkpoint yet" in inspector.header.value
    seen = []
    async for event in run:
        if event.type == "stream_request_start" and event.turn_count == 2:
            inspector.refresh()
            seen.append(repr(inspector))
            assert "still going" not in inspector.header.value  # checkpoint 1 knows its next transition
    inspector.refresh()
    assert seen == ["StateInspector(checkpoints=1)"]
    assert repr(inspector) == "StateInspector(checkpoints=3)"
    assert inspector.slider.value == 2  # it was at the end, so it follows the end
    assert "reason=<b>completed</b>" in inspector.header.value


async def test_loaded_trace_renders_the_same(offline, tmp_path):
    run = await finished_run(offline)
    path = run.trace.save(tmp_path / "run.trace.jsonl")
    live, loaded, by_path = StateInspector(run.trace), StateInspector(Trace.load(path)), StateInspector(path)
    for index in range(3):
        for inspector in (live, loaded, by_path):
            inspector.slider.value = index
        assert loaded.header.value == live.header.value == by_path.header.value
        for name in PANES:
            assert loaded.panes[name].value == live.panes[name].value == by_path.panes[name].value


async def test_max_turns_shows_the_attachment_and_terminal(offline):
    run = query(QueryParams(messages="read them", model=offline(three_turns()), tools=[read], max_turns=1))
    async for _ in run:
        pass
    inspector = StateInspector(run)
    assert repr(inspector) == "StateInspector(checkpoints=1)"
    assert inspector.slider.disabled  # one checkpoint: nothing to slide
    assert "reason=<b>max_turns</b>" in inspector.header.value
    attachments = inspector.panes["attachments"].value
    assert "attachment · max_turns_reached" in attachments and "dl-tint-attachment" in attachments


async def test_each_attachment_is_labelled_with_where_it_came_from(offline, tmp_path):
    """Phase 5's attachments in the attachments pane: a changed memory file by its path, a changed file by its
    name, queued input as such (issue 33 item 11); the text (``origins()``) and the pane say the same."""
    from dreamloop import AttachmentMessage
    from dreamloop.tools import builtin_tools
    (tmp_path / "config.py").write_text("value = 1\n")
    (tmp_path / "CLAUDE.md").write_text("Answer in one sentence.\n")

    def policy(body, index):
        if index == 0:
            return S.reply("Reading.", S.tool_use("Read", {"file_path": "config.py"}))
        if index == 1:
            (tmp_path / "config.py").write_text("value = 2\n")
            (tmp_path / "CLAUDE.md").write_text("Answer in two sentences.\n")
            return S.reply("Again.", S.tool_use("Glob", {"pattern": "*.md"}))
        return S.reply("Done.")

    typed = iter([[], [AttachmentMessage(attachment={"type": "queued_command", "prompt": "and then?"})]])
    run = query(QueryParams(messages="value?", model=offline(policy), tools=builtin_tools(), workspace=tmp_path,
                            permission_mode="bypass", memory_files=True, changed_files=True,
                            queued_input=lambda: next(typed, [])))
    async for _ in run:
        pass
    inspector = StateInspector(run, index=1)
    assert inspector.origins() == ["[0] attachment · memory_changed <- memory file CLAUDE.md",
                                   "[1] attachment · changed_file <- changed file config.py",
                                   "[2] attachment · queued_command <- queued input"]
    pane = inspector.panes["attachments"].value
    assert pane.count("from: ") == 3 and "from: changed file config.py" in pane
    inspector.slider.value = 0
    assert inspector.origins() == []  # turn 1 attached nothing
    assert "from: " not in inspector.panes["attachments"].value


def test_attachment_origin_names_hooks_tasks_and_the_loop():
    from dreamloop.widgets.inspector import attachment_origin
    assert attachment_origin({"type": "hook_blocking_error", "hookEvent": "PreToolUse", "hookName": "guard"}) == \
        "hook PreToolUse (guard)"
    assert attachment_origin({"type": "task_notification", "task_id": "b1"}) == "background task b1"
    assert attachment_origin({"type": "max_turns_reached", "max_turns": 1}) == "the loop (max_turns)"
    assert attachment_origin({"type": "something_new"}) is None
