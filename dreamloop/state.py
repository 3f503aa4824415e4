"""State, Continue and Terminal: the loop's memory between iterations and how it ends.

Mirrors queryLoop()'s ``State`` (rebuilt at every ``continue``), the
``transition`` reasons of the seven continue paths, and the ``Terminal``
reasons it returns. Plain data; this module runs nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation, field_validator

from .messages import LoopMessage

__all__ = ["AutoCompactTracking", "Continue", "ContinueReason", "State", "Terminal", "TerminalReason",
           "TokenBudgetTracking"]

ContinueReason = Literal[
    "next_turn",
    "max_output_tokens_escalate",
    "max_output_tokens_recovery",
    "reactive_compact_retry",
    "collapse_drain_retry",
    "stop_hook_blocking",
    "token_budget_continuation",
    "streaming_fallback_resume",
    "malformed_tool_use_retry",
]
"""Why the loop went round again (``transition.reason`` in queryLoop()).

* ``next_turn``: tools ran; their results go back to the model.
* ``max_output_tokens_escalate``: the first ``max_tokens`` cut; retry with a higher output limit.
* ``max_output_tokens_recovery``: inject "resume where you stopped" (at most 3 times).
* ``reactive_compact_retry``: prompt too long; compact the history and retry once.
* ``collapse_drain_retry``: prompt too long; drain staged context collapses first (loses less).
* ``stop_hook_blocking``: a stop hook's error goes back to the model as feedback.
* ``token_budget_continuation``: a nudge about the remaining token budget.
* ``streaming_fallback_resume``: a stream broke after a finished text; it stays, the cut call is
  dropped, a note asks the model to go on (dreamloop's name for what Claude Code 2.1.332 did).
* ``malformed_tool_use_retry``: ``stop_reason`` said ``tool_use`` but no tool_use block came; asked
  again with a note (dreamloop's name for what Claude Code 2.1.332 did, twice at most).
"""

TerminalReason = Literal[
    "completed",
    "aborted_streaming",
    "aborted_tools",
    "max_turns",
    "model_error",
    "prompt_too_long",
    "blocking_limit",
    "image_error",
    "stop_hook_prevented",
    "hook_stopped",
    "api_error",
    "malformed_tool_use_exhausted",
]
"""Why the loop ended (``Terminal.reason`` in queryLoop()).

* ``completed``: the model asked for no tools; the loop ended (not: the task is done).
* ``aborted_streaming`` / ``aborted_tools``: the abort signal fired while the model
  streamed / while tools ran.
* ``max_turns``: the next turn would exceed ``max_turns`` (``Terminal.turn_count`` is that next turn).
* ``model_error``: a model call that failed without an API error response (a dropped or
  malformed stream, no connection) and no branch recovered (the four-step-loop text's name for
  every unrecovered model error).
* ``api_error``: an API error response ended the run (overloads with no fallback left, an error
  event, a 5xx after the retries, ``max_tokens`` cuts that outlasted recovery): the ending Claude Code
  2.1.332 reported in ``http_529`` and ``max_tokens_always``, beside ``model_error``.
* ``prompt_too_long``: the API said the prompt is too long and recovery failed.
* ``blocking_limit``: the context is over the hard limit before the request (no call made).
* ``image_error``: an image or media error from the API.
* ``stop_hook_prevented``: a stop hook prevented continuation, or the runaway guard fired.
* ``hook_stopped``: a hook stopped the loop while tools ran (``continue: false``), or a Python
  hook raised (``Terminal.error`` says so; the ``HookError`` then leaves the loop, the history closed).
* ``malformed_tool_use_exhausted``: ``stop_reason`` kept saying ``tool_use`` without a tool_use
  block (the ending Claude Code 2.1.332 reported in ``tool_use_without_block``).
"""


class Continue(BaseModel):
    """A ``transition``: the reason the previous iteration ended in ``continue``.

    * ``attempt``: counts repeated passes of the same kind (the n-th ``max_output_tokens_recovery``,
      ``stop_hook_blocking`` or ``token_budget_continuation``);
    * ``max_tokens``: the raised output limit of ``max_output_tokens_escalate``;
    * ``committed``: how many staged collapses ``collapse_drain_retry`` committed;
    * ``output_tokens``: the run's output tokens when ``token_budget_continuation`` was decided;
    * ``detail``: free text for the UI (``"resuming 2/3"``), in the learner's language (``dreamloop.language``).
    """

    model_config = ConfigDict(frozen=True)
    reason: ContinueReason
    attempt: int | None = None
    max_tokens: int | None = None
    committed: int | None = None
    output_tokens: int | None = None
    detail: str | None = None


class Terminal(BaseModel):
    """How a run of the loop ended (queryLoop()'s ``return {reason}``).

    ``turn_count`` is the State's turn when it ended, except for ``max_turns``: there it is the turn the loop
    refused to start (``max_turns + 1``: the four-step-loop text computes ``nextTurnCount`` before the check;
    the ``max_turns_reached`` attachment carries the same number: dreamloop's choice, which the text leaves open). ``error`` carries the
    error text for ``model_error`` / ``api_error`` / ``prompt_too_long`` (never put in history).
    """

    model_config = ConfigDict(frozen=True)
    reason: TerminalReason
    turn_count: int = 1
    error: str | None = None


class AutoCompactTracking(BaseModel):
    """Compaction's bookkeeping, carried in ``State.auto_compact_tracking`` (the conversation-loop
    text's 自动压缩追踪状态).

    * ``compacted``: a compaction happened in this run.
    * ``turn_id``: the uuid of the latest ``compact_boundary`` (None before the first).
    * ``turn_counter``: iterations since that compaction.
    * ``consecutive_failures``: compactions in a row that failed or left the
      context over the threshold; at ``Autocompact.max_failures`` autocompact
      stops trying for the rest of the run (a circuit breaker: dreamloop's design; neither text
      describes one).
    """

    model_config = ConfigDict(frozen=True)
    compacted: bool = False
    turn_id: str | None = None
    turn_counter: int = 0
    consecutive_failures: int = 0


class TokenBudgetTracking(BaseModel):
    """The token budget's bookkeeping, carried in ``State.token_budget_tracking`` (dreamloop's design).

    * ``continuations``: ``token_budget_continuation`` passes so far in this run;
    * ``tokens``: the run's output tokens when the last one was decided;
    * ``last_delta``: the output tokens that continuation's predecessor added (for diminishing returns).
    """

    model_config = ConfigDict(frozen=True)
    continuations: int = 0
    tokens: int = 0
    last_delta: int = 0


class State(BaseModel):
    """What carries from one iteration of the loop to the next (queryLoop()'s ``State``).

    A new ``State`` is built at every ``continue``; the loop never mutates one.

    * ``messages``: the history (``messages``), loop messages in order (a tuple). They are not
      validated again: the loop builds each State from messages it already holds, and checking
      thousands of them on every turn would make a turn cost the whole history.
    * ``turn_count`` (``turnCount``): starts at 1; +1 when a batch of tool results is handed on.
    * ``transition`` (``transition``): why the previous iteration continued; ``None`` on the first.
    The conversation-loop text names the fields in Chinese only; the Python names are dreamloop's.

    * ``max_output_tokens_recovery_count`` (输出 token 恢复计数器): resumes so far (≤ 3).
    * ``max_output_tokens_override`` (输出 token 覆盖限制): the escalated output limit, if any.
    * ``has_attempted_reactive_compact`` (是否已尝试响应式压缩): one reactive compaction per turn.
    * ``auto_compact_tracking`` (自动压缩追踪状态): compaction bookkeeping, if the stage is on.
    * ``pending_tool_use_summary`` (待处理的工具摘要): the previous batch's summary being made
      (a ``summaries.PendingSummary``: the conversation-loop text's State holds the pending tool
      summary, made asynchronously), yielded next iteration; not serialized.
    * ``stop_hook_active`` (stop hook 是否激活): set when a stop hook blocked; stays set (next_turn
      carries it) while the model answers that feedback; the stop hooks' input says it.
    * ``stop_hook_blocks``: how many times the stop hooks blocked in this run, for the runaway
      guard (``Hooks.max_stop_hook_blocks``); dreamloop's own, the conversation-loop text's State has no
      such field.
    * ``token_budget_tracking``: the token budget's bookkeeping (``TokenBudgetTracking``), if a
      budget is set; carried across every pass, never reset within a run (dreamloop's design: the
      conversation-loop text's State has no field for the budget).
    * ``malformed_tool_use_retries``: ``malformed_tool_use_retry`` passes so far this turn
      (dreamloop's own field; reset at ``next_turn``).
    * ``tool_use_context`` (``toolUseContext``): tools, abort signal, permissions; not serialized.

    Which fields each ``continue`` changes: ``dreamloop.recovery.state_changes``. The per-turn
    counters (the resume count, the override, ``has_attempted_reactive_compact``) reset only
    at ``next_turn``.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    messages: Annotated[tuple[LoopMessage, ...], SkipValidation] = ()
    turn_count: int = 1
    transition: Continue | None = None
    max_output_tokens_recovery_count: int = 0
    max_output_tokens_override: int | None = None
    has_attempted_reactive_compact: bool = False
    auto_compact_tracking: AutoCompactTracking | None = None
    pending_tool_use_summary: Any = Field(default=None, exclude=True, repr=False)
    stop_hook_active: bool = False
    stop_hook_blocks: int = 0
    token_budget_tracking: TokenBudgetTracking | None = None
    malformed_tool_use_retries: int = 0
    tool_use_context: Any = Field(default=None, exclude=True, repr=False)

    @field_validator("messages", mode="before")
    @classmethod
    def _a_tuple(cls, value: Any) -> Any:
        return value if isinstance(value, tuple) else tuple(value)
