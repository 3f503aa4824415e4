"""Chapter 01 in the page: the two-request Read figure and the State inspector of the production run.

The markdown (the figure among it) is checked for every chapter by ``lab.check_markdown``; here, the
inspector at the end of section 5 shows the run's two checkpoints.
"""

from __future__ import annotations

from lab import Chapter, fail, says_checkpoint, shoot

SCREENSHOTS = ("read-figure.png",)


def check(ch: Chapter) -> None:
    page, report, budget = ch.page, ch.report, ch.budget
    with report.check("the Read figure and the State inspector"):
        figure = page.locator(".jp-RenderedMarkdown img[src*='read-sequence']").first
        size = figure.evaluate("(img) => [img.naturalWidth, img.naturalHeight]", timeout=budget.ms(5))
        if not size[0]:
            fail("the Read figure and the State inspector", "images/read-sequence.svg did not load")
        shoot(page, figure.element_handle(timeout=budget.ms(3)), ch.out / "read-figure.png", budget)
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        header = page.evaluate("() => window.__dl.inspectorParts(window.__dl.inspectors()[0]).header")
        if not says_checkpoint(header, 0) or "numbered 0 to 1)" not in header:
            fail("the Read figure and the State inspector", f"the inspector's header is {header[:160]!r}; "
                 "expected checkpoint 0 (numbered 0 to 1): two turns")
        report.note(f"figure {size[0]}x{size[1]} px; inspector: {header[:40]!r}")
