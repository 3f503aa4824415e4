"""The exercise checks in Chinese: under ``language("zh")`` every verdict is the same, and every line is Chinese.

Each check of tests/test_exercises.py (its solution, every wrong answer, the untouched stub, nonsense) is run
again under ``language("zh")`` (``make test`` runs the solution, the first wrong answer and the stub of each;
the rest are marked ``zh_sweep``, for ``make test-zh``): the same ✅ or ❌, a problem, a hint and a summary that are Chinese, no hint
that gives the answer's code away, and no text shown in English for want of its entry. English stays the
default: after the switch back, the same checks print no Chinese.
"""

from __future__ import annotations

import re

import pytest
from test_exercises import CASES, GIVEAWAYS, STUBS

import dreamloop.exercises as ex
from dreamloop import language as L

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chinese():
    L.language("zh")
    try:
        yield
    finally:
        L.language("en")


def parts(out: str) -> tuple[str, str, str]:
    """(mark, what follows the title, hint) of one printed verdict; the hint is "" for a ✅."""
    assert out.count("✅") + out.count("❌") == 1, out
    mark, rest = out[0], out[2:]
    first, _, hint = rest.partition("\n   提示：")
    title, sep, said = first.partition("：")
    assert sep and title and said.strip(), out
    return mark, said, hint.strip()


SAMPLE = [(check, solution, True) for check, solution, _ in CASES] + \
         [(check, wrongs[0][0], False) for check, _, wrongs in CASES] + \
         [(check, stub, False) for check, stub in STUBS.items()]
"""Per check: its solution, its first wrong answer and the untouched stub (``make test``)."""

SWEEP = [(check, wrong, False) for check, _, wrongs in CASES for wrong, _ in wrongs[1:]] + \
        [(check, None, False) for check, _, _ in CASES]
"""Every other wrong answer, and nonsense: marked ``zh_sweep`` (``make test-zh``; CI runs it)."""

ANSWERS = SAMPLE + [pytest.param(*answer, marks=pytest.mark.zh_sweep) for answer in SWEEP]


@pytest.mark.parametrize("check, answer, passes", ANSWERS,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(SAMPLE + SWEEP)])
def test_a_check_speaks_chinese_under_the_setting(check, answer, passes, chinese, capsys):
    before = set(L.missing())
    verdict = check(answer)
    assert bool(verdict) is passes
    mark, said, hint = parts(capsys.readouterr().out)
    assert mark == ("✅" if passes else "❌")
    assert CJK.search(said), said
    if not passes:
        assert CJK.search(hint), hint
        for code in GIVEAWAYS[check]:
            assert code not in hint, (code, hint)
    assert set(L.missing()) == before, f"shown in English for want of an entry: {set(L.missing()) - before}"


@pytest.mark.parametrize("check, solution, wrong", [(c, s, w[0][0]) for c, s, w in CASES],
                         ids=[c.__name__ for c, _, _ in CASES])
def test_english_stays_the_default(check, solution, wrong, capsys):
    assert L.language() == "en"
    assert check(solution) and not check(wrong)
    out = capsys.readouterr().out
    assert "Hint: " in out and not CJK.search(out), out


def test_the_switch_is_one_call_on_the_exercises(capsys):
    assert ex.language is L.language and "language" in ex.__all__
    try:
        ex.language("zh")
        ex.check_setup()
    finally:
        ex.language("en")
    assert capsys.readouterr().out.startswith("✅ 环境检查：")
