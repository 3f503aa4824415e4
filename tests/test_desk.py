"""dreamloop.desk, the helpers chapters 03b and 03c share: a small disk, the loop's requests, where words landed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import dreamloop as dl
from dreamloop.context import Autocompact, ContextOptions, is_compaction_request
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.desk import place, sent, where
from dreamloop.language import language
from dreamloop.scratch import scratch_root
from dreamloop.tools import builtin_tools


def run(model, workspace, home, **switches):
    return dl.query(dl.QueryParams(messages="Look at the project.", model=model, tools=builtin_tools(),
                                   workspace=workspace, permission_mode="bypass",
                                   deps=QueryDeps(uuid=counting_uuids(), home=home), **switches))


def test_place_writes_the_files_into_a_workspace_beside_a_home():
    workspace, home = place({"CLAUDE.md": "Be brief.\n", "pkg/deep/a.py": "x = 1\n"})
    assert (workspace / "CLAUDE.md").read_text() == "Be brief.\n"
    assert (workspace / "pkg" / "deep" / "a.py").read_text() == "x = 1\n"
    assert (home / ".claude").is_dir() and not any((home / ".claude").iterdir())
    assert workspace.parent == home.parent and scratch_root() in workspace.parents
    assert place({})[0] != workspace  # a fresh disk each time


@pytest.mark.parametrize("name", ["/etc/passwd", "../outside.txt", "pkg/../../outside.txt", ""])
def test_place_refuses_a_path_outside_the_workspace_and_writes_nothing(name):
    before = set(scratch_root().rglob("*"))
    with pytest.raises(ValueError, match="not a path inside the workspace"):
        place({"fine.txt": "kept out too\n", name: "x\n"})
    assert not any(path.name in ("fine.txt", "outside.txt") for path in set(scratch_root().rglob("*")) - before)


def test_the_disk_goes_when_the_process_ends():
    code = "from dreamloop.desk import place; w, h = place({'a.txt': 'a'}); print(w.parent)"
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert made and not Path(made).exists()


async def test_sent_is_the_loops_requests_without_the_compactions_and_where_names_each_place():
    long = "".join(f"line {i} of a long file to fill the window\n" for i in range(150))
    workspace, home = place({"CLAUDE.md": "Answer in one sentence.\n", "long.txt": long})

    def model_side(body, index):
        if is_compaction_request(body):
            return dl.reply("Summary: a long file was read.")
        turn = len(sent(model)) + 1
        return dl.reply(dl.tool_use("Read", {"file_path": "long.txt"})) if turn == 1 else dl.reply("Done.")

    model = dl.offline(model_side)
    window = ContextOptions(context_window=10_000, autocompact=Autocompact(threshold=2500, keep_recent=1))
    events = [event async for event in run(model, workspace, home, memory_files=True, context=window)]
    assert any(event.type == "system" and event.subtype == "compact_boundary" for event in events)
    requests = model.api.requests
    assert len(requests) == 3 and len(sent(model)) == 2  # the summary request is left out
    assert [body["messages"] for body in sent(model)] == [r.body["messages"] for r in requests if "tools" in r.body]

    first = sent(model)[0]
    assert where(first, "one sentence") == "leading reminder"
    assert where(first, "Look at the project.") == "message 1, block 2"
    assert where(first, "no such words") == "-"


def test_where_lists_every_place_in_order_and_follows_the_language():
    body = {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "<system-reminder>rule</system-reminder>"},
                                     {"type": "text", "text": "the rule, again"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a rule inside"}]},
        {"role": "user", "content": "a plain string with the rule"}]}
    assert where(body, "rule") == "leading reminder, message 1, block 2, inside a tool_result, message 4, block 1"
    assert where(body, "Read") == "message 2, block 1"
    language("zh")
    try:
        assert where(body, "Read") == "第 2 条消息的第 1 块"
        assert where(body, "rule").startswith("开头的提醒块")
    finally:
        language("en")
