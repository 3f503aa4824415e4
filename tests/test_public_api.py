"""The public surface is deliberate: pin it, so a change to it is a decision."""

import subprocess
import sys

import dreamloop


def test_all_is_pinned():
    """39 names: what the chapters use (issue 39: 54 before, 18 of them used by no chapter). The rest lives in its
    module: the message classes in ``dl.messages``, the events in ``dl.events``, the trace in ``dl.trace``."""
    assert sorted(dreamloop.__all__) == sorted([
        "Allow", "AssistantMessage", "AttachmentMessage", "Ask", "ContextOptions", "Continue", "Deny", "Hooks",
        "QueryDeps", "QueryEngine", "QueryParams", "QueryRun", "RecoveryOptions", "State", "Terminal",
        "ToolUseContext", "Turn", "agent_loop", "builtin_tools", "cassette", "counting_uuids", "import_claude_code",
        "inspect_transcript", "live", "load_hooks", "normalize_messages_for_api", "observed_loop",
        "observed_recovery", "offline", "print_run", "query", "reply", "run_tools", "text", "texts_loop", "thinking",
        "tool", "tool_use", "user_message",
    ])
    for name in dreamloop.__all__:
        assert hasattr(dreamloop, name), name


def test_every_public_name_is_one_a_chapter_uses():
    """A top-level name earns its place in a chapter (as ``dl.NAME`` or ``from dreamloop import NAME``); the message
    classes a chapter names are reached as ``dl.messages.NAME``."""
    import json
    import re
    from pathlib import Path

    text = "\n".join("".join(cell["source"]) for path in (Path(__file__).parent.parent / "notebooks").glob("*.ipynb")
                     for cell in json.loads(path.read_text(encoding="utf-8"))["cells"])
    imported = {name.strip() for names in re.findall(r"from dreamloop import ([\w, ]+)", text) for name in names.split(",")}
    unused = [name for name in dreamloop.__all__ if name not in imported and not re.search(rf"\bdl\.{name}\b", text)
              and name != "QueryRun"]  # what dl.query returns: named in chapter 03's prose, never typed
    assert unused == []
    assert dreamloop.messages.SystemMessage.__module__ == "dreamloop.messages"


def test_every_reason_is_named():
    from typing import get_args

    from dreamloop.state import ContinueReason, TerminalReason

    assert set(get_args(ContinueReason)) == {
        "next_turn", "max_output_tokens_escalate", "max_output_tokens_recovery", "reactive_compact_retry",
        "collapse_drain_retry", "stop_hook_blocking", "token_budget_continuation",
        "streaming_fallback_resume", "malformed_tool_use_retry"}  # the last two: Claude Code 2.1.332, as observed
    assert set(get_args(TerminalReason)) == {
        "completed", "aborted_streaming", "aborted_tools", "max_turns", "model_error", "prompt_too_long",
        "blocking_limit", "image_error", "stop_hook_prevented", "hook_stopped",
        "api_error", "malformed_tool_use_exhausted"}  # Claude Code 2.1.332's names


def test_import_has_no_side_effects(tmp_path):
    code = ("import os, sys, threading, dreamloop; "
            "assert threading.active_count() == 1, threading.enumerate(); "
            "assert os.listdir('.') == [], os.listdir('.'); print('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.stdout.strip() == "ok", done.stderr


def test_no_reference_outside_the_repo():
    """Docstrings cite what a reader of the repo can open: no design-brief sections, no files it lacks."""
    import re
    from pathlib import Path

    root = Path(dreamloop.__file__).parent
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"DESIGN(\.md)? ?§|reference/[\w-]+\.md|shared/", text), path


def test_names_are_imported_on_first_use_and_look_as_before():
    """`import dreamloop` loads no submodule (a kernel pays for what its chapter uses); each name still resolves,
    `dir()` and `from dreamloop import *` list them, and importing a submodule never hides a name it shares."""
    code = ("import sys, dreamloop as dl\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('dreamloop.') or m == 'anthropic')\n"
            "assert loaded == [], loaded\n"
            "assert set(dl.__all__) <= set(dir(dl))\n"
            "import dreamloop.query, dreamloop.exercises\n"  # sets dreamloop.query = the module, in plain Python
            "assert callable(dl.query) and dl.query.__module__ == 'dreamloop.query', dl.query\n"
            "ns = {}; exec('from dreamloop import *', ns)\n"
            "assert set(dl.__all__) <= set(ns)\n"
            "assert dl.tools.Allow is dl.Allow\n"
            "print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
    try:
        dreamloop.no_such_name
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("an unknown name must be an AttributeError")
