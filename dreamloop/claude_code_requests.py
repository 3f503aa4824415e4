"""The requests a Claude Code session file records, rebuilt as sent (seen in Claude Code 2.1.332).

Claude Code 2.1.332 writes each request it sends into the session file, in three record types:
``api-request-shape`` (the system prompt and the tool definitions, once per ``shapeHash``),
``api-request-blob`` (a message, once per ``hash``: the SHA-256 of its JSON with sorted keys and
no spaces) and ``api-request`` (``id``, ``params``: model, max_tokens, thinking, betas ...;
``base``: the previous request's id, ``keep``: how many of its messages come first, ``tail``: the
hashes of the messages after them; ``cacheControl``: where ``cache_control`` went;
``requestDigest``: the SHA-256 of the whole body). An assistant message sent back is no blob: its
hash is that of ``{"role": "assistant", "content": ...}`` from the assistant records, and each
assistant record's ``requestRef`` names the request that produced it. Rebuilt this way, every
request body's digest equals the recorded one (checked, per request). Observed with
``dreamloop compare`` (scenarios one_tool, max_tokens_always, ...); no spec exists. This module
knows nothing about branches, loop State or widgets: records in, request bodies out.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["RecordedRequest", "content_hash", "recorded_requests", "request_summary"]

REQUEST_TYPES = ("api-request-shape", "api-request-blob", "api-request")
"""The record types that hold the requests as sent (2.1.332); none goes to the model itself."""

_REMINDER = "<system-reminder>"


def content_hash(value: Any) -> str:
    """The hash Claude Code names a message or a shape by: SHA-256 of its JSON, keys sorted, no spaces."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class RecordedRequest:
    """One request as Claude Code sent it, rebuilt from the file.

    * ``id``, ``line``: the ``api-request`` record's id and 1-based line;
    * ``body``: the request body (``model``, ``max_tokens`` and the other ``params``, ``system``,
      ``tools``, ``messages``), with ``cache_control`` where the record says it went;
    * ``hashes``: each message's hash (as the file names it), ``shape``: the ``shapeHash``;
      ``base``: the id of the request it extends (None for the first);
    * ``missing``: message hashes the file does not hold (their messages are None in ``body``);
    * ``digest_ok``: the rebuilt body's SHA-256 equals ``requestDigest`` (None: nothing recorded);
    * ``answered``: an assistant record names this request (``requestRef``); False for a request
      the API refused (its error is a synthetic message after it).
    """

    id: str
    line: int
    body: dict[str, Any]
    hashes: list[str]
    shape: str | None
    base: str | None = None
    missing: list[str] = field(default_factory=list)
    digest_ok: bool | None = None
    answered: bool = False

    @property
    def messages(self) -> list[Any]:
        return self.body.get("messages", [])

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_tokens")
        return value if isinstance(value, int) else None


def recorded_requests(records: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, RecordedRequest]:
    """The requests a session file records, by id, in file order (``{}`` for files before 2.1.332).

    ``records``: ``(line, record)`` pairs in file order. A request whose ``base`` is not in the
    file starts from no messages (its ``missing`` says so); an unknown hash leaves a None message.
    """
    records = list(records)
    shapes: dict[str, Any] = {}
    blobs: dict[str, Any] = {}
    assistants: dict[str, list[Any]] = {}
    answered: set[str] = set()
    for _, data in records:
        kind = data.get("type")
        if kind == "api-request-shape" and isinstance(data.get("shape"), dict):
            shapes[str(data.get("shapeHash"))] = data["shape"]
        elif kind == "api-request-blob" and isinstance(data.get("message"), dict):
            blobs[str(data.get("hash"))] = data["message"]
        elif kind == "assistant" and isinstance(data.get("message"), dict):
            message = data["message"]
            if message.get("model") == "<synthetic>" or not isinstance(message.get("content"), list):
                continue
            blocks = assistants.setdefault(str(message.get("id")), [])
            blocks += [b for b in message["content"] if b not in blocks]
            if data.get("requestRef"):
                answered.add(str(data["requestRef"]))
    for blocks in assistants.values():
        sent = {"role": "assistant", "content": blocks}
        blobs.setdefault(content_hash(sent), sent)
    found: dict[str, RecordedRequest] = {}
    for line, data in records:
        if data.get("type") != "api-request" or not isinstance(data.get("id"), str):
            continue
        base = found.get(str(data.get("base"))) if data.get("base") else None
        keep = int(data.get("keep") or 0)
        tail = [str(h) for h in data.get("tail") or []]
        hashes = (base.hashes[:keep] if base else []) + tail
        missing = [h for h in tail if h not in blobs]
        if data.get("base") and base is None:
            missing.insert(0, f"base request {data['base']}")
        messages = [copy.deepcopy(blobs.get(h)) for h in hashes]
        shape = shapes.get(str(data.get("shapeHash")), {})
        params = data.get("params") if isinstance(data.get("params"), dict) else {}
        body = {"messages": messages, **copy.deepcopy(shape), **copy.deepcopy(params)}
        for mark in data.get("cacheControl") or []:
            _place(body, mark)
        digest = data.get("requestDigest")
        request = RecordedRequest(id=data["id"], line=line, body=body, hashes=hashes,
                                  shape=data.get("shapeHash"), base=data.get("base") or None, missing=missing,
                                  digest_ok=None if not digest else content_hash(body) == digest,
                                  answered=data["id"] in answered)
        found[request.id] = request
    return found


def _place(body: dict[str, Any], mark: Any) -> None:
    """Put ``cache_control`` where a ``cacheControl`` entry's ``path`` points (skip a path that does not)."""
    if not isinstance(mark, dict) or not isinstance(mark.get("path"), list):
        return
    target: Any = body
    for step in mark["path"]:
        try:
            target = target[step]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(target, str):  # a message whose content is a string: not seen; leave it
        return
    if isinstance(target, dict):
        target["cache_control"] = mark.get("value")


def reminder_count(message: Any) -> int:
    """``<system-reminder>`` blocks in a sent message, those inside tool results included."""
    count = 0
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            count += str(block.get("text", "")).count(_REMINDER)
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            texts = [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or []
                                                             if isinstance(b, dict)]
            count += sum(str(t).count(_REMINDER) for t in texts)
    return count


def cache_paths(body: dict[str, Any]) -> list[str]:
    """Where ``cache_control`` sits, as ``system[1]`` / ``messages[0].content[8]`` / ``tools[3]``."""
    found = []
    for i, block in enumerate(body.get("system") or []):
        if isinstance(block, dict) and "cache_control" in block:
            found.append(f"system[{i}]")
    for i, tool in enumerate(body.get("tools") or []):
        if isinstance(tool, dict) and "cache_control" in tool:
            found.append(f"tools[{i}]")
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and "cache_control" in block:
                found.append(f"messages[{i}].content[{j}]")
    return found


def request_summary(request: RecordedRequest) -> dict[str, Any]:
    """What the inspector shows of a recorded request, without its texts' bulk: a JSON-ready dict.

    ``params``: the body's fields other than system, tools and messages; ``system``: each block's
    length; ``tools``: each tool's name and description length; ``messages``: how many, and the
    ``<system-reminder>`` blocks among them; ``cache_control``: ``cache_paths``; ``digest_ok``,
    ``missing``, ``answered``, ``id``, ``line``, ``shape``.
    """
    body = request.body
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    return {
        "id": request.id,
        "line": request.line,
        "shape": request.shape,
        "params": {k: v for k, v in body.items() if k not in ("system", "tools", "messages")},
        "system": [len(str(b.get("text", ""))) for b in system if isinstance(b, dict)],
        "tools": [(str(t.get("name")), len(str(t.get("description", "")))) for t in body.get("tools") or []
                  if isinstance(t, dict)],
        "messages": len(request.messages),
        "reminders": sum(reminder_count(m) for m in request.messages if m is not None),
        "cache_control": cache_paths(body),
        "digest_ok": request.digest_ok,
        "missing": list(request.missing),
        "answered": request.answered,
    }
