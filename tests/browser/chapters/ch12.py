"""Chapter 12 in the page: the common checks, every check cell's verdict, then the two inspectors of section 2,
the parent's and the child's (``run.children[0]``): both drawn, each showing its own run's first message (the
parent's the person's prompt, the child's its task), as the kernel says them (never written here). Saves
``child-inspector.png``. Chapter zh/12 runs ``check_inspectors`` from here (``zh_ch12.py``).
"""

from __future__ import annotations

from typing import Any

from lab import Chapter, check_verdicts, fail, shoot

SCREENSHOTS = ("child-inspector.png",)

KERNEL_QUESTION = r'''
def _dreamloop_ch12_probe():
    import json
    from dreamloop.widgets import StateInspector

    parent = globals().get("run")
    children = [child.trace for child in getattr(parent, "children", [])]
    out = []
    for widget in list(_dreamloop_widget_instances().values()):
        if not isinstance(widget, StateInspector) or widget.checkpoint is None:
            continue
        first = widget.trace.messages[widget.checkpoint.state_messages[0]]
        content = first.message["content"]
        text = content if isinstance(content, str) else content[-1].get("text", "")
        out.append({"child": any(widget.trace is trace for trace in children),
                    "parent": parent is not None and widget.trace is parent.trace, "first": text})
    print("@@CH12@@" + json.dumps(out, ensure_ascii=False))

_dreamloop_ch12_probe()
del _dreamloop_ch12_probe
'''


def ask_kernel(ch: Chapter) -> list[dict[str, Any]]:
    return ch.ask(KERNEL_QUESTION, "@@CH12@@", "the ch12 probe")


def check(ch: Chapter) -> None:
    check_verdicts(ch)
    check_inspectors(ch, "child-inspector.png")


def check_inspectors(ch: Chapter, shot: str) -> None:
    """The parent's and the child's inspectors, each showing its run's first message; saves ``shot``."""
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report
    name = "the parent's inspector and the child's"
    with report.check(name):
        kernel = ask_kernel(ch)
        parent = [k for k in kernel if k["parent"]]
        child = [k for k in kernel if k["child"]]
        if not parent or not child:
            fail(name, f"the kernel has {len(parent)} inspector(s) on the parent and {len(child)} on a child")
        page.wait_for_function("() => window.__dl.inspectors().length > 1", timeout=budget.ms(10))
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        # an inspector with a child open (open_child) shows the child's inspector in place of its own tabs: null
        panes = page.evaluate("(roots) => roots.map((root) => { try { return window.__dl.inspectorParts(root)"
                              ".paneTexts; } catch (error) { return null; } })", roots)
        firsts = [(pane or [""])[0] for pane in panes]
        for which, want in (("parent", parent[0]["first"]), ("child", child[0]["first"])):
            if not any(want in text for text in firsts):
                fail(name, f"no inspector's messages pane shows the {which}'s first message {want!r}: "
                           f"{[t[:160] for t in firsts]!r}")
        index = next(i for i, text in enumerate(firsts) if child[0]["first"] in text and parent[0]["first"] not in text)
        element = page.evaluate_handle("([roots, i]) => roots[i]", [roots, index]).as_element()
        shoot(page, element, out / shot, budget)
        report.note(f"{count} inspectors; the child's begins {child[0]['first']!r}")
