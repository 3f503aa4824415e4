"""The recovery branches in the widgets: the live view names each transition as it happens and strikes out
what a tombstone withdrew; the inspector's header shows the transition and the State's counters."""

from __future__ import annotations

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.query import QueryParams, query
from dreamloop.recovery import RecoveryOptions
from dreamloop.render import print_run
from dreamloop.widgets import LiveView, StateInspector


def cut(text):
    return S.reply(text, stop_reason="max_tokens")


def truncating_run(offline):
    model = offline([cut("The first cut answer"), cut("The escalated one, cut too"), S.reply("The end.")])
    return query(QueryParams(messages="write", model=model, recovery=RecoveryOptions(),
                             deps=QueryDeps(uuid=counting_uuids())))


async def test_the_live_view_names_escalate_and_resume_and_strikes_the_withdrawn_response(offline):
    live = LiveView()
    run = truncating_run(offline)
    await live.watch(run)
    transcript = live.transcript.value
    assert "transition=max_output_tokens_escalate · <b>escalating max_tokens to 64,000</b>" in transcript
    assert "transition=max_output_tokens_recovery · <b>resuming 1/3</b>" in transcript
    struck = transcript.split('<del class="dl-struck" style="display:block">', 1)[1]
    assert struck.index("The first cut answer") < struck.index("withdrawn by a tombstone")
    assert "The escalated one, cut too" in transcript.split("withdrawn by a tombstone")[1]  # not struck: it stays
    assert live.terminal.reason == "completed"


async def test_the_live_view_says_it_falls_back_and_strikes_the_partial(offline):
    overloaded = S.stream_error("Sure, I'll", after_events=4)
    model = offline([overloaded, S.reply("From the fallback.")], max_retries=0)
    run = query(QueryParams(messages="go", model=model, fallback_model="claude-fallback-1",
                            recovery=RecoveryOptions(overloads_before_fallback=1)))
    live = LiveView()
    async for event in live.follow(run):
        if event.type == "system" and event.subtype == "model_fallback":
            assert "falling back to claude-fallback-1" in live.status.value  # named as it happens
    transcript = live.transcript.value
    struck = '<del class="dl-struck" style="display:block">'
    assert struck in transcript and "Sure, I&#x27;ll" in transcript.split("dl-struck", 1)[1]
    assert "From the fallback." in transcript and live.stream.value == ""


async def test_the_inspector_shows_transitions_counters_and_struck_tombstoned_messages(offline):
    run = truncating_run(offline)
    async for _ in run:
        pass
    inspector = StateInspector(run)
    header = inspector.header.value
    assert "counters: " in header and "max_output_tokens_override=None" in header
    assert "next transition=<b>max_output_tokens_escalate</b> (escalating max_tokens to 64,000)" in header
    assert "rewritten by the recovery" in header
    pane = inspector.panes["assistant_messages"].value
    assert ">tombstoned</span>" in pane and "withdrawn by a tombstone" in pane
    first = run.trace.checkpoints[0].assistant_messages[0]
    assert inspector.withdrawn(first).startswith("max_output_tokens_escalate")
    inspector.slider.value = 2
    header = inspector.header.value
    assert "transition=<b>max_output_tokens_recovery</b> (resuming 1/3)" in header
    assert "<b>max_output_tokens_recovery_count=1</b>" in header
    assert "<b>max_output_tokens_override=64,000</b>" in header
    assert "max_output_tokens_recovery_count 0→1" in header  # what changed since the previous checkpoint


async def test_without_recovery_the_inspector_header_is_as_before(offline):
    run = query(QueryParams(messages="hi", model=offline([S.reply("hello")])))
    async for _ in run:
        pass
    assert "counters" not in StateInspector(run).header.value


async def test_print_run_names_the_transition_and_the_tombstone(offline, capsys):
    from rich.console import Console

    await print_run(truncating_run(offline), Console(width=120, no_color=True))
    out = capsys.readouterr().out
    assert "transition=max_output_tokens_escalate (escalating max_tokens to 64,000)" in out
    assert "tombstone  withdrawn" in out and "transition=max_output_tokens_recovery (resuming 1/3)" in out


def test_the_switchboard_shows_each_switch_on_or_off_per_run(offline):
    from dreamloop.widgets import Switchboard, switch_fields

    model = offline([])
    board = Switchboard({"plain": QueryParams(messages="hi", model=model),
                         "chapter 08": QueryParams(messages="hi", model=model, recovery=RecoveryOptions(),
                                                   fallback_model="claude-fallback-1", token_budget=1000)})
    assert [name for name, _, _ in switch_fields()] == ["results_as_finished", "streaming_tool_execution",
                                                       "sibling_rule", "context", "hooks", "recovery",
                                                       "observed_output_limits", "fallback_model", "token_budget",
                                                       "memory_files", "changed_files", "file_state",
                                                       "tool_use_summaries", "environment", "sub_agents",
                                                       "background_tasks"]
    assert [chapter for _, chapter, _ in switch_fields()] == ["04", "05", "05", "06", "07", "08", "08", "08", "08",
                                                             "03", "03", "04", "03", "06", "12", "12"]
    assert board.on("plain") == [] and board.on("chapter 08") == ["recovery", "fallback_model", "token_budget"]
    assert repr(board) == "Switchboard(switches=16, columns=2)"
    html = board.table.value
    assert html.count('class="dl-sw-on"') == 3 and html.count('class="dl-sw-off"') == 29
    assert "● claude-fallback-1" in html and "dreamloop:static" in board._repr_mimebundle_()["text/html"]
