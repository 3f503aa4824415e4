"""Sub-agents: the ``Agent`` tool, a loop inside the loop (issue 34; chapter 12).

The model calls ``Agent`` with a task; the call runs a nested ``query()`` with its own ``State``, its own
(smaller) tool set and its own limits, through the same model client, and the child's final answer is the
call's ``tool_result``. Two forms:

* synchronous (``run_in_background`` off): the parent's tool call waits for the child, so the nested loop is plain
  to see;
* background (``run_in_background: true``, or none given with ``SubAgents.background_by_default``, with
  ``QueryParams.background_tasks`` on): the call's result says at once
  that the sub-agent was launched, with its task id (``agent_1``...); the child runs beside the parent's loop in the
  run's ``tasks.BackgroundTasks``, and when it ends its final answer reaches the parent as a task notification at
  phase 5, once. The parent's run ends only once that notification is delivered (or at a Stop, which stops the
  child: it ends in an abort's Terminal).

The tool's name and input fields (``description``, ``prompt``, ``subagent_type``, ``model`` of four names,
``effort``, ``run_in_background``, ``isolation``; the first two required, no other field) are those of the
``Agent`` tool in the requests Claude Code 2.1.332 sent as
``tests/fixtures/claude-code-sessions/10_dreamloop-compare_prompt_too_long_after_tools_v2.1.332_scrubbed.jsonl``
records them, so one script serves both sides. The descriptions are dreamloop's own words.

This module holds the options (``SubAgents``), the input (``AgentInput``), the tool (``AgentTool``), the pure
check of a call (``agent_input_problem``) and how a finished child becomes a result (``child_result``). It never
imports the loop: the loop hands the tool a starter (``ToolUseContext.sub_agent``) that returns a run.
"""

from __future__ import annotations

import hashlib
from typing import Any, AsyncIterator, Literal

from pydantic import BaseModel, ConfigDict, Field

from .language import N_
from .tasks import STOPPED_AFTER_WAIT, STOPPED_AT_END, STOPPED_BY_TASK_STOP
from .tools.base import BaseTool, ToolResult, ToolUseContext
from .tools.permissions import Allow, PermissionDecision

__all__ = ["AGENT_TOOL", "BACKGROUND_NOT_AVAILABLE", "AgentInput", "AgentTool", "SubAgents", "agent_id",
           "STOP_NOTES", "agent_input_problem", "child_result", "final_answer", "launched_text", "note_stop",
           "runs_in_background", "stop_note"]

AGENT_TOOL = "Agent"
"""The tool's name (the same as the recorded one: see the module docstring)."""

BACKGROUND_NOT_AVAILABLE = ("Error: background sub-agents are off in this run (QueryParams.background_tasks): call "
                            "Agent without run_in_background (the call then waits for the sub-agent's answer).")
"""The result of an ``Agent`` call with ``run_in_background: true`` in a run without background work (dreamloop's
words)."""


def launched_text(task_id: str, description: str) -> str:
    """The result of a background ``Agent`` call, at once (dreamloop's words): the sub-agent's id and that its
    answer comes later."""
    return (f"Sub-agent {task_id} ({description}) was launched in the background and is working on its task. "
            f"Its answer will arrive as a notification when it ends; go on meanwhile.")


class SubAgents(BaseModel):
    """The sub-agent switch's options (``QueryParams.sub_agents``; dreamloop's design and figures).

    * ``types``: the ``subagent_type`` names a call may give, each with the tool names its child gets (None: all
      the parent's tools but ``Agent``). Default: ``general-purpose`` (every tool) and ``Explore`` (Read, Glob,
      Grep). A child never gets ``Agent``: one level of nesting (dreamloop's choice: a bound, and the child's
      tool set is smaller than its parent's).
    * ``default_type``: the type of a call that gives none.
    * ``models``: the ``model`` names a call may give (the input's four names) and the model each means on the
      parent's client (dreamloop's choice of models); a name of the input with no model here is refused by name.
      None of them given: the parent's model.
    * ``max_turns``: the child's own limit (its Terminal is ``max_turns`` past it, reported as an error).
    * ``background_by_default``: a call that does not give ``run_in_background`` runs in the background when the
      run has background work (``QueryParams.background_tasks``), as Claude Code 2.1.332 ran one (``sub_agent_call``:
      the call's result said at once that the sub-agent was launched, its answer came as a notification); off (the
      default, the synchronous form the chapter draws first), such a call waits for the child. A call's own
      ``run_in_background`` always decides.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    types: dict[str, tuple[str, ...] | None] = Field(default_factory=lambda: {
        "general-purpose": None, "Explore": ("Read", "Glob", "Grep")})
    default_type: str = "general-purpose"
    models: dict[str, str] = Field(default_factory=lambda: {
        "sonnet": "claude-sonnet-4-5", "opus": "claude-opus-5-5", "haiku": "claude-haiku-4-5"})
    max_turns: int = Field(default=20, ge=1)
    background_by_default: bool = False


class AgentInput(BaseModel):
    """An ``Agent`` call's input: the recorded fields (module docstring), descriptions in dreamloop's words."""

    model_config = ConfigDict(extra="forbid")
    description: str = Field(description="A few words naming the task (shown while it runs).")
    prompt: str = Field(description="The task for the sub-agent, complete: it sees nothing else.")
    subagent_type: str | None = Field(default=None, description="Which kind of sub-agent runs the task.")
    model: Literal["sonnet", "opus", "haiku", "fable"] | None = Field(
        default=None, description="Another model for the sub-agent (default: this conversation's).")
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = Field(
        default=None, description="How hard the sub-agent should think (not available in dreamloop).")
    run_in_background: bool | None = Field(
        default=None, description="Start the sub-agent and go on without waiting: its answer arrives later.")
    isolation: Literal["worktree", "remote"] | None = Field(
        default=None, description="Where the sub-agent works apart from this workspace (not available in dreamloop).")


def agent_id(tool_use_id: str) -> str:
    """The name of the child run an ``Agent`` call starts: ``a`` and 16 hex digits of the SHA-256 of the call's id.

    The form of the ``agentId`` Claude Code 2.1.332 wrote (``a`` and 16 hex digits; in the side chain beside
    ``12_dreamloop-compare-probe_agent_foreground_v2.1.332_scrubbed.jsonl``, a probe's run kept by ``tests/conformance/make_sidechain_fixture.py``); derived from the call (dreamloop's
    choice: ids are deterministic, and a side chain is found from its call alone). Pure."""
    return "a" + hashlib.sha256(tool_use_id.encode("utf-8")).hexdigest()[:16]


def agent_input_problem(input: AgentInput, options: SubAgents) -> str | None:
    """What is wrong with a call (an ``is_error`` result's text), or None: the child may start. Pure.

    A blank prompt, an unknown ``subagent_type`` or ``model`` (each named, with the names known), and the fields
    this build does not take (``effort``, ``isolation``) are refused before any request. (``run_in_background``
    needs the run's background work: ``AgentTool.call`` checks that.)
    """
    if not input.prompt.strip():
        return "Error: Agent needs a prompt: the task for the sub-agent (it was blank)."
    kind = input.subagent_type or options.default_type
    if kind not in options.types:
        return f"Error: unknown subagent_type {kind!r}; known: {', '.join(sorted(options.types))}."
    if input.model is not None and input.model not in options.models:
        return f"Error: unknown model {input.model!r} for a sub-agent; known: {', '.join(sorted(options.models))}."
    for field in ("effort", "isolation"):
        if getattr(input, field) is not None:
            return f"Error: Agent's {field} is not available in this build: call Agent without it."
    return None


def runs_in_background(input: AgentInput, options: SubAgents, background_on: bool) -> bool:
    """Whether a call runs its child in the background: its own ``run_in_background`` when it gives one, else
    ``options.background_by_default`` where the run has background work (``background_on``). Pure."""
    if input.run_in_background is not None:
        return input.run_in_background
    return options.background_by_default and background_on


def final_answer(messages: list[Any]) -> str:
    """The text of the child's last assistant message ('' if it gave none)."""
    for message in reversed(messages):
        if getattr(message, "type", None) == "assistant":
            texts = [block.text for block in message.message.content if getattr(block, "type", None) == "text"]
            if texts:
                return "\n".join(texts)
    return ""


STOP_NOTES: dict[str, str] = {
    STOPPED_BY_TASK_STOP: N_("stopped by a TaskStop call"),
    STOPPED_AT_END: N_("stopped because the parent's run ended"),
    STOPPED_AFTER_WAIT: N_("stopped when the parent's wait for its notification ran out"),
    "": N_("stopped when the parent was stopped ({reason})"),
}
"""The note a stopped child's trace keeps, by the abort reason it was stopped with (``tasks.STOPPED_*``); any
other reason is the parent's own (its Stop button, Ctrl-C, a failed transcript write), under ``""``. The notes stay
English in the trace; a widget shows them with ``language.tr_formatted(note, STOP_NOTES.values())``."""


def stop_note(terminal_reason: str, abort_reason: str | None) -> str | None:
    """Who stopped a child, for its trace: ``STOP_NOTES``' words for ``abort_reason``, or None when the child
    did not end in an abort's Terminal (``aborted_streaming``, ``aborted_tools``)."""
    if not terminal_reason.startswith("aborted_"):
        return None
    reason = abort_reason or "interrupted"
    return STOP_NOTES[reason] if reason in STOP_NOTES else STOP_NOTES[""].format(reason=reason)


def note_stop(run: Any) -> None:
    """Put ``stop_note`` on the last checkpoint of a finished child ``run`` (a ``QueryRun``), once; the saved trace
    keeps it (``Checkpoint.notes``), so a replay or an inspector says who stopped the child."""
    note = stop_note(run.terminal.reason, run.params.abort.reason)
    points = run.trace.checkpoints
    if note is not None and points and note not in points[-1].notes:
        points[-1].notes.append(note)


def child_result(terminal: Any, messages: list[Any]) -> ToolResult:
    """The ``tool_result`` of a finished child: its final answer if it ended ``completed``, else an ``is_error``
    result naming its Terminal (and its last words, if any)."""
    answer = final_answer(messages)
    if terminal.reason == "completed":
        return ToolResult(answer or "(the sub-agent ended without an answer)")
    said = f": {terminal.error}" if terminal.error else ""
    last = f"\nIts last answer: {answer}" if answer else ""
    if terminal.reason == "max_turns":  # its turn_count is the turn the loop refused to start
        used = terminal.turn_count - 1
        ended = f"ended max_turns: it used its {used} turn{'s' if used != 1 else ''} without a final answer"
    else:
        ended = f"ended {terminal.reason} at turn {terminal.turn_count}"
    return ToolResult(f"Error: the sub-agent {ended}{said}.{last}", is_error=True)


class AgentTool(BaseTool):
    """``Agent``: run a task in a sub-agent, a nested loop, and answer with its final answer.

    Asks no permission itself (the child's own calls are checked as the parent's are). Not read-only (the child
    may write). Concurrency-safe (dreamloop's choice): several ``Agent`` calls in one response run side by side,
    because each child has its own State, history, limits and trace, and nothing of one child reaches another;
    what they share is the workspace, and a child's calls that change it still pass the permission check one
    prompt at a time (``ToolUseContext.ask_lock``) as the parent's parallel calls do.

    The call yields progress ``{"sub_agent": "started", ...}`` and, once the child has its Terminal,
    ``{"sub_agent": "ended", "terminal": reason, "turn_count": n}`` (the parent's trace keeps both), then the
    result (``child_result``). A child that raises is an ``is_error`` result; the parent never crashes.

    With ``run_in_background: true`` (or none given, with ``SubAgents.background_by_default``: ``runs_in_background``)
    the call starts the child in ``context.background``, yields
    ``{"sub_agent": "started", ..., "task_id": id, "background": True}`` and the result ``launched_text`` at once;
    the child's answer (``child_result``'s text) comes back as its task notification.
    """

    name = AGENT_TOOL
    description = ("Hands a task to a sub-agent: a fresh conversation with its own, smaller set of tools, which "
                   "works on the task alone and answers once. The prompt must hold everything it needs. Its "
                   "final answer comes back as this call's result.")
    input_model = AgentInput

    def __init__(self, options: SubAgents | None = None) -> None:
        self.options = options or SubAgents()

    def is_read_only(self, input: Any) -> bool:
        return False

    def is_concurrency_safe(self, input: Any) -> bool:
        return True

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        return Allow()

    async def call(self, input: AgentInput, context: ToolUseContext) -> AsyncIterator[dict[str, Any] | ToolResult]:
        problem = agent_input_problem(input, self.options)
        if problem is None and context.sub_agent is None:
            problem = "Error: sub-agents are off in this loop (QueryParams.sub_agents)."
        if problem is None and input.run_in_background and context.background is None:
            problem = BACKGROUND_NOT_AVAILABLE
        if problem is not None:
            yield ToolResult(problem, is_error=True)
            return
        kind = input.subagent_type or self.options.default_type
        if runs_in_background(input, self.options, context.background is not None):
            run = context.sub_agent(input, kind, context.tool_use_id, background=True)  # its own abort signal, linked to the parent's
            task_id = context.background.start_agent(input.description, run, _ending)
            yield {"sub_agent": "started", "description": input.description, "subagent_type": kind,
                   "model": getattr(run.model, "model", None), "task_id": task_id, "background": True}
            yield ToolResult(launched_text(task_id, input.description))
            return
        run = context.sub_agent(input, kind, context.tool_use_id)  # a QueryRun, not started
        try:
            yield {"sub_agent": "started", "description": input.description, "subagent_type": kind,
                   "model": getattr(run.model, "model", None)}
            async for _event in run:  # the child's own events stay in its run (run.trace, run.messages)
                pass
        except Exception as error:  # a child's bug: an is_error result, never a crashed parent
            yield {"sub_agent": "ended", "terminal": run.terminal.reason if run.done else None, "error": str(error)}
            yield ToolResult(f"Error: the sub-agent failed: {type(error).__name__}: {error}", is_error=True)
            return
        finally:
            if not run.done:  # the call was closed (the parent's Stop) before its child ran, or while it ran
                await run.aclose()
        terminal = run.terminal
        note_stop(run)
        yield {"sub_agent": "ended", "terminal": terminal.reason, "turn_count": terminal.turn_count}
        yield child_result(terminal, run.messages)


def _ending(run: Any) -> tuple[bool, str]:
    """A background child's ``(is_error, answer)`` once it has its Terminal: ``child_result``'s (and who stopped
    it, on its trace: ``note_stop``)."""
    note_stop(run)
    result = child_result(run.terminal, run.messages)
    return result.is_error, str(result.content)
