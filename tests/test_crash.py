"""Crash safety: a session killed with SIGKILL at each point of a run, then resumed (issue 10, F11).

Each case runs the session of ``dreamloop.demo.crash`` in a real child process, which stops at
its point and prints a marker; it is killed with SIGKILL on that marker (no sleeps as
synchronisation).
Then the transcript is resumed here, twice, and the person writes "hi". For every point:
the request is one the offline API accepts (the ``offline`` fixture fails on any 400); every
call whose finished event the child received is answered with its real result; every
``tool_use`` is answered exactly once, in the next message, in call order; a second resume
changes nothing.
"""

from __future__ import annotations

import json
import os
import signal
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.demo import crash
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine
from dreamloop.errors import TranscriptWarning
from dreamloop.transcript import SESSION_ENDED, inspect_transcript

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL and a child process: POSIX only")



def resume(path: Path, model, start: int = 1000):
    """``QueryEngine.resume`` with the child's tools; returns the engine and the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        engine = QueryEngine.resume(path, model=model, tools=crash.TOOLS,
                                    deps=QueryDeps(uuid=counting_uuids(start)))
    return engine, [w for w in caught if issubclass(w.category, TranscriptWarning)]


def dumped(messages):
    return [m.model_dump(mode="json") for m in messages]


def real_result(name: str, path: str) -> str:
    return f"noted {path}" if name == "Note" else f"contents of {path}"


def assert_every_call_answered_once(messages: list[dict]) -> None:
    """Invariants 2 and 3 of the field cases, over the request's messages."""
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        calls = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not calls:
            continue
        following = messages[i + 1]["content"]
        answers = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
        assert answers == calls, f"message {i + 1} answers {answers}, the calls were {calls}"
        assert [b["type"] for b in following[: len(calls)]] == ["tool_result"] * len(calls)
    every = [b["tool_use_id"] for m in messages if isinstance(m["content"], list)
             for b in m["content"] if b["type"] == "tool_result"]
    assert len(every) == len(set(every)), f"a call answered twice: {every}"


@dataclass(frozen=True)
class Point:
    name: str
    calls: str            # crash.CALLS key
    real: tuple[str, ...]  # answered with their real result after the resume
    ended: tuple[str, ...]  # answered with the SESSION_ENDED error
    torn: bool = False     # the kill tore a line
    asked: bool = True     # the assistant message with the calls reached the transcript


MATRIX = [
    Point("mid_stream", "three reads", (), (), asked=False),
    Point("mid_batch", "one slow", ("T1", "T3"), ("T2",)),
    Point("between_batches", "reads then a note", ("T1", "T2"), ("T3",)),
    Point("after_results_saved", "three reads", ("T1", "T2", "T3"), ()),
    Point("between_turns", "three reads", ("T1", "T2", "T3"), ()),
    Point("torn_first_write", "three reads", (), (), torn=True, asked=False),
    Point("torn_result_record", "three reads", ("T1", "T2"), ("T3",), torn=True),
    Point("torn_results_message", "three reads", ("T1", "T2", "T3"), (), torn=True),
]


@pytest.mark.slow
@pytest.mark.parametrize("point", MATRIX, ids=lambda p: p.name)
async def test_crash_matrix(point, offline, tmp_path):
    path = tmp_path / "session.jsonl"
    seen = crash.crash_session(path, point.name)
    on_disk = path.read_bytes()
    assert set(seen) <= set(point.real), f"the child saw {seen} finish; not all are kept"

    model = offline([S.reply("Hello again.")])
    engine, said = resume(path, model)
    repaired = point.torn or bool(point.ended) or point.name in ("after_results_saved",)
    assert (engine.repair is not None) == repaired
    assert len(said) == (1 if repaired else 0)
    if point.torn:
        assert "torn last line" in engine.repair.content
        torn = [json.loads(line) for line in path.read_text().splitlines() if '"torn_line"' in line]
        assert len(torn) == 1 and torn[0]["text"].encode() == on_disk[on_disk.rfind(b"\n") + 1:]
    else:
        assert path.read_bytes()[: len(on_disk)] == on_disk  # a repair only appends

    # a second resume changes nothing
    after_first = path.read_bytes()
    again, said_again = resume(path, model, start=2000)
    assert path.read_bytes() == after_first
    assert again.repair is None and said_again == []
    assert dumped(again.messages) == dumped(engine.messages)
    assert inspect_transcript(path).needs_repair is False

    async for _ in again.submit_message("hi"):
        pass
    assert again.terminal.reason == "completed"
    request = model.api.requests[-1]
    assert request.status == 200
    sent = request.body["messages"]
    assert_every_call_answered_once(sent)
    assert sent[-1]["role"] == "user" and sent[-1]["content"][-1] == {"type": "text", "text": "hi"}
    if not point.asked:
        assert [m["role"] for m in sent] == ["user"]
        return
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    results = {b["tool_use_id"]: b for b in sent[2]["content"] if b["type"] == "tool_result"}
    for id, name, file in crash.CALLS[point.calls]:
        if id in point.real:
            assert results[id] == {"type": "tool_result", "tool_use_id": id, "content": real_result(name, file)}
        else:
            assert id in point.ended
            assert results[id] == {"type": "tool_result", "tool_use_id": id, "content": SESSION_ENDED, "is_error": True}


def test_crash_session_names_its_points(tmp_path):
    with pytest.raises(ValueError, match="unknown point 'mid_air': one of mid_stream, mid_batch"):
        crash.crash_session(tmp_path / "s.jsonl", "mid_air")


@pytest.mark.slow
async def test_f11_crash_mid_batch_then_hi(offline, tmp_path):
    """F11: T1 and T3 finish, T2 still runs at SIGKILL; resumed, "hi" gets a valid request."""
    path = tmp_path / "session.jsonl"
    assert crash.crash_session(path, "mid_batch") == ["T1", "T3"]
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in saved] == ["user", "assistant", "progress", "progress"]
    assert [r["data"]["result"]["tool_use_id"] for r in saved[2:]] == ["T1", "T3"]

    model = offline([S.reply("Hello again.")])
    engine, _ = resume(path, model)
    async for _ in engine.submit_message("hi"):
        pass
    last = model.api.requests[-1].body["messages"][-1]
    assert last == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"},
        {"type": "tool_result", "tool_use_id": "T2", "content": SESSION_ENDED, "is_error": True},
        {"type": "tool_result", "tool_use_id": "T3", "content": "contents of c"},
        {"type": "text", "text": "hi"},
    ]}
    assert engine.terminal.reason == "completed"


@pytest.mark.slow
async def test_a_resume_killed_while_writing_its_repair_is_repaired_again(offline, tmp_path):
    path = tmp_path / "session.jsonl"
    crash.crash_session(path, "mid_batch")
    before = path.read_bytes()
    crash.crash_session(path, "resume_killed")
    assert path.read_bytes().startswith(before) and not path.read_bytes().endswith(b"\n")

    model = offline([S.reply("Hello again.")])
    engine, said = resume(path, model)
    assert "torn last line" in engine.repair.content and len(said) == 1
    assert len(inspect_transcript(path).repairs) == 1  # the torn one was set aside, not counted
    async for _ in engine.submit_message("hi"):
        pass
    sent = model.api.requests[-1].body["messages"]
    assert_every_call_answered_once(sent)
    assert [b.get("is_error", False) for b in sent[-1]["content"][:3]] == [False, True, False]


# ---------------------------------------------------------------------------
# The same in a notebook: the kernel dies mid-batch, the person restarts it and resumes.
# These two cells are what chapter 10 will show (until it exists, this test holds them).

KERNEL_RUN = """
from dreamloop.demo.crash import run_until    # three parallel Reads; the one on "slow" never finishes
await run_until("mid_batch", {path!r})        # T1 and T3 finish, then the kernel dies
"""

KERNEL_RESUME = """
import dreamloop as dl
from dreamloop.demo.crash import TOOLS
print(dl.inspect_transcript({path!r}))        # what the dead kernel left
engine = dl.QueryEngine.resume({path!r}, model=dl.offline([dl.reply("Hello again.")]), tools=TOOLS)
print(engine.repair.content)                  # what the resume repaired
async for event in engine.submit_message("hi"):
    pass
request = engine.defaults["model"].api.requests[-1]
print(engine.terminal.reason, request.status)
print([(b["tool_use_id"], b.get("is_error", False)) for b in request.body["messages"][-1]["content"][:3]])
"""


def _execute(client, code: str, *, until: str | None = None, timeout: float = 120) -> str:
    """Run ``code`` in the kernel; return its stdout (stop early once ``until`` appears in it)."""
    msg_id = client.execute(code)
    out = []
    while True:
        msg = client.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream" and content["name"] == "stdout":
            out.append(content["text"])
            if until and until in "".join(out):
                return "".join(out)
        elif kind == "error":
            pytest.fail("the cell raised:\n" + "\n".join(content["traceback"]))
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)


@pytest.mark.slow
def test_a_kernel_killed_mid_batch_resumes_after_a_restart(tmp_path):
    from jupyter_client import KernelManager

    path = str(tmp_path / "session.jsonl")
    cells = {"path": path}
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(tmp_path))
    try:
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=120)
        assert "at mid_batch T1,T3" in _execute(client, KERNEL_RUN.format(**cells), until="at mid_batch")
        manager.signal_kernel(signal.SIGKILL)  # the kernel dies in the middle of the batch
        deadline = time.monotonic() + 60
        while manager.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not manager.is_alive()
        client.stop_channels()
        manager.restart_kernel(now=True)
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=120)
        out = _execute(client, KERNEL_RESUME.format(**cells))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    lines = out.splitlines()
    assert lines[:3] == ["session.jsonl: 4 records; 2 loop messages: user, assistant",
                         "  tool_use without a results message: T1 (Read), T2 (Read), T3 (Read)",
                         "  of those, finished and saved: T1, T3"]
    assert any(line.startswith("Resumed after the session ended mid-run;") for line in lines)
    assert lines[-2:] == ["completed 200", "[('T1', False), ('T2', True), ('T3', False)]"]
