"""Chapter 07 in the page: hooks on their tool calls in the live view, stop_hook_active in the inspector.

What the page must show is asked of the kernel (each LiveView's run, each StateInspector's checkpoint), not
hard-coded. Saves ``hooks-live-view.png`` and ``hooks-inspector.png``.
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, fail, shoot, wait_until

SCREENSHOTS = ("hooks-live-view.png", "hooks-inspector.png")

# Asked of the kernel: per LiveView, the hook records that belong to a tool call (what the row must show,
# in describe_record's words); per StateInspector, the flag and the feedback at its checkpoint.
KERNEL_QUESTION = r'''
def _dreamloop_ch07_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.hooks import describe_record
    from dreamloop.widgets import LiveView, StateInspector

    out = {"live": [], "inspectors": []}
    for widget in list(widgets.values()):
        if isinstance(widget, LiveView) and widget.run is not None:
            records = [m.attachment for m in widget.run.messages
                       if m.type == "attachment" and m.attachment["type"].startswith("hook_")
                       and m.attachment.get("toolUseID")]
            out["live"].append({"model_id": widget.model_id, "lines": [describe_record(r, width=200) for r in records],
                                "denied": [r["toolUseID"] for r in records if r.get("decision", {}).get("decision") == "deny"]})
        elif isinstance(widget, StateInspector) and widget.checkpoint is not None:
            point = widget.checkpoint
            fresh = [widget.trace.messages[u] for u in point.state_messages]
            feedback = [m.message["content"] for m in fresh if m.type == "user" and m.is_meta]
            out["inspectors"].append({"model_id": widget.model_id, "active": point.stop_hook_active,
                                      "transition": point.transition.reason if point.transition else None,
                                      "feedback": feedback[-1].splitlines()[0] if feedback else None})
    print("@@CH07@@" + json.dumps(out))

_dreamloop_ch07_probe()
del _dreamloop_ch07_probe
'''


def ask_kernel(ch: Chapter) -> dict[str, Any]:
    return ch.ask(KERNEL_QUESTION, "@@CH07@@", "the chapter 07 probe")


def check(ch: Chapter) -> None:
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    kernel = ask_kernel(ch)

    with report.check("live view shows each hook on its tool call"):
        lives = [lv for lv in kernel["live"] if lv["lines"]]
        if not lives:
            fail("live view shows each hook on its tool call", "no LiveView in the kernel followed a run with "
                 "tool-call hooks (cannot tell what to expect)")
        page.wait_for_function("() => window.__dl.liveViews().length > 0", timeout=budget.ms(10))

        def rows() -> Any:
            return page.evaluate("""() => window.__dl.liveViews().map((el) => ({
                text: window.__dl.norm(el.textContent),
                hooks: [...el.querySelectorAll('.dl-hook')].map((h) => ({
                    text: window.__dl.norm(h.textContent),
                    red: !!h.querySelector('.dl-f-error'),
                    inRow: !!h.closest('.dl-item'),
                })),
            }))""")

        want = lives[0]
        shown = wait_until(lambda: (lambda r: r if any(len(v["hooks"]) >= len(want["lines"]) for v in r) else None)(rows()),
                           10, budget) or rows()
        best = max(shown, key=lambda v: sum(any(line[:60] in h["text"] for h in v["hooks"]) for line in want["lines"]))
        missing = [line for line in want["lines"] if not any(line[:60] in h["text"] for h in best["hooks"])]
        if missing:
            fail("live view shows each hook on its tool call", f"the page's live view lacks the hook line(s) "
                 f"{missing!r}; it shows {[h['text'] for h in best['hooks']]!r}")
        if not all(h["inRow"] for h in best["hooks"]):
            fail("live view shows each hook on its tool call", "a hook line is not inside its tool call's row")
        red = [h for h in best["hooks"] if h["red"]]
        if want["denied"] and not red:
            fail("live view shows each hook on its tool call", "the denying hook is not marked red (.dl-f-error)")
        report.note(f"{len(best['hooks'])} hook line(s) on their calls, {len(red)} red (deny)")
        index = shown.index(best)
        live_el = page.evaluate_handle("(i) => window.__dl.liveViews()[i]", index).as_element()
        shoot(page, live_el, out / "hooks-live-view.png", budget)

    with report.check("inspector shows stop_hook_active and the feedback"):
        blocked = [i for i in kernel["inspectors"] if i["active"] and i["transition"] == "stop_hook_blocking"]
        if not blocked:
            fail("inspector shows stop_hook_active and the feedback", "no StateInspector in the kernel shows a "
                 f"stop_hook_blocking checkpoint: {kernel['inspectors']!r}")
        want = blocked[0]
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        parts = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i]) for i in range(count)]
        hits = [i for i, p in enumerate(parts) if "stop_hook_active=True" in p["header"]
                and "transition=stop_hook_blocking" in p["header"]]
        if not hits:
            fail("inspector shows stop_hook_active and the feedback", "no inspector header in the page says "
                 f"stop_hook_active=True at a stop_hook_blocking checkpoint: {[p['header'][:160] for p in parts]!r}")
        pane = parts[hits[0]]["paneTexts"][0]
        if "user · meta" not in pane or (want["feedback"] or "Stop hook feedback:") not in pane:
            fail("inspector shows stop_hook_active and the feedback", f"the messages pane lacks the meta user "
                 f"message {want['feedback']!r}: {pane[:300]!r}")
        report.note("header: stop_hook_active=True, transition=stop_hook_blocking; the feedback in the pane")
        root_el = page.evaluate_handle("([roots, i]) => roots[i]", [roots, hits[0]]).as_element()
        shoot(page, root_el, out / "hooks-inspector.png", budget)
