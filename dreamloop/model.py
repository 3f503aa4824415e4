"""``AnthropicModel``: one model call, streamed through the official ``anthropic`` SDK.

This is ``deps.callModel()`` of the four-step-loop text's ``queryLoop()``: it sends one
request and yields the raw stream events as they arrive, then the finished
``anthropic.types.Message``. The same class serves the offline fake API
(``offline(script)``) and any live Anthropic-compatible endpoint
(``live(...)``): only the SDK client differs. It knows nothing about the loop,
tools or history; it only guarantees that what it calls finished is finished
(the events are followed by ``partial.PartialResponse``):

* a block that never got ``content_block_stop`` (a ``max_tokens`` cut inside a
  tool_use's JSON) is removed from the final Message, because its input is not
  valid and the loop must never run it; it is kept in ``last_cut_blocks``;
* a stream that ends without ``message_delta`` (no ``stop_reason``), or whose
  connection drops mid-stream, raises ``IncompleteStreamError``; one that breaks
  the stream protocol raises ``MalformedStreamError``;
* what a later API version may add (unknown events, blocks, ``stop_reason``
  values) passes through: the final Message keeps it, never re-validated;
* API errors propagate unchanged (``anthropic.APIStatusError`` and subclasses,
  also an ``error`` event inside a 200 stream, ``APIConnectionError``). The SDK
  retries 429 and 5xx itself, but not 529: an overload comes back to the loop at
  once, which counts overloads in a row and asks again itself; after
  ``RecoveryOptions.overloads_before_fallback`` of them the fallback model takes over,
  as Claude Code 2.1.332 switched after three in ``http_529_fallback`` (with the
  harness's ``CLAUDE_CODE_MAX_RETRIES=2``).
"""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Mapping, Union

import anthropic
import httpx2
from anthropic.types import Message, RawMessageStreamEvent

from dreamloop.errors import IncompleteStreamError, MalformedStreamError
from dreamloop.fake_api import DEFAULT_CONTEXT_WINDOW, FakeMessagesAPI
from dreamloop.fake_api.api import OFFLINE_KEEP_BODIES
from dreamloop.fake_api.cache import MIN_CACHEABLE_TOKENS
from dreamloop.messages import UnknownContentBlock, api_message, content_block
from dreamloop.partial import PartialResponse
from dreamloop.recording import CassetteRecorder
from dreamloop.scripts import Script

__all__ = ["DEFAULT_LIVE_MODEL", "AnthropicModel", "CutBlock", "ModelStreamItem", "live", "offline"]

DEFAULT_LIVE_MODEL = "claude-sonnet-5-5"
"""The model ``live()`` uses by default (``claude-sonnet-4-5`` reaches end-of-life on 2026-11-30 per the SDK)."""

ModelStreamItem = Union[RawMessageStreamEvent, Message]
"""What ``AnthropicModel.stream()`` yields: raw events, then one final ``Message``."""

_COUNT_TOKENS_FIELDS = {"thinking", "tool_choice", "mcp_servers"}  # request options count_tokens also takes


@dataclass(frozen=True)
class CutBlock:
    """A content block that never got ``content_block_stop`` (the stream stopped inside it).

    ``index``: its position in the stream; ``block``: the SDK block as far as it
    was accumulated (a tool_use's ``input`` is what its ``content_block_start``
    held, usually ``{}``); ``partial_json``: the raw ``input_json_delta`` text
    received (tool_use only).
    """

    index: int
    block: Any
    partial_json: str = ""


class AnthropicModel:
    """A model behind the official SDK: ``client`` (``anthropic.AsyncAnthropic``) and ``model`` (its name).

    ``api`` is the ``FakeMessagesAPI`` behind an offline model (None for a live
    one). ``request_options``: fields sent with every request (e.g.
    ``thinking``); ``recorder``: the ``CassetteRecorder`` writing this model's
    exchanges, if any. After each ``stream()``: ``last_request_id`` (the ``request-id``
    header, also set from an API error) and ``last_cut_blocks``. These describe
    the most recent call; a model shared by concurrent calls should read them
    right after its own call finishes.
    """

    def __init__(self, client: anthropic.AsyncAnthropic, model: str, *, api: FakeMessagesAPI | None = None,
                 request_options: dict[str, Any] | None = None, recorder: CassetteRecorder | None = None) -> None:
        self.client = client
        self.model = model
        self.api = api
        self.request_options = dict(request_options or {})
        self.recorder = recorder
        self.last_request_id: str | None = None
        self.last_cut_blocks: list[CutBlock] = []
        self._info: Any = None  # GET /v1/models/{id}, once (False: not answered)
        _loop_counts_overloads(client)

    @property
    def max_retries(self) -> int:
        """How often the SDK retries a request (429, 5xx but 529); the loop asks again after a 529 as often."""
        return self.client.max_retries

    def __repr__(self) -> str:
        kind = "offline" if self.api is not None else "live"
        return f"AnthropicModel({self.model!r}, {kind})"

    def _request(self, messages: list[dict[str, Any]], max_tokens: int, system: Any, tools: Any,
                 extra: dict[str, Any]) -> dict[str, Any]:
        """The create() arguments of one request (``system``/``tools`` left out when None); forgets the last
        request's id and cut blocks."""
        params: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens,
                                  **self.request_options, **extra}
        if system is not None:
            params["system"] = system
        if tools is not None:
            params["tools"] = tools
        self.last_request_id = None
        self.last_cut_blocks = []
        return params

    async def stream(
        self,
        *,
        messages: list[Any],
        max_tokens: int,
        system: Any = None,
        tools: list[Any] | None = None,
        **extra: Any,
    ) -> AsyncIterator[ModelStreamItem]:
        """Call the model once; yield each raw stream event, then the final ``Message`` as the last item.

        Events are the SDK's ``RawMessageStreamEvent`` objects, in wire order:
        ``message_start``, ``content_block_start`` / ``content_block_delta`` /
        ``content_block_stop``…, ``message_delta``, ``message_stop`` (``ping`` is
        dropped by the SDK), and any event type a later API version adds.
        ``extra`` goes to ``client.messages.create()`` unchanged (``thinking``,
        ``tool_choice``, ``metadata``, ``model``…); ``system`` / ``tools`` are
        sent only when given.

        Raises ``IncompleteStreamError`` (``.partial``: the Message so far, its
        finished blocks only; None before ``message_start``) when the stream ends
        without ``message_delta`` or the connection drops mid-stream;
        ``MalformedStreamError`` (``.partial`` likewise) when it breaks the
        stream protocol (see ``partial.PartialResponse``); SDK errors unchanged;
        for an offline model, the script's own exception (``ScriptExhausted``, a
        policy bug) instead of the 500 that carried it.

        Example::

            model = offline([reply("Hi!")])
            async for item in model.stream(messages=[{"role": "user", "content": "Hello"}], max_tokens=256):
                print(item.type)   # message_start … message_stop, then "message": the final Message
        """
        params = self._request(messages, max_tokens, system, tools, extra)
        response = PartialResponse()
        try:
            events = await self.client.messages.create(**params, stream=True)
            self.last_request_id = events.response.headers.get("request-id")
            async with events, aclosing(_read_by_a_task(events)) as items:
                try:
                    async for event in items:
                        response.add(event)  # raises for a corrupt stream: aclosing() then stops the reader
                        yield event
                except httpx2.TransportError as err:
                    raise IncompleteStreamError(
                        f"the connection dropped mid-stream ({type(err).__name__}: {err}); the response is incomplete",
                        partial=response.message(), dropped=True,
                    ) from err
                except json.JSONDecodeError as err:  # the SDK parses each data frame as JSON
                    raise MalformedStreamError(f"a data frame of the stream is not JSON ({err})",
                                               partial=response.message()) from None
                except UnicodeDecodeError as err:  # ... after decoding its lines as UTF-8
                    raise MalformedStreamError(f"a line of the stream is not UTF-8 ({err.reason})",
                                               partial=response.message()) from None
        except anthropic.APIStatusError as err:
            self.last_request_id = err.request_id or self.last_request_id
            self._raise_script_error(err)
            raise
        message = response.message()
        if message is None:
            raise MalformedStreamError("the stream ended without message_start: there is no response")
        self.last_cut_blocks = [CutBlock(i, _cut_block(block), raw) for i, block, raw in response.cut_blocks()]
        if not response.saw_message_delta:
            raise IncompleteStreamError("the stream ended without message_delta (no stop_reason): an incomplete response",
                                        partial=message)
        yield message

    async def complete(self, *, messages: list[Any], max_tokens: int, system: Any = None,
                       tools: list[Any] | None = None, **extra: Any) -> AsyncIterator[ModelStreamItem]:
        """Call the model once without streaming (the streaming fallback's request); yield the ``Message``.

        The same arguments and errors as ``stream()``, no raw events (``MalformedStreamError``: a body that
        is not a valid Message; a block of a type the SDK does not know is kept as received). A long ``max_tokens`` is
        allowed (the SDK refuses one it expects to take over ten minutes unless a timeout is given:
        here the client's own timeout is given).
        """
        params = self._request(messages, max_tokens, system, tools, extra)
        try:
            raw = await self.client.messages.with_raw_response.create(**params, timeout=self.client.timeout)
        except anthropic.APIStatusError as err:
            self.last_request_id = err.request_id or self.last_request_id
            self._raise_script_error(err)
            raise
        self.last_request_id = raw.headers.get("request-id")
        yield _response_message(raw.http_response)

    async def count_tokens(self, *, messages: list[Any], system: Any = None, tools: list[Any] | None = None,
                           **extra: Any) -> int:
        """Input tokens of a request, from ``/v1/messages/count_tokens`` (offline: the kit's estimator)."""
        options = {k: v for k, v in self.request_options.items() if k in _COUNT_TOKENS_FIELDS}
        params: dict[str, Any] = {"model": self.model, "messages": messages, **options, **extra}
        if system is not None:
            params["system"] = system
        if tools is not None:
            params["tools"] = tools
        result = await self.client.messages.count_tokens(**params)
        return result.input_tokens

    async def context_window(self) -> int:
        """The model's context window in tokens: ``max_input_tokens`` from ``GET /v1/models/{id}``.

        Asked once, then remembered. An endpoint that does not answer it (an
        Anthropic-compatible server without the Models API) or leaves it out
        gives ``DEFAULT_CONTEXT_WINDOW`` (200,000) instead.
        """
        info = await self._model_info()
        return getattr(info, "max_input_tokens", None) or DEFAULT_CONTEXT_WINDOW

    async def max_output_tokens(self) -> int | None:
        """The most this model may write in one response: ``max_tokens`` from ``GET /v1/models/{id}``
        (asked once, then remembered); None when the endpoint does not say."""
        return getattr(await self._model_info(), "max_tokens", None)

    async def _model_info(self) -> Any:
        if self._info is None:
            try:
                self._info = await self.client.models.retrieve(self.model)
            except anthropic.APIError:
                self._info = False  # not answered: remembered too
        return self._info or None

    def with_name(self, model: str) -> "AnthropicModel":
        """The same client, options and recorder, another model name (a fallback model: ``--fallback-model``)."""
        return AnthropicModel(self.client, model, api=self.api, request_options=self.request_options,
                              recorder=self.recorder)

    def _raise_script_error(self, err: anthropic.APIStatusError) -> None:
        if self.api is not None and err.request_id in self.api.script_errors:
            raise self.api.script_errors[err.request_id] from err


def _loop_counts_overloads(client: Any) -> None:
    """The SDK's retries stay for 429 and 5xx, but a 529 comes straight back: the loop counts overloads.

    (The SDK has no option for one status; its retry check is wrapped on this client. A client
    that is not the SDK's is left as it is.)
    """
    should_retry = getattr(client, "_should_retry", None)
    if should_retry is None or getattr(should_retry, "_dreamloop", False):
        return

    def _should_retry(response: Any) -> bool:
        return response.status_code != 529 and should_retry(response)

    _should_retry._dreamloop = True  # type: ignore[attr-defined]
    client._should_retry = _should_retry


def _response_message(response: httpx2.Response) -> Message:
    """The ``Message`` of a non-streamed response, read from its JSON as the stream's blocks are
    (``api_message``), not by the SDK's parser, which gives a block of a type it does not know the
    fields of another (``text`` and ``citations`` None) and would send them back after a reload.
    Raises ``MalformedStreamError`` when the body is not a valid Message."""
    try:
        return api_message(response.json())
    except ValueError as error:  # json.JSONDecodeError is a ValueError too
        raise MalformedStreamError(f"the response is not a valid Message ({error})") from None


def _cut_block(data: dict[str, Any]) -> Any:
    try:
        return content_block(data)
    except ValueError:
        return UnknownContentBlock.model_validate(data)


# ---------------------------------------------------------------------------
# Constructors


def offline(script: Script | list[Any], *, model: str | None = None, max_retries: int = 2,
            record: str | Path | CassetteRecorder | None = None,
            thinking: dict[str, Any] | None = None, context_window: int = DEFAULT_CONTEXT_WINDOW,
            cache_min_tokens: int = MIN_CACHEABLE_TOKENS,
            keep_bodies: int | None = OFFLINE_KEEP_BODIES,
            output_limits: Mapping[str, int] | None = None) -> AnthropicModel:
    """An ``AnthropicModel`` on a fresh in-process ``FakeMessagesAPI(script)``; no network, no key.

    ``model.api`` is the fake API (``.requests`` shows what was sent: every
    request, with the bodies of the latest ``keep_bodies``, 32 by default; None
    keeps them all, which costs memory with the square of a long session's length). ``model``:
    the name sent (default: a cassette's recorded model, else ``claude-scripted-1``).
    ``record``: a cassette path (or ``CassetteRecorder``) to record the exchanges
    to; ``thinking``: the ``thinking`` request field (e.g.
    ``{"type": "enabled", "budget_tokens": 2048}``), sent with every request.
    ``context_window``: the largest request (estimated tokens) it accepts, also
    what ``await model.context_window()`` reports; ``cache_min_tokens``: the
    shortest prefix its prompt cache keeps (the API's is 1,024); ``output_limits``: model name → the output
    limit its information (``GET /v1/models/{id}``, ``await model.max_output_tokens()``) gives (default: the
    figures of ``output_limit.OBSERVED_OUTPUT_LIMITS``, 64,000 for any other name).

    Example::

        model = offline(cassette("run.cassette.jsonl"))   # replay a recorded live run
    """
    name = model or getattr(script, "model", None) or "claude-scripted-1"
    api = FakeMessagesAPI(script, model=name, context_window=context_window, cache_min_tokens=cache_min_tokens,
                          keep_bodies=keep_bodies, output_limits=output_limits)
    recorder = _recorder(record, name)
    client = api.client(max_retries=max_retries, event_hooks=recorder.event_hooks() if recorder else None)
    return AnthropicModel(client, name, api=api, request_options=_options(thinking), recorder=recorder)


def live(model: str = DEFAULT_LIVE_MODEL, *, api_key: str | None = None, base_url: str | None = None,
         max_retries: int = 2, record: str | Path | CassetteRecorder | None = None,
         thinking: dict[str, Any] | None = None) -> AnthropicModel:
    """An ``AnthropicModel`` on a live endpoint (the SDK reads ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL``
    when ``api_key`` / ``base_url`` are None). Any Anthropic-compatible server works; nothing is sent until
    the first call.

    ``record``: a cassette path (or ``CassetteRecorder``): every request, the raw
    bytes of every response and every tool result are written there (never a
    header, so never the key); replay it with ``offline(cassette(path))``.
    ``thinking``: the ``thinking`` request field, passed through unchanged
    (``{"type": "enabled", "budget_tokens": N}``, N ≥ 1024 and below ``max_tokens``).
    """
    recorder = _recorder(record, model)
    http_client = anthropic.DefaultAsyncHttpxClient(event_hooks=recorder.event_hooks()) if recorder else None
    client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=max_retries,
                                      http_client=http_client)
    return AnthropicModel(client, model, request_options=_options(thinking), recorder=recorder)


def _recorder(record: str | Path | CassetteRecorder | None, model: str) -> CassetteRecorder | None:
    if record is None or isinstance(record, CassetteRecorder):
        return record
    return CassetteRecorder(record, model=model)


def _options(thinking: dict[str, Any] | None) -> dict[str, Any]:
    return {"thinking": thinking} if thinking is not None else {}


async def _read_by_a_task(events: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The SDK stream's events, read by a task of its own; its exception is raised here.

    Closed early (a Stop while the caller handles an event closes ``stream()`` at its ``yield``), the task is
    cancelled where it awaits the network, so every generator of the SDK's stream unwinds. Iterated directly, the
    SDK's inner generators would be left suspended for the garbage collector, whose ``aclose()`` asyncio runs as a
    task that outlives the run (issue 32).
    """
    items: asyncio.Queue[Any] = asyncio.Queue()
    end = object()
    opened = _keep_server_sent_events(events)

    async def read() -> None:
        try:
            async for event in events:
                items.put_nowait(event)
        finally:
            await _finish(opened)
            items.put_nowait(end)

    reader = asyncio.create_task(read(), name="model stream (SDK)")
    try:
        while (item := await items.get()) is not end:
            yield item
        reader.result()  # the stream's own exception, if it raised one
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)


def _keep_server_sent_events(events: Any) -> list[AsyncIterator[Any]]:
    """The generators of server-sent events the SDK's stream opens, kept so that they can be finished.

    An ``error`` event makes the SDK raise a level above them (``AsyncStream.__stream__``), which leaves the
    generator reading the body (and each it reads from) suspended at its ``yield``: only the garbage collector
    would close them, in a task of its own that outlives the run. A stand-in without ``_iter_events`` keeps none.
    """
    opened: list[AsyncIterator[Any]] = []
    original = getattr(events, "_iter_events", None)
    if callable(original):
        def iter_events() -> AsyncIterator[Any]:
            opened.append(generator := original())
            return generator
        events._iter_events = iter_events
    return opened


async def _finish(opened: list[AsyncIterator[Any]]) -> None:
    """Run each kept generator to its end, so every generator below it ends too (closing only the outermost
    would leave the ones it reads from suspended). The SDK has closed the response by now, so what remains is
    read at once or the closed body raises; either ends the chain."""
    for generator in opened:
        try:
            async for _ in generator:
                pass
        except Exception:  # the closed body's error: the chain has ended, which is all that is wanted here
            pass
