"""normalize_messages_for_api(): the one place UI-only messages are dropped and user turns merged."""

import pytest
from anthropic.types import Message

from dreamloop.messages import (
    AssistantMessage, AttachmentMessage, ProgressMessage, SystemMessage, TombstoneMessage,
    normalize_messages_for_api, tool_result_block, user_message,
)


def assistant(*blocks, stop_reason="tool_use"):
    return AssistantMessage(message=Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": list(blocks),
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}))


def test_ui_only_messages_are_dropped_and_users_merged_results_first():
    history = [
        user_message("read a"),
        assistant({"type": "text", "text": ""}, {"type": "tool_use", "id": "T1", "name": "Read", "input": {}}),
        ProgressMessage(tool_use_id="T1", data={"stage": "done"}),
        SystemMessage(subtype="x", content="for the person"),
        AttachmentMessage(attachment={"type": "queued_command", "prompt": "also README"}),
        user_message([tool_result_block("T1", "contents")]),
        AttachmentMessage(attachment={"type": "max_turns_reached", "max_turns": 1, "turn_count": 2}),
        TombstoneMessage(target_uuid="x"),
    ]
    assert normalize_messages_for_api(history) == [
        {"role": "user", "content": [{"type": "text", "text": "read a"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "T1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "T1", "content": "contents"},
            {"type": "text", "text": "also README"},
        ]},
    ]


def test_assistant_message_with_only_empty_text_is_dropped():
    assert normalize_messages_for_api([user_message("hi"), assistant({"type": "text", "text": "  "})]) == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_block_field_reads_a_block_in_either_shape():
    """The one accessor for a content block given as the SDK's object or the API's dict (issue 39, item 6)."""
    from anthropic.types import ToolUseBlock

    from dreamloop.messages import block_field

    as_dict = {"type": "tool_use", "id": "T1", "name": "Read", "input": {"path": "a"}}
    as_object = ToolUseBlock(**as_dict)
    for block in (as_dict, as_object):
        assert [block_field(block, key) for key in ("id", "name", "input")] == ["T1", "Read", {"path": "a"}]
        assert block_field(block, "text", None) is None and block_field(block, "text", "") == ""
    with pytest.raises(KeyError):
        block_field(as_dict, "text")
    with pytest.raises(AttributeError):
        block_field(as_object, "text")
