"""The context pipeline in the loop: every stage alone and all together on the same long session.

Every run uses the ``offline`` fixture, so every request the loop sends must pass
the offline API's validation (no orphan results, no split pairs, no empty blocks).
"""

from __future__ import annotations

import json

import pytest

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.context import (
    COMPACT_SYSTEM_PROMPT,
    SUMMARY_PREFIX,
    STAGES,
    Autocompact,
    BlockingLimit,
    ContextOptions,
    ContextPipeline,
    Microcompact,
    SystemPromptAssembly,
    ToolResultBudget,
    messages_after_compact_boundary,
)
from dreamloop.context.autocompact import is_compact_boundary
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.errors import CompactionFailed
from dreamloop.messages import normalize_messages_for_api
from dreamloop.state import State
from dreamloop.tools import builtin_tools
from dreamloop.trace import TRACE_VERSION, Trace

from context_session import LONG_SESSION, contents, read, reader, session_options

SYSTEM = "You read files for the user."


def requests_of(model):
    return [r for r in model.api.requests if r.path.endswith("/v1/messages") and r.status == 200]


def loop_requests(model):
    return [r.body for r in requests_of(model) if r.body.get("system") != COMPACT_SYSTEM_PROMPT]


async def run_session(offline, tmp_path, options, paths=LONG_SESSION, *, notes=3, window=6000, **policy_kw):
    policy = reader(paths, notes=notes, chatty_from=28, **policy_kw)
    model = offline(policy, context_window=window, cache_min_tokens=256, keep_bodies=None)  # every body read
    run = dl.query(dl.QueryParams(messages="read the files", model=model, tools=[read], workspace=tmp_path,
                                  system_prompt=SYSTEM, context=options, deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    return run, model, policy, events


def quoted(path):
    """A result's text as it appears inside JSON."""
    return json.dumps(contents(path))[1:-1]


def notices(events, subtype=None):
    return [e for e in events if e.type == "system" and (subtype is None or e.subtype == subtype)]


# ---------------------------------------------------------------------------
# Every stage alone, then all together


ALONE = {
    "tool_result_budget": ContextOptions(tool_result_budget=ToolResultBudget(max_result_tokens=400)),
    "snip": ContextOptions(snip=session_options().snip),
    "microcompact": ContextOptions(microcompact=session_options().microcompact),
    "context_collapse": ContextOptions(context_collapse=session_options().context_collapse),
    "autocompact": ContextOptions(autocompact=session_options().autocompact),
}
SUBTYPE = {"autocompact": "compact_boundary"}


@pytest.mark.parametrize("stage", list(ALONE))
async def test_each_stage_alone_reduces_the_context(offline, tmp_path, stage):
    run, model, policy, events = await run_session(offline, tmp_path, ALONE[stage], window=20_000)
    fired = notices(events, SUBTYPE.get(stage, stage))
    assert fired, f"{stage} never fired"
    assert {e.subtype for e in notices(events)} == {SUBTYPE.get(stage, stage)}
    for notice in fired:
        meta = notice.metadata
        assert meta["stage"] == stage and meta["tokens_after"] < meta["tokens_before"]
        assert meta["replaced"] and all(isinstance(v, list) for v in meta["replaced"].values())
    assert run.terminal.reason == "completed"
    # each stage changed only what it owns: a request after it fired says so
    sent = json.dumps(loop_requests(model)[-1])
    marker = {"tool_result_budget": "<persisted-output>", "snip": "[snipped:", "microcompact": dl.context.CLEARED,
              "context_collapse": "<collapsed", "autocompact": SUMMARY_PREFIX[:40]}[stage]
    assert marker in sent


async def test_all_stages_together_each_fires_in_turn(offline, tmp_path):
    run, model, policy, events = await run_session(offline, tmp_path, session_options())
    assert run.terminal.reason == "completed" and policy.compactions == 1
    first = {}
    for point in run.trace.checkpoints:
        for stage in point.context["stages"]:
            first.setdefault(stage["stage"], point.turn_count)
    assert list(first) == ["tool_result_budget", "snip", "microcompact", "context_collapse", "autocompact"]
    assert list(first.values()) == sorted(first.values())
    # what the pipeline counted is what the API billed: estimate and usage agree, turn by turn
    for point in run.trace.checkpoints:
        for message in run.trace.resolve(point.assistant_messages):
            usage = message.message.usage
            assert point.context["tokens"] == (usage.input_tokens + usage.cache_read_input_tokens
                                               + usage.cache_creation_input_tokens)
    # nothing ever got close to the window, and the cache was read on most turns
    assert max(p.context["tokens"] for p in run.trace.checkpoints) < 3000
    usages = [r.body for r in requests_of(model)]
    assert len(usages) == len(LONG_SESSION) + 2  # forty reads, the answer, one summarising request


async def test_the_transcript_keeps_everything_the_state_forgets(offline, tmp_path):
    policy = reader(LONG_SESSION, notes=3, chatty_from=28)
    engine = QueryEngine(transcript=tmp_path / "session.jsonl", model=offline(policy, context_window=6000),
                         tools=[read], workspace=tmp_path, system_prompt=SYSTEM, context=session_options(),
                         deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message("read the files"):
        pass
    saved = load_transcript(tmp_path / "session.jsonl")
    text = json.dumps([m.model_dump(mode="json") for m in saved])
    assert quoted("huge-1") in text and quoted("long-1") in text  # unreduced, on disk
    assert sum(is_compact_boundary(m) for m in saved) == 1
    boundary = next(m for m in saved if is_compact_boundary(m))
    summary = saved[saved.index(boundary) + 1]
    assert summary.uuid == boundary.metadata["summary_uuid"] and summary.message["content"].startswith(SUMMARY_PREFIX)
    final_state = engine.last_run.state.messages
    assert quoted("huge-1") not in json.dumps([m.model_dump(mode="json") for m in final_state])
    # resuming from the file: the model sees the summary first, then the kept tail (moved back after it)
    view = messages_after_compact_boundary(saved)
    assert view[0] is not None and view[0].uuid == boundary.uuid and view[1].uuid == summary.uuid
    sent = normalize_messages_for_api(view)
    assert sent[0]["content"][0]["text"].startswith(SUMMARY_PREFIX)
    assert dl.fake_api.validate_request({"model": "m", "max_tokens": 5, "messages": sent}) is None


async def test_an_incremental_pipeline_decides_what_a_fresh_one_would(offline, tmp_path):
    """The pipeline remembers between turns only to save time: on each State, a fresh pipeline sends the same."""
    options = session_options(autocompact=None)
    run, model, _, _ = await run_session(offline, tmp_path, options)
    for point in run.trace.checkpoints[1:]:
        state = State(messages=tuple(run.trace.resolve(point.state_messages)), turn_count=point.turn_count)
        fresh = ContextPipeline(options, model=model, system_prompt=SYSTEM, tools=[read], workspace=tmp_path,
                                uuid=counting_uuids(10_000), clock=lambda: 0.0)
        prepared = await fresh.prepare(state)
        sent = normalize_messages_for_api(run.trace.resolve(point.messages_for_query))
        assert normalize_messages_for_api(prepared.messages_for_query) == sent, point.index


# ---------------------------------------------------------------------------
# The prefix stays byte-stable; the cache shows it


async def test_system_prompt_assembly_gives_the_same_prefix_bytes_every_turn(offline, tmp_path):
    options = ContextOptions(system_prompt=SystemPromptAssembly(system_context={"workspace": "/ws", "os": "linux"},
                                                                user_context={"conventions": "Tabs, not spaces."}),
                             prompt_caching=True)
    run, model, _, _ = await run_session(offline, tmp_path, options, LONG_SESSION[:6])
    bodies = loop_requests(model)

    def strip(value):
        return json.loads(json.dumps(value).replace(', "cache_control": {"type": "ephemeral"}', ""))

    for before, after in zip(bodies, bodies[1:]):
        assert json.dumps(before["system"]) == json.dumps(after["system"])
        assert json.dumps(before["messages"][0]) == json.dumps(after["messages"][0]) or len(before["messages"]) == 1
        size = len(before["messages"])
        assert strip(after["messages"][:size - 1]) == strip(before["messages"][:size - 1])
    system = bodies[0]["system"]
    assert [b["text"] for b in system] == [SYSTEM, "workspace: /ws\nos: linux"]
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    assert bodies[0]["messages"][0]["content"][0]["text"].startswith("<system-reminder>")
    assert bodies[0]["messages"][0]["content"][1]["text"] == "read the files"  # merged after the user context
    reads = [m.message.usage.cache_read_input_tokens for m in run.messages if m.type == "assistant"]
    assert reads[0] == 0 and all(b > a for a, b in zip(reads[1:], reads[2:]))


async def test_microcompact_clears_in_batches_so_the_cache_breaks_rarely(offline, tmp_path):
    options = ContextOptions(microcompact=Microcompact(threshold=1500, keep_recent=2, min_savings=600),
                             prompt_caching=True)
    run, model, _, events = await run_session(offline, tmp_path, options, ["mid-%d" % n for n in range(30)])
    cleared = notices(events, "microcompact")
    assert 1 <= len(cleared) <= 4
    usages = [m.message.usage for m in run.messages if m.type == "assistant"]
    assert usages[0].cache_creation_input_tokens == 0  # the first prompt is too short to cache
    misses = [u for u in usages[2:] if u.cache_read_input_tokens == 0]
    assert len(misses) == len(cleared)  # after that, the prefix broke exactly when a batch was cleared


# ---------------------------------------------------------------------------
# Heavy stages: autocompact and the blocking limit


async def test_autocompact_asks_the_model_through_the_same_api(offline, tmp_path):
    options = ContextOptions(autocompact=Autocompact(threshold=2000, keep_recent=4))
    run, model, policy, events = await run_session(offline, tmp_path, options, LONG_SESSION[:20], window=20_000,
                                                   summary="Primary request: read the files. Read 12 so far.")
    assert policy.compactions >= 1
    compaction = next(r for r in requests_of(model) if r.body.get("system") == COMPACT_SYSTEM_PROMPT)
    assert "tools" not in compaction.body and compaction.script_index is not None  # a script item, like any request
    last = compaction.body["messages"][-1]
    assert last["role"] == "user" and last["content"][-1]["text"].startswith("Write a summary of the conversation")
    following = loop_requests(model)[[r.index for r in requests_of(model)].index(compaction.index)]
    said = "Primary request: read the files. Read 12 so far."
    assert following["messages"][0]["content"][0]["text"] == SUMMARY_PREFIX + said
    boundary = notices(events, "compact_boundary")[-1]
    meta = boundary.metadata
    assert meta["trigger"] == "auto" and meta["tokens_after"] < meta["tokens_before"]
    tracking = run.state.auto_compact_tracking  # the last State's: it saw every compaction but a final one
    assert tracking.compacted and tracking.consecutive_failures == 0
    assert tracking.turn_id in [b.uuid for b in notices(events, "compact_boundary")]


async def test_a_compaction_that_cannot_help_stops_after_max_failures(offline, tmp_path):
    options = ContextOptions(autocompact=Autocompact(threshold=1200, keep_recent=4, max_failures=3))
    run, model, policy, events = await run_session(offline, tmp_path, options, LONG_SESSION[:16], window=20_000,
                                                   summaries=[""] * 10)
    failed = notices(events, "autocompact_failed")
    assert policy.compactions == 3 and len(failed) == 3
    assert [n.metadata["consecutive_failures"] for n in failed] == [1, 2, 3]
    assert "off for the rest of this run" in failed[-1].content and failed[-1].metadata["stopped"]
    assert run.terminal.reason == "completed"


async def test_blocking_limit_sends_nothing(offline, tmp_path):
    options = ContextOptions(blocking_limit=BlockingLimit(limit=1500))
    run, model, policy, events = await run_session(offline, tmp_path, options, LONG_SESSION)
    assert run.terminal.reason == "blocking_limit"
    stop = notices(events, "blocking_limit")[0]
    assert stop.level == "error" and stop.metadata["tokens_before"] > 1500
    sent = len(requests_of(model))
    assert sent == run.terminal.turn_count - 1  # the last turn's request was never sent
    assert events[-1] is stop and not any(e.type == "stream_request_start" for e in events[events.index(stop):])
    tiny = dl.offline([S.reply("hi")])
    options = ContextOptions(blocking_limit=BlockingLimit(limit=10))
    blocked = dl.query(dl.QueryParams(messages="x" * 400, model=tiny, context=options))
    assert [e.type async for e in blocked] == ["system"]
    assert [r.path for r in tiny.api.requests] == ["/v1/models/claude-scripted-1"]  # its window; no message sent
    assert blocked.terminal.reason == "blocking_limit" and blocked.terminal.turn_count == 1


@pytest.mark.parametrize("reactive, autocompact, sent", [(True, True, 1), (False, True, 0), (True, False, 0)])
async def test_autocompact_and_reactive_compaction_own_the_blocking_limit(reactive, autocompact, sent):
    """The source skips the blocking-limit check when reactive compaction and autocompact are both on:
    the request goes (and a 400 would be recovered); with either off, nothing is sent."""
    from dreamloop.context import Autocompact
    from dreamloop.recovery import RecoveryOptions

    tiny = dl.offline([S.reply("hi")])
    options = ContextOptions(blocking_limit=BlockingLimit(limit=10),
                             autocompact=Autocompact(threshold=10**6) if autocompact else None)
    run = dl.query(dl.QueryParams(messages="x" * 400, model=tiny, context=options,
                                  recovery=RecoveryOptions(reactive_compact_retry=reactive)))
    [e async for e in run]
    assert len([r for r in tiny.api.requests if r.path.endswith("/v1/messages")]) == sent
    assert run.terminal.reason == ("completed" if sent else "blocking_limit")


async def test_without_the_pipeline_the_window_ends_the_run(offline, tmp_path):
    run, model, _, _ = await run_session(offline, tmp_path, None, LONG_SESSION)
    assert run.terminal.reason == "prompt_too_long" and "tokens > 6000 maximum" in run.terminal.error


# ---------------------------------------------------------------------------
# The tool-result budget, through the real tools: the model reads the file back


async def test_a_persisted_result_can_be_read_back(offline, tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(3000)))
    script = [
        S.reply(S.tool_use("Bash", {"command": "cat big.txt"}, id="T1")),
        S.reply(S.tool_use("Read", {"file_path": ".dreamloop/tool-results/T1.txt", "offset": 2990}, id="T2")),
        S.reply("The file ends at line 2999."),
    ]
    model = offline(script)
    run = dl.query(dl.QueryParams(messages="what is at the end of big.txt?", model=model, tools=builtin_tools(),
                                  workspace=tmp_path, permission_mode="bypass",
                                  context=ContextOptions(tool_result_budget=ToolResultBudget(max_result_tokens=1000))))
    [event async for event in run]
    second = loop_requests(model)[1]["messages"][-1]["content"][0]["content"]
    assert second.startswith("<persisted-output>") and ".dreamloop/tool-results/T1.txt" in second
    third = loop_requests(model)[2]["messages"][-1]["content"][0]["content"]
    assert "line 2999" in third and "line 2990" in third


# ---------------------------------------------------------------------------
# F16 through the loop, and token counting through the API


async def test_f16_what_the_model_read_last_turn_is_in_the_request_that_edits(offline, tmp_path):
    (tmp_path / "config.py").write_text("value = 1\n" + "# padding line\n" * 200)
    reads = [S.reply(S.tool_use("Read", {"file_path": "config.py"})) for _ in range(4)]
    script = [*reads, S.reply(S.tool_use("Edit", {"file_path": "config.py", "old_string": "value = 1",
                                                  "new_string": "value = 2"})), S.reply("Done.")]
    model = offline(script)
    options = ContextOptions(microcompact=Microcompact(threshold=0, keep_recent=0, min_savings=0))
    run = dl.query(dl.QueryParams(messages="set value to 2", model=model, tools=builtin_tools(), workspace=tmp_path,
                                  permission_mode="accept-edits", context=options))
    events = [event async for event in run]
    assert notices(events, "microcompact")
    edit_request = loop_requests(model)[4]["messages"]
    results = [b for m in edit_request if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    assert all(r["content"].startswith("     1\tvalue = 1") for r in results[-2:])
    assert all(r["content"] == dl.context.CLEARED for r in results[:-2])
    assert (tmp_path / "config.py").read_text().startswith("value = 2")


async def test_counting_through_the_api_decides_the_same_offline(offline, tmp_path):
    estimated, _, _, _ = await run_session(offline, tmp_path / "a", session_options())
    counted, model, _, _ = await run_session(offline, tmp_path / "b", session_options(count_tokens="api"))
    assert [p.context["tokens"] for p in counted.trace.checkpoints] == \
        [p.context["tokens"] for p in estimated.trace.checkpoints]
    assert any(r.path.endswith("/count_tokens") for r in model.api.requests)


# ---------------------------------------------------------------------------
# The recovery entry points (for collapse_drain_retry and reactive_compact_retry) and the pre_compact hook


async def test_drain_and_reactive_compaction_from_the_pipeline(offline, tmp_path):
    options = session_options(autocompact=None, context_collapse=session_options().context_collapse.model_copy(
        update={"threshold": 100_000}))
    run, model, _, _ = await run_session(offline, tmp_path, options, LONG_SESSION[:30])
    calls = []

    async def pre_compact(trigger, instructions):
        calls.append((trigger, instructions))
        return "Keep every file name."

    summarise = offline([S.reply("Primary request: read the files.")])
    pipeline = ContextPipeline(options, model=summarise, system_prompt=SYSTEM, tools=[read], workspace=tmp_path,
                               uuid=counting_uuids(50_000), clock=lambda: 0.0, pre_compact=pre_compact)
    history = list(run.state.messages)
    drained, drained_notices, committed = pipeline.drain_collapses(history)
    assert committed >= 1 and len(drained) < len(history)
    assert drained_notices[0].metadata["trigger"] == "collapse_drain_retry"
    assert pipeline.drain_collapses(drained)[2] == 0  # nothing left to drain
    done = await pipeline.reactive_compact(drained)
    assert calls == [("reactive", None)]
    asked = summarise.api.requests[-1].body["messages"][-1]["content"][-1]["text"]
    assert asked.endswith("Additional instructions:\nKeep every file name.")
    assert done.boundary.metadata["trigger"] == "reactive" and done.messages[0] is done.boundary
    assert dl.fake_api.validate_request({"model": "m", "max_tokens": 5,
                                         "messages": normalize_messages_for_api(done.messages)}) is None


# ---------------------------------------------------------------------------
# The trace records what phase 2 did; old traces still load


async def test_the_trace_records_the_pipeline_and_round_trips(offline, tmp_path):
    run, _, _, _ = await run_session(offline, tmp_path, session_options())
    saved = Trace.load(run.trace.save(tmp_path / "trace.jsonl"))
    assert [p.context for p in saved.checkpoints] == [p.context for p in run.trace.checkpoints]
    assert saved.switches["context"]["autocompact"]["threshold"] == 2800
    header = json.loads((tmp_path / "trace.jsonl").read_text().splitlines()[0])
    assert header["version"] == TRACE_VERSION >= 5
    record = saved.checkpoints[1].context
    assert record["window"] == 6000 and record["thresholds"]["autocompact"] == 2800
    budget = {"stage": "tool_result_budget", "before": record["tokens_in"], "after": record["tokens"]}
    assert record["stages"] == [budget]


def test_a_version_1_trace_still_loads(tmp_path):
    lines = [{"kind": "trace", "version": 1},
             {"kind": "message",
              "message": {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}},
             {"kind": "checkpoint", "checkpoint": {"index": 0, "turn_count": 1, "state_messages": ["u1"],
                                                   "messages_for_query": ["u1"],
                                                   "terminal": {"reason": "completed", "turn_count": 1}}}]
    path = tmp_path / "v1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    trace = Trace.load(path)
    assert trace.checkpoints[0].context is None and trace.switches == {} and trace.terminal.reason == "completed"
    path.write_text(json.dumps({"kind": "trace", "version": 99}) + "\n")
    with pytest.raises(ValueError, match="trace version 99"):
        Trace.load(path)


def test_the_stage_names_are_the_options_fields():
    assert STAGES == tuple(name for name in ContextOptions.model_fields if name in STAGES)
    assert len(STAGES) == 7


# ---------------------------------------------------------------------------
# The pre_compact hook event, through QueryParams(hooks=...)


async def test_pre_compact_hooks_run_before_each_compaction(offline, tmp_path):
    from dreamloop.hooks import Hooks, PreCompactDecision

    seen = []

    def note(input):
        seen.append(input.trigger)
        return PreCompactDecision(system_message="saving a copy of the transcript first")

    options = ContextOptions(autocompact=Autocompact(threshold=2000, keep_recent=4))
    policy = reader(LONG_SESSION[:16], notes=3)
    model = offline(policy, context_window=20_000)
    run = dl.query(dl.QueryParams(messages="read the files", model=model, tools=[read], workspace=tmp_path,
                                  context=options, hooks=Hooks().add("pre_compact", note, matcher="auto"),
                                  deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    assert policy.compactions >= 1 and seen == ["auto"] * policy.compactions
    records = [i for i, e in enumerate(events)
               if e.type == "attachment" and e.attachment.get("hookEvent") == "PreCompact"]
    boundary = next(i for i, e in enumerate(events) if e.type == "system" and e.subtype == "compact_boundary")
    assert records and records[0] < boundary  # what the hook said comes before the compaction
    assert run.terminal.reason == "completed"


async def test_a_pre_compact_hook_can_stop_the_run(offline, tmp_path):
    from dreamloop.hooks import Hooks, PreCompactDecision

    options = ContextOptions(autocompact=Autocompact(threshold=2000, keep_recent=4))
    policy = reader(LONG_SESSION[:16], notes=3)
    model = offline(policy, context_window=20_000)
    hooks = Hooks().add("pre_compact", lambda input: PreCompactDecision(continue_=False, stop_reason="no compaction"))
    run = dl.query(dl.QueryParams(messages="read the files", model=model, tools=[read], workspace=tmp_path,
                                  context=options, hooks=hooks, deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    assert run.terminal.reason == "hook_stopped" and policy.compactions == 0
    assert events[-1].type == "system" and "no compaction" in events[-1].content


@pytest.mark.parametrize("answer, asked, stops", [
    (None, "Be brief.", False),
    ("Keep every file name.", "Be brief.\n\nKeep every file name.", False),
    ("PreCompactResult", "Be brief.\n\nKeep the paths.", False),
    ("stop", None, True),
], ids=["none", "a string", "a result", "a stop"])
async def test_autocompact_and_the_reactive_compaction_ask_the_hooks_the_same_way(offline, tmp_path, answer, asked,
                                                                                     stops):
    """One pre_compact path for both compactions (issue 39, item 5): what each shape a hook callable may return
    adds to the instructions, says to the person, or stops, the same for the automatic and the reactive one."""
    from dreamloop.context import PreCompactResult

    said = dl.messages.SystemMessage(uuid="hook-note", subtype="hook_note", content="saving the transcript first")
    triggers = []

    async def pre_compact(trigger, instructions):
        triggers.append((trigger, instructions))
        if answer == "PreCompactResult":
            return PreCompactResult(instructions="Keep the paths.", messages=(said,))
        if answer == "stop":
            return PreCompactResult(messages=(said,), stop=True, stop_reason="not now")
        return answer

    options = ContextOptions(context_window=6000, autocompact=Autocompact(threshold=500, keep_recent=4,
                                                                          custom_instructions="Be brief."))
    run, _, _, _ = await run_session(offline, tmp_path, ContextOptions(), LONG_SESSION[:6])
    history = list(run.state.messages)
    ends = {}
    for trigger in ("auto", "reactive"):
        summarise = offline([S.reply("Primary request: read the files.")])
        pipeline = ContextPipeline(options, model=summarise, system_prompt=SYSTEM, tools=[read], workspace=tmp_path,
                                   uuid=counting_uuids(50_000), clock=lambda: 0.0, pre_compact=pre_compact)
        if trigger == "auto":
            prepared = await pipeline.prepare(State(messages=history))
            ends[trigger] = prepared.terminal.reason if prepared.terminal else None
            hook_said = [m for m in prepared.yielded if m.uuid == "hook-note"]
        else:
            try:
                done = await pipeline.reactive_compact(history)
            except CompactionFailed as failure:
                ends[trigger], hook_said = str(failure), []
            else:
                ends[trigger], hook_said = None, [m for m in done.hook_messages if m.uuid == "hook-note"]
        requests = [r.body for r in summarise.api.requests if r.path.endswith("/v1/messages")]
        if stops:
            assert requests == []
        else:
            ask = requests[-1]["messages"][-1]["content"][-1]["text"]
            assert ask.endswith(f"Additional instructions:\n{asked}"), (trigger, ask[-80:])
        assert len(hook_said) == (1 if answer in ("PreCompactResult", "stop") and trigger == "auto"
                                  or answer == "PreCompactResult" else 0), trigger
    assert triggers == [("auto", "Be brief."), ("reactive", "Be brief.")]
    assert ends == ({"auto": "hook_stopped", "reactive": "a pre_compact hook stopped the run: not now"} if stops
                    else {"auto": None, "reactive": None})


def test_a_state_holds_its_messages_as_a_tuple():
    from dreamloop.messages import user_message

    message = user_message("hi")
    state = State(messages=[message])
    assert state.messages == (message,) and isinstance(state.messages, tuple)


async def test_an_abort_during_a_compaction_ends_the_run_cleanly(offline, tmp_path):
    import asyncio

    from dreamloop.context import is_compaction_request

    holder = {}
    plain = reader(LONG_SESSION[:16], notes=3)

    def policy(body, index):
        if is_compaction_request(body):  # stop while the summary streams (slowly)
            asyncio.get_running_loop().call_later(0.05, holder["run"].abort)
            return S.reply("A summary that takes a while to arrive. " * 10, tokens_per_second=50, chunk_size=4)
        return plain(body, index)

    model = offline(policy, context_window=20_000)
    run = holder["run"] = dl.query(dl.QueryParams(
        messages="read the files", model=model, tools=[read], workspace=tmp_path,
        context=ContextOptions(autocompact=Autocompact(threshold=2000, keep_recent=4)),
        deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    assert run.terminal.reason == "aborted_streaming"
    assert events[-1].type == "system" and events[-1].subtype == "interrupted"
    assert not any(e.type == "system" and e.subtype == "compact_boundary" for e in events)
    # issue 32: the model is told too, once, after the history it was about to be sent
    from dreamloop.endings import INTERRUPTED_COMPACTION_NOTE, is_interrupted_note
    assert [e.message["content"] for e in events if is_interrupted_note(e)] == [INTERRUPTED_COMPACTION_NOTE]
    assert is_interrupted_note(events[-2]) and run.trace.checkpoints[-1].messages_for_query[-2] == events[-2].uuid


MALFORMED = (  # a delta for a block that never started: the SDK's stream is malformed (found by the property test)
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_raw","type":"message",'
    '"role":"assistant","model":"claude-scripted-1","content":[],"stop_reason":null,"stop_sequence":null,'
    '"usage":{"input_tokens":12,"output_tokens":0}}}\n\n'
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":99,"delta":{"type":"text_delta",'
    '"text":"x"}}\n\n'
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
    '"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n')


@pytest.mark.parametrize("answer", ["malformed", "disconnect", "http_error"])
async def test_a_summarising_request_that_breaks_is_a_failed_compaction(offline, tmp_path, answer):
    from dreamloop.context import is_compaction_request
    from dreamloop.fake_api import RawTurn

    plain = reader(LONG_SESSION[:12], notes=3)
    broken = {"malformed": RawTurn(sse=MALFORMED), "disconnect": S.disconnect("Summ", after_events=2),
              "http_error": S.http_error(500, retry_after_ms=None)}[answer]

    def policy(body, index):
        return broken if is_compaction_request(body) else plain(body, index)

    model = offline(policy, context_window=20_000, max_retries=0)
    run = dl.query(dl.QueryParams(messages="read the files", model=model, tools=[read], workspace=tmp_path,
                                  context=ContextOptions(autocompact=Autocompact(threshold=1500, keep_recent=4)),
                                  deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    failed = notices(events, "autocompact_failed")
    assert run.terminal.reason == "completed" and failed
    assert "the summarising request failed" in failed[0].content


def test_the_budget_needs_somewhere_to_write_before_anything_runs(tmp_path):
    model = dl.offline([S.reply("hi")])
    with pytest.raises(ValueError, match="tool_result_budget writes oversized results to a file"):
        dl.QueryParams(messages="hi", model=model, context=ContextOptions(tool_result_budget=True))
    dl.QueryParams(messages="hi", model=model, context=ContextOptions(tool_result_budget=True), workspace=tmp_path)
    dl.QueryParams(messages="hi", model=model,
                   context=ContextOptions(tool_result_budget=ToolResultBudget(directory=tmp_path)))
