"""Prompt caching, simulated the way the Messages API documents it.

A request marks breakpoints with ``cache_control`` on content blocks (tools,
system, messages: the cache's order). At each breakpoint whose prefix is long
enough (``min_tokens``), the prefix up to and including that block is written
to the cache; a later request that starts with the same bytes reads it back.
The API looks for a hit at every block boundary up to ``lookback`` blocks
before each breakpoint, so moving the breakpoint to the newest message each
turn still reads what the previous turn wrote. ``cache_control`` itself is not
part of what is compared. The ``usage`` split is the API's:
``cache_read_input_tokens`` (the prefix found), ``cache_creation_input_tokens``
(from there to the last breakpoint) and ``input_tokens`` (the rest).

Simplifications, said out loud: entries never expire (no 5-minute TTL), the
cache is per API instance and per model, and sizes are ``dreamloop.tokens``
estimates. This module knows nothing about HTTP or scripts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from dreamloop.tokens import Segment, request_segments

__all__ = ["LOOKBACK_BLOCKS", "MIN_CACHEABLE_TOKENS", "CacheUsage", "PromptCache"]

MIN_CACHEABLE_TOKENS = 1024
"""The shortest prefix the API caches (Sonnet and Opus models; shorter prefixes are processed uncached)."""

LOOKBACK_BLOCKS = 20
"""How many block boundaries before a breakpoint the API checks for an earlier cache entry."""


@dataclass(frozen=True)
class CacheUsage:
    """The input side of ``usage``: the three counts add up to the request's input size."""

    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


class PromptCache:
    """The prefixes a fake API has cached: ``usage(body)`` answers one request and records its writes.

    ``min_tokens``: the shortest cacheable prefix; ``lookback``: block
    boundaries checked before each breakpoint. ``entries`` is how many
    prefixes are cached.
    """

    def __init__(self, *, min_tokens: int = MIN_CACHEABLE_TOKENS, lookback: int = LOOKBACK_BLOCKS) -> None:
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._written: dict[bytes, int] = {}

    @property
    def entries(self) -> int:
        return len(self._written)

    def clear(self) -> None:
        self._written.clear()

    def usage(self, body: dict[str, Any], segments: list[Segment] | None = None) -> CacheUsage:
        """Split the request's input tokens into uncached, written and read; remember what was written.

        ``segments``: ``list(request_segments(body))`` when the caller already has it.
        """
        segments = segments if segments is not None else list(request_segments(body))
        total = max(sum(s.tokens for s in segments), 1)
        blocks = [i for i, s in enumerate(segments) if s.block]
        marks = [k for k, i in enumerate(blocks) if segments[i].breakpoint]
        if not marks:
            return CacheUsage(input_tokens=total)
        # Which block boundaries we need a digest at: each breakpoint and the look-back before it.
        wanted: set[int] = set()
        for k in marks:
            wanted.update(blocks[j] for j in range(max(0, k - self.lookback), k + 1))
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        cumulative, at, done = 0, {}, max(wanted)
        for i, segment in enumerate(segments[: done + 1]):
            digest.update(segment.key.encode("utf-8"))
            digest.update(b"\x00")
            cumulative += segment.tokens
            if i in wanted:
                at[i] = (digest.copy().digest(), cumulative)
        read = 0
        for k in marks:  # the longest prefix already cached, within each breakpoint's look-back
            for j in range(k, max(0, k - self.lookback) - 1, -1):
                key, size = at[blocks[j]]
                if key in self._written:
                    read = max(read, size)
                    break
        cached_to = 0
        for k in marks:
            key, size = at[blocks[k]]
            if size >= self.min_tokens:
                self._written[key] = size
                cached_to = size
        written = max(cached_to - read, 0)
        return CacheUsage(input_tokens=max(total - read - written, 0), cache_creation_input_tokens=written,
                          cache_read_input_tokens=read)
