"""Trace: the teaching record of a run, one checkpoint per loop iteration.

A checkpoint is taken where queryLoop() has one: after the turn's tools ran
and before the next ``State`` is built, and once more when the loop ends. It
holds the turn's ``State`` (messages, turn_count, transition), the
``messages_for_query`` that were sent, the turn's ``assistant_messages`` and
``tool_results``, the turn's events, and what the context pipeline did
(``context``), the State's counters, and the next State's messages when a
recovery rewrote them, and (imported from a session file that records
them) the request as sent. Messages are stored once and referred to by uuid, and a
checkpoint's history shares its uuids with the checkpoint before (``SharedList``),
in memory and on disk, so a trace grows linearly with the session. Saved as
JSONL (version 9; versions 1 to 8 still load). The widgets read traces; this
module knows nothing about rendering.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, PlainSerializer, TypeAdapter, ValidationError

from .jsonl import read_jsonl
from .messages import LoopMessage
from .state import Continue, Terminal

__all__ = ["COUNTERS", "TRACE_VERSION", "Checkpoint", "SharedList", "Trace"]

_MESSAGE = TypeAdapter(LoopMessage)

TRACE_VERSION = 9
"""The JSONL format's version: 2 added ``Checkpoint.stop_hook_active``; 3 the header's ``source`` and
``Checkpoint.notes`` (a trace imported from a session file, chapter 10b); 4 the header's ``switches`` (which
feature switches were on); 5 ``Checkpoint.context`` (what the context pipeline did); 6
``Checkpoint.counters`` and ``Checkpoint.next_messages`` (the recovery branches); 7 a checkpoint's
``state_messages``, ``messages_for_query`` and ``next_messages`` as deltas, ``{"of", "keep", "add"}``: the
first ``keep`` uuids of a list the reader already has (``_DELTA_BASES``), then ``add`` (before, every
checkpoint repeated the whole history: 335 MB at 2,000 turns); 8 ``Checkpoint.request`` (the request a session
file recorded for the call); 9 ``child`` lines, the sub-agent runs (``Trace.children``). Versions 1 to 8 still
load (the fields they lack empty)."""

COUNTERS = ("max_output_tokens_recovery_count", "max_output_tokens_override", "has_attempted_reactive_compact",
            "stop_hook_blocks", "token_budget_tracking")
"""The State's counters a checkpoint keeps (``Checkpoint.counters``), in the order the inspector shows them."""


class SharedList(Sequence):
    """A read-only list that shares its items with others: ``base[start:stop]`` of an append-only list.

    A checkpoint's history is the checkpoint before's plus what the turn added, so the trace keeps one list
    per history and each checkpoint a view of it (``Trace.share``): memory linear in the session, not
    quadratic. It reads like a list (``len``, indexing, iteration, ``==`` with a list, ``+`` gives a list,
    ``repr`` as a list's); ``list(view)`` copies it.
    """

    __slots__ = ("_base", "_start", "_stop")

    def __init__(self, base: list[Any], start: int = 0, stop: int | None = None) -> None:
        self._base, self._start, self._stop = base, start, len(base) if stop is None else stop

    def __len__(self) -> int:
        return self._stop - self._start

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            span = range(self._start, self._stop)[index]
            if span.step == 1:
                return self._base[span.start:span.stop]
            return [self._base[i] for i in span]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("SharedList index out of range")
        return self._base[self._start + index]

    def __iter__(self) -> Any:
        return itertools.islice(self._base, self._start, self._stop)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedList) and (other._base, other._start, other._stop) == (self._base, self._start,
                                                                                           self._stop):
            return True
        if not isinstance(other, (list, tuple, SharedList)) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> list[Any]:
        return [*self, *other]

    def __radd__(self, other: Any) -> list[Any]:
        return [*other, *self]

    def __repr__(self) -> str:
        return repr(list(self))

    def extended(self, items: Any) -> "SharedList":
        """This list and ``items`` after it: the same base, appended to, when this view ends where it does."""
        if self._stop == len(self._base):
            self._base.extend(items)
            return SharedList(self._base, self._start, len(self._base))
        return SharedList([*self, *items])


_UuidList = Annotated[list[str], PlainSerializer(list, return_type=list[str])]  # a list or a SharedList


class Checkpoint(BaseModel):
    """One loop iteration, by message uuid (resolve with ``Trace.resolve``).

    * ``turn_count``, ``transition``: the iteration's ``State`` (``transition`` is
      why the previous iteration continued; None for the first).
    * ``state_messages``: ``State.messages`` as the iteration began.
    * ``messages_for_query``: what phase 2 handed to the model call.
    * ``assistant_messages``, ``tool_results``: the turn's two collectors.
    * ``attachments``: other messages the turn added (queued input, system notices).
    * ``events``: the turn's yielded events as dicts, each with ``t`` (seconds
      since the run started) and ``type``; stream events carry the raw event.
    * ``next_transition`` / ``terminal``: how the iteration ended (one of them).
    * ``stop_hook_active``: the State's flag (set while the model answers a stop hook's feedback).
    * ``notes``: short remarks for a reader (an imported session file puts
      what the file says beside the messages here: usage, interrupts, hooks,
      synthesized results, an exchange the real API would have rejected).
    * ``context``: what phase 2 did (``dreamloop.context.ContextRecord.as_dict()``:
      window, thresholds, tokens before the stages and as sent, each stage's
      tokens before and after, staged folds, the compaction's usage); None
      when the pipeline is off (and in traces before version 5).
    * ``counters``: the State's counters as the iteration began (``COUNTERS``:
      resumes, the escalated limit, the reactive compaction, stop-hook blocks,
      the token budget's tracking); empty in traces before version 6.
    * ``next_messages``: the next State's messages when a recovery rewrote them
      (an escalation drops the cut response, a drain or a compaction replaces the
      history); None when the next State is the four collectors in order.
    * ``request``: the request as sent, when the trace was imported from a session
      file that records it (Claude Code 2.1.332's did, ``max_tokens_always``): its
      fields, the system prompt's and tools' sizes, where ``cache_control`` went,
      whether its digest checked
      (``dreamloop.claude_code_requests.request_summary``); the texts of the
      system prompt and tools are in ``Trace.source["request_shapes"]``. None
      otherwise.
    """

    index: int
    turn_count: int
    transition: Continue | None = None
    state_messages: _UuidList = Field(default_factory=list)
    messages_for_query: _UuidList = Field(default_factory=list)
    assistant_messages: list[str] = Field(default_factory=list)
    tool_results: list[str] = Field(default_factory=list)
    attachments: list[str] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)
    next_transition: Continue | None = None
    terminal: Terminal | None = None
    stop_hook_active: bool = False
    notes: list[str] = Field(default_factory=list)
    context: dict[str, Any] | None = None
    counters: dict[str, Any] = Field(default_factory=dict)
    next_messages: _UuidList | None = None
    request: dict[str, Any] | None = None

    @property
    def messages_after(self) -> list[str]:
        """``State.messages`` of the next iteration (or the final history)."""
        if self.next_messages is not None:
            return self.next_messages
        return self.messages_for_query + self.assistant_messages + self.tool_results + self.attachments


class Trace:
    """Checkpoints of one run plus every message they refer to.

    Build one live by passing it to ``query(params, trace=...)`` (the loop
    fills it), ``Trace.load(path)``, or ``dreamloop.import_claude_code(path)`` (a
    session file, one checkpoint per model call).
    ``trace.checkpoints[i]`` is iteration i; ``trace.resolve(uuids)`` gives the
    messages; ``trace.terminal`` the end. ``trace.source`` says where a trace
    that the loop did not record came from (None for the loop's own):
    ``{"kind": "claude_code_session", "path", "note", ...}``. ``trace.switches``
    says which feature switches were on (``QueryParams.switches()``; empty for a
    trace the loop did not record, or saved before version 4). ``trace.children``: the trace of each sub-agent
    run, by the id of the ``Agent`` call that started it (the loop's children, an imported session's side
    chains, a resumed session's: ``QueryEngine.children``); ``save`` writes them (version 9) and ``load`` reads
    them back.
    """

    def __init__(self) -> None:
        self.source: dict[str, Any] | None = None
        self.switches: dict[str, Any] = {}
        self.messages: dict[str, Any] = {}
        self.checkpoints: list[Checkpoint] = []
        self.terminal: Terminal | None = None
        self.children: dict[str, Trace] = {}  # a sub-agent's trace by the parent's Agent call id
        self._events: list[dict[str, Any]] = []
        self._seen: list[tuple[tuple[Any, ...], SharedList]] = []  # the last sequences and their uuids
        self._shared: SharedList | None = None  # the last list share() gave

    # -- recording (called by the loop) ----------------------------------

    def add_message(self, message: Any) -> str:
        """Store a loop message once; returns its uuid."""
        self.messages.setdefault(message.uuid, message)
        return message.uuid

    def add_event(self, t: float, event: Any) -> None:
        """Record one yielded event of the current turn at ``t`` seconds."""
        if event.type == "stream_event":  # the event as the wire held it (the fields it set), nulls included
            record = {"type": "stream_event",
                      "event": event.event.model_dump(mode="json", exclude_unset=True, warnings=False)}
        elif hasattr(event, "uuid"):
            record = {"type": event.type, "uuid": self.add_message(event)}
            if event.type == "progress":
                record.update(tool_use_id=event.tool_use_id, stage=event.data.get("stage"))
        else:
            record = event.model_dump(mode="json")
        record["t"] = round(t, 6)
        self._events.append(record)

    def checkpoint(
        self,
        *,
        state: Any,
        messages_for_query: list[Any],
        assistant_messages: list[Any],
        tool_results: list[Any],
        attachments: list[Any] = (),
        next_transition: Continue | None = None,
        terminal: Terminal | None = None,
        context: dict[str, Any] | None = None,
        next_messages: Any = None,
    ) -> Checkpoint:
        """Close the current iteration: store its collectors and events.

        A turn's State begins with the previous turn's ``messages_for_query``, so
        their uuids are shared (``SharedList``) and only the new messages are read: recording a
        checkpoint costs what is new, not the whole history. ``next_messages``: the next
        State's messages, when a recovery rewrote them.
        """
        ids = lambda messages: [self.add_message(m) for m in messages]  # noqa: E731
        state_ids = self._history_ids(state.messages)
        query_ids = self._history_ids(messages_for_query)
        self._seen = [(tuple(messages_for_query), query_ids)]
        point = Checkpoint.model_construct(  # the fields are known good: no per-uuid validation
            index=len(self.checkpoints),
            turn_count=state.turn_count,
            transition=state.transition,
            state_messages=state_ids,
            messages_for_query=query_ids,
            assistant_messages=ids(assistant_messages),
            tool_results=ids(tool_results),
            attachments=ids(attachments),
            events=self._events,
            next_transition=next_transition,
            terminal=terminal,
            stop_hook_active=state.stop_hook_active,
            context=context,
            counters={name: _plain(getattr(state, name, None)) for name in COUNTERS},
            next_messages=ids(next_messages) if next_messages is not None else None,
        )
        self._events = []
        self.checkpoints.append(point)
        if terminal is not None:
            self.terminal = terminal
        return point

    def _history_ids(self, messages: Any) -> SharedList:
        """The uuids of ``messages``, sharing those of a sequence it extends (the last ones recorded)."""
        sequence = messages if isinstance(messages, tuple) else tuple(messages)
        for known, uuids in reversed(self._seen):
            size = len(known)
            if size and len(sequence) >= size and sequence[:size] == known:  # identical objects: a C-level compare
                found = uuids.extended([self.add_message(m) for m in sequence[size:]]) if len(sequence) > size \
                    else uuids
                break
        else:
            found = SharedList([self.add_message(m) for m in sequence])
        self._seen = [*self._seen[-1:], (sequence, found)]
        return found

    def share(self, uuids: Any) -> SharedList:
        """``uuids`` as a ``SharedList`` sharing the items of the last list shared when it extends that one
        (a loaded or imported checkpoint's history: memory linear in the session)."""
        last = self._shared
        if isinstance(uuids, SharedList):
            found = uuids
        elif last is not None and len(uuids) >= len(last) and uuids[:len(last)] == last[:]:
            found = last.extended(uuids[len(last):]) if len(uuids) > len(last) else last
        else:
            found = SharedList(list(uuids))
        self._shared = found
        return found

    # -- reading ----------------------------------------------------------

    def resolve(self, uuids: list[str]) -> list[Any]:
        """The messages for ``uuids``, in order."""
        return [self.messages[u] for u in uuids]

    def __len__(self) -> int:
        return len(self.checkpoints)

    def __repr__(self) -> str:
        end = self.terminal.reason if self.terminal else "running"
        return f"Trace(checkpoints={len(self.checkpoints)}, messages={len(self.messages)}, terminal={end})"

    # -- JSONL ------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the trace as JSONL: a header, one line per message, per checkpoint, then one line per sub-agent
        run (``children``: ``{"kind": "child", "tool_use_id", "records"}``, the child's own lines as a list)."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as out:
            for record in self._records():
                out.write(json.dumps(record) + "\n")
        return path

    def _records(self) -> Iterator[dict[str, Any]]:
        header: dict[str, Any] = {"kind": "trace", "version": TRACE_VERSION, "switches": self.switches}
        if self.source is not None:
            header["source"] = self.source
        yield header
        for message in self.messages.values():
            yield {"kind": "message", "message": message.model_dump(mode="json")}
        previous = None
        for point in self.checkpoints:
            record = point.model_dump(mode="json")
            for name, value in _deltas(point, previous):
                record[name] = value
            yield {"kind": "checkpoint", "checkpoint": record}
            previous = point
        for tool_use_id, child in self.children.items():
            yield {"kind": "child", "tool_use_id": tool_use_id, "records": list(child._records())}

    @classmethod
    def load(cls, path: str | Path) -> "Trace":
        """Read a trace written by ``save``.

        Blank lines are skipped; a torn last line (a write cut short: no final
        newline and not a JSON object) is skipped with a ``UserWarning``. Anything else
        raises ``ValueError`` naming the file and the line: not a trace (no
        header), a newer trace version, a line that is not a JSON object with a
        known ``kind``, a message or checkpoint that is not valid, a checkpoint
        that refers to a message the trace does not hold; also a directory, an
        unreadable file or bytes that are not UTF-8 (``jsonl.read_jsonl``).
        ``FileNotFoundError`` if there is no file.
        """
        trace = cls()
        lines = read_jsonl(path, header="trace")
        lines.warn_if_torn()
        (_, header), *records = lines.records
        if not isinstance(header.get("version"), int) or header["version"] > TRACE_VERSION:
            raise ValueError(f"{path}: trace version {header.get('version')!r}; this dreamloop reads version "
                             f"{TRACE_VERSION} (a newer dreamloop wrote it?)")
        trace.switches = dict(header.get("switches") or {})
        trace.source = header.get("source")
        for number, record in records:
            try:
                trace._load_record(record)
            except (ValidationError, ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}, line {number}: {_why(error)}") from None
        return trace

    def _load_record(self, record: dict[str, Any]) -> None:
        kind = record.get("kind")
        if kind == "message":
            self.add_message(_MESSAGE.validate_python(record["message"]))
        elif kind == "checkpoint":
            data = record["checkpoint"]
            previous = self.checkpoints[-1] if self.checkpoints else None
            if isinstance(data, dict):
                data = {**data, **_undeltas(data, previous)}
            point = Checkpoint.model_validate(data)
            point.state_messages = self.share(point.state_messages)
            point.messages_for_query = point.state_messages if point.messages_for_query == point.state_messages \
                else self.share(point.messages_for_query)
            held = [*point.state_messages, *point.messages_for_query, *point.assistant_messages,
                    *point.tool_results, *point.attachments, *(point.next_messages or ()),
                    *(e["uuid"] for e in point.events if isinstance(e.get("uuid"), str))]
            missing = next((uuid for uuid in held if uuid not in self.messages), None)
            if missing is not None:
                raise ValueError(f"checkpoint {point.index} refers to message {missing}, which the trace does not hold")
            self.checkpoints.append(point)
            self.terminal = point.terminal or self.terminal
        elif kind == "child" and isinstance(record.get("tool_use_id"), str) and isinstance(record.get("records"), list):
            child, inner_records = Trace(), record["records"]
            if inner_records and isinstance(inner_records[0], dict) and inner_records[0].get("kind") == "trace":
                child.switches = dict(inner_records[0].get("switches") or {})
                child.source = inner_records[0].get("source")
            for index, inner in enumerate(inner_records):
                if index == 0 and isinstance(inner, dict) and inner.get("kind") == "trace":
                    continue
                try:
                    child._load_record(inner if isinstance(inner, dict) else {"kind": type(inner).__name__})
                except (ValidationError, ValueError, KeyError, TypeError) as error:
                    raise ValueError(f"sub-agent run of {record['tool_use_id']}, its record {index}: "
                                     f"{_why(error)}") from None
            self.children[record["tool_use_id"]] = child
        else:
            raise ValueError(f"a record of unknown kind {kind!r} (expected 'message', 'checkpoint' or 'child' with "
                             "'tool_use_id' and 'records')")


_DELTA_FIELDS = ("state_messages", "messages_for_query", "next_messages")
_DELTA_BASES = {  # a delta field -> the lists it may be a delta of ("previous.": the checkpoint before)
    "state_messages": ("previous.messages_after", "previous.state_messages"),
    "messages_for_query": ("state_messages", "previous.messages_for_query"),
    "next_messages": ("messages_for_query", "state_messages"),
}


def _deltas(point: Checkpoint, previous: Checkpoint | None) -> list[tuple[str, Any]]:
    """The delta fields of ``point`` as saved: ``{"of", "keep", "add"}`` against the base sharing most."""
    out = []
    for name in _DELTA_FIELDS:
        value = getattr(point, name)
        if value is None:
            continue
        best, keep = None, 0
        for base_name in _DELTA_BASES[name]:
            base = _base(base_name, point, previous)
            shared = _common_prefix(value, base) if base is not None else 0
            if shared > keep:
                best, keep = base_name, shared
        if best is not None:
            out.append((name, {"of": best, "keep": keep, "add": list(value[keep:])}))
    return out


def _undeltas(data: dict[str, Any], previous: Checkpoint | None) -> dict[str, Any]:
    """The delta fields of a saved checkpoint as lists (``ValueError`` for a delta that does not fit)."""
    out: dict[str, Any] = {}
    point = Checkpoint.model_construct(**{k: v for k, v in data.items() if k in ("state_messages",
                                                                              "messages_for_query")})
    for name in _DELTA_FIELDS:
        value = data.get(name)
        if not isinstance(value, dict):
            continue
        base = _base(value.get("of"), point, previous) if isinstance(value.get("of"), str) else None
        keep, add = value.get("keep"), value.get("add")
        if base is None or not isinstance(keep, int) or not 0 <= keep <= len(base) or not isinstance(add, list):
            raise ValueError(f"{name}: a delta of {value.get('of')!r} that does not fit (keep {keep!r} of "
                             f"{'nothing' if base is None else len(base)})")
        out[name] = [*base[:keep], *add]
        setattr(point, name, out[name])
    return out


def _base(name: str, point: Checkpoint, previous: Checkpoint | None) -> Any:
    if name.startswith("previous."):
        return None if previous is None else getattr(previous, name.removeprefix("previous."), None)
    return getattr(point, name, None) if name in ("state_messages", "messages_for_query") else None


def _common_prefix(a: Any, b: Any) -> int:
    """How many leading items ``a`` and ``b`` share."""
    if isinstance(a, SharedList) and isinstance(b, SharedList) and a._base is b._base and a._start == b._start:
        return min(len(a), len(b))
    n = min(len(a), len(b))
    if a[:n] == b[:n]:  # lists: a C-level compare
        return n
    return next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)


def _plain(value: Any) -> Any:
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _why(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors(include_url=False)[0]
        return f"not valid: {'.'.join(str(p) for p in first['loc']) or 'value'}: {first['msg']}"
    if isinstance(error, KeyError):
        return f"the record has no {error.args[0]!r}"
    return str(error)
