"""Chapter 10b in the page: real Claude Code sessions in the State inspector (04, 09 and 02's abandoned branch),
stepping through session 04, and the exercises' check cells.

What the inspectors must show is asked of the kernel (``ch.execute``), not hard-coded: for each
StateInspector over an imported session, its file and the snippets of the checkpoint after the one shown.
Saves ``claude-code-session.png``.
"""

from __future__ import annotations

import json
from typing import Any

from lab import Chapter, check_verdicts, fail, says_checkpoint, shoot, wait_until

SCREENSHOTS = ("claude-code-session.png",)

# In the kernel: every StateInspector over an imported session, with what its next checkpoint must show.
KERNEL_INSPECTORS = r'''
def _dreamloop_ch10b_probe():
    import json
    from pathlib import Path
    widgets = _dreamloop_widget_instances()
    from dreamloop.widgets import StateInspector

    out = []
    for widget in list(widgets.values()):
        if not isinstance(widget, StateInspector) or widget.trace.source is None:
            continue
        trace, value = widget.trace, widget.slider.value
        after = value + 1 if value + 1 < len(trace) else value - 1
        point = trace.checkpoints[after]
        texts = []
        for message in trace.resolve(point.assistant_messages):
            texts += [" ".join(b.text.split())[:30] for b in message.message.content
                      if b.type == "text" and b.text.strip()]
        out.append({"file": Path(trace.source["path"]).name, "value": value, "count": len(trace),
                    "target": after, "turn_count": point.turn_count, "texts": texts})
    print("@@CH10B@@" + json.dumps(out))

_dreamloop_ch10b_probe()
del _dreamloop_ch10b_probe
'''


def _kernel_inspectors(ch: Chapter) -> list[dict[str, Any]]:
    result = ch.execute(KERNEL_INSPECTORS)
    for line in result["out"].splitlines():
        if line.startswith("@@CH10B@@"):
            return json.loads(line[len("@@CH10B@@"):])
    fail("Claude Code sessions in the inspector", f"the kernel probe printed nothing; stderr {result['err'][-400:]!r}")
    return []


def check(ch: Chapter) -> None:
    page, out, budget, report = ch.page, ch.out, ch.budget, ch.report

    with report.check("Claude Code sessions in the inspector"):
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        expected = _kernel_inspectors(ch)
        if len(expected) < 2:
            fail("Claude Code sessions in the inspector", f"the kernel has {len(expected)} inspector(s) over an "
                                                          "imported session; the chapter shows sessions 04, 09 and 02")
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        parts = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])
                 for i in range(count)]
        for want in expected:
            hits = [i for i, part in enumerate(parts) if want["file"] in part["header"]]
            if not hits:
                fail("Claude Code sessions in the inspector", f"no inspector in the page names {want['file']!r}; "
                     f"headers: {[p['header'][:80] for p in parts]}")
            header = parts[hits[0]]["header"]
            said = ("records each request as sent" if "2.1.332" in want["file"] else
                    "not the system prompt and not the tool definitions")  # what the file holds, by its version
            for phrase in (said, "notes:"):
                if phrase not in header:
                    fail("Claude Code sessions in the inspector", f"the header over {want['file']} lacks "
                                                                  f"{phrase!r}: {header[:400]!r}")
        report.note(f"{len(expected)} imported sessions: {', '.join(w['file'][:12] for w in expected)}")

    with report.check("stepping through session 04"):
        want = next((w for w in expected if w["file"].startswith("04_")), None)
        if want is None:
            fail("stepping through session 04", "no inspector over session 04 in the kernel")
        index = next(i for i, part in enumerate(parts) if want["file"] in part["header"])
        root_el = page.evaluate_handle("([roots, i]) => roots[i]", [roots, index]).as_element()
        root_el.scroll_into_view_if_needed(timeout=budget.ms(5))
        handle = root_el.query_selector(".noUi-handle")
        handle.focus()
        page.keyboard.press("ArrowRight" if want["target"] > want["value"] else "ArrowLeft")

        def moved() -> Any:
            now = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
            arrived = now["readout"] == str(want["target"]) and says_checkpoint(now["header"], want["target"])
            return now if arrived else None  # the readout moves at once, the header after the kernel redraws

        after = wait_until(moved, 10, budget, step=0.1)
        if not after:
            now = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
            fail("stepping through session 04", f"after the key the readout is {now['readout']!r} and the header "
                 f"{now['header'][:80]!r}; expected checkpoint {want['target']}")
        header = after["header"]
        if not says_checkpoint(header, want["target"]) or f"turn_count={want['turn_count']}" not in header:
            fail("stepping through session 04", f"header after the step: {header[:300]!r}")
        shown = " ".join(after["paneTexts"])
        missing = [t for t in want["texts"] if t not in shown]
        if missing:
            fail("stepping through session 04", f"checkpoint {want['target']}'s panes lack {missing!r}")
        report.note(f"checkpoint {want['value']}→{want['target']}, turn_count={want['turn_count']}")
        shoot(page, root_el, out / "claude-code-session.png", budget)

    check_verdicts(ch)
