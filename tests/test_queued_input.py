"""Input queued while the loop runs (issue 33, item 8): it reaches the model no later than with the next prompt,
in the order typed, each text once, also when a Stop lands while the queue is being drained; the trace and the
inspector show where each queued text went."""

from __future__ import annotations

import asyncio
import json

from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.attachments import queued_input_sent
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine
from dreamloop.hooks import Hooks, UserPromptSubmitDecision
from dreamloop.tools import tool
from dreamloop.widgets.html import message_html

QUEUED = ["first queued", "second queued", "third queued"]


class PathInput(BaseModel):
    path: str


@tool(PathInput, name="Read", read_only=True)
async def slow_read(input: PathInput) -> str:
    """Read a file (slowly: there is time to type while it runs)."""
    await asyncio.sleep(0.05)
    return f"contents of {input.path}"


def engine_for(model, **kw):
    return QueryEngine(model=model, tools=[slow_read], deps=QueryDeps(uuid=counting_uuids()), **kw)


def bodies(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def user_texts(body):
    """Every text the person's side says in a request, in order (tool results left out)."""
    out = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out += [b["text"] for b in blocks if b.get("type") == "text"]
    return out


def assert_sent_once_in_order(body, texts):
    said = user_texts(body)
    for text in texts:
        assert said.count(text) == 1, (text, said)
    assert [t for t in said if t in texts] == list(texts), said


async def stop_while_a_tool_runs(engine, prompt="read a", queued=QUEUED):
    """Run ``prompt``; while its tool runs, type ``queued``, then Stop."""
    async for event in engine.submit_message(prompt):
        if event.type == "progress" and event.data["stage"] == "started":
            for text in queued:
                engine.enqueue(text)
            engine.last_run.abort()


def tool_turn():
    return S.reply("Reading.", S.tool_use("Read", {"path": "a"}, id="T1"))


# ---------------------------------------------------------------------------
# The instance: a Stop with three queued texts, then a new prompt


async def test_input_a_stop_left_queued_goes_in_front_of_the_next_prompt(offline):
    model = offline([tool_turn(), S.reply("Done with all of it.")])
    engine = engine_for(model)
    await stop_while_a_tool_runs(engine)
    assert engine.terminal.reason.startswith("aborted") and engine.queue == QUEUED
    assert len(bodies(model)) == 1

    events = [event async for event in engine.submit_message("new prompt")]
    assert engine.queue == [] and engine.terminal.reason == "completed"
    assert len(bodies(model)) == 2  # the next request carries them: no extra run answers them afterwards
    assert_sent_once_in_order(bodies(model)[1], [*QUEUED, "new prompt"])
    assert user_texts(bodies(model)[1])[-4:] == [*QUEUED, "new prompt"]
    # the events show them first, and the history holds each once, as queued_command attachments
    queued_events = [e.attachment["prompt"] for e in events if e.type == "attachment"]
    assert queued_events == QUEUED
    kept = [m.attachment["prompt"] for m in engine.messages if m.type == "attachment"]
    assert kept == QUEUED


async def test_the_trace_and_the_inspector_say_where_each_queued_text_went(offline):
    model = offline([tool_turn(), S.reply("Done.")])
    engine = engine_for(model)
    await stop_while_a_tool_runs(engine)
    assert queued_input_sent(engine.last_run.trace) == []  # the stopped run sent none of them
    async for _ in engine.submit_message("new prompt"):
        pass
    trace = engine.last_run.trace
    sent = queued_input_sent(trace)
    assert [(s.prompt, s.via, s.added_at, s.checkpoint) for s in sent] == [
        (text, "before the prompt", 0, 0) for text in QUEUED]
    assert all(s.uuid in trace.checkpoints[0].messages_for_query for s in sent)
    html = message_html(trace.messages[sent[0].uuid], {})
    assert "origin: queued input" in html and "first queued" in html


async def test_input_drained_at_phase_5_names_the_next_checkpoint(offline):
    model = offline([tool_turn(), S.reply("Done.")])
    engine = engine_for(model)
    async for event in engine.submit_message("read a"):
        if event.type == "progress" and event.data["stage"] == "started":
            engine.enqueue("while it reads")
    [sent] = queued_input_sent(engine.last_run.trace)
    assert (sent.prompt, sent.via, sent.added_at, sent.checkpoint) == ("while it reads", "phase 5", 0, 1)
    assert_sent_once_in_order(bodies(model)[1], ["read a", "while it reads"])


# ---------------------------------------------------------------------------
# A Stop while the queue is being drained (phase 5): each text in the history or still queued, never both, never
# neither


async def test_a_stop_at_the_first_drained_text_keeps_all_three_once(offline):
    model = offline([tool_turn(), S.reply("never asked"), S.reply("Done.")])
    engine = engine_for(model)
    async for event in engine.submit_message("read a"):
        if event.type == "progress" and event.data["stage"] == "started":
            for text in QUEUED:
                engine.enqueue(text)
        if event.type == "attachment" and event.attachment["prompt"] == QUEUED[0]:
            engine.last_run.abort()  # the Stop lands while phase 5 hands the drained texts on
    assert engine.queue == [] and engine.terminal.reason.startswith("aborted")
    kept = [m.attachment["prompt"] for m in engine.messages if m.type == "attachment"
            and m.attachment.get("type") == "queued_command"]
    assert kept == QUEUED
    async for _ in engine.submit_message("new prompt"):
        pass
    assert_sent_once_in_order(bodies(model)[-1], [*QUEUED, "new prompt"])


async def test_closing_the_run_at_the_first_drained_text_loses_none(offline):
    """A caller that stops reading (closes the events) at the first queued text: the other two were taken from the
    queue with it, so they are in the history too (kept before the first was yielded)."""
    model = offline([tool_turn(), S.reply("Done.")])
    engine = engine_for(model)
    events = engine.submit_message("read a")
    async for event in events:
        if event.type == "progress" and event.data["stage"] == "started":
            for text in QUEUED:
                engine.enqueue(text)
        if event.type == "attachment":
            break
    await events.aclose()
    assert engine.queue == []
    assert [m.attachment["prompt"] for m in engine.messages if m.type == "attachment"] == QUEUED


# ---------------------------------------------------------------------------
# Siblings: an empty queue, input queued after a completed run, a blocked prompt


async def test_a_stop_with_nothing_queued_sends_the_prompt_alone(offline):
    model = offline([tool_turn(), S.reply("Done.")])
    engine = engine_for(model)
    await stop_while_a_tool_runs(engine, queued=[])
    events = [event async for event in engine.submit_message("new prompt")]
    assert not [e for e in events if e.type == "attachment"]
    assert user_texts(bodies(model)[1])[-1] == "new prompt"
    assert queued_input_sent(engine.last_run.trace) == []


async def test_input_queued_after_a_completed_run_goes_with_the_next_prompt(offline):
    model = offline([S.reply("First answer."), S.reply("Second answer.")])
    engine = engine_for(model)
    async for _ in engine.submit_message("first question"):
        pass
    engine.enqueue("typed while idle")  # between runs: nothing drains it until the next prompt
    async for _ in engine.submit_message("second question"):
        pass
    assert len(bodies(model)) == 2 and engine.queue == []
    assert user_texts(bodies(model)[1]) == ["first question", "typed while idle", "second question"]


async def test_a_blocked_prompt_leaves_the_queue_as_it_was(offline):
    model = offline([tool_turn(), S.reply("Done.")])
    blocking = Hooks().add("user_prompt_submit", lambda input: UserPromptSubmitDecision(decision="block",
                                                                                         reason="not now"))
    engine = engine_for(model)
    await stop_while_a_tool_runs(engine)
    async for _ in engine.submit_message("blocked prompt", hooks=blocking):
        pass
    assert engine.last_run is None and engine.queue == QUEUED
    async for _ in engine.submit_message("new prompt"):
        pass
    assert_sent_once_in_order(bodies(model)[1], [*QUEUED, "new prompt"])


async def test_queued_input_left_by_a_stop_survives_in_the_transcript(offline, tmp_path):
    from dreamloop.engine import load_transcript

    model = offline([tool_turn(), S.reply("Done.")])
    engine = engine_for(model, transcript=tmp_path / "t.jsonl")
    await stop_while_a_tool_runs(engine)
    async for _ in engine.submit_message("new prompt"):
        pass
    saved = [json.dumps(m.attachment) for m in load_transcript(tmp_path / "t.jsonl") if m.type == "attachment"]
    assert saved == [json.dumps({"type": "queued_command", "prompt": text}) for text in QUEUED]



async def test_queued_input_is_printed_as_what_was_typed_live_and_replayed(offline):
    """The printed run shows a queued text as the person typed it (one quoted line, an escape as \\u001b), not the
    attachment's JSON; a replayed trace prints the same."""
    import io

    from rich.console import Console

    import dreamloop as dl
    from dreamloop.render import print_run, print_trace

    typed = "and the \x1b[31mold\x1b[0m value?"
    queue = iter([[dl.AttachmentMessage(attachment={"type": "queued_command", "prompt": typed})]])
    run = dl.query(dl.QueryParams(messages="go", model=offline([S.reply(S.tool_use("Read", {"path": "a"})),
                                                                S.reply("done")]),
                                  tools=[slow_read], queued_input=lambda: next(queue, []),
                                  deps=QueryDeps(uuid=counting_uuids())))
    live, replayed = io.StringIO(), io.StringIO()
    await print_run(run, Console(file=live, width=100, color_system=None))
    print_trace(run.trace, Console(file=replayed, width=100, color_system=None))
    line = '  attachment queued_command "and the \\u001b[31mold\\u001b[0m value?"'
    assert line in live.getvalue().splitlines() and line in replayed.getvalue().splitlines()
    assert "\x1b" not in live.getvalue() and '{"type": "queued_command"' not in live.getvalue()
