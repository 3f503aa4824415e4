"""Loop messages: the things the loop keeps in its history and yields to callers.

Each message is a thin pydantic wrapper (a ``uuid`` and a ``type``) around the
API's own shape: an assistant message holds the SDK's ``Message``, a user
message holds a ``MessageParam``-shaped dict. ``normalize_messages_for_api()``
is the one place where UI-only messages are dropped and user turns merged.
This module knows nothing about how the model is called or how tools run.
"""

from __future__ import annotations

import copy
import uuid as _uuid
from typing import Annotated, Any, Literal, Mapping, Union, get_args

import anthropic
from anthropic.types import ContentBlock, StopReason, ToolUseBlock
from anthropic.types import Message as APIMessage
from anthropic.types import MessageParam
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    ValidationError,
    WrapValidator,
    field_serializer,
    model_serializer,
    model_validator,
)

__all__ = [
    "LAST_TOOL_RESULT",
    "AnyLoopMessage",
    "AssistantMessage",
    "AttachmentMessage",
    "LoopMessage",
    "ProgressMessage",
    "SystemMessage",
    "TombstoneMessage",
    "ToolUseSummaryMessage",
    "UnknownContentBlock",
    "UserMessage",
    "api_message",
    "assistant_tool_uses",
    "block_field",
    "content_block",
    "new_uuid",
    "normalize_messages_for_api",
    "tool_result_block",
    "user_message",
    "withdrawn",
]


def new_uuid() -> str:
    """A fresh random uuid4 string (the default id of every loop message)."""
    return str(_uuid.uuid4())


class _LoopMessageBase(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    uuid: str = Field(default_factory=new_uuid)
    """Stable identity; the trace and the transcript refer to messages by it."""


class UserMessage(_LoopMessageBase):
    """A user turn: the person's prompt, or the loop's ``tool_result`` blocks.

    Mirrors ``UserMessage`` (``type: 'user'``). ``message`` is API-shaped:
    ``{"role": "user", "content": str | list[content block dict]}``.
    ``is_meta`` marks text the loop wrote (recovery nudges, reminders), which
    the model sees but a UI may hide. ``source_tool_use_ids`` lists the
    ``tool_use`` ids this message answers, in call order (empty for a prompt).
    """

    type: Literal["user"] = "user"
    message: dict[str, Any]
    is_meta: bool = False
    source_tool_use_ids: tuple[str, ...] = ()


# ---------------------------------------------------------------------------
# The SDK's Message, tolerant of what a later API version may add

_BLOCK_CLASSES: dict[str, type[BaseModel]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls for cls in get_args(get_args(ContentBlock)[0])
}
KNOWN_BLOCK_TYPES = frozenset(_BLOCK_CLASSES)
"""The content block types this SDK version knows (``text``, ``tool_use``, ``thinking``, ...)."""

KNOWN_STOP_REASONS = frozenset(get_args(StopReason))
"""The ``stop_reason`` values this SDK version knows."""

class UnknownContentBlock(anthropic.BaseModel):
    """A content block of a type this SDK version does not know, kept exactly as received.

    ``type`` is its type; every other field is kept as an extra attribute. Every
    dump (``model_dump``, any mode or option, ``model_dump_json``) gives the block's
    JSON as received, its keys in their order, its nulls kept, nothing added, so
    the block goes back to the API as it came, also after a transcript, a trace or
    a cassette (``tests/test_unknown_blocks.py``). dreamloop's choice: the loop
    keeps such a block and sends it back; it never runs or reads it.
    """

    type: str
    _keys: tuple[str, ...] = PrivateAttr(default=())  # the received keys, in order

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: Any) -> Any:
        block = handler(data)
        if isinstance(data, dict):
            block._keys = tuple(data)
        return block

    @model_serializer(mode="plain")
    def _as_received(self) -> dict[str, Any]:
        fields = {"type": self.type, **(self.__pydantic_extra__ or {})}
        order = [*(k for k in self._keys if k in fields), *(k for k in fields if k not in self._keys)]
        return {key: copy.deepcopy(fields[key]) for key in order}


def _foreign(block: Any) -> bool:
    """A block the SDK itself built for a type it does not know (its parser falls back to another block
    class, ``TextBlock`` with ``text`` and ``citations`` None, and the received ``type``)."""
    return not isinstance(block, UnknownContentBlock) and getattr(block, "type", None) not in KNOWN_BLOCK_TYPES


def _received(block: Any) -> UnknownContentBlock:
    # what the SDK parsed from the wire: the fields it set (exclude_unset), never the defaults it filled in
    return UnknownContentBlock.model_validate(block.model_dump(mode="json", by_alias=True, exclude_unset=True,
                                                               warnings=False))


def content_block(data: dict[str, Any]) -> Any:
    """An SDK content block from its JSON ``data``.

    A known type is validated (``ValueError`` naming the problem if it is not
    valid), except that a ``tool_use`` whose ``input`` is not an object is kept
    as received (the loop answers it with an ``is_error`` result and never runs
    it). An unknown type becomes an ``UnknownContentBlock``.
    """
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"a content block needs a string `type`, got {kind!r}")
    if kind not in KNOWN_BLOCK_TYPES:
        return UnknownContentBlock.model_validate(data)
    try:
        return _BLOCK_CLASSES[kind].model_validate(data)
    except ValidationError as error:
        if kind == "tool_use" and all(e["loc"][:1] == ("input",) for e in error.errors()):
            return ToolUseBlock.model_construct(**data)
        raise ValueError(f"a {kind} block that is not valid: {_first_error(error)}") from None


def api_message(data: Any) -> APIMessage:
    """The SDK ``Message`` from its JSON (a dict), tolerating what a later API version may add.

    Known blocks are validated; unknown block types are kept
    (``UnknownContentBlock``) and an unknown ``stop_reason`` is kept as its
    string; nothing is re-validated after that. An ``APIMessage`` is returned
    as is, unless the SDK's own parser built it (``messages.create()`` without
    streaming) and took a block of a type it does not know for another class:
    that block becomes an ``UnknownContentBlock`` of the fields the wire held.
    Raises ``ValueError`` for anything else that is not a valid Message.
    """
    if isinstance(data, APIMessage):
        if not any(_foreign(block) for block in data.content):
            return data
        content = [_received(block) if _foreign(block) else block for block in data.content]
        return data.model_copy(update={"content": content})
    if not isinstance(data, dict):
        raise ValueError(f"a Message must be an object, got {type(data).__name__}")
    try:
        return APIMessage.model_validate(data)
    except ValidationError:
        pass  # an unknown block or stop_reason, or a real problem: look closer
    content, stop_reason = data.get("content", []), data.get("stop_reason")
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise ValueError("a Message's content must be a list of block objects")
    if stop_reason is not None and not isinstance(stop_reason, str):
        raise ValueError(f"stop_reason must be a string or null, got {stop_reason!r}")
    try:
        skeleton = APIMessage.model_validate({**data, "content": [], "stop_reason": None})
    except ValidationError as error:
        raise ValueError(f"not a valid Message: {_first_error(error)}") from None
    blocks = [content_block(block) for block in content]
    return skeleton.model_copy(update={"content": blocks, "stop_reason": stop_reason})


def _tolerant(value: Any, handler: Any) -> APIMessage:
    # The SDK's own validation first (its error paths, e.g. ``message.id``, stay as they are); only
    # what it rejects for an unknown block type or stop_reason is taken leniently (``api_message``).
    if isinstance(value, APIMessage):
        return api_message(value)  # kept as given, an unknown block the SDK mistyped set right
    try:
        return handler(value)
    except ValidationError:
        try:
            return api_message(value)
        except ValueError:
            pass
        raise


def _first_error(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in first['loc']) or 'value'}: {first['msg']}"


class AssistantMessage(_LoopMessageBase):
    """One model response, kept as the SDK's ``Message`` (content blocks, stop_reason, usage).

    Mirrors ``AssistantMessage`` (``type: 'assistant'``). One response is one
    assistant message; a retry or continuation never adds blocks to it.
    ``request_id`` is the server's ``request-id`` when known. A ``Message`` is
    kept as given (never re-validated), so blocks and a ``stop_reason`` that
    this SDK version does not know survive, also through a dump and a load
    (``api_message``).
    """

    type: Literal["assistant"] = "assistant"
    message: Annotated[APIMessage, WrapValidator(_tolerant)]
    request_id: str | None = None

    @field_serializer("message")
    def _dump_message(self, message: APIMessage, info: SerializationInfo) -> dict[str, Any]:
        # warnings=False: an unknown block or stop_reason is not what the SDK's field types expect, on purpose
        return message.model_dump(mode=info.mode, by_alias=bool(info.by_alias), exclude_none=info.exclude_none,
                                  warnings=False)


class SystemMessage(_LoopMessageBase):
    """A message for the person, never sent to the model (warnings, errors, notices).

    Mirrors ``SystemMessage`` (``type: 'system'``); ``subtype`` names the kind:
    ``api_error``, ``incomplete_response``, ``malformed_stream`` (the run ended
    ``model_error``); ``interrupted`` (an abort); ``stop_reason_without_tool_use``,
    ``max_output_tokens``; ``unknown_stop_reason``, ``unknown_stream_content``
    (what a later API version may send: reported, the run goes on);
    ``resume_repair`` (a resume repaired what a crash left, ``transcript.py``);
    the context pipeline's ``tool_result_budget``, ``snip``, ``microcompact``,
    ``context_collapse``, ``compact_boundary``, ``autocompact_failed``,
    ``blocking_limit`` (``dreamloop.context``); the recovery branches'
    (``dreamloop.recovery``, chapters 08 and 08b): ``max_output_tokens`` (also the withheld
    error shown when the resumes are exhausted), ``api_retry`` (an overloaded attempt
    asked again), ``model_fallback`` (the fallback model took over),
    ``reactive_compact_failed``, ``token_budget`` (why a budgeted run stopped);
    ``memory_file_skipped`` (a CLAUDE.md not sent, and why), ``tool_use_summary_failed``
    (a summary skipped, the run goes on), ``tool_use_summary_dropped`` (a summary not done in time), ``run_ended`` (an abnormal end: its reason and what
    was cancelled, ``dreamloop.cleanup``).
    ``metadata`` holds a subtype's structured data (like a session file's
    ``compactMetadata``): for the context stages ``stage``,
    ``tokens_before``, ``tokens_after`` and ``replaced`` (new uuid → the uuids
    of the messages it stands for).
    """

    type: Literal["system"] = "system"
    subtype: str
    content: str
    level: Literal["info", "warning", "error"] = "info"
    metadata: dict[str, Any] | None = None


class AttachmentMessage(_LoopMessageBase):
    """Context the loop attaches to the conversation (queued input, notices).

    Mirrors ``AttachmentMessage`` (``type: 'attachment'``). ``attachment`` is a
    dict with a ``type``: ``"queued_command"`` (text typed while the loop ran;
    sent to the model as user text), ``"edited_file"`` (sent as user text),
    ``"hook_additional_context"`` (what hooks tell the model: its ``content``
    lines, sent as one ``<system-reminder>`` text), ``"changed_file"`` and
    ``"memory_changed"`` (phase 5, ``dreamloop.attachments``: a file the model read,
    or a memory file, changed on disk; ``path``, ``change``, and the ``text`` sent),
    ``"task_notification"`` (phase 5, ``dreamloop.tasks``: a background task ended; ``task_id``, ``kind``,
    ``status``, ``exit_code`` and the ``text`` sent), ``"max_turns_reached"`` (UI only: ``max_turns``, ``turn_count``), and the hook records (UI only:
    ``hook_success``, ``hook_blocking_error``, ``hook_non_blocking_error``,
    ``hook_stopped_continuation``; see ``dreamloop.hooks.HookOutcome``).
    """

    type: Literal["attachment"] = "attachment"
    attachment: dict[str, Any]


class ProgressMessage(_LoopMessageBase):
    """Progress of one running tool call; UI only, never sent to the model.

    Mirrors ``ProgressMessage`` (``type: 'progress'``). ``data["stage"]`` is
    ``"started"``, ``"progress"`` or ``"done"`` (the last carries the
    ``tool_result`` block under ``data["result"]``, in completion order).
    """

    type: Literal["progress"] = "progress"
    tool_use_id: str
    data: dict[str, Any]


class TombstoneMessage(_LoopMessageBase):
    """Marks an already-shown message as withdrawn: a UI strikes it out, no request ever carries it.

    Mirrors the conversation-loop text's ``TombstoneMessage`` (``type: 'tombstone'``),
    which withdraws what a failed streaming attempt had yielded (the streaming fallback).
    dreamloop yields one whenever a response is *replaced*: a failed attempt asked again
    or handed to the fallback model, a cut response retried with a higher ``max_tokens``
    (the last two are dreamloop's choice; the text ties tombstones to the streaming
    fallback only). ``target_uuid`` is the uuid of the withdrawn loop message, or, for a
    response that never became one (it broke while streaming), the id its
    ``message_start`` gave (``msg_...``); ``reason`` says why; ``message`` is what was
    shown of it (dreamloop's design; the text says only that the UI removes the message):
    ``{"id", "model", "content": [blocks as far as they came]}``, or None.
    ``normalize_messages_for_api()`` drops every message a tombstone in the same list
    targets.
    """

    type: Literal["tombstone"] = "tombstone"
    target_uuid: str
    reason: str = ""
    message: dict[str, Any] | None = None


class ToolUseSummaryMessage(_LoopMessageBase):
    """A short summary of a batch of tool calls, for a compact UI.

    Mirrors ``ToolUseSummaryMessage`` (``type: 'tool_use_summary'``); UI only.
    """

    type: Literal["tool_use_summary"] = "tool_use_summary"
    summary: str
    tool_use_ids: tuple[str, ...] = ()


AnyLoopMessage = Union[
    UserMessage,
    AssistantMessage,
    SystemMessage,
    AttachmentMessage,
    ProgressMessage,
    TombstoneMessage,
    ToolUseSummaryMessage,
]
"""The plain union of the loop message classes (``LoopMessage`` adds the discriminator)."""

LoopMessage = Annotated[AnyLoopMessage, Field(discriminator="type")]
"""Any loop message; ``type`` tells which (``Message`` in the TypeScript source)."""


# ---------------------------------------------------------------------------
# Small constructors


def user_message(content: str | list[dict[str, Any]], *, is_meta: bool = False, uuid: str | None = None) -> UserMessage:
    """A ``UserMessage`` with ``content`` (a string or a list of block dicts)."""
    kwargs = {"uuid": uuid} if uuid else {}
    return UserMessage(message={"role": "user", "content": content}, is_meta=is_meta, **kwargs)


_REQUIRED: Any = object()


def block_field(block: Any, key: str, default: Any = _REQUIRED) -> Any:
    """A content block's field, the block being the SDK's object (``block.id``) or the API's dict
    (``block["id"]``): the one way dreamloop reads a block it may get in either shape.

    Without ``default`` a missing field raises (``KeyError`` or ``AttributeError``, the block's own error); with
    it, ``default`` is returned instead.
    """
    if isinstance(block, Mapping):
        return block[key] if default is _REQUIRED else block.get(key, default)
    return getattr(block, key) if default is _REQUIRED else getattr(block, key, default)


def tool_result_block(tool_use_id: str, content: str | list[dict[str, Any]], *, is_error: bool = False) -> dict[str, Any]:
    """A ``tool_result`` content block (``ToolResultBlockParam``) answering ``tool_use_id``."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def assistant_tool_uses(message: AssistantMessage) -> list[Any]:
    """The ``tool_use`` blocks of an assistant message, in order (SDK ``ToolUseBlock`` objects)."""
    return [block for block in message.message.content if block.type == "tool_use"]


# ---------------------------------------------------------------------------
# normalizeMessagesForAPI()

_API_ATTACHMENTS = {"queued_command", "edited_file", "hook_additional_context", "text", "changed_file",
                    "memory_changed", "task_notification"}


def _assistant_param(message: AssistantMessage) -> MessageParam | None:
    blocks = []
    for block in message.message.content:
        # an UnknownContentBlock dumps as received whatever the options (its nulls too)
        data = block.model_dump(mode="json", exclude_none=True, by_alias=True, warnings=False)
        if data.get("type") == "text" and not data.get("text", "").strip():
            continue  # empty text blocks never go back (field case F5)
        if data.get("type") == "tool_use" and not isinstance(data.get("input"), dict):
            data["input"] = {}  # input that was not a JSON object; its is_error result says what came
        blocks.append(data)
    if not blocks:
        return None
    return {"role": "assistant", "content": blocks}


def _user_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    return [b for b in content if not (b.get("type") == "text" and not str(b.get("text", "")).strip())]


def _attachment_text(attachment: dict[str, Any]) -> str | None:
    kind = attachment.get("type")
    if kind not in _API_ATTACHMENTS:
        return None
    if kind == "queued_command":
        return str(attachment.get("prompt", ""))
    if kind == "hook_additional_context":
        if attachment.get("inToolResult"):  # already inside the call's tool_result: a record, not sent again
            return None
        lines = attachment.get("content") or []
        return "<system-reminder>\n" + "\n".join(map(str, lines)) + "\n</system-reminder>" if lines else None
    if kind == "edited_file":
        return f"<system-reminder>The file {attachment.get('path')} was changed: {attachment.get('summary', '')}</system-reminder>"
    return str(attachment.get("text", ""))


LAST_TOOL_RESULT = "last_tool_result"
"""An attachment's ``placement`` that sends its text inside the last ``tool_result`` of the results message it
follows (a background task's notification at phase 5, where Claude Code 2.1.332 put it:
``background_command_ends_before_next_request``); with no results message before it, it is a text block as any."""


def _into_last_result(out: list[dict[str, Any]], text: str) -> bool:
    """Append ``text`` to the content of the last ``tool_result`` of ``out``'s last message, if it is a user message
    holding one (a copy of the block: the history is never changed); whether it did."""
    if not out or out[-1]["role"] != "user":
        return False
    content = out[-1]["content"]
    where = next((i for i in range(len(content) - 1, -1, -1) if content[i].get("type") == "tool_result"), None)
    if where is None:
        return False
    block = dict(content[where])
    inner = block.get("content", "")
    if isinstance(inner, list):
        block["content"] = [*inner, {"type": "text", "text": text}]
    else:
        block["content"] = f"{inner}\n\n{text}" if str(inner) else text
    out[-1]["content"] = [*content[:where], block, *content[where + 1:]]
    return True


def withdrawn(messages: Any) -> set[str]:
    """The uuids the ``TombstoneMessage``s among ``messages`` withdraw (empty if there is none)."""
    return {m.target_uuid for m in messages if type(m) is TombstoneMessage}


def normalize_messages_for_api(messages: list[Any]) -> list[MessageParam]:
    """The request's ``messages`` array from loop messages (``normalizeMessagesForAPI()``).

    Keeps user and assistant messages; turns API-visible attachments
    (``queued_command``, ``edited_file``, ``hook_additional_context``) into user text (one placed
    ``LAST_TOOL_RESULT`` inside the last ``tool_result`` before it); drops system,
    progress, tombstone, tool-use-summary and UI-only attachments, and every message a tombstone
    among ``messages`` withdraws; drops empty
    text blocks; sends a ``tool_use`` whose input was not a JSON object with
    ``input: {}`` (its ``is_error`` result tells the model what it sent);
    sends blocks of unknown types back as received; merges adjacent user messages into one, ``tool_result``
    blocks first (the API's rule), the rest in arrival order. Returns
    ``list[MessageParam]`` (plain dicts, JSON-ready).
    """
    out: list[dict[str, Any]] = []
    gone = withdrawn(messages)
    for message in messages:
        if gone and message.uuid in gone:
            continue
        if isinstance(message, AssistantMessage):
            param = _assistant_param(message)
            if param is None:
                continue
            if out and out[-1]["role"] == "assistant":
                out[-1]["content"].extend(param["content"])
            else:
                out.append(param)
            continue
        if isinstance(message, UserMessage):
            blocks = _user_blocks(message.message["content"])
        elif isinstance(message, AttachmentMessage):
            text = _attachment_text(message.attachment)
            blocks = [{"type": "text", "text": text}] if text and text.strip() else []
            if blocks and message.attachment.get("placement") == LAST_TOOL_RESULT and _into_last_result(out, text):
                continue
        else:
            continue  # UI only
        if not blocks:
            continue
        if out and out[-1]["role"] == "user":
            merged = out[-1]["content"] + blocks
            results = [b for b in merged if b.get("type") == "tool_result"]
            others = [b for b in merged if b.get("type") != "tool_result"]
            out[-1]["content"] = results + others
        else:
            out.append({"role": "user", "content": list(blocks)})
    return out  # type: ignore[return-value]
