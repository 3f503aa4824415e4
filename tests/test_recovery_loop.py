"""The recovery branches through the real loop: each transition reached on purpose, with its bound.

Escalate and resume after a ``max_tokens`` cut (F6, F15), collapse drain and reactive compaction
after ``prompt is too long`` (F9), the fallback model after overloads with tombstones (F7), the
token budget. Recovery passes keep ``turn_count``; only next_turn adds one and resets the per-turn
counters. A tombstoned message never reaches a later request; signed blocks go back byte-identical;
the ``offline`` fixture asserts that every request was valid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.context import Autocompact, ContextCollapse, ContextOptions, is_compaction_request
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.presets import observed_recovery
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.fake_api import recorded_turn
from dreamloop.messages import normalize_messages_for_api
from dreamloop.query import QueryParams, query
from dreamloop.recovery import RESUME_MESSAGE, RecoveryOptions, reminder
from dreamloop.tools import tool
from dreamloop.trace import Trace

FIXTURES = Path(__file__).parent / "fixtures" / "recorded"


class PathInput(BaseModel):
    path: str


def reader(ran: list[str] | None = None):
    @tool(PathInput, name="Read", read_only=True)
    async def read(input: PathInput) -> str:
        """Read a file."""
        if ran is not None:
            ran.append(input.path)
        return f"{input.path}: ok"

    return read


async def drain(run):
    return [event async for event in run]


def bodies(model, path="/v1/messages"):
    return [r.body for r in model.api.requests if r.path.endswith(path)]


def transitions(run):
    return [(p.turn_count, p.transition.reason if p.transition else None) for p in run.trace.checkpoints]


def params(model, **kw):
    return QueryParams(messages=kw.pop("messages", "go"), model=model, deps=QueryDeps(uuid=counting_uuids()), **kw)


def cut(*blocks):
    return S.reply(*blocks, stop_reason="max_tokens")


# ---------------------------------------------------------------------------
# max_tokens: escalate once, then resume at most 3 times; a bounded number of requests


async def test_an_always_truncating_model_makes_five_requests_and_ends_completed(offline):
    model = offline(lambda body, i: cut(f"part {i} of a very long essay"))
    run = query(params(model, recovery=RecoveryOptions()))
    events = await drain(run)
    sent = bodies(model)
    assert [b["max_tokens"] for b in sent] == [4096, 64_000, 64_000, 64_000, 64_000]  # 1 + escalation + 3 resumes
    assert [r.path for r in model.api.requests].count("/v1/models/claude-scripted-1") == 1  # its limit, asked once
    assert run.terminal.reason == "completed" and run.terminal.turn_count == 1
    assert transitions(run) == [(1, None), (1, "max_output_tokens_escalate"), (1, "max_output_tokens_recovery"),
                                (1, "max_output_tokens_recovery"), (1, "max_output_tokens_recovery")]
    assert [p.next_transition.attempt for p in run.trace.checkpoints[1:-1]] == [1, 2, 3]
    # withheld while recovery could help, shown once at the end, as a notice (never as assistant text)
    notices = [e for e in events if e.type == "system"]
    assert [(n.subtype, n.level) for n in notices] == [("max_output_tokens", "error")]
    assert events.index(notices[0]) > max(i for i, e in enumerate(events) if e.type == "assistant")
    # the escalated retry is the same request: the cut response was withdrawn, never sent again
    (tombstone,) = [e for e in events if e.type == "tombstone"]
    first = next(e for e in events if e.type == "assistant")
    assert tombstone.target_uuid == first.uuid
    assert sent[1]["messages"] == sent[0]["messages"]
    assert not any("part 0" in json.dumps(b) for b in sent[1:])
    # each resume: the cut message as streamed, then the recovery message; every response its own message
    last = sent[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert last[2]["content"] == [{"type": "text", "text": reminder(RESUME_MESSAGE)}]  # a <system-reminder> block
    assert [m["content"][0]["text"] for m in last[1::2]] == [f"part {i} of a very long essay" for i in (1, 2, 3)]


async def test_recovery_off_ends_at_the_first_cut(offline):
    model = offline(lambda body, i: cut("part"))
    run = query(params(model))
    events = await drain(run)
    assert len(bodies(model)) == 1 and run.terminal.reason == "completed"
    assert [e.subtype for e in events if e.type == "system"] == ["max_output_tokens"]
    assert [r.path for r in model.api.requests] == ["/v1/messages"]  # no GET for the model's limit either


async def test_f6_a_tool_use_cut_in_half_never_runs_the_loop_escalates_and_m2_is_handled(offline):
    ran: list[str] = []
    m1 = recorded_turn(FIXTURES / "anthropic-stream-tooluse-maxtokens-partial-json.sse")
    model = offline([m1, S.reply("Here is the guide.", S.tool_use("Read", {"path": "taxes.txt"}, id="T2")),
                     S.reply("Done.")])
    run = query(params(model, tools=[reader(ran)], recovery=RecoveryOptions()))
    events = await drain(run)
    sent = bodies(model)
    assert ran == ["taxes.txt"]  # only M2's complete call ran; the cut make_file never did
    assert transitions(run) == [(1, None), (1, "max_output_tokens_escalate"), (2, "next_turn")]
    assert sent[1]["max_tokens"] == 64_000 and sent[1]["messages"] == sent[0]["messages"]
    history = json.dumps([m.model_dump(mode="json") for m in run.state.messages])
    assert "make_file" not in history and "toolu_01EKqbqmZrGRXy18eN7m9kvY" not in history
    assert sent[2]["max_tokens"] == 4096  # next_turn reset the escalated limit
    assert run.terminal.reason == "completed" and [e.type for e in events].count("tombstone") == 1


async def test_escalation_happens_once_a_turn_and_next_turn_resets_the_counters(offline):
    script = [cut("a"), S.reply(S.tool_use("Read", {"path": "x"}, id="T1"), stop_reason="max_tokens"),
              cut("b"), cut("c"), S.reply("done")]
    model = offline(script)
    run = query(params(model, tools=[reader()], recovery=RecoveryOptions()))
    await drain(run)
    # turn 1: cut -> escalate -> a response that calls a tool (a finished tool_use runs, even at max_tokens)
    # turn 2: cut -> escalate again (a new turn) -> cut -> resume 1 -> done
    assert transitions(run) == [(1, None), (1, "max_output_tokens_escalate"), (2, "next_turn"),
                                (2, "max_output_tokens_escalate"), (2, "max_output_tokens_recovery")]
    counters = [p.counters for p in run.trace.checkpoints]  # each the State's as its iteration began
    assert counters[1]["max_output_tokens_override"] == 64_000
    assert counters[2]["max_output_tokens_override"] is None and counters[3]["max_output_tokens_override"] == 64_000
    assert counters[3]["max_output_tokens_recovery_count"] == 0 and counters[4]["max_output_tokens_recovery_count"] == 1
    assert run.state.max_output_tokens_recovery_count == 1 and run.terminal.turn_count == 2
    assert [b["max_tokens"] for b in bodies(model)] == [4096, 64_000, 4096, 64_000, 64_000]


async def test_the_escalated_limit_is_capped_by_the_models_maximum(offline):
    model = offline([cut("a"), S.reply("b")])
    run = query(params(model, max_tokens=60_000, recovery=RecoveryOptions(escalated_max_tokens=100_000)))
    await drain(run)
    assert [b["max_tokens"] for b in bodies(model)] == [60_000, 64_000]  # the offline model says 64,000


async def test_f15_signed_thinking_stays_byte_identical_and_the_resumed_response_is_its_own(offline):
    thinking = {"type": "enabled", "budget_tokens": 1024}
    model = offline([cut(S.thinking("Plan: list the steps."), "Step one is to"), S.reply("find the form.")],
                    thinking=thinking)
    run = query(params(model, recovery=RecoveryOptions(max_output_tokens_escalate=False)))
    events = await drain(run)
    first, second = [e for e in events if e.type == "assistant"]
    sent = bodies(model)[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [b.model_dump(mode="json", exclude_none=True) for b in first.message.content]
    assert sent[1]["content"][0]["signature"] == first.message.content[0].signature  # never edited
    assert sent[2]["content"][0]["text"] == reminder(RESUME_MESSAGE)
    assert second.message.content[0].text == "find the form." and first.uuid != second.uuid
    assert [m.type for m in run.state.messages] == ["user", "assistant", "user"]  # the second comes after


async def test_f15_with_escalation_the_cut_message_is_dropped_whole(offline):
    model = offline([cut(S.thinking("Plan."), "Step one"), S.reply(S.thinking("Plan again."), "All steps.")],
                    thinking={"type": "enabled", "budget_tokens": 1024})
    run = query(params(model, recovery=RecoveryOptions()))
    await drain(run)
    sent = bodies(model)
    assert sent[1]["messages"] == sent[0]["messages"]  # dropped whole, never partly
    assert run.terminal.reason == "completed"


async def test_exhausted_resumes_skip_the_stop_hooks(offline):
    asked = []
    hooks = dl.Hooks().add("stop", lambda input: asked.append(input) or None)
    model = offline(lambda body, i: cut("more"))
    run = query(params(model, recovery=RecoveryOptions(), hooks=hooks))
    await drain(run)
    assert run.terminal.reason == "completed" and asked == []  # the source skips them after an API error


# ---------------------------------------------------------------------------
# prompt is too long: collapse drain, then one reactive compaction, then prompt_too_long (F9)


def long_session(always_too_long: bool, reads: int = 6):
    def policy(body, index):
        if is_compaction_request(body):
            return S.reply("Summary: the files were read; each said ok.")
        if index < reads:
            return S.reply(S.tool_use("Read", {"path": f"f{index}"}))
        if index == reads or always_too_long:
            return S.prompt_too_long(250_000)
        return S.reply("Every file says ok.")
    return policy


COLLAPSE = ContextOptions(context_collapse=ContextCollapse(stage_threshold=10**6, threshold=10**6, keep_recent=2),
                          autocompact=Autocompact(threshold=10**6, keep_recent=1))  # thresholds never reached


async def test_f9_drain_first_and_the_retry_succeeds(offline):
    model = offline(long_session(False))
    run = query(params(model, tools=[reader()], context=COLLAPSE, recovery=RecoveryOptions()))
    events = await drain(run)
    assert transitions(run)[-1] == (7, "collapse_drain_retry") and run.terminal.reason == "completed"
    drained = run.trace.checkpoints[-2].next_transition
    assert drained.committed == 1
    assert [e.subtype for e in events if e.type == "system"] == ["context_collapse"]  # the 400 stayed withheld
    assert "<collapsed" in json.dumps(bodies(model)[-1]["messages"])


@pytest.mark.parametrize("context, bound", [(COLLAPSE, 3), (None, 2)], ids=["staged folds", "nothing staged"])
async def test_f9_an_always_too_long_prompt_is_bounded_then_prompt_too_long(offline, context, bound):
    model = offline(long_session(True))
    run = query(params(model, tools=[reader()], context=context, recovery=RecoveryOptions()))
    events = await drain(run)
    sent = bodies(model)
    main = [b for b in sent[6:] if not is_compaction_request(b)]
    assert len(main) == bound  # the first, (after the drain,) after the compaction
    assert run.terminal.reason == "prompt_too_long" and run.terminal.turn_count == 7
    assert {t for _, t in transitions(run)[7:]} <= {"collapse_drain_retry", "reactive_compact_retry"}
    assert all(tc == 7 for tc, _ in transitions(run)[6:])  # recovery passes keep turn_count
    assert not any("prompt is too long" in json.dumps(m.model_dump(mode="json")) for m in run.messages
                   if m.type in ("assistant", "user"))  # the error text never enters history
    assert [e.subtype for e in events if e.type == "system"][-1] == "api_error"


async def test_f9_without_recovery_it_ends_at_once(offline):
    model = offline(long_session(True))
    run = query(params(model, tools=[reader()], context=COLLAPSE))
    await drain(run)
    assert len(bodies(model)) == 7 and run.terminal.reason == "prompt_too_long"


async def test_a_failed_reactive_compaction_says_so_and_ends_prompt_too_long(offline):
    model = offline([S.prompt_too_long(250_000)])  # one message: nothing before the kept tail to summarise
    run = query(params(model, recovery=RecoveryOptions()))
    events = await drain(run)
    assert [e.subtype for e in events if e.type == "system"] == ["reactive_compact_failed", "api_error"]
    assert run.terminal.reason == "prompt_too_long"


async def test_an_abort_during_the_reactive_compaction_ends_aborted_streaming(offline):
    abort = dl.abort.AbortController()

    def policy(body, index):
        if is_compaction_request(body):
            abort.abort("stop")
            return S.reply("never used", tokens_per_second=5)
        return S.reply(S.tool_use("Read", {"path": "a"})) if index < 3 else S.prompt_too_long(250_000)

    model = offline(policy)
    run = query(params(model, tools=[reader()], abort=abort, recovery=RecoveryOptions()))
    events = await drain(run)
    assert run.terminal.reason == "aborted_streaming"
    assert [e.subtype for e in events if e.type == "system"] == ["interrupted"]
    from dreamloop.endings import INTERRUPTED_COMPACTION_NOTE, is_interrupted_note  # issue 32: the model is told too
    assert [e.message["content"] for e in events if is_interrupted_note(e)] == [INTERRUPTED_COMPACTION_NOTE]


# ---------------------------------------------------------------------------
# Fallback after overloads, with tombstones (F7)


async def test_f7_overloaded_inside_a_200_stream_tombstones_the_partial_and_falls_back(offline):
    overloaded = S.stream_error("Sure, I'll", after_events=4, error_type="overloaded_error")
    model = offline([overloaded, overloaded, overloaded, S.reply("Here it is.")], max_retries=0)
    run = query(params(model, fallback_model="claude-fallback-1"))
    events = await drain(run)
    sent = [r for r in model.api.requests if r.path.endswith("/v1/messages")]
    assert [r.body["model"] for r in sent] == ["claude-scripted-1"] * 3 + ["claude-fallback-1"]
    assert all(r.body["messages"] == sent[0].body["messages"] for r in sent)  # the original messages, again
    tombstones = [e for e in events if e.type == "tombstone"]
    assert [t.target_uuid for t in tombstones] == ["msg_fake_0001", "msg_fake_0002", "msg_fake_0003"]
    assert tombstones[0].message["content"] == [{"type": "text", "text": "Sure, I'll"}]  # what was shown
    notices = [(e.subtype, (e.metadata or {}).get("to")) for e in events if e.type == "system"]
    assert notices == [("api_retry", None), ("api_retry", None), ("model_fallback", "claude-fallback-1")]
    assert run.model.model == "claude-fallback-1" and run.terminal.reason == "completed"
    assert [m.type for m in run.messages if m.type in ("user", "assistant")] == ["user", "assistant"]
    assert transitions(run) == [(1, None)] and [e.attempt for e in events if e.type == "stream_request_start"] == \
        [1, 2, 3, 4]


@pytest.mark.parametrize("fallback, max_retries, requests", [  # the loop counts each 529 (the SDK retries none)
    (None, 0, 1), ("claude-fallback-1", 0, 6), (None, 2, 3), ("claude-fallback-1", 2, 6)],
    ids=["no fallback", "fallback", "no fallback, SDK retries", "fallback, SDK retries"])
async def test_an_always_overloaded_model_is_bounded(offline, fallback, max_retries, requests):
    model = offline(lambda body, i: S.http_error(529, retry_after_ms=1), max_retries=max_retries)
    run = query(params(model, fallback_model=fallback))
    await drain(run)
    assert len(bodies(model)) == requests
    assert run.terminal.reason == "api_error" and "overloaded" in run.terminal.error
    assert run.messages[0].type == "user" and {m.type for m in run.messages[1:]} == {"system"}  # notices only
    assert run.messages[-1].subtype == "api_error"


async def test_f7_after_the_bound_with_a_fallback_the_transcript_stays_valid(offline, tmp_path):
    overloaded = S.stream_error("Sure", S.tool_use("Read", {"path": "a"}, id="T1"), after_events=6)
    model = offline(lambda body, i: overloaded, max_retries=0)
    engine = QueryEngine(model=model, tools=[reader()], transcript=tmp_path / "t.jsonl", fallback_model="fb",
                         deps=QueryDeps(uuid=counting_uuids()))
    [e async for e in engine.submit_message("go")]
    assert engine.terminal.reason == "api_error"
    assert len(bodies(model)) == 6
    loaded = load_transcript(tmp_path / "t.jsonl")
    sent = normalize_messages_for_api([*loaded, dl.user_message("next")])
    assert dl.fake_api.validate_request({"model": "m", "max_tokens": 8, "messages": sent}) is None


async def test_a_call_that_started_is_kept_even_where_the_fallback_model_would_take_over(offline):
    """Issue 32: the attempt is not withdrawn (nor handed to the fallback model) once T1 has started: T1 runs
    once, to its end, and the next request carries it and its result."""
    ran: list[str] = []
    broken = S.reply(S.tool_use("Read", {"path": "first"}, id="T1"), "and then more text to say", chunk_size=4,
                     tokens_per_second=200, fault=S.Fault(kind="stream_error", after_events=14))  # T1 runs, then 529
    model = offline([broken, S.reply(S.tool_use("Read", {"path": "second"}, id="T2")), S.reply("done")],
                    max_retries=0)
    run = query(params(model, tools=[reader(ran)], streaming_tool_execution=True, fallback_model="fb",
                       recovery=RecoveryOptions(overloads_before_fallback=1)))
    events = await drain(run)
    assert not any(e.type == "system" and e.subtype == "model_fallback" for e in events)
    kept = next(e for e in events if e.type == "system" and e.subtype == "streaming_fallback")
    assert kept.metadata == {"step": "keep", "started": ["T1"]} and "T1 had started" in kept.content
    progress = {e.uuid for e in events if e.type == "progress" and e.tool_use_id == "T1"}
    assert progress and not progress & {e.target_uuid for e in events if e.type == "tombstone"}
    second = json.dumps(bodies(model)[1]["messages"][-2:])
    assert '"tool_use_id": "T1"' in second and "first: ok" in second and bodies(model)[1]["model"] != "fb"
    assert ran == ["first", "second"] and run.terminal.reason == "completed"


async def test_a_tombstoned_message_never_reaches_a_later_request_of_a_session(offline, tmp_path):
    model = offline([cut("the cut answer"), S.reply("the whole answer"), S.reply("and the next one")])
    engine = QueryEngine(model=model, transcript=tmp_path / "t.jsonl", recovery=RecoveryOptions(),
                         deps=QueryDeps(uuid=counting_uuids()))
    [e async for e in engine.submit_message("first")]
    [e async for e in engine.submit_message("second")]
    assert "the cut answer" in json.dumps([m.model_dump(mode="json") for m in engine.messages])  # the record keeps it
    assert not any("the cut answer" in json.dumps(b) for b in bodies(model)[1:])  # no request carries it
    resumed = QueryEngine.resume(tmp_path / "t.jsonl", model=model, deps=QueryDeps(uuid=counting_uuids(100)))
    assert "the cut answer" not in json.dumps(normalize_messages_for_api(resumed.messages))


# ---------------------------------------------------------------------------
# The token budget


async def test_the_token_budget_continues_until_returns_diminish(offline):
    model = offline(lambda body, i: S.reply("A short step."))
    run = query(params(model, token_budget=2_000))
    events = await drain(run)
    assert len(bodies(model)) == 4  # the answer, then 3 continuations; the 4th check sees diminishing returns
    assert transitions(run) == [(1, None)] + [(1, "token_budget_continuation")] * 3
    nudges = [e for e in events if e.type == "user" and e.is_meta]
    assert len(nudges) == 3 and nudges[0].message["content"].startswith("Token budget: ")
    assert [e.subtype for e in events if e.type == "system"] == ["token_budget"]
    assert run.state.token_budget_tracking.continuations == 3 and run.terminal.turn_count == 1


async def test_the_token_budget_counts_across_turns_and_stops_at_the_budget(offline):
    big = "word " * 400  # about 580 output tokens a response
    script = [S.reply(big, S.tool_use("Read", {"path": "a"})), S.reply(big)] + [S.reply(big)] * 10
    model = offline(script)
    run = query(params(model, tools=[reader()], token_budget=2_000))
    await drain(run)
    assert run.output_tokens >= 0.9 * 2_000 and len(bodies(model)) == 4  # ~580 each: stops past 1,800
    assert transitions(run) == [(1, None), (2, "next_turn"), (2, "token_budget_continuation"),
                                (2, "token_budget_continuation")]
    outputs = [m.message.usage.output_tokens for m in run.messages if m.type == "assistant"]
    tracked = run.trace.checkpoints[2].counters["token_budget_tracking"]
    assert tracked == {"continuations": 1, "tokens": sum(outputs[:2]), "last_delta": sum(outputs[:2])}  # turns 1+2


# ---------------------------------------------------------------------------
# The trace and the switches


async def test_each_pass_has_a_checkpoint_with_its_transition_counters_and_next_messages(offline, tmp_path):
    model = offline([cut("a"), cut("b"), S.reply("c")])
    run = query(params(model, recovery=RecoveryOptions()))
    await drain(run)
    points = run.trace.checkpoints
    assert [p.next_transition.reason if p.next_transition else p.terminal.reason for p in points] == [
        "max_output_tokens_escalate", "max_output_tokens_recovery", "completed"]
    assert points[0].next_messages is not None and len(points[0].messages_after) == 2  # the prompt, the tombstone
    assert points[1].next_messages is None and len(points[1].messages_after) == 4  # + the cut, the resume message
    loaded = Trace.load(run.trace.save(tmp_path / "t.jsonl"))
    assert [p.counters for p in loaded.checkpoints] == [p.counters for p in points]
    assert [p.messages_after for p in loaded.checkpoints] == [p.messages_after for p in points]
    assert loaded.switches["recovery"]["max_resumes"] == 3


def test_the_switches_name_what_is_on():
    model = dl.offline([])
    on = QueryParams(messages="hi", model=model, recovery=RecoveryOptions(max_output_tokens_escalate=False),
                     fallback_model="claude-haiku-4-5", token_budget=5000)
    switches = on.switches()
    assert switches["recovery"]["max_output_tokens_escalate"] is False
    assert switches["fallback_model"] == "claude-haiku-4-5" and switches["token_budget"]["total"] == 5000
    assert on.fallback_model.api is model.api  # a name: the same endpoint
    off = QueryParams(messages="hi", model=model).switches()
    assert (off["recovery"], off["fallback_model"], off["token_budget"]) == (False, False, False)
    for bad in ({"fallback_model": " "}, {"fallback_model": 3}, {"token_budget": 0}):
        with pytest.raises(ValueError):
            QueryParams(messages="hi", model=model, **bad)


# Issue 24 item 7: with the pipeline off, what is sent still starts at the last compact boundary


async def test_after_a_reactive_compaction_the_next_prompt_and_a_resume_send_from_the_boundary(offline, tmp_path):
    from dreamloop.engine import QueryEngine

    def policy(body, index):
        if is_compaction_request(body):
            return S.reply("Summary: the files were read; each said ok.")
        if len(json.dumps(body["messages"])) > 3000:  # the pre-compaction history is "too long"
            return S.prompt_too_long(250_000)
        if index < 6:
            return S.reply(S.tool_use("Read", {"path": f"f{index}" + "x" * 400}))
        return S.reply("ok")

    model = offline(policy)
    engine = QueryEngine(model=model, tools=[reader()], recovery=RecoveryOptions(), transcript=tmp_path / "t.jsonl",
                         deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message("read the files"):
        pass
    assert engine.terminal.reason == "completed"
    assert any(m.type == "system" and m.subtype == "compact_boundary" for m in engine.messages)
    before = len(bodies(model))
    async for _ in engine.submit_message("and now?"):
        pass
    assert engine.terminal.reason == "completed" and len(bodies(model)) == before + 1  # one request, not three
    assert "Summary:" in json.dumps(bodies(model)[-1]["messages"][:2])
    resumed = QueryEngine.resume(tmp_path / "t.jsonl", model=model, tools=[reader()], recovery=RecoveryOptions(),
                                 deps=QueryDeps(uuid=counting_uuids()))
    async for _ in resumed.submit_message("still there?"):
        pass
    assert resumed.terminal.reason == "completed" and len(bodies(model)) == before + 2


# ---------------------------------------------------------------------------
# The streaming fallback: a stream that breaks part-way (Claude Code 2.1.332, as observed by the
# `dreamloop compare` scenarios stream_error_* and disconnect_*)

SF = observed_recovery()


def events_into(blocks, block, deltas=1):
    from dreamloop.compare.scenarios import events_into as into

    return into(blocks, block, deltas)


@pytest.mark.parametrize("streaming_tools", [False, True], ids=["tools after", "streaming tools"])
async def test_an_error_event_before_any_block_is_asked_again_without_streaming(offline, streaming_tools):
    blocks = [S.text("Let me look at the configuration first.")]
    broken = S.Turn(content=blocks, fault=S.Fault(kind="stream_error", after_events=events_into(blocks, 0, 2)))
    model = offline([broken, S.reply("value is 1.")])
    run = query(params(model, recovery=SF, max_tokens=128_000, streaming_tool_execution=streaming_tools))
    events = await drain(run)
    sent = model.api.requests
    assert [(r.streamed, r.body["max_tokens"]) for r in sent if r.path.endswith("/v1/messages")] == [
        (True, 128_000), (False, 64_000)]  # non-streaming, at the lower limit
    assert bodies(model)[1]["messages"] == bodies(model)[0]["messages"]
    (tombstone,) = [e for e in events if e.type == "tombstone"]
    assert tombstone.message["content"][0]["text"].startswith("Let me")  # what was shown, withdrawn
    assert [m.type for m in run.messages if m.type in ("user", "assistant")] == ["user", "assistant"]
    assert run.terminal.reason == "completed" and transitions(run) == [(1, None)]


async def test_an_error_event_inside_a_tool_use_keeps_the_text_and_resumes(offline):
    ran: list[str] = []
    blocks = [S.text("Reading."), S.tool_use("Read", {"path": "a"})]
    broken = S.Turn(content=blocks, fault=S.Fault(kind="stream_error", after_events=events_into(blocks, 1, 1)))
    model = offline([broken, S.reply("Reading.", S.tool_use("Read", {"path": "b"})), S.reply("done")])
    run = query(params(model, tools=[reader(ran)], recovery=SF, streaming_tool_execution=True))
    events = await drain(run)
    second = bodies(model)[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == [{"type": "text", "text": "Reading."}]  # the finished text, not the cut call
    assert second[2]["content"][0]["text"].startswith("<system-reminder>")
    assert ran == ["b"]  # the cut call never ran
    assert "tool_use" not in json.dumps(second)
    assert [t for e in events if e.type == "tombstone" for t in [e.message["content"][-1]["type"]]] == ["tool_use"]
    assert transitions(run) == [(1, None), (1, "streaming_fallback_resume"), (2, "next_turn")]


@pytest.mark.parametrize("streaming_tools", [False, True], ids=["tools after", "streaming tools"])
async def test_an_error_event_after_a_tool_use_runs_it(offline, streaming_tools):
    from dreamloop.compare.scenarios import events_through

    ran: list[str] = []
    blocks = [S.text("Reading."), S.tool_use("Read", {"path": "a"}, id="T1")]
    broken = S.Turn(content=blocks, fault=S.Fault(kind="stream_error", after_events=events_through(blocks, 1)))
    model = offline([broken, S.reply("done")])
    run = query(params(model, tools=[reader(ran)], recovery=SF, streaming_tool_execution=streaming_tools))
    await drain(run)
    assert ran == ["a"] and run.terminal.reason == "completed"
    second = bodies(model)[1]["messages"]
    assert [b["type"] for b in second[1]["content"]] == ["text", "tool_use"]
    assert second[2]["content"][0] == {"type": "tool_result", "tool_use_id": "T1", "content": "a: ok"}


async def test_a_dropped_connection_is_sent_again_and_its_call_never_appears(offline):
    from dreamloop.compare.scenarios import events_through

    blocks = [S.text("Reading."), S.tool_use("Read", {"path": "a"}, id="T1")]
    dropped = S.Turn(content=blocks, fault=S.Fault(kind="disconnect", after_events=events_through(blocks, 1)))
    model = offline([dropped, S.reply("Reading.", S.tool_use("Read", {"path": "b"}, id="T2")), S.reply("done")])
    run = query(params(model, tools=[reader()], recovery=SF))
    events = await drain(run)
    assert [r.streamed for r in model.api.requests if r.path.endswith("/v1/messages")] == [True, True, True]
    assert bodies(model)[1]["messages"] == bodies(model)[0]["messages"]
    assert "T1" not in json.dumps(bodies(model)[1:])  # the dropped response's call never appears later
    assert any(e.type == "tombstone" for e in events) and run.terminal.reason == "completed"


async def test_a_dropped_connection_after_a_call_started_keeps_the_call_and_its_result(offline):
    """Issue 32's instance: with streaming tool execution T1 starts at its block's end, before the drop is read.
    Sent again, the model would call it again under a new id, unaware: it is kept instead, runs once, and the
    next request carries T1 and its result (as Claude Code 2.1.332 did, ``disconnect_after_bash_ran``)."""
    from dreamloop.compare.scenarios import events_through

    ran: list[str] = []
    blocks = [S.text("Reading."), S.tool_use("Read", {"path": "a"}, id="T1")]
    dropped = S.Turn(content=blocks, fault=S.Fault(kind="disconnect", after_events=events_through(blocks, 1)))
    model = offline([dropped, S.reply("Reading.", S.tool_use("Read", {"path": "a"}, id="T2")), S.reply("done")])
    run = query(params(model, tools=[reader(ran)], recovery=SF, streaming_tool_execution=True))
    events = await drain(run)
    kept = next(e for e in events if e.type == "system" and e.subtype == "streaming_fallback")
    assert kept.metadata == {"step": "keep", "started": ["T1"]}
    second = bodies(model)[1]["messages"]
    assert [b["type"] for b in second[1]["content"]] == ["text", "tool_use"]
    assert second[2]["content"][0] == {"type": "tool_result", "tool_use_id": "T1", "content": "a: ok"}
    assert ran == ["a", "a"] and run.terminal.reason == "completed"  # the second time, the model asked knowingly


async def test_the_streaming_fallback_is_bounded_and_repeated_overloads_reach_the_fallback_model(offline):
    blocks = [S.text("Let me look at the configuration first.")]
    broken = S.Turn(content=blocks, fault=S.Fault(kind="stream_error", after_events=events_into(blocks, 0, 2)))
    always = offline(lambda body, i: broken if body.get("stream") else S.http_error(529, retry_after_ms=1))
    run = query(params(always, recovery=SF))
    await drain(run)
    # each model gets overloads_before_fallback (3) failed attempts in a row, then the error ends the run
    assert len(bodies(always)) == 3 and run.terminal.reason == "api_error"
    model = offline(lambda body, i: S.reply("fallback here") if body["model"] == "fb" else broken)
    run = query(params(model, recovery=SF, fallback_model="fb"))
    events = await drain(run)
    assert [b["model"] for b in bodies(model)][-1] == "fb" and run.terminal.reason == "completed"
    assert [e.subtype for e in events if e.type == "system"].count("model_fallback") == 1
    dropped = S.Turn(content=blocks, fault=S.Fault(kind="disconnect", after_events=events_into(blocks, 0, 2)))
    model = offline(lambda body, i: dropped)
    run = query(params(model, recovery=SF))
    await drain(run)
    assert len(bodies(model)) == 3 and run.terminal.reason == "model_error"  # a dropped stream: no API error


async def test_streaming_fallback_off_ends_the_run_as_before(offline):
    blocks = [S.text("Let me look.")]
    broken = S.Turn(content=blocks, fault=S.Fault(kind="stream_error", after_events=events_into(blocks, 0, 1)))
    model = offline([broken])
    run = query(params(model, recovery=observed_recovery(streaming_fallback=False)))
    await drain(run)
    assert len(bodies(model)) == 1 and run.terminal.reason == "api_error"


async def test_a_404_hands_over_to_the_fallback_model_and_a_429_does_not(offline):
    not_found = S.Turn(fault=S.Fault(kind="http_error", status=404, error_type="not_found_error", message="model: m"))
    model = offline(lambda body, i: S.reply("hi") if body["model"] == "fb" else not_found)
    run = query(params(model, fallback_model="fb"))
    await drain(run)
    assert [b["model"] for b in bodies(model)] == ["claude-scripted-1", "fb"] and run.terminal.reason == "completed"
    model = offline([S.http_error(429, retry_after_ms=1)] * 3, max_retries=2)
    run = query(params(model, fallback_model="fb"))
    await drain(run)
    assert {b["model"] for b in bodies(model)} == {"claude-scripted-1"} and run.terminal.reason == "api_error"


async def test_each_model_sends_its_own_output_limit_when_max_tokens_is_none(offline):
    model = offline(lambda body, i: S.reply("hi") if body["model"] == "fb" else S.http_error(529, retry_after_ms=1))
    run = query(params(model, max_tokens=None, fallback_model="fb"))
    await drain(run)
    assert {b["max_tokens"] for b in bodies(model)} == {64_000}  # the offline API's models say 64,000


# ---------------------------------------------------------------------------
# max_tokens as Claude Code 2.1.332 was observed (max_tokens_* scenarios): no escalation, api_error at the end


async def test_observed_max_tokens_resumes_three_times_at_the_same_limit_then_api_error(offline):
    model = offline(lambda body, i: cut(f"part {i}"))
    run = query(params(model, recovery=observed_recovery()))
    await drain(run)
    assert [b["max_tokens"] for b in bodies(model)] == [4096] * 4
    assert run.terminal.reason == "api_error" and "max_tokens" in run.terminal.error
    last = bodies(model)[-1]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]


async def test_observed_tool_use_without_a_block_is_asked_again_twice(offline):
    model = offline(lambda body, i: S.reply("I'll read it.", stop_reason="tool_use"))
    run = query(params(model, recovery=observed_recovery()))
    events = await drain(run)
    sent = bodies(model)
    assert len(sent) == 3 and run.terminal.reason == "malformed_tool_use_exhausted"
    assert [m["role"] for m in sent[2]["messages"]] == ["user"]  # the responses were set aside, never sent
    assert len(sent[2]["messages"][0]["content"]) == 3  # the prompt and two notes
    assert len([e for e in events if e.type == "tombstone"]) == 2
    run = query(params(offline([S.reply("I'll read it.", stop_reason="tool_use")]), recovery=RecoveryOptions()))
    await drain(run)
    assert run.terminal.reason == "completed"  # the old way (F4): completed at once, with a warning


@pytest.mark.parametrize("fallback_model", ["claude-fallback-1"])  # without one, an overload mid-stream ends api_error
async def test_an_abort_while_the_loop_waits_to_ask_again_ends_in_a_terminal(offline, fallback_model):
    """The soak's instance (Aborted escaped the loop): Stop pressed after an overloaded attempt was withdrawn,
    while the loop waits (its back-off) before asking again. The run ends aborted_streaming; nothing of the
    withdrawn attempt is kept, and the model is not asked again."""
    from dreamloop import scripts as S
    from dreamloop.query import QueryParams, query
    from dreamloop.recovery import RecoveryOptions

    model = offline([S.stream_error("Looking into it.", after_events=2), S.reply("Never asked.")])
    run = query(QueryParams(messages="go", model=model, recovery=RecoveryOptions(streaming_fallback=False),
                            fallback_model=fallback_model))
    saw = []
    async for event in run:
        if event.type == "system" and event.subtype == "api_retry":
            saw.append(event.subtype)
            run.abort()
    assert saw and run.terminal.reason == "aborted_streaming"
    assert [r.status for r in model.api.requests] == [200]  # not asked again
    assert all(m.type != "assistant" for m in run.messages)  # the withdrawn attempt's text is not kept
    from dreamloop.endings import INTERRUPTED_NOTE, is_interrupted_note  # issue 32: both readers are told, once
    assert [m.message["content"] for m in run.messages if is_interrupted_note(m)] == [INTERRUPTED_NOTE]
    assert run.messages[-1].content == "Interrupted while waiting to ask the model again."


# ---------------------------------------------------------------------------
# An exception leaving the loop in any phase ends the run in a Terminal (issue 39: the loop alone ends the run)


async def test_a_pre_compact_hook_that_raises_during_the_reactive_compaction_ends_hook_stopped(offline):
    """Before issue 39 this HookError left the loop without a Terminal (only phases 2 and 4 caught it)."""
    from dreamloop.errors import HookError
    from dreamloop.hooks import Hooks

    def broken(input):
        raise RuntimeError("my bug")

    model = offline(lambda body, index: S.reply(S.tool_use("Read", {"path": "a"})) if index < 3
                    else S.prompt_too_long(250_000))
    run = query(params(model, tools=[reader()], recovery=RecoveryOptions(), hooks=Hooks().add("pre_compact", broken)))
    with pytest.raises(HookError, match="my bug"):
        await drain(run)
    assert run.terminal.reason == "hook_stopped" and "my bug" in run.terminal.error
    assert [m.subtype for m in run.messages if m.type == "system"][-1:] == ["hook_error"]
    assert run.trace.checkpoints[-1].terminal == run.terminal


async def test_a_task_cancelled_while_the_loop_waits_to_ask_again_ends_aborted_streaming(offline):
    """Before issue 39 a cancel during the back-off left the loop without a Terminal."""
    import asyncio

    model = offline([S.http_error(529, retry_after_ms=30_000), S.reply("Never asked.")], max_retries=0)
    run = query(params(model, fallback_model="claude-fallback-1"))
    waiting = asyncio.Event()

    async def consume():
        async for event in run:
            if event.type == "system" and event.subtype == "api_retry":
                waiting.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(waiting.wait(), 10)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert run.terminal.reason == "aborted_streaming"
    assert all(m.type != "assistant" for m in run.messages)
    assert normalize_messages_for_api(run.messages)[-1]["role"] == "user"
