"""Recording a run as a cassette: every Messages API request, the raw bytes of every response, every tool result.

``CassetteRecorder(path)`` hooks into the SDK client's HTTP layer (an
``httpx2`` response event hook, so the SDK's own transport, proxies and
retries stay as they are): each ``POST /v1/messages`` is written when its
response has been read, as one JSONL line holding the request body, the
status, the content type and the response body as received (the raw
``text/event-stream`` of a stream). Tool results are written from the next
request that carries them, and ``finish(run)`` writes those of a last turn no
request carried. No request header is written, so neither the API key nor any
auth header ever reaches the file. ``dreamloop.fake_api.cassette`` replays it.
This module knows nothing about the loop's phases or about tools.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Iterable

import httpx2

from .fake_api.sse import accumulate_events, parse_frames

__all__ = ["CASSETTE_VERSION", "CassetteRecorder"]

CASSETTE_VERSION = 1
"""The format version in a cassette's header line (``{"kind": "cassette", "version": 1}``)."""

_KEPT_RESPONSE_HEADERS = ("content-type", "request-id", "retry-after", "retry-after-ms", "x-should-retry")


class CassetteRecorder:
    """Writes a cassette (JSONL) while a model is used; give it to ``live(record=...)`` or ``offline(record=...)``.

    Lines: a header ``{"kind": "cassette", "version", "model"}``; per request
    ``{"kind": "exchange", "index", "request", "status", "headers", "sse" | "body"}``
    (``sse``: the response body as received, a string; ``body``: a JSON
    response; ``incomplete``: the client stopped reading before the end);
    per tool call ``{"kind": "tool_result", "tool_use_id", "name", "input",
    "content", "is_error"}``. The file is written as things happen, so a run
    that crashes leaves everything up to the crash. ``exchanges``: how many
    were written. Starting a recorder truncates ``path``.
    """

    def __init__(self, path: str | Path, *, model: str | None = None) -> None:
        self.path = Path(path)
        self.exchanges = 0
        self._lock = threading.Lock()
        self._calls: dict[str, tuple[str, Any]] = {}  # tool_use id -> (name, input), from recorded responses
        self._answered: set[str] = set()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps({"kind": "cassette", "version": CASSETTE_VERSION, "model": model}) + "\n",
                             encoding="utf-8")

    def __repr__(self) -> str:
        return f"CassetteRecorder({str(self.path)!r}, exchanges={self.exchanges})"

    def event_hooks(self) -> dict[str, list[Any]]:
        """The ``httpx2`` event hooks that record (for ``httpx2.AsyncClient(event_hooks=...)``)."""
        return {"response": [self._on_response]}

    def finish(self, run_or_messages: Any) -> None:
        """Write the tool results no request carried (a run that ended right after its tools).

        ``run_or_messages``: a ``QueryRun`` (its ``messages``) or loop messages.
        Results already written are skipped; calling it twice is harmless.
        """
        messages = getattr(run_or_messages, "messages", run_or_messages)
        blocks = [b for m in messages if getattr(m, "type", None) == "user"
                  for b in _list(m.message.get("content"))]
        self._tool_results(blocks)

    # -- hooks ------------------------------------------------------------------

    async def _on_response(self, response: httpx2.Response) -> None:
        request = response.request
        if request.method != "POST" or not request.url.path.endswith("/v1/messages"):
            return
        try:
            body = json.loads(request.content or b"null")
        except ValueError:
            body = None
        if isinstance(body, dict):
            self._tool_results([b for m in body.get("messages", []) if m.get("role") == "user"
                                for b in _list(m.get("content"))])
        try:
            data = response.content  # a body that came whole (an in-process transport) is already read
        except httpx2.ResponseNotRead:
            response.stream = _Tee(response.stream,
                                   lambda data, complete: self._exchange(body, response, data, complete))
        else:
            self._exchange(body, response, data, True)

    def _exchange(self, body: Any, response: httpx2.Response, data: bytes, complete: bool) -> None:
        headers = {k: response.headers[k] for k in _KEPT_RESPONSE_HEADERS if k in response.headers}
        text = data.decode("utf-8", errors="replace")
        record: dict[str, Any] = {"kind": "exchange", "index": self.exchanges, "request": body,
                                  "status": response.status_code, "headers": headers}
        if "text/event-stream" in headers.get("content-type", ""):
            record["sse"] = text
            self._remember_calls(text)
        else:
            try:
                record["body"] = json.loads(text) if text else None
            except ValueError:
                record["text"] = text
            if isinstance(record.get("body"), dict):
                self._remember_blocks(record["body"].get("content"))
        if not complete:
            record["incomplete"] = True
        self._write(record)
        self.exchanges += 1

    # -- tool calls and results ------------------------------------------------------

    def _remember_calls(self, sse: str) -> None:
        try:
            message = accumulate_events(parse_frames(sse))
        except (ValueError, KeyError, IndexError):
            return  # an error event or a cut stream: no finished tool_use to answer
        self._remember_blocks(message.get("content"))

    def _remember_blocks(self, content: Any) -> None:
        for block in _list(content):
            if block.get("type") == "tool_use":
                self._calls[str(block.get("id"))] = (str(block.get("name")), block.get("input"))

    def _tool_results(self, blocks: Iterable[dict[str, Any]]) -> None:
        for block in blocks:
            tool_use_id = str(block.get("tool_use_id"))
            if block.get("type") != "tool_result" or tool_use_id in self._answered or tool_use_id not in self._calls:
                continue
            self._answered.add(tool_use_id)
            name, input = self._calls[tool_use_id]
            self._write({"kind": "tool_result", "tool_use_id": tool_use_id, "name": name, "input": input,
                         "content": block.get("content", ""), "is_error": bool(block.get("is_error", False))})

    def _write(self, record: dict[str, Any]) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


class _Tee(httpx2.AsyncByteStream):
    """A response stream that hands on every chunk and reports all of them when it closes."""

    def __init__(self, inner: Any, done: Any) -> None:
        self._inner = inner
        self._done = done
        self._chunks: list[bytes] = []
        self._complete = False
        self._reported = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._chunks.append(chunk)
            yield chunk
        self._complete = True

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            if not self._reported:
                self._reported = True
                self._done(b"".join(self._chunks), self._complete)


def _list(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
