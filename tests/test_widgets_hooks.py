"""Hooks in the widgets: the live view shows each hook on the call it ran for and the stop hook's
block as its own section; the inspector shows stop_hook_active and the feedback; the terminal print."""

from __future__ import annotations

import io

from pydantic import BaseModel
from rich.console import Console

from dreamloop import scripts as S
from dreamloop.hooks import CommandHook, Hooks, PreToolUseDecision, StopDecision
from dreamloop.query import QueryParams, query
from dreamloop.render import print_run
from dreamloop.tools import tool
from dreamloop.widgets import LiveView, StateInspector


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file."""
    return f"contents of {input.path}"


LINT = """echo '{"hookSpecificOutput": {"additionalContext": "lint: clean"}}'"""


def hooks():
    stops = iter([StopDecision(decision="block", reason="the tests fail"), None])
    return (Hooks()
            .add("pre_tool_use", lambda i: PreToolUseDecision(decision="deny", reason="not b")
                 if i.tool_input["path"] == "b" else None, matcher="Read")
            .add("post_tool_use", CommandHook(LINT), matcher="Read")
            .add("stop", lambda i: next(stops)))


def script():
    return [S.reply("reading", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2")),
            S.reply("done"), S.reply("fixed, done")]


async def test_live_view_puts_hooks_on_their_call_and_shows_the_stop_hook_block(offline):
    run = query(QueryParams(messages="go", model=offline(script()), tools=[read], hooks=hooks()))
    live = LiveView()
    terminal = await live.watch(run)
    assert terminal.reason == "completed"
    text = live.transcript.value
    # each call's row carries its hooks: T2's deny in red
    rows = text.split('<div class="dl-item">')
    row_a, row_b = next(r for r in rows if "ran ✓" in r), next(r for r in rows if "never started ✗" in r)  # denied
    assert "PreToolUse:Read hook hooks.&lt;locals&gt;.&lt;lambda&gt; (returned) → no opinion" in row_a
    assert "PostToolUse:Read hook echo &#x27;{&quot;hookSpecificOutput&quot;: {&quot;addition… (exit 0) → context: lint: clean" in row_a
    assert "PostToolUse:Read → to the model: PostToolUse:Read hook additional context: lint: clean" in row_a
    assert "PreToolUse:Read hook hooks.&lt;locals&gt;.&lt;lambda&gt; (returned) → deny: not b" in row_b
    assert 'dl-f-error">hook</span>' in row_b and 'dl-f-error">hook</span>' not in row_a
    assert text.count("dl-hook") == 4  # T1: pre, post, its context; T2: pre (a denied call gets no post hook)
    assert "transition=stop_hook_blocking · <b>stop_hook_active</b>" in text
    assert "A Stop hook kept the turn from ending" in text

    i = live.phases.index("stop")
    assert live.phases[i:i + 4] == ["stop", "state", "context", "model"]  # not through "5. new State"


async def test_inspector_shows_stop_hook_active_and_the_feedback(offline):
    run = query(QueryParams(messages="go", model=offline(script()), tools=[read], hooks=hooks()))
    async for _ in run:
        pass
    inspector = StateInspector(run.trace, index=2)
    header = inspector.header.value
    assert "transition=<b>stop_hook_blocking</b>" in header and "stop_hook_active=<b>True</b>" in header
    assert "stop_hook_active False→True" in header and "turn_count" not in header.split("changed:")[1].split("<")[0]
    messages = inspector.panes["messages"].value
    assert "user · meta" in messages and "A Stop hook kept the turn from ending. It said:\nthe tests fail" in messages
    assert "(sent to the model)" in messages and "(UI only)" in messages
    inspector.slider.value = 1
    assert "stop_hook_active=<b>True</b>" not in inspector.header.value


async def test_the_terminal_print_says_each_hook_in_one_line(offline):
    out = io.StringIO()
    run = query(QueryParams(messages="go", model=offline(script()), tools=[read], hooks=hooks()))
    await print_run(run, Console(file=out, width=200, no_color=True))
    text = out.getvalue()
    assert "hook  PostToolUse:Read hook echo '{\"hookSpecificOutput\": {\"addition… (exit 0) → context: lint: clean" in text
    assert "hook  PostToolUse:Read → to the model: PostToolUse:Read hook additional context: lint: clean" in text
    assert "hook  Stop hook hooks.<locals>.<lambda> (returned) → block: the tests fail" in text
    assert "A Stop hook kept the turn from ending" in text
    assert "durationMs" not in text
