"""What a tool is: the ``Tool`` protocol, ``BaseTool``, ``ToolResult`` and ``ToolUseContext``.

A tool is a name, a description, a pydantic input model (its JSON schema is
the API's ``input_schema``), two questions about a given input (read-only?
safe to run in parallel?), its own permission default, and ``call()``, an
async generator that may yield progress and ends with a ``ToolResult``.
This module knows nothing about ordering calls, asking people, or the loop.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Protocol, runtime_checkable

from pydantic import BaseModel

from ..abort import AbortController
from ..messages import new_uuid
from .permissions import (ASK_REASONS, PERMISSION_MODES, Allow, Ask, AskUser, CanUseTool, PermissionDecision,
                          PermissionMode)

__all__ = [
    "BaseTool",
    "Tool",
    "ToolResult",
    "ToolUseContext",
    "cap_output",
    "find_tool",
    "input_schema",
]


@dataclass(frozen=True)
class ToolResult:
    """The conclusion of one tool call: becomes the ``tool_result`` block's content.

    ``content`` is a string or a list of content-block dicts (text, image),
    exactly as the API takes it; ``is_error`` marks a failure the model
    should read and react to (bad input, missing file, nonzero exit).
    """

    content: str | list[dict[str, Any]]
    is_error: bool = False

    @classmethod
    def of(cls, value: ToolResult | str | list[dict[str, Any]]) -> ToolResult:
        """``value`` as a ``ToolResult``: a ``ToolResult`` as is, a str or block list as its content.

        Raises ``TypeError`` for anything else.
        """
        if isinstance(value, ToolResult):
            return value
        if isinstance(value, (str, list)):
            return cls(value)
        kind = type(value).__name__
        raise TypeError(f"a tool result must be a ToolResult, a str or a list of content blocks, not {kind}")


@dataclass
class ToolUseContext:
    """Everything a tool call may need besides its input (the four-step-loop text's ``toolUseContext``).

    * ``tools``: the tools the model was offered (looked up by name).
    * ``abort``: the abort signal; tools may read ``abort.aborted``, the loop cancels on it.
    * ``can_use_tool`` (``canUseTool``): ``async (tool, input, context) -> Allow | Deny | Ask``;
      given, it replaces the tools' own checks and the mode.
    * ``ask``: ``async (tool, input, reason) -> Allow | Deny``, who answers an ``Ask``
      (a terminal prompt, a notebook button); ``None``: nobody, an ``Ask`` is denied.
    * ``workspace``: the root every built-in tool is confined to (``None``: file tools refuse).
    * ``permission_mode`` (``permissionMode``): ``"default"``, ``"accept-edits"``, ``"bypass"``.
    * ``bash_timeout_s``: Bash's default timeout in seconds (the model may pass its own, in ms).
    * ``tool_timeout_s``: the most any one call may take, in seconds; ``run_tool_use`` stops a
      call over it with an ``is_error`` result, and the file tools stop their worker threads.
    * ``secrets``: credential values (the model's API key) that no command a tool runs may see;
      Bash drops every environment variable holding one (``command_environment``).
    * ``max_output_chars``: the cap on a built-in tool's output text.
    * ``max_concurrency``: at most this many calls of a parallel batch run at once.
    * ``uuid``: makes the ids of the progress and tool-result messages (the loop passes ``QueryDeps.uuid``).
    * ``hooks``: the ``Hooks`` whose ``pre_tool_use`` / ``post_tool_use`` hooks run around each call
      (``QueryParams.hooks``); ``None``: no hooks.
    * ``sibling_rule``: a Bash call that ran and failed cancels the calls beside and after it
      (``QueryParams.sibling_rule``, ``cancellation.cancels_siblings``); False: every call runs.
    * ``results_as_finished``: the results message lists the results in the order the calls
      finished (``QueryParams.results_as_finished``); False: in call order.
    * ``sub_agent``: ``(agent_input, subagent_type, tool_use_id) -> QueryRun``, the loop's starter of a child run for the
      ``Agent`` tool (``QueryParams.sub_agents``); ``None``: sub-agents are off.
    * ``result_note``: ``(tool name, input) -> text | None``, asked after a call that ran and did not fail;
      a text goes inside the call's result as a ``<system-reminder>`` (the loop's nested memory files,
      ``Attachments.nested_memory``); ``None``: no note.
    * ``file_state``: the run's ``FileState`` (``file_state.py``, ``QueryParams.file_state``): Write and
      Edit refuse a file the model has not seen as it is; None: they check nothing.
    * ``background``: the run's ``tasks.BackgroundTasks`` (``QueryParams.background_tasks``): Bash's
      ``run_in_background`` starts its command there, ``TaskOutput`` / ``TaskStop`` read and stop it; ``None``: off.
    * ``tool_use_id``: the id of the call a tool's ``call`` is running (``for_call``; None outside a call): the
      ``Agent`` tool names its child run by it.
    """

    tools: list[Tool] = field(default_factory=list)
    abort: AbortController = field(default_factory=AbortController)
    can_use_tool: CanUseTool | None = None
    ask: AskUser | None = None
    workspace: Path | None = None
    permission_mode: PermissionMode = "default"
    bash_timeout_s: float = 120.0
    tool_timeout_s: float = 600.0
    secrets: tuple[str, ...] = ()
    max_output_chars: int = 30_000
    max_concurrency: int = 10
    uuid: Callable[[], str] = new_uuid
    hooks: Any = None
    sibling_rule: bool = False
    results_as_finished: bool = False
    sub_agent: Callable[..., Any] | None = None
    result_note: Callable[[str, Any], str | None] | None = None
    file_state: Any = None
    background: Any = None
    tool_use_id: str | None = None
    ask_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.workspace is not None:
            self.workspace = Path(self.workspace)
        if self.permission_mode not in PERMISSION_MODES:
            raise ValueError(f"permission_mode must be one of {PERMISSION_MODES}, not {self.permission_mode!r}")

    def for_call(self, tool_use_id: str) -> "ToolUseContext":
        """This context for one call: a shallow copy (the same tools, signal, lock, records) naming the call."""
        copied = copy.copy(self)
        copied.tool_use_id = tool_use_id
        return copied


@runtime_checkable
class Tool(Protocol):
    """The shape every tool has (dreamloop's design: the texts show tools through their calls only).
    ``BaseTool`` fills in the defaults.

    ``input`` below is an instance of ``input_model``, already validated.
    ``call(input, context)`` is an async generator: it may yield progress
    dicts (UI only) and ends by yielding one ``ToolResult``; anything it
    yields after that is ignored. (A plain ``async def call`` that *returns*
    a ``ToolResult`` or a ``str`` works too, without progress.) It may
    raise: the caller turns an exception into an ``is_error`` result.
    """

    name: str
    description: str
    input_model: type[BaseModel]

    def is_read_only(self, input: Any) -> bool: ...

    def is_concurrency_safe(self, input: Any) -> bool: ...

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision: ...

    def call(self, input: Any, context: ToolUseContext) -> AsyncIterator[dict[str, Any] | ToolResult]: ...

    def to_api(self) -> dict[str, Any]: ...


class BaseTool:
    """A convenient base for tools: subclass it, set the three attributes, write ``call``.

    Defaults fail closed (dreamloop's choice): not read-only, not concurrency
    safe; ``check_permissions`` allows read-only calls and asks for the rest.

    Example::

        class Echo(BaseTool):
            name = "echo"
            description = "Echo the text back."
            input_model = EchoInput          # a pydantic model with `text: str`

            def is_read_only(self, input): return True

            async def call(self, input, context):
                yield {"note": "echoing"}            # progress (optional)
                yield ToolResult(input.text)         # the conclusion
    """

    name: str = ""
    description: str = ""
    input_model: type[BaseModel]

    def is_read_only(self, input: Any) -> bool:
        """True if this call changes nothing."""
        return False

    def is_concurrency_safe(self, input: Any) -> bool:
        """True if this call may run beside others in a parallel batch."""
        return False

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        """The tool's own permission default : read-only allows, else ask."""
        if self.is_read_only(input):
            return Allow()
        return Ask(ASK_REASONS["input"].format(tool=self.name, input=input.model_dump(exclude_unset=True)))

    async def call(self, input: Any, context: ToolUseContext) -> AsyncIterator[dict[str, Any] | ToolResult]:
        """Run the call: yield progress dicts, then one ``ToolResult``."""
        raise NotImplementedError(f"{type(self).__name__}.call")
        yield  # pragma: no cover  (makes this an async generator)

    def to_api(self) -> dict[str, Any]:
        """The tool as the API takes it (``ToolParam``): name, description, input_schema."""
        param: dict[str, Any] = {"name": self.name}
        if self.description:
            param["description"] = self.description
        param["input_schema"] = input_schema(self.input_model)
        return param

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def find_tool(tools: list[Tool], name: str) -> Tool | None:
    """The tool called ``name``, or ``None``."""
    return next((t for t in tools if t.name == name), None)


def cap_output(text: str, limit: int, *, omitted: int = 0) -> str:
    """``text`` cut to ``limit`` characters, saying ``[output truncated]`` and how much was cut.

    ``omitted``: characters already dropped before ``text`` got here (a stream kept only its head).
    """
    omitted += max(len(text) - limit, 0)
    if not omitted:
        return text
    return f"{text[:limit]}\n[output truncated] {omitted} more characters not shown"


# ---------------------------------------------------------------------------
# input_schema: pydantic's JSON schema without the noise


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``model`` as an API ``input_schema``.

    Pydantic's schema minus its noise: no ``title`` keys, and an optional
    field (``x: int | None = None``) shown as its plain type instead of
    ``anyOf [..., null]`` with ``default: null``. Nested models keep their
    ``$defs``/``$ref``. Always ``{"type": "object", "properties": ..., ...}``.
    Computed once per model class (every request sends it); each call returns a fresh copy.
    """
    return copy.deepcopy(_input_schema(model))


@functools.cache
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = _clean(model.model_json_schema())
    return {"type": schema.pop("type", "object"), "properties": schema.pop("properties", {}), **schema}


_DATA_KEYS = {"default", "examples", "const", "enum"}  # values here are data, not schemas


def _clean(node: Any) -> Any:
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _clean(sub) for name, sub in value.items()}
        elif key == "title" and isinstance(value, str):
            continue
        elif key in _DATA_KEYS:
            out[key] = value
        else:
            out[key] = _clean(value)
    return _collapse_optional(out)


def _collapse_optional(node: dict[str, Any]) -> dict[str, Any]:
    # {"anyOf": [X, {"type": "null"}], "default": None} -> X (with description etc.)
    options = node.get("anyOf")
    if not (isinstance(options, list) and {"type": "null"} in options and "default" in node):
        return node
    rest = [o for o in options if o != {"type": "null"}]
    if len(rest) != 1 or node["default"] is not None:
        return node
    merged = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**rest[0], **merged}
