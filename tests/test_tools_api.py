"""The tools package's public surface: __all__, schemas, FunctionTool / @tool, builtin_tools()."""

from __future__ import annotations

import threading

import pytest
from pydantic import BaseModel, Field

import dreamloop.tools as tools
from dreamloop.tools import FunctionTool, Tool, ToolResult, ToolUseContext, builtin_tools, input_schema, run_tools, tool


def test_public_surface():
    assert sorted(tools.__all__) == sorted([
        "Allow", "Ask", "AskUser", "BaseTool", "BashTool", "CREDENTIAL_VARIABLES", "CallStatus", "CanUseTool", "Deny",
        "EditTool", "FileState", "FunctionTool", "GlobTool", "GrepTool", "INTERRUPTED", "NOT_STARTED", "PermissionDecision",
        "PermissionMode", "ReadTool", "StreamingToolExecutor", "Tool", "ToolBatch", "ToolResult", "ToolUseContext",
        "USER_INTERRUPT", "Unfinished", "WriteTool", "builtin_tools", "cancels_siblings", "command_environment",
        "decide_permission", "describe_call", "find_tool", "input_schema", "is_read_only_command", "model_failure",
        "partition_tool_calls", "progress_uuid", "ready_to_start", "resolve_in_workspace", "run_tool_use", "run_tools",
        "sibling_failure", "tool", "tool_results_message", "tool_schemas", "unfinished_progress",
    ])  # fmt: skip
    for name in tools.__all__:
        assert getattr(tools, name) is not None


def test_builtin_tools_are_fresh_and_complete():
    first, second = builtin_tools(), builtin_tools()
    assert [t.name for t in first] == ["Read", "Write", "Edit", "Glob", "Grep", "Bash"]
    assert all(a is not b for a, b in zip(first, second))
    assert all(isinstance(t, Tool) for t in first)


def test_input_schema_is_clean():
    class Inner(BaseModel):
        title: str  # a field called "title" survives

    class Example(BaseModel):
        path: str = Field(description="Where.")
        count: int | None = Field(default=None, ge=1)
        either: int | None  # required, may be null: stays anyOf
        inner: Inner | None = None

    assert input_schema(Example) == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Where."},
            "count": {"type": "integer", "minimum": 1},
            "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "inner": {"$ref": "#/$defs/Inner"},
        },
        "required": ["path", "either"],
        "$defs": {"Inner": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
    }


def test_builtin_schemas_have_claude_code_fields():
    schemas = {t.name: t.to_api()["input_schema"] for t in builtin_tools()}
    assert schemas["Read"]["required"] == ["file_path"]
    assert list(schemas["Read"]["properties"]) == ["file_path", "offset", "limit"]
    assert list(schemas["Edit"]["properties"]) == ["file_path", "old_string", "new_string", "replace_all"]
    assert list(schemas["Bash"]["properties"]) == ["command", "timeout", "description", "run_in_background"]
    assert all(s["type"] == "object" and s["additionalProperties"] is False for s in schemas.values())


class Pair(BaseModel):
    a: int
    b: int


async def run_one(t, input: dict) -> dict:
    messages = [m async for m in run_tools([{"id": "T1", "name": t.name, "input": input}], ToolUseContext(tools=[t]))]
    return messages[-1].message["content"][0]


async def test_tool_decorator_from_an_async_function():
    @tool(Pair, read_only=True)
    async def add(input: Pair) -> str:
        """Add two integers."""
        return str(input.a + input.b)

    assert isinstance(add, FunctionTool)
    assert add.to_api() == {
        "name": "add",
        "description": "Add two integers.",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    }
    assert add.is_read_only(Pair(a=1, b=2)) and add.is_concurrency_safe(Pair(a=1, b=2))
    assert (await run_one(add, {"a": 2, "b": 3}))["content"] == "5"


async def test_function_tool_variants():
    seen_threads = []

    def blocking(input: Pair, context: ToolUseContext) -> ToolResult:
        seen_threads.append(threading.current_thread() is threading.main_thread())
        return ToolResult(f"{input.a - input.b} with {len(context.tools)} tool", is_error=input.a < input.b)

    sub = FunctionTool(blocking, Pair, name="sub", description="Subtract.", read_only=True)
    assert await run_one(sub, {"a": 1, "b": 3}) == {
        "type": "tool_result", "tool_use_id": "T1", "content": "-2 with 1 tool", "is_error": True
    }  # fmt: skip
    assert seen_threads == [False]  # ran in a worker thread

    async def steps(input: Pair):
        yield {"at": input.a}
        yield "finished"

    gen = FunctionTool(steps, Pair, read_only=True)
    assert (await run_one(gen, {"a": 1, "b": 1}))["content"] == "finished"

    async def wrong(input: Pair):
        return 42

    bad = FunctionTool(wrong, Pair, read_only=True)
    result = await run_one(bad, {"a": 1, "b": 1})
    assert result["is_error"] and "must be a ToolResult, a str" in result["content"]


def test_function_tool_rejects_names_the_api_rejects():
    async def f(input: Pair) -> str:
        return ""

    with pytest.raises(ValueError, match="must match"):
        FunctionTool(f, Pair, name="has space")
    assert "description" not in FunctionTool(f, Pair).to_api()  # no docstring, no description
