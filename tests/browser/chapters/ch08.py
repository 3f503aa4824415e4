"""Chapter 08 in the page: recovery named in the live view, tombstones struck through, counters in the inspector.

What the page must show is asked of the kernel (each LiveView's run: its transitions' details, the fallback, the
tombstones and what they withdrew; each StateInspector's checkpoint: its transition and counters), not
hard-coded. Saves ``recovery-live-view.png`` and ``recovery-inspector.png``. Chapter 08b (``ch08b.py``) checks
its fallback's live view with ``check_live_views`` from here.
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, fail, shoot, wait_until

SCREENSHOTS = ("recovery-live-view.png", "recovery-inspector.png")

KERNEL_QUESTION = r'''
def _dreamloop_ch08_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.widgets import LiveView, StateInspector

    out = {"live": [], "inspectors": []}
    for widget in list(widgets.values()):
        if isinstance(widget, LiveView) and widget.run is not None:
            run = widget.run
            details = [p.next_transition.detail for p in run.trace.checkpoints
                       if p.next_transition is not None and p.next_transition.detail]
            fallback = [m.metadata["to"] for m in run.messages if m.type == "system" and m.subtype == "model_fallback"]
            withdrawn = []
            for m in run.messages:
                if m.type != "tombstone":
                    continue
                target = run.trace.messages.get(m.target_uuid)
                if target is not None and target.type == "assistant":
                    withdrawn.append(" ".join(b.text for b in target.message.content if b.type == "text")[:30])
                elif m.message:
                    withdrawn.append(" ".join(b.get("text", "") for b in m.message["content"])[:30])
            out["live"].append({"details": details, "fallback": fallback, "withdrawn": withdrawn,
                                "terminal": run.terminal.reason if run.done else None})
        elif isinstance(widget, StateInspector) and widget.checkpoint is not None:
            point = widget.checkpoint
            moved = {k: v for k, v in point.counters.items() if v not in (0, None, False) and not isinstance(v, dict)}
            out["inspectors"].append({"model_id": widget.model_id, "index": point.index,
                                      "transition": point.transition.reason if point.transition else None,
                                      "detail": point.transition.detail if point.transition else None,
                                      "moved": moved, "count": len(widget.trace.checkpoints),
                                      "first_withdrawn": bool(widget.trace.checkpoints[0].assistant_messages and
                                                              widget.withdrawn(widget.trace.checkpoints[0].assistant_messages[0]))})
    print("@@CH08@@" + json.dumps(out))

_dreamloop_ch08_probe()
del _dreamloop_ch08_probe
'''

PAGE_LIVE = r"""
() => window.__dl.liveViews().map((el) => ({
  text: window.__dl.norm(el.textContent),
  struck: [...el.querySelectorAll('.dl-struck')].map((s) => ({
    text: window.__dl.norm(s.textContent).slice(0, 200),
    line: getComputedStyle(s).textDecorationLine,
  })),
}))
"""


def ask_kernel(ch: Chapter) -> dict[str, Any]:
    return ch.ask(KERNEL_QUESTION, "@@CH08@@", "the chapter 08 probe")


def check_live_views(ch: Chapter, kernel: dict[str, Any], which: str, png: str) -> None:
    """Each LiveView whose run yielded tombstones (``which`` names them) shows its recoveries and strikes out
    what the tombstones withdrew; the first is saved as ``png``."""
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    with report.check("live view names each recovery and strikes out what a tombstone withdrew"):
        lives = [lv for lv in kernel["live"] if lv["withdrawn"]]
        if len(lives) < 1:
            fail("live view names each recovery and strikes out what a tombstone withdrew",
                 f"expected a LiveView whose run yielded tombstones ({which}); kernel: {kernel['live']!r}")
        page.wait_for_function(f"() => window.__dl.liveViews().length >= {len(lives)}", timeout=budget.ms(10))

        def shown() -> Any:
            views = page.evaluate(PAGE_LIVE)
            return views if sum(1 for v in views if v["struck"]) >= len(lives) else None

        views = wait_until(shown, 10, budget) or page.evaluate(PAGE_LIVE)
        for want in lives:
            names = [*want["details"], *(f"falling back to {to}" for to in want["fallback"])]
            match = [v for v in views if all(name in v["text"] for name in names)]
            if not match:
                fail("live view names each recovery and strikes out what a tombstone withdrew",
                     f"no live view in the page names {names!r}; the page shows "
                     f"{[v['text'][:160] for v in views]!r}")
            view = match[0]
            for text in want["withdrawn"]:
                hits = [s for s in view["struck"] if text[:20] in s["text"]]
                if not hits:
                    fail("live view names each recovery and strikes out what a tombstone withdrew",
                         f"{text!r} is not struck out in the live view "
                         f"(struck: {[s['text'][:60] for s in view['struck']]})")
                if "line-through" not in hits[0]["line"]:
                    fail("live view names each recovery and strikes out what a tombstone withdrew",
                         f"the withdrawn {text!r} is marked but drawn with text-decoration {hits[0]['line']!r}")
        named = ", ".join(n for lv in lives for n in lv["details"][:1] + lv["fallback"])
        report.note(f"{len(lives)} live views: {named}"
                    f"; {sum(len(lv['withdrawn']) for lv in lives)} withdrawn messages struck through")
        first = page.evaluate_handle("() => window.__dl.liveViews()[0]").as_element()
        shoot(page, first, out / png, budget)


def check(ch: Chapter) -> None:
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    kernel = ask_kernel(ch)
    check_live_views(ch, kernel, "the escalation's", "recovery-live-view.png")

    with report.check("inspector header shows the transition and the State's counters"):
        wanted = [i for i in kernel["inspectors"] if i["moved"] and i["detail"]]
        if not wanted:
            fail("inspector header shows the transition and the State's counters",
                 f"no StateInspector in the kernel shows a recovery pass with counters: {kernel['inspectors']!r}")
        want = wanted[0]
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        parts = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])
                 for i in range(count)]
        hits = [i for i, p in enumerate(parts) if f"transition={want['transition']} ({want['detail']})" in p["header"]]
        if not hits:
            fail("inspector header shows the transition and the State's counters",
                 f"no inspector header says transition={want['transition']} ({want['detail']}): "
                 f"{[p['header'][:200] for p in parts]!r}")
        header = parts[hits[0]]["header"]
        missing = [f"{k}={v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k}={v}"
                   for k, v in want["moved"].items()]
        missing = [m for m in missing if m not in header]
        if "counters:" not in header or missing:
            fail("inspector header shows the transition and the State's counters",
                 f"the header lacks the counters {missing!r}: {header[:300]!r}")
        if not want["first_withdrawn"]:
            fail("inspector header shows the transition and the State's counters",
                 "the kernel's inspector does not mark the first, withdrawn response")
        report.note(f"header: transition={want['transition']} ({want['detail']}), counters {want['moved']}")
        root_el = page.evaluate_handle("([roots, i]) => roots[i]", [roots, hits[0]]).as_element()
        shoot(page, root_el, out / "recovery-inspector.png", budget)
