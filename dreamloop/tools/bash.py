"""The Bash tool: run a shell command in the workspace (``BashTool``).

Runs ``/bin/bash -c COMMAND`` in its own process group (``process.run_command``),
with ``cwd`` at the workspace root, a timeout, an output cap, stdin
closed, and the environment without the kit's credentials
(``environment.command_environment``; ``BashTool(pass_credentials=True)``
passes them). BASH IS NOT A SANDBOX: the command runs with your user's rights and
can read or change anything you can; path confinement does not apply to it.
What keeps it in check is the permission decision (it asks, except for a
small allowlist of read-only commands) and the person answering. This module
knows nothing about who answers.
"""

from __future__ import annotations

import shlex
from typing import Any, AsyncIterator

from pydantic import BaseModel, ConfigDict, Field

from .base import BaseTool, ToolResult, ToolUseContext
from .environment import command_environment
from .permissions import ASK_REASONS, Allow, Ask, PermissionDecision, has_shell_syntax
from .process import run_command
from .workspace import resolve_in_workspace, workspace_root

__all__ = ["BashInput", "BashTool", "READ_ONLY_COMMANDS", "READ_ONLY_GIT_COMMANDS", "is_read_only_command"]

READ_ONLY_COMMANDS = frozenset(
    {"ls", "cat", "head", "tail", "wc", "pwd", "echo", "grep", "stat", "du", "diff",
     "which", "whoami", "basename", "dirname", "realpath", "sleep"}
)  # fmt: skip
"""Commands that only read (with the restrictions of ``is_read_only_command``); ``sleep`` reads nothing and
changes nothing (dreamloop's choice: calls that take known times run side by side, as the ``dreamloop
compare`` scenario ``results_in_finishing_order`` needs; the call's timeout still bounds it)."""

READ_ONLY_GIT_COMMANDS = frozenset({"status", "diff", "log", "show"})
"""``git`` subcommands that only read."""



class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The command to execute.")
    timeout: int | None = Field(
        default=None, ge=1, le=600_000, description="Optional timeout in milliseconds (max 600000)."
    )
    description: str | None = Field(
        default=None, description="A short description of what the command does, in 5-10 words."
    )
    run_in_background: bool | None = Field(
        default=None, description="Run the command in the background and return its task id at once; "
                                  "read its output with TaskOutput, stop it with TaskStop.")


def is_read_only_command(command: str) -> bool:
    """True if ``command`` is one allowlisted read-only command with plain arguments.

    Plain means: no shell syntax at all (``; & | < > $ ` ( ) { } ~ \\``, line breaks:
    ``permissions.has_shell_syntax(command, expansion=True)``),
    the first word in ``READ_ONLY_COMMANDS`` (or ``git`` + a subcommand in
    ``READ_ONLY_GIT_COMMANDS``, without ``--output``/``--ext-diff``), and no
    argument that is absolute or climbs with ``..``. Deliberately conservative:
    a false "no" only means the person is asked. A convenience, not security.
    """
    if has_shell_syntax(command, expansion=True):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words:
        return False
    if words[0] == "git":
        if len(words) < 2 or words[1] not in READ_ONLY_GIT_COMMANDS:
            return False
        if any(w.startswith(("--output", "--ext-diff")) for w in words):
            return False
    elif words[0] not in READ_ONLY_COMMANDS:
        return False
    return not any(_leaves_directory(w) for w in words[1:])


def _leaves_directory(word: str) -> bool:
    value = word.split("=", 1)[-1]
    return value.startswith("/") or ".." in value or (word.startswith("-") and "/" in word)


class BashTool(BaseTool):
    """Run a shell command in the workspace; see the module docstring: not a sandbox.

    Result: the combined stdout and stderr, capped at ``context.max_output_chars``;
    a nonzero exit is an ``is_error`` result ending ``Exit code: N``; a timeout
    (``timeout`` in ms, else ``context.bash_timeout_s``) kills the process
    group and says ``Command timed out after Ns``. Cancelling the call kills
    the process group too, as does the end of the command (background jobs
    don't outlive it; a process that left the group, e.g. with ``setsid``, is
    named in the result as still running). Each call starts a fresh shell at
    the workspace root. Read-only (and then concurrency-safe) only for
    ``is_read_only_command``.

    The command's environment is the user's minus the kit's credentials
    (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN`` and any variable holding
    the model's key: ``ToolUseContext.secrets``); ``pass_credentials=True``
    is the opt-in that passes them (a command that calls the API itself).
    """

    name = "Bash"
    description = (
        "Executes a bash command in a fresh shell whose working directory is the workspace root, "
        "and returns its combined stdout and stderr. Use it for running tests, builds and scripts; "
        "use Read, Edit, Write, Glob and Grep for files. Optional timeout in milliseconds "
        "(default 120000, max 600000). Output is truncated beyond a limit."
    )
    input_model = BashInput

    def __init__(self, *, pass_credentials: bool = False) -> None:
        self.pass_credentials = pass_credentials

    def is_read_only(self, input: Any) -> bool:
        return is_read_only_command(input.command)

    def is_concurrency_safe(self, input: Any) -> bool:
        return self.is_read_only(input)

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        """Allow an allowlisted read-only command whose arguments stay in the workspace; else ask."""
        if self.is_read_only(input) and _arguments_inside(input.command, context):
            return Allow()
        return Ask(ASK_REASONS["command"].format(command=input.command))

    async def call(self, input: BashInput, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        try:
            root = workspace_root(context.workspace)
        except ValueError as exc:
            yield ToolResult(str(exc), is_error=True)
            return
        timeout_s = input.timeout / 1000 if input.timeout else context.bash_timeout_s
        env = {**command_environment(context.secrets, pass_credentials=self.pass_credentials),
               "PAGER": "cat", "GIT_PAGER": "cat"}
        if input.run_in_background:
            yield await _start_in_background(input.command, root, env, context, input.description)
            return
        done = await run_command(input.command, cwd=root, env=env, timeout_s=timeout_s,
                                 limit=context.max_output_chars)  # stdin closed; stderr interleaved with stdout
        output, code = done.stdout.rstrip("\n"), done.code
        if done.left_running:
            output = _join(output, done.left_running)
        if code is None:
            yield ToolResult(_join(output, f"Command timed out after {timeout_s:g}s"), is_error=True)
        elif code != 0:
            yield ToolResult(_join(output, f"Exit code: {code}"), is_error=True)
        else:
            yield ToolResult(output)


async def _start_in_background(command: str, root: Any, env: dict[str, str], context: ToolUseContext,
                                description: str | None = None) -> ToolResult:
    """Bash with ``run_in_background``: the command starts in the run's ``BackgroundTasks``; the result is its id,
    at once (dreamloop's words). Off (``context.background`` None): an ``is_error`` result saying so.
    ``description``: the call's, which its notification names (as Claude Code 2.1.332's named the call's
    description: ``background_command_ends_before_next_request``)."""
    if context.background is None:
        return ToolResult("Background commands are off in this run (QueryParams.background_tasks): "
                          "run the command without run_in_background.", is_error=True)
    try:
        task_id = await context.background.start_command(command, cwd=root, env=env, description=description)
    except OSError as exc:
        return ToolResult(f"The command could not start: {exc}", is_error=True)
    return ToolResult(f"Command running in the background with task id {task_id}. "
                      f"A notification will say when it ends; TaskOutput reads its output so far, TaskStop stops it.")


def _join(output: str, last_line: str) -> str:
    return f"{output}\n{last_line}" if output else last_line


def _arguments_inside(command: str, context: ToolUseContext) -> bool:
    # Arguments of an allowlisted command must resolve inside the workspace (no symlink escape).
    try:
        root = workspace_root(context.workspace)
        for word in shlex.split(command)[1:]:
            if not word.startswith("-"):
                resolve_in_workspace(root, word)
    except ValueError:
        return False
    return True
