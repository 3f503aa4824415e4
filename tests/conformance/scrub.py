"""Scrubbing Anthropic's text out of a Claude Code session file, for a fixture kept in the repository.

``make_fixtures.py`` writes the 2.1.332 fixtures with ``scrub_records``; ``tests/test_claude_code.py`` and
``test_claude_code_sessions.py`` hold a scrubbed file to rebuild as the original does and to keep no text of
Anthropic's (the system prompt, tool descriptions, reminders): shapes, lengths and hashes only. Test tooling,
not the package's: the importer (``dreamloop.claude_code``) never scrubs anything.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from dreamloop.claude_code_requests import content_hash, recorded_requests

__all__ = ["placeholder", "scrub_records", "scrub_text"]

_REMINDER = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"


def placeholder(text: str, *, same_length: bool = True) -> str:
    """A stand-in for ``text`` that keeps its shape, never its words.

    ``[scrubbed N chars sha256:HASH]``: padded with ``~`` (or cut) to ``len(text)`` when
    ``same_length``, else as it is (the length and hash recorded in it).
    """
    mark = f"[scrubbed {len(text)} chars sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}]"
    if not same_length:
        return mark
    return mark[: len(text)] if len(mark) >= len(text) else mark + "~" * (len(text) - len(mark))


def scrub_text(text: str) -> str:
    """``text`` with the inside of each ``<system-reminder>`` replaced (same length); other text kept.

    Text without a reminder is returned as it is: the caller decides which texts are Anthropic's.
    """
    out, at = [], 0
    while True:
        start = text.find(_REMINDER, at)
        if start < 0:
            out.append(text[at:])
            return "".join(out)
        inner = start + len(_REMINDER)
        end = text.find(_REMINDER_CLOSE, inner)
        end = len(text) if end < 0 else end
        out.append(text[at:inner] + placeholder(text[inner:end]))
        at = end


def _scrub_content(content: Any, *, everything: bool) -> Any:
    """A message's content with its reminders (``everything``: all its text) scrubbed, same lengths."""
    def one(text: str) -> str:
        return placeholder(text) if everything and _REMINDER not in text else scrub_text(text)
    if isinstance(content, str):
        return one(content)
    if not isinstance(content, list):
        return content
    blocks = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            block = {**block, "text": one(str(block.get("text", "")))}
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                inner = scrub_text(inner)
            elif isinstance(inner, list):
                inner = [{**b, "text": scrub_text(str(b.get("text", "")))} if isinstance(b, dict)
                         and b.get("type") == "text" else b for b in inner]
            block = {**block, "content": inner}
        blocks.append(block)
    return blocks


def _scrub_leaves(value: Any, *, keep: tuple[str, ...] = ("type",)) -> Any:
    """Every string under ``value`` replaced by a short placeholder (length and hash), keys in ``keep`` kept."""
    if isinstance(value, str):
        return placeholder(value, same_length=False) if value else value
    if isinstance(value, list):
        return [_scrub_leaves(v, keep=keep) for v in value]
    if isinstance(value, dict):
        return {k: v if k in keep else _scrub_leaves(v, keep=keep) for k, v in value.items()}
    return value


def _scrub_schema(value: Any) -> Any:
    """A tool's input schema with every ``description`` replaced (same length); names and types kept."""
    if isinstance(value, list):
        return [_scrub_schema(v) for v in value]
    if isinstance(value, dict):
        return {k: placeholder(v) if k == "description" and isinstance(v, str) else _scrub_schema(v)
                for k, v in value.items()}
    return value


def _replace_leaves(value: Any, replace: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in replace.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace_leaves(v, replace) for v in value]
    if isinstance(value, dict):
        return {k: _replace_leaves(v, replace) for k, v in value.items()}
    return value


def _assistant_hashes(records: list[dict[str, Any]]) -> dict[str, str]:
    """message id -> the hash of ``{"role": "assistant", "content": ...}`` (the blocks of all its records)."""
    blocks: dict[str, list[Any]] = {}
    for data in records:
        message = data.get("message")
        if data.get("type") == "assistant" and isinstance(message, dict) and message.get("model") != "<synthetic>" \
                and isinstance(message.get("content"), list):
            found = blocks.setdefault(str(message.get("id")), [])
            found += [b for b in message["content"] if b not in found]
    return {mid: content_hash({"role": "assistant", "content": b}) for mid, b in blocks.items()}


def scrub_records(records: list[dict[str, Any]], *, replace: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """A session file's records without Anthropic's text, for a fixture: same shapes, same lengths.

    Replaced: the system prompt's and tool definitions' texts (``api-request-shape``), the
    ``<system-reminder>`` blocks and other text the program wrote into a request or a message
    (``api-request-blob``, ``isMeta`` user records, ``hookTextLead``, a synthetic message's text),
    and every string of an ``attachment`` record's payload and rendering. Kept: the prompts, the
    model's responses, tool calls and results (the scenario's own), ids, record types and fields,
    the error details the API sent. ``replace``: text replaced in every string first (e.g. a
    local folder's path). Hashes are recomputed (``shapeHash``, blob ``hash``, ``tail``) and a
    ``requestDigest`` that matched still matches, so the scrubbed file rebuilds the same way.
    """
    hashes: dict[str, str] = {}  # old hash -> new, for shapes, blobs and assistant messages
    out: list[dict[str, Any]] = []
    for data in records:
        data = _replace_leaves(copy.deepcopy(data), replace) if replace else copy.deepcopy(data)
        kind = data.get("type")
        if kind == "api-request-shape" and isinstance(data.get("shape"), dict):
            shape = data["shape"]
            for block in shape.get("system") or []:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    block["text"] = placeholder(block["text"])
            for tool in shape.get("tools") or []:
                if isinstance(tool, dict):
                    if isinstance(tool.get("description"), str):
                        tool["description"] = placeholder(tool["description"])
                    for key in ("input_schema", "schema"):
                        if key in tool:
                            tool[key] = _scrub_schema(tool[key])
            hashes[str(data.get("shapeHash"))] = data["shapeHash"] = content_hash(shape)
        elif kind == "api-request-blob" and isinstance(data.get("message"), dict):
            message = data["message"]
            # a system-role message (the probe Claude Code sends an Opus 4.8+ model first) is all its text
            message["content"] = _scrub_content(message.get("content"), everything=message.get("role") == "system")
            hashes[str(data.get("hash"))] = data["hash"] = content_hash(message)
        elif kind == "user" and isinstance(data.get("message"), dict):
            meta = bool(data.get("isMeta"))
            data["message"]["content"] = _scrub_content(data["message"].get("content"), everything=meta)
            if isinstance(data.get("hookTextLead"), str):
                data["hookTextLead"] = placeholder(data["hookTextLead"])
        elif kind == "assistant" and isinstance(data.get("message"), dict) \
                and data["message"].get("model") == "<synthetic>":
            data["message"]["content"] = _scrub_content(data["message"].get("content"), everything=True)
        elif kind == "attachment":
            for key in ("attachment", "rendered"):
                if key in data:
                    data[key] = _scrub_leaves(data[key])
        out.append(data)
    old, new = _assistant_hashes(records), _assistant_hashes(out)
    hashes.update({old[mid]: new[mid] for mid in old if mid in new})
    for data in out:
        if data.get("type") == "api-request":
            data["shapeHash"] = hashes.get(str(data.get("shapeHash")), data.get("shapeHash"))
            data["tail"] = [hashes.get(str(h), h) for h in data.get("tail") or []]
    # the digests: where the original matched, the scrubbed body's digest (so the check still holds)
    before = recorded_requests(enumerate(records, start=1))
    after = recorded_requests(enumerate(out, start=1))
    for data in out:
        if data.get("type") == "api-request" and data.get("id") in after:
            if before.get(data["id"]) is not None and before[data["id"]].digest_ok:
                data["requestDigest"] = content_hash(after[data["id"]].body)
    return out
