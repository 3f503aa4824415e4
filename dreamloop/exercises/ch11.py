"""Chapter 11: the real loop, two loops on one script: the exercise checks.

Both checks read what was recorded for the pinned version (``compare.sides.CLAUDE_CODE_VERSION``), so they
work without Claude Code installed: ``conformance/claude-code-<version>.json`` (the expectations
``make conformance`` checks) and ``conformance/claude-code-<version>.requests.json`` (each request of
the chapter's scenarios as shapes, ``dreamloop.compare.anatomy``). A check
never prints a recorded answer: it says which scenario or request is wrong and
in which direction.
"""

from __future__ import annotations

from typing import Any

from ..language import N_, tr
from ._checking import _call, _Fail, _require_callable, _run, _short, _verdict

__all__ = ["PREDICT", "REMINDER_SCENARIOS", "check_predict", "check_reminders_added", "recorded_outcome",
           "request_views"]

PREDICT = ("max_tokens_always", "disconnect_inside_tool_use", "http_529", "http_529_fallback")
"""The scenarios ``check_predict`` asks about, in order: each a failure the chapter showed a cousin of."""

REMINDER_SCENARIOS = ("stream_error_inside_tool_use", "one_tool", "max_tokens_once", "hook_post_tool_use_context",
                      "tool_use_without_block")
"""The recorded runs ``check_reminders_added`` hands the learner's function (the ``claude_code`` side, then the ``dreamloop`` side)."""

_WHY = {
    "max_tokens_always": N_("a cut that never heals: how many times does Claude Code resume before it gives up, "
                            "and what does its result line call that ending?"),
    "disconnect_inside_tool_use": N_("a dropped connection is not an error event in the stream: compare how "
                                     "Claude Code handled the HTTP 500 and the error event, and count what the "
                                     "script plays after the failure."),
    "http_529": N_("every attempt answers 529; dreamloop compare bounds Claude Code's retries "
                   "(CLAUDE_CODE_MAX_RETRIES=2) and there is no fallback model. How does its result line name a "
                   "request that failed for good?"),
    "http_529_fallback": N_("the main model's attempts are bounded as in http_529; what changes with a "
                            "fallback model is what follows them."),
}


def _expectations() -> dict[str, Any]:
    from ..compare.anatomy import conformance_file
    from ..compare.conformance import load_expectations
    from ..compare.sides import expectations_name

    return load_expectations(conformance_file(expectations_name()))


def recorded_outcome(name: str, side: str = "claude_code") -> tuple[int, str]:
    """``(requests, ending)`` of ``side`` (``"claude_code"`` or ``"dreamloop"``) on scenario ``name``, as
    the expectations file records it (its outcome lines: ``probe: N skipped`` when the side probed, as
    Claude Code 2.1.332 did in ``opus_probe``, one per request, each opening with its HTTP status, then
    ``texts:`` and ``workspace:`` lines, then ``ending: REASON``)."""
    lines = _expectations()["scenarios"][name][side]
    requests = [line for line in lines if line[:1].isdigit()]  # a skipped probe is no request
    return len(requests), lines[-1].split(": ", 1)[1]


def _missing_data() -> _Fail:
    return _Fail(tr("the recorded expectations were not found (conformance/ beside the package)."),
                 tr("run the chapter from a checkout of the repository (git clone), where conformance/ is."))


# ---------------------------------------------------------------------------
# Exercise 1: predict Claude Code


def check_predict(fn: Any) -> bool:
    """Check ``fn(name) -> (requests, ending)``: Claude Code 2.1.332's request count and ``terminal_reason``
    on each scenario of ``PREDICT`` (``max_tokens_always`` and three more), against the recorded expectations
    (never printed)."""
    hint = tr("count every request that reached the model (retries of the same request too, the probe not), "
              "and name the ending as Claude Code's result line does (terminal_reason).")
    todo = tr("return a pair (requests, ending) for the scenario named, e.g. (2, 'completed')")

    def body() -> str:
        _require_callable(fn, "predict")
        try:
            wanted = {name: recorded_outcome(name) for name in PREDICT}
            ours = {name: recorded_outcome(name, "dreamloop") for name in PREDICT}
        except (OSError, KeyError, ValueError):
            raise _missing_data() from None
        for name, (requests, ending) in wanted.items():
            got = _run(lambda: _call(f"predict({name!r})", fn, name, hint=hint, todo=todo))
            if not isinstance(got, (tuple, list)) or len(got) != 2 or isinstance(got[0], bool) \
                    or not isinstance(got[0], int) or not isinstance(got[1], str):
                raise _Fail(tr("predict({name!r}) returned {got}; expected a pair (requests, ending): an int and "
                               "a str.", name=name, got=_short(repr(got), 80)), hint)
            said_requests, said_ending = got
            if (said_requests, said_ending) == ours[name] and ours[name] != (requests, ending):
                raise _Fail(tr("for {name!r} you predicted what dreamloop does; Claude Code 2.1.332 did otherwise.",
                               name=name), tr(_WHY[name]))
            if said_requests != requests:
                direction = tr("too many") if said_requests > requests else tr("too few")
                raise _Fail(tr("for {name!r}, a count of {count} requests is {direction}.", name=name,
                               count=said_requests, direction=direction), tr(_WHY[name]))
            if said_ending != ending:
                raise _Fail(tr("for {name!r} the request count is right, but Claude Code's run did not end "
                               "{ending!r}.", name=name, ending=said_ending), tr(_WHY[name]))
        return tr("{count} scenarios predicted as Claude Code 2.1.332 ran them.", count=len(wanted))

    return _verdict(tr("predict Claude Code"), body)


# ---------------------------------------------------------------------------
# Exercise 2: what each request adds


def request_views(name: str, side: str = "claude_code") -> list[list[dict[str, Any]]]:
    """The recorded requests of ``side`` on scenario ``name`` as the learner's function gets them: each
    request a list of messages ``{"role", "blocks"}``, each block ``{"kind", "length"}`` (plus ``cache``,
    and ``inside``: reminders inside a tool_result). Which messages are new is left out: that is the task."""
    from ..compare.anatomy import load_anatomies

    requests = load_anatomies()["scenarios"][name][side]["requests"]
    keep = ("kind", "length", "cache", "inside")
    return [[{"role": m["role"], "blocks": [{k: b[k] for k in keep if k in b} for b in m["blocks"]]}
             for m in r["messages"]] for r in requests]


def _answer(name: str, side: str) -> list[int]:
    from ..compare.anatomy import load_anatomies

    requests = load_anatomies()["scenarios"][name][side]["requests"]
    return [sum(b["kind"] == "reminder" for m in r["messages"][r["added"]:] for b in m["blocks"]) for r in requests]


def check_reminders_added(fn: Any) -> bool:
    """Check ``fn(requests) -> list[int]``: for each request, the reminder blocks it added to the
    conversation (in messages the previous request did not have; all of the first request's), on the
    recorded runs of ``REMINDER_SCENARIOS``, both sides."""
    hint = tr("a request resends the whole conversation: what it adds is what comes after the longest run of "
              "messages it shares with the previous request, compared without cache_control (the marker moves). "
              "A reminder is a block of kind 'reminder'; one inside a tool_result is part of that result, not a block.")
    todo = tr("return one number per request: the reminder blocks in the messages that request added")

    def body() -> str:
        _require_callable(fn, "reminders_added")
        cases = []
        try:
            for name in REMINDER_SCENARIOS:
                for side in ("claude_code", "dreamloop"):
                    cases.append((name, side, request_views(name, side), _answer(name, side)))
        except (OSError, KeyError, ValueError):
            raise _missing_data() from None
        for name, side, requests, want in cases:
            who = "Claude Code" if side == "claude_code" else "dreamloop"
            got = _run(lambda: _call("reminders_added(requests)", fn, requests, hint=hint, todo=todo))
            if not isinstance(got, (list, tuple)) or not all(isinstance(n, int) and not isinstance(n, bool)
                                                             for n in got):
                raise _Fail(tr("for {who} on {name!r} it returned {got}; expected a list of whole numbers.",
                               who=who, name=name, got=_short(repr(got), 80)), hint)
            if len(got) != len(want):
                raise _Fail(tr("for {who} on {name!r} you gave {count} numbers; that run sent {requests} "
                               "requests.", who=who, name=name, count=len(got), requests=len(want)),
                            tr("one number per request, the first request included: it adds everything it sends."))
            for number, (a, b) in enumerate(zip(got, want), start=1):
                if a != b:
                    raise _Fail(tr("for {who} on {name!r}, request {number}: {count} is {direction}.", who=who,
                                   name=name, number=number, count=a,
                                   direction=tr("too many") if a > b else tr("too few")),
                                _reminder_hint(requests, list(got), number, want))
        return tr("{count} recorded runs: the reminders each request added, found by what it shares with the "
                  "one before.", count=len(cases))

    return _verdict(tr("reminders added"), body)


def _counts(requests: list[list[dict[str, Any]]], same: Any) -> list[int]:
    """Reminders added per request, with ``same(a, b)`` deciding whether two messages are the same."""
    counts, previous = [], []
    for messages in requests:
        shared = 0
        while shared < min(len(previous), len(messages)) and same(previous[shared], messages[shared]):
            shared += 1
        counts.append(sum(b["kind"] == "reminder" for m in messages[shared:] for b in m["blocks"]))
        previous = messages
    return counts


def _reminder_hint(requests: list[list[dict[str, Any]]], answer: list[int], number: int, want: list[int]) -> str:
    got = answer[number - 1]
    totals = [sum(b["kind"] == "reminder" for m in request for b in m["blocks"]) for request in requests]
    inside = sum(b.get("inside", 0) for m in requests[number - 1] for b in m["blocks"])
    if answer == totals:
        return tr("you counted every reminder the request carries; most of them were sent before. Count only "
                  "the messages this request added.")
    if answer == _counts(requests, lambda a, b: a == b):
        return tr("the cache_control marker moves to the newest message every request: an old message with the "
                  "marker taken off is still the same message. Compare messages without it.")
    if got > want[number - 1] and inside:
        return tr("a reminder inside a tool_result's content is part of that result (Claude Code 2.1.332 put one in "
                  "the last result of each results message, one_tool): count blocks of kind 'reminder' only.")
    if number == 1:
        return tr("the first request adds everything it sends, the context reminders in the first user message "
                  "too.")
    return tr("a request need not keep the previous one's messages: a message that changed is new, even at a "
              "place the previous request had filled (look at how many messages each request sends, and whether "
              "they are the same).")
