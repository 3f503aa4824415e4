"""Memory files between turns (issue 33): ``@path`` imports, nested memory files, memory after a compaction."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.context.memory import MAX_IMPORT_DEPTH, MAX_MEMORY_BYTES, memory_reminder, read_memory_files
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.query import QueryParams, query
from dreamloop.tools import builtin_tools

DAY = datetime.date(2026, 1, 2)


@pytest.fixture
def place(tmp_path):
    """``(workspace, home)``: a workspace (its own git repository) with config.py, and an empty home."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".git").mkdir(parents=True)
    home.mkdir()
    (workspace / "config.py").write_text("value = 1\n")
    return workspace, home


def params(model, workspace, home, **switches):
    return QueryParams(messages="what is value?", model=model, tools=builtin_tools(), workspace=workspace,
                       permission_mode="bypass",
                       deps=QueryDeps(uuid=counting_uuids(), today=lambda: DAY, home=home, platform="linux"),
                       **switches)


async def drain(run):
    return [event async for event in run]


def bodies(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def first_texts(body):
    return [b["text"] for b in body["messages"][0]["content"] if b.get("type") == "text"]


# ---------------------------------------------------------------------------
# imports


def test_an_import_is_read_relative_to_its_importer_and_sent_after_it(place):
    workspace, home = place
    (workspace / "docs").mkdir()
    (workspace / "CLAUDE.md").write_text("Be brief.\n@docs/style.md\n")
    (workspace / "docs" / "style.md").write_text("Use tabs.\n@../rules.md\n")  # relative to docs/
    (workspace / "rules.md").write_text("No globals.\n")
    files = read_memory_files(workspace, home)
    assert [(f.path.relative_to(workspace).as_posix(), f.imported_by and f.imported_by.name, f.text)
            for f in files] == [("CLAUDE.md", None, "Be brief.\n@docs/style.md\n"),
                                ("docs/style.md", "CLAUDE.md", "Use tabs.\n@../rules.md\n"),
                                ("rules.md", "style.md", "No globals.\n")]
    reminder = memory_reminder(files)
    assert reminder.index("Be brief.") < reminder.index("Use tabs.") < reminder.index("No globals.")
    assert f"## {workspace / 'docs' / 'style.md'} (project instructions, imported by {workspace / 'CLAUDE.md'})" \
        in reminder  # the inspector's request shows which file each part came from


def test_an_at_word_inside_a_line_or_a_code_fence_is_not_an_import(place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("Ask @alice about it.\n```\n@notes.md\n```\n@ spaced.md\n")
    (workspace / "notes.md").write_text("secret\n")
    assert [f.path.name for f in read_memory_files(workspace, home)] == ["CLAUDE.md"]


@pytest.mark.parametrize("make, said", [
    (lambda ws: None, "no longer exists"),
    (lambda ws: (ws / "other.md").write_bytes(b"x" * (MAX_MEMORY_BYTES + 1)), "over the 40,000-byte limit"),
    (lambda ws: (ws / "other.md").write_bytes(b"rules\0\1"), "binary"),
    (lambda ws: (ws / "other.md").mkdir(), "not a regular file"),
], ids=["missing", "huge", "binary", "a folder"])
async def test_an_import_that_cannot_be_read_is_a_warning_of_the_run(offline, place, make, said):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("Be brief.\n@other.md\n")
    make(workspace)
    model = offline([S.reply("1.")])
    run = query(params(model, workspace, home, memory_files=True))
    events = await drain(run)
    assert run.terminal.reason == "completed"
    [notice] = [e for e in events if e.type == "system" and e.subtype == "memory_file_skipped"]
    assert said in notice.content and "imported by" in notice.content and notice.level == "warning"
    reminder = first_texts(bodies(model)[0])[0]
    assert "Be brief." in reminder and "(not included: " in reminder


async def test_an_import_outside_the_repository_is_not_read(offline, place):
    workspace, home = place
    (workspace.parent / "secret.md").write_text("not for the model\n")
    (workspace / "CLAUDE.md").write_text("@../secret.md\n")
    model = offline([S.reply("1.")])
    events = await drain(query(params(model, workspace, home, memory_files=True)))
    [notice] = [e for e in events if e.type == "system" and e.subtype == "memory_file_skipped"]
    assert "outside" in notice.content
    assert "not for the model" not in first_texts(bodies(model)[0])[0]


def test_an_import_cycle_is_sent_once_and_named(place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("top\n@a.md\n")
    (workspace / "a.md").write_text("a\n@b.md\n")
    (workspace / "b.md").write_text("b\n@a.md\n@CLAUDE.md\n")
    files = read_memory_files(workspace, home)
    assert [(f.path.name, f.text is not None) for f in files] == [
        ("CLAUDE.md", True), ("a.md", True), ("b.md", True), ("a.md", False), ("CLAUDE.md", False)]
    assert all("already included" in f.notice for f in files if f.text is None)


def test_imports_stop_at_the_depth_bound(place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("@d1.md\n")
    for depth in range(1, MAX_IMPORT_DEPTH + 3):
        (workspace / f"d{depth}.md").write_text(f"level {depth}\n@d{depth + 1}.md\n")
    files = read_memory_files(workspace, home)
    sent = [f.path.name for f in files if f.text is not None]
    assert sent == ["CLAUDE.md", *[f"d{d}.md" for d in range(1, MAX_IMPORT_DEPTH + 1)]]
    [deep] = [f for f in files if f.text is None]
    assert deep.path.name == f"d{MAX_IMPORT_DEPTH + 1}.md" and "imports deep" in deep.notice


async def test_an_imported_file_changed_between_turns_is_sent_again_not_called_removed(offline, place):
    workspace, home = place
    (workspace / "CLAUDE.md").write_text("@style.md\n")
    style = workspace / "style.md"
    style.write_text("Use tabs.\n")

    def policy(body, index):
        if index == 1:
            style.write_text("Use spaces, never tabs.\n")
        if index < 2:
            return S.reply("Listing.", S.tool_use("Glob", {"pattern": "*.py"}))
        return S.reply("done")

    model = offline(policy)
    events = await drain(query(params(model, workspace, home, memory_files=True, changed_files=True)))
    changed = [e.attachment for e in events if e.type == "attachment"]
    assert [(a["type"], Path(a["path"]).name, a["change"]) for a in changed] == [
        ("memory_changed", "style.md", "changed")]
