"""The importer on the session files that `make conformance` runs of Claude Code leave (issue 21, item 7).

`make conformance` keeps each run under ``$DREAMLOOP_CONFORMANCE_RUNS/<scenario>/claude-code/``: the
session file (``home/.claude/projects/*/*.jsonl``) and Claude Code's stream-json output
(``output.jsonl``, whose last line is its ``result`` with ``terminal_reason``). Without the variable
or the files these tests skip. They hold, for every kept session: each recorded request rebuilds
with its digest; each model call is shown with the request it was sent; the Terminal is the ending
Claude Code reported; the scrubbed copy (what a fixture may keep) rebuilds the same way and holds
none of Anthropic's text. And for max_tokens_always (Claude Code ends with ``api_error``): the
resume reminders continue one prompt, and no exchange reads ``completed``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dreamloop.claude_code import read_session
from dreamloop.claude_code_requests import REQUEST_TYPES
from dreamloop.messages import normalize_messages_for_api

from .scrub import scrub_records

RUNS = os.environ.get("DREAMLOOP_CONFORMANCE_RUNS")

# Claude Code's terminal_reason -> the Terminal reason the importer gives (dreamloop's names)
ENDINGS = {"completed": "completed", "api_error": "model_error", "prompt_too_long": "prompt_too_long",
           "max_turns": "max_turns"}


def kept_sessions() -> list[tuple[str, Path]]:
    if not RUNS:
        return []
    found = []
    for folder in sorted(Path(RUNS).glob("*/claude-code")):
        sessions = sorted((folder / "home" / ".claude" / "projects").glob("*/*.jsonl"))
        if sessions:
            found.append((folder.parent.name, sessions[0]))
    return found


SESSIONS = kept_sessions()
pytestmark = pytest.mark.skipif(not SESSIONS, reason="no kept Claude Code runs (make conformance sets "
                                                      "DREAMLOOP_CONFORMANCE_RUNS and keeps them)")


def session(name: str) -> Path:
    found = dict(SESSIONS).get(name)
    if found is None:
        pytest.skip(f"scenario {name} was not kept in {RUNS}")
    return found


def result_line(path: Path) -> dict | None:
    """Claude Code's own `result` line (stream-json), next to the session's HOME."""
    output = path.parents[4] / "output.jsonl"
    if not output.exists():
        return None
    lines = [json.loads(line) for line in output.read_text().splitlines() if line.strip().startswith("{")]
    return next((line for line in reversed(lines) if line.get("type") == "result"), None)


def anthropic_texts(records: list[dict]) -> set[str]:
    """Stretches of Anthropic's text in a session (40 characters from each long text they wrote)."""
    texts = []
    for data in records:
        if data.get("type") == "api-request-shape":
            shape = data["shape"]
            texts += [b.get("text", "") for b in shape.get("system") or []]
            texts += [t.get("description", "") for t in shape.get("tools") or []]
        elif data.get("type") == "api-request-blob":
            content = data["message"].get("content")
            for block in content if isinstance(content, list) else []:
                text = block.get("text") or (block.get("content") if isinstance(block.get("content"), str) else "")
                if "<system-reminder>" in str(text):
                    texts += [part.split("</system-reminder>")[0] for part in str(text).split("<system-reminder>")[1:]]
        elif data.get("type") == "user" and data.get("isMeta"):
            content = data["message"].get("content")
            texts.append(content if isinstance(content, str) else json.dumps(content))
        elif data.get("type") == "attachment":
            texts += [r.get("content", "") for r in data.get("rendered") or [] if isinstance(r, dict)]
    return {t.strip()[:40] for t in texts if isinstance(t, str) and len(t.strip()) >= 40}


@pytest.mark.parametrize("name, path", SESSIONS, ids=[name for name, _ in SESSIONS])
def test_every_kept_session_rebuilds_its_requests_and_its_ending(name, path):
    read = read_session(path)
    assert read.versions and read.requests, f"{name}: Claude Code {read.versions} recorded no requests"
    for request in read.requests.values():
        assert request.digest_ok, f"{name}: request {request.id} does not rebuild to its digest"
        assert not request.missing, f"{name}: request {request.id} lacks {request.missing}"
    if not read.branches:
        return  # no response at all (e.g. every request failed): nothing to rebuild
    trace = read.trace()
    assert trace.source["requests"] == len(read.requests)
    kinds = lambda sent: {r.data["attachment"].get("type") for r in read.records  # noqa: E731
                          if r.type == "attachment" and bool(r.data.get("rendered")) == sent}
    rendered = kinds(True) - kinds(False)
    for point in trace.checkpoints:
        assert point.request is not None and point.request["digest_ok"], (name, point.index)
        sent = normalize_messages_for_api(trace.resolve(point.messages_for_query))
        request = read.requests[point.request["id"]]
        assert [m["role"] for m in sent] == [m["role"] for m in request.messages], (name, point.index)
        for note in point.notes:  # context that was sent is never called "not sent"
            if "not sent to the model" in note:
                assert not any(f"attachment ({kind})" in note for kind in rendered), (name, note)
    result = result_line(path)
    if result is not None and result.get("terminal_reason") in ENDINGS:
        assert trace.terminal is not None, f"{name}: Claude Code ended {result['terminal_reason']}, the import has no end"
        assert trace.terminal.reason == ENDINGS[result["terminal_reason"]], (name, result["terminal_reason"],
                                                                              trace.terminal)
    if result is not None and result.get("is_error"):
        assert all(p.terminal is None or p.terminal.reason != "completed" for p in trace.checkpoints), name


def test_max_tokens_always_is_one_prompt_resumed_then_an_api_error():
    path = session("max_tokens_always")
    trace = read_session(path).trace()
    points = trace.checkpoints
    assert len(points) == len(read_session(path).requests) >= 2
    assert [p.transition.reason if p.transition else None for p in points] == \
        [None] + ["max_output_tokens_recovery"] * (len(points) - 1)
    assert [p.transition.attempt for p in points[1:]] == list(range(1, len(points)))
    assert {p.turn_count for p in points} == {1}  # recovery passes keep turn_count
    assert [p.terminal.reason if p.terminal else None for p in points] == [None] * (len(points) - 1) + ["model_error"]
    assert "completed" not in [p.terminal.reason for p in points if p.terminal]
    # each resume's request carries the reminder as a <system-reminder> block: shown, not called "not sent"
    last = points[-1]
    assert last.request["reminders"] > points[0].request["reminders"]
    assert any(u.startswith("sent-") for u in last.messages_for_query)
    result = result_line(path)
    if result is not None:
        assert result["terminal_reason"] == "api_error" and result["num_turns"] == len(points)


@pytest.mark.parametrize("name, path", SESSIONS, ids=[name for name, _ in SESSIONS])
def test_the_scrubbed_copy_rebuilds_the_same_and_holds_no_anthropic_text(name, path, tmp_path):
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    scrubbed = scrub_records(records)
    copy = tmp_path / path.name
    copy.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in scrubbed) + "\n")
    text = copy.read_text()
    leaked = [t for t in anthropic_texts(records) if t in text]
    assert not leaked, f"{name}: the scrubbed copy still holds {leaked[:3]}"
    assert [r.get("type") for r in scrubbed] == [r.get("type") for r in records]
    original, again = read_session(path), read_session(copy)
    assert [r.digest_ok for r in again.requests.values()] == [r.digest_ok for r in original.requests.values()]
    if not original.branches:
        return
    one, two = original.trace(), again.trace()

    def figures(trace):
        return [(p.turn_count, p.transition, p.next_transition, p.terminal and p.terminal.reason,
                 len(p.messages_for_query), {k: v for k, v in p.request.items() if k not in ("shape", "id")})
                for p in trace.checkpoints]

    assert figures(one) == figures(two)
    assert sum(1 for r in scrubbed if r.get("type") in REQUEST_TYPES) == \
        sum(1 for r in records if r.get("type") in REQUEST_TYPES)


def test_a_stream_cut_is_resumed_within_the_run_not_ended():
    # stream_error_inside_tool_use: the first response is cut mid-stream; Claude Code writes a meta
    # "resume" message of the same prompt, and the next call goes on at the same turn.
    points = read_session(session("stream_error_inside_tool_use")).trace().checkpoints
    assert [p.terminal.reason if p.terminal else None for p in points] == [None] * (len(points) - 1) + ["completed"]
    assert [p.turn_count for p in points[:2]] == [1, 1]
    # stream_error_after_tool_use: a synthetic API-error message after a complete tool_use; the tool ran
    # and the run went on: that message is not the run's end.
    points = read_session(session("stream_error_after_tool_use")).trace().checkpoints
    assert [p.turn_count for p in points] == list(range(1, len(points) + 1))
    assert [p.terminal.reason if p.terminal else None for p in points][-1] == "completed"
    assert not any(p.terminal for p in points[:-1])


def test_max_turns_ends_as_claude_code_records_it():
    points = read_session(session("max_turns")).trace().checkpoints
    assert points[-1].terminal.reason == "max_turns"
    result = result_line(session("max_turns"))
    if result is not None:
        assert points[-1].terminal.turn_count == result["num_turns"]
