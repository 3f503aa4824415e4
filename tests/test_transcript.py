"""The transcript: records written before their events are yielded, read back robustly, repaired on resume.

In-process: a crash is imitated by copying the transcript at the moment of an event (what a
SIGKILL then would leave). ``test_crash.py`` kills real processes.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from anthropic.types import ToolUseBlock
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.errors import TranscriptError, TranscriptWarning
from dreamloop.messages import SystemMessage, user_message
from dreamloop.tools import tool
from dreamloop.transcript import (
    REPAIR_SUBTYPE,
    SESSION_ENDED,
    TornLine,
    TranscriptReport,
    inspect_transcript,
    repair_messages,
)


class PathInput(BaseModel):
    path: str


def reader(gate: asyncio.Event | None = None):
    """A parallel-safe Read; the path "slow" finishes when ``gate`` is set (never, without one)."""

    @tool(PathInput, name="Read", read_only=True)
    async def read(input: PathInput) -> str:
        """Read a file."""
        if input.path == "slow":
            await (gate or asyncio.Event()).wait()
        return f"contents of {input.path}"

    return read


THREE = S.reply("Reading.", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "slow"}, id="T2"),
                S.tool_use("Read", {"path": "c"}, id="T3"))


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def engine_for(model, path, start=1, gate=None):
    return QueryEngine(model=model, tools=[reader(gate)], transcript=path, deps=QueryDeps(uuid=counting_uuids(start)))


async def crash_image(offline, tmp_path, *, after_done: int) -> Path:
    """A transcript as a kill would leave it after ``after_done`` finished calls of THREE (T2 still running)."""
    live, crashed = tmp_path / "live.jsonl", tmp_path / "crashed.jsonl"
    engine = engine_for(offline([THREE, S.reply("ok")]), live)
    done = 0
    async for event in engine.submit_message("read a, slow and c"):
        if event.type == "progress" and event.data["stage"] == "done":
            done += 1
            if done == after_done:
                shutil.copy(live, crashed)
                engine.last_run.abort()
    return crashed


def resumed(path, model, start=100):
    return QueryEngine.resume(path, model=model, tools=[reader()], deps=QueryDeps(uuid=counting_uuids(start)))


# ---------------------------------------------------------------------------
# Writing: on disk before the event is yielded


async def test_every_record_is_on_disk_before_its_event_is_yielded(offline, tmp_path):
    path, gate = tmp_path / "s.jsonl", asyncio.Event()
    engine = engine_for(offline([THREE, S.reply("ok")]), path, gate=gate)
    checked = 0
    async for event in engine.submit_message("read"):
        if event.type == "progress" and event.data["stage"] == "done" and event.tool_use_id == "T3":
            gate.set()  # T2 finishes last
        if event.type in ("stream_event", "stream_request_start") or (
                event.type == "progress" and event.data["stage"] != "done"):
            continue
        on_disk = records(path)
        assert on_disk[-1]["uuid"] == event.uuid, f"{event.type} was yielded before it was written"
        checked += 1
    assert checked == 6  # assistant, 3 finished calls, results message, final assistant
    kinds = [r["type"] for r in records(path)]
    assert kinds == ["user", "assistant", "progress", "progress", "progress", "user", "assistant"]
    done = [r for r in records(path) if r["type"] == "progress"]
    assert [r["data"]["result"]["tool_use_id"] for r in done] == ["T1", "T3", "T2"]  # completion order
    chain = records(path)
    assert [r["parentUuid"] for r in chain] == [None] + [r["uuid"] for r in chain[:-1]]


async def test_load_transcript_returns_the_loop_messages_only(offline, tmp_path):
    path, gate = tmp_path / "s.jsonl", asyncio.Event()
    gate.set()
    engine = engine_for(offline([THREE, S.reply("ok")]), path, gate=gate)
    async for _ in engine.submit_message("read"):
        pass
    loaded = load_transcript(path)
    assert [m.model_dump(mode="json") for m in loaded] == [m.model_dump(mode="json") for m in engine.messages]
    assert [m.type for m in loaded] == ["user", "assistant", "user", "assistant"]


# ---------------------------------------------------------------------------
# Reading what a crash leaves, and what it cannot


async def test_a_torn_last_line_is_skipped_with_a_warning_and_set_aside_on_resume(offline, tmp_path):
    path = await crash_image(offline, tmp_path, after_done=2)
    intact = path.read_bytes()
    with path.open("ab") as out:
        out.write(b'{"type": "user", "uuid": "00000000-0000-4000-8000-0000000000')  # cut short
    with pytest.warns(TranscriptWarning, match="torn last line"):
        assert len(load_transcript(path)) == 2
    assert inspect_transcript(path).torn.line == 5

    with pytest.warns(TranscriptWarning, match=r"torn last line \(line 5, 60 bytes\)"):
        engine = resumed(path, offline([]))
    text = path.read_bytes()
    assert text.startswith(intact)
    set_aside = records(path)[4]
    assert set_aside == {"type": "torn_line", "line": 5,
                         "text": '{"type": "user", "uuid": "00000000-0000-4000-8000-0000000000'}
    assert "torn_line" not in [m.type for m in engine.messages]


async def test_a_complete_last_line_without_its_newline_is_a_record(offline, tmp_path):
    path = tmp_path / "s.jsonl"
    engine = engine_for(offline([S.reply("hello"), S.reply("again")]), path)
    async for _ in engine.submit_message("hi"):
        pass
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    engine = resumed(path, engine.defaults["model"])
    assert engine.repair is None and len(engine.messages) == 2
    async for _ in engine.submit_message("more"):
        pass
    assert [r["type"] for r in records(path)] == ["user", "assistant", "user", "assistant"]


def test_a_bad_line_that_is_not_last_is_a_clear_error(tmp_path):
    path = tmp_path / "s.jsonl"
    good = json.dumps({"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
                       "message": {"role": "user", "content": "hi"}})
    path.write_text(good + "\n{not json\n" + good + "\n")
    with pytest.raises(TranscriptError, match=r"s\.jsonl, line 2: not a JSON record"):
        load_transcript(path)
    with pytest.raises(TranscriptError, match="line 2"):
        QueryEngine.resume(path, model=None)
    path.write_text(good + "\n" + json.dumps({"type": "assistant", "uuid": "a1", "message": {"id": 3}}) + "\n")
    with pytest.raises(TranscriptError, match=r"line 2: a 'assistant' record that is not a valid message \(message\."):
        load_transcript(path)


async def test_unknown_records_are_kept_on_disk_and_never_sent(offline, tmp_path):
    path = tmp_path / "s.jsonl"
    model = offline([S.reply("hello"), S.reply("again")])
    engine = engine_for(model, path)
    async for _ in engine.submit_message("hi"):
        pass
    bookkeeping = [{"type": "summary", "summary": "Greeting", "leafUuid": engine.messages[-1].uuid},
                   {"type": "file-history-snapshot", "messageId": "m1", "snapshot": {"trackedFileBackups": {}}},
                   {"type": "queue-operation", "operation": "enqueue", "content": "SECRET-QUEUED-TEXT"}]
    with path.open("a") as out:
        out.writelines(json.dumps(r) + "\n" for r in bookkeeping)
    report = inspect_transcript(path)
    assert report.unknown == ((3, "summary"), (4, "file-history-snapshot"), (5, "queue-operation"))
    assert not report.needs_repair

    engine = resumed(path, model)
    assert engine.repair is None
    async for _ in engine.submit_message("more"):
        pass
    sent = json.dumps(model.api.requests[-1].body)
    assert "SECRET-QUEUED-TEXT" not in sent and "Greeting" not in sent
    assert [r["type"] for r in records(path)] == [
        "user", "assistant", "summary", "file-history-snapshot", "queue-operation", "user", "assistant"]


# ---------------------------------------------------------------------------
# The repair


def _call(id):
    return ToolUseBlock(type="tool_use", id=id, name="Read", input={"path": id})


def _saved(id):
    return {"type": "tool_result", "tool_use_id": id, "content": f"saved {id}"}


@pytest.mark.parametrize("dangling, saved, torn, results, notice", [
    ((), {}, False, None, None),
    (("T1", "T2", "T3"), {"T1", "T3"}, False, ["saved T1", SESSION_ENDED, "saved T3"],
     "answered T1 (Read), T3 (Read) with the results saved when they finished; answered T2 (Read) with an is_error "
     "result (the session ended before it finished)"),
    (("T1", "T2"), {"T1", "T2", "T9"}, False, ["saved T1", "saved T2"],
     "answered T1 (Read), T2 (Read) with the results"),
    (("T1",), set(), False, [SESSION_ENDED], "answered T1 (Read) with an is_error result"),
    ((), {"T1"}, True, None, "set aside a torn last line (line 4, 3 bytes)"),
    (("T2", "T1"), {"T1"}, True, [SESSION_ENDED, "saved T1"], "; set aside a torn last line"),
], ids=["nothing", "F11", "all saved", "none saved", "torn only", "order and torn"])
def test_repair_messages(dangling, saved, torn, results, notice):
    report = TranscriptReport(path=Path("s.jsonl"), records=3, messages=[],
                              saved_results={i: _saved(i) for i in saved},
                              dangling=tuple(_call(i) for i in dangling),
                              torn=TornLine(line=4, offset=10, data=b'{"t') if torn else None)
    repair = repair_messages(report, uuid=counting_uuids())
    if notice is None:
        assert repair == []
        return
    *answer, note = repair
    assert isinstance(note, SystemMessage) and note.subtype == REPAIR_SUBTYPE and note.level == "warning"
    assert notice in note.content
    if results is None:
        assert answer == []
        return
    (message,) = answer
    blocks = message.message["content"]
    assert [b["tool_use_id"] for b in blocks] == list(dangling)  # call order, once each
    assert [b["content"] for b in blocks] == results
    assert [b.get("is_error", False) for b in blocks] == [r == SESSION_ENDED for r in results]
    assert message.source_tool_use_ids == tuple(dangling)


async def test_resume_repairs_once_and_says_so(offline, tmp_path):
    path = await crash_image(offline, tmp_path, after_done=2)
    report = inspect_transcript(path)
    assert [b.id for b in report.dangling] == ["T1", "T2", "T3"] and set(report.saved_results) == {"T1", "T3"}
    assert str(report).splitlines() == [
        "crashed.jsonl: 4 records; 2 loop messages: user, assistant",
        "  tool_use without a results message: T1 (Read), T2 (Read), T3 (Read)",
        "  of those, finished and saved: T1, T3",
        "  a resume would: answer T1 (Read), T3 (Read) with the results saved when they finished; "
        "answer T2 (Read) with an is_error result (the session ended before it finished)",
    ]
    model = offline([S.reply("Hello again.")])
    with pytest.warns(TranscriptWarning, match="repaired the transcript"):
        engine = resumed(path, model)
    assert engine.messages[-1] == engine.repair and engine.repair.subtype == "resume_repair"
    assert [r["type"] for r in records(path)] == ["user", "assistant", "progress", "progress", "user", "system"]
    after = inspect_transcript(path)
    assert not after.needs_repair and [n.uuid for n in after.repairs] == [engine.repair.uuid]
    assert str(after).splitlines()[-2:] == [f"  repaired by an earlier resume: {engine.repair.content}",
                                            "  nothing to repair"]
    chain = records(path)
    assert chain[4]["parentUuid"] == chain[3]["uuid"] and chain[5]["sessionId"] == chain[0]["sessionId"]


async def test_an_abort_leaves_nothing_to_repair(offline, tmp_path):
    path = tmp_path / "s.jsonl"
    engine = engine_for(offline([THREE]), path)
    async for event in engine.submit_message("read"):
        if event.type == "progress" and event.data["stage"] == "done" and event.tool_use_id == "T3":
            engine.last_run.abort()
    assert engine.terminal.reason == "aborted_tools"
    assert resumed(path, offline([])).repair is None


async def test_a_session_the_old_engine_left_dead_comes_back(offline, tmp_path):
    """The issue's report: a transcript with the calls but no results, then prompts that all got a 400."""
    path = await crash_image(offline, tmp_path, after_done=2)
    kept = [line for line in path.read_text().splitlines() if '"progress"' not in line]  # the old engine saved none
    old = [json.dumps({"type": "user", "uuid": f"p{i}", "parentUuid": None, "sessionId": "s",
                       "message": user_message(text).message}) for i, text in enumerate(["hi", "hello?"])]
    path.write_text("\n".join(kept + old) + "\n")
    model = offline([S.reply("Back.")])
    with pytest.warns(TranscriptWarning):
        engine = resumed(path, model)
    async for _ in engine.submit_message("please continue"):
        pass
    assert engine.terminal.reason == "completed"
    last = model.api.requests[-1].body["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result"] * 3 + ["text"] * 3
    assert all(b.get("is_error") for b in last["content"][:3])
