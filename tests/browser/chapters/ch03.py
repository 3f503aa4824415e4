"""Chapter 03 in the page: the State inspector, its slider, the live view, the Mermaid figure, and Stop.

What the page must show is asked of the kernel (``ch.probe()``), not hard-coded. Saves
``state-inspector.png``, ``live-view.png``, ``mermaid.png`` and ``lab.png`` (the README's screenshots).
Last, the live-view cell is re-run as a person would (paced) and Stop is clicked while the two Reads run:
the run must end ``aborted_tools`` within 0.5 s of the click.
"""

from __future__ import annotations

import contextlib
from typing import Any

from lab import Chapter, fail, longest_prefix, mermaid_blocks, press_stop, says_checkpoint, shoot, wait_until

SCREENSHOTS = ("state-inspector.png", "live-view.png", "lab.png", "mermaid.png")


def check(ch: Chapter) -> None:
    page, notebook, out, budget, report = ch.page, ch.notebook, ch.out, ch.budget, ch.report
    probe: dict[str, Any] = {}
    with report.check("State inspector rendered"):
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        probe = ch.probe()
        if not probe["inspectors"]:
            fail("State inspector rendered", "the page shows a StateInspector but the kernel has none")
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        parts = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])
                 for i in range(count)]
        from_kernel = probe["inspectors"]
        for i, part in enumerate(parts):
            if part["titles"][:1] != ["messages"]:
                fail("State inspector rendered", f"inspector {i}: tab titles {part['titles']}, expected "
                                                 "'messages' first")
            if not part["handle"]:
                fail("State inspector rendered", f"inspector {i}: the slider has no handle (.noUi-handle)")
            if not part["paneTexts"] or "messages:" not in part["paneTexts"][0]:
                fail("State inspector rendered", f"inspector {i}: the messages pane is empty or unexpected: "
                                                 f"{(part['paneTexts'] or [''])[0][:200]!r}")
            if "checkpoint" not in part["header"]:
                fail("State inspector rendered", f"inspector {i}: header {part['header'][:200]!r}")
        # the one to drive: the first whose slider can move (a kernel-side inspector with >1 checkpoints)
        movable = [i for i, part in enumerate(parts)
                   if any(k["count"] > 1 and str(k["value"]) == part["readout"] for k in from_kernel)]
        if not movable:
            fail("State inspector rendered", f"no inspector with more than one checkpoint (page: "
                 f"{[p_['readout'] for p_ in parts]}, kernel: {[(k['value'], k['count']) for k in from_kernel]})")
        index = movable[0]
        report.note(f"{count} in the page; tabs {'/'.join(parts[index]['titles'])}")

    with report.check("slider moves to the next checkpoint"):
        root_el = page.evaluate_handle("([roots, i]) => roots[i]", [roots, index]).as_element()
        handle = root_el.query_selector(".noUi-handle")
        root_el.scroll_into_view_if_needed(timeout=budget.ms(5))
        value = int(parts[index]["readout"])
        candidates = {k["model_id"]: k for k in from_kernel if k["value"] == value and k["count"] > 1}

        def press(key: str, target: int) -> dict[str, Any]:
            """One key on the focused handle; wait until the readout says ``target`` and the pane changed."""
            before = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
            handle.focus()
            page.keyboard.press(key)

            def moved() -> Any:
                now = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
                return now if now["readout"] == str(target) and now["paneTexts"][0] != before["paneTexts"][0] \
                    else None

            after = wait_until(moved, 10, budget, step=0.1)
            if not after:
                now = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
                fail("slider moves to the next checkpoint",
                     f"after {key} on the slider handle the readout is {now['readout']!r} (expected {target}) "
                     f"and the messages pane {'did not change' if now['paneTexts'][0] == before['paneTexts'][0] else 'changed'}")
            return after

        start = value
        if all(k["value"] >= k["count"] - 1 for k in candidates.values()):  # at the end: step back first
            start = value - 1
            press("ArrowLeft", start)
        target = start + 1
        after = press("ArrowRight", target)
        # the kernel got the new value (browser -> kernel), the pane shows that checkpoint (kernel -> browser)
        probe_after = ch.probe()
        moved_ids = [k["model_id"] for k in probe_after["inspectors"] if k["model_id"] in candidates
                     and k["value"] == target]
        if not moved_ids:
            fail("slider moves to the next checkpoint", f"the page shows checkpoint {target} but no kernel-side "
                 f"StateInspector has slider.value == {target}: {[k['value'] for k in probe_after['inspectors']]}")
        expected = candidates[moved_ids[0]]["steps"][str(target)]
        pane = after["paneTexts"][0]
        missing = [snip for snip in expected["snippets"] if snip not in pane]
        if missing or not expected["snippets"]:
            fail("slider moves to the next checkpoint",
                 f"the messages pane of checkpoint {target} lacks {missing!r} (messages new there: "
                 f"{expected['kinds']}); pane text: {pane[:300]!r}")
        if not says_checkpoint(after["header"], target):
            fail("slider moves to the next checkpoint", f"header {after['header'][:200]!r} does not name "
                                                        f"checkpoint {target}")
        report.note(f"readout {'%d→' % value if start != value else ''}{start}→{target}; "
                    f"new in the pane: {', '.join(repr(snip[:22]) for snip in expected['snippets'][:3])}")
        shoot(page, root_el, out / "state-inspector.png", budget)

    with report.check("live view shows the streamed text and tool calls"):
        lives = probe["live"]
        if not lives:
            fail("live view shows the streamed text and tool calls", "the kernel has no LiveView")
        followed = [lv for lv in lives if lv["texts"] or lv["tools"]]
        if not followed:
            fail("live view shows the streamed text and tool calls",
                 "no LiveView in the kernel followed a run with text or tool calls (cannot tell what to expect)")
        page.wait_for_function("() => window.__dl.liveViews().length > 0", timeout=budget.ms(10))
        texts = page.evaluate("() => window.__dl.liveViews().map((el) => window.__dl.norm(el.textContent))")
        shown_by: list[int] = []
        for lv in followed:
            want = [t[:40] for t in lv["texts"]] + lv["tools"]
            hits = [i for i, text in enumerate(texts) if all(w in text for w in want)]
            if not hits:
                best = max(range(len(texts)), key=lambda i: sum(w in texts[i] for w in want))
                missing = [w for w in want if w not in texts[best]]
                fail("live view shows the streamed text and tool calls",
                     f"no live view in the page shows {missing!r} (the run it followed streamed "
                     f"{len(lv['texts'])} text block(s) and called {lv['tools']}); closest live view text: "
                     f"{texts[best][:300]!r}")
            shown_by.append(hits[0])
        svg = page.evaluate("(i) => !!window.__dl.liveViews()[i].querySelector('svg')", shown_by[0])
        if not svg:
            fail("live view shows the streamed text and tool calls", "the live view has no loop diagram (svg)")
        # while the cell ran, the page showed the text growing in the "streaming…" part (not only the end)
        samples = page.evaluate("() => (window.__dlStream || {samples: []}).samples")
        growth = {}
        for text in (t for lv in followed for t in lv["texts"]):
            lengths = {longest_prefix(text, sample) for sample in samples} - {0}
            growth[text] = sorted(lengths)
        streamed = {t: n for t, n in growth.items() if len(n) >= 2 and min(n) < len(t)}
        if not streamed:
            fail("live view shows the streamed text and tool calls",
                 f"the page never showed a text growing in the live view's 'streaming…' part while the cell ran "
                 f"({len(samples)} distinct streaming frames seen; prefixes seen per text: "
                 f"{ {t[:30]: n for t, n in growth.items()} }). A stream without pacing (tokens_per_second) ends "
                 "before the page can draw it.")
        tools = sorted({t for lv in followed for t in lv["tools"]})
        first = next(iter(streamed))
        report.note(f"{len(followed)} live view(s); tools {', '.join(tools) or '-'}; {first[:24]!r} seen "
                    f"growing in {len(streamed[first])} frames")
        live_el = page.evaluate_handle("(i) => window.__dl.liveViews()[i]", shown_by[0]).as_element()
        shoot(page, live_el, out / "live-view.png", budget)

    with report.check("Mermaid figure rendered"):
        wanted = mermaid_blocks(notebook)
        if not wanted:
            fail("Mermaid figure rendered", f"{notebook.name} has no ```mermaid markdown cell")

        def rendered() -> Any:  # JupyterLab 4 draws a mermaid block as <img src="data:image/svg+xml,...">
            return page.evaluate("""() => [...document.querySelectorAll('.jp-RenderedMermaid')].map((m) => {
                const img = m.querySelector('img'), svg = m.querySelector('svg');
                const src = img ? decodeURIComponent(img.getAttribute('src') || '') : '';
                const markup = svg ? svg.outerHTML : src;
                return {
                  drawn: (!!svg && svg.getBoundingClientRect().width > 0) ||
                         (!!img && img.complete && img.naturalWidth > 0 && src.includes('<svg')),
                  error: m.classList.contains('jp-mod-warning') || /Syntax error|Parse error/i.test(markup),
                  text: window.__dl.norm(m.textContent).slice(0, 200),
                  size: img ? `${img.naturalWidth}x${img.naturalHeight}` : svg ? 'inline svg' : '-',
                };
              })""")

        figures = wait_until(lambda: (lambda f: f if sum(x["drawn"] for x in f) >= wanted else None)(rendered()),
                             15, budget)
        figures = figures or rendered()
        bad = [f for f in figures if f["error"]]
        if bad:
            fail("Mermaid figure rendered", f"Mermaid reported an error: {bad[0]['text']!r}")
        drawn = [f for f in figures if f["drawn"]]
        if len(drawn) < wanted:
            fail("Mermaid figure rendered", f"{len(drawn)} of {wanted} mermaid block(s) drawn (.jp-RenderedMermaid "
                                            f"with a loaded svg image); found {figures!r}")
        with contextlib.suppress(Exception):
            figure = page.locator(".jp-RenderedMermaid").first.element_handle(timeout=budget.ms(3))
            shoot(page, figure, out / "mermaid.png", budget)
        report.note(f"{len(drawn)} figure(s), {', '.join(f['size'] for f in drawn)} px")

    with contextlib.suppress(Exception):
        page.evaluate("() => window.__dl.inspectors()[0].scrollIntoView({block: 'center'})")
        page.screenshot(path=str(out / "lab.png"), timeout=budget.ms(5))

    press_stop(ch, "terminal = await live.watch(live_run)", when="tools", expect="aborted_tools",
               check="Stop while the tools run (a person watching)")


