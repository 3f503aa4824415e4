"""The recovery decisions as tables: what happened + State (+ options) -> the next Continue, or None.

``dreamloop.recovery`` holds them as pure functions; the loop only applies the answer
(tests/test_recovery_loop.py runs each branch through the real loop).
"""

from __future__ import annotations

import anthropic
import pytest
from pydantic import ValidationError

import dreamloop as dl

from dreamloop.errors import IncompleteStreamError
from dreamloop.recovery import (
    Failure,
    failure_of,
    retry_delay,
    decide_attempt,
    MaxTokensCut,
    PromptTooLong,
    RecoveryOptions,
    TokenBudget,
    budget_message,
    budget_summary,
    decide_fallback,
    decide_recovery,
    decide_token_budget,
    state_changes,
)
from dreamloop.state import Continue, State, TokenBudgetTracking
from dreamloop.presets import observed_recovery

ON = RecoveryOptions()
DRAINED = Continue(reason="collapse_drain_retry", committed=2)


def expect(reason, **fields):
    return (reason, fields)


def shape(transition):
    if transition is None:
        return None
    fields = {k: v for k, v in transition.model_dump(exclude={"reason", "detail"}).items() if v is not None}
    return (transition.reason, fields)


RECOVERY = [
    # nothing withheld, or the switch off
    ("nothing happened", None, State(), ON, None),
    ("recovery off", MaxTokensCut(4096, 64_000), State(), None, None),
    ("recovery off, too long", PromptTooLong(3), State(), None, None),
    # a max_tokens cut: escalate once a turn, then resume at most max_resumes times
    ("first cut escalates", MaxTokensCut(4096, 64_000), State(), ON,
     expect("max_output_tokens_escalate", max_tokens=64_000)),
    ("capped by the model", MaxTokensCut(4096, 32_000), State(), ON,
     expect("max_output_tokens_escalate", max_tokens=32_000)),
    ("no cap known", MaxTokensCut(4096, None), State(), RecoveryOptions(escalated_max_tokens=8_000),
     expect("max_output_tokens_escalate", max_tokens=8_000)),
    ("already at the cap: nothing to escalate", MaxTokensCut(64_000, 64_000), State(), ON,
     expect("max_output_tokens_recovery", attempt=1)),
    ("escalated once: resume", MaxTokensCut(64_000, 64_000), State(max_output_tokens_override=64_000), ON,
     expect("max_output_tokens_recovery", attempt=1)),
    ("third resume", MaxTokensCut(64_000, 64_000),
     State(max_output_tokens_override=64_000, max_output_tokens_recovery_count=2), ON,
     expect("max_output_tokens_recovery", attempt=3)),
    ("resumes exhausted", MaxTokensCut(64_000, 64_000),
     State(max_output_tokens_override=64_000, max_output_tokens_recovery_count=3), ON, None),
    ("escalate off: resume at once", MaxTokensCut(4096, 64_000), State(),
     RecoveryOptions(max_output_tokens_escalate=False), expect("max_output_tokens_recovery", attempt=1)),
    ("resume off: escalate only", MaxTokensCut(4096, 64_000), State(),
     RecoveryOptions(max_output_tokens_recovery=False), expect("max_output_tokens_escalate", max_tokens=64_000)),
    ("resume off, escalated: give up", MaxTokensCut(64_000, 64_000), State(max_output_tokens_override=64_000),
     RecoveryOptions(max_output_tokens_recovery=False), None),
    ("max_resumes=1", MaxTokensCut(64_000, 64_000),
     State(max_output_tokens_override=64_000, max_output_tokens_recovery_count=1), RecoveryOptions(max_resumes=1),
     None),
    ("both off", MaxTokensCut(4096, 64_000), State(),
     RecoveryOptions(max_output_tokens_escalate=False, max_output_tokens_recovery=False), None),
    # prompt too long: drain (loses least), then one reactive compaction, then give up
    ("staged folds: drain", PromptTooLong(2), State(), ON, expect("collapse_drain_retry", committed=2)),
    ("nothing staged: compact", PromptTooLong(0), State(), ON, expect("reactive_compact_retry")),
    ("drained last pass: compact", PromptTooLong(2), State(transition=DRAINED), ON, expect("reactive_compact_retry")),
    ("compacted this turn: give up", PromptTooLong(2), State(has_attempted_reactive_compact=True), ON, None),
    ("compacted, nothing staged: give up", PromptTooLong(0), State(has_attempted_reactive_compact=True), ON, None),
    ("drain off", PromptTooLong(2), State(), RecoveryOptions(collapse_drain_retry=False),
     expect("reactive_compact_retry")),
    ("compaction off", PromptTooLong(2), State(), RecoveryOptions(reactive_compact_retry=False),
     expect("collapse_drain_retry", committed=2)),
    ("compaction off, drained: give up", PromptTooLong(2), State(transition=DRAINED),
     RecoveryOptions(reactive_compact_retry=False), None),
    ("a cut does not count against too-long", PromptTooLong(0), State(max_output_tokens_recovery_count=3), ON,
     expect("reactive_compact_retry")),
]


@pytest.mark.parametrize("withheld, state, options, expected", [c[1:] for c in RECOVERY], ids=[c[0] for c in RECOVERY])
def test_decide_recovery(withheld, state, options, expected):
    assert shape(decide_recovery(withheld, state, options)) == expected


def test_recovery_transitions_say_what_they_do():
    assert decide_recovery(MaxTokensCut(4096, 64_000), State(), ON).detail == "escalating max_tokens to 64,000"
    resumed = decide_recovery(MaxTokensCut(64_000), State(max_output_tokens_override=64_000,
                                                           max_output_tokens_recovery_count=1), ON)
    assert resumed.detail == "resuming 2/3"
    assert decide_recovery(PromptTooLong(1), State(), ON).detail == "draining 1 staged collapse"


BUDGET = TokenBudget(total=1_000)
TRACKED = State(token_budget_tracking=TokenBudgetTracking(continuations=3, tokens=90, last_delta=5))

TOKEN_BUDGET = [
    ("no budget", 100, State(), None, None),
    ("under budget: go on", 100, State(), BUDGET, expect("token_budget_continuation", attempt=1, output_tokens=100)),
    ("just under 90%", 899, State(), BUDGET, expect("token_budget_continuation", attempt=1, output_tokens=899)),
    ("at 90%: stop", 900, State(), BUDGET, None),
    ("over the budget: stop", 1_500, State(), BUDGET, None),
    ("diminishing: 3 continuations, +10 after +5", 100, TRACKED, BUDGET, None),
    ("a big step is not diminishing", 700, TRACKED, TokenBudget(total=10_000),
     expect("token_budget_continuation", attempt=4, output_tokens=700)),
    ("the step before was big", 100, State(token_budget_tracking=TokenBudgetTracking(continuations=3, tokens=90, last_delta=600)), BUDGET,
     expect("token_budget_continuation", attempt=4, output_tokens=100)),
    ("fewer than 3 continuations", 100, State(token_budget_tracking=TokenBudgetTracking(continuations=2, tokens=90, last_delta=5)), BUDGET,
     expect("token_budget_continuation", attempt=3, output_tokens=100)),
    ("min_continuations=0", 100, State(), TokenBudget(total=1_000, min_continuations=0), None),
    ("completion_threshold=1.0", 950, State(), TokenBudget(total=1_000, completion_threshold=1.0),
     expect("token_budget_continuation", attempt=1, output_tokens=950)),
]


@pytest.mark.parametrize("tokens, state, budget, expected", [c[1:] for c in TOKEN_BUDGET],
                         ids=[c[0] for c in TOKEN_BUDGET])
def test_decide_token_budget(tokens, state, budget, expected):
    assert shape(decide_token_budget(tokens, state, budget)) == expected


def test_budget_words_for_the_model_and_the_person():
    assert budget_message(250, BUDGET) == ("Token budget: 250 of 1,000 output tokens used (25%), 750 left. "
                                           "Keep working on the task; do not stop to summarise.")
    assert budget_summary(100, State(), BUDGET) is None  # it never continued: nothing to say
    assert budget_summary(100, TRACKED, BUDGET).endswith("diminishing returns.")
    reached = State(token_budget_tracking=TokenBudgetTracking(continuations=1, tokens=800, last_delta=800))
    assert budget_summary(950, reached, BUDGET).endswith("(95%): the budget is reached.")


FALLBACK = [
    ("not an overload", 0, True, False, 3, None),
    ("first overload: again", 1, True, False, 3, "retry"),
    ("second: again", 2, True, False, 3, "retry"),
    ("third: the fallback model", 3, True, False, 3, "fallback"),
    ("the fallback model overloaded too: again", 1, True, True, 3, "retry"),
    ("the fallback model, third time: give up", 3, True, True, 3, None),
    ("no fallback model: asked again, as the SDK would", 1, False, False, 3, "retry"),
    ("no fallback model, third time: give up", 3, False, False, 3, None),
    ("limit 1", 1, True, False, 1, "fallback"),
]


@pytest.mark.parametrize("overloads, has_fallback, switched, limit, expected", [c[1:] for c in FALLBACK],
                         ids=[c[0] for c in FALLBACK])
def test_decide_fallback(overloads, has_fallback, switched, limit, expected):
    assert decide_fallback(overloads, has_fallback=has_fallback, switched=switched, limit=limit) == expected


MID_TURN = State(turn_count=4, max_output_tokens_override=64_000, max_output_tokens_recovery_count=2,
                 has_attempted_reactive_compact=True, stop_hook_active=True, stop_hook_blocks=1,
                 token_budget_tracking=TokenBudgetTracking(continuations=1, tokens=300, last_delta=300))
CLEARED = {"stop_hook_active": False}  # the source text clears it on every path but next_turn and a stop-hook block

CHANGES = [
    (Continue(reason="next_turn"), {"turn_count": 5, "max_output_tokens_recovery_count": 0,
                                    "has_attempted_reactive_compact": False, "max_output_tokens_override": None,
                                    "malformed_tool_use_retries": 0}),
    (Continue(reason="malformed_tool_use_retry", attempt=2), {**CLEARED, "malformed_tool_use_retries": 2}),
    (Continue(reason="streaming_fallback_resume"), CLEARED),
    (Continue(reason="max_output_tokens_escalate", max_tokens=64_000),
     {**CLEARED, "max_output_tokens_override": 64_000}),
    (Continue(reason="max_output_tokens_recovery", attempt=3), {**CLEARED, "max_output_tokens_recovery_count": 3}),
    (Continue(reason="reactive_compact_retry"), {**CLEARED, "has_attempted_reactive_compact": True}),
    (Continue(reason="collapse_drain_retry", committed=2), CLEARED),
    (Continue(reason="stop_hook_blocking", attempt=2), {"stop_hook_active": True, "stop_hook_blocks": 2}),
    (Continue(reason="token_budget_continuation", attempt=2, output_tokens=700),
     {**CLEARED, "token_budget_tracking": TokenBudgetTracking(continuations=2, tokens=700, last_delta=400)}),
]


@pytest.mark.parametrize("transition, changes", CHANGES, ids=[t.reason for t, _ in CHANGES])
def test_state_changes(transition, changes):
    """Only next_turn adds a turn and resets the per-turn counters; every other path keeps them.
    stop_hook_active: set by a stop-hook block, carried by next_turn, cleared by every other path."""
    assert state_changes(MID_TURN, transition) == changes


def test_options_are_checked():
    with pytest.raises(ValueError):
        RecoveryOptions(max_resumes=-1)
    with pytest.raises(ValueError):
        RecoveryOptions(escalate=True)  # a typo never silently drops a setting
    with pytest.raises(ValueError):
        TokenBudget(total=0)


@pytest.mark.parametrize("fallback, says", [
    ("", "fallback_model: the name is blank"),
    ("   ", "fallback_model: the name is blank"),
    ("claude-scripted-1", "'claude-scripted-1' is the main model; a fallback must be another model"),
    (" claude-scripted-1 ", "'claude-scripted-1' is the main model"),
])
def test_a_fallback_model_must_be_another_model(fallback, says):
    """A blank name or the main model itself is refused when the params are built, naming the real fault."""
    with pytest.raises(ValidationError, match=says):
        dl.QueryParams(messages="go", model=dl.offline([]), fallback_model=fallback)
    model = dl.offline([])
    with pytest.raises(ValidationError, match="is the main model"):
        dl.QueryParams(messages="go", model=model, fallback_model=model)


@pytest.mark.parametrize("budget", [1.5, "5000", True])
def test_a_token_budget_is_a_whole_number(budget):
    with pytest.raises(ValidationError, match="a whole number of output tokens"):
        dl.QueryParams(messages="go", model=dl.offline([]), token_budget=budget)
    assert dl.QueryParams(messages="go", model=dl.offline([]), token_budget=5000).token_budget.total == 5000


ATTEMPTS = [  # (case, failure, overloads, failures, has_fallback, switched, options, expected)
    ("529, no fallback: again", Failure("http", overloaded=True), 1, 1, False, False, None, "retry"),
    ("529 three times, no fallback: give up", Failure("http", overloaded=True), 3, 3, False, False, None, None),
    ("529 three times: the fallback model", Failure("http", overloaded=True), 3, 3, True, False, None, "fallback"),
    ("404 with a fallback model: at once", Failure("http", not_found=True), 0, 1, True, False, None, "fallback"),
    ("404 without: the error stands", Failure("http", not_found=True), 0, 1, False, False, None, None),
    ("429 (the SDK retried): the error stands", Failure("http"), 0, 1, True, False, None, None),
    ("error event, nothing finished: non-streaming", Failure("error_event", overloaded=True), 1, 1, False, False,
     RecoveryOptions(), "non_streaming"),
    ("error event after a text: resume", Failure("error_event", overloaded=True, finished_text=True), 1, 1,
     False, False, RecoveryOptions(), "resume"),
    ("error event after a tool_use: keep", Failure("error_event", overloaded=True, finished_text=True,
                                                   finished_tool_use=True), 1, 1, False, False,
     RecoveryOptions(), "keep"),
    ("dropped connection: resend", Failure("dropped", finished_tool_use=True), 0, 1, False, False,
     RecoveryOptions(), "resend"),
    ("streaming fallback off: an error event ends the run", Failure("error_event", overloaded=True), 1, 1,
     False, False, RecoveryOptions(streaming_fallback=False), None),
    ("streaming fallback off, fallback model: asked again", Failure("error_event", overloaded=True), 1, 1,
     True, False, RecoveryOptions(streaming_fallback=False), "retry"),
    ("mid-stream overloads reach the fallback model", Failure("error_event", overloaded=True, finished_text=True),
     3, 3, True, False, RecoveryOptions(), "fallback"),
    ("the bound: three broken streams in a row", Failure("dropped"), 0, 3, False, False, RecoveryOptions(), None),
    ("the bound holds for the fallback model too", Failure("dropped"), 0, 3, True, True, RecoveryOptions(), None),
    ("an incomplete stream is not asked again", Failure("other"), 0, 1, True, False, RecoveryOptions(), None),
    # issue 32: an attempt whose call had started is never withdrawn; where a step would withdraw it, keep
    ("dropped after a call started: keep", Failure("dropped", finished_tool_use=True, calls_started=True), 0, 1,
     False, False, RecoveryOptions(), "keep"),
    ("error event after a call started, streaming fallback off, fallback model: keep",
     Failure("error_event", overloaded=True, finished_tool_use=True, calls_started=True), 1, 1, True, False,
     RecoveryOptions(streaming_fallback=False), "keep"),
    ("overloads due for the fallback model, a call started: keep",
     Failure("error_event", overloaded=True, finished_tool_use=True, calls_started=True), 3, 3, True, False,
     RecoveryOptions(), "keep"),
    ("a call started and recovery off: the error still ends the run (the call is answered)",
     Failure("error_event", overloaded=True, finished_tool_use=True, calls_started=True), 1, 1, False, False,
     None, None),
    ("the bound with a call started: the run ends, the call answered",
     Failure("dropped", finished_tool_use=True, calls_started=True), 0, 3, False, False, RecoveryOptions(), None),
]


FAILURES = [  # (case, error, finished block types, calls started, expected)
    ("a dropped stream", IncompleteStreamError("cut", dropped=True), ["text"], False,
     Failure("dropped", finished_text=True)),
    ("an incomplete stream", IncompleteStreamError("no message_delta"), [], False, Failure("other")),
    ("something else", RuntimeError("x"), ["tool_use"], True, Failure("other")),
]


@pytest.mark.parametrize("error, finished, started, expected", [c[1:] for c in FAILURES], ids=[c[0] for c in FAILURES])
def test_failure_of(error, finished, started, expected):
    assert failure_of(error, finished, started) == expected


def test_failure_of_an_overloaded_error_event_after_a_started_call():
    import httpx

    response = httpx.Response(200, request=httpx.Request("POST", "http://x/v1/messages"))
    error = anthropic.APIStatusError("Overloaded", response=response, body={"type": "overloaded_error"})
    error.type = "overloaded_error"
    assert failure_of(error, ["text", "tool_use"], True) == Failure(
        "error_event", overloaded=True, finished_text=True, finished_tool_use=True, calls_started=True)


@pytest.mark.parametrize("headers, overloads, expected", [
    ({"retry-after-ms": "250"}, 1, 0.25), ({"retry-after": "2"}, 1, 2.0), ({"retry-after": "soon"}, 1, 0.5),
    ({"retry-after": "600"}, 3, 2.0), ({}, 1, 0.5), ({}, 2, 1.0), ({}, 9, 8.0)])
def test_retry_delay(headers, overloads, expected):
    class Error(Exception):
        response = type("Response", (), {"headers": headers})()

    assert retry_delay(Error(), overloads) == expected


@pytest.mark.parametrize("failure, overloads, failures, has_fallback, switched, options, expected",
                         [c[1:] for c in ATTEMPTS], ids=[c[0] for c in ATTEMPTS])
def test_decide_attempt(failure, overloads, failures, has_fallback, switched, options, expected):
    assert decide_attempt(failure, overloads=overloads, failures=failures, has_fallback=has_fallback,
                          switched=switched, options=options, retries=2) == expected


def test_observed_options_are_claude_codes_and_the_default_is_the_texts():
    text, seen = RecoveryOptions(), observed_recovery()
    assert text.max_output_tokens_escalate and text.max_tokens_exhausted == "completed"
    assert text.malformed_tool_use_retries == 0 and text.streaming_fallback
    assert not seen.max_output_tokens_escalate and seen.max_tokens_exhausted == "api_error"
    assert seen.malformed_tool_use_retries == 2 and seen.streaming_fallback
    assert observed_recovery(max_output_tokens_escalate=True).max_output_tokens_escalate
