"""Chapter 11 in Chinese (``notebooks/zh/11``), in the page: the common checks, every check cell's verdict in
Chinese, and each CompareView's header and columns with the kernel's Chinese labels (asked of the kernel, where
``ex.language("zh")`` ran, never written here). Saves ``zh-compare-view.png``.
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, check_verdicts, fail, shoot

SCREENSHOTS = ("zh-compare-view.png",)

KERNEL_QUESTION = r'''
def _dreamloop_zh_ch11_probe():
    import json
    from dreamloop.language import language, tr
    from dreamloop.widgets import CompareView

    views = [w for w in list(_dreamloop_widget_instances().values()) if isinstance(w, CompareView)]
    out = {"language": language(), "fields": tr("fields"),
           "views": [{"name": w.name, "header": tr("request {number} of {count}", number=w.slider.value,
                                                   count=w.slider.max)} for w in views]}
    print("@@ZH11@@" + json.dumps(out, ensure_ascii=False))

_dreamloop_zh_ch11_probe()
del _dreamloop_zh_ch11_probe
'''

PAGE_VIEWS = r"""
() => [...document.querySelectorAll('.dreamloop-compare')].map((root) =>
  [...root.querySelectorAll('.widget-html')].map((h) => window.__dl.norm(h.textContent)))
"""


def ask_kernel(ch: Chapter) -> dict[str, Any]:
    return ch.ask(KERNEL_QUESTION, "@@ZH11@@", "the zh/11 probe")


def check(ch: Chapter) -> None:
    check_verdicts(ch)
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    kernel = ask_kernel(ch)
    name = "CompareView labels in Chinese"
    with report.check(name):
        if kernel["language"] != "zh":
            fail(name, f"the kernel's language is {kernel['language']!r}, not 'zh'")
        if len(kernel["views"]) < 3:
            fail(name, f"the kernel has {len(kernel['views'])} CompareView(s); the chapter shows three")
        page.wait_for_function("() => document.querySelectorAll('.dreamloop-compare').length >= 3",
                               timeout=budget.ms(10))
        views = page.evaluate(PAGE_VIEWS)
        for want in kernel["views"]:
            hit = next((v for v in views if v and want["name"] in v[0]), None)
            if hit is None:
                fail(name, f"no CompareView in the page names {want['name']!r}")
            if want["header"] not in hit[0] or not any(kernel["fields"] in column for column in hit[1:]):
                fail(name, f"{want['name']}: expected {want['header']!r} in the header and {kernel['fields']!r} in "
                           f"a column: {[t[:80] for t in hit]}")
        element = page.evaluate_handle("() => document.querySelectorAll('.dreamloop-compare')[0]").as_element()
        element.scroll_into_view_if_needed(timeout=budget.ms(5))
        shoot(page, element, out / "zh-compare-view.png", budget)
        report.note(f"{len(kernel['views'])} views; {kernel['views'][0]['header']}")
