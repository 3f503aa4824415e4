"""QueryEngine: a session across several user inputs (``QueryEngine.submitMessage()``).

The engine owns what outlives one run of the loop: the history, the queue of
input typed while the loop runs, and the transcript file, shaped like Claude
Code's session files (one JSON object per line: ``type``, ``uuid``,
``parentUuid``, ``sessionId``, ``message`` / ``attachment`` / ...). It is
persisted after every message and can be resumed. The loop itself is ``query()``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, AsyncIterator

from pydantic import TypeAdapter, ValidationError

from .messages import AttachmentMessage, LoopMessage, user_message
from .query import QueryParams, QueryRun, query
from .state import Terminal
from .trace import Trace, jsonl_records

__all__ = ["QueryEngine", "load_transcript"]

_MESSAGE = TypeAdapter(LoopMessage)


class QueryEngine:
    """A conversation with the loop: ``async for event in engine.submit_message("...")``.

    ``defaults`` are ``QueryParams`` fields used for every run (``model``,
    ``tools``, ``system_prompt``, ``max_turns``, ``workspace``, ...).
    ``transcript`` is a JSONL path written after every message (None: memory
    only). ``enqueue(text)`` queues input while a run is going; the loop
    drains the queue at phase 5 as ``queued_command`` attachments.
    ``last_run`` is the latest ``QueryRun`` (its ``terminal`` and ``trace``).
    """

    def __init__(self, *, transcript: str | Path | None = None, session_id: str = "dreamloop-session",
                 messages: list[Any] | None = None, **defaults: Any) -> None:
        self.defaults = defaults
        self.messages: list[Any] = list(messages or [])
        self.session_id = session_id
        self.transcript = Path(transcript) if transcript else None
        self.queue: list[str] = []
        self.last_run: QueryRun | None = None
        self._written = 0
        if self.transcript and self.messages:
            self._persist()

    @classmethod
    def resume(cls, transcript: str | Path, **defaults: Any) -> "QueryEngine":
        """Continue a session saved in ``transcript`` (raises ``FileNotFoundError`` if missing)."""
        messages = load_transcript(transcript)
        engine = cls(transcript=None, messages=messages, **defaults)
        engine.transcript, engine._written = Path(transcript), len(messages)
        return engine

    def enqueue(self, text: str) -> None:
        """Queue user input typed while the loop runs (sent with the next request)."""
        self.queue.append(text)

    def _drain_queue(self) -> list[AttachmentMessage]:
        queued, self.queue = self.queue, []
        deps = self.defaults.get("deps")
        make = (lambda **kw: AttachmentMessage(uuid=deps.uuid(), **kw)) if deps else AttachmentMessage
        return [make(attachment={"type": "queued_command", "prompt": text}) for text in queued]

    async def submit_message(self, prompt: str | list[dict[str, Any]], *, trace: Trace | None = None,
                             **overrides: Any) -> AsyncIterator[Any]:
        """Run the loop on ``prompt`` after the session's history; yield its events.

        The new user message, every message the loop yields and the closing
        messages of an interrupted run go into ``self.messages`` and the
        transcript. ``overrides`` replace ``defaults`` for this run only.
        A blank prompt raises ``ValueError`` (from ``QueryParams``) before
        anything is recorded or sent.
        """
        deps = overrides.get("deps", self.defaults.get("deps"))
        new = user_message(prompt, **({"uuid": deps.uuid()} if deps else {}))
        params = QueryParams(**{**self.defaults, **overrides, "messages": [*self.messages, new],
                                "queued_input": self._drain_queue})  # a blank prompt is refused here, unrecorded
        self.messages.append(new)
        self._persist()
        run = self.last_run = query(params, trace=trace)
        try:
            async for event in run:
                yield event
                if len(run.messages) != len(self.messages):
                    self._sync(run)
        finally:
            self._sync(run)

    @property
    def terminal(self) -> Terminal | None:
        """The Terminal of the latest run, if it ended."""
        return self.last_run.terminal if self.last_run and self.last_run.done else None

    def _sync(self, run: QueryRun) -> None:
        self.messages = list(run.messages)
        self._persist()

    def _persist(self) -> None:
        if self.transcript is None:
            return
        new = self.messages[self._written:]
        if not new:
            return
        parent = self.messages[self._written - 1].uuid if self._written else None
        with self.transcript.open("a", encoding="utf-8") as out:
            for message in new:
                out.write(json.dumps(_transcript_line(message, parent, self.session_id)) + "\n")
                parent = message.uuid
        self._written = len(self.messages)


def _transcript_line(message: Any, parent: str | None, session_id: str) -> dict[str, Any]:
    """One session-file line (Claude Code's shape) holding the full loop message."""
    data = message.model_dump(mode="json")
    line = {"type": data.pop("type"), "uuid": data.pop("uuid"), "parentUuid": parent, "sessionId": session_id}
    line.update(data)
    return line


def load_transcript(path: str | Path) -> list[Any]:
    """The loop messages of a transcript JSONL written by ``QueryEngine``, in order.

    A torn last line is skipped with a warning; any other corrupt line raises
    ``ValueError`` naming it (see ``trace.jsonl_records``).
    """
    messages = []
    for number, line in jsonl_records(path):
        line = {k: v for k, v in line.items() if k not in ("parentUuid", "sessionId")}
        try:
            messages.append(_MESSAGE.validate_python(line))
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "value"
            raise ValueError(f"{path}, line {number}: not a loop message ({where}: {first['msg']})") from None
    return messages
