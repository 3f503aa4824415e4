"""Chapter 04: tools: the exercise checks."""

from __future__ import annotations

import shutil
from typing import Any

from ..cli import allow_test_commands
from ..tools import (
    Allow,
    Ask,
    Deny,
    ToolUseContext,
    builtin_tools,
    partition_tool_calls,
    run_tools,
)
from ._checking import (
    _call,
    _Fail,
    _field,
    _require_callable,
    _run,
    _short,
    _tool_use_blocks,
    _use,
    _verdict,
)

__all__ = ['check_tool_definition', 'check_partition', 'check_can_use_tool']

def check_tool_definition(tool: Any) -> bool:
    """Check a ``WordCount`` tool: schema from its pydantic input (``text: str``, ``unique: bool = False``),
    read-only and concurrency-safe, right results, and bad input turned into ``is_error`` results."""
    hint = ("class WordCountInput(BaseModel): text: str; unique: bool = False — then "
            "@dl.tool(WordCountInput, name=\"WordCount\", read_only=True) on a function returning str(count).")

    def body() -> str:
        if not hasattr(tool, "to_api") or not hasattr(tool, "input_model"):
            raise _Fail(f"expected a tool (made with @dl.tool or a BaseTool subclass), got {type(tool).__name__}.", hint)
        if getattr(tool, "name", None) != "WordCount":
            raise _Fail(f"the tool is named {getattr(tool, 'name', None)!r}; expected 'WordCount'.", hint)
        schema = tool.to_api().get("input_schema", {})
        props = schema.get("properties", {})
        if props.get("text", {}).get("type") != "string" or props.get("unique", {}).get("type") != "boolean":
            raise _Fail(f"input_schema properties are {_short(props, 160)}; expected text (string) and unique (boolean).", hint)
        if schema.get("required") != ["text"]:
            raise _Fail(f"input_schema required is {schema.get('required')}; expected ['text'] (unique has a default).", hint)
        sample = tool.input_model.model_validate({"text": "a b"})
        if not (tool.is_read_only(sample) and tool.is_concurrency_safe(sample)):
            raise _Fail("the tool is not read-only and concurrency-safe.",
                        "counting words changes nothing: read_only=True (concurrency_safe follows it).")
        calls = [
            ({"text": "the cat saw the dog"}, False, "5"),
            ({"text": "the cat saw the dog", "unique": True}, False, "4"),
            ({"text": "  spaced   out\nwords "}, False, "3"),
            ({}, True, "InputValidationError"),
            ({"text": "hi", "unique": "maybe"}, True, "InputValidationError"),
        ]
        uses = [{"type": "tool_use", "id": f"toolu_{i + 1}", "name": "WordCount", "input": c[0]} for i, c in enumerate(calls)]

        async def run_calls() -> list[dict[str, Any]]:
            context = ToolUseContext(tools=[tool])
            messages = [m async for m in run_tools(uses, context) if m.type == "user"]
            return messages[-1].message["content"]

        results = _run(run_calls)
        for (input, should_fail, want), result in zip(calls, results):
            failed = bool(result.get("is_error"))
            if failed and not should_fail:
                raise _Fail(f"WordCount({_short(input)}) failed: {_short(result['content'], 160)}", hint)
            if should_fail and not (failed and want in str(result["content"])):
                raise _Fail(f"WordCount({_short(input)}) should be an InputValidationError result, got "
                            f"{_short(result['content'], 100)}.", "let the pydantic model validate: no defaults for text, "
                            "unique typed bool.")
            if not should_fail and str(result["content"]).strip() != want:
                raise _Fail(f"WordCount({_short(input)}) returned {_short(result['content'], 60)!r}; expected {want!r}.",
                            "split on whitespace (text.split()); with unique, count the distinct words (len(set(...))).")
        return "schema from pydantic, read-only and concurrency-safe, 3 right answers, 2 bad inputs as is_error results."

    return _verdict("WordCount tool", body)


def _partition_cases() -> dict[str, list[dict[str, Any]]]:
    def read(i: str, path: str = "config.py") -> dict[str, Any]:
        return _use(i, "Read", file_path=path)

    def edit(i: str) -> dict[str, Any]:
        return _use(i, "Edit", file_path="config.py", old_string="1", new_string="2")

    def bash(i: str, command: str) -> dict[str, Any]:
        return _use(i, "Bash", command=command)

    return {
        "R R W R": [read("toolu_1"), read("toolu_2", "notes.md"), edit("toolu_3"), read("toolu_4")],
        "one read": [read("toolu_1")],
        "two edits": [edit("toolu_1"), edit("toolu_2")],
        "unknown tool between reads": [read("toolu_1"), _use("toolu_2", "Wrte", file_path="x"), read("toolu_3")],
        "invalid input": [read("toolu_1"), _use("toolu_2", "Read", path="config.py"), read("toolu_3")],
        "Bash depends on the command": [bash("toolu_1", "ls"), bash("toolu_2", "cat config.py"),
                                        bash("toolu_3", "python -m unittest"), bash("toolu_4", "ls tests")],
    }


def check_partition(fn: Any) -> bool:
    """Check ``fn(tool_uses, tools) -> list of batches`` (each a list of tool_use ids or blocks), against
    ``dreamloop.tools.partition_tool_calls``: consecutive concurrency-safe calls share a batch, others run alone."""
    hint = ("for each call: find the tool by name, validate the input (tool.input_model.model_validate), ask "
            "tool.is_concurrency_safe(parsed); unknown or invalid → unsafe. Add a safe call to the last batch if that "
            "batch is safe, else start a new batch.")

    def body() -> str:
        _require_callable(fn, "partition")
        tools = builtin_tools()
        for case, uses in _partition_cases().items():
            blocks = _tool_use_blocks(*uses)
            want = [[b.id for b in batch.tool_uses] for batch in partition_tool_calls(blocks, tools)]
            got = _run(lambda: _call("partition(tool_uses, tools)", fn, blocks, tools, hint=hint))
            try:
                ids = [[b if isinstance(b, str) else _field(b, "id") for b in batch] for batch in got]
            except TypeError:
                raise _Fail(f"for '{case}' it returned {_short(repr(got), 100)}; expected a list of lists.", hint) from None
            if ids != want:
                raise _Fail(f"for '{case}' your batches are {ids}; partition_tool_calls gives {want}.", hint)
        return f"{len(_partition_cases())} cases, the same batches as partition_tool_calls (input decides, not just the name)."

    return _verdict("partition tool calls", body)


def check_can_use_tool(fn: Any) -> bool:
    """Check ``async fn(tool, input, context) -> Allow | Deny | Ask``: allow Bash for the project's test command
    (``python -m unittest`` / ``python3 -m unittest``, no shell syntax), else the tool's own decision. Compared
    with ``dreamloop.cli.allow_test_commands()`` in the default mode."""
    hint = ('if tool.name == "Bash" and the command starts with "python -m unittest" or "python3 -m unittest" and '
            "contains none of ; | & $ ` < > → Allow(); otherwise return await "
            "tool.check_permissions(tool.input_model.model_validate(input), context).")
    calls = [
        ("Read", {"file_path": "config.py"}),
        ("Bash", {"command": "python -m unittest discover -s tests"}),
        ("Bash", {"command": "python3 -m unittest -v"}),
        ("Bash", {"command": "python -m unittest; rm -rf ~"}),
        ("Bash", {"command": "pip install requests"}),
        ("Bash", {"command": "ls"}),
        ("Edit", {"file_path": "config.py", "old_string": "1", "new_string": "2"}),
        ("Write", {"file_path": "../outside.txt", "content": "x"}),
    ]

    def body() -> str:
        _require_callable(fn, "can_use_tool")
        from ..demo import copy_sample_project

        async def decide(policy: Any, learner: bool) -> list[Any]:
            workspace = copy_sample_project()
            try:
                tools = {t.name: t for t in builtin_tools()}
                context = ToolUseContext(tools=list(tools.values()), workspace=workspace)
                out = []
                for name, input in calls:
                    if learner:
                        out.append(await _call(f"can_use_tool({name}, {_short(input, 60)}, context)", policy,
                                               tools[name], dict(input), context, hint=hint))
                    else:
                        out.append(await policy(tools[name], dict(input), context))
                return out
            finally:
                shutil.rmtree(workspace, ignore_errors=True)

        want = _run(lambda: decide(allow_test_commands(), False))
        got = _run(lambda: decide(fn, True))
        for (name, input), w, g in zip(calls, want, got):
            if not isinstance(g, (Allow, Deny, Ask)):
                raise _Fail(f"for {name}({_short(input, 60)}) it returned {_short(repr(g), 60)}; expected Allow(), "
                            "Deny(reason) or Ask(reason).", hint)
            if type(g) is not type(w):
                raise _Fail(f"for {name}({_short(input, 60)}) you decided {type(g).__name__}; expected {type(w).__name__}.",
                            hint)
        return f"{len(calls)} calls, the same Allow / Ask / Deny as dreamloop's allow_test_commands()."

    return _verdict("can_use_tool", body)
