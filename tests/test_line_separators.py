"""Raw U+2028, U+2029 and U+0085 inside strings (issue 24, item 3).

Node's ``JSON.stringify`` (so Claude Code) writes them raw; Python's ``str.splitlines`` splits on them.
Every reader of JSON lines splits on ``\\n`` only: Claude Code sessions, cassettes (a dreamloop cassette
of a run whose model text or file read held one), transcripts, traces, SSE.
"""

from __future__ import annotations

import json

import pytest

import dreamloop as dl
from dreamloop.claude_code import read_session
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.fake_api import serve
from dreamloop.fake_api.sse import parse_frames
from dreamloop.trace import Trace

SEPARATORS = ["\u2028", "\u2029", "\u0085"]


def node_json(record) -> str:
    """One line as Node writes it: non-ASCII raw, U+2028/2029/0085 included."""
    return json.dumps(record, ensure_ascii=False)


@pytest.mark.parametrize("sep", SEPARATORS)
def test_a_claude_code_session_with_a_raw_separator_is_read(tmp_path, sep):
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": f"line one{sep}line two"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s",
         "message": {"role": "assistant", "id": "msg_1", "model": "claude-x", "type": "message",
                     "usage": {"input_tokens": 5, "output_tokens": 2},
                     "content": [{"type": "text", "text": f"got it{sep}both"}]}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(node_json(r) + "\n" for r in records), encoding="utf-8")
    trace = read_session(path).trace()
    [point] = trace.checkpoints
    [output] = trace.resolve(point.assistant_messages)
    assert output.message.content[0].text == f"got it{sep}both" and trace.source["rejected_exchanges"] == []


@pytest.mark.parametrize("sep", SEPARATORS)
async def test_a_cassette_of_a_run_whose_text_and_file_held_a_separator_replays(tmp_path, sep):
    workspace = tmp_path / "w"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(f"a{sep}b\n", encoding="utf-8")
    script = [dl.reply(f"Reading{sep}it.", dl.tool_use("Read", {"file_path": "notes.txt"})),
              dl.reply(f"It says a{sep}b.")]
    path = tmp_path / "run.cassette.jsonl"

    async def run_with(model):
        run = dl.query(dl.QueryParams(messages="read notes.txt", model=model, tools=dl.builtin_tools(),
                                      workspace=workspace, permission_mode="bypass",
                                      deps=QueryDeps(uuid=counting_uuids())))
        return run, [e.model_dump(mode="json") async for e in run]

    with serve(script) as server:
        model = dl.live("claude-scripted-1", api_key="sk-test", base_url=server.url, record=path)
        run, events = await run_with(model)
        model.recorder.finish(run)
    assert sep in path.read_text(encoding="utf-8")  # written raw, as recorded
    replay = dl.cassette(path)
    run, replayed = await run_with(dl.offline(replay))
    assert replayed == events and run.terminal.reason == "completed"


@pytest.mark.parametrize("sep", SEPARATORS)
async def test_transcripts_and_traces_keep_a_separator_inside_its_line(tmp_path, sep):
    engine = QueryEngine(model=dl.offline([dl.reply(f"x{sep}y")]), transcript=tmp_path / "t.jsonl",
                         deps=QueryDeps(uuid=counting_uuids()))
    async for _ in engine.submit_message(f"say{sep}it"):
        pass
    assert [m.type for m in load_transcript(tmp_path / "t.jsonl")] == ["user", "assistant"]
    trace_path = tmp_path / "t.trace.jsonl"
    engine.last_run.trace.save(trace_path)
    assert Trace.load(trace_path).terminal.reason == "completed"


def test_sse_data_lines_split_at_cr_and_lf_only():
    body = 'event: ping\ndata: {"type": "ping", "x": "a\u2028b\u0085c"}\n\n'
    assert parse_frames(body) == [{"type": "ping", "x": "a\u2028b\u0085c"}]
