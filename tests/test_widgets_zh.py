"""The widgets in Chinese: under ``language("zh")`` their fixed labels are Chinese, the code's names stay.

Each widget is built on a real run, once in English (the default) and once after ``language("zh")``: the
buttons, the status line, the panes' notes, the header, the stored static fallback, the timeline's summary
and the flowchart's boxes follow the setting; ``turn_count``, ``transition``, the pane names and the reprs
(which nbval compares) do not change; no text is shown in English for want of its entry.
"""

from __future__ import annotations

import re

import pytest

from dreamloop import language as L
from dreamloop import scripts as S
from dreamloop.diagram import loop_flowchart_svg
from dreamloop.query import QueryParams, query
from dreamloop.tools import builtin_tools
from dreamloop.widgets import PANES, AskPrompt, LiveView, StateInspector, Timeline

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(params=["en", "zh"])
def lang(request):
    before = set(L.missing())
    L.language(request.param)
    try:
        yield request.param
    finally:
        L.language("en")
    assert set(L.missing()) == before, f"shown in English for want of an entry: {set(L.missing()) - before}"


def script():
    return [S.reply("Reading it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1"),
                    S.tool_use("Read", {"file_path": "greeter.py"}, id="toolu_2")),
            S.reply("value is 1.")]


async def followed(offline, tmp_path):
    (tmp_path / "config.py").write_text("value = 1\n")
    (tmp_path / "greeter.py").write_text("name = 'g'\n")
    run = query(QueryParams(messages="what is value?", model=offline(script()), tools=builtin_tools(),
                            workspace=tmp_path))
    live = LiveView()
    await live.watch(run)
    return run, live


def said(lang: str, english: str, chinese: str, text: str) -> bool:
    return (chinese if lang == "zh" else english) in text


async def test_the_live_view_follows_the_setting(lang, offline, tmp_path):
    _, live = await followed(offline, tmp_path)
    assert repr(live) == "LiveView()"
    assert live.stop_button.description == ("停止" if lang == "zh" else "Stop")
    assert said(lang, "ran ✓", "已执行 ✓", live.transcript.value)
    assert said(lang, "goes back to the model", "交回模型", live.transcript.value)
    assert "turn_count=" in live.transcript.value and "reason=<b>completed</b>" in live.status.value
    assert said(lang, "take the current State", "取当前 State", live.diagram.value)
    static = live._repr_mimebundle_()["text/html"]
    assert said(lang, "a snapshot stored with the notebook", "随笔记本保存的快照", static)
    fresh = LiveView()
    assert said(lang, "waiting for a run", "等待运行", fresh.status.value)
    assert bool(CJK.search(fresh.status.value + live.transcript.value)) is (lang == "zh")


async def test_the_inspector_follows_the_setting(lang, offline, tmp_path):
    run, _ = await followed(offline, tmp_path)
    inspector = StateInspector(run.trace)
    assert repr(inspector) == "StateInspector(checkpoints=2)"
    assert list(inspector.tabs.titles) == list(PANES)  # the source's collectors, in every language
    assert inspector.slider.description == ("检查点" if lang == "zh" else "checkpoint")
    assert said(lang, "checkpoint 0 (numbered 0 to 1)", "检查点 0（编号 0 至 1）", inspector.header.value)
    assert said(lang, "State.messages as the iteration began", "本次迭代开始时的 State.messages",
                inspector.panes["messages"].value)
    inspector.slider.value = 1
    assert said(lang, "+2 messages", "+2 条消息", inspector.header.value)
    assert said(lang, ", 2 new", "，2 条新增", inspector.panes["messages"].value)
    assert "turn_count=<b>2</b>" in inspector.header.value and "next_turn" in inspector.header.value
    table = inspector.static_html()
    assert said(lang, "<th", "之后", table)
    assert bool(CJK.search(inspector.header.value)) is (lang == "zh")


async def test_the_timeline_follows_the_setting(lang, offline, tmp_path):
    run, _ = await followed(offline, tmp_path)
    timeline = Timeline(run.trace)
    assert repr(timeline) == "Timeline(turns=2)"
    summary = timeline.summary(times=False)
    if lang == "zh":
        assert summary == "第 1 轮：模型，工具：Read ×2 并行\n第 2 轮：模型，无工具"
    else:
        assert summary == "turn 1: model, tools: Read ×2 in parallel\nturn 2: model, no tools"
    assert said(lang, "seconds since the run started", "自运行开始的秒数", timeline.chart.value)


async def test_the_ask_prompt_follows_the_setting(lang, monkeypatch):
    monkeypatch.delenv("DREAMLOOP_AUTO_ANSWER", raising=False)
    prompt = AskPrompt(timeout=0.05)
    assert (prompt.allow_button.description, prompt.deny_button.description) == \
        (("允许", "拒绝") if lang == "zh" else ("Allow", "Deny"))
    tool = builtin_tools()[0]
    decision = await prompt(tool, {"command": "ls"}, "Bash wants to run a command")
    assert type(decision).__name__ == "Deny"
    assert "no answer within" in decision.reason  # what the model reads stays English
    assert said(lang, "no answer within 0.05 s: denied", "0.05 秒内没有回答：已拒绝", prompt.status.value)
    assert said(lang, "Allow <b", "允许 <b", prompt.question.value)
    assert "Bash wants to run a command" in prompt.question.value  # a reason no built-in template made: as it is


async def test_the_ask_prompt_shows_a_tool_reason_in_the_setting(lang, offline, monkeypatch, tmp_path):
    """A built-in tool's own ``Ask`` reason is shown in the chapter's language; the Deny the model reads stays
    English."""
    monkeypatch.setenv("DREAMLOOP_AUTO_ANSWER", "deny")
    prompt = AskPrompt()
    run = query(QueryParams(messages="change value", tools=builtin_tools(), workspace=tmp_path, ask=prompt,
                            model=offline([S.reply("Editing.", S.tool_use("Write", {"file_path": "a.txt",
                                                                                        "content": "x"}, id="toolu_1")),
                                             S.reply("Done.")])))
    async for _ in run:
        pass
    assert said(lang, "Write wants to change a.txt", "Write 要修改 a.txt", prompt.question.value)
    result = run.trace.resolve(run.trace.checkpoints[-1].messages_for_query)[-1].message["content"][0]
    assert result["is_error"] and "Permission to use Write was denied" in result["content"]


def test_the_inspector_shows_a_session_file_notes_in_the_setting(lang):
    from pathlib import Path

    from dreamloop.claude_code import import_claude_code

    folder = Path(__file__).parent / "fixtures" / "claude-code-sessions"
    trace = import_claude_code(next(folder.glob("04_*.jsonl")))
    assert any(note.startswith("model call 1: ") for note in trace.checkpoints[0].notes)  # the trace keeps English
    inspector = StateInspector(trace, index=0)
    assert said(lang, "model call 1: ", "第 1 次模型调用：", inspector.header.value)
    assert said(lang, "usage: input ", "用量：输入 ", inspector.header.value)


def test_the_flowchart_follows_the_setting(lang):
    svg = loop_flowchart_svg("tools")
    assert said(lang, "4. run tools, collect tool_result", "4. 执行工具并收集 tool_result", svg)
    assert said(lang, "queryLoop(): one iteration", "queryLoop()：一次迭代", svg)
    assert 'id="phase-tools" class="phase active"' in svg
