"""File-change notices (issue 33, items 5-7): cause-neutral words, the changed lines, a budget per turn.

Through the loop (``query`` with ``changed_files`` on, the offline API and the built-in tools), and the pure
decision ``file_notices.notices``."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.file_notices import MAX_DIFF_CHARS, TURN_BUDGET_CHARS, Change, notices
from dreamloop.query import QueryParams, query
from dreamloop.tools import builtin_tools


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def notices_of(offline, workspace, names, change, more_turns=1):
    """Read ``names`` (one turn), run ``change`` on disk before the next answer, then ``more_turns`` Globs: the
    changed_file attachments of each turn after the Reads, as lists of (name, text)."""
    def policy(body, index):
        if index == 0:
            return S.reply("Reading.", *[S.tool_use("Read", {"file_path": n}) for n in names])
        if index == 1:
            change()
        if index <= more_turns:
            return S.reply("Listing.", S.tool_use("Glob", {"pattern": "*.md"}))
        return S.reply("Done.")

    params = QueryParams(messages="go", model=offline(policy), tools=builtin_tools(), workspace=workspace,
                         permission_mode="bypass", changed_files=True,
                         deps=QueryDeps(uuid=counting_uuids(), home=workspace.parent))
    turns, current = [], None
    async for event in query(params):
        if event.type == "assistant":
            current = []
            turns.append(current)
        if event.type == "attachment" and event.attachment["type"] == "changed_file":
            current.append((event.attachment["name"], event.attachment["text"]))
    return turns[1:1 + more_turns]


async def test_a_change_through_bash_is_told_in_cause_neutral_words(offline, workspace):
    (workspace / "a.py").write_text("x = 1\n")

    def policy(body, index):
        script = [S.reply("r", S.tool_use("Read", {"file_path": "a.py"})),
                  S.reply("b", S.tool_use("Bash", {"command": "echo 'y = 2' >> a.py"})),
                  S.reply("g", S.tool_use("Glob", {"pattern": "*.md"})), S.reply("Done.")]
        return script[index]

    params = QueryParams(messages="go", model=offline(policy), tools=builtin_tools(), workspace=workspace,
                         permission_mode="bypass", changed_files=True,
                         deps=QueryDeps(uuid=counting_uuids(), home=workspace.parent))
    [text] = [e.attachment["text"] async for e in query(params) if e.type == "attachment"]
    assert "changed on disk" in text and "+y = 2" in text
    for who in ("not by you", "someone else", "by another", "the user"):
        assert who not in text


async def test_a_notice_shows_the_changed_lines_not_the_first(offline, workspace):
    path = workspace / "long.py"
    path.write_text("".join(f"line_{i} = {i}\n" for i in range(300)))
    [first, *_] = await notices_of(offline, workspace, ["long.py"],
                                   lambda: path.write_text(path.read_text().replace("line_250 = 250", "line_250 = 0")))
    [(name, text)] = first
    assert name == "long.py"
    assert "-line_250 = 250" in text and "+line_250 = 0" in text and "@@ -" in text
    assert "line_1 = 1\n" not in text and "line_100" not in text


async def test_fifty_changed_files_are_all_named_within_the_budget_each_once(offline, workspace):
    names = [f"m{n:02}.py" for n in range(50)]
    for name in names:
        (workspace / name).write_text("".join(f"v{i} = {i}\n" for i in range(200)))

    def change():
        for name in names:
            p = workspace / name
            p.write_text(p.read_text().replace(" = ", " = 1 + "))  # every line

    first, second = await notices_of(offline, workspace, names, change, more_turns=2)
    assert sorted(name for name, _ in first) == names  # every file named
    shown = [text for _, text in first if "changed lines" in text]
    assert 0 < len(shown) < 50
    wrapper = len("<system-reminder>\n\n</system-reminder>")
    assert sum(len(t) - wrapper for t in shown) <= TURN_BUDGET_CHARS
    assert all("read it again" in t for _, t in first if "changed lines" not in t)
    assert second == []  # each change announced once


async def test_a_named_only_file_is_diffed_from_what_the_model_saw_next_time(offline, workspace):
    """A file past the budget is named only; its baseline stays what the model read, so a later change's
    notice shows both changes."""
    names = [f"m{n:02}.py" for n in range(30)]
    for name in names:
        (workspace / name).write_text("".join(f"v{i} = {i}\n" for i in range(100)))

    def change():
        for name in names:
            p = workspace / name
            p.write_text(p.read_text().replace(" = ", " = 2 * "))

    [first] = await notices_of(offline, workspace, names, change)
    assert any("changed lines" not in t for _, t in first)


def test_the_decision_bounds_each_file_and_the_turn():
    big = Change("big.py", "".join(f"a{i}\n" for i in range(1000)), "".join(f"b{i}\n" for i in range(1000)))
    [one] = notices([big])
    assert one.shown and len(one.text) < MAX_DIFF_CHARS + 300 and "more diff lines" in one.text
    many = notices([big] * 40)
    assert sum(len(n.text) for n in many if n.shown) <= TURN_BUDGET_CHARS
    assert [n.shown for n in many].count(False) > 0 and all("big.py" in n.text for n in many)
    assert "deleted" in notices([Change("gone.py", "x\n", None)])[0].text
    assert "binary" in notices([Change("b.bin", "x\n", "", problem="it is binary now")])[0].text
    assert "read it again" in notices([Change("n.py", None, "x\n")])[0].text
