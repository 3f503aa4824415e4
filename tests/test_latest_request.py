"""The person's latest request survives every compaction word for word (issue 33, item 10).

After an automatic, a reactive or a manual compaction whose summarised head holds the person's newest request
(a prompt, or queued input), the next request carries that message as it was, right after the summary; already in
the kept tail, nothing moves; ``ContextOptions(keep_latest_request=False)`` gives the old context. Every request
goes to the offline API, which refuses a malformed one (roles, pairs, empty blocks).
"""

from __future__ import annotations

import json

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.context import (
    COMPACT_SYSTEM_PROMPT,
    SUMMARY_PREFIX,
    Autocompact,
    ContextOptions,
    Snip,
    compact_conversation,
    is_compaction_request,
    latest_request,
    messages_after_compact_boundary,
)
from dreamloop.context.snip import snip_text
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine
from dreamloop.messages import user_message
from dreamloop.recovery import RecoveryOptions

from context_session import LONG_SESSION, read, reader

REQUEST = "Read the files one by one, then tell me in one line which of them says the most."
SUMMARY = "Primary request: read the files and compare them."


def loop_bodies(model):
    return [r.body for r in model.api.requests
            if r.path.endswith("/v1/messages") and r.status == 200 and r.body.get("system") != COMPACT_SYSTEM_PROMPT]


def texts(message):
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text") for b in content if b.get("type") == "text"]


def after_summary(body):
    """The text blocks that follow the summary in a request's first message that holds it (None: no summary)."""
    for message in body["messages"]:
        said = texts(message)
        at = next((i for i, t in enumerate(said) if t and t.startswith(SUMMARY_PREFIX)), None)
        if at is not None:
            return said[at + 1:]
    return None


def first_after_compaction(model):
    """The first loop request that carries a summary."""
    return next(body for body in loop_bodies(model) if after_summary(body) is not None)


async def auto_run(offline, tmp_path, **options):
    policy = reader(LONG_SESSION[:12], summary=SUMMARY)
    model = offline(policy, context_window=20_000)
    context = ContextOptions(autocompact=Autocompact(threshold=2000, keep_recent=4), **options)
    run = dl.query(dl.QueryParams(messages=REQUEST, model=model, tools=[read], workspace=tmp_path, context=context,
                                  deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    return run, model, policy, events


async def test_autocompact_keeps_the_request_word_for_word_after_the_summary(offline, tmp_path):
    run, model, policy, events = await auto_run(offline, tmp_path)
    assert policy.compactions >= 1 and run.terminal.reason == "completed"
    body = first_after_compaction(model)
    assert after_summary(body)[0] == REQUEST
    assert sum(text == REQUEST for m in body["messages"] for text in texts(m)) == 1  # once, not twice
    boundary = next(e for e in events if e.type == "system" and e.subtype == "compact_boundary")
    prompt = next(m for m in run.messages if m.type == "user" and m.message["content"] == REQUEST)
    assert boundary.metadata["kept"][0] == prompt.uuid  # first of the kept, as the tail's are
    # every later request too, also after a second compaction
    for body in loop_bodies(model)[loop_bodies(model).index(first_after_compaction(model)):]:
        assert after_summary(body)[0] == REQUEST


async def test_switched_off_only_the_summary_remains(offline, tmp_path):
    run, model, policy, _ = await auto_run(offline, tmp_path, keep_latest_request=False)
    assert policy.compactions >= 1 and run.terminal.reason == "completed"
    body = first_after_compaction(model)
    assert REQUEST not in [text for m in body["messages"] for text in texts(m)]
    assert after_summary(body) == []


def too_long_at(turn, policy):
    """``policy``, but the loop request of ``turn`` (0-based) is answered ``prompt is too long`` once."""
    seen = {"loop": 0, "failed": False}

    def answer(body, index):
        if not is_compaction_request(body) and seen["loop"] == turn and not seen["failed"]:
            seen["failed"] = True
            return S.prompt_too_long(250_000)
        if not is_compaction_request(body):
            seen["loop"] += 1
        return policy(body, index)

    answer.policy = policy
    return answer


async def test_reactive_compaction_keeps_the_request(offline, tmp_path):
    policy = reader(LONG_SESSION[:6], summary=SUMMARY)
    model = offline(too_long_at(5, policy))
    run = dl.query(dl.QueryParams(messages=REQUEST, model=model, tools=[read], workspace=tmp_path,
                                  recovery=RecoveryOptions(reactive_compact_retry=True),
                                  deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    boundary = next(e for e in events if e.type == "system" and e.subtype == "compact_boundary")
    assert boundary.metadata["trigger"] == "reactive" and run.terminal.reason == "completed"
    assert after_summary(first_after_compaction(model))[0] == REQUEST


async def test_reactive_compaction_switched_off(offline, tmp_path):
    policy = reader(LONG_SESSION[:6], summary=SUMMARY)
    model = offline(too_long_at(5, policy))
    run = dl.query(dl.QueryParams(messages=REQUEST, model=model, tools=[read], workspace=tmp_path,
                                  context=ContextOptions(keep_latest_request=False),
                                  recovery=RecoveryOptions(reactive_compact_retry=True),
                                  deps=QueryDeps(uuid=counting_uuids())))
    [event async for event in run]
    assert run.terminal.reason == "completed" and after_summary(first_after_compaction(model)) == []


async def test_a_manual_compact_keeps_the_request_and_the_api_accepts_what_follows(offline, tmp_path):
    model = offline(reader(LONG_SESSION[:5], summary=SUMMARY))
    run = dl.query(dl.QueryParams(messages=REQUEST, model=model, tools=[read], workspace=tmp_path,
                                  deps=QueryDeps(uuid=counting_uuids())))
    [event async for event in run]
    history = messages_after_compact_boundary(run.messages)
    uuids = counting_uuids()
    done = await compact_conversation(history, model=model, uuid=uuids, keep_recent=2, trigger="manual")
    assert done.request is not None and done.request.message["content"] == REQUEST
    assert done.messages[:3] == [done.boundary, done.summary, done.request] and done.messages[3:] == done.tail
    assert done.boundary.metadata["kept"] == [done.request.uuid, *(m.uuid for m in done.tail)]
    nxt = offline([S.reply("Still on it.")])
    after = dl.query(dl.QueryParams(messages=[*done.messages, user_message("go on", uuid="next")], model=nxt))
    [event async for event in after]
    assert after.terminal.reason == "completed"  # the offline API accepted the request
    assert after_summary(loop_bodies(nxt)[0])[0] == REQUEST


async def test_already_in_the_tail_nothing_changes(offline, tmp_path):
    model = offline(reader(LONG_SESSION[:3], summary=SUMMARY))
    run = dl.query(dl.QueryParams(messages=REQUEST, model=model, tools=[read], workspace=tmp_path,
                                  deps=QueryDeps(uuid=counting_uuids())))
    [event async for event in run]
    history = [*messages_after_compact_boundary(run.messages), user_message("And the last one?", uuid="late")]
    done = await compact_conversation(history, model=offline([S.reply(SUMMARY)]), uuid=counting_uuids(),
                                      keep_recent=2, trigger="manual")
    assert latest_request(done.head, done.tail) is None and done.request is None
    assert done.messages == [done.boundary, done.summary, *done.tail]
    assert done.tail[-1].uuid == "late"


async def test_queued_input_is_the_latest_request(offline, tmp_path):
    model = offline(reader(LONG_SESSION[:5], summary=SUMMARY))
    engine = QueryEngine(model=model, tools=[read], workspace=tmp_path, deps=QueryDeps(uuid=counting_uuids()))
    typed = False
    async for event in engine.submit_message(REQUEST):
        if event.type == "progress" and not typed:
            engine.enqueue("and keep the dates as they are")
            typed = True
    queued = [m for m in engine.messages if m.type == "attachment" and m.attachment.get("type") == "queued_command"]
    assert len(queued) == 1
    done = await compact_conversation(list(engine.messages), model=offline([S.reply(SUMMARY)]),
                                      uuid=counting_uuids(), keep_recent=2, trigger="manual")
    assert done.request is queued[0]  # the newest of the person's texts, not the prompt before it
    nxt = offline([S.reply("Noted.")])
    after = dl.query(dl.QueryParams(messages=[*done.messages, user_message("go on", uuid="next")], model=nxt))
    [event async for event in after]
    assert after.terminal.reason == "completed"
    assert after_summary(loop_bodies(nxt)[0])[0] == "and keep the dates as they are"


async def test_a_resumed_transcript_puts_the_request_back_after_the_summary(offline, tmp_path):
    """On disk the request sits where it was typed, before the boundary; read back, it follows the summary."""
    from dreamloop.engine import load_transcript

    policy = reader(LONG_SESSION[:12], summary=SUMMARY)
    engine = QueryEngine(transcript=tmp_path / "session.jsonl", model=offline(policy, context_window=20_000),
                         tools=[read], workspace=tmp_path, deps=QueryDeps(uuid=counting_uuids()),
                         context=ContextOptions(autocompact=Autocompact(threshold=2000, keep_recent=4)))
    async for _ in engine.submit_message(REQUEST):
        pass
    saved = load_transcript(tmp_path / "session.jsonl")
    view = messages_after_compact_boundary(saved)
    assert view[1].uuid == view[0].metadata["summary_uuid"]
    assert view[2].type == "user" and view[2].message["content"] == REQUEST
    assert [m.uuid for m in view[2:2 + len(view[0].metadata["kept"])]] == view[0].metadata["kept"]
    later = offline([S.reply("Still here.")])
    resumed = dl.query(dl.QueryParams(messages=[*view, user_message("go on", uuid="next")], model=later))
    [event async for event in resumed]
    assert resumed.terminal.reason == "completed" and after_summary(loop_bodies(later)[0])[0] == REQUEST


# ---------------------------------------------------------------------------
# Snip leaves the latest request whole, so the compaction keeps the person's text, not a trimmed one

LONG_REQUEST = " ".join(f"Step {n}: read the next file and note the value it gives, in the order given."
                        for n in range(24))
"""A prompt longer than ``SNIP.max_chars``."""
SNIP = Snip(threshold=500, keep_recent=2, max_chars=600, keep_chars=150)


def all_texts(body):
    return [text for m in body["messages"] for text in texts(m)]


async def snipped_run(offline, tmp_path, prompt=LONG_REQUEST, **options):
    policy = reader(LONG_SESSION[:20], summary=SUMMARY)
    model = offline(policy, context_window=20_000, keep_bodies=None)
    context = ContextOptions(snip=SNIP, autocompact=Autocompact(threshold=2000, keep_recent=4), **options)
    run = dl.query(dl.QueryParams(messages=prompt, model=model, tools=[read], workspace=tmp_path, context=context,
                                  deps=QueryDeps(uuid=counting_uuids())))
    events = [event async for event in run]
    assert policy.compactions >= 1 and run.terminal.reason == "completed"
    assert any(e.type == "system" and e.subtype == "snip" for e in events)  # snip ran with the prompt old
    return model


async def test_snip_leaves_the_latest_request_whole_so_the_compaction_keeps_it(offline, tmp_path):
    assert len(LONG_REQUEST) > SNIP.max_chars
    model = await snipped_run(offline, tmp_path)
    assert after_summary(first_after_compaction(model))[0] == LONG_REQUEST
    for body in loop_bodies(model):  # before the compaction too: never the trimmed text
        assert snip_text(LONG_REQUEST, SNIP.keep_chars) not in all_texts(body)
        assert all_texts(body).count(LONG_REQUEST) == 1


async def test_the_switch_decides_off_snip_trims_the_request_as_before(offline, tmp_path):
    trimmed = snip_text(LONG_REQUEST, SNIP.keep_chars)
    off = await snipped_run(offline, tmp_path, keep_latest_request=False)
    before = loop_bodies(off)[:loop_bodies(off).index(first_after_compaction(off))]
    assert any(trimmed in all_texts(body) for body in before)
    assert after_summary(first_after_compaction(off)) == []
    on = await snipped_run(offline, tmp_path)  # the same run with the switch on: never trimmed
    assert not any(trimmed in all_texts(body) for body in loop_bodies(on))


OLDER_REQUEST = " ".join(f"First pass {n}: list the files and say how long each one is, shortest first."
                         for n in range(20))
"""A first prompt, also longer than ``SNIP.max_chars``; the second prompt (``LONG_REQUEST``) comes after it."""


async def test_an_older_request_is_trimmed_the_newest_kept(offline, tmp_path):
    """Two long prompts in one session: once the second arrives, snip trims the first (spared while it was the
    newest); the compaction keeps the second word for word."""
    policy = reader(LONG_SESSION[:20], summary=SUMMARY)
    model = offline(policy, context_window=20_000, keep_bodies=None)
    engine = QueryEngine(model=model, tools=[read], workspace=tmp_path, deps=QueryDeps(uuid=counting_uuids()),
                         context=ContextOptions(snip=SNIP, autocompact=Autocompact(threshold=2000, keep_recent=4)))
    typed = 0
    async for event in engine.submit_message(OLDER_REQUEST):
        if event.type == "system" and event.subtype == "snip" and not typed:  # snip has run past the first prompt
            engine.enqueue(LONG_REQUEST)
            typed = 1
    assert typed and policy.compactions >= 1
    trimmed = snip_text(OLDER_REQUEST, SNIP.keep_chars)
    snipped = [all_texts(body) for body in loop_bodies(model)  # snip ran past the first prompt, the second not here
               if "[snipped:" in json.dumps(body) and LONG_REQUEST not in all_texts(body)]
    assert snipped and all(OLDER_REQUEST in said for said in snipped)  # whole while it was the newest
    summarising = next(r.body for r in model.api.requests
                       if r.path.endswith("/v1/messages") and r.status == 200 and is_compaction_request(r.body))
    said = all_texts(summarising)
    assert trimmed in said and OLDER_REQUEST not in said  # trimmed once a newer one came
    assert after_summary(first_after_compaction(model))[0] == LONG_REQUEST
