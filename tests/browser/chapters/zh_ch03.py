"""Chapter 03 in Chinese (``notebooks/zh/03``), in the page: the labels render in Chinese and the fonts draw them.

The common checks (stored outputs readable before the run, the markdown) have run. What each label must say
is asked of the chapter's kernel, where ``ex.language("zh")`` ran (``tr`` and the catalogue), never written
here; the page must show it: the State inspector's slider label, header and pane note, the live view's Stop
button, its calls and its flowchart, the timeline's legend, and a check cell's ❌ line with its hint. Then the
page draws CJK text and ✅/❌ in its own font on a canvas: a missing font draws every character as the same
empty box, so two different characters that come out identical fail the check (the README says what a
machine needs). Last, Stop as a person presses it, waited for by the Chinese labels ("运行中…").
Saves ``zh-inspector.png``, ``zh-live-view.png`` and ``zh-check.png``.
"""

from __future__ import annotations

import json
from typing import Any

from lab import Chapter, cell_index, check_verdicts, fail, press_stop, shoot

SCREENSHOTS = ("zh-inspector.png", "zh-live-view.png", "zh-check.png")

LABELS = ["checkpoint", "State.messages as the iteration began", "Stop", "ran ✓{took}", "1. take the current State",
          "4. run tools, collect tool_result", "seconds since the run started", "last answer and Terminal",
          "❌ {title}: {problem}\n   Hint: {hint}"]
"""The catalogue's keys whose Chinese the page must show (English texts, as ``dreamloop/zh/`` holds them)."""

KERNEL_LABELS = ("import json\nfrom dreamloop.language import language, tr\n"
                 "print('@@ZH@@' + json.dumps({'language': language(), 'labels': {k: tr(k) for k in %r}}))")

GLYPHS = r"""
([family, pairs]) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 72;
  const g = canvas.getContext('2d', { willReadFrequently: true });
  const draw = (text) => {
    g.clearRect(0, 0, 72, 72);
    g.font = `48px ${family}`;
    g.textBaseline = 'top';
    g.fillStyle = '#000';
    g.fillText(text, 4, 4);
    return g.getImageData(0, 0, 72, 72).data;
  };
  return pairs.map(([a, b]) => {
    const one = draw(a), two = draw(b);
    let inked = 0, colour = 0, differ = 0;
    for (let i = 0; i < one.length; i += 4) {
      if (one[i + 3] > 0) inked++;
      if (one[i + 3] > 128 && (Math.abs(one[i] - one[i + 1]) > 60 || Math.abs(one[i + 1] - one[i + 2]) > 60)) colour++;
      if (one[i] !== two[i] || one[i + 3] !== two[i + 3]) differ++;
    }
    return { a, b, inked, colour, differ };
  });
}
"""
"""Draw each of a pair of characters in the page's font; how much ink, how much colour, how many pixels differ."""


def check(ch: Chapter) -> None:
    page, report, budget = ch.page, ch.report, ch.budget
    labels: dict[str, str] = {}

    with report.check("the kernel speaks Chinese"):
        said = ch.execute(KERNEL_LABELS % LABELS)
        line = next((x for x in said["out"].splitlines() if x.startswith("@@ZH@@")), None)
        if line is None:
            fail("the kernel speaks Chinese", f"the kernel did not answer: {said['err'][-300:]!r}")
        answer = json.loads(line[len("@@ZH@@"):])
        labels = answer["labels"]
        if answer["language"] != "zh" or any(labels[k] == k for k in LABELS):
            fail("the kernel speaks Chinese", f"language()={answer['language']!r}; labels {labels!r}")
        report.note(f"language()='zh'; e.g. {labels['Stop']!r}, {labels['checkpoint']!r}")

    with report.check("State inspector labels in Chinese"):
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        root = page.evaluate_handle("() => window.__dl.inspectors()[0]").as_element()
        parts = page.evaluate("(el) => window.__dl.inspectorParts(el)", root)
        slider = page.evaluate("(el) => window.__dl.norm((el.querySelector('.widget-slider .widget-label') || {}).textContent)",
                               root)
        checkpoint = labels["checkpoint"]
        wanted = {"slider label": (checkpoint, slider), "header": (f"{checkpoint} ", parts["header"]),
                  "messages pane note": (labels["State.messages as the iteration began"], (parts["paneTexts"] or [""])[0])}
        wrong = {name: (want, got[:160]) for name, (want, got) in wanted.items() if want not in got}
        if wrong:
            fail("State inspector labels in Chinese", f"expected in the page: {wrong!r}")
        if parts["titles"][:1] != ["messages"]:
            fail("State inspector labels in Chinese", f"tab titles {parts['titles']}: the pane names stay the code's")
        report.note(f"slider {slider!r}; header {parts['header'][:40]!r}")
        shoot(page, root, ch.out / "zh-inspector.png", budget)

    with report.check("live view, flowchart and timeline labels in Chinese"):
        live = page.evaluate_handle("() => window.__dl.liveViews()[0]").as_element()
        if live is None:
            fail("live view, flowchart and timeline labels in Chinese", "the page shows no live view")
        shown = page.evaluate("""(el) => ({
            stop: window.__dl.norm((el.querySelector('.dreamloop-stop') || {}).textContent),
            text: window.__dl.norm(el.textContent),
            svg: [...el.querySelectorAll('svg text')].map((t) => t.textContent).join(' | '),
            timeline: [...document.querySelectorAll('.dreamloop-timeline svg text')].map((t) => t.textContent).join(' | '),
          })""", live)
        wanted = {"Stop button": (labels["Stop"], shown["stop"]),
                  "a finished call": (labels["ran ✓{took}"].replace("{took}", ""), shown["text"]),
                  "flowchart box 1": (labels["1. take the current State"], shown["svg"]),
                  "flowchart box 4": (labels["4. run tools, collect tool_result"], shown["svg"]),
                  "timeline legend": (labels["seconds since the run started"], shown["timeline"])}
        wrong = {name: (want, got[:160]) for name, (want, got) in wanted.items() if want not in got}
        if wrong:
            fail("live view, flowchart and timeline labels in Chinese", f"expected in the page: {wrong!r}")
        report.note(f"Stop button {shown['stop']!r}; {len(shown['svg'].split(' | '))} flowchart labels")
        shoot(page, live, ch.out / "zh-live-view.png", budget)

    with report.check("a check's ❌ line and hint in Chinese"):
        index = cell_index(ch, "ex.check_last_answer(")
        text = page.evaluate("(i) => window.__dl.norm(window.__dl.panel().content.widgets[i].node"
                             ".querySelector('.jp-OutputArea').textContent)", index)
        first, second = labels["❌ {title}: {problem}\n   Hint: {hint}"].split("\n")
        head = first.replace("{title}", labels["last answer and Terminal"]).replace("{problem}", "")
        hint = second.strip().replace("{hint}", "")
        if not text.startswith(head) or hint not in text:
            fail("a check's ❌ line and hint in Chinese", f"the check cell shows {text[:200]!r}; expected it to start "
                 f"with {head!r} and hold {hint!r}")
        report.note(text[:50])
        cell = page.locator(f".jp-Notebook .jp-Cell >> nth={index}").locator(".jp-OutputArea").first
        shoot(page, cell.element_handle(timeout=budget.ms(3)), ch.out / "zh-check.png", budget)

    with report.check("the page's fonts draw Chinese and ✅/❌"):
        family = page.evaluate("() => getComputedStyle(document.querySelector('.jp-RenderedMarkdown')).fontFamily")
        drawn: list[dict[str, Any]] = page.evaluate(GLYPHS, [family, [["执", "循"], ["✅", "❌"], ["❌", "✅"]]])
        boxes = [d for d in drawn if not d["inked"] or d["differ"] < 20]
        if boxes:
            fail("the page's fonts draw Chinese and ✅/❌",
                 f"{', '.join(d['a'] for d in boxes)} drawn as the same empty box as {', '.join(d['b'] for d in boxes)} "
                 f"in {family!r}: the machine lacks a CJK or an emoji font (README: Fonts; Debian: fonts-noto-cjk, "
                 "fonts-noto-color-emoji)")
        marks = [d for d in drawn if d["a"] in "✅❌"]
        if not all(d["colour"] for d in marks):
            fail("the page's fonts draw Chinese and ✅/❌",
                 f"✅/❌ drawn without colour ({[(d['a'], d['colour']) for d in marks]}): no colour emoji font")
        report.note(f"CJK and ✅/❌ drawn distinctly in {family[:40]!r} (✅ {marks[0]['colour']} coloured pixels)")

    check_verdicts(ch)
    press_stop(ch, "terminal = await live.watch(live_run)", when="tools", expect="aborted_tools",
               check="Stop while the tools run, waited for by the Chinese labels")
