"""ContextMeter and the inspector's stage marks, from real traces of the long session."""

from __future__ import annotations

import re

import dreamloop as dl
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.trace import Trace
from dreamloop.widgets import STAGE_COLORS, ContextMeter, StateInspector

from context_session import LONG_SESSION, read, reader, session_options


async def session(offline, tmp_path, options):
    model = offline(reader(LONG_SESSION, notes=3, chatty_from=28), context_window=6000, cache_min_tokens=256)
    run = dl.query(dl.QueryParams(messages="read the files", model=model, tools=[read], workspace=tmp_path,
                                  system_prompt="You read files.", context=options,
                                  deps=QueryDeps(uuid=counting_uuids())))
    [event async for event in run]
    return run


async def test_the_meter_shows_each_stage_and_the_cache(offline, tmp_path):
    run = await session(offline, tmp_path, session_options())
    meter = ContextMeter(run)
    assert repr(meter) == f"ContextMeter(turns={len(run.trace.checkpoints)})"
    assert meter._repr_mimebundle_()["text/plain"] == repr(meter)
    lines = meter.summary().splitlines()
    assert lines[0] == "turn 1: 125 tokens sent (window 6,000) · cache read 0, written 0"
    assert "tool_result_budget −703" in lines[1] and "cache read 0, written" in lines[1]
    fired = {stage for turn in meter.turns for stage, saved in turn.savings if saved > 0}
    assert fired == {"tool_result_budget", "snip", "microcompact", "context_collapse", "autocompact"}
    assert lines[-1].startswith("all requests: ") and "cache read " in lines[-1]
    assert all(turn.tokens == turn.cache_read + turn.cache_write + turn.uncached for turn in meter.turns)
    chart = meter.chart.value
    label = lambda *names: " · ".join(f'<tspan fill="{STAGE_COLORS[n]}">{n}</tspan>' for n in names)  # noqa: E731
    for name in (label("microcompact", "snip") + " 2,000", label("context_collapse") + " 2,600",
                 label("autocompact") + " 2,800", label("blocking_limit") + " 5,000", label("window") + " 6,000"):
        assert name in chart, name  # two thresholds at one height share one label: they never overlap
    ys = [float(y) for y in re.findall(r'<text x="\d+" y="([\d.]+)" font-size="11" fill="#[0-9a-f]+"><tspan', chart)]
    assert len(ys) == 5 and all(a - b >= 12 for a, b in zip(ys, ys[1:]))
    assert chart.count(f'fill="{STAGE_COLORS["autocompact"]}"') >= 2  # a saving bar and the legend
    loaded = ContextMeter(Trace.load(run.trace.save(tmp_path / "t.jsonl")))
    assert loaded.summary() == meter.summary()


async def test_the_meter_without_the_pipeline_shows_usage_only(offline, tmp_path):
    model = offline([dl.reply("hello")])
    run = dl.query(dl.QueryParams(messages="hi", model=model))
    [event async for event in run]
    meter = ContextMeter(run.trace)
    assert meter.summary().splitlines()[0].startswith("turn 1: ") and "window" not in meter.summary()
    assert ContextMeter(Trace()).summary() == "no turns yet"


async def test_the_inspector_marks_what_a_stage_wrote_and_unfolds_it(offline, tmp_path):
    run = await session(offline, tmp_path, session_options())
    inspector = StateInspector(run.trace, max_messages=None)
    point = next(p for p in run.trace.checkpoints if any(s["stage"] == "microcompact" for s in p.context["stages"]))
    inspector.slider.value = point.index
    pane = inspector.panes["messages_for_query"].value
    assert ">microcompact</span>" in pane and "microcompact wrote this: unfold the 1 original message" in pane
    assert "[tool result cleared to save context]" in pane
    cleared = next(u for u in point.messages_for_query if inspector.replaced_by(u) and
                   inspector.replaced_by(u)[0] == "microcompact")
    stage, originals = inspector.replaced_by(cleared)
    assert run.trace.messages[originals[0]].message["content"][0]["content"] != dl.context.CLEARED
    assert "context: " in inspector.header.value and "microcompact −" in inspector.header.value
    last = len(run.trace.checkpoints) - 1
    inspector.slider.value = last
    assert "autocompact wrote this: unfold the" in inspector.panes["messages_for_query"].value


async def test_the_meter_follows_the_inspector(offline, tmp_path):
    run = await session(offline, tmp_path, session_options())
    inspector = StateInspector(run.trace)
    meter = ContextMeter(run.trace).follow(inspector)
    assert meter.selected == 0 and 'fill="#fefcbf"' in meter.chart.value
    inspector.slider.value = 12
    assert meter.selected == 12
    meter.select(None)
    assert 'fill="#fefcbf"' not in meter.chart.value


async def test_the_stored_output_carries_the_chart(offline, tmp_path):
    from dreamloop.widgets.static import STATIC_END, STATIC_START

    run = await session(offline, tmp_path, session_options())
    bundle = ContextMeter(run.trace)._repr_mimebundle_()
    html = bundle["text/html"]
    assert bundle["text/plain"] == f"ContextMeter(turns={len(run.trace.checkpoints)})"
    assert html.startswith(STATIC_START) and html.endswith(STATIC_END)
    import base64, re

    assert "<svg" not in html  # stored as an image: an untrusted notebook's sanitiser drops inline SVG
    (data,) = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    chart = base64.b64decode(data).decode()
    assert "autocompact</tspan> 2,800" in chart and "turn 2: 370 tokens sent" in html
    # the summary scrolls in its own box even where the stylesheet is dropped (an untrusted notebook keeps
    # inline styles only): 40 turns must not stand 1,000 px tall under the chart
    (pre,) = re.findall(r"<pre [^>]*>", html)
    assert "max-height:18em;overflow:auto\"" in pre
