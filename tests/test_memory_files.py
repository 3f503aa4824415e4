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


# ---------------------------------------------------------------------------
# nested memory files


def _nested_place(workspace):
    (workspace / "pkg" / "deep").mkdir(parents=True)
    (workspace / "pkg" / "CLAUDE.md").write_text("pkg: name helpers in snake_case.\n")
    (workspace / "pkg" / "deep" / "CLAUDE.local.md").write_text("deep: no prints.\n")
    (workspace / "pkg" / "helpers.py").write_text("def add(a, b):\n    return a + b\n")
    (workspace / "pkg" / "deep" / "x.py").write_text("x = 1\n")


def _results(body):
    return [b for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def _said(block):
    content = block["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_a_nested_memory_file_arrives_inside_the_first_result_in_its_folder_once(offline, place):
    workspace, home = place
    _nested_place(workspace)
    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "pkg/helpers.py"})),
                     S.reply("Again.", S.tool_use("Read", {"file_path": "pkg/helpers.py"})),
                     S.reply("Deeper.", S.tool_use("Read", {"file_path": "pkg/deep/x.py"})),
                     S.reply("Root.", S.tool_use("Read", {"file_path": "config.py"})),
                     S.reply("done")])
    await drain(query(params(model, workspace, home, memory_files=True)))
    results = [_said(b) for b in _results(bodies(model)[-1])]
    assert [r.count("snake_case") for r in results] == [1, 0, 0, 0]  # once, in the first Read in pkg
    assert [r.count("no prints") for r in results] == [0, 0, 1, 0]  # deep's on its folder's first Read
    assert "<system-reminder>" in results[0] and str(workspace / "pkg" / "CLAUDE.md") in results[0]
    assert "snake_case" not in first_texts(bodies(model)[0])[0]  # not at the start: only once a file there is used


async def test_a_nested_memory_file_comes_with_an_edit_or_write_too_and_not_when_off(offline, place):
    workspace, home = place
    _nested_place(workspace)
    script = [S.reply("Writing.", S.tool_use("Write", {"file_path": "pkg/new.py", "content": "y = 2\n"})),
              S.reply("done")]
    model = offline(list(script))
    await drain(query(params(model, workspace, home, memory_files=True)))
    assert "snake_case" in _said(_results(bodies(model)[-1])[0])
    (workspace / "pkg" / "new.py").unlink()
    model = offline(list(script))
    await drain(query(params(model, workspace, home)))
    assert "snake_case" not in _said(_results(bodies(model)[-1])[0])


async def test_a_failed_read_in_the_folder_does_not_spend_the_nested_file(offline, place):
    workspace, home = place
    _nested_place(workspace)
    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "pkg/missing.py"})),
                     S.reply("Reading.", S.tool_use("Read", {"file_path": "pkg/helpers.py"})), S.reply("done")])
    await drain(query(params(model, workspace, home, memory_files=True)))
    results = _results(bodies(model)[-1])
    assert results[0].get("is_error") and "snake_case" not in _said(results[0])
    assert "snake_case" in _said(results[1])


async def test_a_nested_memory_file_that_cannot_be_read_is_a_warning(offline, place):
    workspace, home = place
    _nested_place(workspace)
    (workspace / "pkg" / "CLAUDE.md").write_bytes(b"bin\0ary")
    model = offline([S.reply("Reading.", S.tool_use("Read", {"file_path": "pkg/helpers.py"})), S.reply("done")])
    run = query(params(model, workspace, home, memory_files=True))
    events = await drain(run)
    [notice] = [e for e in events if e.type == "system" and e.subtype == "memory_file_skipped"]
    assert "binary" in notice.content and run.terminal.reason == "completed"
    assert "(not included: it is a binary file)" in _said(_results(bodies(model)[-1])[0])


# ---------------------------------------------------------------------------
# memory after a compaction


def _compacting(workspace, change, *, reactive=False):
    """A policy: a Read of a long file, then (after ``change`` runs on disk) a turn that forces a compaction
    (over the autocompact threshold, or ``prompt is too long`` with ``reactive``), then the answer."""
    from dreamloop.context import COMPACT_SYSTEM_PROMPT
    state = {"turns": 0, "refused": False}

    def policy(body, index):
        if body.get("system") == COMPACT_SYSTEM_PROMPT:
            return S.reply("Summary: the user asked what value is; config.py and long.txt were read.")
        state["turns"] += 1
        if state["turns"] == 1:
            return S.reply("Reading.", S.tool_use("Read", {"file_path": "long.txt"}))
        if state["turns"] == 2:
            change()
            return S.reply("Reading more.", S.tool_use("Read", {"file_path": "pkg/helpers.py"}))
        if reactive and not state["refused"]:
            state["refused"] = True
            return S.prompt_too_long(300_000)
        return S.reply("value is 1.")
    return policy


@pytest.mark.parametrize("reactive", [False, True], ids=["auto", "reactive"])
async def test_after_a_compaction_the_requests_carry_the_memory_files_as_they_are_now(offline, place, reactive):
    from dreamloop.context import Autocompact, ContextOptions
    from dreamloop.recovery import RecoveryOptions
    workspace, home = place
    _nested_place(workspace)
    memory = workspace / "CLAUDE.md"
    memory.write_text("Answer in one sentence.\n")
    (workspace / "long.txt").write_text("".join(f"line {i} of a long file to fill the window\n" for i in range(300)))

    def change():
        memory.write_text("Answer in two sentences.\n")
        (workspace / "pkg" / "CLAUDE.md").write_text("pkg: name helpers in camelCase.\n")

    model = offline(_compacting(workspace, change, reactive=reactive))
    options = ContextOptions(context_window=200_000 if reactive else 6000,
                             autocompact=Autocompact(threshold=10**6 if reactive else 3000, keep_recent=1))
    run = query(params(model, workspace, home, memory_files=True, context=options,
                       recovery=RecoveryOptions() if reactive else None))
    events = await drain(run)
    assert run.terminal.reason == "completed"
    assert any(e.type == "system" and e.subtype == "compact_boundary" for e in events)
    loop = [b for b in bodies(model) if "tools" in b]
    before, after = loop[1], loop[-1]
    assert "Answer in one sentence." in first_texts(before)[0]  # the start's text, until the compaction
    opening = first_texts(after)[0]
    assert "Answer in two sentences." in opening and "Answer in one sentence." not in opening
    assert "camelCase" in opening  # the nested file added before the compaction is kept, as it is now
    assert "snake_case" not in json_text(after)  # the stale words are in no part of the request


def json_text(body):
    import json
    return json.dumps(body)
