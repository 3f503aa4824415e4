"""Phase 2 of the loop: ``prepare_context()`` runs the seven stages, light to heavy, before each request.

The stages are a table (``_STAGES``: each stage's ``ContextOptions`` switch and the method that runs it), run
in order by one loop over one ``_Pass`` (the turn's history, its token count, what is yielded and kept),
until a stage ends the run. Both compactions (autocompact, recovery's reactive one) ask the ``pre_compact``
hooks through one helper.

``ContextPipeline`` holds a run's context settings and what it remembers
between iterations so that a turn costs what is new, not the whole history:
each message's token estimate (by uuid), the total of the previous
``messages_for_query``, how far each scanning stage has read, and the staged
folds. Nothing it remembers changes a decision: the stages are the plain
functions beside it, and a fresh pipeline on the same State decides the same.
It yields what each stage changed as a ``SystemMessage`` and ends the run only
at the blocking limit, when a ``pre_compact`` hook stops it, or when the abort signal fires during a
compaction.
It knows nothing about streaming the model or running tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from .. import endings
from ..abort import AbortController, Aborted
from ..errors import CompactionFailed
from ..messages import SystemMessage, UserMessage, normalize_messages_for_api, user_message
from ..state import AutoCompactTracking, State, Terminal
from ..tokens import TokenCounter, estimate_request_tokens
from ..tools import tool_schemas
from .autocompact import (CompactTrigger, PreCompact, PreCompactResult, _joined, compact_conversation,
                          is_compact_boundary, latest_request_index, messages_after_compact_boundary,
                          pre_compact_result)
from .blocking import blocking_message, is_at_blocking_limit
from .budget import apply_tool_result_budget
from .collapse import Fold, commit_folds, drain_collapses, find_folds, fold_savings, staged_collapses
from .microcompact import clearable_tool_results, microcompact_messages, protected_from
from .options import STAGES, ContextOptions, Thresholds
from .records import ContextRecord, StageResult, stage_notice
from .snip import snip_messages
from .system_prompt import Preamble, add_cache_breakpoints, append_system_context, user_context_text

__all__ = ["ContextPipeline", "PreparedContext", "prepare_context"]


@dataclass
class PreparedContext:
    """What phase 2 hands to the model call (and to the next State).

    * ``messages_for_query``: the context after the stages (``messagesForQuery``),
      a sequence of loop messages (the State's own tuple when nothing changed);
      it ends with the stages' notices, and the next State is built from it.
    * ``yielded``: what phase 2 yields, in order: one ``SystemMessage`` per
      stage that changed something; after a compaction also the summary.
    * ``system``: the request's system prompt (assembled by stage 5, if on).
    * ``user_context``: the user-context message sent first (not kept in State).
    * ``terminal``: set when no request must be sent (``blocking_limit``;
      ``aborted_streaming`` if the signal fired during a compaction;
      ``hook_stopped`` if a ``pre_compact`` hook stopped the run).
    * ``auto_compact_tracking``: the next State's ``auto_compact_tracking``.
    * ``record``: the turn's ``ContextRecord`` (None when the pipeline is off).
    """

    messages_for_query: Sequence[Any]
    yielded: list[Any] = field(default_factory=list)
    system: Any = None
    user_context: UserMessage | None = None
    prompt_caching: bool = False
    terminal: Terminal | None = None
    auto_compact_tracking: AutoCompactTracking | None = None
    record: ContextRecord | None = None

    def request_fields(self) -> dict[str, Any]:
        """The request's ``messages`` (and ``system`` when there is one), breakpoints marked if caching is on."""
        sent = [self.user_context, *self.messages_for_query] if self.user_context else self.messages_for_query
        messages: list[Any] = normalize_messages_for_api(sent)
        system = self.system
        if self.prompt_caching:
            system, messages = add_cache_breakpoints(system, messages)
        return {"messages": messages, **({"system": system} if system else {})}


@dataclass
class _Memo:
    """What the pipeline remembers between iterations (a cache; never a decision)."""

    output: tuple[Any, ...] = ()
    total: int = 0
    last_role: str | None = None
    snip_from: int = 0
    snip_spared: int | None = None  # the request left whole behind ``snip_from``: trimmed once it is not the newest
    request_from: int = 0  # the person's newest request in ``history[:request_from]`` is ``request_at`` (None: none)
    request_at: int | None = None
    micro_from: int = 0
    collapse_from: int = 0
    staged: list[Fold] = field(default_factory=list)


@dataclass
class _Pass:
    """One pass of the stages over a turn's history: what each stage reads, and leaves for the next.

    ``history``: the messages after the last compact boundary (the State's own tuple until a stage rewrites
    them); ``fresh``: the first one not seen last turn; ``tokens``: the request's size, kept right by each
    stage; ``yielded``: what phase 2 yields, in order; ``notices``: what stays at the end of
    ``messages_for_query``; ``terminal``: set by a stage that ends the run (the pass stops there).
    """

    state: State
    history: Any
    fresh: int
    tokens: int
    record: ContextRecord
    tracking: AutoCompactTracking | None
    yielded: list[Any] = field(default_factory=list)
    notices: list[Any] = field(default_factory=list)
    terminal: Terminal | None = None

    def say(self, *messages: Any) -> None:
        """Yield ``messages`` and keep them at the end of ``messages_for_query``."""
        self.yielded.extend(messages)
        self.notices.extend(messages)

    def stop(self, reason: Any, *told: Any) -> None:
        """Stop the pass: no request is sent, and the loop ends the run with ``reason`` (the messages ``told``
        say why)."""
        self.say(*told)
        self.terminal = Terminal(reason=reason, turn_count=self.state.turn_count)


class ContextPipeline:
    """A run's context pipeline: ``await pipeline.prepare(state)`` before each request.

    ``options``: ``ContextOptions`` (None: the pipeline is off and the history
    is sent as it is). ``model``: the ``AnthropicModel`` (its window, the
    summarising request, ``count_tokens``). ``system_prompt``, ``tools``:
    the run's, for the request's fixed part. ``workspace``: where the tool
    result budget writes by default. ``uuid`` / ``clock``: ``QueryDeps``'.
    ``abort``: the run's signal. ``pre_compact``: called before every
    compaction (the ``pre_compact`` hook event; None: no hooks); its messages
    are yielded, and its ``stop`` ends the run (Terminal ``hook_stopped``).
    ``reactive_compact_on``: the run recovers from ``prompt is too long`` by compacting
    (``RecoveryOptions.reactive_compact_retry``); with autocompact on too, the blocking
    limit is not checked (dreamloop's design, which neither text describes: those two own an
    over-long context, so the request is sent and a 400 is recovered).
    ``preamble``: what the run adds around the system prompt and before the first
    message (environment, memory files, the date; ``system_prompt.Preamble``), sent
    with every request even when ``options`` is None; its notices are yielded once.
    ``refresh``: makes the preamble again (the memory files as they are on disk now); asked after
    every compaction (a compact boundary the pipeline has not seen: auto, reactive or manual), so no
    request after a compaction carries a memory file's stale text (dreamloop's design, issue 33).

    For the recovery branches: ``staged_folds``, ``drainable(messages)`` and
    ``drain_collapses(messages)`` (``collapse_drain_retry``), and
    ``reactive_compact(messages)`` (``reactive_compact_retry``).
    """

    def __init__(self, options: ContextOptions | None, *, model: Any, system_prompt: Any = None,
                 tools: list[Any] | None = None, workspace: Path | None = None,
                 uuid: Callable[[], str], clock: Callable[[], float], abort: AbortController | None = None,
                 pre_compact: PreCompact | None = None, reactive_compact_on: bool = False,
                 preamble: Preamble | None = None, refresh: Callable[[], Preamble] | None = None) -> None:
        self.options = options
        self.refresh = refresh
        self._boundary: str | None | bool = False  # the last compact boundary the preamble was made after
        self.reactive_compact_on = reactive_compact_on
        self.preamble = preamble or Preamble()
        self._notices = list(self.preamble.notices)  # yielded with the first request, once
        self._opening: UserMessage | None = None
        self._opened = False
        self.model = model
        self.system_prompt = system_prompt
        self.tools = list(tools or [])
        self.workspace = workspace
        self.uuid = uuid
        self.clock = clock
        self.abort = abort
        self.pre_compact = pre_compact
        self.thresholds: Thresholds | None = None
        self.counter = TokenCounter()
        self._memo = _Memo()
        self._origins: dict[str, tuple[str, ...]] = {}
        self._system: Any = None
        self._user_context: UserMessage | None = None
        self._fixed = 0
        self._after_role: str | None = None
        self._directory: Path | None = None
        self._root: Path | None = None

    # -- public ---------------------------------------------------------------

    @property
    def on(self) -> bool:
        return self.options is not None

    @property
    def _keep_latest_request(self) -> bool:
        """``ContextOptions.keep_latest_request`` (on when the pipeline is off: a reactive compaction keeps it too)."""
        return self.options.keep_latest_request if self.options is not None else True

    @property
    def staged_folds(self) -> list[Fold]:
        """Folds staged and not committed yet (what ``collapse_drain_retry`` would commit)."""
        return list(self._memo.staged)

    async def prepare(self, state: State) -> PreparedContext:
        """Phase 2: the seven stages on ``state.messages`` (see ``prepare_context``)."""
        self._refresh_after(_last_boundary(state.messages))
        notices, self._notices = self._notices, []
        if self.options is None:  # no stage runs, but what is sent still starts at the last compact boundary
            return PreparedContext(messages_after_compact_boundary(state.messages), notices,
                                   system=self.preamble.system_prompt(self.system_prompt),
                                   user_context=self._first_message(None),
                                   auto_compact_tracking=state.auto_compact_tracking)
        started = self.clock()
        await self._start()
        prepared = await self._run_stages(state, started)
        prepared.yielded[:0] = notices
        return prepared

    def drainable(self, messages: Any) -> int:
        """How many folds ``drain_collapses(messages)`` would commit now (0: the stage is off, or nothing to fold)."""
        options = self.options.context_collapse if self.options else None
        return len(staged_collapses(list(messages), options)) if options is not None else 0

    def drain_collapses(self, messages: list[Any]) -> tuple[list[Any], list[SystemMessage], int]:
        """Commit every staged fold of ``messages`` at once (``collapse_drain_retry``).

        Returns ``(messages, notices, committed)``; ``committed`` 0 means there
        was nothing to drain (go on to reactive compaction). Needs the
        ``context_collapse`` stage on (else returns the messages unchanged).
        """
        options = self.options.context_collapse if self.options else None
        if options is None:
            return list(messages), [], 0
        before = self._request_tokens(messages)
        drained = drain_collapses(list(messages), options, uuid=self.uuid)
        if not drained.committed:
            return list(messages), [], 0
        self._reset_memo()
        after = self._request_tokens(drained.messages)
        notice = stage_notice("context_collapse", f"drained: {drained.result.detail}", before, after, uuid=self.uuid,
                              replaced=_lists(drained.result.replaced), trigger="collapse_drain_retry")
        return drained.messages, [notice], drained.committed

    async def reactive_compact(self, messages: list[Any], *, keep_recent: int | None = None) -> Any:
        """Compact ``messages`` now, after the API said ``prompt is too long`` (``reactive_compact_retry``).

        Returns the ``Compaction``: its ``messages`` are the new context (boundary,
        summary, tail); yield its ``hook_messages``, ``boundary`` and ``summary``.
        The ``pre_compact`` hooks run first (trigger ``"reactive"``). Raises
        ``CompactionFailed`` when it cannot, or a hook stopped the run (the run
        should then end); ``abort.Aborted`` if the signal fires meanwhile.
        """
        await self._start()
        settings = self.options.autocompact if self.options and self.options.autocompact else None
        keep = keep_recent if keep_recent is not None else (settings.keep_recent if settings else 4)
        said = await self._pre_compact("reactive", settings.custom_instructions if settings else None)
        if said.stop:
            raise CompactionFailed(f"a pre_compact hook stopped the run: {said.stop_reason}")
        done = await compact_conversation(
            messages_after_compact_boundary(messages), model=self.model, uuid=self.uuid, keep_recent=keep,
            max_tokens=settings.max_summary_tokens if settings else 2048, trigger="reactive",
            custom_instructions=said.instructions, abort=self.abort, count=self._request_tokens,
            origins=self._origins, opening=self._user_context, keep_latest_request=self._keep_latest_request)
        self._reset_memo()
        self._refresh_after(done.boundary.uuid)
        return replace(done, hook_messages=said.messages)

    # -- setting up, once per run -------------------------------------------------

    async def _start(self) -> None:
        if self.thresholds is not None or self.options is None:
            return
        options = self.options
        window = options.context_window or await self.model.context_window()
        self.thresholds = options.thresholds(window)
        self._root = Path(self.workspace).resolve() if self.workspace is not None else None
        if options.tool_result_budget is not None:
            self._directory = self._budget_directory(options.tool_result_budget)
        self._assemble()

    def _assemble(self) -> None:
        """The system prompt, the opening message and their token count, from the preamble."""
        assembly = self.options.system_prompt if self.options else None
        if assembly is not None:
            self._system = self.preamble.system_prompt(append_system_context(self.system_prompt,
                                                                             assembly.system_context))
            self._user_context = self._first_message(user_context_text(assembly.user_context))
        else:
            self._system = self.preamble.system_prompt(self.system_prompt)
            self._user_context = self._first_message(None)
        fixed: dict[str, Any] = {"messages": []}
        if self._system:
            fixed["system"] = self._system
        if self.tools:
            fixed["tools"] = tool_schemas(self.tools)
        self._fixed = estimate_request_tokens(fixed) if (self._system or self.tools) else 0
        if self._user_context is not None:
            self._fixed += self.counter.count([self._user_context])
            self._after_role = "user"

    def _refresh_after(self, boundary: str | None) -> None:
        """After a compaction (``boundary``: the uuid of the last compact boundary, None when there is none),
        the preamble made again from disk, once per boundary; the first call only notes where the run starts."""
        if self._boundary is False or self.refresh is None:
            self._boundary = boundary
            return
        if boundary is None or boundary == self._boundary:
            return
        self._boundary = boundary
        self.preamble = self.refresh()
        self._notices += list(self.preamble.notices)
        self._opened = False
        if self.thresholds is not None:
            self._assemble()
        else:
            self._first_message(None)

    def _first_message(self, user_context: str | None) -> UserMessage | None:
        """The meta user message sent before the history (stage 5's user context, the preamble's reminders),
        made once per run so its bytes (and uuid) stay the same on every request."""
        if not self._opened:
            self._opened = True
            blocks = self.preamble.first_message(user_context)
            self._opening = user_message(blocks, is_meta=True, uuid=self.uuid()) if blocks else None
        return self._opening

    # -- one iteration ---------------------------------------------------------------

    async def _run_stages(self, state: State, started: float) -> PreparedContext:
        """The stages of ``_STAGES`` in order, each if its ``ContextOptions`` switch is on, until one ends the run."""
        options, limits = self.options, self.thresholds
        assert options is not None and limits is not None
        history, fresh = self._history(state.messages)  # may reset memo (in place)
        tokens = self._fixed + self._memo.total
        tracking = state.auto_compact_tracking
        if tracking is not None and tracking.compacted:
            tracking = tracking.model_copy(update={"turn_counter": tracking.turn_counter + 1})
        run = _Pass(state, history, fresh, tokens, ContextRecord(window=limits.window, thresholds=limits.lines(),
                                                                 tokens_in=tokens), tracking)
        counted = False
        for stage in _STAGES:
            if getattr(options, stage.name) is None:
                continue
            if stage.heavy and options.count_tokens == "api" and not counted:
                run.tokens, counted = await self._api_tokens(run.history), True  # the server's count decides
            await stage.run(self, run)
            if run.terminal is not None:
                break
        if run.terminal is None:
            run.record.tokens = run.tokens  # the request's size as sent
        run.record.seconds = self.clock() - started
        return self._prepared(run)

    # -- the stages, light to heavy (_STAGES): each reads and changes one _Pass ------------------------------

    async def _tool_result_budget(self, run: _Pass) -> None:
        """1. Only results not sent yet are put on disk, so the cached prefix never changes."""
        budget, limits = self.options.tool_result_budget, self.thresholds
        if limits.tool_result is None:
            return
        result = apply_tool_result_budget(
            run.history, max_result_tokens=limits.tool_result, directory=self._directory,
            preview_chars=budget.preview_chars, uuid=self.uuid, start=run.fresh, root=self._root)
        if result.changed:
            self._replace_in_place(run.history, result)
            self._applied(run, "tool_result_budget", result)

    async def _snip(self, run: _Pass) -> None:
        """2. Over its threshold, old long contents are trimmed; the person's newest request stays whole
        (``_spared_request``), and is trimmed once a newer one comes."""
        snip, memo = self.options.snip, self._memo
        if run.tokens <= (self.thresholds.snip or 0):
            return
        spare = self._spared_request(run.history)
        start = memo.snip_from
        if memo.snip_spared is not None and memo.snip_spared != spare:  # no longer the newest: read it again
            start = min(start, memo.snip_spared)
        result = snip_messages(run.history, keep_recent=snip.keep_recent, max_chars=snip.max_chars,
                               keep_chars=snip.keep_chars, uuid=self.uuid, start=start, spare=spare)
        memo.snip_from = max(len(run.history) - snip.keep_recent, memo.snip_from)
        memo.snip_spared = spare if spare is not None and spare < memo.snip_from else None
        if result.changed:
            self._replace_in_place(run.history, result)
            self._applied(run, "snip", result)

    async def _microcompact(self, run: _Pass) -> None:
        """3. Over its threshold, old tool results are cleared, in one batch worth clearing."""
        micro, memo, limits = self.options.microcompact, self._memo, self.thresholds
        if run.tokens <= (limits.microcompact or 0):
            return
        clearable = clearable_tool_results(run.history, keep_recent=micro.keep_recent, start=memo.micro_from)
        if not clearable or sum(saved for _, _, saved in clearable) < (limits.microcompact_savings or 0):
            return
        result = microcompact_messages(run.history, keep_recent=micro.keep_recent, uuid=self.uuid,
                                       start=memo.micro_from)
        memo.micro_from = protected_from(run.history, micro.keep_recent)
        self._replace_in_place(run.history, result)
        self._applied(run, "microcompact", result)

    async def _context_collapse(self, run: _Pass) -> None:
        """4. Folds are staged as the context grows; over the threshold the oldest are committed."""
        collapse, memo, limits = self.options.context_collapse, self._memo, self.thresholds
        if run.tokens > (limits.collapse_stage or 0):
            folds, memo.collapse_from = find_folds(run.history, collapse, start=memo.collapse_from)
            memo.staged.extend(folds)
        if memo.staged and run.tokens > (limits.context_collapse or 0):
            # down to the staging threshold, not just under the commit one: fewer, larger commits break the
            # cached prefix less often
            result = self._commit_oldest(run.history, run.tokens - (limits.collapse_stage or 0))
            if result.changed:
                self._applied(run, "context_collapse", result)
        run.record.staged_folds = len(memo.staged)

    async def _system_prompt(self, run: _Pass) -> None:
        """5. Assembled once per run in ``_start()`` (byte-stable); nothing to do per turn."""

    async def _autocompact(self, run: _Pass) -> None:
        """6. Over its threshold the model summarises the head; bounded by ``max_failures`` in a row."""
        compact, limits = self.options.autocompact, self.thresholds
        if run.tokens <= (limits.autocompact or 0):
            return
        failures = run.tracking.consecutive_failures if run.tracking else 0
        if failures >= compact.max_failures:
            return
        said = await self._pre_compact("auto", compact.custom_instructions)
        run.say(*said.messages)
        if said.stop:
            run.stop("hook_stopped", SystemMessage(uuid=self.uuid(), subtype="hook_stopped", level="warning",
                                                  content=f"A pre_compact hook stopped the run: {said.stop_reason}"))
            return
        try:
            done = await compact_conversation(
                run.history, model=self.model, uuid=self.uuid, keep_recent=compact.keep_recent,
                max_tokens=compact.max_summary_tokens, trigger="auto", custom_instructions=said.instructions,
                abort=self.abort, count=self._request_tokens, origins=self._origins, opening=self._user_context,
                keep_latest_request=self._keep_latest_request)
        except CompactionFailed as failure:
            failures += 1
            run.say(self._compact_failed(str(failure), failures, compact.max_failures, run.tokens))
        except Aborted:  # the model is told in a note, the person in a notice (endings.interrupted)
            run.stop("aborted_streaming", *endings.interrupted("compaction", self.uuid))
            return
        else:
            run.record.compaction = {k: v for k, v in done.usage.items() if isinstance(v, int)}
            run.record.stages.append({"stage": "autocompact", "before": run.tokens, "after": done.tokens_after})
            run.history, run.notices = list(done.messages), []
            run.yielded.extend([done.boundary, done.summary])
            self._refresh_after(done.boundary.uuid)
            run.yielded.extend(self._notices)  # a memory file not sent now, and why
            self._notices = []
            self._reset_memo(keep=run.history)
            run.tokens = done.tokens_after
            failures = failures + 1 if run.tokens > (limits.autocompact or 0) else 0
            if failures:
                run.say(self._compact_failed("the summary and the kept tail are still over the threshold",
                                             failures, compact.max_failures, run.tokens))
        if run.record.compaction is not None:
            run.tracking = AutoCompactTracking(compacted=True, turn_id=done.boundary.uuid,
                                               consecutive_failures=failures)
        else:
            run.tracking = (run.tracking or AutoCompactTracking()).model_copy(update={"consecutive_failures": failures})

    async def _blocking_limit(self, run: _Pass) -> None:
        """7. Still over the hard limit, nothing is sent. Skipped when autocompact and reactive compaction are
        both on: they own an over-long context (the request goes, a 400 is recovered)."""
        limits = self.thresholds
        if self.reactive_compact_on and self.options.autocompact is not None:
            return
        if is_at_blocking_limit(run.tokens, limits.blocking_limit):
            run.record.tokens = run.tokens  # the size that kept the request from being sent
            run.stop("blocking_limit", SystemMessage(
                uuid=self.uuid(), subtype="blocking_limit", level="error",
                content=blocking_message(run.tokens, limits.blocking_limit or 0, limits.window),
                metadata={"stage": "blocking_limit", "tokens_before": run.tokens, "tokens_after": run.tokens,
                          "limit": limits.blocking_limit}))

    # -- helpers ------------------------------------------------------------------------

    def _applied(self, run: _Pass, stage: str, result: StageResult, **metadata: Any) -> None:
        """Record one stage's change: the new history and token count, its notice, its line in the record."""
        run.history = result.messages
        for new, old in result.replaced.items():
            self._origins[new] = tuple(o for u in old for o in self._origins.get(u, (u,)))
        before, after = run.tokens, self._fixed + self._memo.total
        run.say(stage_notice(stage, result.detail, before, after, uuid=self.uuid, replaced=_lists(result.replaced),
                             **metadata))
        run.record.stages.append({"stage": stage, "before": before, "after": after})
        run.tokens = after

    def _spared_request(self, history: Any) -> int | None:
        """The message snip leaves whole: the person's newest request (``latest_request_index``, the one a
        compaction keeps after its summary) while ``keep_latest_request`` is on; None when it is off (dreamloop's
        choice: the text kept word for word is the person's, not a trimmed one)."""
        if not self._keep_latest_request:
            return None
        memo = self._memo  # only what is new since the last look is read (a turn costs what is new)
        found = latest_request_index(history, memo.request_from)
        if found is not None or memo.request_from == 0:
            memo.request_at = found
        memo.request_from = len(history)
        return memo.request_at

    async def _pre_compact(self, trigger: CompactTrigger, instructions: str | None) -> PreCompactResult:
        """The ``pre_compact`` hooks before a compaction, the one place they are asked: what they said (one shape,
        ``PreCompactResult``), their instructions joined after ``instructions`` (no hooks: just those)."""
        if self.pre_compact is None:
            return PreCompactResult(instructions=instructions)
        said = pre_compact_result(await self.pre_compact(trigger, instructions))
        return replace(said, instructions=_joined(instructions, said.instructions))

    def _prepared(self, run: _Pass) -> PreparedContext:
        # No copy when nothing changed: the State's own tuple is what the model gets (a turn costs what is new).
        history, notices = run.history, run.notices
        messages = history if not notices and isinstance(history, tuple) else tuple([*history, *notices])
        self._memo.output = messages
        return PreparedContext(messages, run.yielded, self._system, self._user_context,  # type: ignore[arg-type]
                               bool(self.options and self.options.prompt_caching), run.terminal, run.tracking,
                               run.record)

    def _history(self, messages: tuple[Any, ...]) -> tuple[Any, int]:
        """The messages after the last compact boundary, and the index of the first one not seen last turn.

        Fast path: the State begins with last turn's ``messages_for_query``
        (the loop built it from them; checked by identity at a few places),
        so only the new messages are read. Otherwise (the first turn, a State
        built elsewhere) everything is read again.
        """
        memo = self._memo
        size = len(memo.output)
        if size and len(messages) >= size and _continues(messages, memo.output) \
                and not any(is_compact_boundary(m) for m in messages[size:]):
            memo.total, memo.last_role = self.counter.extend(memo.total, memo.last_role, messages[size:])
            return messages, size
        history = messages_after_compact_boundary(messages)
        self._reset_memo()
        memo.total, memo.last_role = self.counter.extend(0, self._after_role, history)
        return tuple(history), 0

    def _request_tokens(self, messages: list[Any]) -> int:
        """A request's estimated input tokens with ``messages`` (system, tools and user context included)."""
        return self._fixed + self.counter.count(messages, after_role=self._after_role)

    def _reset_memo(self, keep: list[Any] | None = None) -> None:
        """Forget everything remembered (in place); with ``keep``, start again from those messages."""
        memo = self._memo
        memo.output, memo.total, memo.last_role, memo.staged = (), 0, None, []
        memo.snip_from = memo.micro_from = memo.collapse_from = 0
        memo.snip_spared, memo.request_from, memo.request_at = None, 0, None
        if keep is not None:
            self.counter.forget(m.uuid for m in keep)
            memo.total, memo.last_role = self.counter.extend(0, self._after_role, keep)

    def _replace_in_place(self, before: list[Any], result: StageResult) -> None:
        """Keep the running total right after a stage rewrote messages in place (same roles, same places),
        and make collapse look again from the first rewritten message (a cleared or trimmed result may
        now be low-information)."""
        memo = self._memo
        after = result.messages
        first = result.first_changed or 0
        for index in range(first, len(before)):
            if before[index] is not after[index]:
                memo.total += self.counter.of(after[index]).tokens - self.counter.of(before[index]).tokens
        if first < memo.collapse_from or memo.staged:
            self._rewind_collapse(after, first)

    def _rewind_collapse(self, history: list[Any], start: int) -> None:
        """Stage folds again from ``start``: drop the folds that reach it (or touch it, so a run can grow)."""
        memo = self._memo
        position = {m.uuid: i for i, m in enumerate(history)}
        kept: list[Fold] = []
        for fold in memo.staged:
            at = position.get(fold.uuids[0])
            intact = at is not None and all(position.get(u) == at + k for k, u in enumerate(fold.uuids))
            if intact and at + len(fold.uuids) < start:
                kept.append(fold)
            elif at is not None:
                start = min(start, at)
        memo.staged = [fold for fold in kept if position[fold.uuids[0]] + len(fold.uuids) < start]
        memo.collapse_from = min(memo.collapse_from, start)

    def _commit_oldest(self, history: list[Any], excess: int) -> StageResult:
        """Commit staged folds, oldest first, until about ``excess`` tokens are saved."""
        memo = self._memo
        by_uuid = {m.uuid: m for m in history}
        chosen, saved = [], 0
        for fold in memo.staged:
            if saved >= excess:
                break
            chosen.append(fold)
            saved += fold_savings(fold, by_uuid, self.counter)
        result = commit_folds(history, chosen, uuid=self.uuid)
        memo.staged = [f for f in memo.staged if f not in chosen]
        if not result.changed:
            return result
        removed = sum(len(f.uuids) - 1 for f in chosen)
        memo.collapse_from = max(memo.collapse_from - removed, 0)
        first = result.first_changed or 0
        memo.snip_from = min(memo.snip_from, first)
        memo.micro_from = min(memo.micro_from, first)
        memo.request_from, memo.request_at = 0, None  # messages moved: look for the latest request again
        memo.total, memo.last_role = self.counter.extend(0, self._after_role, result.messages)
        return result

    def _budget_directory(self, budget: Any) -> Path:
        if budget.directory is not None:
            return Path(budget.directory).resolve()
        if self._root is None:
            raise ValueError("the tool_result_budget stage needs a directory: set "
                             "ToolResultBudget(directory=...) or QueryParams(workspace=...)")
        return self._root / ".dreamloop" / "tool-results"

    async def _api_tokens(self, history: list[Any]) -> int:
        fields = self._prepared_fields(history)
        if self.tools:
            fields["tools"] = tool_schemas(self.tools)
        return await self.model.count_tokens(**fields)

    def _prepared_fields(self, history: list[Any]) -> dict[str, Any]:
        return PreparedContext(history, system=self._system, user_context=self._user_context).request_fields()

    def _compact_failed(self, why: str, failures: int, limit: int, tokens: int) -> SystemMessage:
        stopping = failures >= limit
        content = f"Autocompact failed ({failures}/{limit}): {why}."
        if stopping:
            content += " Autocompact is off for the rest of this run."
        return SystemMessage(uuid=self.uuid(), subtype="autocompact_failed", level="warning", content=content,
                             metadata={"stage": "autocompact", "tokens_before": tokens, "tokens_after": tokens,
                                       "consecutive_failures": failures, "stopped": stopping})


@dataclass(frozen=True)
class _Stage:
    """One row of the stage table: the ``ContextOptions`` switch that turns it on (``name``), what it does to a
    ``_Pass`` (``run``), and whether it decides on the server's count when ``count_tokens="api"`` (``heavy``)."""

    name: str
    run: Callable[[ContextPipeline, _Pass], Awaitable[None]]
    heavy: bool = False


_STAGES = (
    _Stage("tool_result_budget", ContextPipeline._tool_result_budget),
    _Stage("snip", ContextPipeline._snip),
    _Stage("microcompact", ContextPipeline._microcompact),
    _Stage("context_collapse", ContextPipeline._context_collapse),
    _Stage("system_prompt", ContextPipeline._system_prompt),
    _Stage("autocompact", ContextPipeline._autocompact, heavy=True),
    _Stage("blocking_limit", ContextPipeline._blocking_limit, heavy=True),
)
"""Phase 2's seven stages, light to heavy (``options.STAGES``' order), run by ``ContextPipeline._run_stages``."""
assert tuple(stage.name for stage in _STAGES) == STAGES


def _last_boundary(messages: Any) -> str | None:
    """The uuid of the last compact boundary of ``messages`` (None when there is none)."""
    for message in reversed(messages):
        if is_compact_boundary(message):
            return getattr(message, "uuid", None)
    return None


def _continues(messages: tuple[Any, ...], output: tuple[Any, ...]) -> bool:
    """Whether ``messages`` starts with ``output`` (the same objects), checked at five places, not all.

    Messages are immutable and their uuids unique; the loop builds each State
    as ``(*messages_for_query, ...)``. A list rewritten elsewhere (a recovery
    path) goes through ``drain_collapses`` / ``reactive_compact``, which reset
    what the pipeline remembers.
    """
    last = len(output) - 1
    return all(messages[i] is output[i] for i in {0, last // 4, last // 2, 3 * last // 4, last})


def _lists(replaced: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    return {new: list(old) for new, old in replaced.items()}


async def prepare_context(state: State, pipeline: ContextPipeline) -> PreparedContext:
    """Phase 2 of ``queryLoop()``: ``messages_for_query`` from ``state.messages``, light to heavy.

    The stages, each only if switched on in ``ContextOptions``: (1) the
    tool-result budget, (2) snip, (3) microcompact, (4) context collapse,
    (5) system-prompt assembly, (6) autocompact, (7) the blocking limit. It
    starts from the messages after the last compact boundary; the next State
    is built from what it returns, so a reduction carries forward; the
    transcript keeps everything. With the pipeline off it returns the history
    from the last compact boundary on (a reactive compaction, recovery's, or
    one in an earlier run of the session), unchanged.
    """
    return await pipeline.prepare(state)

