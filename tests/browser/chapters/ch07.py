"""Chapter 07 in the page: stop_hook_active and the stop hook's feedback in the inspector.

What the page must show is asked of the kernel (each StateInspector's checkpoint), not hard-coded. Saves
``hooks-inspector.png``. The live view of a denying hook moved with its section to chapter 07b (``ch07b.py``).
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, fail, shoot

SCREENSHOTS = ("hooks-inspector.png",)

# Asked of the kernel: per StateInspector, the flag and the feedback at its checkpoint.
KERNEL_QUESTION = r'''
def _dreamloop_ch07_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.widgets import StateInspector

    out = {"inspectors": []}
    for widget in list(widgets.values()):
        if isinstance(widget, StateInspector) and widget.checkpoint is not None:
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
