"""What the offline API answers: a transport-neutral ``Reply`` built from a script item.

A ``Reply`` is a status, headers, and either a JSON body or a sequence of
paced SSE frames (optionally ending in a dropped connection). The in-process
transport (``api.py``) and the loopback server (``server.py``) both send
Replies, so both speak exactly the same bytes. This module renders ``Turn``s
(content, stop_reason, usage, chunking, pacing, faults) and ``RawTurn``s;
it knows nothing about request validation, script order or HTTP libraries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from dreamloop.scripts import Fault, Turn
from dreamloop.tokens import estimate_request_tokens, estimate_tokens

from .recorded import RawTurn
from .signatures import sign_thinking
from .sse import accumulate_events, encode_event, event_delay, message_events, parse_frames, split_frames

__all__ = ["ERROR_TYPES", "Reply", "error_reply", "json_reply", "raw_reply", "turn_message", "turn_reply"]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
"""HTTP status → the API's error ``type`` (docs: https://docs.claude.com/en/api/errors)."""

_STATUS_OF_TYPE = {kind: status for status, kind in ERROR_TYPES.items()}
_DEFAULT_MESSAGES = {
    "overloaded_error": "Overloaded",
    "api_error": "Internal server error",
    "rate_limit_error": "Rate limit exceeded (scripted by the offline API)",
}
_NO_RETRY = {400, 401, 403, 404, 413, 422}  # `x-should-retry: false` (seen on real 400s; the SDK retries none of these)

Frame = tuple[float, bytes]
"""Seconds to wait, then the bytes to send."""


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: ``body`` (JSON bytes) or ``frames`` (SSE, paced).

    ``drop_connection``: after the frames the connection drops without a clean
    end (the client sees a protocol error, not an end of stream). ``error`` is
    the error object sent, if any (also a mid-stream one), for the request log.
    """

    status: int
    headers: dict[str, str]
    body: bytes = b""
    frames: tuple[Frame, ...] | None = None
    drop_connection: bool = False
    error: dict[str, Any] | None = None
    fault: str | None = None


# ---------------------------------------------------------------------------
# Plain replies


def json_reply(
    body: dict[str, Any],
    request_id: str,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
    fault: str | None = None,
) -> Reply:
    """A JSON reply with the ``request-id`` header; 4xx client errors also get ``x-should-retry: false``."""
    head = {"content-type": "application/json", "request-id": request_id, **(headers or {})}
    if status in _NO_RETRY:
        head["x-should-retry"] = "false"
    error = body.get("error") if status >= 400 and isinstance(body.get("error"), dict) else None
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return Reply(status=status, headers=head, body=data, error=error, fault=fault)


def error_reply(
    status: int,
    message: str | None,
    request_id: str,
    *,
    error_type: str | None = None,
    retry_after_ms: int | None = None,
    headers: dict[str, str] | None = None,
    fault: str | None = None,
) -> Reply:
    """The API's error reply: ``{"type":"error","error":{"type","message"},"request_id"}``.

    ``error_type`` defaults from ``status`` (``ERROR_TYPES``); the message
    defaults per type. 4xx client errors carry ``x-should-retry: false``;
    ``retry_after_ms`` adds the ``retry-after-ms`` header the SDK honours.
    """
    kind = error_type or ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    error = {"type": kind, "message": message or _DEFAULT_MESSAGES.get(kind, kind)}
    head = dict(headers or {})
    if retry_after_ms is not None:
        head["retry-after-ms"] = str(retry_after_ms)
    body = {"type": "error", "error": error, "request_id": request_id}
    return json_reply(body, request_id, status=status, headers=head, fault=fault)


def _stream_reply(events: list[dict[str, Any]], request_id: str, *, tokens_per_second: float | None = None,
                  drop_connection: bool = False, fault: str | None = None) -> Reply:
    frames = tuple((event_delay(e, tokens_per_second), encode_event(e)) for e in events)
    error = next((e["error"] for e in events if e.get("type") == "error"), None)
    head = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", "request-id": request_id}
    return Reply(status=200, headers=head, frames=frames, drop_connection=drop_connection, error=error, fault=fault)


# ---------------------------------------------------------------------------
# Turn → Message → Reply


def turn_message(turn: Turn, *, message_id: str, model: str, new_tool_id: Callable[[], str], input_tokens: int,
                 cache_creation_input_tokens: int = 0, cache_read_input_tokens: int = 0) -> dict[str, Any]:
    """The finished Message (a dict) ``turn`` stands for.

    Fills what the script left out: tool_use ids (``new_tool_id()``), thinking
    signatures (``sign_thinking``), usage (``dreamloop.tokens`` estimates and
    the prompt cache's split, overridden key by key by ``turn.usage``) and the
    resolved stop_reason.
    """
    content = [_complete_block(block, new_tool_id) for block in turn.content]
    usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_creation_input_tokens,
        "cache_read_input_tokens": cache_read_input_tokens,
        "output_tokens": estimate_tokens(content),
        **(turn.usage or {}),
    }
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": turn.model or model,
        "content": content,
        "stop_reason": turn.resolved_stop_reason(),
        "stop_sequence": None,
        "usage": usage,
    }


def _complete_block(block: dict[str, Any], new_tool_id: Callable[[], str]) -> dict[str, Any]:
    block = dict(block)
    if block.get("type") == "tool_use":
        block.setdefault("input", {})
        if not block.get("id"):
            block = {"type": "tool_use", "id": new_tool_id(), **{k: v for k, v in block.items() if k not in ("type", "id")}}
    elif block.get("type") == "thinking" and not block.get("signature"):
        block["signature"] = sign_thinking(block.get("thinking", ""))
    return block


def turn_reply(turn: Turn, *, request: dict[str, Any], request_id: str, build_message: Callable[[], dict[str, Any]]) -> Reply:
    """The reply for ``turn``, faults included; ``build_message()`` gives its Message (``turn_message``).

    HTTP faults build no message, so they use up no message or tool ids.

    Non-streaming requests get the faults' non-streaming form: a mid-stream
    error becomes the HTTP status of its error type, a disconnect drops the
    connection before any body, a ``max_tokens`` cut returns the message
    without the cut block and with ``stop_reason: max_tokens``.
    """
    fault = turn.fault
    if fault is not None and fault.kind in ("http_error", "prompt_too_long"):
        return _http_fault(fault, request, request_id)
    message = build_message()
    if request.get("stream"):
        return _streamed_turn(turn, message, request_id)
    return _json_turn(turn, message, request_id)


def _streamed_turn(turn: Turn, message: dict[str, Any], request_id: str) -> Reply:
    fault = turn.fault.kind if turn.fault else None
    events = message_events(message, chunk_size=turn.chunk_size, cut_last_tool_use=fault == "max_tokens_cut")
    if turn.fault is not None and fault == "stream_error":
        events = events[: turn.fault.after_events] + [_error_event(turn.fault, request_id)]
    elif turn.fault is not None and fault == "disconnect":
        events = events[: turn.fault.after_events]
    return _stream_reply(events, request_id, tokens_per_second=turn.tokens_per_second,
                         drop_connection=fault == "disconnect", fault=fault)


def _error_event(fault: Fault, request_id: str) -> dict[str, Any]:
    kind = fault.error_type or "overloaded_error"
    error = {"type": kind, "message": fault.message or _DEFAULT_MESSAGES.get(kind, kind)}
    return {"type": "error", "error": error, "request_id": request_id}


def _json_turn(turn: Turn, message: dict[str, Any], request_id: str) -> Reply:
    fault = turn.fault
    if fault is None:
        return json_reply(message, request_id)
    if fault.kind == "max_tokens_cut":
        return json_reply(_cut_message(message), request_id, fault=fault.kind)
    if fault.kind == "stream_error":
        kind = fault.error_type or "overloaded_error"
        return error_reply(_STATUS_OF_TYPE.get(kind, 500), fault.message, request_id, error_type=kind, fault=fault.kind)
    # disconnect: the connection drops before any body arrives
    return Reply(status=200, headers={"content-type": "application/json", "request-id": request_id},
                 frames=(), drop_connection=True, fault=fault.kind)


def _http_fault(fault: Fault, request: dict[str, Any], request_id: str) -> Reply:
    if fault.kind == "prompt_too_long":
        maximum = fault.max_tokens_limit
        # The request's own estimate, raised above the limit when it fits, so the message reads true.
        tokens = fault.prompt_tokens if fault.prompt_tokens is not None else max(estimate_request_tokens(request), maximum + 1)
        return error_reply(400, f"prompt is too long: {tokens} tokens > {maximum} maximum", request_id,
                           error_type=fault.error_type, fault=fault.kind)
    return error_reply(fault.status, fault.message, request_id, error_type=fault.error_type,
                       retry_after_ms=fault.retry_after_ms, fault=fault.kind)


def _cut_message(message: dict[str, Any]) -> dict[str, Any]:
    content = message["content"]
    tool_uses = [i for i, b in enumerate(content) if b.get("type") == "tool_use"]
    kept = content[: tool_uses[-1]] if tool_uses else content
    return {**message, "content": kept, "stop_reason": "max_tokens"}


# ---------------------------------------------------------------------------
# RawTurn → Reply


def _accumulated(sse: str) -> dict[str, Any] | None:
    """The Message a recorded stream adds up to; None where the stream breaks the protocol."""
    try:
        return accumulate_events(parse_frames(sse))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def raw_reply(raw: RawTurn, *, request: dict[str, Any], request_id: str, chunk_size: int = 16) -> Reply:
    """The reply for a recorded response: verbatim where the request's mode matches the recording.

    A recorded stream asked for without ``stream`` is accumulated into its
    Message; a recorded JSON Message asked for with ``stream`` is rendered as
    events. A stream that cannot be accumulated (it breaks the protocol: a frame
    that is not JSON, a delta for a block never started) asked for without
    ``stream`` is answered as the server failing, HTTP 500 ``api_error``: a
    non-streaming reply has no stream to break (dreamloop's choice; the streaming
    fallback asks this way). The ``request-id`` header is the fake API's.
    """
    streaming = bool(request.get("stream"))
    headers = {k: v for k, v in raw.headers.items() if k.lower() != "request-id"}
    if raw.status != 200 or (raw.sse is None and not streaming):
        body = raw.body if raw.body is not None else _accumulated(raw.sse or "")
        if body is None:
            return error_reply(500, "Internal server error", request_id, error_type="api_error")
        return json_reply(body, request_id, status=raw.status, headers=headers)
    if raw.sse is None:
        return _stream_reply(message_events(raw.body or {}, chunk_size=chunk_size), request_id)
    if not streaming:
        body = _accumulated(raw.sse)
        if body is None:
            return error_reply(500, "Internal server error", request_id, error_type="api_error")
        return json_reply(body, request_id)
    head = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", **headers,
            "request-id": request_id}
    frames = tuple((0.0, frame.encode("utf-8")) for frame in split_frames(raw.sse))
    return Reply(status=200, headers=head, frames=frames)
