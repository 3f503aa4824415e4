"""The public surface is deliberate: pin it, so a change to it is a decision."""

import subprocess
import sys

import dreamloop


def test_all_is_pinned():
    assert sorted(dreamloop.__all__) == sorted([
        "AbortController", "Allow", "AnthropicModel", "Ask", "AssistantMessage", "AttachmentMessage",
        "BaseTool", "Checkpoint", "ContextOptions", "Continue", "Deny", "Event", "Fault", "Hooks", "LoopMessage",
        "ProgressMessage",
        "QueryEngine", "QueryParams", "QueryRun", "RecoveryOptions", "RequestStart", "State", "StreamEvent",
        "SystemMessage", "Terminal", "TokenBudget", "TombstoneMessage", "ToolResult", "ToolUseContext", "ToolUseSummaryMessage", "Trace",
        "Turn", "UserMessage", "agent_loop", "builtin_tools", "cassette", "import_claude_code", "inspect_transcript", "live", "load_hooks",
        "normalize_messages_for_api", "observed_loop", "observed_recovery",
        "offline", "query", "reply", "run_tools", "text", "texts_loop", "thinking", "tool", "tool_result_block",
        "tool_use", "user_message",
    ])
    for name in dreamloop.__all__:
        assert hasattr(dreamloop, name), name


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
