"""``FakeMessagesAPI``: the offline Anthropic Messages API, served in-process.

It owns the order of things: each request gets a request id, is validated
(``validation.py``), takes the next script item and is answered with a
``Reply`` (``replies.py``), which becomes an ``httpx2.Response`` for the SDK's
``MockTransport`` (async or sync) or bytes on a socket (``server.py``).

Script consumption (a decision; the design brief said "every request consumes"):
every *valid* request to ``/v1/messages`` consumes exactly one script item,
faults included, so an SDK retry after a scripted 529 takes the next item. A
request that fails validation is answered 400 and consumes nothing: a
learner's broken loop gets the real API's 400, is fixed, and the script
continues where it was. ``count_tokens`` consumes nothing. A script that runs
out (``ScriptExhausted``), a policy that raises, or an item that cannot be
rendered is answered 500 ``api_error`` with ``x-should-retry: false`` (so the
SDK does not retry it), and the exception is kept in ``script_errors`` under
the request id; ``dreamloop.model`` re-raises it, so script bugs surface.

Like the real API it has a context window (``context_window``, reported by
``GET /v1/models/{id}`` as ``max_input_tokens``): a request whose input is
larger is answered 400 ``prompt is too long: N tokens > M maximum`` and
consumes nothing. It simulates prompt caching (``cache.py``): the ``usage``
of every reply splits the input into ``cache_read_input_tokens``,
``cache_creation_input_tokens`` and ``input_tokens``.

Ids count per instance: ``req_fake_0001``, ``msg_fake_0001``, ``toolu_fake_0001``.
This module knows nothing about the wire format details (``sse.py``) or the rules (``validation.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator, Mapping

import anthropic
import httpx2

from dreamloop.errors import ScriptExhausted
from dreamloop.output_limit import OBSERVED_OUTPUT_LIMITS
from dreamloop.scripts import Script, Turn
from dreamloop.tokens import Segment, estimate_request_tokens, request_segments

from .cache import MIN_CACHEABLE_TOKENS, PromptCache
from .recorded import RawTurn
from .replies import Reply, error_reply, json_reply, raw_reply, turn_message, turn_reply
from .validation import validate_request

__all__ = ["DEFAULT_CONTEXT_WINDOW", "DEFAULT_OUTPUT_LIMIT", "OFFLINE_API_KEY", "OFFLINE_BASE_URL",
           "OFFLINE_KEEP_BODIES", "FakeMessagesAPI", "ReceivedRequest"]

DEFAULT_CONTEXT_WINDOW = 200_000
"""The offline model's context window in tokens (``max_input_tokens``), as for Claude's current models."""

DEFAULT_OUTPUT_LIMIT = 64_000
"""The output limit (``max_tokens`` of ``GET /v1/models/{id}``) of an offline model that Claude Code 2.1.332 was
not seen to run (``claude-scripted-1``, the default): dreamloop's choice."""

OFFLINE_KEEP_BODIES = 32
"""How many of the latest request bodies ``offline()``'s fake API keeps (``FakeMessagesAPI(keep_bodies=...)``);
``serve()`` and ``serve-fake`` keep every one."""

OFFLINE_API_KEY = "offline-not-a-key"
OFFLINE_BASE_URL = "http://fake-anthropic.invalid"
MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body answered; a larger one gets HTTP 413 ``request_too_large`` (the real limit: 32 MB)."""
TOO_LARGE_MESSAGE = "Request exceeds the maximum allowed number of bytes."
_REDACTED_HEADERS = {"authorization", "x-api-key"}
_DROP_MESSAGE = "peer closed connection without sending complete message body (incomplete chunked read)"


@dataclass(frozen=True)
class ReceivedRequest:
    """One HTTP request the fake API answered (for tests and inspectors).

    ``index``: arrival order (0-based). ``body``: the parsed JSON (None if it
    was not a JSON object); ``streamed``: it asked for a stream. ``headers``: lower-case names, credentials redacted.
    ``status``: the HTTP status sent (200 for a stream, even one that later
    carried an error event). ``script_index``: the script item that answered
    (None: none consumed). ``error``: the error object sent, if any
    (``{"type", "message"}``), mid-stream ones included. ``fault``: the
    scripted fault kind, if any. ``body_dropped``: the body is no longer kept
    (``body`` is None; an API built with ``keep_bodies`` keeps only the latest ones).
    """

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    status: int
    request_id: str
    script_index: int | None = None
    streamed: bool = False
    error: dict[str, Any] | None = None
    fault: str | None = None
    body_dropped: bool = False


class FakeMessagesAPI:
    """The offline Messages API: ``POST /v1/messages`` (streaming or not) and ``/v1/messages/count_tokens``.

    ``script``: a list of ``Turn`` / ``RawTurn`` (request n gets item n) or a
    policy ``(body: dict, index: int) -> Turn | RawTurn``. ``model``: the model
    name reported when a turn does not set one. ``context_window``: the
    largest input it accepts, in (estimated) tokens. ``cache_min_tokens``: the
    shortest prefix the prompt cache keeps (``cache``, a ``PromptCache``).
    ``max_body_bytes``: larger bodies get HTTP 413 ``request_too_large``.
    ``keep_bodies``: how many of the latest request bodies ``requests`` keeps
    (None, the default: all). Every request stays in ``requests``, in order;
    an older one's ``body`` is dropped (``body_dropped``), since each body repeats
    the whole history: kept, they grow with the square of a session's length
    (4.5 GB at 2,000 turns). ``offline()`` keeps the latest ``OFFLINE_KEEP_BODIES``.
    ``output_limits``: model name → the ``max_tokens`` of its model information (``GET /v1/models/{id}``;
    default: ``output_limit.OBSERVED_OUTPUT_LIMITS``, ``DEFAULT_OUTPUT_LIMIT`` for any other name).

    Example::

        api = FakeMessagesAPI([reply("Hello!")])
        client = api.client()             # anthropic.AsyncAnthropic, no network, no key
        await client.messages.create(model="claude-scripted-1", max_tokens=100,
                                     messages=[{"role": "user", "content": "Hi"}])
        api.requests[-1].body             # what the SDK sent
    """

    def __init__(self, script: Script | list[Any], *, model: str = "claude-scripted-1",
                 context_window: int = DEFAULT_CONTEXT_WINDOW, cache_min_tokens: int = MIN_CACHEABLE_TOKENS,
                 max_body_bytes: int = MAX_BODY_BYTES, keep_bodies: int | None = None,
                 output_limits: Mapping[str, int] | None = None) -> None:
        self.model = model
        self.context_window = context_window
        self.output_limits = dict(OBSERVED_OUTPUT_LIMITS if output_limits is None else output_limits)
        self.cache = PromptCache(min_tokens=cache_min_tokens)
        self.max_body_bytes = max_body_bytes
        self.keep_bodies = keep_bodies
        self.requests: list[ReceivedRequest] = []
        self.script_errors: dict[str, BaseException] = {}
        self._script = script
        self._consumed = 0
        self._counters = {"req": 0, "msg": 0, "toolu": 0}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FakeMessagesAPI(model={self.model!r}, consumed={self._consumed}, requests={len(self.requests)})"

    @property
    def consumed(self) -> int:
        """How many script items have been used so far."""
        return self._consumed

    # -- clients ---------------------------------------------------------------

    def client(self, max_retries: int = 2, *, event_hooks: dict[str, list[Any]] | None = None) -> anthropic.AsyncAnthropic:
        """An ``anthropic.AsyncAnthropic`` whose every request lands in this fake API (no network, no key).

        ``event_hooks``: ``httpx2`` event hooks for its HTTP client (a cassette recorder's).
        """
        return anthropic.AsyncAnthropic(
            api_key=OFFLINE_API_KEY,
            base_url=OFFLINE_BASE_URL,
            max_retries=max_retries,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler), event_hooks=event_hooks),
        )

    def sync_client(self, max_retries: int = 2) -> anthropic.Anthropic:
        """The synchronous twin of ``client()`` (``anthropic.Anthropic``; pacing uses ``time.sleep``)."""
        return anthropic.Anthropic(
            api_key=OFFLINE_API_KEY,
            base_url=OFFLINE_BASE_URL,
            max_retries=max_retries,
            http_client=httpx2.Client(transport=httpx2.MockTransport(self.sync_handler)),
        )

    # -- transports ------------------------------------------------------------

    async def handler(self, request: httpx2.Request) -> httpx2.Response:
        """``httpx2.MockTransport`` handler for async clients; SSE frames arrive one by one, paced."""
        reply = self.respond(request.method, request.url.path, request.headers, request.content)
        if reply.frames is None:
            return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)
        return httpx2.Response(reply.status, headers=reply.headers, content=_async_frames(reply))

    def sync_handler(self, request: httpx2.Request) -> httpx2.Response:
        """``httpx2.MockTransport`` handler for sync clients."""
        reply = self.respond(request.method, request.url.path, request.headers, request.content)
        if reply.frames is None:
            return httpx2.Response(reply.status, headers=reply.headers, content=reply.body)
        return httpx2.Response(reply.status, headers=reply.headers, content=_sync_frames(reply))

    # -- the API ---------------------------------------------------------------

    def respond(self, method: str, path: str, headers: Mapping[str, str], content: bytes) -> Reply:
        """Answer one HTTP request (transport-neutral) and log it in ``requests``. Thread-safe."""
        with self._lock:
            request_id = self._next_id("req")
            body: Any = None
            script_index: int | None = None
            if len(content) > self.max_body_bytes:
                reply = error_reply(413, TOO_LARGE_MESSAGE, request_id)
            else:
                try:
                    body = json.loads(content) if content else None
                except ValueError as err:
                    reply = error_reply(400, f"The request body is not valid JSON: {err}", request_id)
                else:
                    reply, script_index = self._route(method, path, body, request_id)
            self.requests.append(
                ReceivedRequest(
                    index=len(self.requests),
                    method=method,
                    path=path,
                    headers={k.lower(): ("<redacted>" if k.lower() in _REDACTED_HEADERS else v) for k, v in headers.items()},
                    body=body if isinstance(body, dict) else None,
                    status=reply.status,
                    request_id=request_id,
                    script_index=script_index,
                    streamed=isinstance(body, dict) and bool(body.get("stream")),
                    error=reply.error,
                    fault=reply.fault,
                )
            )
            self._drop_old_body()
            return reply

    def _drop_old_body(self) -> None:
        """Keep only the latest ``keep_bodies`` bodies: the one request that just fell out of them loses its body."""
        old = len(self.requests) - 1 - (self.keep_bodies if self.keep_bodies is not None else len(self.requests))
        if old >= 0 and self.requests[old].body is not None:
            self.requests[old] = dataclasses.replace(self.requests[old], body=None, body_dropped=True)

    def _route(self, method: str, path: str, body: Any, request_id: str) -> tuple[Reply, int | None]:
        if method == "POST" and path.endswith("/v1/messages/count_tokens"):
            return self._count_tokens(body, request_id), None
        if method == "POST" and path.endswith("/v1/messages"):
            return self._messages(body, request_id)
        if method == "GET" and "/v1/models/" in path:
            return self._model_info(path.rsplit("/", 1)[-1], request_id), None
        return error_reply(404, "Not Found", request_id), None

    def _model_info(self, model_id: str, request_id: str) -> Reply:
        """``GET /v1/models/{id}``: the SDK's ``ModelInfo``; ``max_input_tokens`` is the context window,
        ``max_tokens`` the output limit, from ``output_limits``: by default for a model of
        ``output_limit.OBSERVED_OUTPUT_LIMITS`` the one Claude Code 2.1.332 sent it (``output_limit_fallback``,
        ``http_529_fallback``), so the offline API and ``observed_output_limit`` agree; for any other name
        ``DEFAULT_OUTPUT_LIMIT``."""
        return json_reply({
            "type": "model", "id": model_id, "display_name": f"{model_id} (offline)",
            "created_at": "2025-01-01T00:00:00Z", "lifecycle": "active",
            "max_input_tokens": self.context_window,
            "max_tokens": self.output_limits.get(model_id, DEFAULT_OUTPUT_LIMIT),
        }, request_id)

    def _count_tokens(self, body: Any, request_id: str) -> Reply:
        problem = validate_request(body, endpoint="count_tokens")
        if problem is not None:
            return error_reply(400, problem.message, request_id, error_type=problem.error_type)
        return json_reply({"input_tokens": estimate_request_tokens(body)}, request_id)

    def _messages(self, body: Any, request_id: str) -> tuple[Reply, int | None]:
        problem = validate_request(body)
        if problem is not None:
            return error_reply(400, problem.message, request_id, error_type=problem.error_type), None
        segments = list(request_segments(body))
        tokens = max(sum(s.tokens for s in segments), 1)  # estimate_request_tokens(body), counted once
        if tokens > self.context_window:  # the real API's check, before any model work: nothing consumed
            return error_reply(400, f"prompt is too long: {tokens} tokens > {self.context_window} maximum",
                               request_id), None
        index = self._consumed
        try:
            item = self._next_item(body, index)
            return self._reply_for(item, body, request_id, segments), index
        except Exception as err:  # a script bug: answered without retry, re-raised by dreamloop.model
            self.script_errors[request_id] = err
            message = f"dreamloop offline script error: {type(err).__name__}: {err}"
            headers = {"x-should-retry": "false", "x-dreamloop-script-error": type(err).__name__}
            return error_reply(500, message, request_id, headers=headers), (index if self._consumed > index else None)

    def _reply_for(self, item: Turn | RawTurn, body: dict[str, Any], request_id: str,
                   segments: list[Segment] | None = None) -> Reply:
        if isinstance(item, RawTurn):
            return raw_reply(item, request=body, request_id=request_id)

        def build_message() -> dict[str, Any]:
            cached = self.cache.usage(body, segments)  # only a request that gets a message reads or writes the cache
            return turn_message(
                item,
                message_id=self._next_id("msg"),
                model=str(body.get("model") or self.model),  # the real API echoes the model asked for
                new_tool_id=lambda: self._next_id("toolu"),
                input_tokens=cached.input_tokens,
                cache_creation_input_tokens=cached.cache_creation_input_tokens,
                cache_read_input_tokens=cached.cache_read_input_tokens,
            )

        return turn_reply(item, request=body, request_id=request_id, build_message=build_message)

    def _next_item(self, body: dict[str, Any], index: int) -> Turn | RawTurn:
        if callable(self._script):
            item = self._script(body, index)
        elif index < len(self._script):
            item = self._script[index]
        else:
            raise ScriptExhausted(
                f"the offline script has no item for model request #{index + 1} (it has {len(self._script)}); "
                "add turns to the script or use a policy function"
            )
        if not isinstance(item, (Turn, RawTurn)):
            raise TypeError(f"the script's answer to model request #{index + 1} is a {type(item).__name__}, "
                            "expected Turn or RawTurn")
        self._consumed += 1
        return item

    def _next_id(self, kind: str) -> str:
        self._counters[kind] += 1
        return f"{kind}_fake_{self._counters[kind]:04d}"


async def _async_frames(reply: Reply) -> AsyncIterator[bytes]:
    for delay, data in reply.frames or ():
        if delay:
            await asyncio.sleep(delay)
        yield data
    if reply.drop_connection:
        raise httpx2.RemoteProtocolError(_DROP_MESSAGE)


def _sync_frames(reply: Reply) -> Iterator[bytes]:
    for delay, data in reply.frames or ():
        if delay:
            time.sleep(delay)
        yield data
    if reply.drop_connection:
        raise httpx2.RemoteProtocolError(_DROP_MESSAGE)
