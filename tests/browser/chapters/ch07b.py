"""Chapter 07b in the page: each hook on its tool call in the live view, the denying one red.

What the page must show is asked of the kernel (each LiveView's run), not hard-coded. Saves
``hooks-live-view.png``. (Moved here from ``ch07.py`` with its section, the ``pre_tool_use`` hook that denies
``rm -rf``.)
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, fail, shoot, wait_until

SCREENSHOTS = ("hooks-live-view.png",)

# Asked of the kernel: per LiveView, the hook records that belong to a tool call (what the row must show,
# in describe_record's words).
KERNEL_QUESTION = r'''
def _dreamloop_ch07b_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.hooks import describe_record
    from dreamloop.widgets import LiveView

    out = {"live": []}
    for widget in list(widgets.values()):
        if isinstance(widget, LiveView) and widget.run is not None:
            records = [m.attachment for m in widget.run.messages
                       if m.type == "attachment" and m.attachment["type"].startswith("hook_")
                       and m.attachment.get("toolUseID")]
            out["live"].append({"model_id": widget.model_id, "lines": [describe_record(r, width=200) for r in records],
                                "denied": [r["toolUseID"] for r in records if r.get("decision", {}).get("decision") == "deny"]})
    print("@@CH07B@@" + json.dumps(out))

_dreamloop_ch07b_probe()
del _dreamloop_ch07b_probe
'''


def ask_kernel(ch: Chapter) -> dict[str, Any]:
    return ch.ask(KERNEL_QUESTION, "@@CH07B@@", "the chapter 07b probe")


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
