"""QueryEngine: a session across several user inputs (``QueryEngine.submitMessage()``).

The engine owns what outlives one run of the loop: the history, the queue of
input typed while the loop runs, and the transcript file, shaped like Claude
Code's session files (one JSON object per line: ``type``, ``uuid``,
``parentUuid``, ``sessionId``, ``message`` / ``attachment`` / ...). It is
persisted after every message and can be resumed. The loop itself is ``query()``;
the ``user_prompt_submit`` hooks run here, before it starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, AsyncIterator

from pydantic import TypeAdapter

from .hooks import submit_prompt
from .messages import AttachmentMessage, LoopMessage, new_uuid, user_message
from .query import QueryParams, QueryRun, query
from .state import Terminal
from .trace import Trace

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

        With ``hooks``, the ``user_prompt_submit`` hooks run first (their inputs
        name this session and transcript): their records and any context for the
        model follow the prompt; a block erases the prompt and starts no run
        (``last_run`` is None): the records and a ``SystemMessage``
        (``user_prompt_blocked``) saying why are yielded and kept instead.
        """
        settings = {**self.defaults, **overrides}
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
                self._persist()
                for message in check.messages:
                    yield message
                return
            said = check.messages
        self.messages.extend([user_message(prompt, uuid=uuid()), *said])
        self._persist()
        for message in said:
            yield message
        params = QueryParams(**{**settings, "messages": self.messages, "queued_input": self._drain_queue})
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
    """The loop messages of a transcript JSONL written by ``QueryEngine``, in order."""
    messages = []
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        if raw.strip():
            line = json.loads(raw)
            line.pop("parentUuid", None)
            line.pop("sessionId", None)
            messages.append(_MESSAGE.validate_python(line))
    return messages
