"""What ``query()`` yields: the Event union.

The conversation loop yields five kinds of thing (``stream_request_start``, raw
stream events, messages, tombstones, tool-use summaries). The messages live in
``messages.py``; this module adds the two non-message events and the union.
It knows nothing about how events are produced.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from .messages import AnyLoopMessage

__all__ = ["Event", "RequestStart", "StreamEvent"]


class RequestStart(BaseModel):
    """Yielded just before each model request (``{type: 'stream_request_start'}``).

    ``turn_count`` is the State's turn at that moment; ``attempt`` counts
    requests within the same turn (retries, recovery), from 1.
    """

    model_config = ConfigDict(frozen=True)
    type: Literal["stream_request_start"] = "stream_request_start"
    turn_count: int
    attempt: int = 1


class StreamEvent(BaseModel):
    """One raw server-sent event of the model's stream (``{type: 'stream_event', event}``).

    ``event`` is the SDK's ``RawMessageStreamEvent`` (``message_start``,
    ``content_block_start``, ``content_block_delta``, ``content_block_stop``,
    ``message_delta``, ``message_stop``), exactly as parsed by the SDK.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    type: Literal["stream_event"] = "stream_event"
    event: Any


Event = Annotated[Union[RequestStart, StreamEvent, AnyLoopMessage], Field(discriminator="type")]
"""Anything ``query()`` yields; switch on ``event.type``."""
