"""The Messages API's server-sent events: from a finished message to the stream that carries it, and back.

``message_events(message)`` turns a Message (a dict, as a non-streaming
response would carry it) into the event payloads the API streams:
``message_start`` (empty content, input usage), per block
``content_block_start`` / ``content_block_delta``… / ``content_block_stop``,
``ping`` frames, ``message_delta`` (stop_reason, cumulative usage) and
``message_stop``. ``encode_event`` writes one frame; every frame has its
``event:`` line (the SDK drops frames without one). ``accumulate_events``
does the reverse, for serving a recorded stream to a non-streaming request.
This module knows nothing about scripts, HTTP or validation.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterable

from dreamloop.tokens import estimate_tokens

__all__ = [
    "accumulate_events",
    "encode_event",
    "event_delay",
    "message_events",
    "parse_frames",
    "split_frames",
]

Event = dict[str, Any]


def encode_event(event: Event) -> bytes:
    """One SSE frame: ``event: <type>`` and ``data: <json>`` lines, then a blank line."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode("utf-8")


def message_events(message: dict[str, Any], *, chunk_size: int = 16, cut_last_tool_use: bool = False) -> list[Event]:
    """The event payloads that stream ``message``; deltas carry ``chunk_size`` characters each.

    ``stop_reason`` None: no ``message_delta`` and no ``message_stop`` (an
    incomplete stream). ``cut_last_tool_use``: the ``max_tokens`` cut of a
    real stream (``anthropic-stream-tooluse-maxtokens-partial-json.sse``): the
    last tool_use's JSON stops half-way, that block gets no
    ``content_block_stop``, later blocks are not sent, and the stream ends with
    ``stop_reason: max_tokens``. Without a tool_use, the last text block is cut
    in half (and stopped, as the API does for text).
    """
    size = max(1, chunk_size)
    blocks = message.get("content", [])
    cut_at = _cut_index(blocks) if cut_last_tool_use else None
    events: list[Event] = [_message_start(message)]
    if not blocks:
        events.append({"type": "ping"})
    for index, block in enumerate(blocks):
        if cut_at is not None and index > cut_at:
            break
        cut = cut_at == index
        block_events = _block_events(index, block, size, cut=cut)
        if index == 0:
            block_events.insert(1, {"type": "ping"})  # after the first content_block_start, as the API does
        events.extend(block_events)
        if index < len(blocks) - 1 and not cut:
            events.append({"type": "ping"})  # between blocks
    stop_reason = "max_tokens" if cut_last_tool_use else message.get("stop_reason")
    if stop_reason is None:
        return events
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": message.get("stop_sequence")},
            "usage": dict(message.get("usage", {})),
        }
    )
    events.append({"type": "message_stop"})
    return events


def _cut_index(blocks: list[dict[str, Any]]) -> int | None:
    tool_uses = [i for i, b in enumerate(blocks) if b.get("type") == "tool_use"]
    if tool_uses:
        return tool_uses[-1]
    return len(blocks) - 1 if blocks else None


def _message_start(message: dict[str, Any]) -> Event:
    usage = dict(message.get("usage", {}))
    usage["output_tokens"] = min(1, usage.get("output_tokens", 1))
    start = {k: v for k, v in message.items() if k not in ("content", "stop_reason", "stop_sequence", "usage")}
    start.update(content=[], stop_reason=None, stop_sequence=None, usage=usage)
    return {"type": "message_start", "message": start}


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _block_events(index: int, block: dict[str, Any], size: int, *, cut: bool) -> list[Event]:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text", "")
        if cut:
            text = text[: len(text) // 2]
        start = {k: v for k, v in block.items() if k != "citations"} | {"text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(text, size)]
    elif kind == "tool_use":
        raw = json.dumps(block.get("input", {}), ensure_ascii=False)
        if cut:
            raw = raw[: max(1, len(raw) // 2)]
        start = block | {"input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": c} for c in [""] + (_chunks(raw, size) if raw != "{}" else [])]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block.get("thinking", ""), size)]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
    else:  # redacted_thinking, server tool blocks, ...: whole in content_block_start, no deltas
        start, deltas = block, []
    events: list[Event] = [{"type": "content_block_start", "index": index, "content_block": copy.deepcopy(start)}]
    events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
    if not (cut and kind == "tool_use"):
        events.append({"type": "content_block_stop", "index": index})
    return events


def event_delay(event: Event, tokens_per_second: float | None) -> float:
    """Seconds to wait before sending ``event`` at ``tokens_per_second`` (only deltas take time)."""
    if not tokens_per_second or event.get("type") != "content_block_delta":
        return 0.0
    delta = event["delta"]
    piece = delta.get("text") or delta.get("partial_json") or delta.get("thinking") or ""
    return estimate_tokens(piece) / tokens_per_second


# ---------------------------------------------------------------------------
# Reading streams back (recorded fixtures)


def split_frames(body: str) -> list[str]:
    """The frames of an SSE body, each ending in its blank line, otherwise unchanged.

    Line endings become ``\n``; a last frame whose blank line the file lost
    (files often drop the final newline; a live stream never does) gets it back,
    or SSE clients would never dispatch it.
    """
    parts = body.replace("\r\n", "\n").split("\n\n")
    frames = [p + "\n\n" for p in parts[:-1] if p.strip("\n")]
    if parts[-1].strip("\n"):
        frames.append(parts[-1].rstrip("\n") + "\n\n")
    return frames


def parse_frames(body: str) -> list[Event]:
    """The JSON ``data`` payloads of an SSE body, in order (frames without data are skipped)."""
    events = []
    for frame in split_frames(body):
        data = "\n".join(line[5:].lstrip(" ") for line in frame.replace("\r", "\n").split("\n")
                         if line.startswith("data:"))  # SSE lines end at CR or LF only, never at U+2028
        if data.strip():
            events.append(json.loads(data))
    return events


def accumulate_events(events: Iterable[Event]) -> dict[str, Any]:
    """The Message a stream of event payloads adds up to (a dict; non-streaming shape).

    Blocks that never got ``content_block_stop`` (a ``max_tokens`` cut) are left
    out. Raises ``ValueError`` on an ``error`` event or a stream without
    ``message_start``.
    """
    message: dict[str, Any] | None = None
    json_parts: dict[int, str] = {}
    stopped: set[int] = set()
    for event in events:
        kind = event.get("type")
        if kind == "error":
            raise ValueError(f"the stream carries an error event: {event.get('error')}")
        if kind == "message_start":
            message = copy.deepcopy(event["message"])
            continue
        if message is None:
            if kind == "ping":
                continue
            raise ValueError(f"{kind} before message_start")
        if kind == "content_block_start":
            message["content"].append(copy.deepcopy(event["content_block"]))
        elif kind == "content_block_delta":
            _apply_delta(message["content"][event["index"]], event["delta"], json_parts, event["index"])
        elif kind == "content_block_stop":
            stopped.add(event["index"])
            if event["index"] in json_parts:
                raw = json_parts[event["index"]]
                message["content"][event["index"]]["input"] = json.loads(raw) if raw else message["content"][event["index"]]["input"]
        elif kind == "message_delta":
            message.update({k: v for k, v in event.get("delta", {}).items() if k in ("stop_reason", "stop_sequence")})
            message["usage"] = {**message.get("usage", {}), **event.get("usage", {})}
    if message is None:
        raise ValueError("the stream has no message_start")
    message["content"] = [b for i, b in enumerate(message["content"]) if i in stopped]
    return message


def _apply_delta(block: dict[str, Any], delta: dict[str, Any], json_parts: dict[int, str], index: int) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
    elif kind == "input_json_delta":
        json_parts[index] = json_parts.get(index, "") + delta["partial_json"]
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta["thinking"]
    elif kind == "signature_delta":
        block["signature"] = delta["signature"]
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta["citation"])
