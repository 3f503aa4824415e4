"""Chapter 03b in the page: the State inspector over phase 5's run labels each attachment with where it came
from, and the exercises' check cells.

What the inspector must show is asked of the kernel (``ch.execute``: each StateInspector's ``origins()`` at the
checkpoint it shows), not hard-coded; every origin the kernel names must be in the page's attachments pane.
Saves ``attachment-origins.png``.
"""

from __future__ import annotations

import json
from typing import Any

from lab import Chapter, check_verdicts, fail, shoot

SCREENSHOTS = ("attachment-origins.png",)

KERNEL_ORIGINS = r'''
def _dreamloop_ch03b_probe():
    import json
    from dreamloop.widgets import StateInspector
    from dreamloop.widgets.inspector import attachment_origin
    out = []
    for widget in list(_dreamloop_widget_instances().values()):
        if isinstance(widget, StateInspector) and widget.checkpoint is not None:
            point = widget.checkpoint
            origins = [attachment_origin(widget.trace.messages[u].attachment) for u in point.attachments
                       if widget.trace.messages[u].type == "attachment"]
            out.append({"value": widget.slider.value, "origins": [o for o in origins if o]})
    print("@@CH03B@@" + json.dumps(out))

_dreamloop_ch03b_probe()
del _dreamloop_ch03b_probe
'''


def _kernel_origins(ch: Chapter) -> list[dict[str, Any]]:
    result = ch.execute(KERNEL_ORIGINS)
    for line in result["out"].splitlines():
        if line.startswith("@@CH03B@@"):
            return json.loads(line[len("@@CH03B@@"):])
    fail("attachment origins in the inspector", f"the kernel probe printed nothing; stderr {result['err'][-400:]!r}")
    return []


def check(ch: Chapter) -> None:
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    with report.check("attachment origins in the inspector"):
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        expected = [k for k in _kernel_origins(ch) if k["origins"]]
        if not expected:
            fail("attachment origins in the inspector", "no inspector in the kernel shows an attachment")
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        texts = [" ".join(page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])
                          ["paneTexts"]) for i in range(count)]
        for k in expected:
            if not any(all(f"from: {o}" in text for o in k["origins"]) for text in texts):
                fail("attachment origins in the inspector", f"checkpoint {k['value']}: the page shows none of "
                     f"{k['origins']} as 'from: ...' in an attachments pane")
        report.note(f"{sum(len(k['origins']) for k in expected)} origins, as the kernel has them")
        root_el = page.evaluate_handle("(roots) => roots[0]", roots).as_element()
        shoot(page, root_el, out / "attachment-origins.png", budget)
    check_verdicts(ch)
