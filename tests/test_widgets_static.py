"""Each widget's stored output: a static text/html beside the widget view, readable without a kernel.

What the HTML says is checked here (nbval only checks that it is there: tests/nbval_sanitize.cfg); in a
real kernel, a LiveView's stored output shows how its run ended and an AskPrompt's its answers.
"""

from __future__ import annotations

import asyncio
import base64
import re
from pathlib import Path

import nbformat
import pytest
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.widgets import AskPrompt, LiveView, StateInspector, StaticHTML, Timeline
from dreamloop.widgets.static import STATIC_END, STATIC_START
from dreamloop.widgets.timeline import _label

SANITIZE = Path(__file__).resolve().parent / "nbval_sanitize.cfg"
VIEW = "application/vnd.jupyter.widget-view+json"


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file (0.05 s)."""
    await asyncio.sleep(0.05)
    return f"contents of {input.path}"


async def two_turns(offline):
    model = offline([S.reply("Let me read both.", S.tool_use("Read", {"path": "a.txt"}, id="T1"),
                             S.tool_use("Read", {"path": "b.txt"}, id="T2")),
                     S.reply("Both files read.")])
    run = query(QueryParams(messages="read a and b", model=model, tools=[read]))
    return run


def static_of(widget) -> str:
    bundle = widget._repr_mimebundle_()
    assert set(bundle) == {"text/plain", VIEW, "text/html"}
    html = bundle["text/html"]
    assert html.startswith(STATIC_START) and html.endswith(STATIC_END) and html.count(STATIC_START) == 1
    return html


def figures_of(html: str) -> list[str]:
    """The SVG pictures a snapshot stores, decoded: each an ``<img>`` with a data: URI, never inline ``<svg>``
    (JupyterLab's sanitiser drops inline SVG from an untrusted notebook)."""
    assert "<svg" not in html
    return [base64.b64decode(data).decode() for data in
            re.findall(r'<img class="dreamloop-figure" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)]


def text_of(html: str) -> str:
    """Roughly what a reader sees: tags and the stylesheet removed."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S).replace("<wbr>", "")
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


async def test_state_inspector_stores_every_checkpoint_and_the_shown_panes(offline):
    run = await two_turns(offline)
    async for _ in run:
        pass
    inspector = StateInspector(run.trace)
    text = text_of(static_of(inspector))
    assert text.startswith("StateInspector · a snapshot stored with the notebook")
    assert "0 1 None 1 1 1 1 continue: next_turn" in text
    assert "1 2 next_turn 3 3 1 0 Terminal completed" in text
    assert "read a and b" in text  # the messages pane of checkpoint 0
    assert "Let me read both." in text and "contents of b.txt" in text  # assistant_messages, tool_results


async def test_live_view_stores_how_the_run_ended(offline):
    live = LiveView()
    assert "waiting for a run" in text_of(static_of(live))
    await live.watch(await two_turns(offline))
    text = text_of(static_of(live))
    assert "reason= completed" in text or "reason=completed" in text
    assert "Both files read." in text and "contents of a.txt" in text
    (flowchart,) = figures_of(static_of(live))  # the flowchart, lit where the run ended
    assert 'id="phase-terminal" class="phase active"' in flowchart and 'width="700"' in flowchart


async def test_timeline_stores_its_chart_and_summary(offline):
    run = await two_turns(offline)
    async for _ in run:
        pass
    html = static_of(Timeline(run))
    (chart,) = figures_of(html)
    assert "turn 1 model" in chart
    assert "turn 1: model" in text_of(html) and "Read ×2 in parallel" in text_of(html)


async def test_ask_prompt_stores_its_answers(monkeypatch):
    monkeypatch.setenv("DREAMLOOP_AUTO_ANSWER", "1")
    prompt = AskPrompt()
    await prompt(read, {"path": "a.txt"}, "Read wants to look")
    text = text_of(static_of(prompt))
    assert "Allow Read ?" in text and "auto-answered: allow" in text and "answers: Read: allow" in text


def test_a_timeline_label_is_cut_at_a_word_with_the_whole_text_as_tooltip():
    full = "Bash command='python -m unittest discover -s tests -p \"check_*.py\" -v', timeout=120"
    label = _label(12, 20, full, "#000", 150)
    shown = re.sub(r"<title>.*?</title>", "", label)
    shown = re.sub(r"<[^>]+>", "", shown).replace("&#x27;", "'").replace("&quot;", '"')
    assert shown.endswith("…") and len(shown) <= 150 / 6.2 + 1
    kept = shown[:-1]
    assert full.startswith(kept) and full[len(kept)] in " ,"  # never inside a word
    assert "<title>" in label and "timeout=120" in label  # the whole label on hover
    assert "<title>" not in _label(12, 20, "Read path='a.txt'", "#000", 150)  # short labels are whole


def test_the_mixin_is_reusable_by_a_new_widget():
    import ipywidgets as W

    class Meter(StaticHTML, W.VBox):
        def static_html(self) -> str:
            return "<b>42 tokens</b>"

    bundle = Meter()._repr_mimebundle_()
    assert "Meter" in bundle["text/html"] and "<b>42 tokens</b>" in bundle["text/html"] and VIEW in bundle


def test_nbval_compares_only_that_the_static_html_is_there():
    rules = re.findall(r"^regex: (.*)$\n^replace: (.*)$", SANITIZE.read_text(), re.M)

    def sanitize(text: str) -> str:
        for regex, replace in rules:
            text = re.sub(regex, replace, text)
        return text

    one = f"{STATIC_START}<div>0.21 s\n<b>completed</b></div>{STATIC_END}"
    two = f"{STATIC_START}<div>0.34 s\nwaiting for a run</div>{STATIC_END}"
    assert sanitize(one) == sanitize(two) != sanitize("no widget here")


@pytest.mark.slow
def test_in_a_kernel_the_stored_outputs_show_the_end_of_the_run(monkeypatch, notebook_build, tmp_path):
    monkeypatch.setenv("DREAMLOOP_AUTO_ANSWER", "1")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in (
        "import dreamloop as dl\n"
        "from dreamloop.widgets import AskPrompt, LiveView, StateInspector\n"
        "script = [dl.reply('Writing.', dl.tool_use('Write', {'file_path': 'x.txt', 'content': 'x'}, id='T1')),\n"
        "          dl.reply('Written.')]\n"
        "import os; root = os.getcwd()\n"
        "prompt = AskPrompt()\n"
        "display(prompt)\n"
        "run = dl.query(dl.QueryParams(messages='write x', model=dl.offline(script), tools=dl.builtin_tools(),\n"
        "                              workspace=root, ask=prompt))\n"
        "live = LiveView()\n"
        "display(live)\n"
        "terminal = await live.watch(run)",
        "StateInspector(run.trace)",
    )]
    notebook_build.notebook_client(nb, tmp_path, timeout=60).execute()
    first, second = nb.cells
    ask_html, live_html = (o["data"]["text/html"] for o in first.outputs if o["output_type"] == "display_data")
    assert "auto-answered: allow" in text_of(ask_html)
    assert "Terminal reason= completed" in text_of(live_html) or "reason=completed" in text_of(live_html)
    assert "Written." in text_of(live_html)
    (stored,) = second.outputs
    assert stored["data"]["text/plain"] == "StateInspector(checkpoints=2)" and VIEW in stored["data"]
    assert "Terminal completed" in text_of(stored["data"]["text/html"])


def test_svg_as_img_keeps_size_label_and_bytes():
    from dreamloop.widgets.static import svg_as_img

    svg = '<svg xmlns="http://www.w3.org/2000/svg" width="70" height="60" role="img" aria-label="a &amp; b"><text>x</text></svg>'
    html = svg_as_img(f"<p>before</p>{svg}<p>after</p>")
    assert html.startswith("<p>before</p><img ") and html.endswith("<p>after</p>") and "<svg" not in html
    assert 'width="70" height="60" alt="a &amp; b"' in html
    assert figures_of(html) == [svg] and svg_as_img(html) == html


def test_a_long_line_wraps_in_a_stored_copy_without_its_stylesheet():
    """A scrubbed session's placeholder (one unbroken line) pushed chapter 10b's inspector wider than its cell in
    an untrusted notebook, whose sanitiser drops <style>: every pane's <pre> wraps by its own inline style."""
    from dreamloop.widgets.html import PRE_WRAP, block_html, pane

    html = pane(block_html({"type": "text", "text": "[scrubbed sha256:a6a30a41f6c7]" + "~" * 400}, {}))
    assert f'style="{PRE_WRAP}' in html and "overflow-wrap:break-word" in PRE_WRAP  # the sanitiser's allowed value
    assert pane('<pre class="dl-pre" style="max-height:12em">x</pre>').count("<pre class=\"dl-pre\" style=") == 1
    assert pane("x").startswith('<div class="dl" style="overflow-wrap:break-word">')


async def test_a_stored_copy_breaks_words_only_where_a_word_is_longer_than_its_line(offline):
    """A fresh reader saw the untrusted snapshots break words mid-word ("fa/llback model", "检查/点"): the live
    stylesheet's ``overflow-wrap:anywhere`` (right for a flex item) shrank the stored copy's columns. The stored
    copy says ``break-word``; the live widget keeps ``anywhere``."""
    from dreamloop.widgets.html import STYLE

    live = LiveView()
    await live.watch(await two_turns(offline))
    run = await two_turns(offline)
    async for _ in run:
        pass
    for widget in (live, StateInspector(run.trace)):
        stored = static_of(widget)
        assert "overflow-wrap:anywhere" not in stored and ".dl *{overflow-wrap:break-word}" in stored
    assert ".dl *{overflow-wrap:anywhere}" in STYLE
