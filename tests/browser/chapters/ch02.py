"""Chapter 02 in the page: the Mermaid figure draws each of the four calls pointing at its own result.

Mermaid draws into an ``<img>`` holding an SVG; the check reads that SVG: four edges, each from
``tool_use id=toolu_N`` to the result labelled ``tool_use_id=toolu_N``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from lab import Chapter, fail, shoot, wait_until

SCREENSHOTS = ("pairing-figure.png",)


def check(ch: Chapter) -> None:
    page, report, budget = ch.page, ch.report, ch.budget
    with report.check("the pairing figure: four calls, four arrows"):
        def drawn() -> str:
            return page.evaluate("""() => { const m = document.querySelector('.jp-RenderedMermaid');
                const img = m && m.querySelector('img'), svg = m && m.querySelector('svg');
                return img ? (img.getAttribute('src') || '') : svg ? svg.outerHTML : ''; }""")

        markup = unquote(wait_until(lambda: drawn() or None, 15, budget) or "")
        if "<svg" not in markup:
            fail("the pairing figure: four calls, four arrows", "no Mermaid figure was drawn")
        edges = len(re.findall(r'class="[^"]*flowchart-link', markup))
        calls = [n for n in range(1, 5) if f"tool_use id=toolu_{n}" in markup and f"tool_use_id=toolu_{n}" in markup]
        if edges != 4 or calls != [1, 2, 3, 4]:
            fail("the pairing figure: four calls, four arrows",
                 f"{edges} arrow(s); calls with their own labelled result: {calls} (expected 4 and [1, 2, 3, 4])")
        figure = page.locator(".jp-RenderedMermaid").first
        shoot(page, figure.element_handle(timeout=budget.ms(3)), ch.out / "pairing-figure.png", budget)
        report.note("4 arrows, toolu_1..toolu_4 each to its own tool_result")
