"""Request validation with the real Messages API's rules and wording.

``validate_request(body)`` returns the first problem as an ``InvalidRequest``
(answered HTTP 400 ``invalid_request_error``) or ``None``. The messages are the
API's own, copied from recorded errors and public bug reports; paths such as
``messages.1`` or ``messages.0.content.1`` count messages *after* consecutive
same-role messages are merged, as the API does (the docstring of
``MessageCreateParams.messages``: "Consecutive user or assistant turns in your
request will be combined into a single turn"). Unknown fields are tolerated.

Checks, in order (the first failure wins):

1. shape: ``model`` / ``messages`` / ``max_tokens`` present and typed, each
   message a ``user``/``assistant`` role with string or list content, each
   known block's fields present and of the right JSON type (``<path>: Field
   required``, ``<path>: Input should be a valid string``...), the same for
   the blocks inside a ``tool_result``'s content, and ``system``;
2. ``tools``: name pattern, unique names, ``input_schema.type == "object"``;
3. ``thinking`` config: budget ≥ 1024 and < ``max_tokens``; no forced tool use;
4. conversation: at least one message, first message from the user, no empty
   message content (except a final assistant prefill), no empty or
   whitespace-only text blocks, no trailing whitespace in a final assistant
   prefill, thinking blocks the fake API issued replayed intact, no empty
   ``is_error`` result, and the ``tool_use`` / ``tool_result`` pairing between
   neighbouring messages (each ``tool_use`` answered exactly once).

Every malformed body gets an answer (``validate_request`` never raises on
JSON input). This module knows nothing about HTTP, scripts or streaming.

Result *order* is not an API rule and is not checked here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from .signatures import verify_thinking

__all__ = ["InvalidRequest", "merge_consecutive", "validate_request"]

TOOL_NAME_PATTERN = "^[a-zA-Z0-9_-]{1,128}$"
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)
_MIN_THINKING_BUDGET = 1024
_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
_STRING, _OBJECT, _BOOL = "a valid string", "a valid dictionary", "a valid boolean"
_STRING_OR_LIST = "a valid string or a valid list"
_BLOCK_FIELDS: dict[str, dict[str, tuple[str, bool]]] = {  # block type -> field -> (JSON type, required)
    "text": {"text": (_STRING, True)},
    "image": {"source": (_OBJECT, True)},
    "document": {"source": (_OBJECT, True)},
    "tool_use": {"id": (_STRING, True), "name": (_STRING, True), "input": (_OBJECT, True)},
    "server_tool_use": {"id": (_STRING, True), "name": (_STRING, True), "input": (_OBJECT, True)},
    "tool_result": {"tool_use_id": (_STRING, True), "content": (_STRING_OR_LIST, False), "is_error": (_BOOL, False)},
    "thinking": {"thinking": (_STRING, True), "signature": (_STRING, True)},
    "redacted_thinking": {"data": (_STRING, True)},
}
_JSON_TYPES = {_STRING: (str,), _OBJECT: (dict,), _BOOL: (bool,), _STRING_OR_LIST: (str, list)}


@dataclass(frozen=True)
class InvalidRequest:
    """Why a request is rejected: the API error ``message`` (HTTP 400 ``invalid_request_error``)."""

    message: str
    error_type: str = "invalid_request_error"


class _Reject(Exception):
    """Internal: carries the first failure out of the nested checks."""


def validate_request(body: Any, *, endpoint: Literal["messages", "count_tokens"] = "messages",
                     checked: int = 0) -> InvalidRequest | None:
    """The first rule ``body`` breaks, or ``None`` if the real API would accept it.

    ``body`` is the parsed JSON request body. ``endpoint="count_tokens"`` skips
    the ``max_tokens`` rules (that endpoint takes no ``max_tokens``). ``checked``:
    the first ``checked`` messages are those of a request that passed, where none
    of them was the last, and no two of them share a role in a row: their own
    checks are not made again (a growing conversation validated request after
    request costs what is new, not the whole history).
    """
    try:
        _check_shape(body, endpoint, checked)
        _check_tools(body.get("tools"))
        _check_thinking_config(body, endpoint)
        messages = body["messages"]
        if 0 < checked < len(messages) and messages[checked - 1]["role"] != messages[checked]["role"]:
            tail = merge_consecutive(messages[checked:])
            # nothing merged (the usual case): the messages as they are, not a copy of the whole history
            merged = messages if len(tail) == len(messages) - checked else [*messages[:checked], *tail]
        else:
            merged, checked = merge_consecutive(messages), 0
        _check_conversation(merged, checked)
    except _Reject as failure:
        return InvalidRequest(str(failure))
    return None


def merge_consecutive(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with consecutive same-role turns combined into one, blocks in order.

    String content becomes one text block when merged; a lone message keeps
    its content as it was. The input is not modified.
    """
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            previous = merged[-1]
            previous["content"] = _blocks(previous["content"]) + _blocks(message["content"])
        else:
            merged.append({"role": message["role"], "content": message["content"]})
    return merged


def _blocks(content: str | list[Any]) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


# ---------------------------------------------------------------------------
# 1. shape (pydantic-style "<path>: <problem>" messages)


def _check_shape(body: Any, endpoint: str, checked: int = 0) -> None:
    if not isinstance(body, dict):
        raise _Reject("Input should be a valid dictionary")
    required = ("model", "messages", "max_tokens") if endpoint == "messages" else ("model", "messages")
    for field in required:
        if field not in body:
            raise _Reject(f"{field}: Field required")
    if not isinstance(body["model"], str):
        raise _Reject("model: Input should be a valid string")
    if endpoint == "messages" and not _is_int(body["max_tokens"]):
        raise _Reject("max_tokens: Input should be a valid integer")
    if endpoint == "messages" and body["max_tokens"] < 0:
        raise _Reject("max_tokens: Input should be greater than or equal to 0")
    if "stream" in body and not isinstance(body["stream"], bool):
        raise _Reject("stream: Input should be a valid boolean")
    _check_system(body.get("system"))
    if not isinstance(body["messages"], list):
        raise _Reject("messages: Input should be a valid list")
    for i in range(checked if checked < len(body["messages"]) else 0, len(body["messages"])):
        _check_message_shape(i, body["messages"][i])


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise _Reject("system: Input should be a valid string or a valid list")
    for j, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise _Reject(f"system.{j}.type: Input should be 'text'")
        _check_block_fields(f"system.{j}", block)
        if not block["text"].strip():
            raise _Reject("system: text content blocks must contain non-whitespace text" if block["text"]
                          else "system: text content blocks must be non-empty")


def _check_message_shape(i: int, message: Any) -> None:
    if not isinstance(message, dict):
        raise _Reject(f"messages.{i}: Input should be a valid dictionary")
    for field in ("role", "content"):
        if field not in message:
            raise _Reject(f"messages.{i}.{field}: Field required")
    if message["role"] not in ("user", "assistant"):
        raise _Reject(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    content = message["content"]
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _Reject(f"messages.{i}.content: Input should be a valid string or a valid list")
    _check_blocks(f"messages.{i}.content", content)


def _check_blocks(path: str, blocks: list[Any]) -> None:
    for j, block in enumerate(blocks):
        if not isinstance(block, dict) or "type" not in block:
            raise _Reject(f"{path}.{j}.type: Field required")
        if not isinstance(block["type"], str):
            raise _Reject(f"{path}.{j}.type: Input should be a valid string")
        _check_block_fields(f"{path}.{j}", block)
        nested = block.get("content") if block["type"] == "tool_result" else None
        if isinstance(nested, list):
            _check_blocks(f"{path}.{j}.tool_result.content", nested)


def _check_block_fields(path: str, block: dict[str, Any]) -> None:
    kind = block["type"]
    for field, (expected, required) in _BLOCK_FIELDS.get(kind, {}).items():
        if field not in block:
            if required:
                raise _Reject(f"{path}.{kind}.{field}: Field required")
        elif not isinstance(block[field], _JSON_TYPES[expected]):
            raise _Reject(f"{path}.{kind}.{field}: Input should be {expected}")


# ---------------------------------------------------------------------------
# 2. tools


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise _Reject("tools: Input should be a valid list")
    names: list[str] = []
    for n, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise _Reject(f"tools.{n}: Input should be a valid dictionary")
        if tool.get("type") not in (None, "custom"):
            names.append(str(tool.get("name")))
            continue  # server and client tools (bash_…, web_search_…) have their own schemas
        _check_custom_tool(n, tool)
        names.append(tool["name"])
    if len(set(names)) != len(names):
        raise _Reject("tools: Tool names must be unique.")


def _check_custom_tool(n: int, tool: dict[str, Any]) -> None:
    if "name" not in tool:
        raise _Reject(f"tools.{n}.custom.name: Field required")
    if not isinstance(tool["name"], str) or not _TOOL_NAME.match(tool["name"]):
        raise _Reject(f"tools.{n}.custom.name: String should match pattern '{TOOL_NAME_PATTERN}'")
    if "input_schema" not in tool:
        raise _Reject(f"tools.{n}.custom.input_schema: Field required")
    schema = tool["input_schema"]
    if not isinstance(schema, dict):
        raise _Reject(f"tools.{n}.custom.input_schema: Input should be a valid dictionary")
    if schema.get("type") != "object":
        raise _Reject(f"tools.{n}.custom.input_schema.type: Input should be 'object'")


# ---------------------------------------------------------------------------
# 3. thinking configuration


def _check_thinking_config(body: dict[str, Any], endpoint: str) -> None:
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < _MIN_THINKING_BUDGET:
        raise _Reject(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {_MIN_THINKING_BUDGET}")
    if endpoint == "messages" and body["max_tokens"] <= budget:
        raise _Reject(
            "`max_tokens` must be greater than `thinking.budget_tokens`. "
            f"Please consult our documentation at {_THINKING_DOCS}"
        )
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise _Reject("Thinking may not be enabled when tool_choice forces tool use.")


# ---------------------------------------------------------------------------
# 4. the conversation (merged messages)


def _check_conversation(messages: list[dict[str, Any]], checked: int = 0) -> None:
    if not messages:
        raise _Reject("messages: at least one message is required")
    if messages[0]["role"] != "user":
        raise _Reject('messages: first message must use the "user" role')
    last = len(messages) - 1
    for i in range(checked, len(messages)):
        message = messages[i]
        is_prefill = i == last and message["role"] == "assistant"
        _check_not_empty(i, message, is_prefill)
        _check_error_results(i, message)
        _check_text_blocks(message)
        if message["role"] == "assistant":
            _check_signatures(i, message)
    if messages[last]["role"] == "assistant":
        _check_prefill_whitespace(messages[last])
    _check_tool_pairing(messages, max(checked - 1, 0))


def _check_not_empty(i: int, message: dict[str, Any], is_prefill: bool) -> None:
    if not message["content"] and not is_prefill:
        raise _Reject(f"messages.{i}: all messages must have non-empty content except for the optional final assistant message")


def _check_text_blocks(message: dict[str, Any]) -> None:
    content = message["content"]
    if isinstance(content, str):
        texts = [content] if content else []  # "" is an empty message, reported by _check_not_empty
    else:
        texts = [b.get("text") for b in _with_nested(content) if b.get("type") == "text"]
    for text in texts:
        if text == "":
            raise _Reject("messages: text content blocks must be non-empty")
        if isinstance(text, str) and not text.strip():
            raise _Reject("messages: text content blocks must contain non-whitespace text")


def _check_prefill_whitespace(message: dict[str, Any]) -> None:
    blocks = _blocks(message["content"])
    if blocks and blocks[-1].get("type") == "text" and str(blocks[-1].get("text", "")).rstrip() != blocks[-1].get("text"):
        raise _Reject("messages: final assistant content cannot end with trailing whitespace")


def _with_nested(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks, each followed by the blocks of its ``tool_result`` content (at any depth)."""
    out = []
    for block in blocks:
        out.append(block)
        if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            out.extend(_with_nested(block["content"]))
    return out


def _check_error_results(i: int, message: dict[str, Any]) -> None:
    for j, block in enumerate(_blocks(message["content"])):
        if block.get("type") == "tool_result" and block.get("is_error") and not block.get("content"):
            raise _Reject(f"messages.{i}.content.{j}.tool_result: content cannot be empty if `is_error` is true")


def _check_signatures(i: int, message: dict[str, Any]) -> None:
    for j, block in enumerate(_blocks(message["content"])):
        if block.get("type") == "thinking" and not verify_thinking(block.get("thinking"), block.get("signature")):
            raise _Reject(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")


def _tool_use_ids(message: dict[str, Any] | None) -> list[str]:
    if message is None or message["role"] != "assistant":
        return []
    return [b["id"] for b in _blocks(message["content"]) if b.get("type") == "tool_use"]


def _check_tool_pairing(messages: list[dict[str, Any]], start: int = 0) -> None:
    """Every tool_use answered first thing in the next message; every tool_result answers one."""
    for i in range(start, len(messages)):
        message = messages[i]
        previous = messages[i - 1] if i > 0 else None
        if message["role"] == "user":
            _check_results_expected(i, message, _tool_use_ids(previous))
        ids = _tool_use_ids(message)
        if ids:
            following = messages[i + 1] if i + 1 < len(messages) else None
            _check_uses_answered(i, ids, following)


def _check_results_expected(i: int, message: dict[str, Any], expected: list[str]) -> None:
    answered: set[str] = set()
    for j, block in enumerate(_blocks(message["content"])):
        if block.get("type") != "tool_result":
            continue
        tool_use_id = block.get("tool_use_id")
        if tool_use_id not in expected:
            raise _Reject(
                f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{tool_use_id}. Each `tool_result` block must have a corresponding "
                "`tool_use` block in the previous message."
            )
        if tool_use_id in answered:
            raise _Reject(
                f"messages.{i}.content.{j}: each tool_use must have a single result. "
                f"Found multiple `tool_result` blocks with id: {tool_use_id}"
            )
        answered.add(tool_use_id)


def _check_uses_answered(i: int, ids: list[str], following: dict[str, Any] | None) -> None:
    blocks = _blocks(following["content"]) if following is not None and following["role"] == "user" else []
    answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
    missing = [tool_id for tool_id in ids if tool_id not in answered]
    if missing:
        raise _Reject(
            f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
            "in the next message."
        )
    leading = 0
    while leading < len(blocks) and blocks[leading].get("type") == "tool_result":
        leading += 1
    if leading < len(ids):
        raise _Reject(
            f"messages.{i + 1}: Did not find {len(ids)} `tool_result` block(s) at the beginning of this message. "
            "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
        )
