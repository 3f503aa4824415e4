"""Traces on disk: a torn last line is skipped with a warning, other corruption is a clear error naming the
line, and `dreamloop replay` prints either without a traceback (issue 9, item 8). Transcripts: test_transcript.py."""

from __future__ import annotations

import os

import pytest
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.cli import main
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.trace import TRACE_VERSION, Trace


class NoInput(BaseModel):
    pass


@tool(NoInput, name="f", read_only=True)
async def noop(input: NoInput) -> str:
    """Do nothing."""
    return "ok"


@pytest.fixture
async def saved(tmp_path, offline):
    model = offline([S.reply("Hello.", S.tool_use("f", {}, id="T1")), S.reply("Done.")])
    run = query(QueryParams(messages="hi", model=model, tools=[noop], deps=QueryDeps(uuid=counting_uuids())))
    async for _ in run:
        pass
    return run.trace.save(tmp_path / "trace.jsonl")


def lines(path):
    return path.read_text().splitlines()


def write(path, rows, end="\n"):
    path.write_text("\n".join(rows) + end)
    return path


def test_a_torn_last_line_is_skipped_with_a_warning(saved, capsys):
    rows = lines(saved)
    torn = write(saved, rows[:-1] + [rows[-1][: len(rows[-1]) // 2]], end="")
    with pytest.warns(UserWarning, match=rf"line {len(rows)}: skipped a torn last line"):
        trace = Trace.load(torn)
    assert len(trace.checkpoints) == 1 and trace.terminal is None

    assert main(["replay", str(torn)]) == 0
    out, err = capsys.readouterr()
    assert "skipped a torn last line" in err and "Traceback" not in err
    assert "Hello." in out and "ends without a Terminal" in out


def test_blank_lines_are_skipped(saved):
    rows = lines(saved)
    trace = Trace.load(write(saved, rows[:2] + ["", "   "] + rows[2:] + [""]))
    assert len(trace) == 2 and trace.terminal.reason == "completed"


def corrupt(rows, number, value):
    rows = list(rows)
    rows[number - 1] = value
    return rows


CORRUPTIONS = {
    "a JSON list": (lambda rows: corrupt(rows, 2, "[1, 2]"), "line 2: a JSON list, not an object"),
    "no kind": (lambda rows: corrupt(rows, 2, '{"message": {}}'), "line 2: a record of unknown kind None"),
    "unknown kind": (lambda rows: corrupt(rows, 2, '{"kind": "photo"}'), "line 2: a record of unknown kind 'photo'"),
    "no message": (lambda rows: corrupt(rows, 2, '{"kind": "message"}'), "line 2: the record has no 'message'"),
    "an invalid message": (lambda rows: corrupt(rows, 2, '{"kind": "message", "message": {"type": "user"}}'),
                           "line 2: not valid: user.message: Field required"),
    "not JSON in the middle": (lambda rows: corrupt(rows, 2, '{"kind": "mess'), "line 2: not JSON"),
    "a checkpoint with unknown uuids": (lambda rows: [rows[0], *(r for r in rows if '"checkpoint"' in r)],
                                        "line 2: checkpoint 0 refers to message "
                                        "00000000-0000-4000-8000-000000000001, which the trace does not hold"),
    "a delta without its base": (lambda rows: [rows[0], *rows[1:-2], rows[-1]],
                                 "state_messages: a delta of 'previous.messages_after' that does not fit"),
    "a newer version": (lambda rows: corrupt(rows, 1, '{"kind": "trace", "version": 99}'),
                        f"trace version 99; this dreamloop reads version {TRACE_VERSION}"),
    "no header": (lambda rows: rows[1:], "line 1: not a dreamloop trace"),
    "a child without its records": (lambda rows: [*rows, '{"kind": "child", "tool_use_id": "T9"}'],
                                    "line 10: a record of unknown kind 'child'"),
    "a child with an invalid message": (
        lambda rows: [*rows, '{"kind": "child", "tool_use_id": "T9", "records": [{"kind": "message", '
                      '"message": {"type": "user"}}]}'],
        "line 10: sub-agent run of T9, its record 0: not valid: user.message: Field required"),
}


@pytest.mark.parametrize("change, says", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_any_other_corruption_is_a_clear_error_naming_the_line(saved, change, says, capsys):
    broken = write(saved, change(lines(saved)))
    with pytest.raises(ValueError) as caught:
        Trace.load(broken)
    assert says in str(caught.value) and str(broken) in str(caught.value)
    with pytest.raises(SystemExit) as exit:
        main(["replay", str(broken)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and says in err and "Traceback" not in err


def test_a_directory_and_bytes_that_are_not_utf8(tmp_path, saved):
    with pytest.raises(ValueError, match="a directory, not a file"):
        Trace.load(tmp_path)
    count = len(lines(saved))
    saved.write_bytes(saved.read_bytes() + b'{"kind": "\xff"}\n')
    with pytest.raises(ValueError, match=rf"line {count + 1}: not UTF-8 text"):
        Trace.load(saved)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file(saved):
    saved.chmod(0)
    with pytest.raises(ValueError, match=r"cannot be read \(Permission denied\)"):
        Trace.load(saved)


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
async def test_a_saved_trace_prints_the_lines_the_run_printed(tmp_path, offline, terminal):
    """print_trace holds its lines and prints them at once (fast for big imports): the same lines as print_run,
    in a pipe (written directly) and in a terminal (through rich, coloured), with escapes shown, never sent."""
    import io
    import re

    from dreamloop.render import SafeConsole, print_run, print_trace

    def console():
        return SafeConsole(file=io.StringIO(), width=120, force_terminal=terminal, color_system="standard"
                           if terminal else None)

    model = offline([S.reply("Hello \x1b]0;title\x07.\tA long line: " + "word " * 40, S.tool_use("f", {}, id="T1")),
                     S.reply("Done.")])
    run = query(QueryParams(messages="hi", model=model, tools=[noop], deps=QueryDeps(uuid=counting_uuids())))
    live = console()
    await print_run(run, live)
    replayed = console()
    print_trace(Trace.load(run.trace.save(tmp_path / "trace.jsonl")), replayed)

    def plain(out):
        return re.sub(r"\x1b\[[0-9;]*m", "", out.file.getvalue())

    assert plain(replayed) == "user: hi\n" + plain(live)  # a trace prints the prompt that began the run too
    assert "Hello ␛]0;title." in plain(replayed) and "turn_count=2  transition=next_turn ─" in plain(replayed)
    assert "\x07" not in replayed.file.getvalue() and "\x1b]" not in replayed.file.getvalue()
    assert ("\x1b[" in replayed.file.getvalue()) is terminal


LINES = ["plain", "a\tb\t\tc", "\tindented\n\t\ttwice", "1234567\tx", "ESC \x1b[2J BEL \x07 BS \x08 CR \r LF",
         "C1 \x9b31m DEL \x7f", "wide 漢字\tand emoji 🙂\tafter", "é (e + combining acute)\tx",
         "a line longer than the console " * 8, "\u2028 \u2029 \x85 separators", ""]


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_held_lines_written_directly_are_what_rich_writes(line):
    """Where no styles are written, a holding TurnPrinter writes its lines itself: exactly rich's text (the same
    console with record=True goes through rich), so a pipe gets what a terminal shows, less the colours."""
    import io

    from rich.text import Text

    from dreamloop.render import SafeConsole, TurnPrinter

    out = {}
    for record in (False, True):
        printer = TurnPrinter(SafeConsole(file=io.StringIO(), width=40, record=record), hold=True)
        printer.say(Text("  tool_use  ", style="bold magenta") + Text(line))
        printer.say(Text(line, style="dim"))
        printer.flush()
        out[record] = printer.console.file.getvalue()
    assert out[False] == out[True]
    assert not any(c in out[False] for c in "\x1b\x07\x08\r\x9b\x7f\t")


@pytest.mark.parametrize("given", [[1], "read it", None, 3, []], ids=["list", "string", "null", "number", "empty"])
async def test_a_call_whose_input_is_not_an_object_prints(offline, given, tmp_path):
    """A model's tool_use whose input is not an object (the tool refuses it) is printed as its JSON, live and
    replayed, not a traceback (found by the property test's trace_prints_the_same)."""
    import io
    import json

    from dreamloop.render import SafeConsole, print_run, print_trace
    from dreamloop.scripts import Turn

    call = {"type": "tool_use", "id": "T1", "name": "f", "input": given}
    model = offline([Turn(content=[call]), S.reply("Done.")])
    run = query(QueryParams(messages="hi", model=model, tools=[noop], deps=QueryDeps(uuid=counting_uuids())))
    live = SafeConsole(file=io.StringIO(), width=100)
    terminal = await print_run(run, live)
    replayed = SafeConsole(file=io.StringIO(), width=100)
    print_trace(Trace.load(run.trace.save(tmp_path / "trace.jsonl")), replayed)
    assert terminal.reason == "completed"
    assert f"tool_use  f({json.dumps(given)})" in live.file.getvalue()
    assert replayed.file.getvalue() == "user: hi\n" + live.file.getvalue()
