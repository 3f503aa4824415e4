"""QueryEngine: a session across several user inputs (``QueryEngine.submitMessage()``).

The engine owns what outlives one run of the loop: the history, the queue of
input typed while the loop runs, and the transcript file (``transcript.py``
holds its format: one record per loop message, plus one per finished tool
call). Every record an event makes is on disk before the event is handed on,
so a crash loses at most the line being written; ``QueryEngine.resume``
repairs what a crash left before anything is sent. The loop itself is ``query()``;
the ``user_prompt_submit`` hooks run here, before it starts.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from functools import partial
from pathlib import Path
from typing import Any, AsyncIterator, Iterator, Sequence

from .errors import TranscriptBusy, TranscriptWarning
from .hooks import submit_prompt
from .messages import AttachmentMessage, SystemMessage, new_uuid, user_message
from .claude_code import import_claude_code
from .query import QueryParams, QueryRun, query
from .state import Terminal
from .trace import Trace
from .transcript import (
    append_records,
    finished_call,
    inspect_side_chains,
    inspect_transcript,
    last_chained_uuid,
    load_transcript,
    lock_transcript,
    repair_messages,
    run_ended_record,
    set_aside_record,
    side_chain_path,
    side_chain_record,
    torn_line_record,
    transcript_record,
    write_side_chain_meta,
)

__all__ = ["QueryEngine", "load_transcript"]


class _SideChain:
    """A child's side chain as this engine writes it: its file, how many of the child's messages are on disk,
    the last record's uuid, and what a failed write left pending."""

    def __init__(self, path: Path) -> None:
        self.path, self.written, self.parent, self.pending = path, 0, None, []


class QueryEngine:
    """A conversation with the loop: ``async for event in engine.submit_message("...")``.

    ``defaults`` are ``QueryParams`` fields used for every run (``model``,
    ``tools``, ``system_prompt``, ``max_turns``, ``workspace``, ...).
    ``transcript`` is a JSONL path (None: memory only): each message and each
    finished tool call is appended and fsynced before its event is yielded.
    ``enqueue(text)`` queues input while a run is going; the loop
    drains the queue at phase 5 as ``queued_command`` attachments, and what
    is still queued when a run ends ``completed`` starts the next run.
    ``last_run`` is the latest ``QueryRun`` (its ``terminal`` and ``trace``);
    ``repair`` is the ``resume_repair`` notice of ``resume()``, if it repaired anything.
    ``children``: each sub-agent run's trace by the id of the ``Agent`` call that started it, this engine's runs'
    and, after ``resume()``, those its side chains hold (``transcript.py``: each child's messages are written to
    a side-chain file beside the transcript, as they come).

    One writer per transcript: a run and a resume's repair hold the file's lock, and a run starts only if
    the file ends where this engine last wrote it; otherwise ``TranscriptBusy`` (before anything is written
    or sent) says so. A new engine on a transcript that already holds records is refused the same way: use
    ``QueryEngine.resume``.
    """

    def __init__(self, *, transcript: str | Path | None = None, session_id: str = "dreamloop-session",
                 messages: list[Any] | None = None, **defaults: Any) -> None:
        self.defaults = defaults
        self.messages: list[Any] = list(messages or [])
        self.session_id = session_id
        self.transcript = Path(transcript) if transcript else None
        self.queue: list[str] = []
        self.last_run: QueryRun | None = None
        self.repair: SystemMessage | None = None
        self._written = 0  # how many of self.messages are in the transcript
        self._parent: str | None = None  # uuid of the last record written (parentUuid of the next)
        self._locked = False  # this engine holds the transcript's lock (a run, a resume's repair)
        self._pending: list[Any] = []  # messages, finished calls and records not on disk yet (a write failed)
        self.write_error: OSError | None = None  # the last transcript write that failed, until one succeeds
        self.children: dict[str, Trace] = {}  # the sub-agents' traces, by the parent's Agent call id
        self._sides: dict[str, _SideChain] = {}  # a child's side chain being written, by agent id
        if self.transcript is not None and last_chained_uuid(self.transcript) is not None:
            raise TranscriptBusy(f"{self.transcript}: this transcript already holds a session; continue it with "
                                 "QueryEngine.resume(path), or give a new file.")
        if self.messages:
            with self._writing():
                self._save()

    @classmethod
    def resume(cls, transcript: str | Path, **defaults: Any) -> "QueryEngine":
        """Continue the session saved in ``transcript``, repaired first if a crash left it broken.

        What a killed process can leave (``transcript.py`` says how each is found): a torn
        last line is set aside; ``tool_use`` blocks with no results message are answered in
        one user message, in call order, each with its saved result if the call finished and
        otherwise an ``is_error`` result saying the session ended first. The repair and a
        ``SystemMessage`` (subtype ``resume_repair``) saying what it did are written to the
        transcript, kept in ``engine.repair`` and warned about (``TranscriptWarning``); a
        second resume finds nothing to repair. ``defaults`` as for ``QueryEngine()``
        (``deps`` makes the repair's uuids). Raises ``FileNotFoundError`` if missing,
        ``TranscriptError`` for a line a crash cannot explain, in the transcript or in a side chain (naming that
        file and line; nothing is changed). Each ``Agent`` call's side chain is read back into
        ``engine.children`` (its model calls, as ``import_claude_code`` rebuilds them), a torn last line set
        aside first; a child is not continued.

        Answering unresolved ``tool_use`` blocks is dreamloop's choice, because the call may
        have had effects; what Claude Code's own resume does with them is neither in the
        texts nor observed here.
        """
        path = Path(transcript)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such transcript to resume")
        with lock_transcript(path):
            report = inspect_transcript(path)
            sides = inspect_side_chains(path, report.messages)  # every file read before anything is changed
            defaults.setdefault("session_id", report.session_id or "dreamloop-session")
            engine = cls(transcript=None, messages=report.messages, **defaults)
            engine.transcript, engine._written, engine._parent = path, len(report.messages), report.last_uuid
            deps = defaults.get("deps")
            repair = repair_messages(report, uuid=deps.uuid if deps else new_uuid)
            if repair:
                if report.torn:  # cut the torn bytes off; the torn_line record keeps them
                    os.truncate(path, report.torn.offset)
                engine.messages.extend(repair)
                first = [record for record in (torn_line_record(report.torn) if report.torn else None,
                                               set_aside_record(report)) if record]
                engine._save(first=first)
                engine.repair = repair[-1]
                warnings.warn(f"{path}: {engine.repair.content}", TranscriptWarning, stacklevel=2)
            for call_id, side in sides.items():
                if side.torn:  # set aside as in the main file: cut off, its bytes kept in a torn_line record
                    os.truncate(side.path, side.torn.offset)
                    append_records(side.path, [torn_line_record(side.torn)])
                    warnings.warn(f"{side.path}: set aside a torn last line (line {side.torn.line}, "
                                  f"{len(side.torn.data)} bytes) of the side chain of {call_id}",
                                  TranscriptWarning, stacklevel=2)
                engine.children[call_id] = import_claude_code(side.path)
        return engine

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the transcript's lock (once: a run started from a run's queued input holds it already) and
        check that the file ends where this engine last wrote it."""
        if self.transcript is None or self._locked:
            yield
            return
        with lock_transcript(self.transcript):
            if last_chained_uuid(self.transcript) != self._parent:
                raise TranscriptBusy(f"{self.transcript}: another session wrote to this transcript after this engine "
                                     "did; QueryEngine.resume the file to continue from what it holds now.")
            self._locked = True
            try:
                yield
            finally:
                self._locked = False

    def enqueue(self, text: str) -> None:
        """Queue user input typed while the loop runs (``self.queue``, a ``list[str]`` in the order typed).

        It reaches the model no later than with the next prompt: drained at the run's next phase 5 (after the
        tool results), or, if the run ends ``completed`` first, as the next prompt; if the run ends any other
        way (a Stop, ``max_turns``, an error), it stays queued and goes in front of the next prompt
        (``submit_message``). Each text is sent once: it is either in ``self.messages`` or in ``self.queue``.
        """
        self.queue.append(text)

    def _drain_queue(self) -> list[AttachmentMessage]:
        """Take every queued text at once, as ``queued_command`` attachments in the order typed (one synchronous
        step: no abort or await can land between emptying the queue and making the messages)."""
        queued, self.queue = self.queue, []
        deps = self.defaults.get("deps")
        make = (lambda **kw: AttachmentMessage(uuid=deps.uuid(), **kw)) if deps else AttachmentMessage
        return [make(attachment={"type": "queued_command", "prompt": text}) for text in queued]

    async def submit_message(self, prompt: str | list[dict[str, Any]], *, trace: Trace | None = None,
                             **overrides: Any) -> AsyncIterator[Any]:
        """Run the loop on ``prompt`` after the session's history; yield its events.

        The new user message, every message the loop yields and the closing
        messages of an interrupted run go into ``self.messages`` and the
        transcript, and so does each finished tool call's result (its ``done``
        progress): each before its event is yielded, so whatever the caller has
        seen survives a crash. ``overrides`` replace ``defaults`` for this run only.
        A blank prompt raises ``ValueError`` (from ``QueryParams``) before any
        hook runs or anything is recorded or sent.

        With ``hooks``, the ``user_prompt_submit`` hooks run first (their inputs
        name this session and transcript): their records and any context for the
        model follow the prompt; a block erases the prompt and starts no run
        (``last_run`` is None): the records and a ``SystemMessage``
        (``user_prompt_blocked``) saying why are yielded and kept instead.

        Input queued (``enqueue``) during the run is drained at phase 5 when tools ran. If the run
        ends ``completed`` with input still queued (the model answered without a tool call), that
        input (several entries joined by blank lines) is the next prompt: a next run starts at once,
        its events follow, and ``last_run`` is that run. After any other ending (a Stop, ``max_turns``,
        an error) it stays queued, and the next ``submit_message`` puts it in front of its prompt: once
        the prompt hooks let the prompt through, each queued text becomes a ``queued_command`` attachment,
        in the order typed, then comes the prompt, so the first request of that run carries them all, queued
        input first. They are in ``self.messages`` and the transcript before the first is yielded (as events
        ahead of the run's own) and recorded in the run's trace as events of checkpoint 0
        (``dreamloop.attachments.queued_input_sent`` says where each queued text went). A blocked prompt
        leaves them queued. Queued first, then the prompt, because that is the order the person typed
        them, and the prompt may build on them (dreamloop's own choice: no scenario shows what Claude Code
        2.1.332 does with input left queued by a Stop).
        """
        settings = {**self.defaults, **overrides}
        # A blank prompt is refused here, unrecorded (the check takes no id, so ids stay as they were).
        QueryParams(**{**settings, "messages": [*self.messages, user_message(prompt, uuid="unsent")]})
        with self._writing():
            if self._pending and not self._save():
                raise OSError(self.write_error.errno, f"{self.transcript}: the records of the last run are still not "
                              f"on disk ({self.write_error.strerror}); nothing was sent. Free space (or lift the "
                              "limit), then submit again: they are written first.") from self.write_error
            async for event in self._submit(prompt, settings, trace, overrides):
                yield event

    async def _submit(self, prompt: str | list[dict[str, Any]], settings: dict[str, Any], trace: Trace | None,
                      overrides: dict[str, Any]) -> AsyncIterator[Any]:
        """``submit_message`` with the transcript held: the prompt hooks, the run, then queued input's run."""
        deps, hooks = settings.get("deps"), settings.get("hooks")
        uuid = deps.uuid if deps else new_uuid
        said: tuple[Any, ...] = ()
        if hooks is not None:
            hooks = settings["hooks"] = hooks.for_session(self.session_id, self.transcript)
            check = await submit_prompt(hooks, prompt, workspace=settings.get("workspace"),
                                        permission_mode=settings.get("permission_mode", "default"), uuid=uuid)
            if check.blocked:
                self.last_run = None
                self.messages.extend(check.messages)
                self._save()
                for message in check.messages:
                    yield message
                return
            said = check.messages
        left = self._drain_queue()  # input a Stop (or another ending) left queued goes in front of the prompt
        self.messages.extend([*left, user_message(prompt, uuid=uuid()), *said])
        self._save()
        for message in [*left, *said]:
            yield message
        params = QueryParams(**{**settings, "messages": self.messages, "queued_input": self._drain_queue})
        run = self.last_run = query(params, trace=trace)
        run.on_child = partial(self._save_child, run)
        for message in left:  # the trace shows where it went: events of checkpoint 0, whose request carries it
            run.trace.add_event(0.0, message)
        try:
            async for event in run:
                if finished_call(event) or len(run.messages) != len(self.messages):
                    if not self._save(run, finished=event if finished_call(event) else None) and not run.done:
                        run.abort("transcript_write_failed")  # the run ends (a Terminal) at its next await
                yield event
        finally:
            self._save(run)
        if run.done and run.ended is not None:  # an abnormal end: what the cleanup did, kept on disk (never sent)
            self._save(first=[run_ended_record(run.ended, run.terminal.reason, self.session_id)])
        if self.write_error is not None and self._pending:
            notice = SystemMessage(uuid=uuid(), subtype="transcript_write_failed", level="error", content=(
                f"The transcript {self.transcript} could not be written ({self.write_error.strerror}), so the run "
                "was stopped. The session is whole in memory; the next prompt writes what is missing first, "
                "or is refused, saying why."))
            self.messages.append(notice)
            self._save()
            yield notice
        if self.queue and run.terminal.reason == "completed":
            # Input typed while the model answered without a tool call: no phase 5 came to take it, so it
            # is the next prompt, run at once (through the user_prompt_submit hooks, like any prompt).
            queued, self.queue = self.queue, []
            async for event in self.submit_message("\n\n".join(queued), trace=trace, **overrides):
                yield event

    def _save_child(self, run: QueryRun, child: QueryRun, event: Any) -> None:
        """A child's start (``event`` None) or event: keep its trace, append what is new to its side chain.

        At the start, the ``.meta.json`` and the prompt; then each new message and each finished call, fsynced
        before the child goes on. A write that fails leaves what it held pending (written first next time), and
        stops the parent's run as a main-file write does (``transcript_write_failed``)."""
        if child.tool_use_id is None or child.agent_id is None:
            return
        self.children[child.tool_use_id] = child.trace
        if self.transcript is None:
            return
        side = self._sides.get(child.agent_id)
        path = side_chain_path(self.transcript, child.agent_id)
        try:
            if side is None:
                side = self._sides[child.agent_id] = _SideChain(path)
                write_side_chain_meta(path, {"agentType": child.agent_type, "description": child.description,
                                             "toolUseId": child.tool_use_id})
            side.pending += [*child.messages[side.written:], *([event] if finished_call(event) else [])]
            side.written = len(child.messages)
            records, parent = [], side.parent
            for item in side.pending:
                records.append(side_chain_record(item, parent, self.session_id, child.agent_id))
                parent = item.uuid
            append_records(path, records)
            side.parent, side.pending = parent, []
        except OSError as error:
            self.write_error = error
            run.abort("transcript_write_failed")

    @property
    def terminal(self) -> Terminal | None:
        """The Terminal of the latest run, if it ended."""
        return self.last_run.terminal if self.last_run and self.last_run.done else None

    def _save(self, run: QueryRun | None = None, *, finished: Any = None,
              first: Sequence[dict[str, Any]] = ()) -> bool:
        """Bring ``self.messages`` up to ``run``'s and append what is new to the transcript.

        ``first``: records without a uuid written ahead (``torn_line``, ``set_aside``); then what an
        earlier failed write left, the new messages and ``finished`` (a done ``ProgressMessage``), each
        a record chained to the one before. Returns False if the write failed (``write_error``): what
        was not written stays pending, and the next ``_save`` writes it first.
        """
        if run is not None:
            self.messages = list(run.messages)
        self._pending += [*first, *self.messages[self._written:], *([finished] if finished is not None else [])]
        self._written = len(self.messages)
        if self.transcript is None or not self._pending:
            self._pending.clear()
            return True
        records, parent = [], self._parent
        for item in self._pending:
            if isinstance(item, dict):
                records.append(item)
            else:
                records.append(transcript_record(item, parent, self.session_id))
                parent = item.uuid
        try:
            append_records(self.transcript, records)
        except OSError as error:
            self.write_error = error
            return False
        self._parent, self._pending, self.write_error = parent, [], None
        return True
