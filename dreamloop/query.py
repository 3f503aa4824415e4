"""query(): the production agent loop, Claude Code's ``queryLoop()`` in Python.

One ``while True``, five phases in the order of the source's flowchart:

    1. State in          take this iteration's State (messages, turn_count, transition)
    2. context pipeline  prepare ``messages_for_query``: seven stages, light to heavy (``context/``)
    3. stream the model  yield raw events, collect ``assistant_messages`` and tool_use blocks
                         (streaming tool execution: calls start as their blocks complete)
    4. tools or stop     no tool_use → stop checks (stop hooks) → Terminal; else run tools → ``tool_results``
    5. next State        attachments (queued input), the max_turns check, a new State, continue

It yields events as they happen and ends with a ``Terminal``. Python async
generators cannot ``return`` a value, so ``query()`` returns a ``QueryRun``:
iterate it, then read ``run.terminal``. This module decides *what happens*;
how the model is called (``model.py``), how tools run (``tools/``) and how
things are shown (``render.py``, ``widgets/``) live elsewhere.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Literal

import anthropic
from anthropic.types import Message as APIMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .abort import AbortController, Aborted
from .context import ContextOptions, ContextPipeline, PreCompact, PreCompactResult, PreparedContext, prepare_context
from .deps import QueryDeps
from .errors import IncompleteStreamError, MalformedStreamError, StreamError
from .events import RequestStart, StreamEvent
from .hooks import Hooks, StopCheck, run_pre_compact_hooks, run_stop_hooks
from .messages import (
    KNOWN_STOP_REASONS,
    AssistantMessage,
    AttachmentMessage,
    LoopMessage,
    SystemMessage,
    UserMessage,
    assistant_tool_uses,
    normalize_messages_for_api,
    user_message,
)
from .partial import PartialResponse
from .state import Continue, State, Terminal
from .tools import (
    USER_INTERRUPT,
    StreamingToolExecutor,
    ToolUseContext,
    Unfinished,
    model_failure,
    run_tools,
    tool_results_message,
    tool_schemas,
)
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
    * ``max_tokens``: output limit per request; ``max_turns``: stop before
      turn ``max_turns + 1`` (None: no limit).
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

    * ``streaming_tool_execution`` (chapter 05): start each tool call as soon
      as its ``tool_use`` block is complete in the stream
      (``StreamingToolExecutor``) instead of after the whole response.
    * ``context`` (chapter 06): the context pipeline (``ContextOptions``: each of
      the seven stages, the window, the thresholds, prompt caching). None:
      phase 2 sends the history as it is.
    * ``hooks``: ``Hooks`` (chapter 07): ``pre_tool_use`` / ``post_tool_use`` around
      each call, ``stop`` when the model asks for no tools. None: no hook runs.
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
    max_tokens: int = Field(default=4096, ge=1)
    max_turns: int | None = Field(default=None, ge=1)
    tool_timeout_s: float = Field(default=600.0, gt=0)
    abort: AbortController = Field(default_factory=AbortController)
    queued_input: Callable[[], list[AttachmentMessage]] | None = None
    deps: QueryDeps = Field(default_factory=QueryDeps)
    streaming_tool_execution: bool = Field(default=False, json_schema_extra={"switch": True, "chapter": "05"})
    context: ContextOptions | None = Field(default=None, json_schema_extra={"switch": True, "chapter": "06"})
    hooks: Hooks | None = Field(default=None, json_schema_extra={"switch": True, "chapter": "07"})

    def switches(self) -> dict[str, Any]:
        """Which feature switches are on, in field order, as JSON: ``{"streaming_tool_execution": True, ...}``.

        A bool switch is itself; an options switch is False when None, its
        ``model_dump`` when it is a pydantic model, else True.
        """
        def plain(value: Any) -> Any:
            if value is None or isinstance(value, bool):
                return bool(value)
            return value.model_dump(mode="json") if isinstance(value, BaseModel) else True

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
    the current ``State``, ``run.trace`` the ``Trace``. ``run.abort()`` fires
    the abort signal.
    """

    def __init__(self, params: QueryParams, trace: Trace | None = None) -> None:
        self.params = params
        self.trace = trace if trace is not None else Trace()
        self.trace.switches = params.switches()
        self.messages: list[Any] = list(params.messages)
        self.state: State | None = None
        self._terminal: Terminal | None = None
        self._started = params.deps.clock()
        self._events = _query_loop(params, self)

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
        await self._events.aclose()

    def __repr__(self) -> str:
        end = self._terminal.reason if self._terminal else "running"
        return f"QueryRun(turn_count={self.state.turn_count if self.state else 1}, terminal={end})"

    # -- bookkeeping shared by every phase ------------------------------

    def note(self, event: Any) -> Any:
        """Record a yielded event in the history and the trace; return it."""
        if event.type not in ("stream_event", "stream_request_start", "progress"):
            self.messages.append(event)
        self.trace.add_event(self.params.deps.clock() - self._started, event)
        return event

    def end(self, terminal: Terminal, turn: "_Turn", *closing: Any) -> None:
        """Record the last checkpoint and the Terminal (closing messages are not yielded)."""
        self.messages.extend(closing)
        self.trace.checkpoint(**turn.collected(), terminal=terminal)
        self._terminal = terminal


def query(params: QueryParams, *, trace: Trace | None = None) -> QueryRun:
    """Start the loop: ``run = query(params); async for event in run: ...; run.terminal``.

    Mirrors ``query()`` / ``queryLoop()``. Nothing happens until the run is
    iterated. Errors from the model become a ``Terminal`` (``model_error``,
    ``prompt_too_long``, ``image_error``) with a valid transcript; a bad tool
    input becomes an ``is_error`` tool_result. Cancelling the task that
    iterates the run closes the transcript, sets ``run.terminal`` and
    re-raises ``CancelledError``.
    """
    return QueryRun(params, trace)


class _Turn:
    """The four local collectors of one iteration (queryLoop()'s locals), and what the tools said so far."""

    def __init__(self, state: State, messages_for_query: list[Any], context: dict[str, Any] | None = None) -> None:
        self.state = state
        self.messages_for_query = messages_for_query
        self.context = context
        self.assistant_messages: list[Any] = []
        self.tool_results: list[Any] = []
        self.attachments: list[Any] = []
        self.stop_reason: str | None = None
        self.started: set[str] = set()  # calls that started (their effects may have happened)
        self.results: dict[str, dict[str, Any]] = {}  # tool_use_id -> tool_result block, as each call ended

    def record(self, update: Any) -> None:
        """Keep what a tool update says: a call started, a call's result, the results message, a hook's record."""
        if update.type == "user":
            self.tool_results.append(update)
        elif update.type == "attachment":  # hook records, and what hooks tell the model
            self.attachments.append(update)
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
            attachments=self.attachments,
            context=self.context,
        )

    def tool_uses(self) -> list[Any]:
        return [block for message in self.assistant_messages for block in assistant_tool_uses(message)]


async def _query_loop(params: QueryParams, run: QueryRun) -> AsyncIterator[Any]:
    deps, abort = params.deps, params.abort
    context = ToolUseContext(
        tools=params.tools,
        abort=abort,
        can_use_tool=params.can_use_tool,
        ask=params.ask,
        workspace=params.workspace,
        permission_mode=params.permission_mode,
        uuid=deps.uuid,
        tool_timeout_s=params.tool_timeout_s,
        secrets=_credentials(params.model),
        hooks=params.hooks,
    )
    pipeline = ContextPipeline(params.context, model=params.model, system_prompt=params.system_prompt,
                               tools=params.tools, workspace=params.workspace, uuid=deps.uuid, clock=deps.clock,
                               abort=abort, pre_compact=_pre_compact_hooks(params))
    state = State(messages=tuple(params.messages), tool_use_context=context)

    while True:
        # -- 1. State in ---------------------------------------------------
        run.state = state

        # -- 2. context pipeline -------------------------------------------
        # Light to heavy: tool-result budget, snip, microcompact, collapse,
        # system prompt, autocompact, blocking limit; each stage that changes
        # something says so. What is sent starts after the last compact
        # boundary, and the next State is built from it, so a reduction
        # carries forward (the transcript keeps everything).
        try:
            prepared = await prepare_context(state, pipeline)
        except asyncio.CancelledError:  # the task was cancelled during a compaction: close quietly
            run.end(Terminal(reason="aborted_streaming", turn_count=state.turn_count),
                    _Turn(state, list(state.messages)))
            raise
        turn = _Turn(state, prepared.messages_for_query, prepared.record.as_dict() if prepared.record else None)
        for message in prepared.yielded:
            yield run.note(message)
        if prepared.terminal is not None:  # blocking_limit (or an abort or a hook during a compaction): no request
            run.end(prepared.terminal, turn)
            return

        # -- 3. stream the model --------------------------------------------
        # With streaming tool execution on, an executor starts each tool_use as
        # soon as its block is complete, and its progress comes between events.
        yield run.note(RequestStart(turn_count=state.turn_count))
        partial = PartialResponse()
        executor = StreamingToolExecutor(context) if params.streaming_tool_execution else None
        try:
            async for item in _guarded(_call_model(params, state, prepared, executor), abort):
                if isinstance(item, APIMessage):
                    turn.stop_reason = item.stop_reason
                    if any(_visible(block) for block in item.content):  # never an empty message (F4)
                        message = AssistantMessage(uuid=deps.uuid(), message=item,
                                                   request_id=params.model.last_request_id)
                        turn.assistant_messages.append(message)
                        yield run.note(message)
                elif item.type == "progress":  # a call the executor started while the model streams
                    turn.record(item)
                    yield run.note(item)
                else:
                    partial.add(item)
                    yield run.note(StreamEvent(event=item))
        except Aborted:
            for message in _stream_interrupted(turn, partial, deps):
                yield run.note(message)
            run.end(Terminal(reason="aborted_streaming", turn_count=state.turn_count), turn)
            return
        except asyncio.CancelledError:  # the task itself was cancelled: close quietly, re-raise
            run.end(Terminal(reason="aborted_streaming", turn_count=state.turn_count), turn,
                    *_stream_interrupted(turn, partial, deps))
            raise
        except (anthropic.APIError, StreamError) as error:
            terminal = _model_error(error, state.turn_count)
            for message in _model_failed(turn, partial, deps, error, terminal):
                yield run.note(message)
            run.end(terminal, turn)
            return
        for notice in _stream_notices(turn, partial, deps):  # what a later API version may add: said, not fatal
            turn.attachments.append(notice)
            yield run.note(notice)

        # -- 4. tools, or stop ------------------------------------------------
        # needs_follow_up comes from the tool_use blocks received, never from
        # stop_reason (the API's stop_reason is not always reliable).
        tool_uses = turn.tool_uses()
        needs_follow_up = bool(tool_uses)
        if not needs_follow_up:
            for notice in _stop_notices(turn, deps):
                turn.attachments.append(notice)
                yield run.note(notice)
            if params.hooks is not None:  # stop hooks may send the model back to work
                stop = await _stop_hooks(params, state, run, turn)
                for message in stop.messages:
                    turn.attachments.append(message)
                    yield run.note(message)
                if stop.verdict == "block":  # the feedback is in turn.attachments: the model reads it next
                    transition = Continue(reason="stop_hook_blocking", attempt=state.stop_hook_blocks + 1)
                    run.trace.checkpoint(**turn.collected(), next_transition=transition)
                    state = State(
                        messages=(*turn.messages_for_query, *turn.assistant_messages, *turn.attachments),
                        turn_count=state.turn_count,  # not a new turn: the same one, answered again
                        transition=transition,
                        auto_compact_tracking=prepared.auto_compact_tracking,
                        stop_hook_active=True,
                        stop_hook_blocks=state.stop_hook_blocks + 1,
                        tool_use_context=context,
                    )
                    continue
                if stop.verdict != "stop":  # a hook prevented continuation, or the runaway guard fired
                    run.end(Terminal(reason="stop_hook_prevented", turn_count=state.turn_count), turn)
                    return
            run.end(Terminal(reason="completed", turn_count=state.turn_count), turn)
            return

        # The source: toolUpdates = streamingToolExecutor ? getRemainingResults() : runTools(...)
        tool_updates = executor.get_remaining_results() if executor else run_tools(tool_uses, context)
        try:
            async for update in _guarded(tool_updates, abort):
                turn.record(update)
                yield run.note(update)
        except Aborted:
            for message in _tools_interrupted(turn, tool_uses, deps):
                yield run.note(message)
            run.end(Terminal(reason="aborted_tools", turn_count=state.turn_count), turn)
            return
        except asyncio.CancelledError:
            run.end(Terminal(reason="aborted_tools", turn_count=state.turn_count), turn,
                    *_tools_interrupted(turn, tool_uses, deps))
            raise
        stopped = _hook_stopped(turn, deps)  # a hook said `continue: false` while tools ran
        if stopped is not None:
            turn.attachments.append(stopped)
            yield run.note(stopped)
            run.end(Terminal(reason="hook_stopped", turn_count=state.turn_count), turn)
            return

        # -- 5. attachments, max_turns, next State ------------------------------
        for attachment in params.queued_input() if params.queued_input else []:
            turn.attachments.append(attachment)
            yield run.note(attachment)
        next_turn_count = state.turn_count + 1
        if params.max_turns is not None and next_turn_count > params.max_turns:
            reached = AttachmentMessage(
                uuid=deps.uuid(),
                attachment={"type": "max_turns_reached", "max_turns": params.max_turns, "turn_count": next_turn_count},
            )
            turn.attachments.append(reached)
            yield run.note(reached)
            # Like the source (``turnCount: nextTurnCount``): the attachment and the Terminal both carry
            # the turn the loop refused to start, max_turns + 1.
            run.end(Terminal(reason="max_turns", turn_count=next_turn_count), turn)
            return
        transition = Continue(reason="next_turn")
        run.trace.checkpoint(**turn.collected(), next_transition=transition)
        state = State(
            messages=(*turn.messages_for_query, *turn.assistant_messages, *turn.tool_results, *turn.attachments),
            turn_count=next_turn_count,
            transition=transition,
            auto_compact_tracking=prepared.auto_compact_tracking,
            stop_hook_active=state.stop_hook_active,
            stop_hook_blocks=state.stop_hook_blocks,
            tool_use_context=context,
        )


# ---------------------------------------------------------------------------
# Helpers, in the order the phases use them


def _call_model(params: QueryParams, state: State, prepared: PreparedContext,
                executor: StreamingToolExecutor | None) -> AsyncIterator[Any]:
    """deps.callModel(): one streaming request for this iteration (messages and system from phase 2).

    With an executor (streaming tool execution), its ``alongside`` starts each
    tool_use when its block completes and interleaves the calls' progress.
    """
    request: dict[str, Any] = {
        **prepared.request_fields(),
        "max_tokens": state.max_output_tokens_override or params.max_tokens,
    }
    if params.tools:
        request["tools"] = tool_schemas(params.tools)
    stream = params.model.stream(**request)
    return executor.alongside(stream) if executor is not None else stream


async def _guarded(events: AsyncIterator[Any], abort: AbortController) -> AsyncIterator[Any]:
    """Iterate ``events`` so that the abort signal cancels the await in flight.

    Only the ``await`` for the next item is guarded, never the ``yield``: a
    click while the caller handles an event takes effect at the next await.
    """
    iterator = events.__aiter__()
    try:
        while True:
            with abort.guard():
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    return
            yield item
    finally:
        await iterator.aclose()


def _stream_interrupted(turn: _Turn, partial: PartialResponse, deps: QueryDeps) -> list[Any]:
    """Abort while streaming: keep what finished, answer its tool_use calls, say so."""
    if turn.assistant_messages:  # the response had arrived whole (with streaming tools, calls may run)
        said = ("Interrupted after the model's response arrived, while its tools ran." if turn.started else
                "Interrupted after the model's response arrived, before its tools ran.")
    else:
        said = "Interrupted while the model was streaming."
    closing = _close_stream(turn, partial, deps, USER_INTERRUPT)
    notice = _system(deps, "interrupted", said, "warning")
    turn.attachments.append(notice)
    return [*closing, notice]


def _tools_interrupted(turn: _Turn, tool_uses: list[Any], deps: QueryDeps) -> list[Any]:
    """Abort while tools ran: finished results stay; the others say whether they had started (F14).

    If the results message was already delivered (the abort came while the
    caller handled it), every call is answered: nothing is added but the
    notice, which says so (the source checks the signal after the tool phase).
    """
    if turn.tool_results:
        notice = _system(deps, "interrupted", "Interrupted after every tool call had finished.", "warning")
        turn.attachments.append(notice)
        return [notice]
    turn.tool_results = [tool_results_message(tool_uses, turn.results, USER_INTERRUPT, started=turn.started,
                                              uuid=deps.uuid())]
    notice = _system(deps, "interrupted", "Interrupted while tools were running.", "warning")
    turn.attachments.append(notice)
    return [*turn.tool_results, notice]


def _model_failed(turn: _Turn, partial: PartialResponse, deps: QueryDeps, error: Exception,
                  terminal: Terminal) -> list[Any]:
    """An unrecovered model error: close the transcript, then tell the person (never the model)."""
    closing = _close_stream(turn, partial, deps, model_failure(terminal.error or ""))
    subtype = {IncompleteStreamError: "incomplete_response", MalformedStreamError: "malformed_stream"}.get(
        type(error), "api_error")
    notice = _system(deps, subtype, terminal.error or "", "error")
    turn.attachments.append(notice)
    return [*closing, notice]


def _close_stream(turn: _Turn, partial: PartialResponse, deps: QueryDeps, why: Unfinished) -> list[Any]:
    """Keep the blocks that finished streaming and answer their tool_use calls.

    The source keeps what the person already saw and gives every dangling
    tool_use an error result (yieldMissingToolResultBlocks()), so the next
    request is valid. A call that streaming tool execution already ran keeps
    its result; one it had started says so (``why.running``), the others
    ``why.not_started``. Returns the messages to add, in order.
    """
    closing: list[Any] = []
    if not turn.assistant_messages:
        unfinished = partial.message()
        if unfinished is not None and any(_visible(b) for b in unfinished.content):
            kept = AssistantMessage(uuid=deps.uuid(), message=unfinished)
            turn.assistant_messages.append(kept)
            closing.append(kept)
    tool_uses = turn.tool_uses()
    if tool_uses:
        turn.tool_results = [tool_results_message(tool_uses, turn.results, why, started=turn.started,
                                                  uuid=deps.uuid())]
        closing.extend(turn.tool_results)
    return closing


def _visible(block: Any) -> bool:
    return block.type != "text" or bool(block.text.strip())


def _model_error(error: Exception, turn_count: int) -> Terminal:
    """Name the Terminal for an unrecovered model error."""
    if isinstance(error, IncompleteStreamError):
        return Terminal(reason="model_error", turn_count=turn_count, error=f"Incomplete response: {error}")
    if isinstance(error, MalformedStreamError):
        return Terminal(reason="model_error", turn_count=turn_count, error=f"Malformed stream: {error}")
    said = getattr(error, "api_message", None) or str(error)
    if isinstance(error, anthropic.BadRequestError) and "prompt is too long" in said:
        return Terminal(reason="prompt_too_long", turn_count=turn_count, error=said)
    if isinstance(error, anthropic.BadRequestError) and "image" in said.lower():
        return Terminal(reason="image_error", turn_count=turn_count, error=said)
    return Terminal(reason="model_error", turn_count=turn_count, error=f"API error: {_error_text(error)}")


def _error_text(error: Exception) -> str:
    """``overloaded_error: Overloaded (HTTP 529)`` from an SDK error's ``type`` and ``api_message``."""
    kind, said = getattr(error, "type", None), getattr(error, "api_message", None)
    if kind and said:
        status = getattr(error, "status_code", None)
        return f"{kind}: {said}" + (f" (HTTP {status})" if status and status != 200 else "")
    return getattr(error, "message", None) or str(error)


def _stream_notices(turn: _Turn, partial: PartialResponse, deps: QueryDeps) -> list[SystemMessage]:
    """Warnings for what this version does not know (a later API may send it): the run goes on."""
    notices = []
    if partial.unknown:
        unknown = ", ".join(partial.unknown)
        notices.append(_system(deps, "unknown_stream_content",
                               f"The stream held what this version of dreamloop does not know: {unknown}. "
                               "Unknown blocks are kept and sent back as received; the rest is ignored.", "warning"))
    if turn.stop_reason is not None and turn.stop_reason not in KNOWN_STOP_REASONS:
        notices.append(_system(deps, "unknown_stop_reason",
                               f"The model stopped with stop_reason {turn.stop_reason!r}, which this version does not "
                               "know; the loop goes on from the content blocks.", "warning"))
    return notices


async def _stop_hooks(params: QueryParams, state: State, run: QueryRun, turn: _Turn) -> StopCheck:
    """handleStopHooks(): run the stop hooks and decide (``hooks.stop_verdict``).

    An abort while they run cancels them (a command's process group is killed) and prevents
    continuation, as in the source; a cancelled task closes the run and re-raises.
    """
    assert params.hooks is not None
    try:
        with params.abort.guard():
            return await run_stop_hooks(params.hooks, stop_hook_active=state.stop_hook_active,
                                        blocks_so_far=state.stop_hook_blocks, workspace=params.workspace,
                                        permission_mode=params.permission_mode, uuid=params.deps.uuid)
    except Aborted:
        return StopCheck("prevent", (_system(params.deps, "interrupted", "Interrupted while the stop hooks ran.",
                                             "warning"),))
    except asyncio.CancelledError:
        run.end(Terminal(reason="stop_hook_prevented", turn_count=state.turn_count), turn)
        raise


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


def _hook_stopped(turn: _Turn, deps: QueryDeps) -> SystemMessage | None:
    """The notice that ends the run when a tool hook said ``continue: false`` (``hook_stopped``)."""
    for attachment in (m.attachment for m in turn.attachments if m.type == "attachment"):
        if attachment.get("type") == "hook_stopped_continuation":
            return _system(deps, "hook_stopped", f"{attachment['hookName']} hook stopped the run: "
                                                 f"{attachment['stopReason']}", "warning")
    return None


def _stop_notices(turn: _Turn, deps: QueryDeps) -> list[SystemMessage]:
    """Warnings when a response asks for no tools but its stop_reason says something else."""
    stop_reason = turn.stop_reason
    if stop_reason == "tool_use":
        return [_system(deps, "stop_reason_without_tool_use",
                        "The model's stop_reason was tool_use but it sent no tool_use block; nothing to run.", "warning")]
    if stop_reason == "max_tokens":
        return [_system(deps, "max_output_tokens",
                        "The response was cut at max_tokens (recovery is off), so the loop ends here.", "warning")]
    return []


def _credentials(model: Any) -> tuple[str, ...]:
    """The model's own credentials (API key, auth token): tools must not hand them to commands."""
    client = getattr(model, "client", None)
    return tuple(v for v in (getattr(client, "api_key", None), getattr(client, "auth_token", None)) if v)


def _system(deps: QueryDeps, subtype: str, content: str, level: str = "info") -> SystemMessage:
    return SystemMessage(uuid=deps.uuid(), subtype=subtype, content=content, level=level)
