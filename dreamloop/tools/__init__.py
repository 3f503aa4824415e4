"""Tools: what a tool is, how one assistant message's calls run, who may allow them, and the built-ins.

* ``base``: ``Tool`` protocol, ``BaseTool``, ``ToolResult``, ``ToolUseContext``.
* ``function``: ``FunctionTool`` / ``@tool``, a tool from a plain function.
* ``permissions``: ``Allow`` / ``Deny`` / ``Ask``, permission modes, ``decide_permission``.
* ``orchestration``: ``run_tools()`` (``runTools()``), ``partition_tool_calls``,
  ``tool_results_message`` (``yieldMissingToolResultBlocks``), ``tool_schemas``.
* ``streaming``: ``StreamingToolExecutor``, calls that start while the model streams.
* ``cancellation``: what an unfinished call is told (``INTERRUPTED`` vs ``NOT_STARTED``)
  and the sibling rule (a failing Bash call stops the others).
* ``workspace``: path confinement; ``files``: Read, Write, Edit, Glob, Grep (``file_state``: what the model
  has seen of each file, so Write and Edit refuse one it has not read as it is); ``bash``: Bash
  (not a sandbox); ``environment``: what a command's environment holds (no credentials).

This package knows nothing about the model or the loop's State; the loop
hands it tool_use blocks and a ``ToolUseContext`` and gets messages back.
"""

from __future__ import annotations

from .base import BaseTool, Tool, ToolResult, ToolUseContext, find_tool, input_schema
from .bash import BashTool, is_read_only_command
from .cancellation import (
    INTERRUPTED,
    NOT_STARTED,
    USER_INTERRUPT,
    Unfinished,
    cancels_siblings,
    describe_call,
    model_failure,
    sibling_failure,
)
from .environment import CREDENTIAL_VARIABLES, command_environment
from .file_state import FileState
from .files import EditTool, GlobTool, GrepTool, ReadTool, WriteTool
from .function import FunctionTool, tool
from .orchestration import (
    ToolBatch,
    partition_tool_calls,
    progress_uuid,
    run_tool_use,
    run_tools,
    tool_results_message,
    tool_schemas,
    unfinished_progress,
)
from .permissions import (
    Allow,
    Ask,
    AskUser,
    CanUseTool,
    Deny,
    PermissionDecision,
    PermissionMode,
    decide_permission,
)
from .streaming import CallStatus, StreamingToolExecutor, ready_to_start
from .workspace import resolve_in_workspace

__all__ = [
    # what a tool is
    "BaseTool",
    "FunctionTool",
    "Tool",
    "ToolResult",
    "ToolUseContext",
    "FileState",
    "find_tool",
    "input_schema",
    "tool",
    # permissions
    "Allow",
    "Ask",
    "AskUser",
    "CanUseTool",
    "Deny",
    "PermissionDecision",
    "PermissionMode",
    "decide_permission",
    # running calls
    "CallStatus",
    "StreamingToolExecutor",
    "ToolBatch",
    "partition_tool_calls",
    "progress_uuid",
    "ready_to_start",
    "run_tool_use",
    "run_tools",
    "tool_results_message",
    "tool_schemas",
    "unfinished_progress",
    # calls that did not finish
    "INTERRUPTED",
    "NOT_STARTED",
    "USER_INTERRUPT",
    "Unfinished",
    "cancels_siblings",
    "describe_call",
    "model_failure",
    "sibling_failure",
    # built-in tools
    "BashTool",
    "CREDENTIAL_VARIABLES",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "WriteTool",
    "builtin_tools",
    "command_environment",
    "is_read_only_command",
    "resolve_in_workspace",
]


def builtin_tools() -> list[Tool]:
    """Fresh instances of the six built-in tools: Read, Write, Edit, Glob, Grep, Bash.

    Example::

        context = ToolUseContext(tools=builtin_tools(), workspace=Path("demo"))
    """
    return [ReadTool(), WriteTool(), EditTool(), GlobTool(), GrepTool(), BashTool()]
