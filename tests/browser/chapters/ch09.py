"""Chapter 09 in the page: the switchboard (every switch, on or off per column) and a recovery pass in the inspector.

What the page must show is asked of the kernel (the Switchboard's rows and what is on in each column; the
inspector's checkpoint), not hard-coded. Saves ``switchboard.png``.
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, fail, shoot

SCREENSHOTS = ("switchboard.png",)

KERNEL_QUESTION = r'''
def _dreamloop_ch09_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.widgets import StateInspector, Switchboard

    out = {"boards": [], "inspectors": []}
    for widget in list(widgets.values()):
        if isinstance(widget, Switchboard):
            out["boards"].append({"rows": [name for name, _, _ in widget.rows], "columns": list(widget.columns),
                                  "on": {column: widget.on(column) for column in widget.columns}})
        elif isinstance(widget, StateInspector) and widget.checkpoint is not None:
            then = widget.checkpoint.next_transition
            out["inspectors"].append({"next": then.reason if then else None,
                                      "detail": then.detail if then else None})
    print("@@CH09@@" + json.dumps(out))

_dreamloop_ch09_probe()
del _dreamloop_ch09_probe
'''

PAGE_BOARDS = r"""
() => [...document.querySelectorAll('.dreamloop-switchboard')].map((el) => {
  const rows = [...el.querySelectorAll('tr')];
  const head = rows.length ? [...rows[0].querySelectorAll('th')].map((t) => window.__dl.norm(t.textContent)) : [];
  return {
    head,
    rows: rows.slice(1).map((r) => ({
      name: window.__dl.norm((r.querySelector('code') || {}).textContent),
      cells: [...r.querySelectorAll('td')].slice(3).map((c) => c.classList.contains('dl-sw-on')),
    })),
  };
})
"""


def ask_kernel(ch: Chapter) -> dict[str, Any]:
    return ch.ask(KERNEL_QUESTION, "@@CH09@@", "the chapter 09 probe")


def check(ch: Chapter) -> None:
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    kernel = ask_kernel(ch)

    with report.check("switchboard shows every switch, on or off per column"):
        if not kernel["boards"]:
            fail("switchboard shows every switch, on or off per column", "no Switchboard in the kernel")
        want = kernel["boards"][0]
        page.wait_for_function("() => document.querySelectorAll('.dreamloop-switchboard tr').length > 1",
                               timeout=budget.ms(10))
        boards = page.evaluate(PAGE_BOARDS)
        board = boards[0]
        if [r["name"] for r in board["rows"]] != want["rows"]:
            fail("switchboard shows every switch, on or off per column",
                 f"the page's rows {[r['name'] for r in board['rows']]} are not the switches {want['rows']}")
        if board["head"][3:] != want["columns"]:
            fail("switchboard shows every switch, on or off per column",
                 f"the page's columns {board['head'][3:]} are not {want['columns']}")
        for c, column in enumerate(want["columns"]):
            shown = [r["name"] for r in board["rows"] if r["cells"][c]]
            if shown != want["on"][column]:
                fail("switchboard shows every switch, on or off per column",
                     f"column {column!r} shows {shown} on; the kernel says {want['on'][column]}")
        report.note(f"{len(want['rows'])} switches × {len(want['columns'])} columns; 'dreamloop run': "
                    f"{len(want['on'].get('dreamloop run', []))} on")
        element = page.evaluate_handle("() => document.querySelectorAll('.dreamloop-switchboard')[0]").as_element()
        shoot(page, element, out / "switchboard.png", budget)

    with report.check("inspector shows the recovery pass"):
        passes = [i for i in kernel["inspectors"] if i["next"] == "collapse_drain_retry"]
        if not passes:
            fail("inspector shows the recovery pass", f"no inspector at a collapse drain: {kernel['inspectors']!r}")
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        headers = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])["header"]
                   for i in range(count)]
        said = f"next transition=collapse_drain_retry ({passes[0]['detail']})"
        if not any(said in h and "rewritten by the recovery" in h for h in headers):
            fail("inspector shows the recovery pass", f"no header says {said!r} and that the next State's messages "
                 f"were rewritten: {[h[:240] for h in headers]!r}")
        report.note(said)
