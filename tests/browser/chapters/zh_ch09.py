"""Chapter 09 in Chinese (``notebooks/zh/09``), in the page: the common checks, every check cell's verdict in
Chinese, then the switchboard's headers, its on/off marks and what each switch turns on, and the inspector's
recovery pass (the next transition's detail, "rewritten by the recovery") as the kernel's catalogue says them in
Chinese (asked of the kernel, where ``ex.language("zh")`` ran, never written here). Saves ``zh-switchboard.png``.
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, check_verdicts, fail, shoot

SCREENSHOTS = ("zh-switchboard.png",)

KERNEL_QUESTION = r'''
def _dreamloop_zh_ch09_probe():
    import json
    widgets = _dreamloop_widget_instances()
    from dreamloop.language import language, tr
    from dreamloop.widgets import StateInspector, Switchboard

    out = {"language": language(), "head": [tr("switch"), tr("chapter"), tr("turns on")], "on": tr("on"),
           "off": tr("off"), "turns_on": [], "details": []}
    for widget in list(widgets.values()):
        if isinstance(widget, Switchboard) and not out["turns_on"]:
            out["turns_on"] = [tr(what) for _, _, what in widget.rows]
        elif isinstance(widget, StateInspector) and widget.checkpoint is not None:
            then = widget.checkpoint.next_transition
            if then is not None and then.reason == "collapse_drain_retry":
                out["details"].append(then.detail)
    out["rewritten"] = tr("→ continue: next transition={reason} (the next State has {count} messages, rewritten by "
                          "the recovery)", reason="@", count=0).split("@")[1].split("0")[-1]
    print("@@ZH09@@" + json.dumps(out, ensure_ascii=False))

_dreamloop_zh_ch09_probe()
del _dreamloop_zh_ch09_probe
'''

PAGE_BOARD = r"""
() => [...document.querySelectorAll('.dreamloop-switchboard')].map((el) => {
  const rows = [...el.querySelectorAll('tr')];
  return {
    head: rows.length ? [...rows[0].querySelectorAll('th')].map((t) => window.__dl.norm(t.textContent)) : [],
    turnsOn: rows.slice(1).map((r) => window.__dl.norm((r.querySelectorAll('td')[2] || {}).textContent)),
    marks: rows.slice(1).flatMap((r) => [...r.querySelectorAll('td')].slice(3).map((c) => window.__dl.norm(c.textContent))),
  };
})
"""


def ask_kernel(ch: Chapter) -> dict[str, Any]:
    return ch.ask(KERNEL_QUESTION, "@@ZH09@@", "the zh/09 probe")


def check(ch: Chapter) -> None:
    check_verdicts(ch)
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    kernel = ask_kernel(ch)
    name = "switchboard and recovery labels in Chinese"
    with report.check(name):
        if kernel["language"] != "zh":
            fail(name, f"the kernel's language is {kernel['language']!r}, not 'zh'")
        page.wait_for_function("() => document.querySelectorAll('.dreamloop-switchboard tr').length > 1",
                               timeout=budget.ms(10))
        board = page.evaluate(PAGE_BOARD)[0]
        if board["head"][:3] != kernel["head"]:
            fail(name, f"the switchboard's headers are {board['head'][:3]}, not {kernel['head']}")
        if board["turnsOn"] != kernel["turns_on"]:
            fail(name, f"'turns on' shows {board['turnsOn'][:2]}..., not {kernel['turns_on'][:2]}...")
        marks = set(board["marks"])
        if kernel["off"] not in marks or not any(m.endswith(kernel["on"]) for m in marks):
            fail(name, f"the on/off marks are {sorted(marks)}, expected {kernel['on']!r} and {kernel['off']!r}")
        element = page.evaluate_handle("() => document.querySelectorAll('.dreamloop-switchboard')[0]").as_element()
        shoot(page, element, out / "zh-switchboard.png", budget)
        if not kernel["details"]:
            fail(name, "no inspector at a collapse drain in the kernel")
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        headers = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])["header"]
                   for i in range(count)]
        detail, rewritten = kernel["details"][0], kernel["rewritten"].strip("（）() ")
        if not any(detail in h and rewritten in h for h in headers):
            fail(name, f"no inspector header shows {detail!r} and {rewritten!r}: {[h[:240] for h in headers]!r}")
        report.note(f"headers {board['head'][:3]}; {detail}; {rewritten}")
