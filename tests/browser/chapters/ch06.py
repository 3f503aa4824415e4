"""Chapter 06 in the page: the context meter, the State inspector linked to it, a stage's mark unfolded.

What the page must show is asked of the kernel (``ch.execute`` with a small probe), not hard-coded:
the meter's bars and threshold lines, the checkpoint it marks as the inspector's slider moves, and the
original messages behind a message a context stage wrote. Saves ``context-meter.png``.
"""

from __future__ import annotations

import json
from typing import Any

from lab import Chapter, fail, shoot, wait_until

SCREENSHOTS = ("context-meter.png",)

# Run in the chapter's kernel: every ContextMeter, what it draws, and the inspector it follows.
METER_PROBE = r'''
def _dreamloop_meter_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.widgets import ContextMeter, StateInspector
    inspectors = [w for w in list(widgets.values()) if isinstance(w, StateInspector)]
    out = []
    for meter in [w for w in list(widgets.values()) if isinstance(w, ContextMeter)]:
        linked = [i for i in inspectors if i.trace is meter.trace]
        entry = {"model_id": meter.model_id, "turns": len(meter.turns), "selected": meter.selected,
                 "lines": {v: " · ".join(sorted(k for k, w in meter.turns[-1].thresholds.items() if w == v)) + f" {v:,}"
                           for v in (meter.turns[-1].thresholds if meter.turns else {}).values()},
                 "inspector": None}
        if linked:
            ins = linked[0]
            point = ins.checkpoint
            marks = [(u, ins.replaced_by(u)) for u in point.messages_for_query] if point else []
            marks = [(u, m) for u, m in marks if m]
            entry["inspector"] = {"value": ins.slider.value, "count": len(ins.trace.checkpoints),
                                  "stages": sorted({m[0] for _, m in marks}),
                                  "originals": [len(m[1]) for _, m in marks]}
        out.append(entry)
    print("@@DL@@" + json.dumps(out))

_dreamloop_meter_probe()
del _dreamloop_meter_probe
'''

PAGE_METERS = r"""
() => [...document.querySelectorAll('.dreamloop-meter')].map((m) => {
  const svg = m.querySelector('svg');
  const titles = svg ? [...svg.querySelectorAll('rect > title')].map((t) => t.textContent) : [];
  const mark = svg ? svg.querySelector('rect[fill="#fefcbf"]') : null;
  return {
    bars: titles.filter((t) => / tokens sent$/.test(t)).length,
    savings: titles.filter((t) => / saved [\d,]+ tokens$/.test(t)).length,
    cache: titles.filter((t) => /(cache read|cache write|uncached) [\d,]+ tokens$/.test(t)).length,
    text: window.__dl.norm(svg ? svg.textContent : ''),
    mark: mark ? Number(mark.getAttribute('x')) : null,
    width: svg ? svg.getBoundingClientRect().width : 0,
    summary: window.__dl.norm((m.querySelector('pre') || {}).textContent).slice(0, 200),
  };
})
"""


def probe(ch: Chapter) -> list[dict[str, Any]]:
    result = ch.execute(METER_PROBE)
    for line in result["out"].splitlines():
        if line.startswith("@@DL@@"):
            return json.loads(line[len("@@DL@@"):])
    fail("context meter rendered", f"the kernel probe printed nothing; stderr: {result['err'][-600:]}")
    return []


def check(ch: Chapter) -> None:
    page, budget, report = ch.page, ch.budget, ch.report

    with report.check("context meter rendered"):
        page.wait_for_function("() => document.querySelectorAll('.dreamloop-meter svg').length > 0",
                               timeout=budget.ms(10))
        kernel = [m for m in probe(ch) if m["inspector"]]
        if not kernel:
            fail("context meter rendered", "the kernel has no ContextMeter following a StateInspector")
        meter = kernel[0]
        shown = page.evaluate(PAGE_METERS)
        match = [m for m in shown if m["bars"] == meter["turns"]]
        if not match:
            fail("context meter rendered", f"no meter in the page draws {meter['turns']} request bars (the kernel's "
                                           f"meter has {meter['turns']} turns); page: {[m['bars'] for m in shown]}")
        drawn = match[0]
        missing = [label for label in meter["lines"].values() if label not in drawn["text"]]
        if missing or drawn["savings"] == 0 or drawn["cache"] == 0 or drawn["width"] < 300:
            fail("context meter rendered", f"the meter lacks threshold lines {missing}, or draws {drawn['savings']} "
                                           f"saving bars and {drawn['cache']} cache bars, {drawn['width']:.0f} px wide")
        report.note(f"{drawn['bars']} request bars, {drawn['savings']} savings, {len(meter['lines'])} lines")

    with report.check("the inspector's slider moves the meter's mark"):
        index = shown.index(drawn)
        root = page.evaluate_handle(  # the cell's outputs: the meter, and the inspector displayed after it
            "(i) => document.querySelectorAll('.dreamloop-meter')[i].closest('.jp-Cell-outputArea')",
            index).as_element()
        inspector_el = root.query_selector(".dreamloop-inspector") if root else None
        if inspector_el is None:
            fail("the inspector's slider moves the meter's mark", "no StateInspector beside the meter in the page")
        handle = inspector_el.query_selector(".noUi-handle")
        before_x = drawn["mark"]
        start = meter["inspector"]["value"]
        at_end = start >= meter["inspector"]["count"] - 1
        key, target = ("ArrowLeft", start - 1) if at_end else ("ArrowRight", start + 1)
        inspector_el.scroll_into_view_if_needed(timeout=budget.ms(5))
        handle.focus()
        page.keyboard.press(key)

        def moved() -> Any:
            now = page.evaluate(PAGE_METERS)[index]
            return now if now["mark"] is not None and now["mark"] != before_x else None

        after = wait_until(moved, 10, budget, step=0.1)
        kernel_after = [m for m in probe(ch) if m["model_id"] == meter["model_id"]][0]
        if not after or kernel_after["selected"] != target or kernel_after["inspector"]["value"] != target:
            fail("the inspector's slider moves the meter's mark",
                 f"after {key} the meter's mark is at x={page.evaluate(PAGE_METERS)[index]['mark']} (was {before_x}); "
                 f"kernel: slider {kernel_after['inspector']['value']}, meter.selected {kernel_after['selected']}, "
                 f"expected {target}")
        report.note(f"checkpoint {start}→{target}, mark x {before_x:.0f}→{after['mark']:.0f}")

    with report.check("a stage's mark unfolds to the original messages"):
        marks = kernel_after["inspector"]
        if not marks["stages"]:
            fail("a stage's mark unfolds to the original messages",
                 f"the checkpoint shown has no message a stage wrote (kernel: {marks})")
        tab = inspector_el.query_selector_all(".lm-TabBar-tab")
        titles = [t.inner_text().strip() for t in tab]
        if "messages_for_query" not in titles:
            fail("a stage's mark unfolds to the original messages", f"tabs {titles}")
        tab[titles.index("messages_for_query")].click()
        details = None

        def opened() -> Any:
            return inspector_el.query_selector(".widget-tab-contents details, .lm-StackedPanel details")

        details = wait_until(opened, 5, budget)
        if details is None:
            fail("a stage's mark unfolds to the original messages", "no <details> in the messages_for_query pane")
        summary = details.query_selector("summary")
        label = summary.inner_text()
        stage = next((s for s in marks["stages"] if label.startswith(f"{s} wrote this")), None)
        if stage is None:
            fail("a stage's mark unfolds to the original messages",
                 f"the first unfold says {label!r}; the kernel's stages here: {marks['stages']}")
        summary.scroll_into_view_if_needed(timeout=budget.ms(5))
        summary.click()
        inside = wait_until(lambda: details.evaluate("(d) => d.open && d.querySelectorAll('.dl-m').length"),
                            5, budget)
        if not inside:
            fail("a stage's mark unfolds to the original messages", "clicking the summary did not show the originals")
        badge = inspector_el.evaluate(f"(el) => [...el.querySelectorAll('.dl-b')].some((b) => "
                                      f"b.textContent.trim() === {json.dumps(stage)})")
        if not badge:
            fail("a stage's mark unfolds to the original messages", f"no '{stage}' badge in the pane")
        report.note(f"'{stage}' mark, {inside} original message(s) shown")
        shoot(page, root, ch.out / "context-meter.png", budget)
