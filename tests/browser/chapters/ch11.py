"""Chapter 11 in the page: Claude Code beside dreamloop, request by request (CompareView), the skipped live cell.

What the CompareViews must show is asked of the kernel (each view's scenario, verdict, slider, and the
header the next request must draw), not hard-coded. One view is stepped with the keyboard and must redraw
both columns. Saves ``compare-view.png``.
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, check_verdicts, fail, shoot, wait_until

SCREENSHOTS = ("compare-view.png",)

KERNEL_QUESTION = r'''
def _dreamloop_ch11_probe():
    import json
    from dreamloop.language import tr
    from dreamloop.widgets import CompareView

    out = []
    for widget in list(_dreamloop_widget_instances().values()):
        if not isinstance(widget, CompareView):
            continue
        value, top = widget.slider.value, widget.slider.max
        target = value - 1 if value > 1 else min(value + 1, top)
        out.append({"name": widget.name, "verdict": widget.verdict, "value": value, "max": top, "target": target,
                    "titles": list(widget.titles),
                    "now": tr("request {number} of {count}", number=value, count=top),
                    "then": tr("request {number} of {count}", number=target, count=top),
                    "requests": [len(side["requests"]) for side in widget.sides]})
    print("@@CH11@@" + json.dumps(out, ensure_ascii=False))

_dreamloop_ch11_probe()
del _dreamloop_ch11_probe
'''

PAGE_VIEWS = r"""
() => [...document.querySelectorAll('.dreamloop-compare')].map((root) => {
  const htmls = [...root.querySelectorAll('.widget-html')];
  const slider = root.querySelector('.widget-slider');
  return {
    header: window.__dl.norm((htmls[0] || {}).textContent),
    columns: htmls.slice(1).map((h) => window.__dl.norm(h.textContent)),
    readout: window.__dl.norm(((slider && slider.querySelector('.widget-readout')) || {}).textContent),
  };
})
"""


def ask_kernel(ch: Chapter) -> list[dict[str, Any]]:
    return ch.ask(KERNEL_QUESTION, "@@CH11@@", "the chapter 11 probe")


def check(ch: Chapter) -> None:
    check_verdicts(ch)
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    name = "CompareView: both sides, request by request"
    with report.check(name):
        kernel = ask_kernel(ch)
        if len(kernel) < 3:
            fail(name, f"the kernel has {len(kernel)} CompareView(s); the chapter shows three scenarios")
        page.wait_for_function("() => document.querySelectorAll('.dreamloop-compare').length >= 3",
                               timeout=budget.ms(10))
        views = page.evaluate(PAGE_VIEWS)
        for want in kernel:
            hits = [v for v in views if want["name"] in v["header"]]
            if not hits:
                fail(name, f"no CompareView in the page names {want['name']!r}: {[v['header'][:60] for v in views]}")
            view = hits[0]
            if want["verdict"] not in view["header"] or want["now"] not in view["header"]:
                fail(name, f"{want['name']}: the header {view['header'][:200]!r} lacks {want['verdict']!r} or "
                           f"{want['now']!r}")
            if len(view["columns"]) != 2 or not all(t in c for t, c in zip(want["titles"], view["columns"])):
                fail(name, f"{want['name']}: the columns are not {want['titles']}: {[c[:60] for c in view['columns']]}")
        report.note("; ".join(f"{w['name']} {w['verdict']} {w['requests']}" for w in kernel))

    step = "stepping a CompareView redraws both columns"
    with report.check(step):
        want = next(w for w in kernel if w["target"] != w["value"])
        index = next(i for i, v in enumerate(views) if want["name"] in v["header"])
        root = page.evaluate_handle("(i) => document.querySelectorAll('.dreamloop-compare')[i]", index).as_element()
        root.scroll_into_view_if_needed(timeout=budget.ms(5))
        before = page.evaluate(PAGE_VIEWS)[index]
        handle = root.query_selector(".noUi-handle")
        handle.focus()
        page.keyboard.press("ArrowLeft" if want["target"] < want["value"] else "ArrowRight")

        def moved() -> Any:
            now = page.evaluate(PAGE_VIEWS)[index]
            return now if want["then"] in now["header"] else None

        after = wait_until(moved, 10, budget, step=0.1)
        if not after:
            fail(step, f"after the key the header says {page.evaluate(PAGE_VIEWS)[index]['header'][:160]!r}; "
                       f"expected {want['then']!r}")
        if after["columns"] == before["columns"]:
            fail(step, f"{want['name']}: the columns did not change from request {want['value']} to {want['target']}")
        report.note(f"{want['name']}: request {want['value']} → {want['target']}")
        shoot(page, root, out / "compare-view.png", budget)

    with report.check("the Claude Code cell skips with one line"):
        def said() -> Any:
            text = page.evaluate("() => window.__dl.norm([...document.querySelectorAll('.jp-OutputArea-output')]"
                                 ".map((e) => e.textContent).join(' '))")
            return text if "Claude Code cell skipped" in text else None

        if not wait_until(said, 5, budget):
            fail("the Claude Code cell skips with one line", "no 'Claude Code cell skipped' line in the outputs")
        report.note("skip note shown")
