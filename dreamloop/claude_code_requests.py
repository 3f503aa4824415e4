"""The requests a session file records, rebuilt as sent (seen in Claude Code 2.1.332's, ``max_tokens_always``).

Claude Code 2.1.332 wrote each request it sent into the session file (sessions 09 to 11 of the fixtures,
runs of ``max_tokens_always``, ``prompt_too_long_after_tools`` and ``hook_stop_exit_2_once``), in three
record types:
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

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["RecordedRequest", "content_hash", "recorded_requests", "request_summary"]

REQUEST_TYPES = ("api-request-shape", "api-request-blob", "api-request")
"""The record types that hold the requests as sent (2.1.332); none goes to the model itself."""

_REMINDER = "<system-reminder>"


def content_hash(value: Any) -> str:
    """The hash a session file names a message or a shape by: SHA-256 of its JSON, keys sorted, no spaces."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class RecordedRequest:
    """One request as it was sent, rebuilt from the session file.

    * ``id``, ``line``: the ``api-request`` record's id and 1-based line;
    * ``body``: the request body (``model``, ``max_tokens`` and the other ``params``, ``system``,
      ``tools``, ``messages``), with ``cache_control`` where the record says it went;
    * ``hashes``: each message's hash (as the file names it), ``shape``: the ``shapeHash``;
      ``base``: the id of the request it extends (None for the first);
    * ``missing``: message hashes the file does not hold (their messages are None in ``body``);
    * ``digest_ok``: the rebuilt body's SHA-256 equals ``requestDigest`` (None: nothing recorded);
    * ``answered``: an assistant record names this request (``requestRef``); False for a request
      the API refused (its error is a synthetic message after it);
    * ``reminders``: its ``<system-reminder>`` blocks; ``cache``: where ``cache_control`` went
      (``system[1]``, ``messages[0].content[8]``), as the record says.
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
    reminders: int = 0
    cache: list[str] = field(default_factory=list)
    summary: dict[str, Any] | None = field(default=None, repr=False)  # request_summary's, once made

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
    texts: dict[int, str] = {}  # id() of a shared message -> its JSON (each message serialized once)
    counted: dict[str, int] = {}  # message hash -> its reminder blocks
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
        # the body shares the file's messages and shape; only what cache_control marks is copied
        messages = [blobs.get(h) for h in hashes]
        shape = shapes.get(str(data.get("shapeHash")), {})
        params = data.get("params") if isinstance(data.get("params"), dict) else {}
        body = {"messages": messages, **shape, **params}
        for mark in data.get("cacheControl") or []:
            _place(body, mark)
        digest = data.get("requestDigest")
        for key in hashes:
            if key not in counted:
                counted[key] = reminder_count(blobs[key]) if blobs.get(key) is not None else 0
        marks = [m["path"] for m in data.get("cacheControl") or [] if isinstance(m, dict)
                 and isinstance(m.get("path"), list) and m["path"]]
        request = RecordedRequest(id=data["id"], line=line, body=body, hashes=hashes,
                                  shape=data.get("shapeHash"), base=data.get("base") or None, missing=missing,
                                  digest_ok=None if not digest else _body_hash(body, texts) == digest,
                                  answered=data["id"] in answered, reminders=sum(counted[k] for k in hashes),
                                  cache=[_path(p) for p in marks])
        found[request.id] = request
    return found


def _place(body: dict[str, Any], mark: Any) -> None:
    """Put ``cache_control`` where a ``cacheControl`` entry's ``path`` points (skip a path that does not).

    Copy on write: every container on the path is copied into the body, so the messages and the
    shape other requests share are never changed.
    """
    if not isinstance(mark, dict) or not isinstance(mark.get("path"), list) or not mark["path"]:
        return
    parent: Any = body
    for step in mark["path"]:
        try:
            child = parent[step]
        except (KeyError, IndexError, TypeError):
            return
        if isinstance(child, dict):
            child = dict(child)
        elif isinstance(child, list):
            child = list(child)
        else:
            return  # a string where a block belongs: leave it
        parent[step] = child
        parent = child
    if isinstance(parent, dict):
        parent["cache_control"] = mark.get("value")


def _path(path: list[Any]) -> str:
    """``["messages", 0, "content", 8]`` -> ``messages[0].content[8]``."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _body_hash(body: dict[str, Any], texts: dict[int, str]) -> str:
    """``content_hash(body)``, serializing each message once across requests (``texts``, by object)."""
    parts = []
    for key in sorted(body):
        if key == "messages" and isinstance(body[key], list):
            items = []
            for message in body[key]:
                text = texts.get(id(message))
                if text is None:
                    text = _dumps(message)
                    texts[id(message)] = text
                items.append(text)
            value = "[" + ",".join(items) + "]"
        else:
            value = _dumps(body[key])
        parts.append(f"{_dumps(key)}:{value}")
    return hashlib.sha256(("{" + ",".join(parts) + "}").encode("utf-8")).hexdigest()


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


def request_summary(request: RecordedRequest) -> dict[str, Any]:
    """What the inspector shows of a recorded request, without its texts' bulk: a JSON-ready dict.

    ``params``: the body's fields other than system, tools and messages; ``system``: each block's
    length; ``tools``: each tool's name and description length; ``messages``: how many, and the
    ``<system-reminder>`` blocks among them; ``cache_control``: where it went; ``digest_ok``,
    ``missing``, ``answered``, ``id``, ``line``, ``shape``.
    """
    if request.summary is not None:
        return request.summary
    body = request.body
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    request.summary = {
        "id": request.id,
        "line": request.line,
        "shape": request.shape,
        "params": {k: v for k, v in body.items() if k not in ("system", "tools", "messages")},
        "system": [len(str(b.get("text", ""))) for b in system if isinstance(b, dict)],
        "tools": [(str(t.get("name")), len(str(t.get("description", "")))) for t in body.get("tools") or []
                  if isinstance(t, dict)],
        "messages": len(request.messages),
        "reminders": request.reminders,
        "cache_control": list(request.cache),
        "digest_ok": request.digest_ok,
        "missing": list(request.missing),
        "answered": request.answered,
    }
    return request.summary
