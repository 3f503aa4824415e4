"""Read before write (issue 33, item 4): Write and Edit refuse a file the model has not seen as it is now.

Through the loop (``query`` with the offline API and the built-in tools) and through ``run_tools``; the pure
decision ``check`` over every case."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.presets import observed_fields
from dreamloop.query import QueryParams, query
from dreamloop.tools import FileState, ToolUseContext, builtin_tools, run_tools
from dreamloop.tools.file_state import check

PERSON = "# a person's note\n"


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "config.py").write_text("value = 1\n")
    return root


def run(offline, workspace, script, **switches):
    model = offline(script)
    params = QueryParams(messages="change value", model=model, tools=builtin_tools(), workspace=workspace,
                         permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids(), home=workspace.parent),
                         **switches)
    return model, params


async def results(offline, workspace, script, **switches):
    """The tool_result blocks of the run, in order: (is_error, content)."""
    model, params = run(offline, workspace, script, **switches)
    out = []
    async for event in query(params):
        if event.type == "user" and isinstance(event.message.get("content"), list):
            out += [(bool(b.get("is_error")), b["content"]) for b in event.message["content"]
                    if b.get("type") == "tool_result"]
    return out


def person_edits(path: Path) -> None:
    path.write_text("value = 1\n" + PERSON)


def calls(workspace, *steps):
    """A policy: each step is a tool call (name, input) or a callable run before the next request's answer."""
    turns = [step for step in steps if not callable(step)]
    before: dict[int, list] = {}  # request index -> what happens on disk before it is answered
    for step in steps:
        if callable(step):
            before.setdefault(sum(not callable(s) for s in steps[:steps.index(step)]), []).append(step)

    def policy(body, index):
        for act in before.get(index, []):
            act(workspace / "config.py")
        if index < len(turns):
            name, given = turns[index]
            return S.reply("Working.", S.tool_use(name, {"file_path": "config.py", **given}))
        return S.reply("Done.")
    return policy


READ = ("Read", {})
WRITE = ("Write", {"content": "value = 2\n"})
EDIT = ("Edit", {"old_string": "value = 1", "new_string": "value = 2"})


async def test_write_and_edit_of_a_file_never_read_are_refused(offline, workspace):
    for step in (WRITE, EDIT):
        [(is_error, said)] = await results(offline, workspace, calls(workspace, step), file_state=True)
        assert is_error and "not been read yet" in said
        assert (workspace / "config.py").read_text() == "value = 1\n"


async def test_a_write_after_a_person_changed_the_file_is_refused_and_the_change_survives(offline, workspace):
    got = await results(offline, workspace, calls(workspace, READ, person_edits, WRITE), file_state=True)
    assert [e for e, _ in got] == [False, True]
    assert "modified since it was last read" in got[1][1] and "Read it again" in got[1][1]
    assert (workspace / "config.py").read_text() == "value = 1\n" + PERSON


async def test_read_again_then_write_goes_ahead(offline, workspace):
    got = await results(offline, workspace, calls(workspace, READ, person_edits, WRITE, READ, WRITE),
                        file_state=True)
    assert [e for e, _ in got] == [False, True, False, False]
    assert (workspace / "config.py").read_text() == "value = 2\n"


async def test_an_edit_after_a_change_applies_but_leaves_the_file_unseen(offline, workspace):
    """The known fault's instance: Read, a person changes the file, Edit applies (as Claude Code 2.1.332 did in
    ``edit_after_change``), then a Write is refused: the model never saw the person's line, which survives."""
    got = await results(offline, workspace, calls(workspace, READ, person_edits, EDIT, WRITE), file_state=True)
    assert [e for e, _ in got] == [False, False, True]
    assert "modified since it was last read" in got[2][1]
    assert (workspace / "config.py").read_text() == "value = 2\n" + PERSON


async def test_an_edit_after_a_change_is_refused_when_told_to(offline, workspace):
    got = await results(offline, workspace, calls(workspace, READ, person_edits, EDIT),
                        file_state=FileState(edit_after_change="refuse"))
    assert [e for e, _ in got] == [False, True]
    assert (workspace / "config.py").read_text() == "value = 1\n" + PERSON


async def test_own_changes_keep_the_file_seen(offline, workspace):
    got = await results(offline, workspace, calls(workspace, READ, EDIT, ("Edit", {"old_string": "value = 2",
                        "new_string": "value = 3"}), WRITE), file_state=True)
    assert [e for e, _ in got] == [False, False, False, False]
    assert (workspace / "config.py").read_text() == "value = 2\n"


async def test_a_change_through_bash_counts_as_a_change(offline, workspace):
    def policy(body, index):
        script = [S.reply("r", S.tool_use("Read", {"file_path": "config.py"})),
                  S.reply("b", S.tool_use("Bash", {"command": "echo more >> config.py"})),
                  S.reply("w", S.tool_use("Write", {"file_path": "config.py", "content": "x\n"})), S.reply("Done.")]
        return script[index]
    got = await results(offline, workspace, policy, file_state=True)
    assert [e for e, _ in got] == [False, False, True]
    assert (workspace / "config.py").read_text() == "value = 1\nmore\n"


async def test_a_new_file_may_be_written_and_then_edited(offline, workspace):
    def policy(body, index):
        script = [S.reply("w", S.tool_use("Write", {"file_path": "new.py", "content": "a = 1\n"})),
                  S.reply("e", S.tool_use("Edit", {"file_path": "new.py", "old_string": "a = 1",
                                                   "new_string": "a = 2"})), S.reply("Done.")]
        return script[index]
    got = await results(offline, workspace, policy, file_state=True)
    assert [e for e, _ in got] == [False, False]
    assert (workspace / "new.py").read_text() == "a = 2\n"


async def test_off_nothing_is_checked(offline, workspace):
    [(is_error, _)] = await results(offline, workspace, calls(workspace, WRITE))
    assert not is_error and (workspace / "config.py").read_text() == "value = 2\n"


async def test_each_run_keeps_its_own_record(offline, workspace):
    state = FileState()
    await results(offline, workspace, calls(workspace, READ), file_state=state)
    assert state.seen == {}  # the params' value is a template: the record lived in the run
    [(is_error, _)] = await results(offline, workspace, calls(workspace, WRITE), file_state=state)
    assert is_error


async def test_a_same_size_change_within_one_clock_tick_still_counts(workspace):
    context = ToolUseContext(tools=builtin_tools(), workspace=workspace, permission_mode="bypass",
                             file_state=FileState())

    async def call(name, given):
        messages = [m async for m in run_tools([{"id": "T1", "name": name, "input": given}], context)]
        return messages[-1].message["content"][0]

    path = workspace / "config.py"
    await call("Read", {"file_path": "config.py"})
    stat = path.stat()
    path.write_text("value = 9\n")
    import os
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    result = await call("Write", {"file_path": "config.py", "content": "value = 2\n"})
    assert result.get("is_error") and path.read_text() == "value = 9\n"


def test_the_observed_preset_turns_it_on():
    assert observed_fields()["file_state"] == FileState(edit_after_change="apply")


@pytest.mark.parametrize("tool, seen, now, mode, want", [
    ("Write", None, None, "apply", None), ("Edit", None, None, "apply", None),
    ("Write", None, (1, 1, b""), "apply", "not_read"), ("Edit", None, (1, 1, b""), "apply", "not_read"),
    ("Write", (1, 1, b""), (1, 1, b""), "apply", None), ("Edit", (1, 1, b""), (1, 1, b""), "refuse", None),
    ("Write", (1, 1, b""), (2, 1, b""), "apply", "modified"), ("Edit", (1, 1, b""), (2, 1, b""), "apply", None),
    ("Edit", (1, 1, b""), (2, 1, b""), "refuse", "modified"), ("Write", (1, 1, b"a"), None, "apply", None),
])
def test_the_decision(tool, seen, now, mode, want):
    assert check(tool, seen, now, edit_after_change=mode) == want
