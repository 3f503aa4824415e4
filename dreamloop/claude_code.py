"""Session files rebuilt as loop checkpoints: one per model call, for the inspector.

Owns reading ``~/.claude/projects/<project>/<session>.jsonl`` (unknown record
types and fields, empty files and a torn last line are tolerated; any other bad
line is an error naming it), finding its branches (rewinds, restarts and
sidechains leave several in one file) and rebuilding each model call of one
branch: the conversation messages it was sent, its response, its tool results.
The format and the algorithm: ``claude-code-session-format.md`` (design notes); the files it
is tested on were written by Claude Code 1.0.17 to 2.1.332 (``tests/fixtures/claude-code-sessions/``,
``04_sniffly_fed8ce56_v1.0.17_interrupt-for-tool-use_rejected-tools.jsonl`` the oldest).
A file that records the requests as sent (Claude Code 2.1.332's did, in the scenario
``max_tokens_always``; see ``claude_code_requests``) gives each call the request it was sent, and shows
the continuations of one prompt (a resume after a ``max_tokens`` cut, a stop
hook's feedback) and the ending the file records (a synthetic API-error message).
It knows nothing about widgets, HTTP or running the loop.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from anthropic.types import Message as APIMessage
from pydantic import ValidationError

from .claude_code_requests import REQUEST_TYPES, RecordedRequest, content_hash, recorded_requests, request_summary
from .errors import FileFormatError
from .language import N_, tr_formatted
from .jsonl import read_jsonl
from .fake_api.validation import validate_request
from .messages import (AssistantMessage, SystemMessage, UserMessage, normalize_messages_for_api, tool_result_block,
                       withdrawn)
from .state import Continue, Terminal
from .trace import Checkpoint, SharedList, Trace

__all__ = ["NOT_IN_THE_FILE", "NOTES", "REQUESTS_IN_THE_FILE", "SYNTHESIZED_RESULT", "Branch", "ClaudeCodeSession",
           "import_claude_code", "read_session", "tr_note"]

NOTES: dict[str, str] = {
    "goes_on": N_("the file goes on with {count} user record(s) and no model call: {text}"),
    "unanswered": N_("then request {id} (line {line}, {count} messages) was sent and got no response: {ending}"),
    "sidechain": N_("{tool} call {id}: its subagent's conversation is sidechain branch {tip} in this file "
                    "({count} model calls; open it with branch={branch})"),
    "side_file": N_("{tool} call {id}: its subagent's conversation is its side chain {path} ({count} model calls), "
                    "nested under the call: trace.children[{key}]"),
    "own_file": N_("{tool} call {id}: its subagent's conversation is in its own file, agent-{agent}.jsonl"),
    "error_went_on": N_("Claude Code wrote a synthetic API-error message here ({error}) and went on with the same "
                        "prompt"),
    "interrupted_next": N_("the tools had finished: the person interrupted the next request while it was "
                           "streaming, before any of its response was written (so that call has no checkpoint)"),
    "max_turns": N_("Claude Code's max_turns_reached record: turn {turn} was not started (Terminal max_turns)"),
    "error_ended": N_("the run ended here with Claude Code's synthetic API-error message: {error} "
                      "(Terminal {reason})"),
    "resumed": N_("Claude Code asked the model to resume (a message it wrote itself, of the same prompt, e.g. "
                  "after a stream cut): the next checkpoint goes on with this run, at the same turn (none of the "
                  "source's transition reasons names this)"),
    "interrupted": N_("the person interrupted here: {marker}"),
    "continues": N_("the next call continues the same prompt: {detail}"),
    "file_ends": N_("the file ends after this call's tool results: the run was still going, or Claude Code "
                    "stopped, when the file was last written (no Terminal)"),
    "call_line": N_("model call {number}: {model}, message {id}, {count} record(s) in the file (line {line})"),
    "call_lines": N_("model call {number}: {model}, message {id}, {count} record(s) in the file "
                     "(lines {first}–{last})"),
    "usage": N_("usage: input {total} tokens ({new} new, {read} cache read, {written} cache write), "
                "output {output}"),
    "compacted": N_("after {count} compaction(s): messages_for_query starts at the compaction boundary"),
    "thinking_hidden": N_("{count} thinking block(s) with a signature only: the text was not kept "
                          "(thinking hidden)"),
    "dropped": N_("{count} content block(s) of type {kind} left out (not an API block the SDK knows)"),
    "rejected": N_("{tool} call {id} was rejected by the person at the permission prompt"),
    "synthesized": N_("synthesized is_error tool_result for {ids}: the file holds no result for it "
                      "(interrupted or crashed)"),
    "ui_only": N_("UI-only records around this call, not sent to the model: {listed}"),
    "invalid": N_("the real API would have rejected this exchange: {rejection}"),
    "rendered": N_("attachment records rendered into the next request as <system-reminder> text "
                   "(sent to the model): {listed}"),
    "unsure": N_("attachment records around this call (Claude Code renders some into the next request as "
                 "reminder text; this file does not record which): {listed}"),
    "request_digest_ok": N_("the request as sent is recorded (api-request {id}, line {line}): {model}, max_tokens "
                            "{max_tokens}, system prompt {blocks} block(s) ({chars} chars), {tools} tool(s), "
                            "{messages} message(s) with {reminders} <system-reminder> block(s), cache_control at "
                            "{cache_control}; its digest matches the recorded one"),
    "request_digest_bad": N_("the request as sent is recorded (api-request {id}, line {line}): {model}, max_tokens "
                             "{max_tokens}, system prompt {blocks} block(s) ({chars} chars), {tools} tool(s), "
                             "{messages} message(s) with {reminders} <system-reminder> block(s), cache_control at "
                             "{cache_control}; its digest does NOT match the recorded one"),
    "request_no_digest": N_("the request as sent is recorded (api-request {id}, line {line}): {model}, max_tokens "
                            "{max_tokens}, system prompt {blocks} block(s) ({chars} chars), {tools} tool(s), "
                            "{messages} message(s) with {reminders} <system-reminder> block(s), cache_control at "
                            "{cache_control}; no digest recorded"),
    "missing": N_("{count} message(s) of that request are not in the file: {ids}"),
}
"""The templates of the ``notes`` an imported checkpoint carries (English, kept in the trace): each note is
``NOTES[kind].format(...)``. ``tr_note(note)`` shows one in the current language."""


def tr_note(note: str) -> str:
    """``note`` (one of a checkpoint's ``notes``, made from ``NOTES``) in the current language (``language.tr``);
    a note made elsewhere is returned as it is."""
    return tr_formatted(note, NOTES.values())


NOT_IN_THE_FILE = (
    "This session file records no requests (files of Claude Code 1.0.17 to 2.1.114 were read; 2.1.332 "
    "records them): it holds the conversation only, not the system prompt and not the tool definitions "
    "(nor the reminders Claude Code injected, nor where cache_control went). So messages_for_query is the "
    "conversation the model was sent, without those. Turn counts, transitions and Terminals are read from "
    "what follows each call; the file does not record them."
)
"""What the inspector says about an imported session whose file records no requests."""

REQUESTS_IN_THE_FILE = (
    "This session file records each request as sent (Claude Code 2.1.332 does, observed with dreamloop "
    "compare, scenarios one_tool and max_tokens_always): the system prompt, the tool definitions, the "
    "messages with the <system-reminder> blocks Claude Code added, and where cache_control went. So "
    "messages_for_query is the request's messages, rebuilt from the file (each request's digest is checked), "
    "and each checkpoint's request says the rest. Turn counts, transitions and Terminals are read from what "
    "follows each call (a resume after a max_tokens cut continues the same prompt; a synthetic API-error "
    "message ends the run as an error); the file does not record them."
)
"""What the inspector says about an imported session whose file records the requests as sent."""

SYNTHESIZED_RESULT = (
    "[synthesized by dreamloop] The session file holds no tool_result for this call (the session was "
    "interrupted or crashed before one was written); this is_error result only keeps the exchange valid."
)
"""The content of a ``tool_result`` dreamloop made up for a ``tool_use`` the file leaves unanswered."""

_MESSAGE_TYPES = ("user", "assistant")
_INTERRUPT = "[Request interrupted by user"
_INTERRUPT_FOR_TOOLS = "[Request interrupted by user for tool use]"
_REJECTED = ("The user doesn't want to", "The user doesn't want to take this action")
_SYSTEM_LEVELS = {"error": "error", "warning": "warning"}
_TOO_LONG = "prompt is too long"


# ---------------------------------------------------------------------------
# Reading the file


@dataclass(frozen=True)
class _Record:
    """One line of the file: its 1-based line number and the JSON object."""

    line: int
    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data.get("type"))

    @property
    def uuid(self) -> str | None:
        value = self.data.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def sidechain(self) -> bool:
        return bool(self.data.get("isSidechain"))

    @property
    def is_message(self) -> bool:
        return self.type in _MESSAGE_TYPES and not self.synthetic

    @property
    def synthetic(self) -> bool:
        """A message written locally, not by a model (``model == "<synthetic>"``, such as the "API Error ..."
        that Claude Code 2.1.332 wrote at the end of ``max_tokens_always``)."""
        return self.type == "assistant" and self.data["message"].get("model") == "<synthetic>"

    @property
    def content(self) -> Any:
        return self.data["message"]["content"]

    @property
    def message_id(self) -> str:
        """The API message id of an assistant record (its uuid if the file has none)."""
        return str(self.data["message"].get("id") or self.uuid)

    def blocks(self, kind: str) -> list[dict[str, Any]]:
        content = self.content if self.type in _MESSAGE_TYPES else None
        if not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _parse(path: Path) -> tuple[list[_Record], int | None]:
    """The records of ``path`` and the number of a torn last line (None if the file ends cleanly)."""
    lines = read_jsonl(path, check=lambda number, data: _check_record(path, number, data))  # U+2028: see jsonl
    return [_Record(number, data) for number, data in lines.records], lines.torn.line if lines.torn else None


def _check_record(path: Path, number: int, data: dict[str, Any]) -> None:
    """Known record types must carry what the rebuild reads; unknown types and extra fields are fine."""
    kind = data.get("type")
    if kind not in _MESSAGE_TYPES:
        return
    message = data.get("message")
    if not isinstance(data.get("uuid"), str):
        raise FileFormatError(path, number, f"a {kind} record without a uuid")
    if not isinstance(message, dict) or "content" not in message:
        raise FileFormatError(path, number, f"a {kind} record without message.content")
    content = message["content"]
    if kind == "assistant" and not isinstance(content, list):
        raise FileFormatError(path, number, "an assistant record whose message.content is not a list of blocks")
    if kind == "user" and not isinstance(content, (str, list)):
        raise FileFormatError(path, number, "a user record whose message.content is neither text nor a list of blocks")


# ---------------------------------------------------------------------------
# What the rebuild gives


@dataclass(frozen=True)
class Branch:
    """One line of the conversation tree, named by its tip (the last user/assistant record on it).

    ``sidechain``: a subagent's own conversation (never part of the parent's
    context). ``model_calls``: distinct API responses on it. ``first_prompt``:
    its first prompt typed by a person; ``own_prompt``: the first one that no
    branch listed before it shares (where a rewind took it another way), both
    shortened. ``default``: the branch opened when none is named.
    """

    tip: str
    tip_line: int
    sidechain: bool
    model_calls: int
    first_prompt: str
    own_prompt: str = ""
    default: bool = False
    agent_id: str | None = None

    def __str__(self) -> str:
        kind = "sidechain" if self.sidechain else "main"
        mark = " (default)" if self.default else ""
        return (f"{self.tip}  {kind}{mark}  {self.model_calls} model calls  ends at line {self.tip_line}  "
                f"its own first prompt: {self.own_prompt or '-'}")


class ClaudeCodeSession:
    """A session file, read: its records, branches and, per branch, its model calls.

    ``read_session(path)`` builds one. ``branches`` lists every branch (main
    thread first, newest first; ``default`` marked); ``trace(branch)`` rebuilds
    one branch's model calls, one ``Checkpoint`` each (``steps(branch)``: those checkpoints).
    ``torn_line``: the number of a torn last line that was skipped (or None).
    """

    def __init__(self, path: Path, records: list[_Record], torn_line: int | None) -> None:
        self.path = path
        self.records = records
        self.torn_line = torn_line
        self._by_uuid: dict[str, _Record] = {}
        self._main_above: dict[int, _Record | None] = {}  # a boundary's line -> the last main-thread record above it
        last_main: _Record | None = None
        for record in records:
            if record.uuid and record.uuid not in self._by_uuid:
                self._by_uuid[record.uuid] = record
            if record.type == "system" and record.data.get("subtype") == "compact_boundary":
                self._main_above[record.line] = last_main
            if record.uuid and not record.sidechain:
                last_main = record
        self._prompts_of_sidechains: dict[str, Branch] | None = None
        self._branch_sets: list[tuple[Branch, set[str]]] = self._find_branches()

    def __repr__(self) -> str:
        return (f"ClaudeCodeSession({self.path.name!r}, records={len(self.records)}, "
                f"branches={len(self._branch_sets)})")

    # -- facts about the file ------------------------------------------------

    @property
    def versions(self) -> list[str]:
        """The versions that wrote the file (each record's ``version``), in order of first appearance."""
        return list(dict.fromkeys(str(r.data["version"]) for r in self.records if r.data.get("version")))

    @property
    def requests(self) -> dict[str, RecordedRequest]:
        """The requests the file records as sent, by id, in file order (``{}`` for a file that records none,
        as no file up to 2.1.114 does; Claude Code 2.1.332's did, in ``max_tokens_always``)."""
        found = getattr(self, "_requests", None)
        if found is None:
            found = self._requests = recorded_requests(
                (r.line, r.data) for r in self.records if r.type in (*REQUEST_TYPES, "assistant"))
        return found

    def side_chain_file(self, agent_id: str) -> Path:
        """Where the side chain of subagent ``agent_id`` is: ``<session>/subagents/agent-<id>.jsonl`` beside this
        file (the layout Claude Code 2.1.332 wrote, ``12_dreamloop-compare-probe_agent_foreground_v2.1.332_scrubbed.jsonl``; dreamloop's transcripts use it too)."""
        return self.path.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"

    @property
    def side_chains(self) -> dict[str, str]:
        """The side chains beside this file that name their call: ``tool_use`` id -> subagent id, read from each
        ``<session>/subagents/agent-<id>.meta.json``'s ``toolUseId`` (2.1.332 and dreamloop write it; a meta
        file that cannot be read names no call). ``{}`` when there is no such folder."""
        found: dict[str, str] = {}
        folder = self.path.with_suffix("") / "subagents"
        for meta in sorted(folder.glob("agent-*.meta.json")) if folder.is_dir() else ():
            try:
                call = json.loads(meta.read_text(encoding="utf-8")).get("toolUseId")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(call, str):
                found.setdefault(call, meta.name.removeprefix("agent-").removesuffix(".meta.json"))
        return found

    @property
    def session_id(self) -> str | None:
        return next((str(r.data["sessionId"]) for r in self.records if r.data.get("sessionId")), None)

    @property
    def record_types(self) -> Counter[str]:
        return Counter(r.type for r in self.records)

    @property
    def branches(self) -> list[Branch]:
        return [branch for branch, _ in self._branch_sets]

    @property
    def default_branch(self) -> Branch | None:
        return next((b for b in self.branches if b.default), None)

    def branch(self, name: str | None = None) -> Branch | None:
        """The branch ``name`` (a uuid or its prefix of ≥ 6 characters: its tip, or any record on it).

        None: the default branch. Raises ``KeyError`` for a name that matches none.
        """
        if name is None:
            return self.default_branch
        for branch, _ in self._branch_sets:
            if branch.tip == name or (len(name) >= 6 and branch.tip.startswith(name)):
                return branch
        for branch, members in self._branch_sets:
            if any(u == name or (len(name) >= 6 and u.startswith(name)) for u in members):
                return branch
        known = ", ".join(b.tip[:8] for b in self.branches) or "none"
        raise KeyError(f"no branch of {self.path.name} has a record {name!r} (branch tips: {known})")

    # -- branches ---------------------------------------------------------------

    def _parent(self, record: _Record) -> _Record | None:
        """The record before ``record`` in its chain (through a compaction boundary)."""
        data = record.data
        if record.type == "system" and data.get("subtype") == "compact_boundary" and data.get("logicalParentUuid"):
            logical = self._by_uuid.get(data["logicalParentUuid"])
            if logical is not None:
                return logical
            # the logical parent is not in the file: continue from the last main-thread record above it
            return self._main_above.get(record.line)
        parent = data.get("parentUuid")
        return self._by_uuid.get(parent) if isinstance(parent, str) else None

    def _walk(self, record: _Record) -> list[_Record]:
        """``record`` and its ancestors, newest first (cycles cut)."""
        return list(self._chain(record))

    def _chain(self, record: _Record) -> Iterable[_Record]:
        """``_walk`` step by step: a caller that stops early reads only what it needs."""
        seen = set()
        current: _Record | None = record
        while current is not None and current.line not in seen:
            seen.add(current.line)
            yield current
            current = self._parent(current)

    def _close(self, members: set[int]) -> set[int]:
        """Add the records the walk misses: every block of a response, every result of its calls."""
        by_line = {r.line: r for r in self.records}
        while True:
            chosen = [by_line[n] for n in members]
            message_ids = {r.message_id for r in chosen if r.type == "assistant" and r.is_message}
            tool_ids = {b.get("id") for r in chosen for b in r.blocks("tool_use")}
            added = {
                r.line for r in self.records if r.is_message and r.line not in members and (
                    (r.type == "assistant" and r.message_id in message_ids)
                    or any(b.get("tool_use_id") in tool_ids for b in r.blocks("tool_result")))
            }
            if not added:
                return members
            members |= added

    def _find_branches(self) -> list[tuple[Branch, set[str]]]:
        messages = [r for r in self.records if r.is_message]
        has_descendant: set[int] = set()
        for record in messages:
            for ancestor in itertools.islice(self._chain(record), 1, None):
                if ancestor.line in has_descendant:
                    break
                has_descendant.add(ancestor.line)
        found: list[tuple[Branch, set[int]]] = []
        covered: set[int] = set()
        for tip in reversed(messages):
            if tip.line in has_descendant or tip.line in covered:
                continue  # an inner record, or a parallel result already in a newer branch (2.1.x fan-out)
            walk = self._walk(tip)
            if not any(r.type == "assistant" and r.is_message for r in walk):
                continue  # e.g. a `!` shell record parented to the root: no model call on it
            members = self._close({r.line for r in walk if r.is_message})
            covered |= members
            found.append((tip, members))
        by_line = {r.line: r for r in self.records}
        branches: list[tuple[Branch, set[str]]] = []
        main_first = sorted(found, key=lambda item: (item[0].sidechain, -item[0].line))
        listed: set[int] = set()
        for n, (tip, members) in enumerate(main_first):
            chosen = sorted(members)
            calls = {by_line[m].message_id for m in chosen if by_line[m].type == "assistant"}
            prompts = [m for m in chosen if _is_prompt(by_line[m])]
            texts = prompts or [m for m in chosen if by_line[m].type == "user" and not by_line[m].blocks("tool_result")]
            own = next((m for m in texts if m not in listed), None)
            listed |= members
            branch = Branch(tip=tip.uuid or "", tip_line=tip.line, sidechain=tip.sidechain, model_calls=len(calls),
                            first_prompt=_shorten(_text_of(by_line[prompts[0]].content), 80) if prompts else "",
                            own_prompt=_shorten(f"line {own}: {_text_of(by_line[own].content)}", 80) if own else "",
                            default=n == 0, agent_id=tip.data.get("agentId"))
            branches.append((branch, {by_line[m].uuid or "" for m in chosen}))
        return branches

    def _sidechain_prompts(self) -> dict[str, Branch]:
        """The first prompt of each sidechain branch (full text) → the branch (1.0.x inline subagents)."""
        if self._prompts_of_sidechains is not None:
            return self._prompts_of_sidechains
        found: dict[str, Branch] = {}
        for branch in self.branches:
            if branch.sidechain:
                root = self._walk(self._by_uuid[branch.tip])[-1]
                if root.type == "user":
                    found.setdefault(_text_of(root.content).strip(), branch)
        self._prompts_of_sidechains = found
        return found

    def _members(self, branch: Branch) -> set[str]:
        return next(members for b, members in self._branch_sets if b.tip == branch.tip)

    # -- rebuilding one branch -----------------------------------------------------

    def steps(self, branch: str | None = None) -> list[Checkpoint]:
        """The checkpoints of ``trace(branch)``: one per model call of ``branch`` (default: the default branch),
        [] for an empty file. Each says what the file shows beside the call in its ``notes``."""
        return self.trace(branch).checkpoints

    def trace(self, branch: str | None = None) -> Trace:
        """One branch's model calls rebuilt as a ``Trace``: one checkpoint per call, ``source`` saying what is missing.

        Raises ``KeyError`` for a ``branch`` that names none (``branch()``)."""
        chosen = self.branch(branch)
        rebuild = _Rebuild(self, chosen, self._members(chosen)) if chosen is not None else None
        trace = rebuild.trace() if rebuild is not None else Trace()
        trace.source = {
            "kind": "claude_code_session",
            "path": str(self.path),
            "session_id": self.session_id,
            "claude_code_versions": self.versions,
            "branch": chosen.tip if chosen else None,
            "sidechain": chosen.sidechain if chosen else False,
            "branches": len(self.branches),
            "records": len(self.records),
            "torn_line": self.torn_line,
            "rejected_exchanges": rebuild.rejected if rebuild is not None else [],
            "note": REQUESTS_IN_THE_FILE if self.requests else NOT_IN_THE_FILE,
        }
        if self.requests:
            used = {point.request["id"] for point in trace.checkpoints if point.request is not None}
            trace.source["requests"] = len(self.requests)
            trace.source["request_shapes"] = {
                r.shape: {k: r.body[k] for k in ("system", "tools") if k in r.body}
                for r in self.requests.values() if r.shape and r.id in used}
        return trace


def read_session(path: str | Path) -> ClaudeCodeSession:
    """Read a session file (or a subagent's ``agent-*.jsonl``).

    Raises ``FileNotFoundError``; ``FileFormatError`` (a ``ValueError``) naming
    the line for a line that is not a JSON object or a user/assistant record
    without what every such record has; a torn last line is skipped
    (``session.torn_line``). An empty file gives a session with no branches.

    Example::

        session = read_session("tests/fixtures/claude-code-sessions/04_....jsonl")
        [b.tip[:8] for b in session.branches]          # the default first
        trace = session.trace()                         # StateInspector(trace)
    """
    path = Path(path)
    records, torn = _parse(path)
    return ClaudeCodeSession(path, records, torn)


def import_claude_code(path: str | Path, *, branch: str | None = None) -> Trace:
    """A Claude Code session file (``~/.claude/projects/<project>/<session>.jsonl``) as a Trace.

    One checkpoint per model call of one branch (default: the last main-thread
    branch; ``branch``: the uuid, or a prefix of it, of a branch's tip or any record on it;
    ``read_session(path).branches`` lists them). A file of Claude Code 1.0.17 to 2.1.114
    (the recorded sessions in ``tests/fixtures/claude-code-sessions/``) holds neither the system
    prompt nor the tool definitions, so ``messages_for_query`` is the conversation the model was
    sent without them; a Claude Code 2.1.332 file records the requests of the conversation as sent (the
    kept files of ``max_tokens_always``, ``prompt_too_long_after_tools`` and ``hook_stop_exit_2_once``), so
    ``messages_for_query`` is that request's messages and ``Checkpoint.request`` the rest. ``trace.source["note"]`` says which.
    Raises ``FileFormatError`` for a corrupt line (a torn last line is tolerated), ``KeyError``
    for an unknown branch. The CLI's ``dreamloop import-claude-code`` reads a file the same way.
    """
    return read_session(path).trace(branch)


# ---------------------------------------------------------------------------
# The rebuild of one branch (algorithm steps 4 and 5 of the format notes)


@dataclass
class _Slot:
    """An assistant response and what follows it in the file, until the next response.

    ``output``: the response as the SDK reads it (``dropped``: its blocks the SDK cannot read); ``synthesized``:
    the ids of its calls the file answers nowhere (a result is made up for each). The loop's view of the call
    (its turn, transition, ending, messages by uuid, notes) is its ``Checkpoint``, built beside it.
    """

    message: dict[str, Any]
    records: list[_Record]
    results: list[UserMessage] = field(default_factory=list)
    after: list[Any] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    seen_blocks: set[str] = field(default_factory=set)
    output: AssistantMessage | None = None
    dropped: Counter[str] = field(default_factory=Counter)
    synthesized: list[str] = field(default_factory=list)
    bookkeeping: Counter[str] = field(default_factory=Counter)
    rendered: Counter[str] = field(default_factory=Counter)  # attachments rendered into the next request
    unsure: Counter[str] = field(default_factory=Counter)  # attachments of a file that does not say
    max_turns: int | None = None  # a max_turns_reached attachment's turnCount (the turn refused)

    @property
    def tool_uses(self) -> list[Any]:
        return [b for b in self.output.message.content if b.type == "tool_use"] if self.output else []

    @property
    def lines(self) -> list[int]:
        """The file lines of its assistant records."""
        return [r.line for r in self.records]


_BOUNDARY = "compact_boundary"
_NO_RECORD = _Record(0, {})


class _Rebuild:
    def __init__(self, session: ClaudeCodeSession, branch: Branch, members: set[str]) -> None:
        self.session = session
        self.branch = branch
        self.members = members
        self.preamble: list[Any] = []
        self.slots: list[_Slot] = []
        self.slot_of_message: dict[str, _Slot] = {}
        self.slot_of_tool_use: dict[str, _Slot] = {}
        self.preamble_bookkeeping: Counter[str] = Counter()
        self.preamble_slot = _Slot(message={}, records=[])  # attachments before the first call
        self.endings: dict[str, _Record] = {}  # uuid -> a synthetic API-error message on the branch
        self.hash_of: dict[int, str] = {}  # id() of a conversation message -> its content hash (requests)
        self.sent_cache: dict[str, Any] = {}  # uuid -> a sent message that is none of the conversation's
        self.agents: dict[str, str] = {}  # tool_use id -> subagent id (toolUseResult.agentId, 2.x)
        self.rejected: list[int] = []  # the calls the real API would have refused (their checkpoints' indexes)

    # -- in file order ----------------------------------------------------------

    def trace(self) -> Trace:
        for record in self.session.records:
            if record.is_message:
                if record.uuid in self.members:
                    self._message(record)
            elif record.uuid is None:
                self._note(record)  # unchained bookkeeping (queue, snapshots, titles): by position
            elif self._belongs(record):
                self._chained(record)
        return self._build()

    def _belongs(self, record: _Record) -> bool:
        """A chained non-message record is on the branch if its nearest message ancestor is."""
        for ancestor in itertools.islice(self.session._chain(record), 1, None):
            if ancestor.is_message:
                return ancestor.uuid in self.members
        return record.sidechain == self.branch.sidechain  # before the first message (a root hook, ...)

    def _current(self) -> list[Any]:
        return self.slots[-1].after if self.slots else self.preamble

    def _note(self, record: _Record) -> None:
        if record.type in REQUEST_TYPES:
            return  # the requests as sent: each call shows its own (claude_code_requests)
        label = record.type
        detail = record.data.get("operation") or (record.data.get("data") or {}).get("type") \
            or (record.data.get("attachment") or {}).get("type") or record.data.get("subtype")
        if isinstance(detail, str):
            label += f" ({detail})"
        slot = self.slots[-1] if self.slots else self.preamble_slot
        attachment = record.data.get("attachment") if record.type == "attachment" else None
        if isinstance(attachment, dict) and attachment.get("type") == "max_turns_reached":
            slot.max_turns = int(attachment.get("turnCount") or 0) or -1
        if record.type == "attachment" and record.data.get("rendered"):
            slot.rendered[label] += 1  # its reminder text went into the next request
        elif record.type == "attachment" and not self.session.requests and "rendered" not in record.data:
            slot.unsure[label] += 1  # an older file: some attachments are rendered, which is not recorded
        else:
            (self.slots[-1].bookkeeping if self.slots else self.preamble_bookkeeping)[label] += 1

    def _chained(self, record: _Record) -> None:
        if record.type == "system":
            self._current().append(_system_message(record))
        elif record.synthetic:  # a message Claude Code wrote itself ("API Error: ..."), never sent
            text = _text_of(record.content) or "(a message Claude Code made up locally)"
            if _api_error_ending(record) is not None:
                self.endings[str(record.uuid)] = record
            self._current().append(SystemMessage(uuid=record.uuid, subtype="api_error", content=text, level="error"))
        else:
            self._note(record)  # progress, attachment, unknown chained types: UI only

    def _message(self, record: _Record) -> None:
        if record.type == "assistant":
            self._assistant(record)
            return
        results = record.blocks("tool_result")
        owner = next((self.slot_of_tool_use[b.get("tool_use_id")] for b in results
                      if b.get("tool_use_id") in self.slot_of_tool_use), None)
        if owner is None:
            self._current().append(_user_message(record))
            return
        fresh = [b for b in results if b.get("tool_use_id") not in owner.answered]
        if not fresh:
            return  # a duplicate write of results already placed
        owner.answered |= {b.get("tool_use_id") for b in results}
        owner.results.append(_user_message(record))
        extra = record.data.get("toolUseResult")
        if isinstance(extra, dict) and extra.get("agentId") and results:
            self.agents[str(results[0].get("tool_use_id"))] = str(extra["agentId"])

    def _assistant(self, record: _Record) -> None:
        message = record.data["message"]
        slot = self.slot_of_message.get(record.message_id)
        if slot is None:
            slot = _Slot(message={k: v for k, v in message.items() if k != "content"} | {"content": []}, records=[])
            self.slot_of_message[record.message_id] = slot
            self.slots.append(slot)
        slot.records.append(record)
        for key in ("usage", "stop_reason", "stop_sequence", "model"):
            if message.get(key) is not None:
                slot.message[key] = message[key]  # the last record's values
        for block in record.content:
            key = _block_key(block)
            if key in slot.seen_blocks:
                continue
            slot.seen_blocks.add(key)
            slot.message["content"].append(block)
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self.slot_of_tool_use[block.get("id")] = slot

    # -- checkpoints from slots -----------------------------------------------------

    def _build(self) -> Trace:
        """One checkpoint per slot, in file order; then the runs (``_runs``) and what the file leaves unanswered."""
        trace = Trace()
        ids = lambda messages: [trace.add_message(m) for m in messages]  # noqa: E731
        history: list[Any] = list(self.preamble)
        history_ids: dict[int, list[str]] = {}  # the history list (by id) -> the uuids of its items so far
        epoch_start, epoch = 0, 0
        requests = _Requests()
        for index, slot in enumerate(self.slots):
            slot.output, slot.dropped = _assistant_message(slot, self.session.path)
            messages_in = SharedList(history, epoch_start, len(history))  # a view: history is only appended to
            request, sent = self._sent(slot, messages_in) if self.session.requests else (None, None)
            slot.synthesized = [b.id for b in slot.tool_uses if b.id not in slot.answered]
            if slot.synthesized:
                slot.results.insert(0, UserMessage(
                    uuid=f"synthesized-{slot.synthesized[0]}",
                    message={"role": "user", "content": [tool_result_block(i, SYNTHESIZED_RESULT, is_error=True)
                                                         for i in slot.synthesized]},
                    is_meta=True, source_tool_use_ids=tuple(slot.synthesized)))
            if self.session.requests:
                self.hash_of[id(slot.output)] = content_hash({"role": "assistant", "content": slot.message["content"]})
            state_messages = _shared_ids(trace, messages_in, history_ids)
            point = Checkpoint.model_construct(  # known good: no per-uuid validation
                index=index, turn_count=1, transition=None, state_messages=state_messages,
                messages_for_query=ids(sent) if sent is not None else state_messages,
                assistant_messages=ids([slot.output]), tool_results=ids(slot.results), attachments=[],
                next_transition=None, terminal=None, notes=[],
                request=request_summary(request) if request is not None else None,
                events=[], counters={},  # given, not defaulted: a default factory costs pydantic a signature lookup
            )
            trace.checkpoints.append(point)
            history += [slot.output, *slot.results]
            called_at = epoch
            for item in slot.after:
                history.append(item)
                if isinstance(item, SystemMessage) and item.subtype == _BOUNDARY:
                    epoch += 1
                    epoch_start = len(history) - 1  # the new context starts at the boundary
            rejection = requests.rejection(messages_in, slot.output)
            if rejection is not None:
                self.rejected.append(index)
            _describe(point, slot, called_at, rejection, self.preamble_bookkeeping if index == 0 else None)
            self._subagents(trace, point, slot)
            _describe_sent(point, slot, request, self.preamble_slot if index == 0 else None)
        companions = frozenset(u for m in (x for slot in self.slots for x in slot.after) if isinstance(m, UserMessage)
                               for u in [m.uuid] if (self.session._by_uuid.get(u) or _NO_RECORD).data.get("turnCompanion"))
        _runs(trace, self.slots, self.endings, companions)
        _link(trace)
        self._refused(trace.checkpoints)
        if trace.checkpoints:
            typed = [m for m in self.slots[-1].after if isinstance(m, UserMessage) and not _is_interrupt(m)]
            if typed:
                trace.checkpoints[-1].notes.append(NOTES["goes_on"].format(
                    count=len(typed), text=_shorten(_text_of(typed[0].message['content']), 60)))
        return trace

    def _sent(self, slot: _Slot, conversation: list[Any]) -> tuple[RecordedRequest | None, list[Any] | None]:
        """The request ``slot``'s call was sent (its first record's ``requestRef``) and its messages as loop
        messages; ``(None, None)`` when the file does not record it.

        The request's messages are matched in order with the conversation's by the hash the file names
        messages by (``content_hash``): a match is that conversation message; a message that differs (reminder
        blocks added, user messages merged) is a new one, ``sent-<hash>-<n>`` (the n-th of that hash).
        """
        ref = next((r.data.get("requestRef") for r in slot.records if r.data.get("requestRef")), None)
        request = self.session.requests.get(str(ref)) if ref else None
        if request is None:
            return None, None
        hashes = []
        for message in conversation:
            known = self.hash_of.get(id(message))
            if known is None and isinstance(message, UserMessage):
                known = self.hash_of[id(message)] = content_hash(message.message)
            hashes.append(known)
        sent: list[Any] = []
        at = 0
        seen: Counter[str] = Counter()
        for key, message in zip(request.hashes, request.messages):
            if message is None:
                continue
            found = next((i for i in range(at, len(hashes)) if hashes[i] == key), None)
            if found is not None:
                sent.append(conversation[found])
                at = found + 1
                continue
            seen[key] += 1
            uuid = f"sent-{key[:20]}-{seen[key]}"
            made = self.sent_cache.get(uuid)
            if made is None:
                made = self.sent_cache[uuid] = _sent_message(uuid, message, slot.output.message.model)
            sent.append(made)
        return request, sent

    def _refused(self, points: list[Checkpoint]) -> None:
        """A recorded request no response answers (the API refused it) is noted on the call before it."""
        by_request = {point.request["id"]: point for point in points if point.request is not None}
        for request in self.session.requests.values():
            base = by_request.get(request.base) if request.base else None
            if request.answered or base is None:
                continue
            ending = base.terminal.error if base.terminal is not None and base.terminal.error else "no response"
            base.notes.append(NOTES["unanswered"].format(id=request.id[:8], line=request.line,
                                                         count=len(request.messages), ending=_shorten(ending, 120)))

    def _subagents(self, trace: Trace, point: Checkpoint, slot: _Slot) -> None:
        """Say where the conversation of each Task/Agent call's subagent is, and nest it under the call
        (``trace.children[call id]``) when it is in this file or in a side-chain file beside it."""
        roots = self.session._sidechain_prompts() if not self.branch.sidechain else {}
        beside = self.session.side_chains if not self.branch.sidechain else {}
        for call in slot.tool_uses:
            prompt = call.input.get("prompt") if isinstance(call.input, dict) else None
            if call.name not in ("Task", "Agent") or not prompt:
                continue
            found = roots.get(prompt.strip())
            agent = self.agents.get(call.id) or beside.get(call.id)
            if found is not None:
                point.notes.append(NOTES["sidechain"].format(tool=call.name, id=call.id, tip=found.tip[:8],
                                                            count=found.model_calls, branch=repr(found.tip[:8])))
                trace.children[call.id] = self.session.trace(found.tip)
            elif agent is not None:
                path = self.session.side_chain_file(agent)
                if path.exists():
                    child = read_session(path).trace()
                    trace.children[call.id] = child
                    point.notes.append(NOTES["side_file"].format(
                        tool=call.name, id=call.id, path=f"{path.parent.parent.name}/subagents/{path.name}",
                        count=len(child.checkpoints), key=repr(call.id)))
                else:
                    point.notes.append(NOTES["own_file"].format(tool=call.name, id=call.id, agent=agent))


def _runs(trace: Trace, slots: list[_Slot], endings: dict[str, _Record] | None = None,
          companions: frozenset[str] = frozenset()) -> None:
    """turn_count, transition, Terminal and the attachments of each checkpoint of ``trace`` (one per slot),
    from what follows its call in the file.

    A run ends at an interrupt, at a synthetic API-error message (``endings``: the ending the file records, as
    when Claude Code 2.1.332's resumes ran out in ``max_tokens_always``), or at a call without tool_use that
    nothing of the same prompt continues; a resume after a ``max_tokens`` cut and a stop hook's feedback
    continue it (``_continuation``), keeping its turn_count, as only ``next_turn`` adds one.
    """
    endings = endings or {}
    following: Continue | None = None
    same = False  # the previous call is resumed at the same turn (no transition of its own)
    points = trace.checkpoints
    for k, (point, slot) in enumerate(zip(points, slots)):
        if k and same:
            point.turn_count, point.transition = points[k - 1].turn_count, points[k - 1].transition
        elif k == 0 or points[k - 1].terminal is not None or following is None:
            point.turn_count, point.transition = 1, None
        else:
            point.transition = following
            point.turn_count = points[k - 1].turn_count + (1 if following.reason == "next_turn" else 0)
        following = None
        markers = [m for m in [*slot.results, *slot.after] if _is_interrupt(m)]
        interrupted = bool(markers)
        last = k == len(points) - 1
        ending = next((_api_error_ending(endings[m.uuid]) for m in slot.after
                       if isinstance(m, SystemMessage) and m.uuid in endings), None)
        typed = any(isinstance(m, UserMessage) and not m.is_meta and not _is_interrupt(m)
                    and not m.source_tool_use_ids for m in slot.after)
        if ending is not None and not last and not typed:  # the same prompt goes on: not its end
            point.notes.append(NOTES["error_went_on"].format(error=_shorten(ending[1], 80)))
            ending = None
        same = False
        if not interrupted and ending is None and not slot.tool_uses and not last:
            following = _continuation(slot, point.transition, companions)
            if following is not None and following.reason == "next_turn":  # a resume of another kind
                same, following = True, point.transition
        new_run = interrupted or ending is not None or (not slot.tool_uses and following is None and not same)
        during_tools = any(_INTERRUPT_FOR_TOOLS in _marker_text(m) for m in markers) \
                or any(_is_interrupt(m) for m in slot.results) or bool(slot.synthesized)
        if slot.tool_uses and interrupted and during_tools:
            point.terminal = Terminal(reason="aborted_tools", turn_count=point.turn_count)
        elif slot.tool_uses and interrupted:  # the calls had finished: the next request was streaming
            point.terminal = Terminal(reason="aborted_streaming", turn_count=point.turn_count + 1)
            point.notes.append(NOTES["interrupted_next"])
        elif interrupted:
            point.terminal = Terminal(reason="aborted_streaming", turn_count=point.turn_count)
        elif slot.max_turns and slot.tool_uses:  # Claude Code refused the next turn (--max-turns)
            turn = slot.max_turns if slot.max_turns > 0 else point.turn_count + 1
            point.terminal = Terminal(reason="max_turns", turn_count=turn)
            point.notes.append(NOTES["max_turns"].format(turn=turn))
        elif ending is not None:  # after tool results, the refused request was the next turn's
            reason, error = ending
            point.terminal = Terminal(reason=reason, turn_count=point.turn_count + (1 if slot.tool_uses else 0),
                                     error=error)
            point.notes.append(NOTES["error_ended"].format(error=_shorten(error, 100), reason=reason))
        elif same:
            point.notes.append(NOTES["resumed"])
        elif not slot.tool_uses and following is None:
            point.terminal = Terminal(reason="completed", turn_count=point.turn_count)
        elif slot.tool_uses:
            following = Continue(reason="next_turn")
        if new_run:  # what follows begins the next run; only notices and the interrupt belong to this one
            point.attachments = [trace.add_message(m) for m in slot.after
                                 if isinstance(m, SystemMessage) or _is_interrupt(m)]
        else:
            point.attachments = [trace.add_message(m) for m in slot.after]
        if interrupted:
            point.notes.append(NOTES["interrupted"].format(marker=_shorten(_marker_text(markers[0]), 70)))
        if following is not None and not same and following.reason != "next_turn":
            point.notes.append(NOTES["continues"].format(detail=following.detail))
        if last and point.terminal is None:
            point.notes.append(NOTES["file_ends"])


def _link(trace: Trace) -> None:
    """Each checkpoint's ``next_transition`` (the transition of the call that continues its run) and the
    trace's Terminal (the last run's), once ``_runs`` has read them."""
    points = trace.checkpoints
    for k, point in enumerate(points):
        if point.terminal is None and k + 1 < len(points) and points[k + 1].transition is not None:
            point.next_transition = points[k + 1].transition
        trace.terminal = point.terminal or trace.terminal


def _continuation(slot: _Slot, transition: Continue | None,
                  companions: frozenset[str] = frozenset()) -> Continue | None:
    """How the call after ``slot``'s (which asked for no tool) continues the same prompt, or None (a new prompt).

    Between the two calls the file holds either nothing (after a ``max_tokens`` cut: the same request with a
    higher limit, ``max_output_tokens_escalate``) or only messages the program wrote itself (``isMeta``;
    Claude Code 2.1.332 gave them the prompt's own ``promptId`` in ``max_tokens_always``): after a
    ``max_tokens`` cut its "resume" reminder (``max_output_tokens_recovery``), after the stop hooks ran, their
    feedback (``stop_hook_blocking``). A message a person typed starts a new run. ``companions``: uuids of
    meta records the file marks as part of the turn (``turnCompanion``): any other resume of the same prompt
    (answered ``next_turn``, which ``_runs`` reads as "same run, same turn").
    """
    users = [m for m in slot.after if isinstance(m, UserMessage)]
    if any(not m.is_meta for m in users):
        return None
    attempt = (transition.attempt or 0) + 1 if transition is not None else 1
    cut = slot.output.message.stop_reason == "max_tokens"
    if cut and not users:
        return Continue(reason="max_output_tokens_escalate", detail="the cut response asked again (no message added)")
    if not users:
        return None
    if cut:
        attempt = attempt if transition is not None and transition.reason == "max_output_tokens_recovery" else 1
        return Continue(reason="max_output_tokens_recovery", attempt=attempt,
                        detail=f"resume reminder {attempt} after a max_tokens cut")
    if any(isinstance(m, SystemMessage) and m.subtype == "stop_hook_summary" for m in slot.after):
        attempt = attempt if transition is not None and transition.reason == "stop_hook_blocking" else 1
        return Continue(reason="stop_hook_blocking", attempt=attempt,
                        detail=f"a stop hook blocked the end ({attempt}); its feedback goes to the model")
    if any(m.uuid in companions for m in users):  # another resume Claude Code wrote (e.g. after a stream cut)
        return Continue(reason="next_turn")  # read by _runs as "the same run goes on, same turn"
    return None


def _api_error_ending(record: _Record) -> tuple[str, str] | None:
    """The Terminal reason and error text of a synthetic API-error message, or None (another synthetic message)."""
    data = record.data
    text = _text_of(record.content)
    details = str(data.get("errorDetails") or "")
    if not (data.get("isApiErrorMessage") or data.get("apiError") or text.startswith("API Error")):
        return None
    said = " ".join(part for part in (text, details) if part) or str(data.get("apiError") or data.get("error"))
    if _TOO_LONG in f"{text} {details}".lower():
        return "prompt_too_long", said
    return "model_error", said


# ---------------------------------------------------------------------------
# Records → loop messages


def _user_message(record: _Record) -> UserMessage:
    ids = tuple(str(b.get("tool_use_id")) for b in record.blocks("tool_result"))
    meta = bool(record.data.get("isMeta") or record.data.get("isCompactSummary"))
    return UserMessage(uuid=record.uuid, message={"role": "user", "content": record.content}, is_meta=meta,
                       source_tool_use_ids=ids)


def _assistant_message(slot: _Slot, path: Path) -> tuple[AssistantMessage, Counter[str]]:
    data = dict(slot.message)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    data["usage"] = {"input_tokens": 0, "output_tokens": 0, **usage}
    data.setdefault("type", "message")
    data.setdefault("role", "assistant")
    data.setdefault("model", "unknown")
    data.setdefault("stop_reason", None)
    data.setdefault("stop_sequence", None)
    kept, dropped = [], Counter()
    for block in data["content"]:
        try:
            APIMessage.model_validate({**data, "content": [block]})
        except ValidationError:
            dropped[str(block.get("type") if isinstance(block, dict) else type(block).__name__)] += 1
            continue
        kept.append(block)
    try:
        message = APIMessage.model_validate({**data, "content": kept})
    except ValidationError as error:
        raise FileFormatError(path, slot.records[0].line,
                              f"an assistant message the SDK cannot read: {error}") from None
    first = slot.records[0]
    return AssistantMessage(uuid=first.uuid, message=message, request_id=first.data.get("requestId")), dropped


def _sent_message(uuid: str, message: dict[str, Any], model: str) -> Any:
    """A message of a recorded request that is none of the conversation's, as a loop message (None: unreadable).

    A user message stays the API's dict (reminder blocks and all); an assistant message becomes an
    ``AssistantMessage`` whose blocks the SDK can read. ``cache_control`` is left out: it moves from
    request to request, and each request's summary says where it went.
    """
    content = message.get("content")
    if isinstance(content, list):
        content = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
                   for b in content]
    if message.get("role") != "assistant":
        ids = tuple(str(b.get("tool_use_id")) for b in content or [] if isinstance(b, dict)
                    and b.get("type") == "tool_result") if isinstance(content, list) else ()
        return UserMessage(uuid=uuid, message={"role": "user", "content": content}, source_tool_use_ids=ids)
    data = {"id": uuid, "type": "message", "role": "assistant", "model": model, "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
    kept = []
    for block in content if isinstance(content, list) else []:
        try:
            APIMessage.model_validate({**data, "content": [block]})
        except ValidationError:
            continue
        kept.append(block)
    return AssistantMessage(uuid=uuid, message=APIMessage.model_validate({**data, "content": kept}))


def _system_message(record: _Record) -> SystemMessage:
    data = record.data
    subtype = str(data.get("subtype") or "hook_output")
    level = _SYSTEM_LEVELS.get(str(data.get("level")), "info")
    if subtype == "api_error":
        error = data.get("error")
        cause = error.get("cause", {}).get("code") if isinstance(error, dict) and isinstance(error.get("cause"), dict) \
            else None
        said = cause or (error.get("message") if isinstance(error, dict) else error) or "an API error"
        retry = f" (retry {data.get('retryAttempt')}/{data.get('maxRetries')}" \
                f", next in {float(data.get('retryInMs') or 0) / 1000:.1f} s)" if data.get("retryAttempt") else ""
        text, level = f"API error: {said}{retry}", "error"
    elif subtype == _BOUNDARY:
        meta = data.get("compactMetadata") or {}
        text = (f"Conversation compacted ({meta.get('trigger', '?')}, {meta.get('preTokens', '?')} tokens before): "
                "the model's context starts again from the summary that follows")
    elif subtype == "stop_hook_summary":
        hooks = [h.get("command", "?") for h in data.get("hookInfos") or [] if isinstance(h, dict)]
        errors = data.get("hookErrors") or []
        text = f"stop hooks ran ({data.get('hookCount', len(hooks))}): {', '.join(hooks) or '?'}"
        if errors:
            text += f"; errors: {errors}"
        if data.get("preventedContinuation"):
            text += "; they prevented continuation"
    elif subtype == "turn_duration":
        text = f"the turn took {float(data.get('durationMs') or 0) / 1000:.1f} s ({data.get('messageCount')} messages)"
    else:
        text = _text_of(data.get("content")) or json.dumps({k: v for k, v in data.items() if k not in _ENVELOPE})[:300]
    return SystemMessage(uuid=record.uuid, subtype=subtype, content=text, level=level)


_ENVELOPE = {"uuid", "parentUuid", "logicalParentUuid", "sessionId", "cwd", "gitBranch", "version", "userType",
             "isSidechain", "timestamp", "slug", "entrypoint", "type", "subtype", "level", "isMeta"}


def _block_key(block: Any) -> str:
    """Identity of a content block, to drop duplicate writes (tool_use by id, others by content)."""
    if isinstance(block, dict) and block.get("type") == "tool_use":
        return f"tool_use:{block.get('id')}"
    return hashlib.sha256(json.dumps(block, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------
# Reading what a call shows


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_NOT_TYPED = ("<command-", "<local-command", "<bash-", _INTERRUPT)


def _is_prompt(record: _Record) -> bool:
    """A user record a person typed (not a tool result, meta text, command echo, interrupt or summary)."""
    data = record.data
    if record.type != "user" or record.blocks("tool_result") or data.get("isMeta") or data.get("isCompactSummary"):
        return False
    text = _text_of(record.content).lstrip()
    return bool(text) and not text.startswith(_NOT_TYPED)


def _is_interrupt(message: Any) -> bool:
    if not isinstance(message, UserMessage):
        return False
    content = message.message.get("content")
    if _text_of(content).lstrip().startswith(_INTERRUPT):
        return True
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" and _text_of(b.get("content")).startswith(_INTERRUPT)
        for b in content)


def _marker_text(message: UserMessage) -> str:
    content = message.message.get("content")
    texts = [_text_of(b.get("content")) for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
        if isinstance(content, list) else []
    return next((t for t in [_text_of(content), *texts] if t.lstrip().startswith(_INTERRUPT)), _text_of(content))


def _shared_ids(trace: Trace, messages: Any, history_ids: dict[int, list[str]]) -> Any:
    """The uuids of a call's ``messages`` (a view of the rebuild's history) as a view of one uuid list."""
    if not isinstance(messages, SharedList):
        return [trace.add_message(m) for m in messages]
    uuids = history_ids.setdefault(id(messages._base), [])
    uuids += [trace.add_message(m) for m in messages._base[len(uuids):messages._stop]]
    return SharedList(uuids, messages._start, messages._stop)


class _Requests:
    """``_rejection`` for each call of one branch in turn, in time linear in the branch.

    Each call's request is the one before's plus what followed it (within a compaction's epoch), so
    the normalized messages are extended, not rebuilt (``normalize_messages_for_api`` folds left: the
    last message may merge with the new ones), and validation skips the messages that passed in the
    request before (``validate_request(checked=)``) while every request so far has passed.
    """

    def __init__(self) -> None:
        self.base: list[Any] | None = None
        self.start = self.stop = 0
        self.messages: list[dict[str, Any]] = []
        self.checked = 0

    def rejection(self, messages_in: SharedList, output: AssistantMessage) -> str | None:
        base, start, stop = messages_in._base, messages_in._start, messages_in._stop
        if base is not self.base or start != self.start or stop < self.stop or withdrawn(base[self.stop:stop]):
            self.base, self.start, self.stop, self.messages, self.checked = base, start, start, [], 0
        new = normalize_messages_for_api(base[self.stop:stop])
        self.stop = stop
        if new and self.messages and self.messages[-1]["role"] == new[0]["role"]:
            last = self.messages.pop()
            new = [_merged(last, new[0]), *new[1:]]
            self.checked = min(self.checked, len(self.messages))
        self.messages += new
        messages = self.messages
        if messages and messages[-1]["role"] != "user":
            problem_text = "the conversation before this call ends with an assistant message, not a user message"
            self.checked = 0
            return problem_text
        problem = validate_request({"model": output.message.model, "max_tokens": 4096, "messages": messages},
                                   checked=self.checked)
        self.checked = max(len(messages) - 1, 0) if problem is None else 0  # the last may merge with what follows
        return problem.message if problem else None


def _merged(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two same-role messages as ``normalize_messages_for_api`` merges them (a user's tool results first)."""
    content = [*first["content"], *second["content"]]
    if first["role"] == "user":
        content = [b for b in content if b.get("type") == "tool_result"] + \
                  [b for b in content if b.get("type") != "tool_result"]
    return {"role": first["role"], "content": content}


def _rejection(messages_in: list[Any], output: AssistantMessage) -> str | None:
    """The real API's objection to this exchange (the offline API's validation), or None."""
    messages = normalize_messages_for_api(messages_in)
    if messages and messages[-1]["role"] != "user":
        return "the conversation before this call ends with an assistant message, not a user message"
    problem = validate_request({"model": output.message.model, "max_tokens": 4096, "messages": messages})
    return problem.message if problem else None


def _describe(point: Checkpoint, slot: _Slot, epoch: int, rejection: str | None, preamble: Counter[str] | None) -> None:
    """The notes a reader sees beside the checkpoint (``epoch``: compactions before the call)."""
    message = slot.output.message
    lines = slot.lines
    usage = message.usage
    cached = (usage.cache_read_input_tokens or 0) + (usage.cache_creation_input_tokens or 0)
    call = {"number": point.index + 1, "model": message.model, "id": slot.message.get("id"), "count": len(lines)}
    point.notes.append(NOTES["call_line"].format(**call, line=lines[0]) if len(lines) == 1 else
                       NOTES["call_lines"].format(**call, first=lines[0], last=lines[-1]))
    point.notes.append(NOTES["usage"].format(total=usage.input_tokens + cached, new=usage.input_tokens,
                                             read=usage.cache_read_input_tokens or 0,
                                             written=usage.cache_creation_input_tokens or 0,
                                             output=usage.output_tokens))
    if epoch:
        point.notes.append(NOTES["compacted"].format(count=epoch))
    hidden = sum(1 for b in message.content if b.type == "thinking" and not b.thinking)
    if hidden:
        point.notes.append(NOTES["thinking_hidden"].format(count=hidden))
    for kind, count in slot.dropped.items():
        point.notes.append(NOTES["dropped"].format(count=count, kind=repr(kind)))
    names = {b.id: b.name for b in slot.tool_uses}
    for result in _result_blocks(slot.results):
        if result.get("is_error") and _text_of(result.get("content")).startswith(_REJECTED):
            point.notes.append(NOTES["rejected"].format(tool=names.get(result.get("tool_use_id"), "?"),
                                                        id=result.get("tool_use_id")))
    if slot.synthesized:
        point.notes.append(NOTES["synthesized"].format(ids=", ".join(slot.synthesized)))
    counts = (preamble or Counter()) + slot.bookkeeping
    if counts:
        listed = ", ".join(f"{n}× {label}" for label, n in sorted(counts.items()))
        point.notes.append(NOTES["ui_only"].format(listed=listed))
    if rejection:
        point.notes.append(NOTES["invalid"].format(rejection=rejection))


def _describe_sent(point: Checkpoint, slot: _Slot, request: RecordedRequest | None, preamble: _Slot | None) -> None:
    """The notes on what went to the model besides the conversation: the recorded request, the attachments."""
    rendered = (preamble.rendered if preamble else Counter()) + slot.rendered
    unsure = (preamble.unsure if preamble else Counter()) + slot.unsure
    listed = lambda counts: ", ".join(f"{n}× {label}" for label, n in sorted(counts.items()))  # noqa: E731
    if rendered:
        point.notes.append(NOTES["rendered"].format(listed=listed(rendered)))
    if unsure:
        point.notes.append(NOTES["unsure"].format(listed=listed(unsure)))
    if request is None:
        return
    summary = request_summary(request)
    params = summary["params"]
    system = summary["system"]
    reminders = summary["reminders"]
    kind = {True: "request_digest_ok", False: "request_digest_bad", None: "request_no_digest"}[request.digest_ok]
    point.notes.append(NOTES[kind].format(
        id=request.id[:8], line=request.line, model=params.get("model", "?"), max_tokens=params.get("max_tokens", "?"),
        blocks=len(system), chars=" + ".join(f"{n:,}" for n in system) or "0", tools=len(summary["tools"]),
        messages=summary["messages"], reminders=reminders, cache_control=", ".join(summary["cache_control"]) or "none"))
    if request.missing:
        point.notes.append(NOTES["missing"].format(count=len(request.missing),
                                                   ids=", ".join(m[:12] for m in request.missing)))


def _result_blocks(messages: Iterable[UserMessage]) -> list[dict[str, Any]]:
    return [b for m in messages for b in m.message["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
