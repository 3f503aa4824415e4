"""The recovery branches' decisions: what happened + State → the next ``Continue``, or None.

queryLoop() goes round again without a new turn when a response was cut at ``max_tokens``
(``max_output_tokens_escalate``, then ``max_output_tokens_recovery``), when the API said the
prompt is too long (``collapse_drain_retry``, then ``reactive_compact_retry``) and when a turn
ends under its token budget (``token_budget_continuation``). Inside one request it asks again:
after a stream that broke part-way (the streaming fallback, ``decide_attempt``) and after
overloads, then of a fallback model. Each decision here is a pure function (tested as a table in
``tests/test_recovery.py``); ``state_changes`` says what each continue changes in the State.
The loop (``query.py``) applies the answers. A ``Continue``'s ``detail`` is UI text, made in the
learner's language (``tr``). This module knows nothing about streaming, tools or how a compaction is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence, Union

import anthropic
from pydantic import BaseModel, ConfigDict, Field

from .errors import IncompleteStreamError
from .language import tr
from .output_limit import escalated_output_limit
from .state import Continue, State, TokenBudgetTracking

__all__ = [
    "RESUME_MESSAGE",
    "MALFORMED_TOOL_USE_MESSAGE",
    "STREAM_RESUME_MESSAGE",
    "AttemptStep",
    "Failure",
    "FallbackStep",
    "MaxTokensCut",
    "PromptTooLong",
    "RecoveryOptions",
    "TokenBudget",
    "Withheld",
    "budget_message",
    "budget_summary",
    "decide_attempt",
    "decide_fallback",
    "decide_recovery",
    "decide_token_budget",
    "failure_of",
    "is_overloaded",
    "is_prompt_too_long",
    "reminder",
    "retry_delay",
    "state_changes",
]

RESUME_MESSAGE = ("Your last response was cut off by the output token limit. Continue exactly where it stopped, "
                  "mid-sentence if that is where it was: no apology, no recap of what you already wrote. "
                  "If much is left, do it in smaller pieces.")
"""The note of ``max_output_tokens_recovery``, in dreamloop's words (the conversation-loop text's recovery
message likewise asks the model to go on from where it was cut); sent as a ``reminder`` block, as Claude Code
2.1.332 sent its own (``max_tokens_once``)."""

STREAM_RESUME_MESSAGE = ("Your last response broke off: the stream failed after the text above, and the tool call "
                         "you had started was dropped unfinished. Continue from where the text stopped, and make "
                         "that tool call again if you still need it.")
"""The note of ``streaming_fallback_resume`` (dreamloop's words): the finished text stays, the cut call is gone."""


MALFORMED_TOOL_USE_MESSAGE = ("Your last response said it stopped for a tool call (stop_reason tool_use), but it held "
                              "no tool_use block, so nothing ran and it was set aside. If you meant to call a tool, "
                              "send the call now; otherwise give your answer.")
"""The note of ``malformed_tool_use_retry`` (dreamloop's words)."""


def reminder(text: str) -> str:
    """``text`` as a ``<system-reminder>`` block, the form of the notes Claude Code 2.1.332's loop added for the
    model (a resume after a cut, ``max_tokens_once``; a stop hook's feedback, ``hook_stop_exit_2_once``): the
    tag is its format, every note's text here is dreamloop's own."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


class RecoveryOptions(BaseModel):
    """Which recovery branches are on (``QueryParams.recovery``; each its own flag, the switch itself off by
    default: ``recovery=None``), and their bounds. ``RecoveryOptions()`` is the loop of both texts (every
    branch they name on); ``presets.observed_recovery()`` is what Claude Code 2.1.332 did where the
    ``dreamloop compare`` scenarios show it (``max_tokens_once``; ``dreamloop run``'s default, part of
    ``observed_loop()``), the recording's labelled differences aside (the compaction after "prompt is too
    long" is dreamloop's own, ``prompt_too_long_after_tools``).

    * ``max_output_tokens_escalate``: the first ``max_tokens`` cut of a turn sends the same request
      once more with ``max_tokens`` raised to ``escalated_max_tokens`` (64,000, dreamloop's default, a
      figure first taken from Claude Code's source and not observed: the conversation-loop text gives no
      figure, and Claude Code 2.1.332 never escalated in ``max_tokens_once``), capped by the model's
      maximum output.
    * ``max_output_tokens_recovery``: after that, a meta user message asks the model to resume
      where it stopped, at most ``max_resumes`` times a turn (3, the conversation-loop text's bound).
    * ``collapse_drain_retry``: after ``prompt is too long``, commit every staged context
      collapse at once and retry (it loses least; needs ``ContextOptions.context_collapse``).
    * ``reactive_compact_retry``: then compact the conversation once a turn and retry.
    * ``overloads_before_fallback``: how many overloaded attempts in a row (each HTTP 529, which
      the SDK does not retry: the loop counts it; or an ``overloaded_error`` event in a 200 stream)
      before ``QueryParams.fallback_model`` takes over (3: Claude Code 2.1.332, given
      ``CLAUDE_CODE_MAX_RETRIES=2``, switched after three in ``http_529_fallback``); the
      fallback model gets as many, then the run ends ``api_error``. It also bounds the streaming
      fallback: at most this many broken attempts in a row per model.
    * ``streaming_fallback`` (the conversation-loop text's branch, whose tombstones withdraw what
      the failed attempt had yielded): a stream that breaks part-way (an error event, a dropped
      connection) is asked again, and what it showed and is not kept is tombstoned
      (``decide_attempt``); ``streaming_fallback_max_tokens``: the most the non-streaming request
      it may send asks for (64,000, the cap Claude Code 2.1.332 applied: 128,000 became 64,000 in
      ``output_limit_streaming_fallback``, 32,000 stayed 32,000 in ``stream_error_before_block``).
    * ``max_tokens_exhausted``: how a run ends when a response is still cut at ``max_tokens``
      after the recovery above ran out: ``completed`` (dreamloop's choice after the four-step-loop
      text, whose completion path follows the recoverable errors) or ``api_error`` (Claude Code
      2.1.332 on ``max_tokens_always``).
    * ``malformed_tool_use_retries``: a response whose ``stop_reason`` is ``tool_use`` without a
      tool_use block is asked again this many times with a note (``malformed_tool_use_retry``),
      then the run ends ``malformed_tool_use_exhausted`` (Claude Code 2.1.332: 2,
      ``tool_use_without_block``); 0: the run ends
      ``completed`` at once, with a warning (dreamloop's earlier choice, F4).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    max_output_tokens_escalate: bool = True
    escalated_max_tokens: int = Field(default=64_000, ge=1)
    max_output_tokens_recovery: bool = True
    max_resumes: int = Field(default=3, ge=0)
    collapse_drain_retry: bool = True
    reactive_compact_retry: bool = True
    overloads_before_fallback: int = Field(default=3, ge=1)
    streaming_fallback: bool = True
    streaming_fallback_max_tokens: int = Field(default=64_000, ge=1)
    max_tokens_exhausted: Literal["completed", "api_error"] = "completed"
    malformed_tool_use_retries: int = Field(default=0, ge=0)


class TokenBudget(BaseModel):
    """A run's output-token budget (``QueryParams.token_budget``; a plain int is ``TokenBudget(total=int)``).

    A turn that ends under ``completion_threshold`` × ``total`` output tokens (0.9, dreamloop's default, a
    figure first taken from Claude Code's source and not observed; the conversation-loop text gives none)
    goes on with a message
    saying how much is used (``token_budget_continuation``). The count is the run's output tokens, across
    turns and continuations; it never resets within a run. After ``min_continuations`` continuations, two in a
    row that each added fewer than ``diminishing_tokens`` (500; ``min_continuations`` 3: dreamloop's defaults,
    figures first taken from Claude Code's source, not observed) stop it: diminishing returns.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    total: int = Field(ge=1)
    completion_threshold: float = Field(default=0.9, gt=0, le=1)
    min_continuations: int = Field(default=3, ge=0)
    diminishing_tokens: int = Field(default=500, ge=0)


# ---------------------------------------------------------------------------
# What happened (the errors the source withholds while it recovers)


@dataclass(frozen=True)
class MaxTokensCut:
    """The response stopped at ``max_tokens`` and asked for no tool.

    ``max_tokens``: the output limit that request had; ``model_max_tokens``: the most the model
    may write (``ModelInfo.max_tokens``; None: not known, no cap).
    """

    max_tokens: int
    model_max_tokens: int | None = None


@dataclass(frozen=True)
class PromptTooLong:
    """The API answered 400 ``prompt is too long``; ``staged_folds``: folds a collapse drain would commit now."""

    staged_folds: int = 0


Withheld = Union[MaxTokensCut, PromptTooLong]
"""What the loop withholds from the caller while recovery may still help (dreamloop's name)."""


def is_prompt_too_long(error: BaseException) -> bool:
    """True for the API's 400 ``prompt is too long: N tokens > M maximum``."""
    said = getattr(error, "api_message", None) or str(error)
    return isinstance(error, anthropic.BadRequestError) and "prompt is too long" in said


def is_overloaded(error: BaseException) -> bool:
    """True for an overload: HTTP 529 (after the SDK's own retries) or an ``overloaded_error`` event in a 200 stream."""
    return isinstance(error, anthropic.APIStatusError) and (
        error.status_code == 529 or getattr(error, "type", None) == "overloaded_error")


# ---------------------------------------------------------------------------
# The decisions


def decide_recovery(withheld: Withheld | None, state: State, options: RecoveryOptions | None) -> Continue | None:
    """After the stream: does the same turn go round again? (queryLoop()'s checks of a withheld error.)

    A ``MaxTokensCut``: ``max_output_tokens_escalate`` once a turn (while no override is set and
    the raised limit is higher than the one the request had), else ``max_output_tokens_recovery``
    while fewer than ``max_resumes`` resumes were made this turn. A ``PromptTooLong``:
    ``collapse_drain_retry`` if there are staged folds, the previous pass was not a drain and no
    reactive compaction was tried this turn; else ``reactive_compact_retry`` once a turn. None:
    the branch is off, or exhausted (the loop then shows the withheld error and the run ends).

    Example::

        decide_recovery(MaxTokensCut(4096, 64_000), State(), RecoveryOptions())
        # Continue(reason='max_output_tokens_escalate', max_tokens=64000, ...)
    """
    if withheld is None or options is None:
        return None
    if isinstance(withheld, MaxTokensCut):
        return _max_tokens_cut(withheld, state, options)
    return _prompt_too_long(withheld, state, options)


def _max_tokens_cut(cut: MaxTokensCut, state: State, options: RecoveryOptions) -> Continue | None:
    limit = escalated_output_limit(options.escalated_max_tokens, cut.model_max_tokens)
    if options.max_output_tokens_escalate and state.max_output_tokens_override is None and limit > cut.max_tokens:
        return Continue(reason="max_output_tokens_escalate", max_tokens=limit,
                        detail=tr("escalating max_tokens to {limit:,}", limit=limit))
    if options.max_output_tokens_recovery and state.max_output_tokens_recovery_count < options.max_resumes:
        attempt = state.max_output_tokens_recovery_count + 1
        return Continue(reason="max_output_tokens_recovery", attempt=attempt,
                        detail=tr("resuming {attempt}/{limit}", attempt=attempt, limit=options.max_resumes))
    return None


def _prompt_too_long(too_long: PromptTooLong, state: State, options: RecoveryOptions) -> Continue | None:
    drained_last = state.transition is not None and state.transition.reason == "collapse_drain_retry"
    if (options.collapse_drain_retry and too_long.staged_folds and not drained_last
            and not state.has_attempted_reactive_compact):
        folds = too_long.staged_folds
        return Continue(reason="collapse_drain_retry", committed=folds,
                        detail=tr("draining {count} staged collapse", count=folds) if folds == 1 else
                        tr("draining {count} staged collapses", count=folds))
    if options.reactive_compact_retry and not state.has_attempted_reactive_compact:
        return Continue(reason="reactive_compact_retry", detail=tr("compacting the conversation, then retrying"))
    return None


def decide_token_budget(output_tokens: int, state: State, budget: TokenBudget | None) -> Continue | None:
    """At the end of a turn that asked for no tool: go on (``token_budget_continuation``) or stop (None).

    ``output_tokens``: the run's output tokens so far (every response's ``usage.output_tokens``).
    Goes on while under ``completion_threshold`` of the budget, unless returns diminish: at least
    ``min_continuations`` continuations made and both the last one and this one added fewer than
    ``diminishing_tokens``.
    """
    if budget is None:
        return None
    tracking = state.token_budget_tracking or TokenBudgetTracking()
    if _diminishing(output_tokens, tracking, budget) or output_tokens >= budget.total * budget.completion_threshold:
        return None
    attempt = tracking.continuations + 1
    return Continue(reason="token_budget_continuation", attempt=attempt, output_tokens=output_tokens,
                    detail=tr("{percent}% of the {total:,}-token budget used", percent=_percent(output_tokens, budget.total),
                              total=budget.total))


def _diminishing(output_tokens: int, tracking: TokenBudgetTracking, budget: TokenBudget) -> bool:
    added = output_tokens - tracking.tokens
    return (tracking.continuations >= budget.min_continuations and added < budget.diminishing_tokens
            and tracking.last_delta < budget.diminishing_tokens)


def _percent(used: int, total: int) -> int:
    return round(100 * used / total)


def budget_message(output_tokens: int, budget: TokenBudget) -> str:
    """The nudge of ``token_budget_continuation`` (a meta user message): how much of the budget is used."""
    left = max(budget.total - output_tokens, 0)
    return (f"Token budget: {output_tokens:,} of {budget.total:,} output tokens used "
            f"({_percent(output_tokens, budget.total)}%), {left:,} left. Keep working on the task; "
            "do not stop to summarise.")


def budget_summary(output_tokens: int, state: State, budget: TokenBudget) -> str | None:
    """Why a budgeted run stopped, for the person (None if it never continued): the budget, or diminishing returns."""
    tracking = state.token_budget_tracking
    if tracking is None or not tracking.continuations:
        return None
    why = "diminishing returns" if _diminishing(output_tokens, tracking, budget) else "the budget is reached"
    return (f"Token budget: stopped after {tracking.continuations} continuation"
            f"{'s' if tracking.continuations != 1 else ''} with {output_tokens:,} of {budget.total:,} output "
            f"tokens used ({_percent(output_tokens, budget.total)}%): {why}.")


FallbackStep = Literal["retry", "fallback"]
"""After an overloaded attempt: ask the same model again, or switch to the fallback model."""


def decide_fallback(overloads: int, *, has_fallback: bool, switched: bool, limit: int,
                    retries: int | None = None) -> FallbackStep | None:
    """After an overloaded attempt: ``"retry"``, ``"fallback"`` or None (the error ends the run).

    ``overloads``: overloaded attempts in a row so far, this one included (0: this attempt failed
    some other way, which no retry mends); ``has_fallback``: a fallback model is set;
    ``switched``: it is already in use; ``limit``: ``RecoveryOptions.overloads_before_fallback``;
    ``retries``: how often a model without a fallback is asked again (the client's ``max_retries``,
    as Claude Code 2.1.332 retried a 529 twice with ``CLAUDE_CODE_MAX_RETRIES=2`` in ``http_529``;
    None: ``limit - 1``). Each model with a
    fallback gets ``limit`` attempts in a row; then the fallback model, once.
    """
    if not overloads:
        return None
    if not has_fallback:
        return "retry" if overloads <= (limit - 1 if retries is None else retries) else None
    if overloads < limit:
        return "retry"
    return None if switched else "fallback"


@dataclass(frozen=True)
class Failure:
    """One attempt at a request that failed, as the loop saw it.

    ``kind``: ``"http"`` (an error response: no stream), ``"error_event"`` (an ``error`` event in a
    200 stream), ``"dropped"`` (the connection dropped mid-stream), ``"other"`` (anything else: an
    incomplete or malformed stream, a connection that never answered); ``overloaded``: HTTP 529 or an
    ``overloaded_error`` event; ``not_found``: HTTP 404 (a retired or unknown model);
    ``finished_text`` / ``finished_tool_use``: a text (or thinking) block / a tool_use block of the
    broken stream was complete; ``calls_started``: streaming tool execution had started a call of it
    (its effects may have happened).
    """

    kind: Literal["http", "error_event", "dropped", "other"]
    overloaded: bool = False
    not_found: bool = False
    finished_text: bool = False
    finished_tool_use: bool = False
    calls_started: bool = False


def failure_of(error: BaseException, finished: Sequence[str] = (), calls_started: bool = False) -> Failure:
    """The ``Failure`` an attempt's error is: ``finished``, the types of the broken stream's complete blocks;
    ``calls_started``, whether a call of them had started. Pure; ``decide_attempt`` reads it."""
    blocks = dict(finished_text=any(kind in ("text", "thinking", "redacted_thinking") for kind in finished),
                  finished_tool_use="tool_use" in finished, calls_started=calls_started)
    if isinstance(error, IncompleteStreamError) and error.dropped:
        return Failure("dropped", **blocks)
    if isinstance(error, anthropic.APIStatusError):
        overloaded = is_overloaded(error)
        if error.status_code == 200:  # an error event inside the stream
            return Failure("error_event", overloaded=overloaded, **blocks)
        return Failure("http", overloaded=overloaded, not_found=error.status_code == 404)
    return Failure("other")


def retry_delay(error: BaseException, overloads: int) -> float:
    """Seconds to wait before asking an overloaded API again: its ``retry-after-ms`` / ``retry-after`` header
    if it sent one (0 to 60 s), else a short back-off (0.5 s, doubling with ``overloads``, at most 8 s)."""
    headers = getattr(getattr(error, "response", None), "headers", None) or {}
    try:
        if headers.get("retry-after-ms") is not None:
            delay = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after") is not None:
            delay = float(headers["retry-after"])
        else:
            delay = -1.0
    except ValueError:
        delay = -1.0
    return delay if 0 <= delay <= 60 else min(0.5 * 2 ** max(overloads - 1, 0), 8.0)


AttemptStep = Literal["retry", "fallback", "non_streaming", "resend", "resume", "keep"]
"""What the loop does after a failed attempt (``decide_attempt``):

* ``retry``: the same request again (after an overload);
* ``fallback``: the same request to the fallback model, for the rest of the run;
* ``non_streaming``: the same request again without streaming, at a lower output limit;
* ``resend``: the same request again, streaming;
* ``resume``: keep the finished blocks, drop the cut call, a note asks the model to go on
  (``streaming_fallback_resume``);
* ``keep``: keep the finished blocks and go on as if the response had ended there (its calls run).

``retry``, ``fallback``, ``non_streaming`` and ``resend`` withdraw the attempt (``WITHDRAWING``).
"""

WITHDRAWING = frozenset({"retry", "fallback", "non_streaming", "resend"})
"""The steps that withdraw a failed attempt (tombstoned, its calls discarded) and ask the same request again."""


def decide_attempt(failure: Failure, *, overloads: int, failures: int, has_fallback: bool, switched: bool,
                   options: RecoveryOptions | None, retries: int | None = None) -> AttemptStep | None:
    """After a failed attempt at a request: what next, or None (the error ends the run).

    ``overloads``: overloaded attempts in a row (this one included), across the run's requests to
    this model; ``failures``: failed attempts of any kind in a row (this one included), likewise (both
    reset when a response arrives whole, and when the fallback model takes over);
    ``options``: the recovery options (None: recovery off, only the fallback model acts).

    The model fallback first: a 404, or ``overloads_before_fallback`` overloads in a row, hand over
    to the fallback model (once a run). An HTTP overload is asked again (``decide_fallback``). A
    broken stream, with ``streaming_fallback`` on, as Claude Code 2.1.332 did it: a dropped
    connection is sent again (``disconnect_during_text``); after an error event, a finished
    tool_use is kept and its call answered (``stream_error_after_tool_use``), a finished text is kept
    and resumed (``stream_error_inside_tool_use``), nothing finished is sent again without
    streaming (``stream_error_before_block``). An attempt a call of which had started
    (``calls_started``) is never withdrawn: a step that would withdraw it is ``keep`` instead, so the call
    runs once, to its end, and its result goes back to the model, as Claude Code 2.1.332 kept a Bash call
    whose connection dropped in the text after it (``disconnect_after_bash_ran``; a command that sleeps 5 s
    first too, ``disconnect_while_bash_runs``). Bounds:
    each model gets at most ``overloads_before_fallback`` failed attempts in a row (or, without a
    fallback model, the client's ``retries`` + 1 when that is more, as for HTTP 529), so a request
    costs at most twice that many attempts with a fallback model. Pure: the loop applies the answer.

    Example::

        decide_attempt(Failure("error_event", overloaded=True), overloads=1, failures=1,
                       has_fallback=False, switched=False, options=RecoveryOptions())
        # 'non_streaming'
    """
    step = _attempt_step(failure, overloads=overloads, failures=failures, has_fallback=has_fallback,
                         switched=switched, options=options, retries=retries)
    return "keep" if failure.calls_started and step in WITHDRAWING else step


def _attempt_step(failure: Failure, *, overloads: int, failures: int, has_fallback: bool, switched: bool,
                  options: RecoveryOptions | None, retries: int | None) -> AttemptStep | None:
    limit = (options or RecoveryOptions()).overloads_before_fallback
    if has_fallback and not switched and (failure.not_found or failure.overloaded and overloads >= limit):
        return "fallback"
    streaming_fallback = options is not None and options.streaming_fallback
    most = max(limit, retries + 1) if retries is not None and not has_fallback else limit
    if failures >= most and not (failure.kind == "http" and failures == overloads):
        return None  # the bound: too many failed attempts in a row (an unbroken run of 529s: decide_fallback's)
    if failure.kind == "http" or failure.overloaded and not streaming_fallback:
        if failure.kind != "http" and not has_fallback:  # an error event: the SDK never retried those
            return None
        return decide_fallback(overloads if failure.overloaded else 0, has_fallback=has_fallback,
                               switched=switched, limit=limit, retries=retries if failure.kind == "http" else None)
    if not streaming_fallback or failure.kind == "other" or failures >= limit:
        return None
    if failure.overloaded and overloads >= limit:  # this model had its overloads (and no fallback is left)
        return None
    if failure.kind == "dropped":
        return "resend"
    if failure.finished_tool_use:
        return "keep"
    return "resume" if failure.finished_text else "non_streaming"


# ---------------------------------------------------------------------------
# What each continue changes


_PER_TURN = {"max_output_tokens_recovery_count": 0, "has_attempted_reactive_compact": False,
             "max_output_tokens_override": None, "malformed_tool_use_retries": 0}


def state_changes(state: State, transition: Continue) -> dict[str, Any]:
    """The State fields a ``continue`` changes, besides ``messages`` and ``transition``.

    ``next_turn``: ``turn_count`` + 1 and the per-turn counters reset (``max_output_tokens_recovery_count``,
    ``has_attempted_reactive_compact``, ``max_output_tokens_override``): the only place they reset.
    Every other path keeps ``turn_count`` and changes only its own counter: the escalated
    ``max_output_tokens_override``, the resume count, ``has_attempted_reactive_compact``,
    ``stop_hook_active`` / ``stop_hook_blocks``, the token budget's tracking; a collapse drain
    changes nothing but the messages. ``stop_hook_active`` is set by ``stop_hook_blocking``, carried
    by ``next_turn`` and cleared by every other path (a recovery pass, a drain, a budget
    continuation): dreamloop's design, since the conversation-loop text lists whether a stop hook is
    active among the State's fields but not which paths set or clear it.
    """
    reason = transition.reason
    if reason == "next_turn":  # stop_hook_active carries over (the model may still be answering a stop hook)
        return {"turn_count": state.turn_count + 1, **_PER_TURN}
    if reason == "stop_hook_blocking":
        return {"stop_hook_active": True, "stop_hook_blocks": transition.attempt}
    # every other path clears it, dreamloop's design (said only when it was set)
    cleared = {"stop_hook_active": False} if state.stop_hook_active else {}
    if reason == "max_output_tokens_escalate":
        return {**cleared, "max_output_tokens_override": transition.max_tokens}
    if reason == "max_output_tokens_recovery":
        return {**cleared, "max_output_tokens_recovery_count": transition.attempt}
    if reason == "reactive_compact_retry":
        return {**cleared, "has_attempted_reactive_compact": True}
    if reason == "malformed_tool_use_retry":
        return {**cleared, "malformed_tool_use_retries": transition.attempt}
    if reason == "token_budget_continuation":
        before = state.token_budget_tracking or TokenBudgetTracking()
        used = transition.output_tokens or 0
        return {**cleared, "token_budget_tracking": TokenBudgetTracking(
            continuations=transition.attempt or 0, tokens=used, last_delta=used - before.tokens)}
    return cleared
