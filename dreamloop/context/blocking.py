"""Stage 7, the blocking limit (the conversation-loop text's Token 阻断检查).

The last check before a request: if the context is still over the hard limit
after every lighter stage, sending it would only earn a ``prompt is too long``
400, so nothing is sent and the run ends with Terminal ``blocking_limit``.
A pure decision and its message; it knows nothing about the other stages.
"""

from __future__ import annotations

__all__ = ["blocking_message", "is_at_blocking_limit"]


def is_at_blocking_limit(tokens: int, limit: int | None) -> bool:
    """True when a request of ``tokens`` input tokens must not be sent (``limit`` None: no limit)."""
    return limit is not None and tokens > limit


def blocking_message(tokens: int, limit: int, window: int) -> str:
    """What the person is told when the run stops at the blocking limit."""
    return (f"The context is {tokens:,} tokens, over the blocking limit of {limit:,} (window {window:,}); "
            "no request was sent. Compact the conversation (turn autocompact on) or start a new one.")
