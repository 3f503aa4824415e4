"""The one token estimator of the kit, and how a request adds up.

There is no official offline tokenizer for Claude 3+ models, so every number
dreamloop shows offline (the fake API's ``usage``, ``count_tokens``, the
context pipeline's budgets, the context meter) comes from this deterministic
estimate: about 3.5 characters per token, plus a small overhead per message
and per content block. Against a live API, the server's ``usage`` is the
authority. ``request_segments`` lays a request out in prompt-cache order
(tools, system, messages); ``TokenCounter`` counts loop messages one at a
time, as they would be sent. This module knows nothing about the loop's phases.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

__all__ = [
    "CHARS_PER_TOKEN",
    "MESSAGE_OVERHEAD",
    "MessageTokens",
    "Segment",
    "TokenCounter",
    "estimate_block_tokens",
    "estimate_request_tokens",
    "estimate_tokens",
    "message_tokens",
    "request_segments",
]

CHARS_PER_TOKEN = 3.5
MESSAGE_OVERHEAD = 3
"""Tokens one API message costs besides its blocks (its role and framing)."""
_PER_BLOCK = 2


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def estimate_block_tokens(block: Any) -> int:
    """Estimated tokens of one content block (a dict, an SDK block or a plain string)."""
    if isinstance(block, str):
        return _text_tokens(block)
    if not isinstance(block, dict):
        block = block.model_dump(mode="json", exclude_none=True)
    kind = block.get("type")
    if kind == "text":
        body = _text_tokens(block.get("text", ""))
    elif kind == "thinking":
        body = _text_tokens(block.get("thinking", ""))
    elif kind == "tool_use":
        body = _text_tokens(block.get("name", "")) + _text_tokens(json.dumps(block.get("input", {}), sort_keys=True))
    elif kind == "tool_result":
        content = block.get("content", "")
        body = sum(estimate_block_tokens(b) for b in content) if isinstance(content, list) else _text_tokens(str(content))
    else:
        body = _text_tokens(json.dumps(block, sort_keys=True))
    return body + _PER_BLOCK


_block_tokens = estimate_block_tokens


def estimate_tokens(content: Any) -> int:
    """Estimated tokens of a string, a content block, a list of blocks or a ``MessageParam``.

    Returns a non-negative int; deterministic for equal input.
    """
    if isinstance(content, str):
        return _text_tokens(content)
    if isinstance(content, dict) and "role" in content:
        inner = content.get("content", "")
        return MESSAGE_OVERHEAD + (_text_tokens(inner) if isinstance(inner, str) else sum(_block_tokens(b) for b in inner))
    if isinstance(content, (list, tuple)):
        return sum(estimate_tokens(item) if isinstance(item, dict) and "role" in item else _block_tokens(item) for item in content)
    return _block_tokens(content)


# ---------------------------------------------------------------------------
# A request, in prompt-cache order


@dataclass(frozen=True)
class Segment:
    """One piece of a request's prefix: a tool, a system block, a message's start, or a message block.

    ``key`` is the piece's identity without ``cache_control`` (what a prompt
    cache compares: the same block sent the same way has the same key);
    ``tokens`` its estimate; ``breakpoint``: it carries ``cache_control``;
    ``block``: it is a content block (the API's unit for breakpoints and
    cache look-back).
    """

    key: str
    tokens: int
    breakpoint: bool = False
    block: bool = True


def _key(block: Any) -> tuple[str, bool]:
    """A block's identity for the cache (its ``repr`` without ``cache_control``) and whether it is marked."""
    if isinstance(block, dict) and "cache_control" in block:
        return repr({k: v for k, v in block.items() if k != "cache_control"}), True
    return repr(block), False


def request_segments(body: dict[str, Any], *, keys: bool = True) -> Iterator[Segment]:
    """The request's prefix piece by piece: ``tools``, then ``system``, then ``messages`` (the cache's order).

    The tokens of all segments add up to ``estimate_request_tokens(body)``
    (before its floor of 1). ``keys=False`` skips the keys (faster, for counting only).
    """
    def key(block: Any) -> tuple[str, bool]:
        return _key(block) if keys else ("", isinstance(block, dict) and "cache_control" in block)

    for tool in body.get("tools", []) or []:
        text, marked = key(tool)
        yield Segment("tool:" + text, _text_tokens(json.dumps(tool, sort_keys=True)), marked)
    system = body.get("system")
    if isinstance(system, str):
        yield Segment("system:" + (system if keys else ""), _text_tokens(system))
    elif isinstance(system, list):
        for block in system:
            text, marked = key(block)
            yield Segment("system:" + text, _block_tokens(block), marked)
    for message in body.get("messages", []):
        content = message.get("content", "")
        yield Segment(f"message:{message.get('role')}", MESSAGE_OVERHEAD, block=False)
        if isinstance(content, str):
            yield Segment("text:" + (content if keys else ""), _text_tokens(content))
            continue
        for block in content:
            text, marked = key(block)
            yield Segment(text, _block_tokens(block), marked)


def estimate_request_tokens(body: dict[str, Any]) -> int:
    """Estimated input tokens of a Messages API request body (``messages``, ``system``, ``tools``)."""
    return max(sum(segment.tokens for segment in request_segments(body, keys=False)), 1)


# ---------------------------------------------------------------------------
# Loop messages, one at a time


@dataclass(frozen=True)
class MessageTokens:
    """What one loop message adds to a request: its API ``role`` after normalization
    (None: it is never sent) and the ``tokens`` of its blocks (without ``MESSAGE_OVERHEAD``)."""

    role: str | None
    tokens: int


def message_tokens(message: Any) -> MessageTokens:
    """The estimate of one loop message as ``normalize_messages_for_api()`` would send it.

    Assistant and user messages are read directly (the same numbers, without serialising the SDK's
    blocks); anything else goes through ``normalize_messages_for_api``.
    """
    kind = getattr(message, "type", None)
    if kind == "assistant":
        tokens, sent = 0, False
        for block in message.message.content:
            if block.type == "text":
                if not block.text.strip():
                    continue  # never sent (F5)
                tokens += _text_tokens(block.text) + _PER_BLOCK
            elif block.type == "tool_use":
                tokens += _text_tokens(block.name) + _text_tokens(json.dumps(block.input, sort_keys=True)) + _PER_BLOCK
            elif block.type == "thinking":
                tokens += _text_tokens(block.thinking) + _PER_BLOCK
            else:
                tokens += _block_tokens(block.model_dump(mode="json", exclude_none=True, by_alias=True))
            sent = True
        return MessageTokens("assistant" if sent else None, tokens)
    if kind == "user":
        content = message.message.get("content")
        if isinstance(content, str):
            if not content.strip():
                return MessageTokens(None, 0)
            return MessageTokens("user", _text_tokens(content) + _PER_BLOCK)
        blocks = [b for b in content or [] if not (b.get("type") == "text" and not str(b.get("text", "")).strip())]
        return MessageTokens("user", sum(_block_tokens(b) for b in blocks)) if blocks else MessageTokens(None, 0)
    from .messages import normalize_messages_for_api

    params = normalize_messages_for_api([message])
    if not params:
        return MessageTokens(None, 0)
    return MessageTokens(params[0]["role"], sum(_block_tokens(b) for b in params[0]["content"]))


class TokenCounter:
    """Counts loop messages as a request would: each message estimated once (cached by uuid).

    Neighbours with the same API role are merged into one API message (as
    ``normalize_messages_for_api()`` merges them), so they share one
    ``MESSAGE_OVERHEAD``. Loop messages are immutable, so a uuid's estimate
    never changes. ``count(messages)`` costs O(len) dictionary look-ups;
    ``extend()`` adds messages to a running total without re-reading the rest.
    """

    def __init__(self) -> None:
        self._cache: dict[str, MessageTokens] = {}

    def of(self, message: Any) -> MessageTokens:
        """The estimate of one message (computed once per uuid)."""
        known = self._cache.get(message.uuid)
        if known is None:
            known = self._cache[message.uuid] = message_tokens(message)
        return known

    def extend(self, total: int, last_role: str | None, messages: Iterable[Any]) -> tuple[int, str | None]:
        """``(total, last_role)`` after appending ``messages`` to a request that had ``total`` tokens
        and whose last sent message had role ``last_role`` (None: no message yet)."""
        for message in messages:
            counted = self.of(message)
            if counted.role is None:
                continue
            total += counted.tokens + (0 if counted.role == last_role else MESSAGE_OVERHEAD)
            last_role = counted.role
        return total, last_role

    def count(self, messages: Iterable[Any], *, after_role: str | None = None) -> int:
        """Tokens of ``messages`` as sent (after a message of role ``after_role``, if any)."""
        return self.extend(0, after_role, messages)[0]

    def forget(self, keep: Iterable[str]) -> None:
        """Drop the cached estimates of every uuid not in ``keep`` (after a compaction)."""
        keep = set(keep)
        self._cache = {u: t for u, t in self._cache.items() if u in keep}
