"""query(): the production agent loop, ``queryLoop()`` as both texts describe it, in Python.

One ``while True``, five phases in the order the conversation-loop text gives them:

    1. State in          take this iteration's State (messages, turn_count, transition)
    2. context pipeline  prepare ``messages_for_query``: seven stages, light to heavy (``context/``)
    3. stream the model  yield raw events, collect ``assistant_messages`` and tool_use blocks
                         (streaming tool execution: calls start as their blocks complete)
       (recovery)        a response cut at max_tokens or a withheld error may send the same turn
                         round again (``recovery.py`` decides)
    4. tools or stop     no tool_use → stop checks (stop hooks, token budget) → Terminal; else run
                         tools → ``tool_results``
    5. next State        attachments (changed files, queued input), the max_turns check, a new State, continue

Every ``continue`` goes through ``next_state()``, the one place a State is built.

It yields events as they happen and ends with a ``Terminal``. Python async
generators cannot ``return`` a value, so ``query()`` returns a ``QueryRun``:
iterate it, then read ``run.terminal``. This module decides *what happens*;
how the model is called (``model.py``), how tools run (``tools/``) and how
things are shown (``render.py``, ``widgets/``) live elsewhere.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from functools import partial
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal, Sequence
from uuid import NAMESPACE_URL, uuid5

import anthropic
from anthropic.types import Message as APIMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from . import endings
from .abort import AbortController, Aborted, guarded
from .attachments import Attachments
from .cleanup import end_of_run, settle
from .context import ContextOptions, ContextPipeline, PreCompact, PreCompactResult, PreparedContext, prepare_context
from .deps import QueryDeps
from .errors import CompactionFailed, HookError, StreamError
from .events import RequestStart, StreamEvent
from .hooks import Hooks, StopCheck, run_pre_compact_hooks, run_stop_hooks
from .language import N_, tr
from .messages import (
    AssistantMessage,
    AttachmentMessage,
    LoopMessage,
    SystemMessage,
    TombstoneMessage,
    UserMessage,
    assistant_tool_uses,
    normalize_messages_for_api,
    user_message,
    withdrawn,
)
from .output_limit import DEFAULT_MAX_TOKENS, request_output_limit
from .partial import PartialResponse, odd_response_notices, one_call_per_id, repeated_ids_note, unknown_content, visible
from .recovery import (
    RESUME_MESSAGE,
    MaxTokensCut,
    PromptTooLong,
    RecoveryOptions,
    TokenBudget,
    Withheld,
    budget_message,
    budget_summary,
    decide_recovery,
    decide_token_budget,
    is_prompt_too_long,
    reminder,
    state_changes,
)
from .retry import attempts
from .state import Continue, State, Terminal
from .subagents import AGENT_TOOL, AgentInput, AgentTool, SubAgents, agent_id
from .summaries import ToolUseSummaries, finish_summary, start_summary
from .tools.file_state import FileState
from .tasks import BackgroundTasks, notification_attachment
from .tools import StreamingToolExecutor, ToolUseContext, run_tools, tool_schemas
from .trace import Trace

__all__ = ["QueryParams", "QueryRun", "query"]


class QueryParams(BaseModel):
    """Everything one run of the loop needs (queryLoop()'s ``QueryParams``).

    * ``messages``: the history so far, ending with the new user input (a
      plain string is taken as one user message).
    * ``model``: an ``AnthropicModel`` (``dreamloop.offline(script)`` or
      ``dreamloop.live(...)``); there is no implicit default.
    * ``system_prompt``: the system prompt (string or text blocks).
    * ``tools``: ``Tool`` objects the model may call; ``can_use_tool``:
      ``async (tool, input, context) -> Allow | Deny | Ask``; ``ask``: who
      answers an ``Ask`` (a terminal prompt, a notebook button), None = nobody.
    * ``permission_mode``: ``default`` | ``accept-edits`` | ``bypass``;
      ``workspace``: the root the built-in tools are confined to.
    * ``max_tokens``: output limit per request (None: each model's own, from its information, or
      with ``observed_output_limits`` as Claude Code 2.1.332 sent it; ``dreamloop run``'s default);
      ``max_turns``: stop before turn ``max_turns + 1`` (None: no limit).
    * ``tool_timeout_s``: the most one tool call may take, in seconds (a call
      over it is stopped and gets an ``is_error`` result; Bash's own timeout
      is usually shorter). No tool call can hold the loop longer.
    * ``abort``: the abort signal (``AbortController``); ``queued_input``: a
      callable returning queued ``AttachmentMessage``s, drained at phase 5.
    * ``deps``: ids and clock (``QueryDeps``).

    Raises ``ValueError`` (a pydantic ``ValidationError`` naming the field)
    for a blank prompt: a prompt with no text is refused here, never sent.

    Feature switches (streaming tool execution, hooks, context stages,
    recovery, fallback model, token budget) arrive as new fields, off by
    default (off: the branch is not taken). A switch is marked in its field
    with ``json_schema_extra={"switch": True, "chapter": "NN"}``;
    ``switches()`` lists them with their values:

    * ``results_as_finished`` (chapter 04): the results message lists the results
      of parallel calls in the order the calls finished, as Claude Code 2.1.332 sent
      them (``dreamloop compare`` scenario ``results_in_finishing_order``);
      off: in call order, dreamloop's own choice (the same request whatever the timing).
    * ``streaming_tool_execution`` (chapter 05): start each tool call as soon
      as its ``tool_use`` block is complete in the stream
      (``StreamingToolExecutor``) instead of after the whole response.
    * ``sibling_rule`` (chapter 05): a Bash call that ran and failed cancels the
      calls still running beside it and starts no later call of the response
      (dreamloop's design; the source texts do not name it, and Claude Code 2.1.332
      cancelled nothing in the scenarios ``bash_fails_parallel`` and ``bash_fails_serial``).
    * ``context`` (chapter 06): the context pipeline (``ContextOptions``: each of
      the seven stages, the window, the thresholds, prompt caching). None:
      phase 2 sends the history as it is.
    * ``hooks``: ``Hooks`` (chapters 07 and 07b): ``pre_tool_use`` / ``post_tool_use`` around
      each call, ``stop`` when the model asks for no tools. None: no hook runs.
    * ``recovery``: ``RecoveryOptions`` (chapters 08 and 08b): escalate and resume after a
      ``max_tokens`` cut (08), collapse drain and reactive compaction after ``prompt is
      too long`` (08b), each its own flag. None: such an error ends the run as before.
    * ``observed_output_limits`` (chapter 08b): with ``max_tokens=None``, each request's limit is
      ``output_limit.observed_output_limit(model, streaming=...)``: the figure Claude Code 2.1.332 sent
      that model (128,000 to ``claude-opus-5-5``, 32,000 to ``claude-sonnet-4-5`` and ``claude-haiku-4-5``,
      ``output_limit_fallback``, ``http_529_fallback``), at most 64,000 on a request sent again without streaming
      (``output_limit_streaming_fallback``); a model it did not run: its information. Off: the
      model's information alone. ``dreamloop run`` turns it on.
    * ``fallback_model`` (chapter 08b): an ``AnthropicModel``, or a model name on
      ``model``'s client; after ``RecoveryOptions.overloads_before_fallback``
      overloaded attempts in a row it takes over, and what the failed attempts
      showed is tombstoned. None: an overload ends the run ``model_error``.
    * ``token_budget`` (chapter 08b): ``TokenBudget`` (or its ``total`` as an int):
      a turn that ends under budget goes on with a message saying how much is used.
    * ``memory_files`` (chapter 03b): the workspace's memory files (CLAUDE.md, CLAUDE.local.md, up to
      the repository root, and ``deps.home``'s ``.claude/CLAUDE.md``) open the first user message as a
      ``<system-reminder>`` (``context.memory``); a file that cannot be sent gets a notice.
    * ``changed_files`` (chapter 03c): at phase 5, a ``changed_file`` attachment for a file the model
      read that changed on disk since (not by the loop's own Edit or Write), and a ``memory_changed``
      one for a memory file that changed (``attachments.py``).
    * ``file_state`` (chapters 03b and 04): ``FileState`` (or True): Write and Edit refuse an existing file the model
      has not read, or that changed on disk since it last saw it, with an ``is_error`` result saying it must be
      read again; a new file may be written (``tools/file_state.py``). Each run keeps its own record (this
      value gives ``edit_after_change``).
    * ``tool_use_summaries`` (chapter 03c): ``ToolUseSummaries`` (or True): after a batch of tools a
      summary is started without holding up the next request, kept in ``State.pending_tool_use_summary``
      and yielded in the next iteration as a ``ToolUseSummaryMessage`` (``summaries.py``).
    * ``environment`` (chapter 06): an environment block after the system prompt (working directory,
      platform, git repository or not) and the date opening the first user message, from ``deps``.
    * ``sub_agents`` (chapter 12): ``SubAgents`` (or True): the model is offered the ``Agent`` tool
      (``subagents.py``); a call runs a nested ``query()`` with its own State, the tools of its ``subagent_type``
      (never ``Agent``), ``SubAgents.max_turns``, the same abort signal, model client and ids, and answers with
      the child's final answer (the synchronous form; ``run.children`` keeps each child's run). None: no
      ``Agent`` tool.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    messages: list[LoopMessage]
    model: Any
    system_prompt: str | list[dict[str, Any]] | None = None
    tools: list[Any] = Field(default_factory=list)
    can_use_tool: Callable[..., Any] | None = None
    ask: Callable[..., Any] | None = None
    permission_mode: Literal["default", "accept-edits", "bypass"] = "default"
    workspace: Path | None = None
    max_tokens: int | None = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    max_turns: int | None = Field(default=None, ge=1)
    tool_timeout_s: float = Field(default=600.0, gt=0)
    abort: AbortController = Field(default_factory=AbortController)
    queued_input: Callable[[], list[AttachmentMessage]] | None = None
    deps: QueryDeps = Field(default_factory=QueryDeps)
    results_as_finished: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "04"},
        description=N_("the results of parallel calls go back in the order the calls finished"))
    streaming_tool_execution: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "05"},
        description=N_("each tool call starts as soon as its tool_use block is complete"))
    sibling_rule: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "05"},
        description=N_("a Bash call that ran and failed cancels the calls beside and after it"))
    context: ContextOptions | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "06"},
        description=N_("the context pipeline: seven stages, light to heavy, before each request"))
    hooks: Hooks | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "07"},
        description=N_("hook events: around each tool call, at the stop checks, before a compaction"))
    recovery: RecoveryOptions | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "08"},
        description=N_("escalate and resume after max_tokens; collapse drain and reactive compaction after "
                       "prompt is too long"))
    observed_output_limits: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "08"},
        description=N_("each model's output limit as Claude Code 2.1.332 sent it, at most 64,000 on a request "
                       "sent again without streaming"))
    fallback_model: Any = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "08"},
        description=N_("after repeated overloads another model takes over; what was shown is tombstoned"))
    token_budget: TokenBudget | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "08"},
        description=N_("a turn that ends under budget goes on, until diminishing returns"))
    memory_files: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "03"},
        description=N_("the workspace's CLAUDE.md files open the first user message"))
    changed_files: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "03"},
        description=N_("phase 5 tells the model when a file it read, or a CLAUDE.md, changed on disk"))
    file_state: FileState | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "04"},
        description=N_("Write and Edit refuse a file the model has not read as it is now"))
    tool_use_summaries: ToolUseSummaries | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "03"},
        description=N_("a short summary of each batch of tool calls, yielded in the next iteration"))
    environment: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "06"},
        description=N_("the system prompt says where the agent works: directory, platform, git, the date"))
    sub_agents: SubAgents | None = Field(
        default=None, json_schema_extra={"switch": True, "chapter": "12"},
        description=N_("the Agent tool: a task runs in a nested loop with its own State and tools"))
    background_tasks: bool = Field(
        default=False, json_schema_extra={"switch": True, "chapter": "12"},
        description=N_("a Bash command may run in the background; phase 5 says when it ended, once"))

    def switches(self) -> dict[str, Any]:
        """Which feature switches are on, in field order, as JSON: ``{"streaming_tool_execution": True, ...}``.

        A bool switch is itself; an options switch is False when None, its
        ``model_dump`` when it is a pydantic model, a model's name for the
        fallback model, else True.
        """
        def plain(value: Any) -> Any:
            if value is None or isinstance(value, bool):
                return bool(value)
            if isinstance(value, BaseModel):
                return value.model_dump(mode="json")
            return value.model if isinstance(getattr(value, "model", None), str) else True

        return {name: plain(getattr(self, name)) for name, info in type(self).model_fields.items()
                if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("switch")}

    @model_validator(mode="before")
    @classmethod
    def _prompt_as_message(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("messages"), str):
            deps = data.get("deps") or QueryDeps()
            data = {**data, "messages": [user_message(data["messages"], uuid=deps.uuid())]}
        return data

    @field_validator("messages")
    @classmethod
    def _prompt_not_blank(cls, messages: list[Any]) -> list[Any]:
        if not messages:
            raise ValueError("no messages: give the loop a prompt")
        last = messages[-1]
        if isinstance(last, UserMessage) and not last.source_tool_use_ids and not normalize_messages_for_api([last]):
            raise ValueError("the prompt is blank (the last user message has no text): nothing to send")
        return messages

    @field_validator("model")
    @classmethod
    def _has_stream(cls, value: Any) -> Any:
        if not hasattr(value, "stream"):
            raise ValueError("model must be an AnthropicModel: use dreamloop.offline(script) or dreamloop.live()")
        return value

    @field_validator("file_state", mode="before")
    @classmethod
    def _file_state_on(cls, value: Any) -> Any:
        return FileState() if value is True else (None if value is False else value)

    @field_validator("tool_use_summaries", mode="before")
    @classmethod
    def _summaries_on(cls, value: Any) -> Any:
        return ToolUseSummaries() if value is True else (None if value is False else value)

    @field_validator("sub_agents", mode="before")
    @classmethod
    def _sub_agents_on(cls, value: Any) -> Any:
        return SubAgents() if value is True else (None if value is False else value)

    @model_validator(mode="after")
    def _offer_agent_tool(self) -> "QueryParams":
        """With ``sub_agents`` on, the ``Agent`` tool is offered (after the given tools), unless one is given."""
        if self.sub_agents is not None and not any(getattr(t, "name", None) == AGENT_TOOL for t in self.tools):
            self.tools = [*self.tools, AgentTool(self.sub_agents)]
        return self

    @field_validator("token_budget", mode="before")
    @classmethod
    def _budget_total(cls, value: Any) -> Any:
        if isinstance(value, bool) or isinstance(value, (float, str)):
            raise ValueError(f"a whole number of output tokens (or a TokenBudget), not {value!r}")
        return TokenBudget(total=value) if isinstance(value, int) else value

    @model_validator(mode="after")
    def _fallback_is_a_model(self) -> "QueryParams":
        fallback = self.fallback_model
        if isinstance(fallback, str):
            if not fallback.strip():
                raise ValueError("fallback_model: the name is blank; give another model's name, or None for no "
                                 "fallback")
            if not hasattr(self.model, "with_name"):
                raise ValueError("fallback_model: a model name needs an AnthropicModel as model (or give a model)")
            self.fallback_model = self.model.with_name(fallback.strip())
        elif fallback is not None and not hasattr(fallback, "stream"):
            raise ValueError("fallback_model must be an AnthropicModel or a model name")
        name = getattr(self.fallback_model, "model", None)
        if name is not None and name == getattr(self.model, "model", None):
            # Claude Code refuses this too ("Fallback model cannot be the same as the main model").
            raise ValueError(f"fallback_model: {name!r} is the main model; a fallback must be another model")
        return self

    @model_validator(mode="after")
    def _budget_has_a_directory(self) -> "QueryParams":
        budget = self.context.tool_result_budget if self.context else None
        if budget is not None and budget.directory is None and self.workspace is None:
            raise ValueError("context.tool_result_budget writes oversized results to a file: give "
                             "QueryParams(workspace=...) or ToolResultBudget(directory=...)")
        return self


class QueryRun:
    """A running loop: an async iterator of events that, once exhausted, holds the Terminal.

    ``async for event in run`` yields ``RequestStart``, ``StreamEvent`` and
    loop messages; then ``run.terminal`` is the ``Terminal`` (reading it
    earlier raises ``RuntimeError``). ``run.messages`` is the history as it
    grows (everything yielded but progress and stream events), ``run.state``
    the current ``State``, ``run.trace`` the ``Trace``, ``run.model`` the
    model being called (``params.model``, or the fallback model once it took
    over), ``run.output_tokens`` the output tokens of every response so far.
    ``run.abort()`` fires the abort signal.
    """

    def __init__(self, params: QueryParams, trace: Trace | None = None) -> None:
        self.params = params
        self.trace = trace if trace is not None else Trace()
        self.trace.switches = params.switches()
        self.messages: list[Any] = list(params.messages)
        self.state: State | None = None
        self.model: Any = params.model
        self.output_tokens = 0
        self.overloads = 0  # overloaded attempts in a row, across the run (the fallback model's count)
        self.failures = 0  # failed attempts in a row, of any kind (the bound of asking again)
        self._terminal: Terminal | None = None
        self.ended: SystemMessage | None = None  # the run_ended notice of an abnormal end (cleanup.end_of_run)
        self._requests: tuple[int, int] = (0, 0)  # (turn_count, requests made in that turn)
        self.iteration: _Iteration | None = None  # the iteration running (or the last one): what settle() waits for
        self._started = params.deps.clock()
        self.children: list[QueryRun] = []  # the sub-agents' runs, in the order they started (sub_agents)
        self.tool_use_id: str | None = None  # a child's: the parent's Agent call that started it
        self.agent_id: str | None = None  # a child's: its side chain's name (subagents.agent_id)
        self.agent_type: str | None = None  # a child's: its subagent_type
        self.description: str | None = None  # a child's: its call's description
        self.on_child: Callable[[QueryRun, Any], None] | None = None  # told of each child's start and messages
        self._listener: Callable[[QueryRun, Any], None] | None = None  # a child's: its parent's on_child
        self.summaries: list[Any] = []  # every tool-use summary the run started (settle() waits for each)
        self._events = _settled(_query_loop(params, self), self)

    @property
    def terminal(self) -> Terminal:
        if self._terminal is None:
            raise RuntimeError("the run has not ended yet: iterate it to the end (async for event in run) first")
        return self._terminal

    @property
    def done(self) -> bool:
        return self._terminal is not None

    def abort(self, reason: str = "interrupted") -> None:
        """Fire the run's abort signal (safe from a widget callback or another thread)."""
        self.params.abort.abort(reason)

    def __aiter__(self) -> "QueryRun":
        return self

    async def __anext__(self) -> Any:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop the run where it stands; it has its Terminal after (``CANCELLED``'s for the phase it was in, as for a
        cancelled task; a run never iterated: ``aborted_streaming`` at turn 1, before any request)."""
        await self._events.aclose()
        if self._terminal is None and self.iteration is None:  # never started: nothing ran, nothing to close
            self._terminal = Terminal(reason="aborted_streaming", turn_count=1)

    def __repr__(self) -> str:
        end = self._terminal.reason if self._terminal else "running"
        return f"QueryRun(turn_count={self.state.turn_count if self.state else 1}, terminal={end})"

    # -- bookkeeping shared by every phase ------------------------------

    def note(self, event: Any) -> Any:
        """Record a yielded event in the history and the trace; return it."""
        if event.type not in ("stream_event", "stream_request_start", "progress"):
            self.messages.append(event)
            if event.type == "assistant":
                self.output_tokens += event.message.usage.output_tokens
        self.trace.add_event(self.params.deps.clock() - self._started, event)
        if self._listener is not None and event.type not in ("stream_event", "stream_request_start"):
            self._listener(self, event)  # a child's message or progress, before it is yielded (the side chain)
        return event

    def request_attempt(self, turn_count: int) -> int:
        """Count one more request in turn ``turn_count``; its number (``RequestStart.attempt``: 1, 2, ...)."""
        turn, made = self._requests
        self._requests = (turn_count, made + 1 if turn == turn_count else 1)
        return self._requests[1]

    def end(self, terminal: Terminal, closing: Sequence[Any] = ()) -> None:
        """Clean up, record the last checkpoint (``run.iteration``'s) and the Terminal; called by the loop alone,
        once. ``closing``: the messages that closed the transcript without being yielded (an exception left the
        loop), kept in ``run.messages``.

        ``cleanup.end_of_run`` cancels what still runs (a tool-use summary, a streaming call); for an
        abnormal ending its ``run_ended`` notice is ``run.ended``, kept in the trace (not yielded, not in
        ``run.messages``: the history the next request would carry).
        """
        it = self.iteration
        assert it is not None
        self.messages.extend(closing)
        last = self.messages[-1].uuid if self.messages else "none"  # the notice's id derives from it: no id is drawn
        self.ended = end_of_run(terminal, [it.state.pending_tool_use_summary, it.pending_summary],
                                it.executor, lambda: str(uuid5(NAMESPACE_URL, f"dreamloop:run_ended:{last}")))
        if self.ended is not None:  # the trace keeps it with the last iteration's events
            self.trace.add_event(self.params.deps.clock() - self._started, self.ended)
        self.trace.checkpoint(**it.collected(), terminal=terminal)
        self._terminal = terminal

    async def settle(self) -> None:
        """Wait until nothing the run started still runs (``cleanup.settle``): before its Terminal is returned."""
        it = self.iteration
        if it is not None:
            await settle([*self.summaries, it.state.pending_tool_use_summary, it.pending_summary], it.executor,
                         it.state.tool_use_context.background)


def query(params: QueryParams, *, trace: Trace | None = None) -> QueryRun:
    """Start the loop: ``run = query(params); async for event in run: ...; run.terminal``.

    Mirrors ``query()`` / ``queryLoop()``. Nothing happens until the run is
    iterated. Errors from the model become a ``Terminal`` (``model_error``,
    ``prompt_too_long``, ``image_error``) with a valid transcript; a bad tool
    input becomes an ``is_error`` tool_result. Cancelling the task that
    iterates the run closes the transcript, sets ``run.terminal`` and
    re-raises ``CancelledError``; ``run.aclose()`` ends it the same way (a run
    never iterated: ``aborted_streaming`` at turn 1).
    """
    return QueryRun(params, trace)


class _Iteration:
    """One iteration of the loop (queryLoop()'s locals): the four collectors, what the stream and the tools said,
    the phase it is in, and how it ends.

    A phase's helper leaves its decision here, and the loop acts on it where the phase ends:
    ``terminal`` (the run ends there) or ``transition`` (the loop goes round again: ``next_state``).
    ``added`` holds what the loop itself added to the conversation this iteration: notices, tombstones, meta
    notes, hook records, attachments (a ``Checkpoint``'s ``attachments``); ``add`` records one and returns it.
    """

    def __init__(self, state: State) -> None:
        self.state = state
        self.phase: endings.Phase = "context"  # where an exception leaving the loop came from (endings.raised)
        self.prepared: PreparedContext | None = None
        self.messages_for_query: list[Any] = list(state.messages)
        self.context: dict[str, Any] | None = None
        self.auto_compact_tracking = state.auto_compact_tracking
        self.assistant_messages: list[Any] = []
        self.tool_results: list[Any] = []
        self.added: list[Any] = []
        self.stop_reason: str | None = None
        self.started: set[str] = set()  # calls that started (their effects may have happened)
        self.results: dict[str, dict[str, Any]] = {}  # tool_use_id -> tool_result block, as each call ended
        self.executor: StreamingToolExecutor | None = None  # streaming tool execution: this response's calls
        self.partial = PartialResponse()  # the stream as far as it came (what finished, if it broke)
        self.error: Exception | None = None  # the model error phase 3 ended with (None: an answer)
        self.broke: Exception | None = None  # the error the current attempt failed with (decided in phase 3)
        self.max_tokens: int | None = None  # the output limit the last request had
        self.aborted: str | None = None  # the abort signal fired while the model streamed ("streaming") or while
        # the loop waited to ask it again ("retry_wait")
        self.shown: list[str] = []  # uuids of the progress this attempt yielded (a withdrawn attempt tombstones them)
        self.terminal: Terminal | None = None
        self.transition: Continue | None = None
        self.rewritten: tuple[Any, ...] | None = None  # the next State's messages, when a recovery rewrote them
        self.repeated_ids: list[str] = []  # tool_use ids the response used more than once (dropped after the first)
        self.pending_summary: Any = None  # this batch's tool-use summary, started at phase 5 (next State carries it)

    def prepare(self, prepared: PreparedContext) -> list[Any]:
        """Take phase 2's ``PreparedContext`` (its ``terminal`` if no request must be sent); what it yields."""
        self.prepared, self.messages_for_query = prepared, prepared.messages_for_query
        self.context = prepared.record.as_dict() if prepared.record else None
        self.auto_compact_tracking, self.terminal = prepared.auto_compact_tracking, prepared.terminal
        return prepared.yielded

    @property
    def failed(self) -> bool:
        """Phase 3 ended without an answer (an abort, an error) and nothing has decided the end yet."""
        return (self.aborted is not None or self.error is not None) and self.terminal is None

    def add(self, message: Any) -> Any:
        """Keep a message the loop adds (a notice, a tombstone, a meta note, an attachment); return it, to yield."""
        self.added.append(message)
        return message

    def record(self, update: Any) -> None:
        """Keep what a tool update says: a call started, a call's result, the results message, a hook's record."""
        if update.type == "user":
            self.tool_results.append(update)
        elif update.type == "attachment":  # hook records, and what hooks tell the model
            self.added.append(update)
        elif update.data.get("stage") == "started":
            self.started.add(update.tool_use_id)
        elif update.data.get("stage") == "done":
            self.results[update.tool_use_id] = update.data["result"]

    def collected(self) -> dict[str, Any]:
        return dict(
            state=self.state,
            messages_for_query=self.messages_for_query,
            assistant_messages=self.assistant_messages,
            tool_results=self.tool_results,
            attachments=self.added,
            context=self.context,
        )

    def kept(self) -> tuple[Any, ...]:
        """The next State's messages: ``[...messages_for_query, ...assistant_messages, ...tool_results, ...]``,
        unless a recovery rewrote them (an escalation drops the cut response; a drain, a compaction)."""
        if self.rewritten is not None:
            return self.rewritten
        return (*self.messages_for_query, *self.assistant_messages, *self.tool_results, *self.added)

    def new_attempt(self, executor: StreamingToolExecutor | None) -> None:
        """Forget a withdrawn attempt (asked again, or handed to the fallback model): start the stream afresh."""
        self.partial, self.executor, self.stop_reason, self.broke = PartialResponse(), executor, None, None
        self.started, self.results, self.shown = set(), {}, []

    def tool_uses(self) -> list[Any]:
        return [block for message in self.assistant_messages for block in assistant_tool_uses(message)]

    def close(self, closing: endings.Closing) -> list[Any]:
        """Keep an ending's closing messages (tombstones, the kept response, the answers, the notes); them, in
        yield order."""
        self.added.extend(closing.withdrawn)
        if closing.kept is not None:
            self.assistant_messages.append(closing.kept)
        if closing.results is not None:
            self.tool_results = [closing.results]
        self.added.extend(closing.notes)
        return closing.messages

    def raised(self, error: BaseException, uuid: Callable[[], str]) -> tuple[Terminal, list[Any]]:
        """The Terminal of an exception leaving the loop in ``phase`` (a cancelled task, a Python hook's bug), and
        its closing messages, kept here (``endings.raised``)."""
        terminal, closing = endings.raised(self.phase, error, self.state.turn_count, response=self.assistant_messages,
                                           partial=self.partial, results=self.results, started=self.started,
                                           tool_uses=self.tool_uses(), delivered=bool(self.tool_results), uuid=uuid)
        return terminal, self.close(closing)


async def _query_loop(params: QueryParams, run: QueryRun) -> AsyncIterator[Any]:
    deps = params.deps
    attachments = Attachments.for_run(params)  # phase 5's; its preamble (memory files, environment) goes to stage 5
    context = _tool_use_context(params, run, attachments)
    pipeline = ContextPipeline(params.context, model=params.model, system_prompt=params.system_prompt,
                               tools=params.tools, workspace=params.workspace, uuid=deps.uuid, clock=deps.clock,
                               abort=params.abort, pre_compact=_pre_compact_hooks(params),
                               reactive_compact_on=bool(params.recovery and params.recovery.reactive_compact_retry),
                               preamble=attachments.preamble(), refresh=attachments.preamble)
    gone = withdrawn(params.messages)  # a message a tombstone withdrew (a replaced response) is never sent again
    history = [m for m in params.messages if m.uuid not in gone] if gone else params.messages
    it = run.iteration = _Iteration(State(messages=tuple(history), tool_use_context=context))

    try:
        while True:
            # -- 1. State in ---------------------------------------------------
            state = run.state = it.state

            # -- 2. context pipeline -------------------------------------------
            # Light to heavy: tool-result budget, snip, microcompact, collapse,
            # system prompt, autocompact, blocking limit; each stage that changes
            # something says so. What is sent starts after the last compact
            # boundary, and the next State is built from it, so a reduction
            # carries forward (the transcript keeps everything).
            for message in it.prepare(await prepare_context(state, pipeline)):
                yield run.note(message)
            if it.terminal is not None:  # blocking_limit (or an abort or a hook during a compaction): no request
                break

            # -- 3. stream the model --------------------------------------------
            # Raw events are yielded as they arrive; the finished response becomes
            # one assistant message. With streaming tool execution on, an executor
            # starts each tool_use as soon as its block is complete, and its
            # progress comes between events. A failed attempt may be asked again
            # (retry.py): an overload (then, after a few in a row, of the fallback
            # model), a stream that broke part-way (the streaming fallback: sent
            # again, maybe without streaming; or its finished blocks kept). What a
            # failed attempt showed and is not kept is tombstoned.
            it.phase = "stream"
            async for event in attempts(params, run, it, partial(_stream_model, params, run, it)):
                yield run.note(event)
            # The previous batch's tool-use summary, made while the model streamed: it never holds up a request.
            for message in await finish_summary(state.pending_tool_use_summary, params.deps, params.abort):
                yield run.note(it.add(message))  # UI only: the inspector shows it, no request carries it

            # Recovery: a response cut at max_tokens or a withheld error (prompt too
            # long) may send the same turn round again. recovery.py decides (pure);
            # _recover applies it: a tombstone and a higher limit, a resume message,
            # a collapse drain, a reactive compaction. Otherwise an abort or an
            # error ends the run: what finished is kept, its calls answered.
            it.phase = "recovery"
            transition = decide_recovery(await _withheld(params, run, it, pipeline), state, params.recovery)
            if transition is not None:
                async for event in _recover(transition, params, it, pipeline):
                    yield run.note(event)
            if it.failed:
                for message in _stream_failed(it, deps):
                    yield run.note(message)
            if it.terminal is not None:
                break
            if it.transition is not None:  # escalate, resume (after a cut or a broken stream), collapse drain,
                # reactive compact: turn_count kept
                it = next_state(run, it, it.transition)
                continue

            # -- 4. tools, or stop ------------------------------------------------
            # needs_follow_up comes from the tool_use blocks received, never from
            # stop_reason (the API's stop_reason is not always reliable). Without
            # tool_use, the stop checks (warnings, the stop hooks, the token
            # budget) decide whether the run ends; with it, the tools run (or
            # finish, if they started while the model streamed).
            if not it.tool_uses():
                it.phase = "stop_checks"
                async for event in _stop_checks(params, run, it):
                    yield run.note(event)
            else:
                it.phase = "tools"
                async for event in _run_tools(params, it):
                    yield run.note(event)
            if it.terminal is not None:
                break
            if it.transition is not None:  # stop_hook_blocking, token_budget_continuation, malformed_tool_use_retry
                # (turn_count kept)
                it = next_state(run, it, it.transition)
                continue

            # -- 5. attachments, max_turns, next State ------------------------------
            # Changed memory files and files read (if on), queued input; then this batch's summary starts
            # (if on) and rides in the next State until the next iteration yields it.
            # All of them are kept before the first is yielded: a Stop, or a caller that closes the run at one of
            # these yields, leaves each queued text in the history, never drained and dropped.
            for attachment in [run.note(it.add(a)) for a in attachments.after_tools(it.tool_uses(), it.results)]:
                yield attachment
            for attachment in _task_notifications(context.background, deps.uuid, in_last_result=True):
                yield run.note(it.add(attachment))
            it.pending_summary = start_summary(params.tool_use_summaries, run.model, it.tool_uses(), it.results)
            if it.pending_summary is not None:
                run.summaries.append(it.pending_summary)
            reached = _max_turns_reached(params, it)
            if reached is not None:
                yield run.note(it.add(reached))
                # The four-step-loop text computes ``nextTurnCount`` before the check: the attachment and the
                # Terminal carry the turn the loop refused to start, max_turns + 1.
                it.terminal = Terminal(reason="max_turns", turn_count=state.turn_count + 1)
                break
            it = next_state(run, it, Continue(reason="next_turn"))
    except (asyncio.CancelledError, GeneratorExit, HookError) as error:  # a cancelled task, a caller's aclose(), a
        run.end(*it.raised(error, deps.uuid))  # Python hook's bug: the phase it left decides the Terminal; it propagates
        raise
    assert it.terminal is not None
    run.end(it.terminal)


async def _settled(events: AsyncIterator[Any], run: QueryRun) -> AsyncIterator[Any]:
    """The loop's events; however it ends (its Terminal, an exception, a cancelled task, ``aclose()``), nothing it
    started still runs when this returns (``QueryRun.settle``): ``asyncio.run`` around a run returns."""
    try:
        async with aclosing(events):
            async for event in events:
                yield event
    finally:
        await run.settle()


def next_state(run: QueryRun, it: _Iteration, transition: Continue) -> _Iteration:
    """The one place the loop builds the next State (the conversation-loop text's new State at every ``continue``),
    and the iteration that takes it in.

    Records this iteration's trace checkpoint, labelled with ``transition``, then builds the
    State from what the iteration kept (``it.kept()``) and the counters ``transition``
    changes (``recovery.state_changes``): ``turn_count`` grows only at ``next_turn``, and the
    per-turn counters reset only there; every other path keeps them and changes its own.
    """
    run.trace.checkpoint(**it.collected(), next_transition=transition, next_messages=it.rewritten)
    state = it.state
    run.iteration = _Iteration(state.model_copy(update={
        **state_changes(state, transition), "messages": it.kept(), "transition": transition,
        "auto_compact_tracking": it.auto_compact_tracking, "pending_tool_use_summary": it.pending_summary}))
    return run.iteration


# ---------------------------------------------------------------------------
# Helpers, in the order the phases use them


def _tool_use_context(params: QueryParams, run: QueryRun, attachments: Attachments) -> ToolUseContext:
    """What every tool call of the run gets (``toolUseContext``): tools, the abort signal, permissions, hooks,
    the starter of a sub-agent's run (with ``sub_agents`` on), and the note a call's result may carry (a nested
    memory file, ``Attachments.nested_memory``)."""
    return ToolUseContext(
        tools=params.tools,
        abort=params.abort,
        can_use_tool=params.can_use_tool,
        ask=params.ask,
        workspace=params.workspace,
        permission_mode=params.permission_mode,
        uuid=params.deps.uuid,
        tool_timeout_s=params.tool_timeout_s,
        secrets=_credentials(params.model),
        hooks=params.hooks,
        sibling_rule=params.sibling_rule,
        results_as_finished=params.results_as_finished,
        sub_agent=partial(_sub_agent, params, run) if params.sub_agents is not None else None,
        result_note=attachments.nested_memory if params.memory_files else None,
        file_state=None if params.file_state is None else FileState(
            edit_after_change=params.file_state.edit_after_change),  # one record per run
        background=BackgroundTasks() if params.background_tasks else None,
    )


def _sub_agent(params: QueryParams, run: QueryRun, input: AgentInput, kind: str,
               tool_use_id: str | None = None, *, background: bool = False) -> QueryRun:
    """A child run for an ``Agent`` call (not started; kept in ``run.children``): the parent's fields but its own
    messages (the prompt), tools (``kind``'s, never ``Agent``), ``max_turns`` and trace; the same model client
    (another model's name if the call gave one), abort signal and ids. No fallback model, token budget, queued
    input or tool-use summaries of its own (dreamloop's choice: a child's limits are smaller). The child is named by
    the call (``tool_use_id``, ``agent_id``), its trace is the parent's ``trace.children[tool_use_id]``, and the
    parent's ``on_child`` (the engine's side-chain writer) is told of it now and of each of its messages.

    ``background``: the child gets an abort signal of its own that the parent's fires (a Stop stops it), so the
    run's ``BackgroundTasks`` can stop it alone (``TaskStop``, or the parent's run ending first)."""
    options = params.sub_agents
    assert options is not None
    allowed = options.types[kind]
    tools = [t for t in params.tools if t.name != AGENT_TOOL and (allowed is None or t.name in allowed)]
    model = params.model if input.model is None else params.model.with_name(options.models[input.model])
    fields = {name: getattr(params, name) for name in type(params).model_fields}
    abort = params.abort
    if background:
        abort = AbortController()
        params.abort.add_listener(abort.abort)
        if params.abort.aborted:
            abort.abort(params.abort.reason or "interrupted")
    child = query(QueryParams(**{**fields, "messages": input.prompt, "tools": tools, "model": model,
                                 "sub_agents": None, "max_turns": options.max_turns, "fallback_model": None,
                                 "token_budget": None, "queued_input": None, "tool_use_summaries": None,
                                 "abort": abort}))
    child.agent_type, child.description = kind, input.description
    run.children.append(child)
    if tool_use_id is not None:
        child.tool_use_id, child.agent_id = tool_use_id, agent_id(tool_use_id)
        run.trace.children[tool_use_id] = child.trace
    if run.on_child is not None:
        child._listener = run.on_child
        run.on_child(child, None)
    return child


async def _stream_model(params: QueryParams, run: QueryRun, it: _Iteration, streaming: bool) -> AsyncIterator[Any]:
    """Phase 3, deps.callModel(): one attempt at this iteration's request; yields its events, keeps the response.

    Yields ``RequestStart``, each raw event (``StreamEvent``), the streaming executor's progress,
    the finished response as one ``AssistantMessage`` (never an empty one, F4), then notices about
    what this version does not know. An abort (``it.aborted``) or a failure (``it.broke``, for
    ``retry.attempts`` to decide) ends it early: what finished is in ``it.partial``.
    """
    state, deps = it.state, params.deps
    yield RequestStart(turn_count=state.turn_count, attempt=run.request_attempt(state.turn_count))
    it.new_attempt(StreamingToolExecutor(state.tool_use_context) if params.streaming_tool_execution and streaming
                   else None)
    try:
        async for item in guarded(await _call_model(params, run, it, streaming), params.abort):
            if isinstance(item, APIMessage):
                item, it.repeated_ids = one_call_per_id(item)  # a repeated id runs once (see below)
                it.stop_reason = item.stop_reason
                if any(visible(block) for block in item.content):  # never an empty message (F4)
                    message = AssistantMessage(uuid=deps.uuid(), message=item, request_id=run.model.last_request_id)
                    it.assistant_messages.append(message)
                    yield message
            elif item.type == "progress":  # a call the executor started while the model streams
                it.record(item)
                it.shown.append(item.uuid)
                yield item
            else:
                it.partial.add(item)
                yield StreamEvent(event=item)
    except Aborted:
        it.aborted = "streaming"
        return
    if it.broke is None:  # a whole response: a repeated tool_use id, what a later API may add: said, not fatal
        for notice in odd_response_notices(it.repeated_ids, unknown_content(it.partial, it.assistant_messages),
                                           it.stop_reason, deps.uuid):
            yield it.add(notice)


async def _call_model(params: QueryParams, run: QueryRun, it: _Iteration, streaming: bool) -> AsyncIterator[Any]:
    """One request for this iteration to ``run.model``: messages and system from phase 2, the output limit
    ``output_limit.request_output_limit`` gives (kept in ``it.max_tokens``), streamed or not (the streaming
    fallback's request).

    A failure ends the items and is kept in ``it.broke`` for phase 3 to decide. With an executor
    (streaming tool execution), its ``alongside`` starts each tool_use when its block completes and
    interleaves the calls' progress.
    """
    model, name = run.model, getattr(run.model, "model", None)
    it.max_tokens = await request_output_limit(
        override=it.state.max_output_tokens_override, max_tokens=params.max_tokens,
        model=name if isinstance(name, str) else None, model_limit=getattr(model, "max_output_tokens", None),
        observed=params.observed_output_limits, streaming=streaming,
        non_streaming_cap=params.recovery.streaming_fallback_max_tokens if params.recovery is not None else None)
    request: dict[str, Any] = {**it.prepared.request_fields(), "max_tokens": it.max_tokens}
    if params.tools:
        request["tools"] = tool_schemas(params.tools)
    items = _until_broken(model.stream(**request) if streaming else model.complete(**request), it)
    return it.executor.alongside(items) if it.executor is not None else items


async def _until_broken(items: AsyncIterator[Any], it: _Iteration) -> AsyncIterator[Any]:
    """The model's items until it fails; the failure is kept in ``it.broke`` (phase 3 decides), so a
    streaming executor sees the stream end there and keeps the calls of the blocks that finished."""
    try:
        async with aclosing(items):  # closed here however this ends: a generator left to the collector is a task
            async for item in items:  # (its aclose()) that outlives the run
                yield item
    except (anthropic.APIError, StreamError) as error:
        it.broke = error


async def _withheld(params: QueryParams, run: QueryRun, it: _Iteration, pipeline: ContextPipeline) -> Withheld | None:
    """What recovery may act on after the stream (None: nothing, or recovery is off).

    A ``MaxTokensCut`` when the response stopped at ``max_tokens`` asking for no tool (a response
    with a finished tool_use goes on to run it: the four-step-loop text decides from the blocks, not
    from ``stop_reason``); a ``PromptTooLong`` for the
    API's 400, with how many staged folds a drain would commit.
    """
    if params.recovery is None or it.aborted:
        return None
    if it.error is not None:
        return PromptTooLong(pipeline.drainable(it.messages_for_query)) if is_prompt_too_long(it.error) else None
    if it.stop_reason != "max_tokens" or it.tool_uses():
        return None
    escalate = params.recovery.max_output_tokens_escalate and it.state.max_output_tokens_override is None
    assert it.max_tokens is not None  # a response arrived: its request had a limit
    return MaxTokensCut(it.max_tokens, await run.model.max_output_tokens() if escalate else None)


async def _recover(transition: Continue, params: QueryParams, it: _Iteration,
                   pipeline: ContextPipeline) -> AsyncIterator[Any]:
    """Apply the recovery ``decide_recovery`` chose; on success set ``it.transition`` (and ``it.rewritten``).

    * ``max_output_tokens_escalate``: the same request again with the higher limit; the cut
      response is withdrawn (a ``TombstoneMessage``), so it never reaches a request.
    * ``max_output_tokens_recovery``: the cut response stays as streamed, followed by a meta
      user message asking the model to resume (``[...messages_for_query, ...assistant_messages,
      recovery_message]``); the resumed response will be its own assistant message.
    * ``collapse_drain_retry``: every staged collapse committed at once (``pipeline.drain_collapses``).
    * ``reactive_compact_retry``: the conversation compacted (``pipeline.reactive_compact``). If it
      fails, the withheld error stands (the run ends ``prompt_too_long``); an abort ends it
      ``aborted_streaming``.
    """
    deps, reason = params.deps, transition.reason
    if reason == "max_output_tokens_escalate":
        for message in it.assistant_messages:
            yield it.add(TombstoneMessage(uuid=deps.uuid(), target_uuid=message.uuid,
                                          reason=f"max_output_tokens_escalate: {transition.detail}"))
        it.rewritten = (*it.messages_for_query, *it.added)
    elif reason == "max_output_tokens_recovery":
        yield it.add(user_message(reminder(RESUME_MESSAGE), is_meta=True, uuid=deps.uuid()))
    elif reason == "collapse_drain_retry":
        drained, notices, committed = pipeline.drain_collapses(list(it.messages_for_query))
        for notice in notices:
            yield notice
        it.rewritten = (*drained, *notices)
        transition = transition.model_copy(update={"committed": committed})
    elif reason == "reactive_compact_retry":
        try:
            done = await pipeline.reactive_compact(list(it.messages_for_query))
        except CompactionFailed as failure:  # the withheld error stands: the run ends prompt_too_long
            yield it.add(endings.notice(deps.uuid, "reactive_compact_failed",
                                        f"Reactive compaction failed: {failure}", "warning"))
            return
        except Aborted:  # the model is told in a note, the person in a notice
            for message in it.close(endings.Closing(notes=endings.interrupted("compaction", deps.uuid))):
                yield message
            it.terminal = Terminal(reason="aborted_streaming", turn_count=it.state.turn_count)
            return
        for message in (*done.hook_messages, done.boundary, done.summary):
            yield message
        it.rewritten = tuple(done.messages)
    it.error = None  # recovered: the withheld error is never shown
    it.transition = transition


def _stream_failed(it: _Iteration, deps: QueryDeps) -> list[Any]:
    """Phase 3 ended without an answer: the messages that close the transcript, and ``it.terminal``.

    An abort ends ``aborted_streaming``; a model error nothing recovered ends as ``endings.model_error``
    names it. Either way the blocks that finished are kept and their calls answered (``endings``).
    """
    if it.aborted:
        it.terminal = Terminal(reason="aborted_streaming", turn_count=it.state.turn_count)
        return it.close(endings.stream_interrupted(it.assistant_messages, it.partial, it.results, it.started,
                                                   deps.uuid, waiting=it.aborted == "retry_wait"))
    assert it.error is not None
    it.terminal = endings.model_error(it.error, it.state.turn_count)
    return it.close(endings.model_failed(it.assistant_messages, it.partial, it.results, it.started, it.error,
                                         it.terminal, deps.uuid))


async def _stop_checks(params: QueryParams, run: QueryRun, it: _Iteration) -> AsyncIterator[Any]:
    """Phase 4 without tool_use: warnings, then the stop hooks (if on) and the token budget (if set) decide.

    Sets ``it.terminal`` (``completed``, ``stop_hook_prevented``, ...) or ``it.transition``
    (``stop_hook_blocking``, ``token_budget_continuation``, ``malformed_tool_use_retry``). A response
    still cut at ``max_tokens`` after the recovery it had shows the withheld error and ends as
    ``RecoveryOptions.max_tokens_exhausted`` says (``completed``, dreamloop's choice after the four-step-loop
    text, whose completion path follows the recoverable errors; ``api_error``, as Claude Code 2.1.332
    ended ``max_tokens_always``) without the stop hooks (dreamloop's choice: neither text says whether
    they run after an API error).
    """
    state = it.state
    if it.stop_reason == "tool_use" and params.recovery is not None and params.recovery.malformed_tool_use_retries:
        for message in _malformed_tool_use(params, it):
            yield message
        return
    for notice in endings.stop_notices(it.stop_reason, recovered=_recovers_max_tokens(params.recovery),
                                       limit=it.max_tokens, escalated=bool(state.max_output_tokens_override),
                                       resumes=state.max_output_tokens_recovery_count, uuid=params.deps.uuid):
        yield it.add(notice)
    if it.stop_reason == "max_tokens" and _recovers_max_tokens(params.recovery):
        assert params.recovery is not None
        reason = params.recovery.max_tokens_exhausted
        said = f"max_tokens: the response was still cut at {it.max_tokens:,} tokens"
        it.terminal = Terminal(reason=reason, turn_count=state.turn_count, error=said if reason == "api_error" else None)
        return
    if params.hooks is not None:  # stop hooks may send the model back to work
        stop = await _stop_hooks(params, state)
        for message in stop.messages:
            yield it.add(message)
        if stop.verdict == "block":  # the feedback is in it.added: the model reads it next
            it.transition = Continue(reason="stop_hook_blocking", attempt=state.stop_hook_blocks + 1)
            return
        if stop.verdict != "stop":  # a hook prevented continuation, or the runaway guard fired
            it.terminal = Terminal(reason="stop_hook_prevented", turn_count=state.turn_count)
            return
    budget = params.token_budget
    it.transition = decide_token_budget(run.output_tokens, state, budget)
    if it.transition is not None:  # under budget: the nudge goes to the model, the same turn goes on
        yield it.add(user_message(budget_message(run.output_tokens, budget), is_meta=True, uuid=params.deps.uuid()))
        return
    said = budget_summary(run.output_tokens, state, budget) if budget is not None else None
    if said is not None:
        yield it.add(endings.notice(params.deps.uuid, "token_budget", said))
    background = state.tool_use_context.background
    if background is not None and background.pending():  # the run ends once its background work is delivered
        try:
            with params.abort.guard():  # a Stop ends the wait: the run ends, settle() stops the commands
                await background.wait_for_notification(params.tool_timeout_s)
        except Aborted:  # dreamloop's choice: as an abort after every call had finished
            for message in endings.interrupted("tools_done", params.deps.uuid):
                yield it.add(message)
            it.terminal = Terminal(reason="aborted_tools", turn_count=state.turn_count)
            return
        for attachment in _task_notifications(background, params.deps.uuid):
            yield it.add(attachment)
        it.transition = Continue(reason="next_turn")  # the model reads the notification in a turn of its own
        return
    it.terminal = Terminal(reason="completed", turn_count=state.turn_count)


def _task_notifications(background: BackgroundTasks | None, uuid: Callable[[], str], *,
                        in_last_result: bool = False) -> list[AttachmentMessage]:
    """Phase 5's ``task_notification`` attachments: each background task that ended since the last, once
    (``in_last_result``: after the tools, sent inside their last result, ``tasks.notification_attachment``)."""
    if background is None:
        return []
    return [AttachmentMessage(uuid=uuid(), attachment=notification_attachment(n, in_last_result=in_last_result))
            for n in background.take_notifications()]


async def _run_tools(params: QueryParams, it: _Iteration) -> AsyncIterator[Any]:
    """Phase 4 with tool_use: run the calls (or collect those the executor started) and yield their updates.

    Both paths meet here, as in the four-step-loop text: the executor's ``getRemainingResults()`` when
    streaming tool execution is on, else ``runTools()``.
    An abort answers every unfinished call (``aborted_tools``); a hook's ``continue: false`` ends the
    run ``hook_stopped``.
    """
    state, deps, tool_uses = it.state, params.deps, it.tool_uses()
    updates = it.executor.get_remaining_results() if it.executor else run_tools(tool_uses, state.tool_use_context)
    try:
        async for update in guarded(updates, params.abort):
            it.record(update)
            yield update
    except Aborted:
        for message in it.close(endings.tools_interrupted(tool_uses, it.results, it.started, bool(it.tool_results),
                                                          deps.uuid)):
            yield message
        it.terminal = Terminal(reason="aborted_tools", turn_count=state.turn_count)
        return
    if it.repeated_ids:  # the model learns why a block it sent got no result of its own
        yield it.add(repeated_ids_note(it.repeated_ids, deps.uuid))
    stopped = endings.hook_stopped(it.added, deps.uuid)  # a hook said `continue: false` while tools ran
    if stopped is not None:
        yield it.add(stopped)
        it.terminal = Terminal(reason="hook_stopped", turn_count=state.turn_count)


def _max_turns_reached(params: QueryParams, it: _Iteration) -> AttachmentMessage | None:
    """The ``max_turns_reached`` attachment if the next turn would pass ``max_turns``, else None."""
    next_turn_count = it.state.turn_count + 1
    if params.max_turns is None or next_turn_count <= params.max_turns:
        return None
    return endings.max_turns_reached(next_turn_count, params.max_turns, params.deps.uuid)


async def _stop_hooks(params: QueryParams, state: State) -> StopCheck:
    """Run the stop hooks and decide (``hooks.stop_verdict``).

    An abort while they run cancels them (a command's process group is killed) and prevents continuation
    (dreamloop's design: neither text says what an abort does to the stop hooks).
    """
    assert params.hooks is not None
    try:
        with params.abort.guard():
            return await run_stop_hooks(params.hooks, stop_hook_active=state.stop_hook_active,
                                        blocks_so_far=state.stop_hook_blocks, workspace=params.workspace,
                                        permission_mode=params.permission_mode, uuid=params.deps.uuid)
    except Aborted:  # the model is told in a note after its response, the person in a notice
        return StopCheck("prevent", endings.interrupted("stop_hooks", params.deps.uuid))


def _pre_compact_hooks(params: QueryParams) -> PreCompact | None:
    """The ``pre_compact`` hook event, run by the context pipeline before each compaction (None: no hooks)."""
    hooks = params.hooks
    if hooks is None:
        return None

    async def pre_compact(trigger: str, instructions: str | None) -> PreCompactResult:
        outcome = await run_pre_compact_hooks(hooks, trigger="manual" if trigger == "manual" else "auto",
                                              custom_instructions=instructions or "", workspace=params.workspace,
                                              permission_mode=params.permission_mode, uuid=params.deps.uuid)
        return PreCompactResult(messages=outcome.records, stop=outcome.stopped, stop_reason=outcome.stop_reason)

    return pre_compact


def _malformed_tool_use(params: QueryParams, it: _Iteration) -> list[Any]:
    """``stop_reason`` says ``tool_use`` but no tool_use block came (Claude Code 2.1.332's handling, as
    ``tool_use_without_block`` observed it).

    While ``RecoveryOptions.malformed_tool_use_retries`` allows, the response is withdrawn (a
    tombstone: it never reaches a request) and a note asks again (``malformed_tool_use_retry``);
    then the run ends ``malformed_tool_use_exhausted`` (``endings.malformed_tool_use``).
    """
    options, state = params.recovery, it.state
    assert options is not None
    retries, limit = state.malformed_tool_use_retries, options.malformed_tool_use_retries
    out = [it.add(message) for message in endings.malformed_tool_use(retries, limit, it.assistant_messages,
                                                                     params.deps.uuid)]
    if retries >= limit:
        it.terminal = Terminal(reason="malformed_tool_use_exhausted", turn_count=state.turn_count,
                               error=out[0].content)
        return out
    it.rewritten = (*it.messages_for_query, *it.added)
    it.transition = Continue(reason="malformed_tool_use_retry", attempt=retries + 1,
                             detail=tr("asking again {attempt}/{limit}", attempt=retries + 1, limit=limit))
    return out


def _recovers_max_tokens(options: RecoveryOptions | None) -> bool:
    return options is not None and (options.max_output_tokens_escalate or options.max_output_tokens_recovery)


def _credentials(model: Any) -> tuple[str, ...]:
    """The model's own credentials (API key, auth token): tools must not hand them to commands."""
    client = getattr(model, "client", None)
    return tuple(v for v in (getattr(client, "api_key", None), getattr(client, "auth_token", None)) if v)
