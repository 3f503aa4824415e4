"""The one token estimator of the kit.

There is no official offline tokenizer for Claude 3+ models, so every number
dreamloop shows offline (the fake API's ``usage``, ``count_tokens``, context
budgets) comes from this deterministic estimate: about 3.5 characters per
token, plus a small overhead per message and per content block. Against a
live API, the server's ``usage`` is the authority.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["CHARS_PER_TOKEN", "estimate_request_tokens", "estimate_tokens"]

CHARS_PER_TOKEN = 3.5
_PER_MESSAGE = 3
_PER_BLOCK = 2


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def _block_tokens(block: Any) -> int:
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
        body = sum(_block_tokens(b) for b in content) if isinstance(content, list) else _text_tokens(str(content))
    else:
        body = _text_tokens(json.dumps(block, sort_keys=True))
    return body + _PER_BLOCK


def estimate_tokens(content: Any) -> int:
    """Estimated tokens of a string, a content block, a list of blocks or a ``MessageParam``.

    Returns a non-negative int; deterministic for equal input.
    """
    if isinstance(content, str):
        return _text_tokens(content)
    if isinstance(content, dict) and "role" in content:
        inner = content.get("content", "")
        return _PER_MESSAGE + (_text_tokens(inner) if isinstance(inner, str) else sum(_block_tokens(b) for b in inner))
    if isinstance(content, (list, tuple)):
        return sum(estimate_tokens(item) if isinstance(item, dict) and "role" in item else _block_tokens(item) for item in content)
    return _block_tokens(content)


def estimate_request_tokens(body: dict[str, Any]) -> int:
    """Estimated input tokens of a Messages API request body (``messages``, ``system``, ``tools``)."""
    total = sum(estimate_tokens(m) for m in body.get("messages", []))
    system = body.get("system")
    if isinstance(system, str):
        total += _text_tokens(system)
    elif isinstance(system, list):
        total += sum(_block_tokens(b) for b in system)
    for tool in body.get("tools", []) or []:
        total += _text_tokens(json.dumps(tool, sort_keys=True))
    return max(total, 1)
