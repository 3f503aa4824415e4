"""Chapter 05 in the page: the two timelines (calls overlapping the stream) and Stop on a paced run.

What the page must show is asked of the kernel, not hard-coded. The Stop check runs the chapter's Stop cell
again as a person would see it (paced: the notebook paces only when nobody's auto-answer is set), waits
until the live view lights "model + tools" and the Bash call runs, clicks **Stop** in the page, and asks
the kernel what each call was told. Saves ``timelines.png``, ``live-view-streaming-tools.png`` and
``live-view-stopped.png``.
"""

from __future__ import annotations

import json
from typing import Any

from lab import Chapter, cell_idle, cell_index, fail, run_cell, shoot, wait_until

SCREENSHOTS = ("timelines.png", "live-view-streaming-tools.png", "live-view-stopped.png")

STOP_CELL = "stop_run = dl.query("

TIMELINES_PY = r'''
def _dreamloop_timelines():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.widgets import Timeline
    out = [{"early": len(t.turns[0].early()) if t.turns else 0, "tools": len(t.turns[0].tools) if t.turns else 0}
           for t in list(widgets.values()) if isinstance(t, Timeline)]
    print("@@DL@@" + json.dumps(out))

_dreamloop_timelines()
del _dreamloop_timelines
'''

STOPPED_PY = r'''
def _dreamloop_stopped():
    import json
    from dreamloop.tools import INTERRUPTED, NOT_STARTED
    closing = [m for m in stop_run.messages if m.type == "user" and m.source_tool_use_ids]
    asked = [b.id for m in stop_run.messages if m.type == "assistant" for b in m.message.content
             if b.type == "tool_use"]
    blocks = closing[-1].message["content"] if closing else []
    print("@@DL@@" + json.dumps({
        "terminal": stop_run.terminal.reason,
        "asked": asked,
        "results": {b["tool_use_id"]: b["content"] for b in blocks},
        "texts": {"interrupted": INTERRUPTED, "not_started": NOT_STARTED},
        "notes": (workspace / "notes.md").exists(),
        "switches": stop_run.trace.switches,
    }))

_dreamloop_stopped()
del _dreamloop_stopped
'''

def _kernel(ch: Chapter, code: str, what: str) -> Any:
    result = ch.execute(code)
    for line in result["out"].splitlines():
        if line.startswith("@@DL@@"):
            return json.loads(line[len("@@DL@@"):])
    fail(what, f"the kernel answered nothing readable; stderr: {result['err'][-600:]}")


def check(ch: Chapter) -> None:
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report

    with report.check("timelines show calls overlapping the stream"):
        kernel = _kernel(ch, TIMELINES_PY, "timelines show calls overlapping the stream")
        if sorted(t["early"] > 0 for t in kernel) != [False, True]:
            fail("timelines show calls overlapping the stream",
                 f"expected two Timelines in the kernel, one with calls that started while the model streamed; "
                 f"got {kernel}")
        page.wait_for_function("() => document.querySelectorAll('.dreamloop-timeline svg').length >= 2",
                               timeout=budget.ms(10))
        drawn = page.evaluate("""() => [...document.querySelectorAll('.dreamloop-timeline')].map((el) => {
            const line = el.querySelector('line.stream-end');
            const bars = [...el.querySelectorAll('rect[fill="#dd6b20"]')].map((r) => +r.getAttribute('x'));
            const summary = el.querySelector('pre');
            return {end: line ? +line.getAttribute('x1') : null, bars,
                    text: window.__dl.norm(summary ? summary.textContent : el.textContent).slice(0, 300)};
        })""")
        marked = [d for d in drawn if d["end"] is not None]
        plain = [d for d in drawn if d["end"] is None]
        if len(marked) != 1 or len(plain) != 1:
            fail("timelines show calls overlapping the stream",
                 f"expected one timeline with the stream's end marked and one without; the page has {drawn}")
        on, off = marked[0], plain[0]
        early = [x for x in on["bars"] if x < on["end"]]
        if len(on["bars"]) != 3 or len(early) != 3:
            fail("timelines show calls overlapping the stream",
                 f"the switch-on timeline should draw its 3 calls left of the stream's end (x={on['end']}); "
                 f"bars at {on['bars']}")
        if "started while the model streamed" not in on["text"] or "started while" in off["text"]:
            fail("timelines show calls overlapping the stream", f"summaries: on {on['text']!r}, off {off['text']!r}")
        report.note(f"3 calls left of the stream's end at x={on['end']:.0f}; the other timeline has none")
        box = page.evaluate_handle("() => document.querySelector('.dreamloop-timelines').closest('.jp-Cell')")
        shoot(page, box.as_element(), out / "timelines.png", budget)

    with report.check("Stop in the page interrupts a paced run"):
        said = ch.execute("import os; os.environ.pop('DREAMLOOP_AUTO_ANSWER', None); "
                          "from dreamloop.widgets import person_watching; print(person_watching())")
        if said["out"].strip() != "True":
            fail("Stop in the page interrupts a paced run", f"the kernel is not a person's: {said!r}")
        index = cell_index(ch, STOP_CELL)
        before = {c["index"]: c["count"] for c in page.evaluate("() => window.__dl.cellStatus()")["cells"]}
        run_cell(ch, index)

        def live_text() -> str:
            return page.evaluate("() => { const v = window.__dl.liveViews(); "
                                 "return v.length ? window.__dl.norm(v[v.length - 1].textContent) : ''; }")

        if not wait_until(lambda: "model + tools" in live_text(), 25, budget, step=0.1):
            fail("Stop in the page interrupts a paced run",
                 f"the live view never said 'phase: model + tools' while the run streamed: {live_text()[:300]!r}")
        live = page.evaluate_handle("() => { const v = window.__dl.liveViews(); return v[v.length - 1]; }")
        shoot(page, live.as_element(), out / "live-view-streaming-tools.png", budget)
        if not wait_until(lambda: "Bash" in live_text() and "running…" in live_text(), 25, budget, step=0.1):
            fail("Stop in the page interrupts a paced run", f"the Bash call never showed as running: "
                                                             f"{live_text()[:300]!r}")
        button = live.as_element().query_selector(".dreamloop-stop")
        if button is None or button.is_disabled():
            fail("Stop in the page interrupts a paced run", "the live view's Stop button is missing or disabled")
        button.click()

        def finished() -> bool:
            status = page.evaluate("() => window.__dl.cellStatus()")
            cell = next((c for c in status["cells"] if c["index"] == index), None)
            return bool(cell and cell["count"] != before.get(index) and cell_idle(ch, index))

        if not wait_until(finished, 20, budget, step=0.2):
            fail("Stop in the page interrupts a paced run", "the Stop cell did not finish after Stop was clicked")
        stopped = _kernel(ch, STOPPED_PY, "Stop in the page interrupts a paced run")
        ch.execute("import os\nos.environ['DREAMLOOP_AUTO_ANSWER'] = '1'")
        results, texts = stopped["results"], stopped["texts"]
        problems = []
        if stopped["terminal"] not in ("aborted_streaming", "aborted_tools"):
            problems.append(f"Terminal {stopped['terminal']}")
        if sorted(results) != sorted(stopped["asked"]):
            problems.append(f"calls {stopped['asked']} but results for {sorted(results)}")
        if not str(results.get("toolu_1", "")).startswith("File created"):
            problems.append(f"the Write should have run: {results.get('toolu_1')!r}")
        if results.get("toolu_2") != texts["interrupted"]:
            problems.append(f"the running Bash call should read INTERRUPTED: {results.get('toolu_2')!r}")
        if "toolu_3" in results and results["toolu_3"] != texts["not_started"]:
            problems.append(f"the waiting Edit should read NOT_STARTED: {results['toolu_3']!r}")
        if not stopped["notes"] or stopped["switches"].get("streaming_tool_execution") is not True:
            problems.append(f"notes.md written: {stopped['notes']}, switches {stopped['switches']}")
        if problems:
            fail("Stop in the page interrupts a paced run", "; ".join(problems))
        shown = live_text()
        if f"reason={stopped['terminal']}" not in shown.replace(" ", ""):
            if stopped["terminal"] not in shown:
                fail("Stop in the page interrupts a paced run", f"the live view does not show the Terminal: "
                                                                f"{shown[:300]!r}")
        report.note(f"{stopped['terminal']}; " + ", ".join(f"{k}: {str(v)[:22]!r}" for k, v in results.items()))
        live = page.evaluate_handle("() => { const v = window.__dl.liveViews(); return v[v.length - 1]; }")
        shoot(page, live.as_element(), out / "live-view-stopped.png", budget)  # re-found: the output re-rendered
