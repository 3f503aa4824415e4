"""Permission decisions: can_use_tool, the tool's default under each mode, ask, updated_input."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from dreamloop.tools import (
    Allow,
    Ask,
    Deny,
    ToolUseContext,
    builtin_tools,
    run_tools,
    tool,
)


class Text(BaseModel):
    text: str


def make_tools(calls: list[str]):
    @tool(Text, read_only=True)
    async def look(input: Text) -> str:
        calls.append(f"look {input.text}")
        return f"looked at {input.text}"

    @tool(Text)
    async def change(input: Text) -> str:
        calls.append(f"change {input.text}")
        return f"changed {input.text}"

    return [look, change]


async def run_one(context: ToolUseContext, name: str, input: dict) -> dict:
    messages = [m async for m in run_tools([{"id": "T1", "name": name, "input": input}], context)]
    return messages[-1].message["content"][0]


async def test_default_mode_allows_read_only_and_denies_unasked_writes():
    calls: list[str] = []
    context = ToolUseContext(tools=make_tools(calls))
    assert (await run_one(context, "look", {"text": "a"}))["content"] == "looked at a"
    result = await run_one(context, "change", {"text": "b"})
    assert result["is_error"]
    assert result["content"].startswith("change needs permission and there is no one to ask")
    assert "permission-mode" in result["content"] and "can_use_tool" in result["content"]
    assert calls == ["look a"]


@pytest.mark.parametrize(
    ("answer", "expected", "ran"),
    [(Allow(), "changed b", True), (Deny("The user said no."), "The user said no.", False)],
)
async def test_ask_answers(answer, expected, ran):
    calls: list[str] = []
    asked = []

    async def ask(tool, input, reason):
        asked.append((tool.name, input, reason))
        return answer

    context = ToolUseContext(tools=make_tools(calls), ask=ask)
    result = await run_one(context, "change", {"text": "b"})
    assert result["content"] == expected
    assert result.get("is_error", False) is not ran
    assert calls == (["change b"] if ran else [])
    assert asked == [("change", {"text": "b"}, "change wants to run with {'text': 'b'}")]


async def test_can_use_tool_replaces_the_default():
    calls: list[str] = []
    seen = []

    async def can_use_tool(tool, input, context):
        seen.append((tool.name, input))
        return Deny("no looking") if tool.name == "look" else Allow()

    context = ToolUseContext(tools=make_tools(calls), can_use_tool=can_use_tool)
    assert await run_one(context, "look", {"text": "a"}) == {
        "type": "tool_result", "tool_use_id": "T1", "content": "no looking", "is_error": True
    }  # fmt: skip
    assert (await run_one(context, "change", {"text": "b"}))["content"] == "changed b"
    assert seen == [("look", {"text": "a"}), ("change", {"text": "b"})]
    assert calls == ["change b"]


async def test_can_use_tool_ask_goes_to_ask():
    async def can_use_tool(tool, input, context):
        return Ask("really?")

    async def ask(tool, input, reason):
        return Allow() if reason == "really?" else Deny("wrong question")

    context = ToolUseContext(tools=make_tools([]), can_use_tool=can_use_tool, ask=ask)
    assert (await run_one(context, "look", {"text": "a"}))["content"] == "looked at a"


async def test_updated_input_replaces_the_input_and_is_validated():
    calls: list[str] = []

    async def rewrite(tool, input, context):
        return Allow(updated_input={"text": input["text"].upper()})

    context = ToolUseContext(tools=make_tools(calls), can_use_tool=rewrite)
    assert (await run_one(context, "change", {"text": "b"}))["content"] == "changed B"

    async def broken(tool, input, context):
        return Allow(updated_input={"txt": "oops"})

    context = ToolUseContext(tools=make_tools(calls), can_use_tool=broken)
    result = await run_one(context, "change", {"text": "b"})
    assert result["is_error"] and result["content"].startswith("InputValidationError: text: Field required")
    assert calls == ["change B"]


async def test_a_callback_returning_nonsense_is_an_error_result():
    async def can_use_tool(tool, input, context):
        return True

    context = ToolUseContext(tools=make_tools([]), can_use_tool=can_use_tool)
    result = await run_one(context, "look", {"text": "a"})
    assert result["is_error"] and "TypeError" in result["content"] and "Allow, Deny or Ask" in result["content"]


async def test_asks_from_a_parallel_batch_come_one_at_a_time():
    active = 0
    most = 0

    async def ask(tool, input, reason):
        nonlocal active, most
        active += 1
        most = max(most, active)
        await asyncio.sleep(0.01)
        active -= 1
        return Allow()

    async def always_ask(tool, input, context):
        return Ask("may I?")

    context = ToolUseContext(tools=make_tools([]), can_use_tool=always_ask, ask=ask)
    calls = [{"id": f"T{i}", "name": "look", "input": {"text": str(i)}} for i in range(3)]
    messages = [m async for m in run_tools(calls, context)]
    assert [b["content"] for b in messages[-1].message["content"]] == ["looked at 0", "looked at 1", "looked at 2"]
    assert most == 1


@pytest.mark.parametrize(
    ("mode", "tool_name", "input", "allowed"),
    [
        ("default", "Write", {"file_path": "a.txt", "content": "x"}, False),
        ("default", "Edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}, False),
        ("default", "Bash", {"command": "touch b.txt"}, False),
        ("default", "Bash", {"command": "ls"}, True),
        ("default", "Read", {"file_path": "a.txt"}, True),
        ("accept-edits", "Write", {"file_path": "a.txt", "content": "x"}, True),
        ("accept-edits", "Edit", {"file_path": "a.txt", "old_string": "a", "new_string": "b"}, True),
        ("accept-edits", "Bash", {"command": "touch b.txt"}, False),
        ("bypass", "Bash", {"command": "touch b.txt"}, True),
        ("bypass", "Write", {"file_path": "a.txt", "content": "x"}, True),
    ],
)
async def test_permission_modes_on_builtin_tools(tmp_path, mode, tool_name, input, allowed):
    (tmp_path / "a.txt").write_text("a\n")
    context = ToolUseContext(tools=builtin_tools(), workspace=tmp_path, permission_mode=mode)
    result = await run_one(context, tool_name, input)
    assert ("no one to ask" not in result["content"]) is allowed, result
    assert result.get("is_error", False) is not allowed


async def test_write_outside_the_workspace_is_denied_without_asking(tmp_path):
    asked = []

    async def ask(tool, input, reason):
        asked.append(reason)
        return Allow()

    context = ToolUseContext(tools=builtin_tools(), workspace=tmp_path, ask=ask)
    result = await run_one(context, "Write", {"file_path": "../evil.txt", "content": "x"})
    assert result["is_error"] and result["content"] == "path escapes the workspace: ../evil.txt"
    assert asked == [] and not (tmp_path.parent / "evil.txt").exists()


def test_unknown_permission_mode_is_refused():
    with pytest.raises(ValueError, match="permission_mode"):
        ToolUseContext(permission_mode="yolo")  # type: ignore[arg-type]


def test_decisions_have_a_behavior():
    assert (Allow().behavior, Deny("x").behavior, Ask("y").behavior) == ("allow", "deny", "ask")
    assert Allow({"a": 1}).updated_input == {"a": 1}


# ---------------------------------------------------------------------------
# The command rules (issue 39, item 2): one shell-syntax rule for the test-command policy and Bash's allowlist


@pytest.mark.parametrize("command, syntax, test, read_only", [
    ("python -m unittest", False, True, False),
    ("python3 -m unittest discover -s tests", False, True, False),
    ("python -m unittest_helpers", False, False, False),      # another module, maybe one the model just wrote
    ("python -m unittest; rm -rf .", True, False, False),
    ("python -m unittest\rrm -rf .", True, False, False),     # a line break of either kind
    ("python -m unittest $(rm x)", True, False, False),
    ("python -m unittest tests.test_(x)", False, True, False),  # grouping is no chaining: the policy allows it
    ("ls src", False, False, True),
    ("ls {a,b}", False, False, False),                         # but an allowlisted command's words must be plain
    ("ls\rsrc", True, False, False),                          # a line break: one rule for both
])
def test_one_shell_syntax_rule(command, syntax, test, read_only):
    from dreamloop.tools import is_read_only_command
    from dreamloop.tools.permissions import has_shell_syntax, is_test_command

    assert has_shell_syntax(command) is syntax
    assert has_shell_syntax(command, expansion=True) is (syntax or any(c in command for c in "(){}~\\"))
    assert is_test_command(command) is test
    assert is_read_only_command(command) is read_only


async def test_allow_test_commands_allows_the_test_command_and_defers_the_rest(tmp_path):
    from dreamloop.tools.permissions import allow_test_commands

    tools = {t.name: t for t in builtin_tools()}
    policy = allow_test_commands()
    for mode, command, expected in [("default", "python -m unittest", Allow), ("default", "rm x", Ask),
                                    ("accept-edits", "python -m unittest | sh", Ask), ("bypass", "rm x", Allow)]:
        context = ToolUseContext(tools=list(tools.values()), workspace=tmp_path, permission_mode=mode)
        assert type(await policy(tools["Bash"], {"command": command}, context)) is expected, (mode, command)
    context = ToolUseContext(tools=list(tools.values()), workspace=tmp_path, permission_mode="accept-edits")
    edit = {"file_path": "a.txt", "old_string": "a", "new_string": "b"}
    assert type(await policy(tools["Edit"], edit, context)) is Allow  # the tool's own decision
