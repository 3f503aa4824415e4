"""The one JSONL reader (issue 39, item 3): records with their line numbers, the torn tail set apart the same way
for every file, errors naming the file and the line; each caller chooses only what to do with a torn tail."""

from __future__ import annotations

import json
import re
import warnings

import pytest

import dreamloop as dl
from dreamloop.claude_code import read_session
from dreamloop.errors import FileFormatError, TranscriptError, TranscriptWarning
from dreamloop.jsonl import read_jsonl
from dreamloop.trace import Trace
from dreamloop.transcript import inspect_transcript, load_transcript

RECORD = {"type": "user", "text": "caf\u00e9 \u2028 line separator inside"}


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def lines(*records) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in records)


def test_records_come_with_their_line_numbers(tmp_path):
    path = write(tmp_path / "f.jsonl", lines(RECORD) + b"\n   \r\n" + lines({"n": 2}))
    read = read_jsonl(path)
    assert read.records == [(1, RECORD), (4, {"n": 2})] and read.torn is None  # U+2028 stays inside line 1


@pytest.mark.parametrize("tail", [
    b'{"type": "us',                          # cut inside the JSON
    '{"text": "caf\u00e9'.encode()[:-1],       # cut inside a character: not UTF-8
    b"[1, 2]",                                # JSON, but no record
], ids=["not JSON", "cut mid-character", "not an object"])
def test_a_last_line_without_its_newline_that_is_no_record_is_the_torn_tail(tmp_path, tail):
    path = write(tmp_path / "f.jsonl", lines(RECORD, {"n": 2}) + tail)
    read = read_jsonl(path)
    assert [n for n, _ in read.records] == [1, 2]
    assert (read.torn.line, read.torn.offset, read.torn.data) == (3, len(lines(RECORD, {"n": 2})), tail)
    with pytest.warns(UserWarning, match=rf"f\.jsonl, line 3: skipped a torn last line \({len(tail)} bytes"):
        read.warn_if_torn()


def test_a_complete_last_record_without_its_newline_is_a_record(tmp_path):
    read = read_jsonl(write(tmp_path / "f.jsonl", lines(RECORD) + b'{"n": 2}'))
    assert read.records == [(1, RECORD), (2, {"n": 2})] and read.torn is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read.warn_if_torn()  # nothing to say


@pytest.mark.parametrize("middle, says", [
    (b'{"type": "us', "line 2: not JSON (Unterminated string"),
    (b"[1, 2]", "line 2: a JSON list, not an object"),
    ("caf\u00e9".encode("latin-1"), "line 2: not UTF-8 text"),
    (b"[" * 300 + b"]" * 300, "line 2: not JSON (nested too deeply"),
])
def test_any_other_bad_line_is_an_error_naming_the_file_and_the_line(tmp_path, middle, says):
    path = write(tmp_path / "f.jsonl", lines(RECORD) + middle + b"\n" + lines({"n": 3}))
    with pytest.raises(FileFormatError, match=re.escape(says)) as caught:
        read_jsonl(path)
    assert caught.value.line == 2 and str(path) in str(caught.value)


def test_the_header_and_the_check_come_first(tmp_path):
    path = write(tmp_path / "f.jsonl", b"# not a header\n{oops\n")
    with pytest.raises(FileFormatError, match=r"line 1: not a dreamloop trace \(its first line"):
        read_jsonl(path, header="trace")
    seen = []

    def check(number, record):
        seen.append(number)
        if "bad" in record:
            raise FileFormatError(path, number, "a bad record")

    write(path, lines({"kind": "trace"}, {"bad": 1}) + b"{oops\n")
    with pytest.raises(FileFormatError, match="line 2: a bad record"):  # the first bad line is the one named
        read_jsonl(path, header="trace", check=check)
    assert seen == [1, 2]


def test_a_directory_and_a_missing_file(tmp_path):
    with pytest.raises(FileFormatError, match="a directory, not a file"):
        read_jsonl(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_jsonl(tmp_path / "missing.jsonl")


# --- each reader: the torn tail cut inside a character, as a crash leaves it in a file of raw UTF-8 -------------

CUT = '{"type": "user", "text": "caf\u00e9'.encode()[:-1]


async def test_every_reader_sets_apart_a_tail_cut_inside_a_character(tmp_path, offline):
    """Before the one reader, a trace, a session file and a cassette refused such a file ("not UTF-8 text");
    the transcript set the tail aside. Now all four do what they do with any torn tail."""
    run = dl.query(dl.QueryParams(messages="hi", model=offline([dl.reply("Hello.")])))
    [event async for event in run]
    trace = write(tmp_path / "t.jsonl", run.trace.save(tmp_path / "t.jsonl").read_bytes() + CUT)
    with pytest.warns(UserWarning, match="skipped a torn last line"):
        assert len(Trace.load(trace)) == 1

    session = write(tmp_path / "s.jsonl", lines({"type": "user", "uuid": "u1", "message": {
        "role": "user", "content": "hi"}}) + CUT)
    assert read_session(session).torn_line == 2

    engine = dl.QueryEngine(model=offline([dl.reply("Hello.")]), transcript=tmp_path / "tr.jsonl")
    async for _ in engine.submit_message("hi"):
        pass
    transcript = write(tmp_path / "tr.jsonl", (tmp_path / "tr.jsonl").read_bytes() + CUT)
    assert inspect_transcript(transcript).torn.data == CUT
    with pytest.warns(TranscriptWarning, match=r"line \d+: skipped a torn last line"):
        assert len(load_transcript(transcript)) == 2


def test_a_transcript_line_a_crash_cannot_explain_is_a_transcript_error(tmp_path):
    path = write(tmp_path / "s.jsonl", lines({"type": "user"}) + b"[1]\n" + lines({"type": "user"}))
    with pytest.raises(TranscriptError, match=r"s\.jsonl, line 2: a JSON list, not an object\. A crash only tears"):
        inspect_transcript(path)
    with pytest.raises(TranscriptError, match="a directory, not a file$"):
        inspect_transcript(tmp_path)
