"""Chapter 06's exercise checks: each passes on the solution (kept in step with
notebooks/solutions/06_context_pipeline.ipynb), fails with a hint on plausible wrong answers, never raises."""

from __future__ import annotations

import pytest

import dreamloop as dl
import dreamloop.exercises as ex

# ---------------------------------------------------------------------------
# Solutions


def safe_cut(messages, keep_recent):
    cut, seen = len(messages), 0
    while cut > 0 and seen < keep_recent:
        cut -= 1
        seen += messages[cut].type in ("user", "assistant")
    while 0 < cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut -= 1  # a result: keep the call that asked for it
        while cut > 0 and messages[cut].type != "assistant":
            cut -= 1
    return cut


def first_stage(tokens, options):
    limits = options.thresholds(options.context_window)
    for name in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit"):
        limit = getattr(limits, name)
        if limit is not None and tokens > limit:
            return name
    return None


def clearable(messages, keep_recent):
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    kept_from = answers[-max(keep_recent, 2)] if len(answers) >= max(keep_recent, 2) else 0
    return [block["tool_use_id"] for m in messages[:kept_from] if m.type == "user" and m.source_tool_use_ids
            for block in m.message["content"] if block["content"] != dl.context.CLEARED]


# ---------------------------------------------------------------------------
# Wrong answers


def raises(*args):
    raise NotImplementedError("write your answer here")


def naive_cut(messages, keep_recent):
    return max(len(messages) - keep_recent, 0)


def cut_counting_notices(messages, keep_recent):
    cut = max(len(messages) - keep_recent, 0)
    while 0 < cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut -= 1
    return cut


def cut_moved_forward(messages, keep_recent):
    cut, seen = len(messages), 0
    while cut > 0 and seen < keep_recent:
        cut -= 1
        seen += messages[cut].type in ("user", "assistant")
    while cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut += 1  # past the result: the pair is summarised instead of kept
    return cut


def heaviest_stage(tokens, options):
    over = [s for s in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit")
            if getattr(options.thresholds(options.context_window), s) is not None
            and tokens > getattr(options.thresholds(options.context_window), s)]
    return over[-1] if over else None


def stage_at_or_over(tokens, options):
    limits = options.thresholds(options.context_window)
    for name in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit"):
        limit = getattr(limits, name)
        if limit is not None and tokens >= limit:
            return name
    return None


def stage_from_fractions(tokens, options):
    for name, fraction in (("snip", 0.5), ("microcompact", 0.6), ("context_collapse", 0.7), ("autocompact", 0.835),
                           ("blocking_limit", 0.885)):
        if tokens > options.context_window * fraction:
            return name
    return None


def clear_all_but_last(messages, keep_recent):
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    last = answers[-1] if answers else len(messages)
    return [b["tool_use_id"] for m in messages[:last] if m.type == "user" and m.source_tool_use_ids
            for b in m.message["content"] if b["content"] != dl.context.CLEARED]


def clear_counting_results(messages, keep_recent):
    ids = [b["tool_use_id"] for m in messages if m.type == "user" and m.source_tool_use_ids
           for b in m.message["content"] if b["content"] != dl.context.CLEARED]
    keep = max(keep_recent, 2)
    return ids[:-keep] if keep else ids


def clear_again(messages, keep_recent):
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    kept_from = answers[-max(keep_recent, 2)] if len(answers) >= max(keep_recent, 2) else 0
    return [b["tool_use_id"] for m in messages[:kept_from] if m.type == "user" and m.source_tool_use_ids
            for b in m.message["content"]]


CASES = [
    (ex.check_safe_cut, safe_cut, [(naive_cut, "unexpected tool_use_id"), (cut_counting_notices, "the cut is"),
                                   (cut_moved_forward, "the pipeline cuts at 3"), (lambda m, k: 0, "the cut is 0"),
                                   (raises, "NotImplementedError")]),
    (ex.check_first_stage, first_stage, [(heaviest_stage, "first stage to act is 'snip'"),
                                         (stage_at_or_over, "*over* its threshold"),
                                         (stage_from_fractions, "the pipeline's first stage to act"),
                                         (raises, "NotImplementedError")]),
    (ex.check_clearable, clearable, [(clear_all_but_last, "must stay"), (clear_counting_results, "microcompact clears"),
                                     (clear_again, "already cleared"), (raises, "NotImplementedError")]),
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
    assert phrase in out, out


@pytest.mark.parametrize("check", [c for c, _, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_never_raises_on_nonsense(check, capsys):
    assert check(None) is False
    assert check(object()) is False
    assert check(lambda *a: "nonsense") is False
    assert capsys.readouterr().out.count("❌ ") == 3
