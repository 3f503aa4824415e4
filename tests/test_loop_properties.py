"""A property-based test of the loop under faults (issue 9): generated sessions, invariants after every run.

hypothesis generates sessions: scripts of model turns (text, thinking, several
tool_use calls to known and unknown tools with valid, invalid and non-object
input; tools that run, raise, hang, are slow or say nothing), every ``Fault``
kind, raw SSE streams that are corrupt or shaped like a later API version, content blocks of
types the SDK does not know (alone, beside text and tool_use, in a response cut by max_tokens; streamed or
the streaming fallback's non-streamed answer),
aborts at random event indices, input queued (``QueryEngine.enqueue``) at random events and between prompts,
sessions shaped for compaction (``keep_latest_request`` on or off),
blank and non-blank prompts, and the feature
switches in ``SWITCHES`` (the recovery branches, a fallback model and a token
budget among them). Each session runs through ``QueryEngine`` against
the offline API; ``check`` then lists what broke, by invariant (``INVARIANTS``).

``bench/soak.py`` runs the same generator over many more sessions and counts.
Failing examples hypothesis found are kept below as plain tests.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import os
import tempfile
import threading
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from dreamloop.context import (STAGES, Autocompact, BlockingLimit, ContextCollapse, ContextOptions, Microcompact,
                               Snip, SystemPromptAssembly, ToolResultBudget, is_compaction_request,
                               is_person_request)
from dreamloop.context.autocompact import is_compact_boundary
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.endings import is_interrupted_note
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.fake_api import RawTurn, merge_consecutive, validate_request
from dreamloop.fake_api.replies import turn_message
from dreamloop.fake_api.sse import encode_event, message_events, parse_frames, split_frames
from dreamloop.hooks import Hooks
from dreamloop.messages import (KNOWN_BLOCK_TYPES, AssistantMessage, UnknownContentBlock, normalize_messages_for_api,
                                user_message)
from dreamloop.errors import HookError
from dreamloop.messages import withdrawn
from dreamloop.model import offline
from dreamloop.recovery import RecoveryOptions
from dreamloop.render import SafeConsole, print_trace
from dreamloop.scripts import Fault, Turn, reply
from dreamloop.subagents import SubAgents
from dreamloop.summaries import ToolUseSummaries
from dreamloop.tools import BashTool, EditTool, FileState, GrepTool, ReadTool, ToolResult, WriteTool, tool, tool_schemas
from dreamloop.tools.background import TaskOutputTool, TaskStopTool
from dreamloop.trace import Trace

# ---------------------------------------------------------------------------
# The feature switches. EACH BRANCH ADDS ITS QueryParams SWITCH HERE, as hypothesis should draw it, e.g.
#     "streaming_tool_execution": st.booleans(),
#     "hooks": st.none() | hooks_strategy(),
# Every generated session runs with one draw of this table (a dict of QueryParams overrides).

async def _summary_hangs(uses: Any, results: Any) -> str:
    await asyncio.sleep(3600)  # dropped after the grace (issue 33, item 9), cancelled: nothing outlives the run
    return "never"


async def _summary_quick(uses: Any, results: Any) -> str:
    return "quick summary"


async def _summary_fails(uses: Any, results: Any) -> str:
    raise RuntimeError("summary service down")


_SUMMARIES = {"offline": ToolUseSummaries(grace_s=0.05), "quick": ToolUseSummaries(summarize=_summary_quick),
              "hangs": ToolUseSummaries(summarize=_summary_hangs, grace_s=0.02),
              "fails": ToolUseSummaries(summarize=_summary_fails)}


def _hooks(choice: dict[str, str | None]) -> Hooks | None:
    """Python hooks (command hooks are too slow for 500 sessions; tests/test_hooks_*.py run those), and one cheap
    command hook beside a raising Python hook for the same call (``command+raise``: issue 32's instance, a hook's
    bug while a command hook is being started, must leave nothing running)."""
    hooks = Hooks(max_stop_hook_blocks=2)
    said = {
        "context": {"additional_context": "hook says: note this"},
        "block": {"decision": "block", "reason": "hook says: not this one"},
        "deny": {"decision": "deny", "reason": "hook says: no"},
        "allow": {"decision": "allow"},
        "stop": {"continue_": False, "stop_reason": "hook says: stop"},
    }
    for event, behaviour in choice.items():
        if behaviour == "raise":  # a hook's own bug: HookError propagates; the run still ends in a Terminal
            hooks.add(event, _raising_hook)
        elif behaviour == "command+raise":
            hooks.add(event, "true").add(event, _raising_hook)
        elif behaviour is not None:
            hooks.add(event, lambda input, answer=said[behaviour]: answer)
    return hooks if hooks.entries else None


def _raising_hook(input: Any) -> None:
    raise RuntimeError("a bug in the hook")


HOOKS = st.fixed_dictionaries({
    "user_prompt_submit": st.sampled_from([None, None, "context", "block"]),
    "pre_tool_use": st.sampled_from([None, None, "allow", "deny", "stop", "raise", "command+raise"]),
    "post_tool_use": st.sampled_from([None, None, "context", "block", "stop", "raise", "command+raise"]),
    "stop": st.sampled_from([None, None, "block", "stop", "raise"]),
    # issue 39: a hook's bug in any phase (a stop hook; a pre_compact hook, in an autocompaction or a reactive one)
    "pre_compact": st.sampled_from([None, None, None, "stop", "raise"]),
}).map(_hooks)

def _context(on: dict[str, bool], window: int, caching: bool, commit: int = 0, keep: bool = True) -> ContextOptions:
    """The context pipeline with the drawn stages on, thresholds so low that they act in a short session
    (``commit``: collapse's commit threshold; a high one only stages folds, for a drain to commit; ``keep``:
    ``keep_latest_request``)."""
    stages = {
        "tool_result_budget": ToolResultBudget(max_result_tokens=15, preview_chars=30),
        "snip": Snip(threshold=0, keep_recent=2, max_chars=120, keep_chars=10),
        "microcompact": Microcompact(threshold=0, keep_recent=0, min_savings=0),
        "context_collapse": ContextCollapse(stage_threshold=0, threshold=commit, keep_recent=2, min_pairs=1),
        "system_prompt": SystemPromptAssembly(system_context={"cwd": "/ws"}, user_context={"notes": "be brief"}),
        "autocompact": Autocompact(threshold=window // 3, keep_recent=2, max_failures=2),
        "blocking_limit": BlockingLimit(limit=window),
    }
    return ContextOptions(context_window=window, prompt_caching=caching, keep_latest_request=keep,
                          **{name: stage for name, stage in stages.items() if on[name]})


KEEP_LATEST_REQUEST = st.sampled_from([True, True, True, False])  # mostly on (the default)

CONTEXT = st.builds(_context, st.fixed_dictionaries({name: st.booleans() for name in STAGES}),
                    st.sampled_from([300, 1500, 6000]), st.booleans(), st.sampled_from([0, 10**6]),
                    KEEP_LATEST_REQUEST)

RECOVERY = st.builds(RecoveryOptions, max_output_tokens_escalate=st.booleans(),
                     max_output_tokens_recovery=st.booleans(), max_resumes=st.integers(0, 3),
                     collapse_drain_retry=st.booleans(), reactive_compact_retry=st.booleans(),
                     overloads_before_fallback=st.integers(1, 3),
                     streaming_fallback=st.sampled_from([True, True, False]),  # drawn on twice as often
                     streaming_fallback_max_tokens=st.sampled_from([64_000, 512]),
                     max_tokens_exhausted=st.sampled_from(["completed", "api_error"]),
                     malformed_tool_use_retries=st.integers(0, 2))

# A child gets Read and Grep only (they record no execution: every execution the parent's invariants count is the
# parent's own) and two turns at most.
SUB_AGENTS = SubAgents(types={"general-purpose": ("Read", "Grep"), "Explore": ("Read",)}, max_turns=2)

SWITCHES: dict[str, st.SearchStrategy[Any]] = {
    "max_turns": st.none() | st.integers(min_value=1, max_value=4),
    "hooks": st.none() | HOOKS,
    "streaming_tool_execution": st.booleans(),
    "sibling_rule": st.booleans(),
    "results_as_finished": st.booleans(),
    "context": st.none() | CONTEXT,
    "recovery": st.none() | RECOVERY,
    "fallback_model": st.none() | st.sampled_from(["claude-fallback-1", "claude-sonnet-4-5"]),  # the same offline API
    "token_budget": st.none() | st.integers(min_value=20, max_value=400),
    "max_tokens": st.sampled_from([4096, None]),  # None: each model's own limit (from its information, or:)
    "observed_output_limits": st.booleans(),  # as Claude Code 2.1.332 sent it, capped on a non-streamed retry
    "sub_agents": st.none() | st.just(SUB_AGENTS),  # the Agent tool: a child run per call (its requests take the
    # script's next items, so children meet every fault, abort point and tool the parent does)
    "memory_files": st.booleans(),  # CLAUDE.md with imports (one fine, one missing, a cycle), pkg/CLAUDE.md nested
    "tool_use_summaries": st.none() | st.sampled_from(["offline", "quick", "hangs", "fails"]).map(lambda kind: _SUMMARIES[kind]),
    "file_state": st.none() | st.sampled_from([True, FileState(edit_after_change="refuse")]),  # read before write
    "changed_files": st.booleans(),  # phase 5's change notices (issue 33)
    "background_tasks": st.booleans(),  # Bash's run_in_background; TaskStop; notifications at phase 5 (issue 34)
}

INVARIANTS = (
    "ended_in_terminal",      # every run ended in a Terminal; nothing escaped the loop
    "requests_valid",         # every request the loop sent passed the offline API's validation (scripted faults aside)
    "one_result_per_call",    # each tool_use has exactly one tool_result, first in the next message, in call order
                              # (in any order with results_as_finished)
    "no_tool_ran_twice",      # no tool_use id ran twice; a call with invalid or non-object input never ran
    "every_execution_told",   # every call that ran is in what the model is sent, answered: none it was never told
                              # of, none that ran only because an attempt was asked again (per command)
    "no_empty_block",         # no empty message, no blank text block at any depth, no empty is_error result
    "transcript_reloads",     # load_transcript(file) == the history in memory, and it starts a valid next request;
                              # with one record written twice (a second writer), a resume reads the same history
    "blank_prompt_refused",   # a blank prompt raises ValueError from QueryParams and nothing is sent or recorded
    "turn_count_by_next_turn",  # turn_count grows by one at next_turn and only there; recovery passes keep it
    "recovery_bounded",       # per turn: one escalation, at most max_resumes resumes, one reactive compaction,
                              # never two drains in a row; each model gets overloads_before_fallback attempts
                              # (the streaming fallback's re-asks included)
    "tombstoned_never_sent",  # no request after a tombstone carries the message it withdrew
    "trace_prints_the_same",  # print_trace writes a pipe exactly what rich writes (tabs, controls, wide text, long
                              # lines), and the saved trace, loaded, prints what the run's trace printed
    "blocks_round_trip",      # every content block, known or not, is sent byte-identically after model_dump ->
                              # validate, a transcript reload and resume, a trace save -> load; a block of a type the
                              # SDK does not know is in the history as the API served it, nothing added
    "abort_told_once",        # a run an abort stopped (an interrupted notice; every aborted_* ending) leaves one
                              # note the model reads, after the run's response and results, never withdrawn
    "nothing_outlives_a_run",  # after each run's Terminal no task it started still runs; the session's
                               # asyncio.run returns
    "every_child_ended_in_terminal",  # every sub-agent run an Agent call started has its Terminal when its
                                      # parent's run ends (a Stop, a failing child, the tool time limit included)
    "no_background_process_outlives_its_run",  # after each run's Terminal no background command it started is alive
    "every_notification_delivered_once",  # a run gives each background task's notification at most once; a
                                          # completed run gives one for every command it started
    "every_queued_input_sent_once_in_order",  # each text enqueued is in the history once or still queued (never
                                              # both, never neither); it reaches a request no later than the first
                                              # one after the next prompt; first sent in the order typed
    "latest_request_survives_compaction",  # keep_latest_request on: after each compact boundary the person's newest
                                           # request before it (a prompt or queued input) is kept (first in
                                           # metadata["kept"], or in the kept tail) and the next request the loop
                                           # built (its checkpoint's messages_for_query) carries it, word for word
                                           # as typed, after the summary
)  # fmt: skip

TOOL_TIMEOUT_S = 0.1  # the "hang" tool is stopped by the loop's tool time limit
MAX_RETRIES = 2  # the offline client's (the SDK's default)
MODEL = "claude-scripted-1"


# ---------------------------------------------------------------------------
# Tools: each records the `n` of its input when it starts, so a second run of a call shows


class NInput(BaseModel):
    """``n``: the command (a re-asked response repeats it under a new id); ``call``: the id of the tool_use block
    that carries it (the generator writes it into the input, so a tool counts its executions per tool_use id)."""

    n: int
    call: str = ""


def session_tools(calls: list[tuple[str, int]]) -> list[Any]:
    """probe (fast), slow, hang, boom (raises), quiet (no output), write (runs alone), plus Read and Grep. Each
    records ``(tool_use id, n)`` when it starts: its executions, per tool_use id and per command."""

    @tool(NInput, name="probe", read_only=True)
    async def probe(input: NInput) -> str:
        """Probe."""
        calls.append((input.call, input.n))
        return f"probe {input.n}"

    @tool(NInput, name="slow", read_only=True)
    async def slow(input: NInput) -> str:
        """Slow."""
        calls.append((input.call, input.n))
        await asyncio.sleep(0.002 * (input.n % 5))
        return f"slow {input.n}"

    @tool(NInput, name="hang", read_only=True)
    async def hang(input: NInput) -> str:
        """Hang."""
        calls.append((input.call, input.n))
        await asyncio.sleep(30)
        return "never"

    @tool(NInput, name="boom", read_only=True)
    async def boom(input: NInput) -> str:
        """Raise."""
        calls.append((input.call, input.n))
        raise RuntimeError(f"boom {input.n}")

    @tool(NInput, name="quiet", read_only=True)
    async def quiet(input: NInput) -> ToolResult:
        """Say nothing."""
        calls.append((input.call, input.n))
        content = ["", " ", [], [{"type": "text", "text": ""}]][input.n % 4]
        return ToolResult(content, is_error=input.n % 2 == 1)

    @tool(NInput, name="write")
    async def write(input: NInput) -> str:
        """Write (not concurrency-safe)."""
        calls.append((input.call, input.n))
        return f"wrote {input.n}"

    return [probe, slow, hang, boom, quiet, write, ReadTool(), GrepTool(), WriteTool(), EditTool(), BashTool(),
            TaskOutputTool(), TaskStopTool()]


TOOL_NAMES = ["probe", "slow", "hang", "boom", "quiet", "write"]
BUILTIN_INPUTS = {"Read": {"file_path": "notes.txt"}, "Grep": {"pattern": r"VALUE(?= =)"},
                  # issue 33: Write and Edit of the file Read reads (file_state refuses them unread or changed;
                  # changed_files tells of a change they did not make)
                  "Write": {"file_path": "notes.txt", "content": "VALUE = 2\nVALUE_2 = 3\n"},
                  "Edit": {"file_path": "notes.txt", "old_string": "VALUE_2 = 3", "new_string": "VALUE_2 = 4"},
                  "TaskStop": {"task_id": "bash_1"}, "TaskOutput": {"task_id": "bash_2"}}
BACKGROUND = "echo $$ >> bg.pids; sleep {}"  # each background command notes its pid first (no_background_process_...)


# ---------------------------------------------------------------------------
# Strategies

TEXTS = st.sampled_from(["", " ", "\n", "Looking.", "Done: the value is 2.", "x" * 80,
                         "line\u2028separators\u2029and\u0085NEL",  # Node writes these raw: a line is split on \n only
                         "tab\there, ESC \x1b[2J BEL \x07 CR \r, wide 漢字 " + "and a long line " * 6])  # printed


@st.composite
def tool_use_blocks(draw: Any, counter: Any) -> dict[str, Any]:
    n = next(counter)
    name = draw(st.sampled_from([*TOOL_NAMES, *TOOL_NAMES, "Read", "Grep", "Write", "Edit", "nope", "Agent", "Bash",
                                 "TaskStop", "TaskOutput"]))
    shape = draw(st.sampled_from(["valid"] * 5 + ["invalid", "non_object"]))
    if name == "Agent" and shape == "valid":
        value: Any = draw(AGENT_INPUTS)
    elif shape == "valid" and name == "Bash":  # a background command: ends at once, soon, or outlasts the run
        value = {"command": BACKGROUND.format(draw(st.sampled_from(["0", "0.02", "0.05", "30"]))),
                 "run_in_background": True}
    elif shape == "valid":
        value = BUILTIN_INPUTS.get(name, {"n": n, "call": f"toolu_g{n:04d}"})
        if name == "Read":  # pkg/ has a nested memory file (issue 33): its first Read there carries it
            value = {"file_path": draw(st.sampled_from(["notes.txt", "notes.txt", "pkg/notes.txt"]))}
    elif shape == "invalid":
        value = {"m": n}
    else:
        value = draw(st.sampled_from([[n], n, "text", None, True]))
    return {"type": "tool_use", "id": f"toolu_g{n:04d}", "name": name, "input": value}


AGENT_INPUTS = st.sampled_from([  # an Agent call: a child that runs (of each type), and the calls refused by name
    {"description": "look", "prompt": "read notes.txt and say the value"},
    {"description": "look", "prompt": "grep VALUE", "subagent_type": "Explore"},
    {"description": "look", "prompt": "read notes.txt", "model": "haiku"},
    {"description": "look", "prompt": "  "},
    {"description": "look", "prompt": "x", "subagent_type": "nobody"},
    {"description": "look", "prompt": "x", "model": "fable"},
    {"description": "look", "prompt": "x", "run_in_background": True},
    {"description": "look"},
])


def content_blocks(counter: Any) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        TEXTS.map(lambda t: {"type": "text", "text": t}),
        st.sampled_from(["Plan: look first.", "Think."]).map(lambda t: {"type": "thinking", "thinking": t}),
        tool_use_blocks(counter),
        tool_use_blocks(counter),
    )


FAULTS = st.one_of(
    st.builds(Fault, kind=st.just("http_error"), status=st.sampled_from([429, 500, 529]), retry_after_ms=st.just(1)),
    st.builds(Fault, kind=st.just("stream_error"), after_events=st.integers(0, 14),
              error_type=st.sampled_from(["overloaded_error", "api_error"])),
    st.builds(Fault, kind=st.just("disconnect"), after_events=st.integers(0, 14)),
    st.builds(Fault, kind=st.just("max_tokens_cut")),
    st.builds(Fault, kind=st.just("prompt_too_long"), status=st.just(400)),
)


@st.composite
def model_turns(draw: Any, counter: Any, faults: bool = True) -> Turn:
    blocks = draw(st.lists(content_blocks(counter), max_size=4))
    calls = [b for b in blocks if b["type"] == "tool_use"]
    if calls and draw(st.integers(0, 9)) == 0:  # a model or proxy repeats a tool_use id in one response
        blocks.insert(draw(st.integers(0, len(blocks))), {**draw(st.sampled_from(calls))})
    stop = draw(st.sampled_from(["auto"] * 8 + ["end_turn", "tool_use", "max_tokens", None, "some_future_reason"]))
    fault = draw(st.one_of(*[st.none()] * 5, FAULTS)) if faults else None
    return Turn(content=blocks, stop_reason=stop, chunk_size=draw(st.integers(1, 24)), fault=fault)


@st.composite
def recovery_turns(draw: Any, counter: Any) -> Turn:
    """What the recovery branches act on: a response cut at max_tokens that asks for no tool (text, maybe
    signed thinking), an overload (in a 200 stream after some text, or HTTP 529), a prompt that is too long,
    a stream that breaks part-way (the streaming fallback: an error event or a dropped connection before any
    block finished, inside a tool_use after a finished text, or after a finished tool_use)."""
    kind = draw(st.sampled_from(["cut", "cut", "overloaded", "overloaded", "529", "too_long", "broken", "broken"]))
    n = next(counter)
    if kind == "cut":
        blocks = [{"type": "thinking", "thinking": f"Plan {n}."}] if draw(st.booleans()) else []
        return Turn(content=[*blocks, {"type": "text", "text": f"Part {n} of a long answer"}], stop_reason="max_tokens",
                    chunk_size=draw(st.integers(2, 24)))
    if kind == "overloaded":
        fault = Fault(kind="stream_error", after_events=draw(st.integers(2, 10)), error_type="overloaded_error")
        return Turn(content=[{"type": "text", "text": f"Sure, {n}"}, *draw(st.lists(tool_use_blocks(counter),
                                                                                      max_size=1))], fault=fault)
    if kind == "529":
        return Turn(fault=Fault(kind="http_error", status=529, retry_after_ms=1))
    if kind == "broken":
        blocks = [{"type": "text", "text": f"Looking into it, {n}."}, *draw(st.lists(tool_use_blocks(counter),
                                                                                     min_size=1, max_size=2))]
        where = draw(st.sampled_from(["before", "inside", "after"]))
        after = (_events_into(blocks, 0, 1) if where == "before" else _events_into(blocks, 1, 1) if where == "inside"
                 else _events_through(blocks, 1))
        fault = draw(st.sampled_from(["stream_error", "stream_error", "disconnect"]))
        return Turn(content=blocks, fault=Fault(
            kind=fault, after_events=after, **({"error_type": draw(st.sampled_from(["overloaded_error", "api_error"]))}
                                               if fault == "stream_error" else {})))
    return Turn(fault=Fault(kind="prompt_too_long", status=400))


@st.composite
def withdraw_turns(draw: Any, counter: Any) -> tuple[Turn, Turn]:
    """Every path on which a failed attempt may be withdrawn and asked again (issue 32), then the answer to the
    same request: the same blocks, each call under a new id (a model asked again repeats its command).

    The failure: an error event (overloaded or not), a dropped connection, an HTTP 529; where it strikes: inside
    the first text, inside a tool_use's JSON, right after a complete tool_use, or inside a text after the calls,
    the stream paced so that streaming tool execution has started them ("started"). With the streaming fallback,
    an overload's retry or the fallback model, the loop decides; a call that started must run once and be told."""
    n = next(counter)
    calls = draw(st.lists(tool_use_blocks(counter), min_size=1, max_size=2))
    where = draw(st.sampled_from(["before", "inside", "after", "started", "started"]))
    blocks = [{"type": "text", "text": f"Looking into it, {n}."}, *calls]
    if where == "started":
        blocks.append({"type": "text", "text": "and then some more words to say about it " * 2})
    kind = draw(st.sampled_from(["stream_error", "disconnect", "http_error"]))
    if kind == "http_error":
        broken = Turn(fault=Fault(kind="http_error", status=529, retry_after_ms=1))
    else:
        after = {"before": lambda: _events_into(blocks, 0, 1), "inside": lambda: _events_into(blocks, 1, 1),
                 "after": lambda: _events_through(blocks, len(calls)),
                 "started": lambda: _events_into(blocks, len(blocks) - 1, 2)}[where]()
        error = ({"error_type": draw(st.sampled_from(["overloaded_error", "api_error"]))} if kind == "stream_error"
                 else {})
        broken = Turn(content=blocks, tokens_per_second=2000 if where == "started" else None,
                      fault=Fault(kind=kind, after_events=after, **error))

    def again(block: dict[str, Any]) -> dict[str, Any]:
        if block["type"] != "tool_use":
            return block
        new_id = block["id"].replace("toolu_g", "toolu_r")
        value = block["input"]
        return {**block, "id": new_id, "input": {**value, "call": new_id} if isinstance(value, dict) and "call" in value
                else value}

    return broken, Turn(content=[again(b) for b in blocks])


def _flat(items: list[Any]) -> list[Any]:
    """A script from drawn items, a pair of turns (``withdraw_turns``; ``unknown_block_turns``: one or two) counting
    as two."""
    return [turn for item in items for turn in (item if isinstance(item, (tuple, list)) else (item,))]


def _events_into(blocks: list[dict[str, Any]], block: int, deltas: int) -> int:
    from dreamloop.compare.scenarios import events_into, events_through

    try:
        return events_into(blocks, block, deltas)
    except ValueError:  # a block with no delta (an empty input): strike right after the block before it
        return events_through(blocks, block - 1) if block else 1


def _events_through(blocks: list[dict[str, Any]], block: int) -> int:
    from dreamloop.compare.scenarios import events_through

    return events_through(blocks, block)


UNKNOWN_BLOCKS = st.sampled_from([  # content blocks of types this SDK does not know (a newer API's)
    {"type": "future_block", "payload": {"x": [1, None]}},
    {"payload": {"nested": {"deep": [None, "v"]}}, "type": "future_block", "note": None},  # type not first; a null
    {"type": "future_quote", "text": "said", "citations": [{"kind": "page", "n": 3}]},  # a text block's field names
    {"type": "future_call", "id": "fut_1", "name": "later", "input": {"a": None}},  # a tool_use's: never run
    {"type": "future_empty"},
])


@st.composite
def unknown_block_turns(draw: Any, counter: Any) -> list[Turn]:
    """Blocks of types the SDK does not know: alone, beside text and a tool_use (in any order), in a response
    cut by max_tokens (inside the tool_use's JSON, or a text answer cut); streamed, or, after a stream that broke
    before any block finished, the streaming fallback's non-streamed answer (the SDK's own parser reads that one)."""
    n = next(counter)
    unknown = draw(st.lists(UNKNOWN_BLOCKS, min_size=1, max_size=2))
    shape = draw(st.sampled_from(["alone", "beside", "cut_in_tool_use", "cut_text"]))
    if shape == "alone":
        turn = Turn(content=unknown)
    elif shape == "cut_text":
        turn = Turn(content=[*unknown, {"type": "text", "text": f"Part {n} of a long answer"}],
                    stop_reason="max_tokens")
    else:
        blocks = draw(st.permutations([{"type": "text", "text": f"Meanwhile {n}."}, draw(tool_use_blocks(counter)),
                                       *unknown]))
        turn = Turn(content=blocks, fault=Fault(kind="max_tokens_cut") if shape == "cut_in_tool_use" else None)
    turn = turn.model_copy(update={"chunk_size": draw(st.integers(1, 24))})
    if draw(st.booleans()):
        broken = Turn(content=[{"type": "text", "text": f"Starting {n}."}],
                      fault=Fault(kind="stream_error", after_events=1, error_type="overloaded_error"))
        return [broken, turn]
    return [turn]


def _insert(events: list[Any], at: int, *new: Any) -> list[Any]:
    at = max(1, min(at, len(events)))
    return events[:at] + list(new) + events[at:]


MUTATIONS = {
    "none": lambda ev, i: ev,
    "drop_message_start": lambda ev, i: ev[1:],
    "delta_for_a_block_never_started": lambda ev, i: _insert(
        ev, i, {"type": "content_block_delta", "index": 99, "delta": {"type": "text_delta", "text": "x"}}),
    "stop_for_a_block_never_started": lambda ev, i: _insert(ev, i, {"type": "content_block_stop", "index": 98}),
    "frame_not_json": lambda ev, i: _insert(ev, i, "event: content_block_delta\ndata: {oops\n\n"),
    "event_not_an_object": lambda ev, i: _insert(ev, i, "event: content_block_delta\ndata: [1, 2]\n\n"),
    "future_event": lambda ev, i: _insert(ev, i, {"type": "future_event", "data": {"x": 1}}),
    "future_block": lambda ev, i: _insert(
        ev, len(ev) - 2 if len(ev) > 2 else 1,
        {"type": "content_block_start", "index": 50, "content_block": {"type": "future_block", "data": [1, None]}},
        {"type": "content_block_stop", "index": 50}),
    "future_delta": lambda ev, i: _future_delta(ev),
    "future_stop_reason": lambda ev, i: [
        {**e, "delta": {**e["delta"], "stop_reason": "some_future_reason"}} if isinstance(e, dict)
        and e.get("type") == "message_delta" else e for e in ev],
    "truncated": lambda ev, i: ev[: max(1, i)],
    "second_message_start": lambda ev, i: _insert(ev, i, ev[0]),
}


def _future_delta(events: list[Any]) -> list[Any]:
    for at, event in enumerate(events):
        if isinstance(event, dict) and event.get("type") == "content_block_start":
            future = {"type": "content_block_delta", "index": event["index"], "delta": {"type": "future_delta", "y": 2}}
            return _insert(events, at + 1, future)
    return events


@st.composite
def raw_turns(draw: Any, counter: Any) -> RawTurn:
    """A turn served as raw SSE, corrupt as a stream or shaped like a later API version."""
    turn = draw(model_turns(counter, faults=False))
    message = turn_message(turn, message_id=f"msg_raw_{next(counter)}", model=MODEL,
                           new_tool_id=lambda: f"toolu_raw_{next(counter)}", input_tokens=12)
    events: list[Any] = message_events(message, chunk_size=turn.chunk_size)
    mutation = draw(st.sampled_from(["none"] * 3 + sorted(MUTATIONS)))
    events = MUTATIONS[mutation](events, draw(st.integers(0, max(len(events) - 1, 0))))
    sse = "".join(e if isinstance(e, str) else encode_event(e).decode("utf-8") for e in events)
    return RawTurn(sse=sse, source=mutation)


ABORT_POINTS = ["stream_request_start", "stream_event", "assistant", "progress", "progress", "user", "system"]
ABORT_WHILE = ["system:api_retry", "system:api_retry", "system:streaming_fallback", "system:model_fallback",
               "request", "request", "request:compact", "hook:stop", "hook:stop", "hook:pre_compact"]
"""Abort points that no event marks (issue 32): while the loop waits to ask again (the Stop lands as the person
reads the retry's notice), while a request is in flight (the k-th request to the offline API fires the signal; a
compaction's summarising request, auto or reactive, with ``request:compact``), while the stop hooks or the
pre_compact hooks run (a hook fires the signal and waits)."""


def abort_points() -> st.SearchStrategy[tuple[str, int] | None]:
    """Where a session aborts: nowhere, the k-th event, the k-th event of a type, or ``ABORT_WHILE`` (drawn twice)."""
    return st.one_of(st.none(), st.tuples(st.just("any"), st.integers(0, 60)),
                     st.tuples(st.sampled_from(ABORT_POINTS), st.integers(0, 3)),
                     *[st.tuples(st.sampled_from(ABORT_WHILE), st.sampled_from([0, 0, 1]))] * 2)


def _reaching(draw: Any, counter: Any, script: list[Any], switches: dict[str, Any],
              abort_at: tuple[str, int] | None) -> tuple[list[Any], dict[str, Any]]:
    """The script and switches of a session whose abort point is one no event marks, so that the point is reached.

    A compaction's (``request:compact``, ``hook:pre_compact``): a pipeline whose autocompaction acts at once (a
    300-token window, threshold 1, one message kept), reactive compaction one time in two, and two tool turns first
    (a head to summarise). A retry's or a fallback's (``system:...``): overloads first (three HTTP 529s) and a
    withdrawn attempt (``withdraw_turns``), with the streaming fallback on and, for ``system:model_fallback``, a
    fallback model."""
    kind = abort_at[0] if abort_at else ""
    recovery = switches.get("recovery") or RecoveryOptions()
    if kind in ("request:compact", "hook:pre_compact"):
        stages = draw(st.fixed_dictionaries({name: st.booleans() for name in STAGES}))
        context = _context({**stages, "autocompact": True}, 300, draw(st.booleans()), keep=draw(KEEP_LATEST_REQUEST))
        context = context.model_copy(update={"autocompact": Autocompact(threshold=1, keep_recent=1, max_failures=2)})
        tools = [Turn(content=draw(st.lists(tool_use_blocks(counter), min_size=1, max_size=2))) for _ in range(2)]
        return [*tools, *script], {**switches, "context": context, "max_turns": None, "recovery": recovery.model_copy(
            update={"reactive_compact_retry": draw(st.booleans())})}
    if kind.startswith("system:"):
        overloads = [Turn(fault=Fault(kind="http_error", status=529, retry_after_ms=1))] * 3
        fallback = "claude-fallback-1" if kind == "system:model_fallback" else switches.get("fallback_model")
        return [*overloads, *draw(withdraw_turns(counter)), *script], {
            **switches, "fallback_model": fallback, "recovery": recovery.model_copy(update={"streaming_fallback": True})}
    return script, switches


@dataclass
class Session:
    """One generated session: the model's script, the prompts, where to abort, the switches.

    ``abort_at``: ``(event type, k)`` aborts at the k-th event of that type
    (``"any"``: the k-th event of the session; ``"system:SUBTYPE"``: of such notices), at the k-th request
    (``"request"``, ``"request:compact"``) or the k-th run of a hook event (``"hook:stop"``, ``"hook:pre_compact"``),
    or None. ``copied_line``: after the session, a copy of
    its transcript with that record (modulo their number) written twice must resume to the same history.
    ``queued_at``: where a text is typed into the queue (``QueryEngine.enqueue``), in order: ``("event", k)`` at
    the k-th event of the session (counted as ``"any"`` is), ``("prompt", i)`` just before prompt i is submitted.
    ``summaries``: None, the script answers every request in order (a summarising one too); else the summarising
    requests take these in order (then a plain summary), and the script answers the loop's requests only.
    """

    script: list[Any]
    prompts: list[str]
    abort_at: tuple[str, int] | None
    switches: dict[str, Any]
    copied_line: int | None = None
    queued_at: tuple[tuple[str, int], ...] = ()
    summaries: list[Any] | None = None


def queue_points() -> st.SearchStrategy[tuple[tuple[str, int], ...]]:
    """Where a session types into the queue: mostly nowhere; else up to four points, at events or before prompts."""
    point = st.one_of(st.tuples(st.just("event"), st.integers(0, 60)), st.tuples(st.just("prompt"), st.integers(0, 2)))
    return st.one_of(st.just(()), st.lists(point, min_size=1, max_size=4).map(tuple))


def queued_text(number: int) -> str:
    """The ``number``-th text a session queues (a token no script, tool or summary writes)."""
    return f"<queued {number}>"


@st.composite
def drain_sessions(draw: Any) -> Session:
    """A session shaped for the collapse drain, which plain draws almost never reach (0 in 10,000): a few tool
    turns (so context collapse stages folds, and never commits them: a high threshold), then 'prompt is too
    long' with the drain on; the other stages, switches and the rest of the script drawn as usual."""
    counter = itertools.count(1)
    tools = [Turn(content=draw(st.lists(tool_use_blocks(counter), min_size=1, max_size=2)))
             for _ in range(draw(st.integers(3, 4)))]
    rest = draw(st.lists(st.one_of(model_turns(counter), recovery_turns(counter)), max_size=2))
    stages = draw(st.fixed_dictionaries({name: st.booleans() for name in STAGES}))
    switches = draw(st.fixed_dictionaries(SWITCHES))
    switches["context"] = _context({**stages, "context_collapse": True}, draw(st.sampled_from([1500, 6000])),
                                   draw(st.booleans()), commit=10**6, keep=draw(KEEP_LATEST_REQUEST))
    switches["recovery"] = draw(RECOVERY).model_copy(update={"collapse_drain_retry": True})
    switches["max_turns"] = None  # a low max_turns would end the run before the drain
    return Session(script=[*tools, Turn(fault=Fault(kind="prompt_too_long", status=400)), *rest], prompts=["go"],
                   abort_at=draw(abort_points()), switches=switches)


@st.composite
def withdraw_sessions(draw: Any) -> Session:
    """A session shaped for issue 32's paths, which plain draws reach a few times in a thousand: streaming tool
    execution on, the streaming fallback on (a fallback model one time in two), and one or two failed attempts
    (``withdraw_turns``) first, so that a call has often started when its attempt fails."""
    counter = itertools.count(1)
    pairs = _flat(draw(st.lists(withdraw_turns(counter), min_size=1, max_size=2)))
    rest = draw(st.lists(st.one_of(model_turns(counter), recovery_turns(counter)), max_size=2))
    switches = draw(st.fixed_dictionaries(SWITCHES))
    recovery = (switches.get("recovery") or draw(RECOVERY)).model_copy(update={"streaming_fallback": True})
    switches.update(streaming_tool_execution=True, recovery=recovery, max_turns=None,
                    fallback_model=draw(st.sampled_from([None, "claude-fallback-1"])))
    return Session(script=[*pairs, *rest], prompts=draw(st.lists(st.sampled_from(["go", "again"]), min_size=1,
                                                                  max_size=2)),
                   abort_at=draw(abort_points()), switches=switches)


@st.composite
def sub_agent_sessions(draw: Any) -> Session:
    """A session shaped for sub-agents, which plain draws reach rarely: ``sub_agents`` on, a response with one or
    two ``Agent`` calls first (the children's requests take the script's next items: faults, aborts, calls of
    their own, Agent among them), then the rest drawn as usual."""
    counter = itertools.count(1)
    calls = [{"type": "tool_use", "id": f"toolu_a{next(counter):04d}", "name": "Agent", "input": draw(AGENT_INPUTS)}
             for _ in range(draw(st.integers(1, 2)))]
    rest = _flat(draw(st.lists(st.one_of(model_turns(counter), recovery_turns(counter)), min_size=1, max_size=5)))
    switches = {**draw(st.fixed_dictionaries(SWITCHES)), "sub_agents": SUB_AGENTS}
    return Session(script=[Turn(content=calls), *rest], prompts=["go"], abort_at=draw(abort_points()),
                   switches=switches)


PROMPTS = st.sampled_from(["go", "read notes.txt and probe it", "again", "go on", "probe twice", "next",
                           "finish", "check", "", "   "])  # one in five blank


LONG_PROMPT = "please probe the notes file carefully and then " * 4  # 188 characters: over Snip.max_chars (120)
COMPACT_PROMPTS = st.one_of(*[PROMPTS] * 3, st.just(LONG_PROMPT.strip()))
"""A compact session's prompts: one in four long enough for snip to trim, unless it is the latest request."""

SUMMARY = "Primary request: probe and read notes.txt; pending: the next step."  # the same in every session
SUMMARIES = st.lists(st.one_of(*[st.just(reply(SUMMARY))] * 4, st.builds(Turn, fault=FAULTS),
                               st.just(Turn(content=[{"type": "text", "text": " "}]))), max_size=3)
"""What a compact session's summarising requests get: mostly a summary, sometimes a fault or a blank answer."""


@st.composite
def compact_sessions(draw: Any) -> Session:
    """A session shaped for compaction (``latest_request_survives_compaction``), which plain draws reach about once
    in a hundred: autocompact on at once (threshold 1, one to three messages kept; the other stages drawn, a window
    the blocking limit lets through), one or two tool turns first (a head to summarise), then the rest drawn as
    usual (``prompt_too_long`` among them, reactive compaction on one time in two), one to three prompts (one in
    four long enough for snip to trim), input queued at events and between prompts, ``keep_latest_request`` drawn
    (mostly on). Its summarising requests are answered apart (``SUMMARIES``: a summary, a fault, a blank answer),
    so the tool turns reach the loop."""
    counter = itertools.count(1)
    tools = [Turn(content=draw(st.lists(tool_use_blocks(counter), min_size=1, max_size=2)))
             for _ in range(draw(st.integers(1, 2)))]
    rest = _flat(draw(st.lists(st.one_of(model_turns(counter), model_turns(counter), recovery_turns(counter)),
                               max_size=4)))
    stages = draw(st.fixed_dictionaries({name: st.booleans() for name in STAGES}))
    context = _context({**stages, "autocompact": True}, draw(st.sampled_from([6000, 20000])), draw(st.booleans()),
                       keep=draw(KEEP_LATEST_REQUEST))
    context = context.model_copy(update={"autocompact": Autocompact(threshold=1, keep_recent=draw(st.integers(1, 3)),
                                                                    max_failures=2)})
    switches = draw(st.fixed_dictionaries(SWITCHES))
    recovery = (switches.get("recovery") or draw(RECOVERY)).model_copy(
        update={"reactive_compact_retry": draw(st.booleans())})
    switches.update(context=context, recovery=recovery, max_turns=None)
    return Session(script=[*tools, *rest], prompts=draw(st.lists(COMPACT_PROMPTS, min_size=1, max_size=3)),
                   abort_at=draw(abort_points()), switches=switches, queued_at=draw(queue_points()),
                   summaries=draw(SUMMARIES))


@st.composite
def sessions(draw: Any) -> Session:
    if draw(st.integers(0, 7)) == 0:  # one in eight: a session shaped for sub-agent calls
        return draw(sub_agent_sessions())
    if draw(st.integers(0, 4)) == 0:  # one in five: a session shaped for compaction
        return draw(compact_sessions())
    if draw(st.integers(0, 19)) == 0:  # one in twenty: a session shaped for the collapse drain
        return draw(drain_sessions())
    if draw(st.integers(0, 9)) == 0:  # one in ten: a session shaped for a failed attempt whose call started
        return draw(withdraw_sessions())
    counter = itertools.count(1)
    item = st.one_of(*[model_turns(counter)] * 5, raw_turns(counter), *[recovery_turns(counter)] * 2,
                     *[withdraw_turns(counter)] * 2, unknown_block_turns(counter))
    script = _flat(draw(st.lists(item, min_size=1, max_size=6)))
    prompts = draw(st.lists(PROMPTS, min_size=1, max_size=3))
    abort_at = draw(abort_points())
    script, switches = _reaching(draw, counter, script, draw(st.fixed_dictionaries(SWITCHES)), abort_at)
    return Session(script=script, prompts=prompts, abort_at=abort_at, switches=switches,
                   copied_line=draw(st.none() | st.integers(0, 40)), queued_at=draw(queue_points()))


# ---------------------------------------------------------------------------
# Running a session


@dataclass
class Outcome:
    """What one session did and what it left, for ``check``."""

    session: Session
    engine: QueryEngine | None = None
    api: Any = None
    calls: list[tuple[str, int]] = field(default_factory=list)  # (tool_use id, n) of each execution
    terminals: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # exceptions that escaped the loop
    blank: list[str] = field(default_factory=list)  # per blank prompt: "" if refused right, else what happened
    aborted: bool = False
    blocked: int = 0  # prompts a hook blocked (no run)
    transcript: Path | None = None
    tools: list[Any] = field(default_factory=list)
    traces: list[Any] = field(default_factory=list)  # each run's Trace
    runs: list[Any] = field(default_factory=list)  # each run (QueryRun) that ended in a Terminal
    left: list[list[str]] = field(default_factory=list)  # per run: the tasks still running after its Terminal
    pids_left: list[list[int]] = field(default_factory=list)  # per run: its background commands still alive
    cut_short: bool = False  # asyncio.run around the session raised, or did not return
    queued: list[tuple[str, int, int]] = field(default_factory=list)  # per enqueue: (text, requests made before
    # it, the number of the next prompt)
    submits: list[int] = field(default_factory=list)  # per prompt submitted: requests made before it


def _script_policy(script: list[Any], on_request: Any = None, summaries: list[Any] | None = None) -> Any:
    loop, said = itertools.count(), itertools.count()

    def policy(body: dict[str, Any], index: int) -> Any:
        if on_request is not None:
            on_request(body, index)
        if summaries is not None and is_compaction_request(body):
            k = next(said)
            return summaries[k] if k < len(summaries) else reply(SUMMARY)
        at = next(loop) if summaries is not None else index
        return script[at] if at < len(script) else reply("That is all.")
    return policy



def _aborter(session: Session, outcome: Outcome) -> tuple[Any, Any]:
    """For the abort points no event marks: ``(on_request, hook)``. ``on_request(body, index)`` fires the running
    run's abort signal at the request ``session.abort_at`` names; ``hook`` (or None) is an async hook for the event
    it names that fires it at its k-th run and waits, so the Stop lands while the hooks run."""
    kind, at = session.abort_at or ("", -1)
    compactions = itertools.count()

    def fire() -> None:
        running = outcome.engine.last_run if outcome.engine else None
        if running is not None and not running.done:
            running.abort()
            outcome.aborted = True

    def on_request(body: dict[str, Any], index: int) -> None:
        if kind == "request" and index == at or kind == "request:compact" and is_compaction_request(body) \
                and next(compactions) == at:
            fire()

    runs = itertools.count()

    async def hook(input: Any) -> None:
        if next(runs) == at:
            fire()
            await asyncio.sleep(0.05)  # the Stop lands while this hook runs

    return on_request, (hook if kind.startswith("hook:") else None)


def _with_hook(switches: dict[str, Any], event: str, hook: Any) -> dict[str, Any]:
    hooks = switches.get("hooks") or Hooks(max_stop_hook_blocks=2)  # a drawn Hooks is the session's own
    return {**switches, "hooks": hooks.add(event, hook)}


def _tasks_left(baseline: set[Any]) -> list[str]:
    """The tasks started since ``baseline`` that still run (issue 32: none may outlive a run's Terminal)."""
    return sorted(task.get_name() + ": " + getattr(task.get_coro(), "__qualname__", "?")
                  for task in asyncio.all_tasks() - baseline if not task.done())


async def run_session(session: Session, workdir: Path) -> Outcome:
    """Run ``session`` through ``QueryEngine`` in ``workdir`` (a fresh directory); never raises."""
    (workdir / "notes.txt").write_text("VALUE = 1\nVALUE_2 = 3\n")
    (workdir / "pkg").mkdir(exist_ok=True)
    (workdir / "pkg" / "notes.txt").write_text("VALUE = 5\n")
    (workdir / "CLAUDE.md").write_text("Be brief.\n@style.md\n@missing.md\n")  # read only with memory_files on
    (workdir / "style.md").write_text("Use tabs.\n@CLAUDE.md\n")  # a cycle back
    (workdir / "pkg" / "CLAUDE.md").write_text("pkg: snake_case.\n@../style.md\n")
    outcome = Outcome(session, transcript=workdir / "session.jsonl")
    on_request, abort_hook = _aborter(session, outcome)
    model = offline(_script_policy(session.script, on_request, session.summaries), model=MODEL,
                    keep_bodies=None)  # every body checked
    outcome.api = model.api
    outcome.tools = session_tools(outcome.calls)
    switches = session.switches if abort_hook is None else _with_hook(session.switches, session.abort_at[0][5:],
                                                                       abort_hook)
    engine = outcome.engine = QueryEngine(
        model=model, tools=outcome.tools, workspace=workdir, permission_mode="bypass", transcript=outcome.transcript,
        tool_timeout_s=TOOL_TIMEOUT_S, deps=QueryDeps(uuid=counting_uuids()), **switches)
    seen: Counter[str] = Counter()
    baseline = asyncio.all_tasks()

    def enqueue(next_prompt: int) -> None:
        text = queued_text(len(outcome.queued) + 1)
        outcome.queued.append((text, len(model.api.requests), next_prompt))
        engine.enqueue(text)

    for number, prompt in enumerate(session.prompts):
        for _ in range(session.queued_at.count(("prompt", number))):
            enqueue(number)
        sent_before, kept_before = len(model.api.requests), list(engine.messages)
        outcome.submits.append(sent_before)
        try:
            async for event in engine.submit_message(prompt):
                for _ in range(session.queued_at.count(("event", seen["any"]))):
                    enqueue(number + 1)
                for kind in ("any", event.type, *([f"system:{event.subtype}"] if event.type == "system" else [])):
                    running = engine.last_run  # None, or done, while prompt hooks run: nothing to stop yet
                    if (kind, seen[kind]) == session.abort_at and running is not None and not running.done:
                        running.abort()
                        outcome.aborted = True
                    seen[kind] += 1
        except HookError:  # documented: a Python hook's bug propagates, after the run ended in a Terminal
            if engine.terminal is None:
                outcome.errors.append("HookError escaped without a Terminal")
            else:
                outcome.terminals.append(engine.terminal)
                outcome.traces.append(engine.last_run.trace)
                outcome.runs.append(engine.last_run)
                outcome.left.append(_tasks_left(baseline))
            continue
        except ValueError as error:
            if prompt.strip():
                outcome.errors.append(f"{type(error).__name__}: {error}")
            else:
                unchanged = len(model.api.requests) == sent_before and engine.messages == kept_before
                outcome.blank.append("" if "prompt is blank" in str(error) and unchanged else f"refused badly: {error}")
            continue
        except Exception as error:  # noqa: BLE001  (a property test reports what escaped, it does not hide it)
            outcome.errors.append(f"{type(error).__name__}: {error}")
            continue
        if not prompt.strip():
            outcome.blank.append("a blank prompt was not refused")
        if engine.last_run is None:  # a user_prompt_submit hook blocked it: no run, no Terminal
            outcome.blocked += 1
            continue
        outcome.terminals.append(engine.terminal)
        outcome.traces.append(engine.last_run.trace)
        outcome.runs.append(engine.last_run)
        outcome.left.append(_tasks_left(baseline))
        outcome.pids_left.append(_background_left(workdir))
    return outcome


def _background_left(workdir: Path) -> list[int]:
    """The background commands' pids (``bg.pids``, emptied) still alive after a run."""
    file = workdir / "bg.pids"
    pids = [int(word) for word in file.read_text().split()] if file.exists() else []
    file.unlink(missing_ok=True)
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


def _notified(run: Any) -> list[str]:
    """One run's broken ``every_notification_delivered_once``."""
    added = run.messages[len(run.params.messages):]
    ids = [m.attachment["task_id"] for m in added if getattr(m, "type", None) == "attachment"
           and m.attachment.get("type") == "task_notification"]
    found = [f"{task_id} notified {ids.count(task_id)} times" for task_id in sorted(set(ids)) if ids.count(task_id) > 1]
    background = run.iteration.state.tool_use_context.background if run.iteration is not None else None
    # every task it started: commands and background sub-agents (Agent with run_in_background), each notified once
    started = background._count + len(background._agents) if background is not None else 0
    if run.terminal.reason == "completed" and len(set(ids)) != started:
        found.append(f"a completed run started {started} background task(s) and notified {len(set(ids))}")
    return found


# ---------------------------------------------------------------------------
# The invariants


def check(outcome: Outcome) -> list[tuple[str, str]]:
    """Every broken invariant of a finished session as ``(invariant, what)``; empty if all held."""
    found: list[tuple[str, str]] = []
    engine, api = outcome.engine, outcome.api
    non_blank = [p for p in outcome.session.prompts if p.strip()]
    for error in outcome.errors:
        found.append(("ended_in_terminal", error))
    if len(outcome.terminals) != len(non_blank) - len(outcome.errors) - outcome.blocked or None in outcome.terminals:
        found.append(("ended_in_terminal", f"terminals {outcome.terminals} for prompts {non_blank}"))
    for problem in outcome.blank:
        if problem:
            found.append(("blank_prompt_refused", problem))

    faulted = set()
    ordered = not outcome.session.switches.get("results_as_finished")
    for request in api.requests:
        if not request.path.endswith("/v1/messages") or request.body is None:
            continue
        if request.fault == "prompt_too_long":
            faulted.add(request.index)
        problem = validate_request(request.body)
        if problem is not None or request.status == 400 and request.index not in faulted:
            found.append(("requests_valid", f"request {request.index}: {problem or request.error}"))
        if request.status == 500 and request.error and "script error" in request.error.get("message", ""):
            found.append(("requests_valid", f"request {request.index}: {request.error['message']}"))
        found += [("one_result_per_call", f"request {request.index}: {p}")
                  for p in _pairing(request.body["messages"], ordered=ordered)]
        found += [("no_empty_block", f"request {request.index}: {p}") for p in _empties(request.body["messages"])]

    history = normalize_messages_for_api(engine.messages) if engine else []
    found += [("one_result_per_call", f"history: {p}") for p in _pairing(history, final=True, ordered=ordered)]
    found += [("no_empty_block", f"history: {p}") for p in _empties(history)]
    found += [("no_tool_ran_twice", p) for p in _runs(outcome)]
    found += [("every_execution_told", p) for p in _told(outcome, history)]
    found += [("transcript_reloads", p) for p in _reload(outcome)]
    for number, run in enumerate(outcome.runs):
        found += [("abort_told_once", f"run {number}: {p}") for p in _told_of_abort(run, engine)]
    for number, run in enumerate(outcome.runs):
        found += [("every_child_ended_in_terminal", f"run {number}: {p}") for p in _children_ended(run)]
    for number, pids in enumerate(outcome.pids_left):
        if pids:
            found.append(("no_background_process_outlives_its_run", f"run {number}: pids {pids} alive"))
    for number, run in enumerate(outcome.runs):
        found += [("every_notification_delivered_once", f"run {number}: {p}") for p in _notified(run)]
    found += [("every_queued_input_sent_once_in_order", p) for p in _queued_once_in_order(outcome)]
    found += [("latest_request_survives_compaction", p) for p in _latest_request_kept(outcome)]
    for number, left in enumerate(outcome.left):
        if left:
            found.append(("nothing_outlives_a_run", f"run {number}: {len(left)} task(s) left: {'; '.join(left)}"))
    for number, trace in enumerate(outcome.traces):
        found += [("turn_count_by_next_turn", f"run {number}: {p}") for p in _turn_counts(trace)]
        found += [("recovery_bounded", f"run {number}: {p}") for p in _bounded(trace, outcome.session.switches)]
        found += [("tombstoned_never_sent", f"run {number}: {p}") for p in _never_sent(trace)]
        found += [("trace_prints_the_same", f"run {number}: {p}") for p in _prints(trace, outcome.transcript)]
    found += [("blocks_round_trip", p) for p in _round_trips(outcome)]
    return found


def _queued_once_in_order(outcome: Outcome) -> list[str]:
    """``every_queued_input_sent_once_in_order``: each text enqueued is in the history once (a ``queued_command``
    attachment, or inside a prompt the engine made of the queue) or still in ``engine.queue``, never both, never
    neither (a prompt a hook blocked is erased, so a session with a block may lose one); it is in a request no
    later than the first one made after the next prompt was submitted; texts are first sent in the order typed."""
    engine = outcome.engine
    if engine is None or not outcome.queued:
        return []
    problems = []
    blocked = any(m.type == "system" and m.subtype == "user_prompt_blocked" for m in engine.messages)
    bodies = [json.dumps(r.body["messages"], ensure_ascii=False) if r.path.endswith("/v1/messages") and r.body
              else "" for r in outcome.api.requests]
    asked = {r.index for r in outcome.api.requests if r.path.endswith("/v1/messages") and r.body
             and not is_compaction_request(r.body)}  # a compaction's request summarises the head only
    first: list[tuple[int, int] | None] = []
    for text, requests_before, next_prompt in outcome.queued:
        held = sum(1 for m in engine.messages if m.type == "attachment" and m.attachment.get("type") == "queued_command"
                   and m.attachment.get("prompt") == text)
        held += sum(1 for m in engine.messages if m.type == "user" and not m.is_meta
                    and isinstance(m.message.get("content"), str) and text in m.message["content"])
        queued = engine.queue.count(text)
        if held + queued != 1 and not (blocked and held + queued == 0):
            problems.append(f"{text}: {held} in the history, {queued} still queued")
        sent = next(((index, body.index(json.dumps(text)[1:-1])) for index, body in enumerate(bodies)
                     if index >= requests_before and json.dumps(text)[1:-1] in body), None)
        first.append(sent)
        if queued:
            continue
        due = next((index for index in range(outcome.submits[next_prompt], len(bodies)) if index in asked), None) \
            if next_prompt < len(outcome.submits) else None  # the first request for an answer after that prompt
        if held and due is not None and (sent is None or sent[0] > due):
            problems.append(f"{text}: not in request {due}, the first after the next prompt (first sent: {sent})")
    order = [at for at in first if at is not None]
    if order != sorted(order):
        problems.append(f"queued texts first sent out of order: {order}")
    return problems


def _typed(outcome: Outcome) -> set[str]:
    """Every text the person gave the session: its prompts, its queued texts, and the prompts the engine makes of
    queued texts left when a run completed (consecutive ones joined by blank lines)."""
    queued = [text for text, _, _ in outcome.queued]
    joined = {"\n\n".join(queued[i:j]) for i in range(len(queued)) for j in range(i + 1, len(queued) + 1)}
    return {*outcome.session.prompts, *joined}


def _person_text(message: Any) -> str:
    """The text of a person's request (``is_person_request``) as sent: a prompt's text, a queued input's."""
    return "\n".join(block["text"] for sent in normalize_messages_for_api([message])
                     for block in sent["content"] if block.get("type") == "text")


def keeps_latest_request(switches: dict[str, Any]) -> bool:
    """Whether the session's compactions keep the person's latest request (``ContextOptions.keep_latest_request``;
    with no pipeline a reactive compaction keeps it too)."""
    context = switches.get("context")
    return context is None or context.keep_latest_request


def _latest_request_kept(outcome: Outcome) -> list[str]:
    """``latest_request_survives_compaction``, from the run's own records (never by pairing texts): for each compact
    boundary in the engine's history (it keeps everything), the newest ``is_person_request`` message before it, by
    position, must be a text the person typed (``_typed``) and among what the boundary kept (``metadata["kept"]``:
    first, or in the tail, where everything kept ahead of it is older than it); and the first checkpoint of the run
    that yielded the boundary whose ``messages_for_query`` holds the boundary (the request built right after it:
    the same iteration's for autocompact, the next one's for a reactive compaction) has, after the summary
    (``summary_uuid``), a person's request whose text is that typed text, word for word. Vacuous with
    ``keep_latest_request`` off."""
    engine = outcome.engine
    if engine is None or not keeps_latest_request(outcome.session.switches):
        return []
    typed = _typed(outcome)
    position = {m.uuid: at for at, m in enumerate(engine.messages)}
    checkpoints = [(trace, point) for trace in outcome.traces for point in trace.checkpoints]
    problems = []
    for at, boundary in enumerate(engine.messages):
        if not is_compact_boundary(boundary):
            continue
        latest = next((m for m in reversed(engine.messages[:at]) if is_person_request(m)), None)
        if latest is None:
            continue
        said, where = _person_text(latest), f"boundary {boundary.uuid} ({boundary.metadata.get('trigger')})"
        if said not in typed:
            problems.append(f"{where}: the newest request before it, {latest.uuid} {said!r}, is no text the person "
                            "typed")
            continue
        kept = list(boundary.metadata.get("kept") or [])
        if latest.uuid not in kept:
            problems.append(f"{where}: the person's newest request {latest.uuid} {said!r} is not kept ({kept})")
        elif any(position.get(u, -1) > position[latest.uuid] for u in kept[:kept.index(latest.uuid)]):
            problems.append(f"{where}: the kept request {latest.uuid} is not first in kept {kept} (nor in the tail)")
        summary = boundary.metadata.get("summary_uuid")
        built = next(((trace, point) for trace, point in checkpoints if boundary.uuid in point.messages_for_query),
                     None)
        if built is None:
            continue  # the run ended before another request was built (an abort, a hook's stop)
        trace, point = built
        sent = list(point.messages_for_query)
        if summary not in sent:
            problems.append(f"{where}: checkpoint {point.index}'s request has no summary {summary}")
            continue
        after = trace.resolve(sent[sent.index(summary) + 1:])
        if not any(is_person_request(m) and _person_text(m) == said for m in after):
            problems.append(f"{where}: checkpoint {point.index}'s request does not carry the latest request {said!r} "
                            f"word for word after the summary (it has "
                            f"{[_person_text(m) for m in after if is_person_request(m)]})")
    return problems


def _children_ended(run: Any) -> list[str]:
    """Each child run an ``Agent`` call started (and each of its children) has its Terminal. (That each call got a
    result is ``one_result_per_call``'s.)"""
    problems = [f"child {i} ({child.messages[0].message['content']!r}) has no Terminal"
                for i, child in enumerate(run.children) if not child.done]
    for child in run.children:
        problems += [f"in a child: {p}" for p in _children_ended(child)]
    return problems


def _sent(messages: Any) -> str:
    """The JSON the API would be sent for ``messages`` (loop messages), as text: what must stay byte-identical."""
    return json.dumps(normalize_messages_for_api(list(messages)), ensure_ascii=False)


def _round_trips(outcome: Outcome) -> list[str]:
    engine = outcome.engine
    if engine is None or not engine.messages:
        return []
    problems = []
    assistants = [m for m in engine.messages if m.type == "assistant"]
    for message in assistants:
        sent = _sent([message])
        for how, again in (("model_dump -> validate", AssistantMessage.model_validate(message.model_dump())),
                           ("JSON dump -> validate", AssistantMessage.model_validate_json(message.model_dump_json()))):
            if _sent([again]) != sent:
                problems.append(f"{how} changes what {message.uuid} sends: {_sent([again])} vs {sent}")
    served = _served_unknown_blocks(outcome.session.script)
    for message in assistants:
        for block in message.message.content:
            if block.type in KNOWN_BLOCK_TYPES:
                continue
            if not isinstance(block, UnknownContentBlock):
                problems.append(f"{message.uuid}: a {block.type} block kept as the SDK's {type(block).__name__}")
            elif block.model_dump() not in served:
                problems.append(f"{message.uuid}: {block.model_dump()} is not a block the API served")
    try:
        copy = outcome.transcript.with_name("round-trip.jsonl")
        copy.write_bytes(outcome.transcript.read_bytes())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            resumed = QueryEngine.resume(copy, model=offline([]), deps=QueryDeps(uuid=counting_uuids(20_000)))
    except Exception as error:  # noqa: BLE001  (transcript_reloads says why; nothing to compare here)
        return problems + [f"the transcript does not resume: {type(error).__name__}: {error}"]
    if _sent(resumed.messages) != _sent(engine.messages):
        problems.append("the resumed session sends other JSON than the session did")
    for number, trace in enumerate(outcome.traces):
        loaded = Trace.load(trace.save(outcome.transcript.with_name(f"round-trip-{number}.trace.jsonl")))
        changed = [uuid for uuid, message in trace.messages.items()
                   if _sent([loaded.messages[uuid]]) != _sent([message])]
        if changed:
            problems.append(f"run {number}: the saved trace, loaded, sends other JSON for {changed}")
    return problems


def _served_unknown_blocks(script: list[Any]) -> list[dict[str, Any]]:
    """Every block of a type the SDK does not know that the script had the offline API serve."""
    blocks = [b for item in script if isinstance(item, Turn) for b in item.content]
    for item in (i for i in script if isinstance(i, RawTurn) and i.sse):
        for frame in split_frames(item.sse):
            try:
                (event,) = parse_frames(frame)
                blocks.append(event["content_block"])
            except (ValueError, TypeError, KeyError):  # a corrupt frame, or not a content_block_start
                continue
    return [b for b in blocks if isinstance(b, dict) and b.get("type") not in KNOWN_BLOCK_TYPES]


def _told_of_abort(run: Any, engine: Any) -> list[str]:
    """abort_told_once for one run: its ``interrupted`` notices and the model's notes (``endings``) come as one pair
    or not at all, always for an ``aborted_*`` ending; the note follows every assistant message and tool result of
    the run, and no tombstone withdraws it (the next request carries it)."""
    own = run.messages[len(run.params.messages):]
    notes = [i for i, m in enumerate(own) if is_interrupted_note(m)]
    notices = [m for m in own if m.type == "system" and m.subtype == "interrupted"]
    problems = []
    if len(notes) != len(notices) or len(notes) > 1:
        problems.append(f"{len(notes)} note(s) for the model, {len(notices)} interrupted notice(s)")
    if run.terminal.reason.startswith("aborted_") and len(notes) != 1:
        problems.append(f"ended {run.terminal.reason} with {len(notes)} note(s) for the model")
    for at in notes:
        after = [m.type for m in own[at + 1:] if m.type == "assistant" or m.type == "user" and m.source_tool_use_ids]
        if after:
            problems.append(f"the note is followed by {after}")
        if own[at].uuid in withdrawn(engine.messages):
            problems.append("the note is withdrawn")
    return problems


def _prints(trace: Any, transcript: Path) -> list[str]:
    def printed(trace: Any, record: bool) -> str:
        console = SafeConsole(file=io.StringIO(), width=100, record=record)  # record=True: through rich
        print_trace(trace, console)
        return console.file.getvalue()

    direct = printed(trace, record=False)
    problems = [] if direct == printed(trace, record=True) else ["a pipe gets other text than rich writes"]
    saved = trace.save(transcript.with_name("trace.jsonl"))
    if printed(Trace.load(saved), record=False) != direct:
        problems.append("the saved trace, loaded, prints other text than the run's trace")
    return problems


def _turn_counts(trace: Any) -> list[str]:
    problems = []
    for before, after in itertools.pairwise(trace.checkpoints):
        grew = after.turn_count - before.turn_count
        reason = after.transition.reason if after.transition else None
        if grew != (1 if reason == "next_turn" else 0):
            problems.append(f"checkpoint {after.index}: turn_count {before.turn_count}→{after.turn_count} "
                            f"with transition {reason}")
    return problems


def _bounded(trace: Any, switches: dict[str, Any]) -> list[str]:
    options = switches.get("recovery") or RecoveryOptions()
    problems = []
    per_turn: Counter[tuple[int, str]] = Counter()
    previous = None
    for point in trace.checkpoints:
        reason = point.transition.reason if point.transition else None
        per_turn[(point.turn_count, reason)] += 1
        if reason == previous == "collapse_drain_retry":
            problems.append(f"checkpoint {point.index}: two collapse drains in a row")
        previous = reason
    limits = {"max_output_tokens_escalate": 1, "max_output_tokens_recovery": options.max_resumes,
              "reactive_compact_retry": 1}
    for (turn, reason), count in per_turn.items():
        if reason in limits and count > limits[reason]:
            problems.append(f"turn {turn}: {count} × {reason} (at most {limits[reason]})")
    # one iteration: N failed attempts of the model in a row (N: overloads_before_fallback; without a fallback
    # model, the client's max_retries + 1 if that is more, as for HTTP 529), then (once) N of the fallback model;
    # a re-ask (an overload's retry, the streaming fallback's resend) or the switch each says so in one notice
    limit = options.overloads_before_fallback
    most = 2 * limit - 1 if switches.get("fallback_model") else max(limit, MAX_RETRIES + 1) - 1
    for point in trace.checkpoints:
        retries = sum(1 for e in point.events if e["type"] == "system" and _asked_again(trace.messages[e["uuid"]]))
        if retries > most:
            problems.append(f"checkpoint {point.index}: {retries} overloaded attempts asked again (at most {most})")
    return problems


def _asked_again(message: Any) -> bool:
    """A notice that the same request went again: an overload's retry, the model fallback, a resend."""
    step = (message.metadata or {}).get("step") if message.subtype == "streaming_fallback" else None
    return message.subtype in ("api_retry", "model_fallback") or step in ("resend", "non_streaming")


def _never_sent(trace: Any) -> list[str]:
    gone = withdrawn(trace.messages.values())
    return [f"checkpoint {p.index} sent withdrawn message {uuid}" for p in trace.checkpoints
            for uuid in set(p.messages_for_query) & gone]


def _pairing(messages: list[dict[str, Any]], final: bool = False, ordered: bool = True) -> list[str]:
    problems = []
    merged = merge_consecutive(messages)
    for i, message in enumerate(merged):
        blocks = message["content"] if isinstance(message["content"], list) else []
        ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if message["role"] != "assistant" or not ids:
            continue
        following = merged[i + 1] if i + 1 < len(merged) else None
        if following is None:
            if final:
                problems.append(f"messages.{i}: the history ends with unanswered tool_use {ids}")
            continue
        answers = [b.get("tool_use_id") for b in following["content"] if isinstance(b, dict)
                   and b.get("type") == "tool_result"] if isinstance(following["content"], list) else []
        leading = [b.get("tool_use_id") for b in itertools.takewhile(
            lambda b: isinstance(b, dict) and b.get("type") == "tool_result", following["content"])] \
            if isinstance(following["content"], list) else []
        if not ordered:  # results_as_finished: the same calls, in the order they finished
            leading, answers, ids = sorted(leading), sorted(answers), sorted(ids)
        if leading != ids or answers != ids:
            problems.append(f"messages.{i}: calls {ids}, next message answers {answers} (first: {leading})")
    return problems


def _empties(messages: list[dict[str, Any]]) -> list[str]:
    problems = []

    def walk(blocks: list[Any], where: str) -> None:
        for j, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                problems.append(f"{where}.{j}: a blank text block")
            if block.get("type") == "tool_result":
                content = block.get("content")
                if block.get("is_error") and not content:
                    problems.append(f"{where}.{j}: an is_error result with empty content")
                if isinstance(content, str) and not content.strip():
                    problems.append(f"{where}.{j}: a result with blank content")
                if isinstance(content, list):
                    walk(content, f"{where}.{j}.content")

    for i, message in enumerate(messages):
        content = message["content"]
        if not content or isinstance(content, str) and not content.strip():
            problems.append(f"messages.{i}: empty content")
        elif isinstance(content, list):
            walk(content, f"messages.{i}")
    return problems


def _runs(outcome: Outcome) -> list[str]:
    """no_tool_ran_twice: each tool_use id ran at most once (a call with invalid or non-object input never ran:
    its executions would have no told call, ``_told``)."""
    return [f"tool_use {call} (n={n}) ran {k} times" for (call, n), k in Counter(outcome.calls).items() if k > 1]


def _told(outcome: Outcome, history: list[dict[str, Any]]) -> list[str]:
    """every_execution_told: every call that ran is in what the model is sent, its tool_use then its tool_result, so
    no execution is one the model was never told of; per command, each execution has a told call of its own, so
    none ran only because an attempt was asked again (issue 32: a re-asked response repeats its command under a
    new id, and a withdrawn attempt's call that had run would be untold)."""
    blocks = [(m["role"], b) for m in history if isinstance(m["content"], list) for b in m["content"]
              if isinstance(b, dict)]
    answered = {b.get("tool_use_id") for role, b in blocks if role == "user" and b.get("type") == "tool_result"}
    told = {b["id"] for role, b in blocks
            if role == "assistant" and b.get("type") == "tool_use" and b["id"] in answered}
    problems = []
    for n, k in sorted(Counter(n for _, n in outcome.calls).items()):
        untold = sorted({call for call, m in outcome.calls if m == n} - told)
        if untold:
            problems.append(f"command n={n} ran {k} time{'s' if k != 1 else ''}; the model was never told of "
                            f"{', '.join(untold)}")
    return problems


def _reload(outcome: Outcome) -> list[str]:
    engine = outcome.engine
    if engine is None or not engine.messages:
        return []
    try:
        loaded = load_transcript(outcome.transcript)
    except Exception as error:  # noqa: BLE001
        return [f"load_transcript raised {type(error).__name__}: {error}"]
    dumped = [m.model_dump(mode="json") for m in loaded]
    if dumped != [m.model_dump(mode="json") for m in engine.messages]:
        return [f"the reloaded transcript differs from the history ({len(dumped)} vs {len(engine.messages)} messages)"]
    body = {"model": MODEL, "max_tokens": 1024, "tools": tool_schemas(outcome.tools),
            "messages": normalize_messages_for_api([*loaded, user_message("next")])}
    problem = validate_request(body)
    if problem:
        return [f"the next request from the reloaded transcript is invalid: {problem.message}"]
    return _reload_with_a_copied_line(outcome) if outcome.session.copied_line is not None else []


def _reload_with_a_copied_line(outcome: Outcome) -> list[str]:
    """A second writer's kind of damage: one record written twice. A resume must read the same history."""
    lines = outcome.transcript.read_bytes().split(b"\n")
    records = [i for i, line in enumerate(lines) if line.strip()]
    at = records[outcome.session.copied_line % len(records)]
    copy = outcome.transcript.with_name("copied.jsonl")
    copy.write_bytes(b"\n".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            resumed = QueryEngine.resume(copy, model=offline([]), deps=QueryDeps(uuid=counting_uuids(10_000)))
    except Exception as error:  # noqa: BLE001
        return [f"resuming a transcript with line {at + 1} written twice raised {type(error).__name__}: {error}"]
    kept = [m for m in resumed.messages if not (m.type == "system" and m.subtype == "resume_repair")]
    if [m.model_dump(mode="json") for m in kept] != [m.model_dump(mode="json") for m in outcome.engine.messages]:
        return [f"with line {at + 1} written twice, the resumed history differs from the history"]
    return []


SESSION_TIMEOUT_S = 60  # a session's own limit (asyncio.wait_for); asyncio.run must return 30 s after it


def run_and_check(session: Session) -> tuple[Outcome, list[tuple[str, str]]]:
    """Run one session in a fresh temporary directory and check it (the test and bench/soak.py use this).

    ``asyncio.run`` runs in a thread of its own, so a session whose shutdown never returns (a task the run left
    behind that cannot be cancelled) is reported (``nothing_outlives_a_run``) instead of hanging the test."""
    with tempfile.TemporaryDirectory(prefix="dreamloop-prop-") as workdir:
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["outcome"] = asyncio.run(asyncio.wait_for(run_session(session, Path(workdir)),
                                                              timeout=SESSION_TIMEOUT_S))
            except BaseException as error:  # noqa: BLE001  (reported as an escape, below)
                box["error"] = error

        thread = threading.Thread(target=run, name="property-test session", daemon=True)
        thread.start()
        thread.join(SESSION_TIMEOUT_S + 30)
        if "error" in box:  # e.g. CancelledError: counted, so a soak goes on
            error = box["error"]
            return Outcome(session, cut_short=True), [("ended_in_terminal",
                                                       f"{type(error).__name__} escaped asyncio.run: {error}")]
        if thread.is_alive() or "outcome" not in box:
            outcome = Outcome(session, cut_short=True)
            return outcome, [("nothing_outlives_a_run",
                              f"asyncio.run did not return within {SESSION_TIMEOUT_S + 30} s")]
        return box["outcome"], check(box["outcome"])


def describe(session: Session) -> str:
    """The session as readable text, for a failure message."""
    items = [f"RawTurn({item.source})" if isinstance(item, RawTurn) else
             f"Turn({json.dumps(item.content)}, stop={item.stop_reason!r}, fault={item.fault and item.fault.kind})"
             for item in session.script]
    summaries = ("" if session.summaries is None
                 else f" summaries={[t.fault and t.fault.kind for t in session.summaries]}")
    return (f"prompts={session.prompts} abort_at={session.abort_at} queued_at={session.queued_at}{summaries} "
            f"switches={session.switches}\n  "
            + "\n  ".join(items))


# ---------------------------------------------------------------------------
# The test: 500 sessions, reproducible (derandomized, no example database)


@settings(max_examples=500, deadline=None, derandomize=True, database=None, print_blob=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(sessions())
def test_every_generated_session_keeps_every_invariant(session):
    _, broken = run_and_check(session)
    assert not broken, "\n".join(f"{name}: {what}" for name, what in broken) + "\n" + describe(session)


def test_the_switch_table_is_drawn_into_every_session():
    """Each switch a branch adds must be a QueryParams field (off by default) drawn by hypothesis."""
    from dreamloop.query import QueryParams

    for name, strategy in SWITCHES.items():
        assert name in QueryParams.model_fields, name
        assert isinstance(strategy, st.SearchStrategy), name


# ---------------------------------------------------------------------------
# latest_request_survives_compaction on sessions made by hand


def _compacting_session(prompt: str, *, snip: bool = False, keep: bool = True) -> Session:
    """Three tool turns, autocompact at once (one message kept), so the prompt is in the first compaction's head."""
    calls = [Turn(content=[{"type": "tool_use", "id": f"toolu_h{n}", "name": "probe",
                            "input": {"n": n, "call": f"toolu_h{n}"}}]) for n in (1, 2, 3)]
    context = _context({name: name == "autocompact" or snip and name == "snip" for name in STAGES}, 6000, False,
                       keep=keep).model_copy(update={"autocompact": Autocompact(threshold=1, keep_recent=1,
                                                                               max_failures=2)})
    return Session(script=calls, prompts=[prompt], abort_at=None, switches={"context": context}, summaries=[])


def test_the_prompt_is_carried_after_each_compaction():
    outcome, broken = run_and_check(_compacting_session("probe it three times"))
    assert sum(is_compact_boundary(m) for m in outcome.engine.messages) >= 1
    assert not broken, broken


def test_the_invariant_is_vacuous_with_the_switch_off():
    outcome, broken = run_and_check(_compacting_session("probe it three times", keep=False))
    assert sum(is_compact_boundary(m) for m in outcome.engine.messages) >= 1
    assert not broken, broken
    assert _latest_request_kept(outcome) == []
    outcome.session.switches["context"] = outcome.session.switches["context"].model_copy(
        update={"keep_latest_request": True})  # judged as if it were on: the prompt was only summarised
    assert any("is not kept" in p for p in _latest_request_kept(outcome))


def test_a_long_prompt_that_snip_would_trim_is_carried_whole():
    _, broken = run_and_check(_compacting_session(LONG_PROMPT.strip(), snip=True))
    assert not broken, broken
