"""The Bash tool: run a shell command in the workspace (``BashTool``).

Runs ``/bin/bash -c COMMAND`` as an asyncio subprocess in its own process
group, with ``cwd`` at the workspace root, a timeout, an output cap, stdin
closed, and the environment without the kit's credentials
(``environment.command_environment``; ``BashTool(pass_credentials=True)``
passes them). BASH IS NOT A SANDBOX: the command runs with your user's rights and
can read or change anything you can; path confinement does not apply to it.
What keeps it in check is the permission decision (it asks, except for a
small allowlist of read-only commands) and the person answering. This module
knows nothing about who answers.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shlex
import signal
from pathlib import Path
from typing import Any, AsyncIterator

from pydantic import BaseModel, ConfigDict, Field

from .base import BaseTool, ToolResult, ToolUseContext, cap_output
from .environment import command_environment
from .permissions import Allow, Ask, PermissionDecision
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

_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}~\\\n]")  # chaining, redirection, substitution, expansion
_POLL_S = 0.05  # how often to check whether bash exited while its output pipe stays open
_DRAIN_S = 2.0  # how long to wait for the rest of the output once the process group is gone


class BashInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The command to execute.")
    timeout: int | None = Field(
        default=None, ge=1, le=600_000, description="Optional timeout in milliseconds (max 600000)."
    )
    description: str | None = Field(
        default=None, description="A short description of what the command does, in 5-10 words."
    )


def is_read_only_command(command: str) -> bool:
    """True if ``command`` is one allowlisted read-only command with plain arguments.

    Plain means: no shell syntax at all (``; & | < > $ ` ( ) { } ~ \\``, newlines),
    the first word in ``READ_ONLY_COMMANDS`` (or ``git`` + a subcommand in
    ``READ_ONLY_GIT_COMMANDS``, without ``--output``/``--ext-diff``), and no
    argument that is absolute or climbs with ``..``. Deliberately conservative:
    a false "no" only means the person is asked. A convenience, not security.
    """
    if _SHELL_SYNTAX.search(command):
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
        return Ask(f"Bash wants to run: {input.command}")

    async def call(self, input: BashInput, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        try:
            root = workspace_root(context.workspace)
        except ValueError as exc:
            yield ToolResult(str(exc), is_error=True)
            return
        timeout_s = input.timeout / 1000 if input.timeout else context.bash_timeout_s
        env = {**command_environment(context.secrets, pass_credentials=self.pass_credentials),
               "PAGER": "cat", "GIT_PAGER": "cat"}
        output, code, left = await _run(input.command, root, timeout_s, context.max_output_chars, env)
        output = output.rstrip("\n")
        if left:
            output = _join(output, left)
        if code is None:
            yield ToolResult(_join(output, f"Command timed out after {timeout_s:g}s"), is_error=True)
        elif code != 0:
            yield ToolResult(_join(output, f"Exit code: {code}"), is_error=True)
        else:
            yield ToolResult(output)


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


# ---------------------------------------------------------------------------
# Running the process


async def _run(command: str, cwd: Path, timeout_s: float, limit: int,
               env: dict[str, str]) -> tuple[str, int | None, str]:
    """(output, exit code, what it left running) of ``command``; exit code ``None`` if it timed out.

    The output pipe is ours (not the subprocess transport's), so a process that
    outlives the call and keeps it open (``setsid cmd &``) is cut off cleanly
    when the call ends, and named. On cancellation the process group is killed
    before ``CancelledError`` propagates.
    """
    read_end, write_end = os.pipe()
    try:
        proc = await start_process(
            "/bin/bash", "-c", command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_end,
            stderr=asyncio.subprocess.STDOUT,  # one stream, interleaved as written
            start_new_session=True,  # its own process group, so we can kill all of it
            env=env,
        )  # fmt: skip
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    stream, output = asyncio.StreamReader(), os.fdopen(read_end, "rb", buffering=0)
    capture = _Capture(limit)
    reader = asyncio.create_task(capture.drain(stream))
    pipe: asyncio.BaseTransport | None = None
    try:
        pipe, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream),
                                                                     output)
        exited = await _wait_for_exit(proc, reader, timeout_s)
        _kill_group(proc)  # the command itself on timeout; background jobs it left behind otherwise
        await asyncio.wait({reader}, timeout=_DRAIN_S)
        left = "" if reader.done() else _left_running(read_end)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), _DRAIN_S)
        return capture.text(), (proc.returncode if exited else None), left
    finally:
        reader.cancel()
        (pipe or output).close()  # a process that left the group may still hold the other end: cut it off
        if proc.returncode is None:  # cancelled (or failed) while running: take the group down
            _kill_group(proc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), _DRAIN_S)


async def start_process(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
    """``create_subprocess_exec`` that a cancellation can neither hang nor leave a process group behind.

    The process runs (and may fork) before ``create_subprocess_exec`` returns. Cancelling it in
    that window makes asyncio kill bash alone, leaking its children, and on CPython 3.11 it can
    wait for ever: the cancelled creation closes the transport and waits for pipes it had not yet
    connected, which only close when every process holding them (a child of bash's) has exited.
    So the start is shielded from the cancellation; a cancelled start waits for it to finish (an
    uncancelled start finishes at once: it is cancelling it that can hang), however often it is
    cancelled meanwhile, kills the whole group, and re-raises. Nothing of it outlives the caller:
    left running, the start would be cancelled by ``asyncio.run``'s shutdown, which then hangs.
    """
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(*args, **kwargs))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        while not starting.done():
            with contextlib.suppress(asyncio.CancelledError):  # re-raised below, once the start is over
                await asyncio.wait({starting})
        if starting.cancelled() or starting.exception() is not None:
            raise
        proc = starting.result()
        _kill_group(proc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), _DRAIN_S)
        raise


def _left_running(read_end: int) -> str:
    """A note naming the processes that still hold the output pipe (they left the process group)."""
    holders = []
    with contextlib.suppress(OSError):
        pipe = f"pipe:[{os.fstat(read_end).st_ino}]"
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                if any(os.readlink(f"/proc/{pid}/fd/{fd}") == pipe for fd in os.listdir(f"/proc/{pid}/fd")):
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        argv = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                    holders.append(f"pid {pid} ({argv})")
    who = ", ".join(holders) if holders else "a process"
    return (f"[note] the command left {who} running outside its process group (setsid, nohup...), still holding "
            "its output open; it was not stopped, and its further output is not shown.")


async def _wait_for_exit(proc: asyncio.subprocess.Process, reader: asyncio.Task, timeout_s: float) -> bool:
    """Wait until bash exits (True) or the timeout passes (False).

    ``proc.wait()`` alone would also wait for background jobs that keep the
    output pipe open, so while the output is open we poll ``returncode``.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while proc.returncode is None and not reader.done():
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        await asyncio.wait({reader}, timeout=min(_POLL_S, remaining))
    if proc.returncode is None:  # output closed; the exit follows
        try:
            await asyncio.wait_for(proc.wait(), max(deadline - loop.time(), 0))
        except TimeoutError:
            return False
    return True


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class _Capture:
    """The first ``limit`` characters of a byte stream, decoded as UTF-8; counts the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0
        self.omitted = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        assert stream is not None
        while chunk := await stream.read(65536):
            self._add(self._decoder.decode(chunk))
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        room = max(self.limit - self.size, 0)
        kept = text[:room]
        self.parts.append(kept)
        self.size += len(kept)
        self.omitted += len(text) - len(kept)

    def text(self) -> str:
        return cap_output("".join(self.parts), self.limit, omitted=self.omitted)
