"""Chapter 10 in the page: the live cell skips (no opt-in, no key), the replay of the recorded cassette shows
identical events, and the exercise's check cell shows one verdict. The real Claude Code sessions in the
inspector are chapter 10b's (``ch10b.py``).
"""

from __future__ import annotations

from lab import Chapter, check_verdicts, fail, wait_until


def check(ch: Chapter) -> None:
    page, budget, report = ch.page, ch.budget, ch.report

    with report.check("the live cell skips, the replay matches"):
        def text_of_outputs() -> str:
            return page.evaluate("() => window.__dl.norm([...document.querySelectorAll('.jp-OutputArea-output')]"
                                 ".map((e) => e.textContent).join(' '))")

        said = wait_until(lambda: (lambda t: t if "Live cell skipped" in t else None)(text_of_outputs()), 5, budget)
        if not said:
            fail("the live cell skips, the replay matches", "no 'Live cell skipped' line in the page's outputs")
        if "identical events: True" not in said:
            fail("the live cell skips, the replay matches", "the replay cell does not show 'identical events: True'")
        report.note("skip note shown; replay identical")

    check_verdicts(ch)
