"""Work that outlives a tool call: background commands and the notifications that say they ended.

``BackgroundTasks`` is one run's registry (``ToolUseContext.background``, made when ``QueryParams.background_tasks``
is on). ``start_command`` starts a Bash command with ``run_in_background`` and returns its id at once (``bash_1``,
``bash_2``…: fixed ids, no clock); ``output`` reads what a running command wrote so far (its tail, bounded);
``stop`` ends one. ``start_agent`` runs a sub-agent's run (an ``Agent`` call with ``run_in_background``) beside
the loop and returns its id at once (``agent_1``, ``agent_2``…); when the child ends, its notification carries its
final answer. Every ended task reports with ``post(TaskNotification(...))``: the queue is the only way an ended task
reaches the model. At phase 5 the loop
calls ``take_notifications()``: each ended task's notification, once, in the order the tasks ended, as one
``task_notification`` attachment each (``notification_attachment``). ``close()`` stops whatever still runs; the run's
settle awaits it, so no background process outlives its run.

Bounded: a command's output is kept as its last ``limit`` characters however much it writes; a notification
carries at most ``TAIL_CHARS`` of it (dreamloop's choices of figures).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .messages import LAST_TOOL_RESULT
from .tools.process import CommandProcess

__all__ = ["BackgroundTasks", "KEPT_OUTPUT_CHARS", "STOPPED_AFTER_WAIT", "STOPPED_AT_END", "STOPPED_BY_TASK_STOP",
           "TAIL_CHARS", "TaskNotification", "notification_attachment"]

TAIL_CHARS = 2_000
"""The most of a command's output a notification carries: its last characters (dreamloop's choice)."""

KEPT_OUTPUT_CHARS = 30_000
"""Characters of a background command's output kept while it runs (its last ones; ``TaskOutput`` reads them):
``BackgroundTasks(limit=...)``'s default, dreamloop's choice of figure."""


@dataclass(frozen=True)
class TaskNotification:
    """One ended task: ``task_id``, ``kind`` (``"command"``, or ``"agent"`` for a sub-agent), ``status``
    (``"completed"``, ``"failed"``, ``"stopped"``), ``exit_code`` (a command's; None otherwise) and ``tail`` (the
    end of its output, at most ``TAIL_CHARS``), ``summary`` (what it was: the Bash call's description, else the command;
    the sub-agent's task's description)."""

    task_id: str
    kind: str
    status: str
    summary: str
    exit_code: int | None = None
    tail: str = ""

    def text(self) -> str:
        """What the model reads (dreamloop's own words, as a ``<system-reminder>``)."""
        code = "" if self.exit_code is None else f", exit code {self.exit_code}"
        if self.kind == "agent":
            tail = f"\nIts answer:\n{self.tail}" if self.tail else "\nIt gave no answer."
        else:
            tail = f"\nThe end of its output:\n{self.tail}" if self.tail else "\nIt wrote no output."
        return (f"<system-reminder>\nBackground task {self.task_id} ({self.kind}: {self.summary}) "
                f"{self.status}{code}.{tail}\n</system-reminder>")


def notification_attachment(notification: TaskNotification, *, in_last_result: bool = False) -> dict[str, Any]:
    """The ``task_notification`` attachment dict for one notification (``AttachmentMessage.attachment``).
    ``in_last_result``: it follows a results message at phase 5 and is sent inside that message's last
    ``tool_result`` (``placement``: ``messages.LAST_TOOL_RESULT``), as Claude Code 2.1.332 sent a notification of a
    command that had ended before the next request (``background_command_ends_before_next_request``); else it is a
    reminder of its own (a run waiting for its background work: ``background_command_ends_later``)."""
    placement = {"placement": LAST_TOOL_RESULT} if in_last_result else {}
    return {"type": "task_notification", "task_id": notification.task_id, "kind": notification.kind,
            "status": notification.status, "exit_code": notification.exit_code, "text": notification.text(),
            **placement}


class _Command:
    def __init__(self, task_id: str, command: str, process: CommandProcess, description: str | None = None) -> None:
        self.task_id, self.command, self.process = task_id, command, process
        self.description = description
        self.stopped = False
        self.watcher: asyncio.Task | None = None


class _Agent:
    def __init__(self, task_id: str, description: str, run: Any) -> None:
        self.task_id, self.description, self.run = task_id, description, run
        self.stopped = False
        self.answer = ""
        self.watcher: asyncio.Task | None = None


STOPPED_BY_TASK_STOP = "TaskStop"
"""The abort reason of a background sub-agent stopped by a ``TaskStop`` call."""
STOPPED_AT_END = "the parent's run ended"
"""The abort reason of a background sub-agent still running when its parent's run ends (``close()``)."""
STOPPED_AFTER_WAIT = "the wait for its notification ran out"
"""The abort reason of a background sub-agent stopped when the model's wait for a notification ran out."""


AGENT_STOP_GRACE_S = 5.0
"""Seconds a stopped background sub-agent has to reach its Terminal after its abort signal fired, before its task
is cancelled (which also ends it in a Terminal; dreamloop's choice of figure)."""


class BackgroundTasks:
    """One run's background commands and its queue of task notifications (see the module docstring)."""

    def __init__(self, *, limit: int = KEPT_OUTPUT_CHARS) -> None:
        self.limit = limit
        self._commands: dict[str, _Command] = {}
        self._agents: dict[str, _Agent] = {}
        self._queue: list[TaskNotification] = []
        self._delivered: set[str] = set()
        self._count = 0

    # -- commands -------------------------------------------------------------------------------------------------

    async def start_command(self, command: str, *, cwd: str | Path, env: Mapping[str, str],
                            description: str | None = None) -> str:
        """Start ``command`` (``bash -c``, its own process group); its id, at once. ``description``: the Bash call's,
        what its notification names (the command when none is given). Raises ``OSError`` if it cannot start."""
        self._count += 1
        task_id = f"bash_{self._count}"
        process = await CommandProcess.start(command, cwd=cwd, env=env, limit=self.limit, tail=True)
        entry = self._commands[task_id] = _Command(task_id, command, process, description)
        entry.watcher = asyncio.ensure_future(self._watch(entry))
        return task_id

    async def _watch(self, entry: _Command) -> None:
        while not await entry.process.wait(3600.0):
            pass
        await entry.process.close()  # the output drained, the group killed, the process reaped
        self._end(entry)

    def _end(self, entry: _Command) -> None:
        code = entry.process.returncode
        status = "stopped" if entry.stopped else ("completed" if code == 0 else "failed")
        self.post(TaskNotification(entry.task_id, "command", status, entry.description or entry.command,
                                   exit_code=None if entry.stopped else code,
                                   tail=entry.process.stdout.text()[-TAIL_CHARS:]))

    # -- sub-agents ---------------------------------------------------------------------------------------------

    def start_agent(self, description: str, run: Any, ending: Callable[[Any], tuple[bool, str]]) -> str:
        """Run a sub-agent's ``run`` (a ``QueryRun``, not started, with an abort signal of its own) beside the loop;
        its id (``agent_N``), at once. When the run has its Terminal, ``ending(run)`` says ``(is_error, answer)``
        and the notification is posted: ``completed`` or ``failed``, or ``stopped`` after ``stop`` or ``close``
        (whose Terminal is then an abort's). A run that raises is ``failed``, with the exception named."""
        task_id = f"agent_{len(self._agents) + 1}"
        entry = self._agents[task_id] = _Agent(task_id, description, run)
        entry.watcher = asyncio.ensure_future(self._drive(entry, ending))
        return task_id

    async def _drive(self, entry: _Agent, ending: Callable[[Any], tuple[bool, str]]) -> None:
        failed = False
        try:
            async for _event in entry.run:  # the child's own events stay in its run (run.trace, run.messages)
                pass
            failed, entry.answer = ending(entry.run)
        except asyncio.CancelledError:  # close() ran out of patience: the run has its Terminal (aborted_*)
            entry.stopped = True
        except Exception as error:  # a child's bug: a failed task, never a crashed parent
            failed, entry.answer = True, f"the sub-agent failed: {type(error).__name__}: {error}"
        status = "stopped" if entry.stopped else ("failed" if failed else "completed")
        self.post(TaskNotification(entry.task_id, "agent", status, entry.description,
                                   tail=entry.answer[-TAIL_CHARS:]))

    async def _stop_agent(self, entry: _Agent, why: str) -> None:
        assert entry.watcher is not None
        entry.stopped = True
        entry.run.abort(why)  # the child's trace says who stopped it (subagents.note_stop)
        await asyncio.wait({entry.watcher}, timeout=AGENT_STOP_GRACE_S)
        if not entry.watcher.done():
            entry.watcher.cancel()
        await asyncio.gather(entry.watcher, return_exceptions=True)

    # -- any task ---------------------------------------------------------------------------------------------------

    def known(self, task_id: str) -> bool:
        return task_id in self._commands or task_id in self._agents

    def output(self, task_id: str) -> tuple[str, str] | None:
        """``(status, output so far)`` of a task, or None for an unknown id; ``status``: ``"running"`` or how
        it ended. A sub-agent's output is its answer once it has ended ('' before)."""
        agent = self._agents.get(task_id)
        if agent is not None:
            running = agent.watcher is not None and not agent.watcher.done()
            return ("running", "") if running else ("stopped" if agent.stopped else "ended", agent.answer)
        entry = self._commands.get(task_id)
        if entry is None:
            return None
        code = entry.process.returncode
        status = "running" if entry.watcher is not None and not entry.watcher.done() else (
            "stopped" if entry.stopped else f"exited with code {code}")
        return status, entry.process.stdout.text()

    async def stop(self, task_id: str) -> str | None:
        """Stop a task (a command's group killed, a sub-agent's abort signal fired); what happened, or None for an
        unknown id."""
        agent = self._agents.get(task_id)
        if agent is not None:
            if agent.watcher is None or agent.watcher.done():
                return f"{task_id} had already ended"
            await self._stop_agent(agent, STOPPED_BY_TASK_STOP)
            return f"{task_id} stopped"
        entry = self._commands.get(task_id)
        if entry is None:
            return None
        if entry.watcher is None or entry.watcher.done():
            return f"{task_id} had already ended"
        entry.stopped = True
        await entry.process.close(drain=False)
        await asyncio.gather(entry.watcher, return_exceptions=True)
        return f"{task_id} stopped"

    # -- the queue ------------------------------------------------------------------------------------------------

    def post(self, notification: TaskNotification) -> None:
        """Queue one ended task's notification (a sub-agent run in the background posts its own here). A task's
        notification is delivered once: a second one for the same id is dropped."""
        if notification.task_id in self._delivered or any(n.task_id == notification.task_id for n in self._queue):
            return
        self._queue.append(notification)

    def take_notifications(self) -> list[TaskNotification]:
        """The notifications queued since the last call, in the order they were posted; each given once."""
        taken, self._queue = self._queue, []
        self._delivered.update(n.task_id for n in taken)
        return taken

    async def wait_for_notification(self, timeout_s: float) -> None:
        """Wait until a notification is queued, at most ``timeout_s`` seconds; then every command still running
        task is stopped (its ``stopped`` notification queued), so the wait always ends with one (dreamloop's choice:
        the run's ``tool_timeout_s`` bounds a background task the model waits for)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not self._queue and self.running():
            watchers = {self._watcher(t) for t in self.running()}
            remaining = deadline - loop.time()
            if remaining <= 0:
                await self.close(STOPPED_AFTER_WAIT)
                break
            await asyncio.wait(watchers, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)

    def _watcher(self, task_id: str) -> asyncio.Task:
        entry = self._commands.get(task_id) or self._agents[task_id]
        assert entry.watcher is not None
        return entry.watcher

    def running(self) -> list[str]:
        """The ids of the tasks still running: commands, then sub-agents, each in the order they started."""
        entries: list[_Command | _Agent] = [*self._commands.values(), *self._agents.values()]
        return [e.task_id for e in entries if e.watcher is not None and not e.watcher.done()]

    def pending(self) -> bool:
        """True while a task (a command or a sub-agent) still runs or a notification waits to be taken."""
        return bool(self._queue or self.running())

    async def close(self, why: str = STOPPED_AT_END) -> None:
        """Stop every task still running and wait until each has ended: a command reaped, a sub-agent in its
        Terminal (the run's settle awaits this). ``why``: the abort reason a sub-agent is stopped with
        (``STOPPED_AT_END``, or ``STOPPED_AFTER_WAIT`` when the wait for a notification ran out)."""
        for task_id in self.running():
            entry = self._commands.get(task_id)
            if entry is not None:
                entry.stopped = True
                await entry.process.close(drain=False)
        await asyncio.gather(*(self._stop_agent(a, why) for a in self._agents.values()
                               if a.watcher is not None and not a.watcher.done()))
        await asyncio.gather(*(e.watcher for e in [*self._commands.values(), *self._agents.values()]
                               if e.watcher is not None), return_exceptions=True)
