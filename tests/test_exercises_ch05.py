"""Chapter 05's exercise checks: each passes on the solution (the one in notebooks/solutions/05_*.ipynb),
fails with a hint on the wrong answers a learner plausibly gives, and never raises."""

from __future__ import annotations

import pytest

import dreamloop.exercises as ex
from dreamloop.tools import INTERRUPTED, NOT_STARTED

# ---------------------------------------------------------------------------
# Solutions (kept in step with notebooks/solutions/05_streaming_tools.ipynb)

PREDICTION = {
    "A": [["a", "b", "c"]],
    "B": [["a"], ["b"]],
    "C": [["a"], ["b"], ["c"]],
    "D": [["a"], ["b", "c"]],
}


def ready(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] != "queued":
            continue
        if not running or (call["safe"] and all(running)):
            starting.append(call["name"])
            running.append(call["safe"])
        elif not call["safe"]:
            break
    return starting


def close(tool_uses, results, started):
    def unanswered(use):
        text = INTERRUPTED if use.id in started else NOT_STARTED
        return {"type": "tool_result", "tool_use_id": use.id, "content": text, "is_error": True}

    return {"role": "user", "content": [results.get(use.id) or unanswered(use) for use in tool_uses]}


# ---------------------------------------------------------------------------
# Wrong answers a learner plausibly gives


def raises(*args):
    raise NotImplementedError("write your answer here")


UNTOUCHED = {"A": None, "B": None, "C": None, "D": None}
BY_BATCHES = {**PREDICTION, "B": [["a", "b"]]}  # partition_tool_calls' batches, ignoring when calls arrive
EDIT_BLOCKS_NOTHING_AFTER = {**PREDICTION, "C": [["a"], ["b", "c"]]}
EDIT_RUNS_BESIDE_READS = {**PREDICTION, "D": [["a", "b", "c"]]}


def ready_without_holding_back(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] == "queued" and (not running or (call["safe"] and all(running))):
            starting.append(call["name"])
            running.append(call["safe"])
    return starting


def ready_not_counting_new_starts(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] != "queued":
            continue
        if not running or (call["safe"] and all(running)):
            starting.append(call["name"])
        elif not call["safe"]:
            break
    return starting


def ready_unsafe_beside_safe(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] != "queued":
            continue
        if not running or all(running):
            starting.append(call["name"])
            running.append(call["safe"])
        elif not call["safe"]:
            break
    return starting


def close_all_interrupted(tool_uses, results, started):
    return {"role": "user", "content": [results.get(u.id) or {"type": "tool_result", "tool_use_id": u.id,
                                                              "content": INTERRUPTED, "is_error": True}
                                        for u in tool_uses]}


def close_swapped(tool_uses, results, started):
    return {"role": "user", "content": [results.get(u.id) or {"type": "tool_result", "tool_use_id": u.id,
                                                              "content": NOT_STARTED if u.id in started else INTERRUPTED,
                                                              "is_error": True}
                                        for u in tool_uses]}


def close_in_completion_order(tool_uses, results, started):
    blocks = list(results.values())
    blocks += [{"type": "tool_result", "tool_use_id": u.id, "content": INTERRUPTED if u.id in started else NOT_STARTED,
                "is_error": True} for u in tool_uses if u.id not in results]
    return {"role": "user", "content": blocks}


CASES = [
    (ex.check_run_together, PREDICTION, [(UNTOUCHED, "no prediction yet"),
                                         (BY_BATCHES, "scenario B"),
                                         (EDIT_BLOCKS_NOTHING_AFTER, "scenario C"),
                                         (EDIT_RUNS_BESIDE_READS, "scenario D"),
                                         ({**PREDICTION, "A": [["a", "b"]]}, "each in exactly one group"),
                                         ([["a"]], "expected a dict of scenarios")]),
    (ex.check_ordering_rule, ready, [(ready_without_holding_back, "the rule starts"),
                                     (ready_not_counting_new_starts, "the rule starts"),
                                     (ready_unsafe_beside_safe, "the rule starts"),
                                     (raises, "NotImplementedError")]),
    (ex.check_interrupt_results, close, [(close_all_interrupted, "never started"),
                                         (close_swapped, "had started"),
                                         (close_in_completion_order, "the calls were"),
                                         (raises, "NotImplementedError")]),
]


@pytest.mark.parametrize("check, solution", [(c, s) for c, s, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_passes_on_the_solution(check, solution, capsys):
    assert check(solution) is True
    out = capsys.readouterr().out
    assert out.startswith("✅ ") and "❌" not in out


WRONG = [(c, w, phrase) for c, _, wrongs in CASES for w, phrase in wrongs]


@pytest.mark.parametrize("check, wrong, phrase", WRONG, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(WRONG)])
def test_check_fails_with_a_hint(check, wrong, phrase, capsys):
    assert check(wrong) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ ") and "\n   Hint: " in out
    assert phrase in out


@pytest.mark.parametrize("check", [c for c, _, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_never_raises_on_nonsense(check, capsys):
    assert check(None) is False
    assert check(object()) is False
    assert capsys.readouterr().out.count("❌ ") == 2


def test_the_untouched_cell_says_what_to_do_not_the_answer(capsys):
    assert ex.check_run_together(UNTOUCHED) is False
    out = capsys.readouterr().out
    assert "no prediction yet" in out and "[['a'], ['b']]" not in out and '[["a"], ["b"]]' not in out
