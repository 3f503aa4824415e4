"""Chapter 04 in the page: the Allow/Deny prompt and the timeline, with labels a reader can read.

A timeline row label that does not fit is cut at a word (never inside one) and carries the whole text as
its tooltip (``<title>``).
"""

from __future__ import annotations

from lab import Chapter, fail, shoot

SCREENSHOTS = ("timeline.png",)


def check(ch: Chapter) -> None:
    page, report, budget = ch.page, ch.report, ch.budget
    with report.check("the Allow/Deny prompt answered"):
        page.wait_for_selector(".dreamloop-ask", timeout=budget.ms(10))
        text = page.evaluate("() => window.__dl.norm(document.querySelector('.dreamloop-ask').textContent)")
        if "Allow Edit" not in text or "auto-answered: allow" not in text:
            fail("the Allow/Deny prompt answered", f"the prompt shows {text[:200]!r}")
        report.note(text[:60])

    with report.check("timeline labels cut at a word, whole on hover"):
        page.wait_for_selector(".dreamloop-timeline svg", timeout=budget.ms(10))
        labels = page.evaluate("""() => [...document.querySelectorAll('.dreamloop-timeline svg text')]
            .filter((t) => t.getAttribute('font-size') === '11')
            .map((t) => { const title = t.querySelector('title');
                          return { full: title ? title.textContent : null,
                                   shown: [...t.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('') }; })""")
        if not labels:
            fail("timeline labels cut at a word, whole on hover", "the timeline has no row labels")
        for label in labels:
            shown, full = label["shown"], label["full"]
            if full is None:
                continue
            kept = shown[:-1]
            if not shown.endswith("…") or not full.startswith(kept) or full[len(kept):len(kept) + 1] not in (" ", ","):
                fail("timeline labels cut at a word, whole on hover", f"label {shown!r} of {full!r} is cut inside a word")
        cut = sum(label["full"] is not None for label in labels)
        shoot(page, page.locator(".dreamloop-timeline").first.element_handle(timeout=budget.ms(3)),
              ch.out / "timeline.png", budget)
        report.note(f"{len(labels)} labels, {cut} cut at a word with a tooltip")
