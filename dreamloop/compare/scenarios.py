"""The scenario library of ``dreamloop compare``: a script, a prompt and flags, run by both loops.

A ``Scenario`` is what a learner would type (``prompt``), the files of its
workspace, the model's side (``script``: a function of the workspace path to
a script, a list of ``Turn`` or a policy, so tool inputs can name absolute
paths: dreamloop's choice for both sides, with which Claude Code 2.1.332's Read
gave an ordinary result in ``one_tool``), and the flags both loops get: model,
fallback model, ``--max-turns``, command hooks (a Claude Code settings
mapping, given to both as ``--settings``), tools allowed beyond edits, an
environment for Claude Code. ``SCENARIOS`` holds them in the order
``dreamloop compare --list`` prints; ``scenario(name)`` finds one.

Every script here is dreamloop's own. In a hook command, ``{scratch}`` is a
folder of the run (outside the workspace) and ``{workspace}`` the workspace.

Not a scenario: a Stop while a sub-agent runs (issue 34). ``claude -p`` has no Stop to give it (no input arrives
while it runs), and a SIGINT ends the process without a ``result`` line, so no ending could be compared;
``docs/compare.md`` says so where it lists what the library leaves out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from dreamloop.fake_api.sse import message_events
from dreamloop.scripts import (Fault, Script, Turn, by_prompt, http_error, max_tokens_cut, prompt_too_long,
                               reply, text, thinking, tool_use)

__all__ = ["DEFAULT_MODEL", "FALLBACK_MODEL", "OPUS_MODEL", "SCENARIOS", "Scenario", "scenario"]

DEFAULT_MODEL = "claude-sonnet-4-5"
"""The model name both sides are given (``--model``) unless a scenario says otherwise."""
FALLBACK_MODEL = "claude-haiku-4-5"
"""The fallback model of the scenarios that have one."""
OPUS_MODEL = "claude-opus-5-5"
"""An Opus model name: with it Claude Code 2.1.332 sent a probe request first (``opus_probe``; ``shapes.is_probe``)."""

CONFIG = "value = 1\n"
# An Edit comes after a Read of the file in every script: Claude Code's Edit refuses a file it has not read
# (its tool's rule, not the loop's), and a scenario is about the loop.
GREETER = 'def greet(name):\n    return f"Hello, {name}!"\n'


@dataclass(frozen=True)
class Scenario:
    """One scenario: ``name`` (snake_case), ``about`` (one line: what fails and where), ``prompt``, ``script``
    (workspace path → ``Script``), ``files`` (name → text, the workspace), ``model``, ``fallback_model``,
    ``max_turns``, ``hooks`` (a settings file's ``hooks`` mapping), ``allow`` (tools allowed beyond file
    edits, e.g. ``("Bash",)``), ``env`` (for ``claude -p``), ``thinking_budget`` (tokens;
    ``--thinking-budget`` for dreamloop, ``MAX_THINKING_TOKENS`` for ``claude -p``, as
    ``max_tokens_with_thinking`` gives them), ``order_free`` (tool_result order depends on timing: compared as
    a set), ``markers`` (texts of the scenario's own, in its files, hooks or script: where each first reached
    the model on the user's side is recorded and compared, ``shapes.RequestShape.texts``; a hook's reason, a
    file's changed content), ``counts`` (workspace files whose lines are counted when the run ends: a
    command that appends a line each time it runs shows how often it ran; an outcome line each), ``children``
    (texts of the scenario's own, one in each sub-agent's prompt: a request whose first user message holds one is
    that sub-agent's, shaped apart from the run's own requests, ``shapes.request_shapes``, as the script's
    ``scripts.by_prompt`` answers it apart)."""

    name: str
    about: str
    prompt: str
    script: Callable[[str], Script]
    files: Mapping[str, str] = field(default_factory=lambda: {"config.py": CONFIG, "greeter.py": GREETER})
    model: str = DEFAULT_MODEL
    fallback_model: str | None = None
    max_turns: int | None = None
    hooks: Mapping[str, Any] | None = None
    allow: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    thinking_budget: int | None = None
    order_free: bool = False
    markers: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()
    children: tuple[str, ...] = ()

    def settings(self, workspace: str, scratch: str) -> dict[str, Any] | None:
        """The settings file both sides get (``--settings``), or None: ``hooks`` with paths filled in."""
        if self.hooks is None:
            return None
        return {"hooks": _fill(self.hooks, workspace=workspace, scratch=scratch)}


def _fill(value: Any, **names: str) -> Any:
    if isinstance(value, str):
        for name, path in names.items():
            value = value.replace("{" + name + "}", path)
        return value
    if isinstance(value, Mapping):
        return {k: _fill(v, **names) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_fill(v, **names) for v in value]
    return value


# ---------------------------------------------------------------------------
# Where in a stream a fault strikes, counted from the blocks (so a longer path cannot move it)


def events_into(blocks: list[dict[str, Any]], block: int, deltas: int = 1) -> int:
    """The number of SSE events up to and including the ``deltas``-th delta of block ``block``:
    a ``Fault(after_events=...)`` that strikes inside that block."""
    seen = 0
    for number, event in enumerate(_events(blocks), start=1):
        if event["type"] == "content_block_delta" and event["index"] == block:
            seen += 1
            if seen == deltas:
                return number
    raise ValueError(f"block {block} has fewer than {deltas} deltas")


def events_through(blocks: list[dict[str, Any]], block: int) -> int:
    """The number of SSE events up to and including block ``block``'s ``content_block_stop``."""
    for number, event in enumerate(_events(blocks), start=1):
        if event["type"] == "content_block_stop" and event["index"] == block:
            return number
    raise ValueError(f"no block {block}")


def _events(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    content = [{**b, "id": f"toolu_{i}"} if b["type"] == "tool_use" else b for i, b in enumerate(blocks)]
    return message_events({"id": "msg", "content": content, "stop_reason": "end_turn", "usage": {}})


def _stream_fault(kind: str, blocks: list[dict[str, Any]], after_events: int) -> Turn:
    return Turn(content=blocks, fault=Fault(kind=kind, after_events=after_events))


def _forever(turn: Turn) -> Script:
    """A policy answering every request with ``turn`` (a failure that never heals)."""
    return lambda body, index: turn


def _then(first: list[Turn], rest: Turn) -> Script:
    """A policy: the turns of ``first`` in order, then ``rest`` for ever."""
    return lambda body, index: first[index] if index < len(first) else rest


# ---------------------------------------------------------------------------
# The scripts


def _read(ws: str, name: str = "config.py") -> dict[str, Any]:
    return tool_use("Read", {"file_path": f"{ws}/{name}"})


def _edit(ws: str) -> dict[str, Any]:
    return tool_use("Edit", {"file_path": f"{ws}/config.py", "old_string": "value = 1", "new_string": "value = 2"})


LONG_TEXT = "Let me look at the configuration file before I change anything in it."


MEMORY = "# Notes for the agent\nconfig.py holds the settings; answer in one sentence.\n"


IMPORTING = "# Notes for the agent\n@docs/style.md\n"
IMPORTED = "Style: config.py holds the settings; answer in one sentence.\n"
NESTED = "pkg holds the helpers; name new ones in snake_case.\n"
HELPERS = "def add(a, b):\n    return a + b\n"


def _nested_reads(ws: str) -> Script:
    """A Read of pkg/helpers.py (a folder with its own CLAUDE.md), then one of pkg/CLAUDE.md's folder again
    (pkg/helpers.py once more) and the answer: does the folder's memory file arrive, and how often?"""
    return [reply("Reading.", _read(ws, "pkg/helpers.py")), reply("Again.", _read(ws, "pkg/helpers.py")),
            reply("add adds.")]


def _changed_behind(ws: str) -> Script:
    """A Read of config.py; while the next request is answered, config.py and CLAUDE.md change on disk
    (as if the person edited them), then a Read of greeter.py and the answer. Does either loop tell the model?"""
    def policy(body: dict[str, Any], index: int) -> Turn:
        if index == 0:
            return reply("Reading.", _read(ws))
        if index == 1:
            Path(ws, "config.py").write_text("value = 7\n", encoding="utf-8")
            Path(ws, "CLAUDE.md").write_text(MEMORY.replace("one sentence", "two sentences"), encoding="utf-8")
            return reply("Reading the other file.", _read(ws, "greeter.py"))
        return reply("value was 1 when I read it.")
    return policy


PERSON_LINE = "# a person's note"
"""The line a person adds to config.py in the read-before-write scenarios (a marker: does it survive?)."""


def _write(ws: str, name: str = "config.py", content: str = "value = 2\n") -> dict[str, Any]:
    return tool_use("Write", {"file_path": f"{ws}/{name}", "content": content})


def _person_edits(ws: str) -> None:
    if Path(ws).is_dir():  # a script listed without a workspace (the evidence test's "/ws") changes nothing
        Path(ws, "config.py").write_text(f"value = 1\n{PERSON_LINE}\n", encoding="utf-8")


def _unread(call: Callable[[str], dict[str, Any]]) -> Callable[[str], Script]:
    """The model changes config.py without reading it first: one call, then the answer."""
    return lambda ws: [reply("Changing it.", call(ws)), reply("Done.")]


def _after_change(*calls: Callable[[str], dict[str, Any]]) -> Callable[[str], Script]:
    """A Read of config.py; while the next request is answered a person adds a line to config.py (the old text
    still there); then each of ``calls``, one per response, then the answer."""
    def script(ws: str) -> Script:
        def policy(body: dict[str, Any], index: int) -> Turn:
            if index == 0:
                return reply("Reading.", _read(ws))
            if index == 1:
                _person_edits(ws)
            if index <= len(calls):
                return reply("Changing it.", calls[index - 1](ws))
            return reply("Done.")
        return policy
    return script


def _write_new(ws: str) -> Script:
    return [reply("Creating it.", _write(ws, "settings.py", "colour = 'blue'\n")), reply("Done.")]


def _plain(ws: str) -> Script:
    return [reply("value is 1.")]


def _one_tool(ws: str) -> Script:
    return [reply("I'll read config.py.", _read(ws)), reply("value is 1.")]


def _read_then_edit(ws: str) -> Script:
    return [reply("Reading.", _read(ws)), reply("Editing.", _edit(ws)), reply("value is now 2.")]


def _parallel_reads(ws: str) -> Script:
    return [reply("Reading both.", _read(ws), _read(ws, "greeter.py")), reply("value is 1; greet says hello.")]


def _missing_and_unknown(ws: str) -> Script:
    return [reply("Three calls.", _read(ws), _read(ws, "missing.py"), tool_use("Frobnicate", {"x": 1})),
            reply("One file read; one missing; no such tool.")]


def _invalid_input(ws: str) -> Script:
    return [reply("Reading.", tool_use("Read", {"path": f"{ws}/config.py"})), reply("The call was wrong.")]


def _bash_fails_parallel(ws: str) -> Script:
    return [reply("Three calls.", tool_use("Bash", {"command": "sleep 1; echo slow", "description": "slow"}),
                  tool_use("Bash", {"command": "echo broken >&2; exit 3", "description": "fails"}),
                  _read(ws)),
            reply("One command failed.")]


def _bash_fails_serial(ws: str) -> Script:
    return [reply("Reading first.", _read(ws)),
            reply("Two calls.", tool_use("Bash", {"command": "echo broken >&2; exit 3", "description": "fails"}),
                  _edit(ws)),
            reply("The command failed.")]


def _max_tokens_once(ws: str) -> Script:
    return [reply("The value in config.py is", stop_reason="max_tokens"), reply(" 1.")]


def _max_tokens_always(ws: str) -> Script:
    return _forever(reply("The value in config.py is", stop_reason="max_tokens"))


def _max_tokens_in_tool_json(ws: str) -> Script:
    return [reply("Reading first.", _read(ws)), max_tokens_cut("Editing.", _edit(ws)), reply("Editing.", _edit(ws)),
            reply("value is now 2.")]


def _max_tokens_thinking(ws: str) -> Script:
    return [reply(thinking("The user wants the value."), "The value is", stop_reason="max_tokens"), reply(" 1.")]


def _http_529(ws: str) -> Script:
    return _forever(http_error(529, retry_after_ms=1))


def _http_529_fallback(ws: str) -> Script:
    def policy(body: dict[str, Any], index: int) -> Turn:
        return reply("value is 1.") if body.get("model") == FALLBACK_MODEL else http_error(529, retry_after_ms=1)
    return policy


def _http_404_fallback(ws: str) -> Script:
    def policy(body: dict[str, Any], index: int) -> Turn:
        if body.get("model") == FALLBACK_MODEL:
            return reply("value is 1.")
        return Turn(fault=Fault(kind="http_error", status=404, error_type="not_found_error",
                                message=f"model: {body.get('model')}"))
    return policy


def _http_429(ws: str) -> Script:
    return [http_error(429, retry_after_ms=1), reply("value is 1.")]


def _http_500(ws: str) -> Script:
    return [http_error(500, retry_after_ms=1), reply("value is 1.")]


def _error_before_block(ws: str) -> Script:
    blocks = [text(LONG_TEXT)]
    return [_stream_fault("stream_error", blocks, events_into(blocks, 0, 2)), reply("value is 1.")]


def _error_inside_tool_use(ws: str) -> Script:
    blocks = [text("Reading."), _read(ws)]
    return [_stream_fault("stream_error", blocks, events_into(blocks, 1, 1)),
            reply("Reading.", _read(ws)), reply("value is 1.")]


def _error_after_tool_use(ws: str) -> Script:
    blocks = [text("Reading."), _read(ws)]
    return [_stream_fault("stream_error", blocks, events_through(blocks, 1)),
            reply("Reading.", _read(ws)), reply("value is 1.")]


def _drop_during_text(ws: str) -> Script:
    blocks = [text(LONG_TEXT)]
    return [_stream_fault("disconnect", blocks, events_into(blocks, 0, 2)), reply("value is 1.")]


def _drop_inside_tool_use(ws: str) -> Script:
    blocks = [text("Reading."), _read(ws)]
    return [_stream_fault("disconnect", blocks, events_into(blocks, 1, 1)),
            reply("Reading.", _read(ws)), reply("value is 1.")]


def _drop_after_tool_use(ws: str) -> Script:
    blocks = [text("Reading."), _read(ws)]
    return [_stream_fault("disconnect", blocks, events_through(blocks, 1)),
            reply("Reading.", _read(ws)), reply("value is 1.")]


def _count(ws: str, wait: int = 0) -> dict[str, Any]:
    """A Bash call that appends a line to count.txt each time it runs (after ``wait`` seconds) and prints the
    count: the file tells how often it ran, on either side."""
    first = f"sleep {wait}; " if wait else ""
    return tool_use("Bash", {"command": f"{first}echo ran >> {ws}/count.txt; wc -l < {ws}/count.txt",
                             "description": "count a run"})


EXPLAIN = "Now I will explain at length what the count means. " * 6


def _drop_after_bash(ws: str, wait: int) -> Script:
    """A Bash block, then a text paced at 20 tokens/s in which the connection drops (about 2.4 s after the
    block ended: the call has long started); asked again, the model calls the same command under a new id."""
    blocks = [text("Counting."), _count(ws, wait), text(EXPLAIN)]
    return [Turn(content=blocks, tokens_per_second=20,
                 fault=Fault(kind="disconnect", after_events=events_into(blocks, 2, 12))),
            reply("Counting.", _count(ws)), reply("Counted.")]


def _too_long_once(ws: str) -> Script:
    return [prompt_too_long(), reply("value is 1.")]


def _too_long_always(ws: str) -> Script:
    return _forever(prompt_too_long())


def _too_long_after_tools(ws: str) -> Script:
    reads = [reply(f"Reading, pass {n}.", _read(ws)) for n in (1, 2, 3)]
    return _then(reads, prompt_too_long())


def _tool_use_without_block(ws: str) -> Script:
    return _forever(reply("I'll read config.py.", stop_reason="tool_use"))


def _empty_text(ws: str) -> Script:
    return [reply(text(""))]


def _endless_tools(ws: str) -> Script:
    return lambda body, index: reply(f"Reading, pass {index + 1}.", _read(ws))


def _read_then_blocked_edit(ws: str) -> Script:
    """A Read, then an Edit of the file just read (so the Edit tool itself would take it), then an answer."""
    return [reply("Reading.", _read(ws)), reply("Editing.", _edit(ws)), reply("The edit was refused.")]


def _finishing_order(ws: str) -> Script:
    """Three calls in one response that finish in another order than they were called: a command that
    waits two seconds, a Read (at once), a command that waits one second."""
    return [reply("Three calls.", tool_use("Bash", {"command": "sleep 2", "description": "wait two seconds"}),
                  _read(ws), tool_use("Bash", {"command": "sleep 1", "description": "wait one second"})),
            reply("All three are done.")]


def _http_429_fallback(ws: str) -> Script:
    def policy(body: dict[str, Any], index: int) -> Turn:
        return reply("value is 1.") if body.get("model") == FALLBACK_MODEL else http_error(429, retry_after_ms=1)
    return policy


def _http_529_to_sonnet(ws: str) -> Script:
    def policy(body: dict[str, Any], index: int) -> Turn:
        return reply("value is 1.") if body.get("model") == DEFAULT_MODEL else http_error(529, retry_after_ms=1)
    return policy


def _read_then_answer(ws: str) -> Script:
    return [reply("Reading.", _read(ws)), reply("Read it.")]


def _stop_hook(ws: str) -> Script:
    return [reply("value is 1."), reply("Checked again: value is 1.")]


def _usage_past_the_window(ws: str) -> Script:
    """A Read and the answer, the model reporting 990,000 input tokens each time (usage figures only: the
    messages stay small). Does either loop compact or refuse on what the API says it was sent?"""
    big = {"input_tokens": 990_000, "output_tokens": 20}
    return [reply("Reading.", _read(ws), usage=big), reply("value is 1.", usage=big)]


def _image_rejected(ws: str) -> Script:
    """The API refuses the first request as an image it could not process (HTTP 400): which ending?"""
    return [Turn(fault=Fault(kind="http_error", status=400, error_type="invalid_request_error",
                             message="Could not process image")), reply("value is 1.")]


def _signed_thinking(ws: str) -> Script:
    return [reply(thinking("I should read the file first."), "Reading.", _read(ws)), reply("value is 1.")]


FUTURE_BLOCK = {"type": "future_block", "payload": {"x": [1, None]}, "note": None}
"""A content block of a type no SDK knows (dreamloop's own), as a later API version may send one."""


def _unknown_block(ws: str) -> Script:
    return [reply("Reading.", FUTURE_BLOCK, _read(ws)), reply("value is 1.")]


CHILD_ONE, CHILD_TWO = "CHILDTASK-1", "CHILDTASK-2"
"""The texts that open the sub-agents' prompts in the sub-agent scenarios (``Scenario.children``)."""
ANSWER_ONE, ANSWER_TWO = "CHILD-ONE-SAYS value is 1.", "CHILD-TWO-SAYS greet says hello."
"""The sub-agents' final answers (markers: where does a child's answer reach its parent?)."""


def _agent(key: str, number: int) -> dict[str, Any]:
    """An ``Agent`` call with no ``run_in_background`` (the field left to the loop's default), the task opening with
    ``key``; a fixed id, since the children's calls and the parent's interleave in timing."""
    return tool_use("Agent", {"description": f"read a file ({number})", "prompt": f"{key}: read the file and say "
                              "what it holds", "subagent_type": "general-purpose"}, id=f"toolu_agent_{number}")


def _child(ws: str, name: str, key: str, answer: str, tokens_per_second: float) -> list[Turn]:
    """A sub-agent's turns: a Read of ``name`` (its text paced, so the parent's next request goes first), then its
    answer."""
    read = tool_use("Read", {"file_path": f"{ws}/{name}"}, id=f"toolu_{key.lower().replace('-', '_')}_read")
    return [Turn(content=[text(LONG_TEXT), read], tokens_per_second=tokens_per_second), reply(answer)]


def _sub_agent_call(ws: str) -> Script:
    """The parent calls ``Agent`` once, says it waits, and answers again once the child's answer has come."""
    main = [reply("Asking a sub-agent.", _agent(CHILD_ONE, 1)), reply("The sub-agent is reading it."),
            reply("value is 1.")]
    return by_prompt(main, {CHILD_ONE: _child(ws, "config.py", CHILD_ONE, ANSWER_ONE, 20)})


def _two_sub_agents(ws: str) -> Script:
    """Two ``Agent`` calls in one response; the second child's text is paced slower (about 4 s), so the first has
    answered and been answered before it ends."""
    main = [reply("Asking two sub-agents.", _agent(CHILD_ONE, 1), _agent(CHILD_TWO, 2)),
            reply("Both are reading."), reply("One has answered."), reply("Both have answered.")]
    return by_prompt(main, {CHILD_ONE: _child(ws, "config.py", CHILD_ONE, ANSWER_ONE, 20),
                            CHILD_TWO: _child(ws, "greeter.py", CHILD_TWO, ANSWER_TWO, 4)})


QUICK_JOB, SLOW_JOB = "a quick background job", "a slow background job"
"""The descriptions of the background commands (markers: does the notification name the call?)."""


def _background(command: str, description: str) -> dict[str, Any]:
    return tool_use("Bash", {"command": command, "description": description, "run_in_background": True})


def _background_ends_before(ws: str) -> Script:
    """A background command that ends at once, then a command in the foreground that waits two seconds: the
    background one has ended before the next request."""
    return [reply("Starting it.", _background("echo started", QUICK_JOB)),
            reply("Waiting.", tool_use("Bash", {"command": "sleep 2", "description": "wait two seconds"})),
            reply("It has ended.")]


def _background_ends_later(ws: str) -> Script:
    """A background command that takes three seconds; the model answers at once and again once told it ended."""
    return [reply("Starting it.", _background("sleep 3; echo done", SLOW_JOB)), reply("It is running."),
            reply("It has ended.")]


def _hook(event: str, command: str, matcher: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return {event: [entry]}


_DENY_JSON = ("echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", "
              "\"permissionDecisionReason\": \"config.py is frozen\"}}'")
_UPDATED_INPUT = ("echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\", "
                  "\"updatedInput\": {\"file_path\": \"{workspace}/greeter.py\"}}}'")
_POST_CONTEXT = ("echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", "
                 "\"additionalContext\": \"config.py is generated; edit config.yaml instead\"}}'")
_STOP_ONCE = "test -f {scratch}/stopped || { touch {scratch}/stopped; echo 'run the tests first' >&2; exit 2; }"

ASK = "what is value in config.py?"
CHANGE = "change value to 2 in config.py"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("plain_answer", "a text answer, no tool", ASK, _plain),
    Scenario("one_tool", "one Read, then the answer", ASK, _one_tool),
    Scenario("read_then_edit", "a Read, an Edit, then the answer", CHANGE, _read_then_edit),
    Scenario("parallel_reads", "two Reads in one response", "what do config.py and greeter.py say?",
             _parallel_reads, order_free=True),
    Scenario("missing_and_unknown", "parallel: a Read, a Read of a missing file, an unknown tool", ASK,
             _missing_and_unknown, order_free=True),
    Scenario("results_in_finishing_order", "parallel calls that finish in another order than called "
             "(a command waiting 2 s, a Read, a command waiting 1 s)", "run the two commands and read config.py",
             _finishing_order, allow=("Bash",)),
    Scenario("invalid_tool_input", "a Read whose input lacks file_path", ASK, _invalid_input),
    Scenario("bash_fails_parallel", "a failing Bash call beside a running Bash call and a Read",
             "run the two commands and read config.py", _bash_fails_parallel, allow=("Bash",), order_free=True),
    Scenario("bash_fails_serial", "a failing Bash call, then an Edit waiting its turn", CHANGE,
             _bash_fails_serial, allow=("Bash",)),
    Scenario("max_tokens_once", "a text answer cut by max_tokens once", ASK, _max_tokens_once),
    Scenario("max_tokens_always", "every answer cut by max_tokens", ASK, _max_tokens_always),
    Scenario("max_tokens_in_tool_json", "max_tokens cuts inside an Edit's JSON", CHANGE, _max_tokens_in_tool_json),
    Scenario("max_tokens_with_thinking", "max_tokens cuts an answer after a thinking block", ASK,
             _max_tokens_thinking, thinking_budget=2048),
    Scenario("http_529", "HTTP 529 on every request, no fallback model", ASK, _http_529),
    Scenario("http_529_fallback", "HTTP 529 from the main model; a fallback model answers", ASK,
             _http_529_fallback, fallback_model=FALLBACK_MODEL),
    Scenario("http_404_fallback", "HTTP 404 (an unknown model) from the main model; a fallback model answers",
             ASK, _http_404_fallback, fallback_model=FALLBACK_MODEL),
    Scenario("http_429_retry_after", "HTTP 429 with retry-after, then the answer", ASK, _http_429),
    Scenario("http_429_fallback", "HTTP 429 on every request to the main model; a fallback model is set", ASK,
             _http_429_fallback, fallback_model=FALLBACK_MODEL),
    Scenario("output_limit_fallback", f"HTTP 529 from {OPUS_MODEL}; {DEFAULT_MODEL}, the fallback model, "
             "answers: each model's max_tokens", ASK, _http_529_to_sonnet, model=OPUS_MODEL,
             fallback_model=DEFAULT_MODEL),
    Scenario("http_500", "HTTP 500 once, then the answer", ASK, _http_500),
    Scenario("stream_error_before_block", "an overloaded_error event while the first text streams", ASK,
             _error_before_block),
    Scenario("stream_error_inside_tool_use", "an overloaded_error event inside a tool_use, after a finished text",
             ASK, _error_inside_tool_use),
    Scenario("stream_error_after_tool_use", "an overloaded_error event after a complete tool_use block", ASK,
             _error_after_tool_use),
    Scenario("output_limit_streaming_fallback", f"{OPUS_MODEL}'s stream breaks before a block is complete: "
             "the max_tokens of the request sent again", ASK, _error_before_block, model=OPUS_MODEL),
    Scenario("disconnect_during_text", "the connection drops while text streams", ASK, _drop_during_text),
    Scenario("disconnect_inside_tool_use", "the connection drops inside a tool_use", ASK, _drop_inside_tool_use),
    Scenario("disconnect_after_tool_use", "the connection drops after a complete tool_use block", ASK,
             _drop_after_tool_use),
    Scenario("disconnect_after_bash_ran", "the connection drops in a text after a Bash call that counts its runs "
             "has run", "run the counting command", lambda ws: _drop_after_bash(ws, 0), allow=("Bash",),
             counts=("count.txt",)),
    Scenario("disconnect_while_bash_runs", "the connection drops while a slow Bash call that counts its runs "
             "still runs", "run the counting command", lambda ws: _drop_after_bash(ws, 5), allow=("Bash",),
             counts=("count.txt",)),
    Scenario("prompt_too_long_once", "'prompt is too long' once, then the answer", ASK, _too_long_once),
    Scenario("prompt_too_long_always", "'prompt is too long' on every request", ASK, _too_long_always),
    Scenario("prompt_too_long_after_tools", "'prompt is too long' for ever after three tool turns", ASK,
             _too_long_after_tools),
    Scenario("tool_use_without_block", "stop_reason tool_use with no tool_use block, every time", ASK,
             _tool_use_without_block),
    Scenario("empty_text_block", "an answer that is one empty text block", ASK, _empty_text),
    Scenario("max_turns", "a model that never stops calling tools, --max-turns 2", ASK, _endless_tools,
             max_turns=2),
    Scenario("hook_pre_tool_use_exit_2", "a PreToolUse hook blocks an Edit of the file just read (exit 2)", CHANGE,
             _read_then_blocked_edit, hooks=_hook("PreToolUse", "echo 'config.py is frozen' >&2; exit 2", "Edit"),
             markers=("config.py is frozen",)),
    Scenario("hook_pre_tool_use_deny", "a PreToolUse hook denies an Edit of the file just read (JSON)", CHANGE,
             _read_then_blocked_edit, hooks=_hook("PreToolUse", _DENY_JSON, "Edit"), markers=("config.py is frozen",)),
    Scenario("hook_pre_tool_use_updated_input", "a PreToolUse hook points the Read at another file", ASK,
             _read_then_answer, hooks=_hook("PreToolUse", _UPDATED_INPUT, "Read"),
             markers=("value = 1", "Hello, {name}")),
    Scenario("hook_post_tool_use_context", "a PostToolUse hook adds context to a Read's result", ASK,
             _read_then_answer, hooks=_hook("PostToolUse", _POST_CONTEXT, "Read"),
             markers=("config.py is generated",)),
    Scenario("hook_stop_exit_2_once", "a Stop hook blocks the first end (exit 2), then lets it end", ASK,
             _stop_hook, hooks=_hook("Stop", _STOP_ONCE), markers=("run the tests first",)),
    Scenario("signed_thinking", "a signed thinking block before a tool call, sent back with its signature", ASK,
             _signed_thinking, thinking_budget=2048),
    Scenario("opus_probe", "a text answer with an Opus model (Claude Code probes first)", ASK, _plain,
             model=OPUS_MODEL),
    Scenario("memory_file", "a workspace with a CLAUDE.md: one Read, then the answer", ASK, _one_tool,
             files={"config.py": CONFIG, "greeter.py": GREETER, "CLAUDE.md": MEMORY},
             markers=("answer in one sentence",)),
    Scenario("memory_file_imports", "a CLAUDE.md whose line @docs/style.md imports another file: one Read, "
             "then the answer", ASK, _one_tool,
             files={"config.py": CONFIG, "greeter.py": GREETER, "CLAUDE.md": IMPORTING, "docs/style.md": IMPORTED},
             markers=("answer in one sentence", "@docs/style.md")),
    Scenario("nested_memory_file", "a CLAUDE.md in the subfolder pkg: two Reads of pkg/helpers.py, then the "
             "answer", ASK, _nested_reads,
             files={"config.py": CONFIG, "CLAUDE.md": MEMORY, "pkg/CLAUDE.md": NESTED, "pkg/helpers.py": HELPERS},
             markers=("snake_case", "answer in one sentence")),
    Scenario("files_changed_between_turns", "config.py (read) and CLAUDE.md change on disk between turns", ASK,
             _changed_behind, files={"config.py": CONFIG, "greeter.py": GREETER, "CLAUDE.md": MEMORY},
             markers=("value = 7", "two sentences")),
    Scenario("write_without_read", "a Write of config.py, which the model never read", CHANGE, _unread(_write),
             counts=("config.py",)),
    Scenario("edit_without_read", "an Edit of config.py, which the model never read", CHANGE, _unread(_edit),
             counts=("config.py",)),
    Scenario("write_after_change", "a Read of config.py; a person adds a line to it; a Write of it", CHANGE,
             _after_change(_write), markers=(PERSON_LINE,), counts=("config.py",)),
    Scenario("edit_after_change", "a Read of config.py; a person adds a line to it (the old text kept); an Edit "
             "of it", CHANGE, _after_change(_edit), markers=(PERSON_LINE,), counts=("config.py",)),
    Scenario("edit_after_change_then_write", "a Read of config.py; a person adds a line; an Edit, then a Write "
             "of it", CHANGE, _after_change(_edit, _write), markers=(PERSON_LINE,), counts=("config.py",)),
    Scenario("write_new_file", "a Write of settings.py, a file that does not exist yet", CHANGE, _write_new,
             counts=("settings.py",)),
    Scenario("unknown_content_block", "a content block of a type no SDK knows, between a text and a Read", ASK,
             _unknown_block),
    Scenario("usage_past_the_window", "the model reports 990,000 input tokens after a tool call (usage only)",
             ASK, _usage_past_the_window),
    Scenario("image_rejected", "HTTP 400 'Could not process image' on the first request", ASK, _image_rejected),
    Scenario("sub_agent_call", "an Agent call (run_in_background not given): the child reads a file and answers",
             "ask a sub-agent what config.py says", _sub_agent_call, markers=(ANSWER_ONE,), children=(CHILD_ONE,)),
    Scenario("two_sub_agents", "two Agent calls in one response; the second child ends about 4 s after the first",
             "ask two sub-agents what config.py and greeter.py say", _two_sub_agents,
             markers=(ANSWER_ONE, ANSWER_TWO), children=(CHILD_ONE, CHILD_TWO)),
    Scenario("background_command_ends_before_next_request", "a Bash call with run_in_background ends while a "
             "foreground command waits 2 s", "run the job in the background", _background_ends_before,
             allow=("Bash",), markers=(QUICK_JOB,)),
    Scenario("background_command_ends_later", "a Bash call with run_in_background (3 s) ends after the model "
             "has answered", "run the job in the background", _background_ends_later, allow=("Bash",),
             markers=(SLOW_JOB,)),
)


def scenario(name: str) -> Scenario:
    """The scenario called ``name``; ``KeyError`` naming the close ones when there is none."""
    for each in SCENARIOS:
        if each.name == name:
            return each
    close = [s.name for s in SCENARIOS if name in s.name or s.name.startswith(name.split("_")[0])]
    raise KeyError(f"no scenario {name!r}" + (f"; did you mean {', '.join(close)}?" if close else
                                             "; dreamloop compare --list prints them"))
