"""The tools that read and stop a background command: ``TaskOutputTool`` (``TaskOutput``) and ``TaskStopTool``
(``TaskStop``).

A Bash call with ``run_in_background`` starts its command in the run's ``tasks.BackgroundTasks``
(``ToolUseContext.background``) and returns a task id, as a background ``Agent`` call does for its sub-agent
(``agent_1``...); these two take that id (``task_id``). An unknown id, or
background commands off, is an ``is_error`` result naming the id. The names and the field are dreamloop's choice,
after the tools Claude Code sessions called on background work (``TaskOutput``, the session fixture 06, an earlier
version); Claude Code 2.1.332 offered neither in the requests recorded so far (its ``Bash`` takes
``run_in_background``). Neither asks permission: each touches only a command the model itself started
(dreamloop's choice).
"""

from __future__ import annotations

from typing import Any, AsyncIterator

from pydantic import BaseModel, ConfigDict, Field

from .base import BaseTool, ToolResult, ToolUseContext
from .permissions import Allow, PermissionDecision

__all__ = ["TaskOutputTool", "TaskStopTool", "TaskInput"]


class TaskInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_id: str = Field(min_length=1, description="The id a background Bash or Agent call returned (bash_1, agent_1, ...).")


def _unknown(task_id: str, context: ToolUseContext) -> ToolResult:
    if context.background is None:
        return ToolResult(f"No background task {task_id}: background work is off in this run.", is_error=True)
    return ToolResult(f"No background task {task_id} in this run.", is_error=True)


class TaskOutputTool(BaseTool):
    """What a background command wrote so far (its tail, bounded) and whether it still runs. Read-only."""

    name = "TaskOutput"
    description = ("Reads the output a background command has written so far (the last part if it wrote much) "
                   "and says whether it is still running. Takes the task id a background Bash call returned.")
    input_model = TaskInput

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        return Allow()

    async def call(self, input: TaskInput, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        seen = context.background.output(input.task_id) if context.background is not None else None
        if seen is None:
            yield _unknown(input.task_id, context)
            return
        status, output = seen
        yield ToolResult(f"Task {input.task_id}: {status}.\n{output}" if output else
                         f"Task {input.task_id}: {status}. No output yet.")


class TaskStopTool(BaseTool):
    """Stop a background command (its process group killed); its notification then says ``stopped``."""

    name = "TaskStop"
    description = "Stops a background command. Takes the task id a background Bash call returned."
    input_model = TaskInput

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        return Allow()

    async def call(self, input: TaskInput, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        said = await context.background.stop(input.task_id) if context.background is not None else None
        if said is None:
            yield _unknown(input.task_id, context)
            return
        yield ToolResult(said)
