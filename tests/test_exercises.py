"""The exercise checks against the answers a learner plausibly gives.

Each check passes on the solution; fails on at least three plausible wrong answers (trusting stop_reason,
forgetting the assistant message, results out of call order, text that merely contains the right digit,
...) with a hint that names the idea, never the answer's code; fails on the untouched stub with a hint
that says what to do; never raises; and shows nothing but its printed line in a notebook.

The solutions are read from notebooks/solutions/ (``exercise_solutions.py``), never copied here; the checks
compare them with the package.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

import dreamloop as dl
import dreamloop.exercises as ex
import dreamloop.exercises._checking  # noqa: F401  (the checks' shared settings)
from dreamloop.exercises.ch07 import recursive_rm
from dreamloop.exercises.ch09 import PHASES
from dreamloop.fake_api import validate_request
from dreamloop.hooks import PreToolUseDecision, StopDecision
from dreamloop.tools import INTERRUPTED, NOT_STARTED, Allow, Deny
from exercise_solutions import solved

# ---------------------------------------------------------------------------
# The solutions are the solved notebooks' own (notebooks/solutions/*.ipynb, read by exercise_solutions.py):
# SOLVED["check_partition"] is what chapter 04's solved notebook hands ex.check_partition. Below: what the
# wrong answers are built from.

SOLVED = solved()

TOOL_SCRIPT = [
    dl.reply("Let me read it.", dl.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
    dl.reply("config.py sets value = 1."),
]


async def my_agent_loop(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(
            model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        if not tool_uses:
            return response
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)}
                   for u in tool_uses]
        messages = [*messages, {"role": "assistant", "content": response.content},
                    {"role": "user", "content": results}]


def answer_tool_uses(tool_uses, functions):
    results = []
    for use in tool_uses:
        if use.name not in functions:
            block = {"content": f"Error: No such tool available: {use.name}", "is_error": True}
        else:
            try:
                block = {"content": functions[use.name](**use.input)}
            except Exception as exc:
                block = {"content": f"Error: {type(exc).__name__}: {exc}", "is_error": True}
        results.append({"type": "tool_result", "tool_use_id": use.id, **block})
    return {"role": "user", "content": results}


def close_dangling(tool_uses, results):
    missing = {"content": "Interrupted by user", "is_error": True}
    return {"role": "user", "content": [
        results.get(use.id) or {"type": "tool_result", "tool_use_id": use.id, **missing} for use in tool_uses]}


async def last_answer(run):
    last = None
    async for event in run:
        if event.type == "assistant":
            last = event
    text = "".join(b.text for b in last.message.content if b.type == "text")
    return text, run.terminal.reason


def predict(max_turns, tool_turns):
    turns = min(tool_turns, max_turns)  # tool batches run before the max_turns check
    requests = turns + 1 if tool_turns < max_turns else max_turns
    reason = "completed" if tool_turns < max_turns else "max_turns"
    return requests, turns, reason, turns + 1


def memory_files(paths, workspace):
    def has(path):
        return path in paths or path + "/" in paths
    parts = workspace.split("/")
    folders = ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]  # the workspace, then its parents
    top = next((f for f in folders if has(f + "/.git")), workspace)
    chain = list(reversed(folders[:folders.index(top) + 1]))
    found = ["home/.claude/CLAUDE.md"] if has("home/.claude/CLAUDE.md") else []
    for folder in chain:
        for name in ("CLAUDE.md", "CLAUDE.local.md"):
            if has(f"{folder}/{name}"):
                found.append(f"{folder}/{name}")
    return found


def memory_files_nearest_first(paths, workspace):
    found = memory_files(paths, workspace)
    return list(reversed(found))


def memory_files_every_parent(paths, workspace):
    parts = workspace.split("/")
    chain = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    found = ["home/.claude/CLAUDE.md"] if "home/.claude/CLAUDE.md" in paths else []
    found += ["CLAUDE.md"] if "CLAUDE.md" in paths else []
    for folder in chain:
        found += [f"{folder}/{n}" for n in ("CLAUDE.md", "CLAUDE.local.md") if f"{folder}/{n}" in paths]
    return found


def memory_files_farthest_git(paths, workspace):
    """The reader's wrong answer: the root taken as the farthest folder with .git, not the nearest."""
    parts = workspace.split("/")
    folders = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]  # the top first
    top = next((f for f in folders if f + "/.git/" in paths), workspace)
    chain = folders[folders.index(top):]
    found = ["home/.claude/CLAUDE.md"] if "home/.claude/CLAUDE.md" in paths else []
    return found + [f"{f}/{n}" for f in chain for n in ("CLAUDE.md", "CLAUDE.local.md") if f"{f}/{n}" in paths]


def memory_files_local_first(paths, workspace):
    """The reader's wrong answer: CLAUDE.local.md before CLAUDE.md in each folder."""
    found = memory_files(paths, workspace)
    return sorted(found, key=lambda p: (found.index(p.rsplit("/", 1)[0] + "/CLAUDE.md")
                                        if p.rsplit("/", 1)[0] + "/CLAUDE.md" in found else found.index(p),
                                        not p.endswith(".local.md")))


def memory_files_no_local(paths, workspace):
    return [p for p in memory_files(paths, workspace) if not p.endswith(".local.md")]


def memory_files_no_user(paths, workspace):
    return [p for p in memory_files(paths, workspace) if not p.startswith("home/")]


def next_attachments(read_before, calls, changed, queued):
    seen_now = {name for tool, name in calls}
    watched = list(dict.fromkeys(read_before))
    notes = [("changed_file", name) for name in watched if name in changed and name not in seen_now]
    return notes + [("queued_command", text) for text in queued]


def next_attachments_every_change(read_before, calls, changed, queued):
    return [("changed_file", name) for name in changed] + [("queued_command", text) for text in queued]


def next_attachments_write_not_seen(read_before, calls, changed, queued):
    """The reader's wrong answer: a Write this turn does not count as the model's own change."""
    seen_now = {name for tool, name in calls if tool != "Write"}
    watched = list(dict.fromkeys(read_before))
    notes = [("changed_file", name) for name in watched if name in changed and name not in seen_now]
    return notes + [("queued_command", text) for text in queued]


def next_attachments_unread_too(read_before, calls, changed, queued):
    seen_now = {name for tool, name in calls}
    return ([("changed_file", n) for n in changed if n not in seen_now] + [("queued_command", t) for t in queued])


def next_attachments_own_edits_too(read_before, calls, changed, queued):
    watched = list(dict.fromkeys(read_before))
    return ([("changed_file", n) for n in watched if n in changed or ("Edit", n) in calls]
            + [("queued_command", t) for t in queued])


def next_attachments_queue_first(read_before, calls, changed, queued):
    return [("queued_command", t) for t in queued] + [p for p in next_attachments(read_before, calls, changed, [])]


def next_attachments_sorted(read_before, calls, changed, queued):
    return sorted(next_attachments(read_before, calls, changed, queued))


class WordCountInput(BaseModel):
    text: str
    unique: bool = False


PREDICTION = {  # chapter 05
    "A": [["a", "b", "c"]],
    "B": [["a"], ["b"]],
    "C": [["a"], ["b"], ["c"]],
    "D": [["a"], ["b", "c"]],
}


def resume_answers(records):
    last = max(i for i, r in enumerate(records) if r["type"] == "assistant")
    calls = [b["id"] for b in records[last]["message"]["content"] if b["type"] == "tool_use"]
    after = records[last + 1:]
    answered = {b["tool_use_id"] for r in after if r["type"] == "user" and isinstance(r["message"]["content"], list)
                for b in r["message"]["content"] if b.get("type") == "tool_result"}
    finished = {r["tool_use_id"] for r in after if r["type"] == "progress"}
    dangling = [c for c in calls if c not in answered]
    return [c for c in dangling if c in finished], [c for c in dangling if c not in finished]


def interrupted(trace):
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
            return point.index, [b["tool_use_id"] for b in blocks if b.get("is_error")]
    return None


def model_calls(records):
    return len({r["message"]["id"] for r in records if r["type"] == "assistant" and not r.get("isSidechain")})
def block_while_tests_fail(input):
    done = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-p", "check_*.py"],
                          cwd=input.cwd, capture_output=True, text=True)
    if done.returncode == 0:
        return None
    failures = [line for line in done.stderr.splitlines() if line.startswith(("FAIL:", "ERROR:", "AssertionError"))]
    return StopDecision(decision="block",
                        reason="The tests fail:\n" + "\n".join(failures) + "\nmake the failing test pass")


# chapter 07b's guard, as in notebooks/solutions/07b_command_hooks.ipynb

RM_WRAPPERS = {  # each runs the command after it; these of its options take the next word as their value
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "-r", "-t"}, "doas": {"-u", "-C"},
    "env": {"-u", "-C"}, "command": set(), "exec": {"-a"}, "nohup": set(), "nice": {"-n"},
    "time": {"-f", "-o"}, "xargs": {"-n", "-I", "-L", "-P", "-d", "-s", "-E", "-a"}, "timeout": {"-s", "-k"},
}

def shell_commands(line):
    """The words of each command: shlex keeps quoted text one word and splits ; & | ( ) ` as words of their own."""
    lexer = shlex.shlex(line.replace("\n", ";"), posix=True, punctuation_chars=";&|()`")
    found, words = [], []
    for token in lexer:
        if token.strip(";&|()`") == "" or token in ("{", "}"):
            found.append(words)
            words = []
        else:
            words.append(token)
            if "$(" in token:  # a command substitution inside double quotes still runs
                found += shell_commands(token.split("$(", 1)[1])
    return [*found, words]

def rm_command_words(words):
    """Past NAME=value and wrappers with their options: the command that runs."""
    while words and (re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]) or Path(words[0]).name in RM_WRAPPERS):
        takes = RM_WRAPPERS.get(Path(words[0]).name, set())
        timeout = Path(words[0]).name == "timeout"
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[2:] if words[0] in takes else words[1:]
        if timeout and words and re.fullmatch(r"[\d.]+[smhd]?", words[0]):
            words = words[1:]
    return words

def solution_recursive_rm(command):
    try:
        lines = shell_commands(command)
    except ValueError:  # unbalanced quotes: read it as plain words
        lines = [command.split()]
    for words in lines:
        words = rm_command_words(words)
        if words and Path(words[0]).name == "rm":
            for word in words[1:]:
                if word == "--":
                    break
                if word in ("-r", "-R") or (len(word) >= 3 and "--recursive".startswith(word)) \
                        or (re.fullmatch(r"-[A-Za-z]+", word) and set("rR") & set(word)):
                    return True
    return False


PUSH_GUARD = "grep -Eq 'git +push' && { echo 'No git push from this session.' >&2; exit 2; }; exit 0"


def settings_with(command=PUSH_GUARD, matcher="Bash", kind="command", event="PreToolUse"):
    return {"hooks": {event: [{"matcher": matcher, "hooks": [{"type": kind, "command": command}]}]}}


def sent(message):
    return bool(dl.normalize_messages_for_api([message]))


def safe_cut(messages, keep_recent):
    cut, seen = len(messages), 0
    while cut > 0 and seen < keep_recent:
        cut -= 1
        seen += sent(messages[cut])
    while 0 < cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut -= 1  # a result: keep the call that asked for it
        while cut > 0 and messages[cut].type != "assistant":
            cut -= 1
    return cut if any(sent(m) for m in messages[:cut]) else 0


def cut_counting_user_and_assistant(messages, keep_recent):
    """The first statement's reading: user and assistant messages only, no 'nothing to summarise'."""
    cut, seen = len(messages), 0
    while cut > 0 and seen < keep_recent:
        cut -= 1
        seen += messages[cut].type in ("user", "assistant")
    while 0 < cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut -= 1
        while cut > 0 and messages[cut].type != "assistant":
            cut -= 1
    return cut


def cut_even_before_notices_only(messages, keep_recent):
    cut = safe_cut(messages, keep_recent)
    return cut or next((i for i, m in enumerate(messages) if sent(m)), 0)


def first_stage(tokens, options):
    limits = options.thresholds(options.context_window)
    for name in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit"):
        limit = getattr(limits, name)
        if limit is not None and tokens > limit:
            return name
    return None


MARKER = dl.tokens.estimate_block_tokens({"type": "tool_result", "tool_use_id": "", "content": dl.context.CLEARED})


def clear_short_ones_too(messages, keep_recent):
    """The first statement's reading: every old result not cleared yet, however short."""
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    kept_from = answers[-max(keep_recent, 2)] if len(answers) >= max(keep_recent, 2) else 0
    return [block["tool_use_id"] for m in messages[:kept_from] if m.type == "user" and m.source_tool_use_ids
            for block in m.message["content"] if block["content"] != dl.context.CLEARED]


def clear_by_message(messages, keep_recent):
    """Looks at a message's first result only: a message half cleared is skipped whole."""
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    kept_from = answers[-max(keep_recent, 2)] if len(answers) >= max(keep_recent, 2) else 0
    return [block["tool_use_id"] for m in messages[:kept_from] if m.type == "user" and m.source_tool_use_ids
            and m.message["content"][0]["content"] != dl.context.CLEARED
            and dl.tokens.estimate_block_tokens(m.message["content"][0]) > MARKER for block in m.message["content"]]


# chapters 08 (after_cut) and 08b (withdrawn, keep_going)


def after_cut(state):
    if state.max_output_tokens_override is None:
        return dl.Continue(reason="max_output_tokens_escalate", max_tokens=64_000)
    if state.max_output_tokens_recovery_count < 3:
        return dl.Continue(reason="max_output_tokens_recovery", attempt=state.max_output_tokens_recovery_count + 1)
    return None


def withdrawn(events):
    ids = []
    for event in events:
        if event.type == "stream_event" and event.event.type == "message_start":
            ids.append(event.event.message.id)
    return ids  # the progress of a call that had started is never withdrawn (issue 32)


def keep_going(output_tokens, tracking, total):
    added = output_tokens - tracking.tokens
    diminishing = tracking.continuations >= 3 and added < 500 and tracking.last_delta < 500
    return not diminishing and output_tokens < 0.9 * total


# chapter 09

WHERE = {"completed": "stop", "aborted_streaming": "stream", "aborted_tools": "tools", "max_turns": "next",
         "model_error": "stream", "prompt_too_long": "recovery", "blocking_limit": "context", "image_error": "stream",
         "stop_hook_prevented": "stop", "hook_stopped": "tools", "next_turn": "next",
         "max_output_tokens_escalate": "recovery", "max_output_tokens_recovery": "recovery",
         "reactive_compact_retry": "recovery", "collapse_drain_retry": "recovery", "stop_hook_blocking": "stop",
         "token_budget_continuation": "stop", "api_error": "stream", "malformed_tool_use_exhausted": "stop",
         "streaming_fallback_resume": "stream", "malformed_tool_use_retry": "stop"}


def escalate_resume_next_turn():
    return [dl.reply("A long answer that", stop_reason="max_tokens"),
            dl.reply("A long answer that is cut again", stop_reason="max_tokens"),
            dl.reply("Let me read it.", dl.tool_use("Read", {"file_path": "config.py"})),
            dl.reply("config.py sets value = 1.")]


PREDICTED = {"max_tokens_always": (4, "api_error"), "disconnect_inside_tool_use": (3, "completed"),
             "http_529": (3, "api_error"), "http_529_fallback": (4, "completed")}


def same_message(a, b):
    def strip(message):
        return message["role"], [{k: v for k, v in block.items() if k != "cache"} for block in message["blocks"]]
    return strip(a) == strip(b)


def reminders_added(requests, same=same_message, inside=False):
    counts, previous = [], []
    for messages in requests:
        shared = 0
        while shared < min(len(previous), len(messages)) and same(previous[shared], messages[shared]):
            shared += 1
        counts.append(sum((block["kind"] == "reminder") + (block.get("inside", 0) if inside else 0)
                          for m in messages[shared:] for block in m["blocks"]))
        previous = messages
    return counts


# ---------------------------------------------------------------------------
# The untouched exercises, as the notebooks have them


def stub(message):
    def unfinished(*args):
        raise NotImplementedError(message)

    return unfinished


STUBS = {
    ex.check_hello_script: None,
    ex.check_tool_script: None,
    ex.check_find_tool_uses: stub("return the tool_use blocks of response.content"),
    ex.check_four_steps: stub("call the model, find tool_use, run tools, append, repeat"),
    ex.check_answer_tool_uses: stub("one tool_result per call; failures become is_error results"),
    ex.check_close_dangling: stub("answer every call, in call order"),
    ex.check_last_answer: stub("async for over the run, then run.terminal"),
    ex.check_next_state: stub("return dl.State(messages=..., turn_count=..., transition=...)"),
    ex.check_max_turns: stub("return (requests, tool_batches, reason, turn_count)"),
    ex.check_memory_files: stub("return the memory files, in the order they are sent"),
    ex.check_next_attachments: stub("return the (type, what) pairs phase 5 attaches"),
    ex.check_tool_definition: None,
    ex.check_partition: stub("return a list of batches, each a list of tool_use ids"),
    ex.check_can_use_tool: stub("Allow the test command; otherwise the tool's own decision"),
    ex.check_run_together: {"A": None, "B": None, "C": None, "D": None},
    ex.check_ordering_rule: stub("return the names of the queued calls that may start now"),
    ex.check_interrupt_results: stub("return {'role': 'user', 'content': [...]}"),
    ex.check_resume_answers: stub("split the calls left without a result into saved and lost"),
    ex.check_interrupted: stub("find the first checkpoint whose run was interrupted"),
    ex.check_model_calls: stub("count the main thread's model calls"),
    ex.check_tests_stop_hook: stub("block while the tests fail, None when they pass"),
    ex.check_no_recursive_rm: stub("deny a recursive rm, None for anything else"),
    ex.check_settings_hook: {"hooks": {"PreToolUse": []}},
    ex.check_safe_cut: stub("return the index where the kept tail starts"),
    ex.check_first_stage: stub("the first threshold-triggered stage that acts, or None"),
    ex.check_clearable: stub("the tool_use ids of the results to clear"),
    ex.check_cut_recovery: stub("escalate once, then resume at most 3 times"),
    ex.check_withdrawn: stub("the ids a failed attempt withdraws"),
    ex.check_budget_continue: stub("True to go on, False to stop"),
    ex.check_where_decided: stub("the phase where the loop decides it"),
    ex.check_trigger: stub("a script whose run goes through those transitions, then ends completed"),
    ex.check_switches_by: stub("the switches explained by this chapter"),
    ex.check_predict: stub("Claude Code's (requests, ending) on this scenario"),
    ex.check_reminders_added: stub("one count per request: the reminders it added"),
    ex.check_whose: stub("'parent' or the prompt of the sub-agent that sent it, per request"),
    ex.check_notified_at: stub("the number of the first request that carries the notification, or None"),
}


# ---------------------------------------------------------------------------
# Wrong answers a learner plausibly gives


async def loop_without_assistant(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        if not tool_uses:
            return response
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)} for u in tool_uses]
        messages = [*messages, {"role": "user", "content": results}]  # forgot the assistant message


async def loop_that_never_stops(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)} for u in tool_uses]
        messages = [*messages, {"role": "assistant", "content": response.content},
                    {"role": "user", "content": results or "go on"}]  # never returns


async def loop_trusting_stop_reason(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        if response.stop_reason != "tool_use":  # the mistake chapter 01 warns about
            return response
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)} for u in tool_uses]
        messages = [*messages, {"role": "assistant", "content": response.content}, {"role": "user", "content": results}]


async def loop_with_results_reversed(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        if not tool_uses:
            return response
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)}
                   for u in reversed(tool_uses)]
        messages = [*messages, {"role": "assistant", "content": response.content}, {"role": "user", "content": results}]


async def loop_forgetting_earlier_turns(model, messages, tools, run_tool):
    question = messages[:1]
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        if not tool_uses:
            return response
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)} for u in tool_uses]
        messages = [*question, {"role": "assistant", "content": response.content}, {"role": "user", "content": results}]


async def loop_returning_text(model, messages, tools, run_tool):
    response = await my_agent_loop(model, messages, tools, run_tool)
    return response.content[0].text


def answer_without_errors(tool_uses, functions):
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": u.id, "content": functions[u.name](**u.input)} for u in tool_uses]}


def answer_errors_without_flag(tool_uses, functions):
    message = answer_tool_uses(tool_uses, functions)
    for block in message["content"]:
        block.pop("is_error", None)  # the text says Error, the flag is missing
    return message


def answer_sorted_by_id(tool_uses, functions):
    message = answer_tool_uses(tool_uses, functions)
    return {**message, "content": sorted(message["content"], key=lambda b: b["tool_use_id"])}


def answer_skipping_failures(tool_uses, functions):
    message = answer_tool_uses(tool_uses, functions)
    return {**message, "content": [b for b in message["content"] if not b.get("is_error")]}


def answer_one_message_per_result(tool_uses, functions):
    return [{"role": "user", "content": [block]} for block in answer_tool_uses(tool_uses, functions)["content"]]


def answer_with_text_first(tool_uses, functions):
    message = answer_tool_uses(tool_uses, functions)
    return {**message, "content": [{"type": "text", "text": "Here are the results:"}, *message["content"]]}


def close_in_completion_order(tool_uses, results):
    blocks = list(results.values())
    answered = set(results)
    blocks += [{"type": "tool_result", "tool_use_id": u.id, "content": "Interrupted by user", "is_error": True}
               for u in tool_uses if u.id not in answered]
    return {"role": "user", "content": blocks}


def close_missing_without_flag(tool_uses, results):
    return {"role": "user", "content": [
        results.get(u.id) or {"type": "tool_result", "tool_use_id": u.id, "content": "Interrupted by user"}
        for u in tool_uses]}


def close_all_as_interrupted(tool_uses, results):
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": u.id, "content": "Interrupted by user", "is_error": True}
        for u in tool_uses]}


async def last_answer_reading_terminal_first(run):
    reason = run.terminal.reason
    return "", reason


async def last_answer_first_message(run):
    first = None
    async for event in run:
        if event.type == "assistant" and first is None:
            first = event
    return "".join(b.text for b in first.message.content if b.type == "text"), run.terminal.reason


async def last_answer_assuming_completed(run):
    text, _ = await last_answer(run)
    return text, "completed"


async def last_answer_the_final_text_only(run):
    """Keeps only an assistant message that asks for no tool: the 'final answer'."""
    final = ""
    async for event in run:
        if event.type == "assistant" and not any(b.type == "tool_use" for b in event.message.content):
            final = "".join(b.text for b in event.message.content if b.type == "text")
    return final, run.terminal.reason


async def last_answer_last_message(run):
    async for _ in run:
        pass
    content = run.messages[-1].message.content if hasattr(run.messages[-1], "message") else ""
    text = content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
    return text, run.terminal.reason


def next_state_results_first(state, messages_for_query, assistant_messages, tool_results):
    return dl.State(messages=(*messages_for_query, *tool_results, *assistant_messages),
                    turn_count=state.turn_count + 1, transition=dl.Continue(reason="next_turn"))


def next_state_same_turn(state, messages_for_query, assistant_messages, tool_results):
    return dl.State(messages=(*messages_for_query, *assistant_messages, *tool_results),
                    turn_count=state.turn_count, transition=dl.Continue(reason="next_turn"))


def next_state_without_transition(state, messages_for_query, assistant_messages, tool_results):
    return dl.State(messages=(*messages_for_query, *assistant_messages, *tool_results), turn_count=state.turn_count + 1)


def next_state_without_assistant(state, messages_for_query, assistant_messages, tool_results):
    return dl.State(messages=(*messages_for_query, *tool_results), turn_count=state.turn_count + 1,
                    transition=dl.Continue(reason="next_turn"))


def predict_naive(max_turns, tool_turns):
    return max_turns, max_turns, "max_turns", max_turns


def predict_turn_count_of_the_last_state(max_turns, tool_turns):
    requests, batches, reason, turn_count = predict(max_turns, tool_turns)
    return requests, batches, reason, min(tool_turns, max_turns) if reason == "max_turns" else turn_count


def predict_completed_at_the_limit(max_turns, tool_turns):
    """Thinks a model that answers on request max_turns + 1 still gets to answer."""
    if tool_turns <= max_turns:
        return tool_turns + 1, tool_turns, "completed", tool_turns + 1
    return max_turns, max_turns, "max_turns", max_turns + 1


def predict_one_request_too_many(max_turns, tool_turns):
    requests, batches, reason, turn_count = predict(max_turns, tool_turns)
    return (requests + 1 if reason == "max_turns" else requests), batches, reason, turn_count


class WordCountNoDefault(BaseModel):
    text: str
    unique: bool


@dl.tool(WordCountNoDefault, name="WordCount", read_only=True)
def word_count_required_unique(input: WordCountNoDefault) -> str:
    return str(len(input.text.split()))


@dl.tool(WordCountInput, name="WordCount")
def word_count_not_read_only(input: WordCountInput) -> str:
    return str(len(input.text.split()))


@dl.tool(WordCountInput, name="WordCount", read_only=True)
def word_count_split_on_spaces(input: WordCountInput) -> str:
    words = input.text.split(" ")
    return str(len(set(words)) if input.unique else len(words))


@dl.tool(WordCountInput, name="WordCount", read_only=True)
def word_count_ignoring_unique(input: WordCountInput) -> str:
    return str(len(input.text.split()))


class WordCountTextOptional(BaseModel):
    text: str = ""
    unique: bool = False


@dl.tool(WordCountTextOptional, name="WordCount", read_only=True)
def word_count_text_optional(input: WordCountTextOptional) -> str:
    return str(len(input.text.split()))


def _batches(tool_uses, safe):
    batches, last_safe = [], False
    for use in tool_uses:
        ok = safe(use)
        if ok and last_safe:
            batches[-1].append(use.id)
        else:
            batches.append([use.id])
        last_safe = ok
    return batches


def partition_by_name(tool_uses, tools):
    return _batches(tool_uses, lambda use: use.name in {"Read", "Glob", "Grep", "Bash"})


def partition_all_together(tool_uses, tools):
    return [[use.id for use in tool_uses]]


def partition_each_alone(tool_uses, tools):
    return [[use.id] for use in tool_uses]


def partition_unknown_is_safe(tool_uses, tools):
    by_name = {t.name: t for t in tools}

    def safe(use):
        tool = by_name.get(use.name)
        if tool is None:
            return True  # the mistake: an unknown tool cannot hurt?
        try:
            return tool.is_concurrency_safe(tool.input_model.model_validate(use.input))
        except Exception:
            return True
    return _batches(tool_uses, safe)


def partition_joining_after_unsafe(tool_uses, tools):
    """Adds a safe call to the last batch without asking whether that batch is safe."""
    by_name = {t.name: t for t in tools}
    batches = []
    for use in tool_uses:
        tool = by_name.get(use.name)
        try:
            safe = tool is not None and tool.is_concurrency_safe(tool.input_model.model_validate(use.input))
        except Exception:
            safe = False
        if safe and batches:
            batches[-1].append(use.id)
        else:
            batches.append([use.id])
    return batches


async def allow_everything(tool, input, context):
    return Allow()


async def allow_by_prefix_only(tool, input, context):
    if tool.name == "Bash" and input.get("command", "").startswith(("python -m unittest", "python3 -m unittest")):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


async def allow_python_only(tool, input, context):
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith("python -m unittest") and not set(";|&$`<>") & set(command):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


async def deny_everything_else(tool, input, context):
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith(("python -m unittest", "python3 -m unittest")) \
            and not set(";|&$`<>") & set(command):
        return Allow()
    return dl.Deny("only the tests may run")


async def decide_without_await(tool, input, context):
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith(("python -m unittest", "python3 -m unittest")) \
            and not set(";|&$`<>") & set(command):
        return Allow()
    return tool.check_permissions(tool.input_model.model_validate(input), context)  # not awaited


async def allow_across_lines(tool, input, context):
    """The chapter's first rule: a line break is not in its list of shell syntax."""
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith(("python -m unittest", "python3 -m unittest")) \
            and not set(";|&$`<>") & set(command):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


async def allow_any_module_named_so(tool, input, context):
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith(("python -m unittest", "python3 -m unittest")) \
            and not set(";|&$`<>\n") & set(command):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


async def allow_anything_with_unittest(tool, input, context):
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith("python") and "-m unittest" in command \
            and not set(";|&$`<>\n") & set(command):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


async def refuse_only_chaining(tool, input, context):
    command = input.get("command", "")
    test = any(command == p or command.startswith(p + " ") for p in ("python -m unittest", "python3 -m unittest"))
    if tool.name == "Bash" and test and not set(";|&\n") & set(command):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


async def ask_for_the_rest(tool, input, context):
    command = input.get("command", "")
    test = any(command == p or command.startswith(p + " ") for p in ("python -m unittest", "python3 -m unittest"))
    if tool.name == "Bash" and test and not set(";|&$`<>\n") & set(command):
        return Allow()
    return Allow() if tool.name == "Read" else dl.Ask("may I?")


def ready_without_holding_back(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] == "queued" and (not running or (call["safe"] and all(running))):
            starting.append(call["name"])
            running.append(call["safe"])
    return starting


def ready_not_counting_new_starts(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] != "queued":
            continue
        if not running or (call["safe"] and all(running)):
            starting.append(call["name"])
        elif not call["safe"]:
            break
    return starting


def ready_unsafe_beside_safe(calls):
    running = [call["safe"] for call in calls if call["status"] == "running"]
    starting = []
    for call in calls:
        if call["status"] != "queued":
            continue
        if not running or all(running):
            starting.append(call["name"])
            running.append(call["safe"])
        elif not call["safe"]:
            break
    return starting


def close_all_interrupted(tool_uses, results, started):
    return {"role": "user", "content": [results.get(u.id) or {"type": "tool_result", "tool_use_id": u.id,
                                                              "content": INTERRUPTED, "is_error": True}
                                        for u in tool_uses]}


def close_swapped(tool_uses, results, started):
    return {"role": "user", "content": [results.get(u.id) or {"type": "tool_result", "tool_use_id": u.id,
                                                              "content": NOT_STARTED if u.id in started else INTERRUPTED,
                                                              "is_error": True}
                                        for u in tool_uses]}


def close_in_completion_order_with_both_texts(tool_uses, results, started):
    blocks = list(results.values())
    blocks += [{"type": "tool_result", "tool_use_id": u.id, "content": INTERRUPTED if u.id in started else NOT_STARTED,
                "is_error": True} for u in tool_uses if u.id not in results]
    return {"role": "user", "content": blocks}


def close_reading_dicts(tool_uses, results, started):
    """The chapter built its calls as dicts; the exercise hands the SDK's objects."""
    return {"role": "user", "content": [results.get(u["id"]) or {"type": "tool_result", "tool_use_id": u["id"],
                                                                 "content": INTERRUPTED, "is_error": True}
                                        for u in tool_uses]}


def interrupted_at_first_error(trace):
    for point in trace.checkpoints:
        blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
        errors = [b["tool_use_id"] for b in blocks if b.get("is_error")]
        if errors:
            return point.index, errors
    return None


def interrupted_where_the_marker_is_sent(trace):
    for point in trace.checkpoints:
        texts = [m.message["content"] for m in trace.resolve(point.messages_for_query) if m.type == "user"]
        if any("[Request interrupted" in str(t) for t in texts):
            return point.index, []
    return None


def interrupted_every_call(trace):
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            return point.index, [b.id for m in trace.resolve(point.assistant_messages)
                                 for b in m.message.content if b.type == "tool_use"]
    return None


def interrupted_turn_count(trace):
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
            return point.turn_count, [b["tool_use_id"] for b in blocks if b.get("is_error")]
    return None


def interrupted_last(trace):
    found = None
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
            found = point.index, [b["tool_use_id"] for b in blocks if b.get("is_error")]
    return found


def interrupted_sorted(trace):
    found = interrupted(trace)
    return found and (found[0], sorted(found[1]))


def interrupted_every_error_so_far(trace):
    errors = []
    for point in trace.checkpoints:
        blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
        errors += [b["tool_use_id"] for b in blocks if b.get("is_error")]
        if point.terminal and point.terminal.reason.startswith("aborted"):
            return point.index, errors
    return None


def resume_saved_anywhere(records):
    """Every finished-call record in the file counts, whichever turn it belongs to."""
    finished = {r["tool_use_id"] for r in records if r["type"] == "progress"}
    calls = [b["id"] for r in records if r["type"] == "assistant" for b in r["message"]["content"]
             if b["type"] == "tool_use"]
    return [c for c in calls if c in finished], resume_answers(records)[1]


def resume_in_finishing_order(records):
    saved, lost = resume_answers(records)
    return [r["tool_use_id"] for r in records if r["type"] == "progress" and r["tool_use_id"] in saved], lost


def resume_ignoring_results(records):
    """The last response's calls, as if no results message could follow them."""
    last = max(i for i, r in enumerate(records) if r["type"] == "assistant")
    calls = [b["id"] for b in records[last]["message"]["content"] if b["type"] == "tool_use"]
    finished = {r["tool_use_id"] for r in records if r["type"] == "progress"}
    return [c for c in calls if c in finished], [c for c in calls if c not in finished]


def resume_first_response(records):
    first = min(i for i, r in enumerate(records) if r["type"] == "assistant")
    calls = [b["id"] for b in records[first]["message"]["content"] if b["type"] == "tool_use"]
    finished = {r["tool_use_id"] for r in records if r["type"] == "progress"}
    answered = {b["tool_use_id"] for r in records if r["type"] == "user" and isinstance(r["message"]["content"], list)
                for b in r["message"]["content"]}
    dangling = [c for c in calls if c not in answered]
    return [c for c in dangling if c in finished], [c for c in dangling if c not in finished]


def model_calls_by_text(records):
    """Tells responses apart by what they say."""
    return len({r["message"]["content"][0]["text"] for r in records if r["type"] == "assistant"
                and not r.get("isSidechain") and r["message"]["content"][0]["type"] == "text"})


def model_calls_by_runs(records):
    count, previous = 0, None
    for record in records:
        if record.get("isSidechain"):
            continue
        if record["type"] == "assistant" and previous != "assistant":
            count += 1
        previous = record["type"]
    return count


def block_without_the_task_line(input):
    decision = block_while_tests_fail(input)
    return decision and StopDecision(decision="block", reason="The tests fail.")


def block_unless_already_active(input):
    """Reads stop_hook_active as 'I blocked once already': lets the loop end with the tests still failing."""
    return None if input.stop_hook_active else block_while_tests_fail(input)


def block_with_stdout(input):
    """Looks for the failures on stdout (unittest writes them to stderr): the reason names no failing test."""
    done = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-p", "check_*.py"],
                          cwd=input.cwd, capture_output=True, text=True)
    if done.returncode == 0:
        return None
    failures = [line for line in done.stdout.splitlines() if line.startswith(("FAIL:", "ERROR:"))]
    return StopDecision(decision="block", reason="The tests fail:\n" + "\n".join(failures) + "\nmake the failing test pass")


def block_from_the_config(input):
    """Decides from config.py, not from the tests."""
    if "value = 2" in (Path(input.cwd) / "config.py").read_text():
        return None
    return StopDecision(decision="block", reason="FAIL: test_value\nmake the failing test pass")


def first_key(command):
    """The old answer key: one rm per part at ; & | newline, its first word rm; no wrapper, no subshell."""
    import re
    import shlex
    for part in re.split(r"[;&|\n]+", command):
        words = shlex.split(part)
        if words and Path(words[0]).name == "rm" and any(
                w in ("-r", "-R", "--recursive") or (re.fullmatch(r"-[A-Za-z]+", w) and set("rR") & set(w))
                for w in words[1:]):
            return True
    return False


def deny_if(predicate):
    def hook(input):
        if predicate(input.tool_input.get("command", "")):
            return PreToolUseDecision(decision="deny", reason="A recursive rm is not allowed in this project.")
        return None
    return hook


def first_flag_regex(command):
    import re
    return bool(re.search(r"\brm\s+(-\w*[rR]|--recursive)", command))


def flags_listed(command):
    import shlex
    words = shlex.split(command)
    return "rm" in words and any(w in ("-r", "-R", "-rf", "-fr", "-Rf", "--recursive") for w in words)


def any_word_rm(command):
    import re
    import shlex
    words = shlex.split(command)
    return "rm" in words and any(w == "--recursive" or re.fullmatch(r"-[A-Za-z]*[rR][A-Za-z]*", w) for w in words)


def wrappers_by_name_only(command):
    """Knows the wrappers' names, not their options: `sudo -u root rm -rf /` reads as the command `-u`."""
    for words in shell_commands(command):
        while words and (Path(words[0]).name in RM_WRAPPERS or "=" in words[0]):
            words = words[1:]
        if words and Path(words[0]).name == "rm" and any(re.fullmatch(r"-\w*[rR]\w*|--recur\w*", w) for w in words):
            return True
    return False


def wrapper_flags_without_values(command):
    """Skips a wrapper's options but never their values: `nice -n 5 rm -rf build` reads as the command `5`."""
    for words in shell_commands(command):
        while words and (Path(words[0]).name in RM_WRAPPERS or "=" in words[0]):
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
        if words and Path(words[0]).name == "rm" and any(re.fullmatch(r"-\w*[rR]\w*|--recur\w*", w) for w in words):
            return True
    return False


def every_short_option_takes_a_value(command):
    """Takes -u, -g and -n as valued for every wrapper: `sudo -n rm -rf build` reads as the command `-rf`."""
    def words_of(words):
        while words and (Path(words[0]).name in RM_WRAPPERS or "=" in words[0]):
            words = words[1:]
            while words and (words[0].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", words[0])):
                words = words[2:] if words[0] in ("-u", "-g", "-n") else words[1:]
        return words
    return any([Path(x).name for x in words_of(w)[:1]] == ["rm"] and any(re.fullmatch(r"-\w*[rR]\w*|--recur\w*", x) for x in words_of(w))
               for w in shell_commands(command))


def split_before_the_quotes(command):
    """Splits at ; & | before reading quotes: `echo "x; rm -rf y"` becomes a command `rm -rf y"`."""
    return any(solution_recursive_rm(part) for part in re.split(r"[;&|\n]+", command))


def any_recursive_flag_on_the_line(command):
    """Finds rm and a recursive flag in the same command, whoever's flag it is: `xargs -r rm -f` is denied."""
    return any(any(Path(w).name == "rm" for w in words) and any(re.fullmatch(r"-\w*[rR]\w*|--recur\w*", w)
                                                               for w in words)
               for words in shell_commands(command))


def timeout_without_its_duration(command):
    """Knows the wrappers and their options, but not that timeout takes a duration: `timeout 5 rm -rf x`."""
    for words in shell_commands(command):
        while words and (re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]) or Path(words[0]).name in RM_WRAPPERS):
            takes = RM_WRAPPERS.get(Path(words[0]).name, set())
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[2:] if words[0] in takes else words[1:]
        if words and Path(words[0]).name == "rm" and any(re.fullmatch(r"-\w*[rR]\w*|--recur\w*", w) for w in words):
            return True
    return False


def rm_rf_substring(input):
    if "rm -rf" in input.tool_input["command"]:
        return PreToolUseDecision(decision="deny", reason="no rm -rf")
    return None


# ---------------------------------------------------------------------------
# The table: check, solution, wrong answers (each with a phrase its ❌ must contain), and the solution's code
# that no hint may give away

def naive_cut(messages, keep_recent):
    return max(len(messages) - keep_recent, 0)


def cut_counting_notices(messages, keep_recent):
    cut = max(len(messages) - keep_recent, 0)
    while 0 < cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut -= 1
    return cut


def cut_moved_forward(messages, keep_recent):
    cut, seen = len(messages), 0
    while cut > 0 and seen < keep_recent:
        cut -= 1
        seen += messages[cut].type in ("user", "assistant")
    while cut < len(messages) and messages[cut].type == "user" and messages[cut].source_tool_use_ids:
        cut += 1  # past the result: the pair is summarised instead of kept
    return cut


def stage_in_order(*order, staging=False):
    """The first stage over its threshold, in ``order``; ``staging``: collapse's staging threshold for its own."""
    def first(tokens, options):
        limits = options.thresholds(options.context_window)
        for name in order:
            limit = limits.collapse_stage if staging and name == "context_collapse" else getattr(limits, name)
            if limit is not None and tokens > limit:
                return name
        return None
    return first


def stage_by_lowest_threshold(tokens, options):
    limits = options.thresholds(options.context_window)
    over = [(getattr(limits, n), n) for n in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit")
            if getattr(limits, n) is not None and tokens > getattr(limits, n)]
    return min(over)[1] if over else None


def stage_without_the_blocking_limit(tokens, options):
    stage = first_stage(tokens, options)
    return None if stage == "blocking_limit" else stage


def heaviest_stage(tokens, options):
    over = [s for s in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit")
            if getattr(options.thresholds(options.context_window), s) is not None
            and tokens > getattr(options.thresholds(options.context_window), s)]
    return over[-1] if over else None


def stage_at_or_over(tokens, options):
    limits = options.thresholds(options.context_window)
    for name in ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit"):
        limit = getattr(limits, name)
        if limit is not None and tokens >= limit:
            return name
    return None


def stage_from_fractions(tokens, options):
    for name, fraction in (("snip", 0.5), ("microcompact", 0.6), ("context_collapse", 0.7), ("autocompact", 0.835),
                           ("blocking_limit", 0.885)):
        if tokens > options.context_window * fraction:
            return name
    return None


def clear_all_but_last(messages, keep_recent):
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    last = answers[-1] if answers else len(messages)
    return [b["tool_use_id"] for m in messages[:last] if m.type == "user" and m.source_tool_use_ids
            for b in m.message["content"] if b["content"] != dl.context.CLEARED]


def clear_counting_results(messages, keep_recent):
    ids = [b["tool_use_id"] for m in messages if m.type == "user" and m.source_tool_use_ids
           for b in m.message["content"] if b["content"] != dl.context.CLEARED]
    keep = max(keep_recent, 2)
    return ids[:-keep] if keep else ids


def clear_again(messages, keep_recent):
    answers = [i for i, m in enumerate(messages) if m.type == "user" and m.source_tool_use_ids]
    kept_from = answers[-max(keep_recent, 2)] if len(answers) >= max(keep_recent, 2) else 0
    return [b["tool_use_id"] for m in messages[:kept_from] if m.type == "user" and m.source_tool_use_ids
            for b in m.message["content"]]


ESCALATE = dl.Continue(reason="max_output_tokens_escalate", max_tokens=64_000)


def after_cut_unbounded(state):
    if state.max_output_tokens_override is None:
        return ESCALATE
    return dl.Continue(reason="max_output_tokens_recovery", attempt=state.max_output_tokens_recovery_count + 1)


def after_cut_resume_first(state):
    if state.max_output_tokens_recovery_count < 3:
        return dl.Continue(reason="max_output_tokens_recovery", attempt=state.max_output_tokens_recovery_count + 1)
    return None


def after_cut_counting_from_zero(state):
    if state.max_output_tokens_override is None:
        return ESCALATE
    if state.max_output_tokens_recovery_count < 3:
        return dl.Continue(reason="max_output_tokens_recovery", attempt=state.max_output_tokens_recovery_count)
    return None


def withdrawn_with_progress(events):  # the answer before issue 32: a started call's progress withdrawn too
    return withdrawn(events) + [e.uuid for e in events if e.type == "progress"]


def withdrawn_calls_by_id(events):
    return withdrawn(events) + [e.tool_use_id for e in events if e.type == "progress"]


def keep_going_to_the_end(output_tokens, tracking, total):
    return output_tokens < 0.9 * total


def keep_going_until_full(output_tokens, tracking, total):
    added = output_tokens - tracking.tokens
    return not (tracking.continuations >= 3 and added < 500 and tracking.last_delta < 500) and output_tokens < total


def keep_going_one_small_step_stops(output_tokens, tracking, total):
    added = output_tokens - tracking.tokens
    return not (tracking.continuations >= 3 and added < 500) and output_tokens < 0.9 * total


def keep_going_after_more_than_three(output_tokens, tracking, total):
    added = output_tokens - tracking.tokens
    return not (tracking.continuations > 3 and added < 500 and tracking.last_delta < 500) \
        and output_tokens < 0.9 * total


def cut_with_a_call():
    return [dl.reply("Reading", dl.tool_use("Read", {"file_path": "config.py"}), stop_reason="max_tokens"),
            dl.reply("A long answer that is cut", stop_reason="max_tokens"),
            dl.reply("Let me read it.", dl.tool_use("Read", {"file_path": "config.py"})),
            dl.reply("config.py sets value = 1.")]


def switches_by_string_compare(chapter):
    return {name for name, info in dl.QueryParams.model_fields.items()
            if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("switch")
            and info.json_schema_extra["chapter"] <= str(chapter)}


def switches_by_exact(chapter):
    return {name for name, info in dl.QueryParams.model_fields.items()
            if isinstance(info.json_schema_extra, dict) and int(info.json_schema_extra["chapter"]) == chapter}


SWITCH_CHAPTERS = {"streaming_tool_execution": 5, "context": 6, "hooks": 7, "recovery": 8, "fallback_model": 8,
                   "token_budget": 8}


def switches_by_table(chapter):
    """The switchboard's table, written by hand: right today, wrong once the kit adds a switch."""
    return {name for name, number in SWITCH_CHAPTERS.items() if number <= chapter}


def switches_by_any_chapter_field(chapter):
    """Takes any field that names a chapter for a switch."""
    return {name for name, info in dl.QueryParams.model_fields.items()
            if isinstance(info.json_schema_extra, dict) and int(info.json_schema_extra["chapter"]) <= chapter}


def switches_by_defaults(chapter):
    return {name for name, info in dl.QueryParams.model_fields.items() if info.default in (None, False)}


def reminders_counting_every_one(requests):
    return [sum(block["kind"] == "reminder" for m in messages for block in m["blocks"]) for messages in requests]


def reminders_by_length(requests):
    counts, before = [], 0
    for messages in requests:
        counts.append(sum(block["kind"] == "reminder" for m in messages[before:] for block in m["blocks"]))
        before = len(messages)
    return counts


def whose_by_content(requests, prompts):
    """Chapter 12: a request that holds a prompt anywhere is that sub-agent's (the parent's later request holds
    the call's input too)."""
    return [next((p for p in prompts if p in json.dumps(body)), "parent") for body in requests]


def whose_by_last_message(requests, prompts):
    out = []
    for body in requests:
        content = body["messages"][-1]["content"]
        text = content if isinstance(content, str) else (content[-1].get("text") or "")
        out.append(next((p for p in prompts if text == p), "parent"))
    return out


def whose_first_prompt(requests, prompts):
    """Every request that is not the parent's is the first sub-agent's (fails when two run side by side)."""
    return [prompts[0] if who != "parent" else who for who in SOLVED["check_whose"](requests, prompts)]


def notified_by_id(requests, task_id):
    """The first request that names the id at all: the background call's own result names it at once."""
    return next((n for n, body in enumerate(requests, start=1) if task_id in json.dumps(body)), None)


def notified_last(requests, task_id):
    found = [n for n, body in enumerate(requests, start=1) if f"Background task {task_id} " in json.dumps(body)]
    return found[-1] if found else None


def notified_in_any_message(requests, task_id):
    """The chapter's carries() on every request: also finds the words in the model's own text (an assistant
    message that names the task before it ends)."""
    def texts(body):
        for message in body["messages"]:
            content = message["content"]
            for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
                inner = block.get("content") if block.get("type") == "tool_result" else block.get("text")
                yield from [inner or ""] if not isinstance(inner, list) else [b.get("text", "") for b in inner]
    return next((n for n, body in enumerate(requests, start=1)
                 if any(f"Background task {task_id} " in text for text in texts(body))), None)


def notified_from_zero(requests, task_id):
    found = SOLVED["check_notified_at"](requests, task_id)
    return None if found is None else found - 1


def notified_in_results_only(requests, task_id):
    for number, body in enumerate(requests, start=1):
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and f"Background task {task_id}" in json.dumps(block):
                    return number
    return None


def notified_in_text_blocks_only(requests, task_id):
    """The text blocks alone: a notification taken after the tools is inside the last tool_result (Claude Code
    2.1.332's place in background_command_ends_before_next_request, which dreamloop follows)."""
    for number, body in enumerate(requests, start=1):
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "text" and f"Background task {task_id} " in block["text"]:
                    return number
    return None


CASES = [
    (ex.check_hello_script, SOLVED["check_hello_script"], [
        ([dl.reply("Hello!")], "not 'Hello, loop!'"),
        (dl.reply("Hello, loop!"), "a script is a list of turns, even when it has one"),
        ("Hello, loop!", "expected a non-empty list of turns"),
        ([dl.reply("Hello, loop!", dl.tool_use("Read", {"file_path": "config.py"}))], "a greeting needs no tool"),
        ([dl.text("Hello, loop!")], "puts blocks into a Turn"),
    ]),
    (ex.check_tool_script, SOLVED["check_tool_script"], [
        ([dl.reply(dl.tool_use("Read", {"file_path": "conf.py"}, id="toolu_1")), dl.reply("value is 1")],
         "expected file_path 'config.py'"),
        ([dl.reply(dl.tool_use("Read", ["config.py"], id="toolu_1")), dl.reply("value is 1")],
         "the tool's input is a dict"),
        ([dl.reply("value is 1")], "answered without reading the file"),
        ([TOOL_SCRIPT[0], dl.reply("I read 1 file.")], "a 1 somewhere in the text is not enough"),
        ([TOOL_SCRIPT[0], dl.reply("value is 10.")], "does not say that value is 1"),
        ([dl.reply(dl.tool_use("read", {"file_path": "config.py"}, id="toolu_1")), dl.reply("value is 1")],
         "tool names are exact"),
        ([dl.reply("value is 1.", dl.tool_use("Read", {"file_path": "config.py"}, id="toolu_1"))],
         "a script that runs out of turns ends the run with model_error"),
    ]),
    (ex.check_find_tool_uses, SOLVED["check_find_tool_uses"], [
        (lambda r: r.content if r.stop_reason == "tool_use" else [], "keep only the tool_use ones"),
        (lambda r: [b for b in r.content if b.type == "tool_use"] if r.stop_reason == "tool_use" else [],
         "never from stop_reason"),
        (lambda r: [b for b in r.content if b.type != "text"], "keep only the tool_use ones"),
        (lambda r: [b for b in r.content if b.type == "tool_use"][:1], "keep every tool_use block"),
        (lambda r: [b.id for b in r.content if b.type == "tool_use"], "return the blocks themselves"),
    ]),
    (ex.check_four_steps, SOLVED["check_four_steps"], [
        (loop_without_assistant, "append the assistant message"),
        (loop_that_never_stops, "more often than the script has turns"),
        (loop_trusting_stop_reason, "never from stop_reason"),
        (loop_with_results_reversed, "in the order of the calls"),
        (loop_forgetting_earlier_turns, "keep the whole history"),
        (loop_returning_text, "return the model's response itself"),
    ]),
    (ex.check_answer_tool_uses, SOLVED["check_answer_tool_uses"], [
        (answer_without_errors, "a failure is a result, not an exception"),
        (answer_errors_without_flag, "is_error=False; expected True"),
        (answer_sorted_by_id, "the calls fix the order"),
        (answer_skipping_failures, "every tool_use needs a tool_result"),
        (answer_one_message_per_result, "ONE user message"),
        (answer_with_text_first, "the tool_result blocks come first"),
    ]),
    (ex.check_close_dangling, SOLVED["check_close_dangling"], [
        (close_in_completion_order, "the calls fix the order"),
        (lambda uses, results: {"role": "user", "content": list(results.values())}, "every tool_use needs a tool_result"),
        (close_missing_without_flag, "never finished gets an error result"),
        (close_all_as_interrupted, "a result that did arrive is kept"),
    ]),
    (ex.check_last_answer, SOLVED["check_last_answer"], [
        (last_answer_reading_terminal_first, "the Terminal is on the run object"),
        (last_answer_first_message, "the LAST assistant message"),
        (last_answer_assuming_completed, "don't assume one"),
        (last_answer_the_final_text_only, "whatever it asked for"),
        (last_answer_last_message, "the LAST assistant message"),
    ]),
    (ex.check_next_state, SOLVED["check_next_state"], [
        (next_state_results_first, "the order matters"),
        (lambda s, q, a, r: dl.State(messages=(*s.messages, *a, *r), turn_count=s.turn_count + 1,
                                     transition=dl.Continue(reason="next_turn")), "not from state.messages"),
        (lambda s, q, a, r: {"messages": q}, "expected a State"),
        (next_state_same_turn, "goes up by one"),
        (next_state_without_transition, "transition records why"),
        (next_state_without_assistant, "keep this turn's assistant messages"),
    ]),
    (ex.check_max_turns, SOLVED["check_max_turns"], [
        (predict_naive, "ends the run the ordinary way"),
        (predict_turn_count_of_the_last_state, "the turn the loop refused to start"),
        (predict_completed_at_the_limit, "never gets asked"),
        (predict_one_request_too_many, "each turn the loop starts sends one request"),
        (lambda m: (m, m), "predict(3, 1) raised TypeError"),
        (lambda m, k: (m, m), "four values"),
    ]),
    (ex.check_memory_files, SOLVED["check_memory_files"], [
        (memory_files_nearest_first, "the farthest instructions first"),
        (memory_files_every_parent, "only as far as the repository root"),
        (memory_files_no_local, "the private .local one"),
        (memory_files_no_user, "the user's own memory file"),
        (memory_files_farthest_git, "the nearest folder up that holds .git"),
        (memory_files_local_first, "the shared CLAUDE.md comes first"),
        (lambda paths, workspace: sorted(p for p in paths if p.endswith(".md")), "should not be there"),
    ]),
    (ex.check_next_attachments, SOLVED["check_next_attachments"], [
        (next_attachments_every_change, "a change the model has not seen"),
        (next_attachments_unread_too, "only files the model read earlier are watched"),
        (next_attachments_own_edits_too, "a change the model has not seen"),
        (next_attachments_write_not_seen, "read, edited or wrote in this very turn"),
        (next_attachments_queue_first, "then the queued input"),
        (next_attachments_sorted, "the order"),
        (lambda r, c, ch, q: [("queued_command", t) for t in q], "every file read in an earlier turn"),
    ]),
    (ex.check_tool_definition, SOLVED["check_tool_definition"], [
        (word_count_required_unique, "a field with a default is optional"),
        (word_count_not_read_only, "counting words changes nothing"),
        (len, "expected a tool"),
        (word_count_split_on_spaces, "split on any run of whitespace"),
        (word_count_ignoring_unique, "count each distinct word once"),
        (word_count_text_optional, "text must be given"),
    ]),
    (ex.check_partition, SOLVED["check_partition"], [
        (partition_by_name, "safety depends on the input"),
        (partition_all_together, "an unsafe call runs alone"),
        (partition_each_alone, "consecutive safe calls share a batch"),
        (partition_unknown_is_safe, "never safe"),
        (partition_joining_after_unsafe, "a safe call after it starts a new batch"),
    ]),
    (ex.check_can_use_tool, SOLVED["check_can_use_tool"], [
        (allow_everything, "refuse any shell syntax"),
        (allow_by_prefix_only, "refuse any shell syntax"),
        (allow_python_only, "python3 as well as python"),
        (deny_everything_else, "return the tool's own decision"),
        (decide_without_await, "await it"),
        (allow_across_lines, "refuse line breaks too"),
        (allow_any_module_named_so, "runs another module"),
        (allow_anything_with_unittest, "unittest_helpers"),
        (refuse_only_chaining, "refuse any shell syntax"),
        (ask_for_the_rest, "that is not this call's decision"),
    ]),
    (ex.check_run_together, SOLVED["check_run_together"], [
        ({**PREDICTION, "B": [["a", "b"]]}, "did not run beside it"),  # chapter 04's batches, ignoring arrivals
        ({**PREDICTION, "C": [["a"], ["b", "c"]]}, "holds back the calls after it"),
        ({**PREDICTION, "D": [["a", "b", "c"]]}, "nothing starts beside a running non-safe call"),
        ({**PREDICTION, "A": [["a", "b"]]}, "belongs to exactly one group"),
        ([["a"]], "expected a dict of scenarios"),
    ]),
    (ex.check_ordering_rule, SOLVED["check_ordering_rule"], [
        (ready_without_holding_back, "holds back every call after it"),
        (ready_not_counting_new_starts, "counts as running for the calls after it"),
        (ready_unsafe_beside_safe, "never starts beside another call"),
    ]),
    (ex.check_interrupt_results, SOLVED["check_interrupt_results"], [
        (close_all_interrupted, "never started"),
        (close_swapped, "had started"),
        (close_in_completion_order_with_both_texts, "the calls fix the order"),
        (close_reading_dicts, "read use.id and use.name"),
    ]),
    (ex.check_resume_answers, SOLVED["check_resume_answers"], [
        (lambda records: ([], resume_answers(records)[0] + resume_answers(records)[1]), "but it finished and its result was saved"),
        (lambda records: (sum(resume_answers(records), []), []), "but it never finished"),
        (resume_saved_anywhere, "a results message in the file already answers it"),
        (resume_in_finishing_order, "the right calls in another order"),
        (resume_ignoring_results, "'killed after the results message'"),
        (resume_first_response, "'killed in the second turn'"),
        (lambda records: (resume_answers(records)[0], []), "have no answer"),
        (lambda records: dict(zip(("saved", "lost"), resume_answers(records))), "expected a pair of lists"),
    ]),
    (ex.check_interrupted, SOLVED["check_interrupted"], [
        (interrupted_at_first_error, "an is_error result is not an interrupt"),
        (interrupted_where_the_marker_is_sent, "the checkpoint after the interrupt"),
        (interrupted_every_call, "a call whose result is not is_error did run"),
        (interrupted_turn_count, "its position among the checkpoints"),
        (interrupted_last, "an interrupted run, but not the first one"),
        (interrupted_sorted, "the right calls in another order"),
        (interrupted_every_error_so_far, "toolu_ls did run"),
    ]),
    (ex.check_model_calls, SOLVED["check_model_calls"], [
        (lambda records: sum(r["type"] == "assistant" for r in records), "you counted records"),
        (lambda records: len({r["message"]["id"] for r in records if r["type"] == "assistant"}),
         "a subagent's own conversation"),
        (model_calls_by_runs, "tool_result records can sit between the blocks"),
        (lambda records: float(model_calls(records)), "expected a whole number"),
        (model_calls_by_text, "fewer than the model calls"),
        (lambda records: len({r["message"]["id"] for r in records if r["type"] == "assistant"
                              and not r.get("isSidechain") and any(b["type"] == "text" for b in r["message"]["content"])}),
         "only tool_use blocks is a model call too"),
        (lambda records: len({r["message"]["id"] for r in records if r["type"] == "assistant"})
         - sum(r["type"] == "assistant" and bool(r.get("isSidechain")) for r in records),
         "leave its records out"),
    ]),
    (ex.check_tests_stop_hook, SOLVED["check_tests_stop_hook"], [
        (lambda input: None, "never blocked"),
        (lambda input: StopDecision(decision="block", reason="make the failing test pass"), "never lets the loop end"),
        (block_without_the_task_line, "could not act on your feedback"),
        (lambda input: StopDecision(continue_=False) if block_while_tests_fail(input) else None,
         "prevented continuation"),
        (lambda input: "block", "returned str"),
        (block_unless_already_active, "let the loop end (stop_hook_active=True)"),
        (block_with_stdout, "does not name the failing test"),
        (block_from_the_config, "does not name the failing test"),
    ]),
    (ex.check_no_recursive_rm, SOLVED["check_no_recursive_rm"], [
        (rm_rf_substring, "'rm -fr /' was not denied"),
        (lambda input: PreToolUseDecision(decision="deny", reason="no Bash"), "'ls -la' was denied"),
        (lambda input: Deny("no") if recursive_rm(input.tool_input["command"]) else None, "not a hook's"),
        (lambda input: PreToolUseDecision(decision="deny") if recursive_rm(input.tool_input["command"]) else None,
         "without a reason"),
        (lambda input: PreToolUseDecision(decision="deny", reason="r") if recursive_rm(input.tool_input["command"])
         else PreToolUseDecision(decision="allow"), "expected None"),
        (deny_if(first_key), "'sudo rm -rf /var/tmp' was not denied"),
        (deny_if(first_flag_regex), "'rm -f -r build' was not denied"),
        (deny_if(flags_listed), "'rm -vR logs' was not denied"),
        (deny_if(any_word_rm), "'/bin/rm -rf build' was not denied"),
        (deny_if(wrappers_by_name_only), "'sudo -u root rm -rf build' was not denied"),
        (deny_if(wrapper_flags_without_values), "'sudo -u root rm -rf build' was not denied"),
        (deny_if(every_short_option_takes_a_value), "'sudo -n rm -rf build' was not denied"),
        (deny_if(split_before_the_quotes), "'echo \"x; rm -rf y\"' was denied"),
        (deny_if(any_recursive_flag_on_the_line), "xargs -r rm -f notes.txt\" was denied"),
        (deny_if(timeout_without_its_duration), "'timeout 5 rm -rf build' was not denied"),
    ]),
    (ex.check_settings_hook, SOLVED["check_settings_hook"], [
        (settings_with("grep -q 'git push' && { echo 'no' >&2; exit 1; }; exit 0"), "fails open"),
        (settings_with(matcher="bash"), "case-sensitive"),
        (settings_with('[[ "$1" == *"git push"* ]] && { echo no >&2; exit 2; }; exit 0'), "stdin"),
        (settings_with(kind="prompt"), "only type 'command' runs"),
        (settings_with(event="pre_tool_use"), "no pre_tool_use event"),
        (settings_with("grep -q 'git push' && exit 2; exit 0"), "nothing on stderr"),
        (settings_with("grep -q 'git' && { echo 'no git' >&2; exit 2; }; exit 0"), "'git status' was blocked too"),
        (settings_with("grep -q 'git push --force' && { echo 'no' >&2; exit 2; }; exit 0"),
         "'git push origin main' was not blocked"),
        (settings_with("grep -q push && { echo 'no' >&2; exit 2; }; exit 0"), "'git stash push -m wip' was blocked"),
        (settings_with("grep -q 'git push' && { echo 'no' >&2; exit 2; }; exit 0"), "'git  push -f' was not blocked"),
        (settings_with("""grep -q '"git push' && { echo 'no' >&2; exit 2; }; exit 0"""),
         "'cd app && git push' was not blocked"),
    ]),
    (ex.check_safe_cut, SOLVED["check_safe_cut"], [
        (naive_cut, "unexpected tool_use_id"),
        (cut_counting_notices, "fewer than keep_recent"),
        (cut_moved_forward, "fewer than keep_recent"),
        (lambda messages, keep: 0, "the cut is 0"),
        (cut_counting_user_and_assistant, "more than keep_recent needs"),
        (cut_even_before_notices_only, "nothing before it is sent to the model"),
    ]),
    (ex.check_first_stage, SOLVED["check_first_stage"], [
        (heaviest_stage, "a lighter stage that is on is over its own too"),
        (stage_at_or_over, "*over* it"),
        (stage_from_fractions, "you said"),
        (stage_by_lowest_threshold, "the pipeline runs light to heavy"),
        (stage_without_the_blocking_limit, "over at least one threshold"),
        (stage_in_order("snip", "microcompact", "autocompact", "blocking_limit"),
         "a lighter stage that is on is over its own too"),
        (stage_in_order("snip", "context_collapse", "microcompact", "autocompact", "blocking_limit"),
         "a lighter stage that is on is over its own too"),
        (stage_in_order("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit", staging=True),
         "context_collapse's threshold is 3,000"),
        (stage_in_order("microcompact", "snip", "context_collapse", "autocompact", "blocking_limit"),
         "a lighter stage that is on is over its own too"),
    ]),
    (ex.check_clearable, SOLVED["check_clearable"], [
        (clear_all_but_last, "must stay"),
        (clear_counting_results, "must stay"),
        (clear_again, "already cleared"),
        (clear_short_ones_too, "too short for clearing to save anything"),
        (clear_by_message, "You left out 1 old result(s)"),
    ]),
    (ex.check_cut_recovery, SOLVED["check_cut_recovery"], [
        (after_cut_unbounded, "Three resumes are the bound"),
        (after_cut_resume_first, "The first cut of a turn escalates"),
        (lambda state: ESCALATE, "escalating again changes nothing"),
        (after_cut_counting_from_zero, "The attempt is off"),
        (lambda state: "escalate", "expected a dl.Continue or None"),
    ]),
    (ex.check_withdrawn, SOLVED["check_withdrawn"], [
        (lambda events: [], "the failed attempt's partial text stays on screen"),
        (withdrawn_with_progress, "the progress of a call that had started"),
        (withdrawn_calls_by_id, "never showed as a message"),
        (lambda events: [e.uuid for e in events if e.type == "stream_event"], "has no attribute"),
        (lambda events: withdrawn(events) + withdrawn(events), "more than once"),
    ]),
    (ex.check_budget_continue, SOLVED["check_budget_continue"], [
        (keep_going_to_the_end, "three continuations, +120 after +80' you would go on"),
        (keep_going_until_full, "at 9,000 of 10,000' you would go on"),
        (keep_going_one_small_step_stops, "+120 after +900' you would stop"),
        (keep_going_after_more_than_three, "three continuations, +120 after +80' you would go on"),
        (lambda tokens, tracking, total: 1, "expected True or False"),
    ]),
    (ex.check_where_decided, SOLVED["check_where_decided"], [
        (lambda reason: "stop" if reason == "hook_stopped" else WHERE[reason], "the stop hooks are another event"),
        (lambda reason: "stop" if reason == "max_turns" else WHERE[reason], "checked at phase 5"),
        (lambda reason: "stream" if reason == "blocking_limit" else WHERE[reason], "nothing is sent"),
        (lambda reason: "recovery" if reason.startswith("token_budget") else WHERE[reason], "with the stop checks"),
        (lambda reason: reason, f"expected one of {PHASES}"),
    ]),
    (ex.check_trigger, SOLVED["check_trigger"], [
        (cut_with_a_call, "your script's transitions were [None, 'next_turn'"),
        (lambda: escalate_resume_next_turn()[1:], "[None, 'max_output_tokens_escalate', 'next_turn']"),
        (lambda: escalate_resume_next_turn()[:3], "it should end completed right after next_turn"),
        (lambda: [dl.text("x")], "expected a list of dl.Turn"),
    ]),
    (ex.check_switches_by, SOLVED["check_switches_by"], [
        (switches_by_string_compare, "not a switch by chapter 4"),
        (switches_by_exact, "It leaves out"),
        (switches_by_table, "It leaves out"),  # the kit has added switches since the table was written
        (switches_by_any_chapter_field, "does not follow the fields"),
        (switches_by_defaults, "not a switch by chapter 4"),
        (lambda chapter: ["streaming_tool_execution", "context", "hooks"], "not a switch by chapter 4"),
    ]),
    (ex.check_predict, SOLVED["check_predict"], [
        # the source texts' account of a cut that never heals (escalate, resume 3 times, completed)
        ({**PREDICTED, "max_tokens_always": (5, "completed")}.__getitem__, "5 requests is too many"),
        ({**PREDICTED, "disconnect_inside_tool_use": (2, "completed")}.__getitem__, "2 requests is too few"),
        ({**PREDICTED, "http_529": (1, "api_error")}.__getitem__, "1 requests is too few"),
        ({**PREDICTED, "max_tokens_always": (4, "completed")}.__getitem__, "did not end 'completed'"),
        ({**PREDICTED, "http_529_fallback": (5, "completed")}.__getitem__, "5 requests is too many"),
        (lambda name: 4, "expected a pair (requests, ending)"),
    ]),
    (ex.check_reminders_added, SOLVED["check_reminders_added"], [
        (lambda requests: reminders_added(requests, same=lambda a, b: a == b), "the marker taken off"),
        (reminders_counting_every_one, "you counted every reminder the request carries"),
        (lambda requests: reminders_added(requests, inside=True), "inside a tool_result's content"),
        (reminders_by_length, "a message that changed is new"),
        (lambda requests: reminders_added(requests)[1:], "the first request included"),
    ]),
    (ex.check_whose, SOLVED["check_whose"], [
        (whose_by_content, "a prompt somewhere in a request does not make it the sub-agent's"),
        (whose_by_last_message, "what every request of one conversation shares is its first message"),
        (whose_first_prompt, "their requests interleave"),
        (lambda requests, prompts: ["parent"] * (len(requests) - 1), "one entry per request"),
    ]),
    (ex.check_notified_at, SOLVED["check_notified_at"], [
        (notified_by_id, "in the Bash call's own result"),
        (notified_last, "every later request carries it again"),
        (notified_from_zero, "requests count from 1"),
        (notified_in_any_message, "the words are the model's own"),
        (notified_in_results_only, "look at every text, a text block's and the text inside each tool_result"),
        (notified_in_text_blocks_only, "look at every text, a text block's and the text inside each tool_result"),
        (lambda requests, task_id: 1, "is too early"),
    ]),
]

GIVEAWAYS = {
    ex.check_cut_recovery: ["max_output_tokens_override is None:", "recovery_count < 3:", "attempt=state.",
                            "under 3", "that count + 1"],
    ex.check_withdrawn: ["ids.append(event.uuid)", 'event.type == "progress"', "ids.append(",
                         "event.event.message.id"],
    ex.check_budget_continue: ["tracking.continuations >= 3 and", "< 0.9 * total", "not diminishing and",
                               "90%", "fewer than 500"],
    ex.check_where_decided: ['"hook_stopped": "tools"', '"max_turns": "next"', '"blocking_limit": "context"'],
    ex.check_trigger: ['dl.reply("', 'dl.tool_use("Read"', "stop_reason=\"max_tokens\")", "config.py"],
    ex.check_switches_by: ['int(info.json_schema_extra["chapter"]) <= chapter', "model_fields.items()",
                           '.get("switch")'],
    ex.check_safe_cut: ["source_tool_use_ids", "cut -= 1", "seen +="],
    ex.check_first_stage: ["getattr(limits", "tokens > limit", "for name in ("],
    ex.check_clearable: ["answers[-max(", "kept_from", 'block["tool_use_id"]'],
    ex.check_hello_script: ['dl.reply("Hello, loop!")', "[dl.reply("],
    ex.check_tool_script: ['dl.tool_use("Read"', '{"file_path": "config.py"}', 'dl.reply("value'],
    ex.check_find_tool_uses: ['type == "tool_use"', "for b in response.content", "for block in response.content"],
    ex.check_four_steps: ["messages.create(", '{"role": "assistant", "content": response.content}'],
    ex.check_answer_tool_uses: ["functions[use.name](**use.input)", '"tool_use_id": use.id', "except Exception"],
    ex.check_close_dangling: ["results.get(use.id)", "for use in tool_uses"],
    ex.check_last_answer: ["async for event in run", 'event.type == "assistant"'],
    ex.check_next_state: ["*messages_for_query, *assistant_messages, *tool_results", "state.turn_count + 1",
                          'Continue(reason="next_turn")'],
    ex.check_max_turns: ["min(", "tool_turns + 1", "max_turns + 1"],
    ex.check_memory_files: ["reversed(", '"CLAUDE.local.md")', "folders.index("],
    ex.check_next_attachments: ["dict.fromkeys(", "not in seen_now", "notes + ["],
    ex.check_tool_definition: ["text: str", "unique: bool = False", "len(set(", "read_only=True", ".split()"],
    ex.check_partition: ["batches[-1].append", "is_concurrency_safe(tool.input_model"],
    ex.check_can_use_tool: ['startswith(("python', "tool.check_permissions(tool.input_model.model_validate(input)"],
    ex.check_run_together: ['[["a", "b", "c"]]', '[["a"], ["b"]]', '[["a"], ["b", "c"]]'],
    ex.check_ordering_rule: ["all(running)", "running.append", "break"],
    ex.check_interrupt_results: ["INTERRUPTED if", "results.get(use.id)", "in started else"],
    ex.check_resume_answers: ['r["type"] == "progress"', "records[last + 1:]", 'b["type"] == "tool_use"',
                              "not in answered", "in finished"],
    ex.check_interrupted: ['reason.startswith("aborted")', "trace.resolve(point.tool_results)", 'b.get("is_error")'],
    ex.check_model_calls: ['r["message"]["id"]', 'not r.get("isSidechain")', "len({"],
    ex.check_tests_stop_hook: ["subprocess.run(", "returncode", 'StopDecision(decision="block"', "cwd=input.cwd"],
    ex.check_no_recursive_rm: ["shlex.split", "re.split(", 'PreToolUseDecision(decision="deny"', "punctuation_chars",
                               "shlex.shlex("],
    ex.check_settings_hook: ["grep -q 'git push'", ">&2; exit 2", '"matcher": "Bash"'],
    ex.check_predict: ['(4, "api_error")', '(3, "completed")', '(3, "api_error")', '(4, "completed")'],
    ex.check_reminders_added: ['k != "cache"', "messages[shared:]", "shared += 1"],
    ex.check_whose: ["first_text(body) == prompt", '"parent") for body in requests', 'content[-1]["text"]'],
    ex.check_notified_at: ["enumerate(requests, start=1)", "if carries(body, task_id)", 'f"Background task {task_id} "',
                           'message["role"] != "user"', '["role"] == "user"'],
}


def hints(out: str) -> list[str]:
    return [line.split("Hint: ", 1)[1] for line in out.splitlines() if "Hint: " in line]


def test_every_check_has_its_wrong_answers():
    checked = {check.__name__ for check, _, _ in CASES}
    assert checked == set(ex.__all__) - {"check_setup", "language"}  # check_setup takes no answer
    for check, _, wrongs in CASES:
        assert len(wrongs) >= 3, check.__name__
        assert check in STUBS and check in GIVEAWAYS, check.__name__


@pytest.mark.parametrize("check, solution", [(c, s) for c, s, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_passes_on_the_solution(check, solution, capsys):
    verdict = check(solution)
    assert verdict and verdict == True  # noqa: E712 - a Verdict compares equal to the bool
    out = capsys.readouterr().out
    assert out.startswith("✅ ") and "❌" not in out and out.count("\n") == 1


WRONG = [(c, w, phrase) for c, _, wrongs in CASES for w, phrase in wrongs]


@pytest.mark.parametrize("check, wrong, phrase", WRONG,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(WRONG)])
def test_check_fails_with_a_hint_that_names_the_idea(check, wrong, phrase, capsys):
    verdict = check(wrong)
    assert not verdict and verdict == False  # noqa: E712
    out = capsys.readouterr().out
    assert out.startswith("❌ ") and "\n   Hint: " in out and out.count("❌") == 1
    assert phrase in out
    for hint in hints(out):
        for code in GIVEAWAYS[check]:
            assert code not in hint, (code, hint)
    for tell in TELLS:  # what is wrong with the answer, never what the right one is
        assert tell not in out, (tell, out)


@pytest.mark.parametrize("check", list(STUBS), ids=[c.__name__ for c in STUBS])
def test_the_untouched_exercise_says_what_to_do(check, capsys):
    assert not check(STUBS[check])
    out = capsys.readouterr().out
    assert out.startswith("❌ ") and "not done yet" in out
    (hint,) = hints(out)
    assert len(hint) > 40  # what to do, in words
    for code in GIVEAWAYS[check]:
        assert code not in hint, (code, hint)


@pytest.mark.parametrize("check", [c for c, _, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_never_raises_on_nonsense(check, capsys):
    assert not check(None)
    assert not check(object())
    out = capsys.readouterr().out
    assert out.count("❌ ") == 2


def test_check_setup_passes(capsys):
    assert ex.check_setup()
    assert capsys.readouterr().out.startswith("✅ setup")


def test_a_verdict_shows_nothing_in_a_notebook():
    """A check cell shows its printed line only: the returned Verdict has no display (no stray True/False)."""
    from IPython.core.formatters import DisplayFormatter

    from dreamloop.exercises._checking import Verdict

    assert DisplayFormatter().format(Verdict(True)) == ({}, {})
    assert repr(Verdict(False)) == "Verdict(passed=False)" and Verdict(True) != Verdict(False)


NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@pytest.mark.parametrize("path", [p for pattern in ("[01][0-9]*_*.ipynb", "solutions/[01][0-9]*_*.ipynb")
                                  for p in sorted(NOTEBOOKS.glob(pattern))],
                         ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_a_stored_check_cell_shows_one_verdict_line_and_nothing_else(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"
             and "ex.check_" in "".join(c["source"])]
    assert cells
    for cell in cells:
        outputs = cell["outputs"]
        assert [o["output_type"] for o in outputs] == ["stream"], "".join(cell["source"])
        text = "".join(outputs[0]["text"])
        assert text[:2] in ("✅ ", "❌ ") and text.count("✅") + text.count("❌") == 1, text
        if "solutions" in str(path):
            assert text.startswith("✅"), text


def test_a_hang_is_reported_not_waited_for(monkeypatch, capsys):
    monkeypatch.setattr(ex._checking, "TIMEOUT_S", 0.3)

    def slow(response):
        time.sleep(3.0)
        return []

    started = time.monotonic()
    assert not ex.check_find_tool_uses(slow)
    assert time.monotonic() - started < 2.0
    assert "did not finish within 0.3 s" in capsys.readouterr().out


def test_a_learner_exception_inside_a_loop_is_named(capsys):
    async def broken(model, messages, tools, run_tool):
        return 1 / 0

    assert not ex.check_four_steps(broken)
    out = capsys.readouterr().out
    assert "raised ZeroDivisionError: division by zero" in out


def test_the_dangling_answers_pass_the_offline_api():
    """The reference behind check_close_dangling agrees with the fake API's own pairing rule."""
    uses = [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {}}]
    body = {"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": uses},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}]}]}
    assert "toolu_2" in validate_request(body).message
    body["messages"][2] = close_dangling([type("U", (), u)() for u in uses], {})
    assert validate_request(body) is None


def test_resume_answers_is_what_a_resume_sends(tmp_path):
    """check_resume_answers' transcripts, each resumed for real: the repair answers the calls as the solution
    says (saved results first-class, the rest is_error, in call order), and the documented answers hold."""
    import warnings

    from dreamloop.exercises.ch10 import _crashed_transcripts

    documented = {
        "killed mid-batch (section 1)": (["toolu_a", "toolu_c"], ["toolu_slow"]),
        "the calls finished out of call order": (["toolu_grep", "toolu_config"], ["toolu_tests"]),
        "killed in the second turn": ([], ["toolu_edit"]),
        "killed after the results message": ([], []),
        "every call finished, no results message": (["toolu_a", "toolu_b"], []),
        "resumed once, then killed again": (["toolu_again", "toolu_d"], ["toolu_b"]),
    }
    transcripts = _crashed_transcripts()
    assert list(transcripts) == list(documented)
    for n, (name, transcript) in enumerate(transcripts.items()):
        path = tmp_path / f"{n}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in transcript.records))
        saved, lost = resume_answers(transcript.records)
        assert (saved, lost) == documented[name], name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine = dl.QueryEngine.resume(path, model=dl.offline([dl.reply("ok")]))
        sent = [] if engine.repair is None else [
            (b["tool_use_id"], b.get("is_error", False)) for b in engine.messages[-2].message["content"]]
        order = {c: i for i, c in enumerate(b["id"] for r in transcript.records if r["type"] == "assistant"
                                            for b in r["message"]["content"] if b["type"] == "tool_use")}
        want = sorted([(c, False) for c in saved] + [(c, True) for c in lost], key=lambda pair: order[pair[0]])
        assert sent == want, name


def test_where_decided_accepts_the_chapter_figure(capsys):
    """Chapter 09's figure puts every unrecovered API error after recovery: an answer read off it passes."""
    from_figure = {**WHERE, "model_error": "recovery", "prompt_too_long": "recovery", "image_error": "recovery"}
    assert ex.check_where_decided(from_figure.__getitem__)
    after_the_stream = {**WHERE, "model_error": "stream", "prompt_too_long": "stream", "image_error": "stream"}
    assert ex.check_where_decided(after_the_stream.__getitem__)
    capsys.readouterr()


TELLS = ["the executor ran", "microcompact clears [", "the pipeline cuts at", "first stage to act is", "is decided in '",
         "Missing:", "the file holds", "the interrupted call is checkpoint", "; expected Allow.", "; expected Ask.",
         "; expected Deny."]
"""How a failed check used to print the right answer (issue 25): a ❌ says what is wrong with the learner's
answer, never what the right one is."""


# ---------------------------------------------------------------------------
# No ❌ line gives the answer away (issue 35): for every check and every wrong answer in CASES, the message
# names neither what the solution returns on the input the wrong answer failed on nor a part of it the wrong
# answer lacks. The solution is run on the same inputs (a spy records each call's input and output, on both
# runs); a value counts as given away when its text occurs in the message more often than in the input and the
# learner's own output together (a check may show the input and what the learner returned, never the answer).

import functools
import inspect
import re

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _fingerprint(args):
    return _ADDRESS.sub("", repr(args))


def _sent(args, before):
    """The request bodies a model among ``args`` received since ``before`` (a loop's output is what it sent)."""
    models = [a for a in args if hasattr(getattr(a, "api", None), "requests")]
    return [[r.body for r in m.api.requests[n:] if r.path.endswith("/v1/messages")] for m, n in zip(models, before)]


def _spy(fn, log):
    """``fn`` with every call's (input fingerprint, input, output) appended to ``log``; same kind (sync/async).
    Where a model is among the inputs, the output is (returned value, the requests it was sent)."""
    def counts(args):
        return [len(a.api.requests) for a in args if hasattr(getattr(a, "api", None), "requests")]

    def output(args, before, value):
        return (value, *_sent(args, before)) if before else value

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def spied(*args):
            key, before = _fingerprint(args), counts(args)
            value = await fn(*args)
            log.append((key, args, output(args, before, value)))
            return value
    else:
        @functools.wraps(fn)
        def spied(*args):
            key, before = _fingerprint(args), counts(args)
            value = fn(*args)
            log.append((key, args, output(args, before, value)))
            return value
    return spied


def _spied_tool(tool, log):
    """A copy of a ``@dl.tool`` whose function is spied."""
    import copy

    spied = copy.copy(tool)
    spied.fn = _spy(tool.fn, log)
    return spied


def _is_function(value):
    return inspect.isfunction(value) or inspect.ismethod(value) or inspect.isbuiltin(value) or \
        type(value).__name__ == "method-wrapper"


def _plain(value):
    """Pydantic models as their JSON dicts, at any depth (a script's Turns, a Continue)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _parts(want, got):
    """What of ``want`` (the solution's value) ``got`` (the learner's) lacks: the whole value, then the parts."""
    want, got = _plain(want), _plain(got)
    if want == got or want is None or isinstance(want, (bool, float)):
        return []
    out = [want]
    if isinstance(want, dict):
        other = got if isinstance(got, dict) else {}
        for key, item in want.items():
            out += _parts(item, other.get(key))
    elif isinstance(want, tuple):  # a record: compared field by field
        other = list(got) if isinstance(got, (list, tuple)) else []
        for i, item in enumerate(want):
            out += _parts(item, other[i] if i < len(other) else None)
    elif isinstance(want, list):  # a collection: an item the learner lacks is a part
        other = [_plain(g) for g in got] if isinstance(got, (list, tuple)) else []
        for item in want:
            if _plain(item) not in other:
                out += _parts(item, None)
    return out


def _renderings(value):
    """How a check may print ``value``: repr, JSON, the checks' own _short; a long string also bare."""
    from dreamloop.exercises._checking import _short

    if isinstance(value, str):
        forms = {repr(value), json.dumps(value, ensure_ascii=False)}
        return forms | ({value} if len(value) >= 24 else set())
    if isinstance(value, int):  # a bare number under 10 is in every message (counts, turns): not matched alone
        return {str(value)} if abs(value) >= 10 else set()
    if not isinstance(value, (list, tuple, dict)) or not value:
        return set()
    forms = {repr(value), _short(value, 10_000)}
    try:
        forms.add(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        pass
    return {form for form in forms if len(form) >= 4}


def _count(form, text):
    if form.isdigit():
        return len(re.findall(rf"(?<![\w.,]){form}(?![\w.,]|,\d)", text))
    return text.count(form)


def _text_of(value):
    """Every way the input or the learner's output may be printed, to count what they already show."""
    plain = _plain(value)
    texts = [repr(value), repr(plain)]
    try:
        texts.append(json.dumps(plain, ensure_ascii=False, default=repr))
    except (TypeError, ValueError):
        pass
    return texts


def _given_away(check, solution, wrong, out):
    """The values the ❌ line ``out`` gives away (empty when it gives none)."""
    tools = isinstance(solution, dl.tools.FunctionTool) and isinstance(wrong, dl.tools.FunctionTool)
    if (_is_function(solution) and _is_function(wrong)) or tools:
        right, learner = [], []
        wrap = _spied_tool if tools else _spy
        check(wrap(solution, right))
        check(wrap(wrong, learner))
        pairs = []
        for i, (key, args, got) in enumerate(learner):
            match = [w for k, _, w in right if k == key]
            if match and len(match) == 1:
                pairs.append((args, match[0], got))
            elif i < len(right):
                pairs.append((args, right[i][2], got))
    else:
        pairs = [((), solution, wrong)]
    found = []
    for args, want, got in pairs:
        shown = {"args": _text_of(args), "got": _text_of(got)}
        for part in _parts(want, got):
            for form in _renderings(part):
                allowed = max(_count(form, t) for t in shown["args"]) + max(_count(form, t) for t in shown["got"])
                if form not in GIVEN.get(check, ()) and _count(form, out) > allowed:
                    found.append(form)
    return sorted(set(found))


GIVEN = {
    # what the exercise itself states, so printing it gives nothing away
    ex.check_hello_script: ["'Hello, loop!'", '"Hello, loop!"'],  # "make the model say 'Hello, loop!'"
    ex.check_tool_script: ["'config.py'", '"config.py"', "'Read'"],  # "Read config.py"
    ex.check_settings_hook: ['"Bash"'],  # "a PreToolUse hook on Bash"
    ex.check_cut_recovery: ["64000"],  # "a 64,000 escalation"
    ex.check_where_decided: [repr(phase) for phase in PHASES],  # the phases to choose from
}


@pytest.mark.parametrize("check, solution, wrong", [(c, s, w) for c, s, wrongs in CASES for w, _ in wrongs],
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(WRONG)])
def test_no_message_gives_the_answer_away(check, solution, wrong, capsys):
    check(wrong)
    out = capsys.readouterr().out
    assert out.startswith("❌ ")
    found = _given_away(check, solution, wrong, out)
    capsys.readouterr()
    assert not found, f"{check.__name__} gives away {found} in:\n{out}"


def test_a_model_refused_by_pydantic_is_a_sentence_that_points_at_the_class(capsys):
    """Chapter 03's exercise 2 with ``transition="next_turn"``: no pydantic dump, a pointer at dl.Continue."""
    def next_state_with_a_string(state, messages_for_query, assistant_messages, tool_results):
        return dl.State(messages=(*messages_for_query, *assistant_messages, *tool_results),
                        turn_count=state.turn_count + 1, transition="next_turn")

    assert not ex.check_next_state(next_state_with_a_string)
    out = capsys.readouterr().out
    assert "built a State that pydantic refused: transition got 'next_turn'" in out
    assert "transition takes a dl.Continue, not a str" in out
    assert "errors.pydantic.dev" not in out and "validation error for" not in out


def test_the_rm_guard_is_held_against_every_wrapper_it_knows_bare_and_with_options_both_ways():
    """Chapter 07b: each wrapper the answer key knows is tried bare and with its options, around a recursive rm
    (denied) and around commands that delete nothing recursively (allowed); the key itself agrees."""
    from dreamloop.exercises import ch07

    assert set(ch07._WRAPPER_USES) == set(ch07._WRAPPERS)
    for wrapper, uses in ch07._WRAPPER_USES.items():
        assert any(use and use.startswith("-") for use in uses) or not ch07._WRAPPERS[wrapper] or wrapper == "timeout"
        for use in uses:
            assert ch07._wrapped(wrapper, use, "rm -rf build") in ch07._WRAPPED_DENY
            assert ch07._wrapped(wrapper, use, "ls -R") in ch07._WRAPPED_ALLOW
    for command in [*ch07._DENY, *ch07._WRAPPED_DENY]:
        assert ch07.recursive_rm(command) and solution_recursive_rm(command), command
    for command in [*ch07._ALLOW, *ch07._WRAPPED_ALLOW]:
        assert not ch07.recursive_rm(command) and not solution_recursive_rm(command), command
    # what a learner met (issue 35): a guard the check passed let these through, or denied the last
    for command in ("sudo -u root rm -rf /", "nice -n 5 rm -rf build", "timeout 5 rm -rf x",
                    "find . -print0 | xargs -0 rm -rf", "command rm -rf b"):
        assert ch07.recursive_rm(command), command
    assert not ch07.recursive_rm('echo "x; rm -rf y"')


def test_every_untouched_exercise_message_is_known_so_a_check_shows_it_in_the_learners_language(capsys):
    """The chapters' `raise NotImplementedError("...")` messages are the package's _STUB_MESSAGES: a check
    shows one in the chapter's language (issue 35, item 11: chapter 11's Chinese edition printed them in English)."""
    from dreamloop.exercises._checking import _STUB_MESSAGES

    written = {m.group(2) for path in sorted(NOTEBOOKS.glob("[01][0-9]*_*.ipynb"))
               for cell in json.loads(path.read_text())["cells"] if cell["cell_type"] == "code"
               for m in re.finditer(r'raise NotImplementedError\((["\'])(.*?)\1\)', "".join(cell["source"]))}
    assert written == set(_STUB_MESSAGES)
    assert {stub.__closure__[0].cell_contents for stub in STUBS.values() if callable(stub)} <= set(_STUB_MESSAGES)
    ex.language("zh")
    try:
        ex.check_predict(STUBS[ex.check_predict])
    finally:
        ex.language("en")
    out = capsys.readouterr().out
    assert "Claude Code 在这个场景上的 (requests, ending)" in out and "on this scenario" not in out
