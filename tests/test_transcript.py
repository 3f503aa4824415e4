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
from dreamloop.errors import TranscriptBusy, TranscriptError, TranscriptWarning
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
    with pytest.raises(TranscriptError, match=r"s\.jsonl, line 2: not JSON"):
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


async def test_the_report_is_in_the_reader_s_language_and_the_kept_notice_in_english(offline, tmp_path):
    from dreamloop import language as L
    path = await crash_image(offline, tmp_path, after_done=2)
    try:
        L.language("zh")
        shown = str(inspect_transcript(path)).splitlines()
        with pytest.warns(TranscriptWarning):
            engine = resumed(path, offline([S.reply("Hello again.")]))
        after = str(inspect_transcript(path)).splitlines()
    finally:
        L.language("en")
    assert shown == [
        "crashed.jsonl：4 条记录；2 条循环消息：user, assistant",
        "  没有结果消息的 tool_use：T1 (Read), T2 (Read), T3 (Read)",
        "  其中已完成并保存了结果的：T1, T3",
        "  续接会话时会：用完成时保存的结果回应 T1 (Read), T3 (Read)；给 T2 (Read) 一个 is_error 结果（会话在它完成之前就结束了）",
    ]
    assert engine.repair.content.startswith("Resumed after the session ended mid-run; repaired the transcript: "
                                            "answered T1 (Read), T3 (Read) with the results saved when they finished")
    assert after[-2:] == [f"  之前一次续接会话时已修复：{engine.repair.content}", "  没有需要修复的"]


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


# ---------------------------------------------------------------------------
# Two writers: duplicated and forked records, the lock, a stale engine (issue 24, item 4)


async def finished_session(offline, path: Path) -> None:
    gate = asyncio.Event()
    gate.set()
    engine = engine_for(offline([THREE, S.reply("ok")]), path, gate=gate)
    async for _ in engine.submit_message("read"):
        pass


@pytest.mark.parametrize("kind", ["assistant", "user", "progress"])
async def test_a_duplicated_record_is_skipped_and_set_aside_once(offline, tmp_path, kind):
    path = tmp_path / "s.jsonl"
    await finished_session(offline, path)
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == kind and i > 0)
    lines.insert(at + 1, lines[at])  # the same record twice (a copied line)
    path.write_text("\n".join(lines) + "\n")
    report = inspect_transcript(path)
    assert report.set_aside == ((at + 2, f"a duplicate of line {at + 1}"),) and report.needs_repair
    assert [m.type for m in report.messages] == ["user", "assistant", "user", "assistant"]
    model = offline([S.reply("Still here.")])
    with pytest.warns(TranscriptWarning, match=rf"set aside line {at + 2} \(a duplicate\)"):
        engine = resumed(path, model)
    assert records(path)[-2] == {"type": "set_aside", "lines": [at + 2], "why": [f"a duplicate of line {at + 1}"]}
    assert not inspect_transcript(path).needs_repair  # a second resume finds nothing new
    async for _ in engine.submit_message("and now?"):
        pass
    assert engine.terminal.reason == "completed" and model.api.requests[-1].status == 200


async def test_two_writers_that_forked_the_chain_are_repaired_to_the_last_branch(offline, tmp_path):
    """What two processes resuming one file at once (before the lock) left: two chains from one record."""
    path = tmp_path / "s.jsonl"
    await finished_session(offline, path)
    tip = records(path)[-1]["uuid"]
    branch = lambda name, parent: {"type": "user", "uuid": f"{name}-u", "parentUuid": parent,  # noqa: E731
                                   "sessionId": "dreamloop-session", "message": user_message(name).message}
    answer = lambda name: {"type": "assistant", "uuid": f"{name}-a", "parentUuid": f"{name}-u",  # noqa: E731
                           "sessionId": "dreamloop-session",
                           "message": {"id": f"msg_{name}", "type": "message", "role": "assistant", "model": "m",
                                       "content": [{"type": "text", "text": f"answer to {name}"}],
                                       "stop_reason": "end_turn", "stop_sequence": None,
                                       "usage": {"input_tokens": 1, "output_tokens": 1}}}
    interleaved = [branch("first", tip), branch("second", tip), answer("first"), answer("second")]
    with path.open("a") as out:
        out.write("".join(json.dumps(r) + "\n" for r in interleaved))
    report = inspect_transcript(path)
    assert [line for line, _ in report.set_aside] == [8, 10]  # the first writer's records
    assert [m.uuid for m in report.messages][-2:] == ["second-u", "second-a"] and report.last_uuid == "second-a"
    model = offline([S.reply("Carrying on.")])
    with pytest.warns(TranscriptWarning, match="another writer's branch"):
        engine = resumed(path, model)
    async for _ in engine.submit_message("go on"):
        pass
    sent = model.api.requests[-1].body["messages"]
    assert model.api.requests[-1].status == 200 and "answer to first" not in json.dumps(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert not inspect_transcript(path).needs_repair


async def test_a_second_writer_is_refused_while_a_run_holds_the_transcript(offline, tmp_path):
    path, gate = tmp_path / "s.jsonl", asyncio.Event()
    engine = engine_for(offline([THREE, S.reply("ok")]), path, gate=gate)
    refused = []
    async for event in engine.submit_message("read"):
        if event.type == "progress" and event.data["stage"] == "done" and event.tool_use_id == "T3":
            with pytest.raises(TranscriptBusy, match="another session is writing this transcript") as busy:
                resumed(path, offline([]))
            refused.append(str(busy.value))
            gate.set()
    assert refused and str(path) in refused[0]
    assert engine.terminal.reason == "completed" and not inspect_transcript(path).needs_repair


async def test_an_engine_whose_transcript_another_wrote_to_is_refused_before_anything_is_sent(offline, tmp_path):
    path = tmp_path / "s.jsonl"
    await finished_session(offline, path)
    first = resumed(path, offline([S.reply("one")]))
    second = resumed(path, offline([S.reply("two")]), start=200)
    async for _ in second.submit_message("from the second"):
        pass
    before = path.read_bytes()
    with pytest.raises(TranscriptBusy, match="another session wrote to this transcript after this engine did"):
        async for _ in first.submit_message("from the first"):
            pass
    assert path.read_bytes() == before and first.defaults["model"].api.requests == []
    again = resumed(path, offline([S.reply("three")]), start=300)  # resuming again continues from what it holds
    async for _ in again.submit_message("from the first, again"):
        pass
    assert again.terminal.reason == "completed" and not inspect_transcript(path).set_aside


async def test_a_new_engine_on_a_transcript_that_holds_a_session_is_refused(offline, tmp_path):
    path = tmp_path / "s.jsonl"
    await finished_session(offline, path)
    with pytest.raises(TranscriptBusy, match=r"already holds a session; continue it with QueryEngine.resume"):
        engine_for(offline([]), path)
    with pytest.raises(FileNotFoundError, match="no such transcript"):
        resumed(tmp_path / "missing.jsonl", offline([]))


def test_last_chained_uuid_reads_backwards_past_records_without_one(tmp_path):
    from dreamloop.transcript import last_chained_uuid

    path = tmp_path / "s.jsonl"
    big = "x" * 200_000  # longer than one chunk
    path.write_text(json.dumps({"type": "user", "uuid": "u1", "text": big}) + "\n"
                    + json.dumps({"type": "torn_line", "line": 3, "text": big}) + "\n" + '{"type": "us')
    assert last_chained_uuid(path, chunk=4096) == "u1"
    assert last_chained_uuid(tmp_path / "none.jsonl") is None


# ---------------------------------------------------------------------------
# A write that fails (a full disk; here a file size limit, RLIMIT_FSIZE, in a child process) (issue 24, item 2)

FULL_DISK = r'''
import asyncio, json, resource, signal, sys
from pathlib import Path

from pydantic import BaseModel

import dreamloop as dl
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.tools import tool
from dreamloop.transcript import inspect_transcript, load_transcript

class PathInput(BaseModel):
    path: str

@tool(PathInput, name="Read", read_only=True)
async def read(input: PathInput) -> str:
    """Read a file."""
    return f"contents of {input.path} " + "x" * 400

path = Path(sys.argv[1])
out = {}

async def main():
    model = dl.offline([dl.reply("Hello."),
                        dl.reply("Reading.", dl.tool_use("Read", {"path": "a"}, id="T1"),
                                 dl.tool_use("Read", {"path": "b"}, id="T2")),
                        dl.reply("Both read."), dl.reply("Done.")])
    engine = dl.QueryEngine(model=model, tools=[read], transcript=path, deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message("hi"):
        pass
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    limit = path.stat().st_size + int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    events = [e async for e in engine.submit_message("read a and b")]
    out["terminal"] = engine.terminal.reason
    out["notice"] = [e.content for e in events if e.type == "system" and e.subtype == "transcript_write_failed"]
    out["on_disk_ok"] = not inspect_transcript(path).torn and path.read_bytes().endswith(b"\n")
    sent = len(model.api.requests)
    try:
        async for _ in engine.submit_message("and now?"):
            pass
        out["refused"] = None
    except OSError as error:
        out["refused"] = str(error)
    out["sent_while_refused"] = len(model.api.requests) - sent
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    async for _ in engine.submit_message("and now?"):
        pass
    out["after"] = engine.terminal.reason
    out["same"] = ([m.model_dump(mode="json") for m in load_transcript(path)]
                   == [m.model_dump(mode="json") for m in engine.messages])
    out["statuses"] = [r.status for r in model.api.requests]
    print(json.dumps(out))

asyncio.run(main())
'''


@pytest.mark.parametrize("room", [0, 150, 700])
def test_a_failed_write_ends_the_run_keeps_memory_and_disk_whole_and_writes_it_later(tmp_path, room):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path / "s.jsonl"), str(room)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["terminal"] in ("aborted_streaming", "aborted_tools")  # the run ended in a Terminal
    assert out["notice"] and "could not be written" in out["notice"][0] and "s.jsonl" in out["notice"][0]
    assert out["on_disk_ok"]  # nothing half-written was left
    assert "still not on disk" in out["refused"] and "nothing was sent" in out["refused"]
    assert out["sent_while_refused"] == 0
    assert out["after"] == "completed" and out["same"]  # written first, then the run: disk equals memory
    assert set(out["statuses"]) == {200}  # every request the engine sent was valid


async def test_an_abnormal_end_writes_what_its_cleanup_did_outside_the_chain(offline, tmp_path):
    """Issue 23, item 6: the reason is logged in the transcript as well as the trace; the history is unchanged."""
    path = tmp_path / "s.jsonl"
    again = S.reply("Again.", S.tool_use("Read", {"path": "a"}, id="T1"))
    engine = QueryEngine(model=offline([again, S.reply("x", S.tool_use("Read", {"path": "b"}, id="T2"))]),
                         tools=[reader()], transcript=path, max_turns=1, deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message("loop"):
        pass
    assert engine.terminal.reason == "max_turns"
    ended = [r for r in records(path) if r["type"] == "run_ended"]
    assert ended == [{"type": "run_ended", "sessionId": "dreamloop-session", "reason": "max_turns",
                      "content": engine.last_run.ended.content}]
    report = inspect_transcript(path)
    assert not report.unknown and not report.needs_repair
    assert [m.model_dump(mode="json") for m in load_transcript(path)] == \
        [m.model_dump(mode="json") for m in engine.messages]
