"""dreamloop's own exceptions (few, on purpose).

    DreamloopError
    ├── IncompleteStreamError   the stream ended without message_delta (model.py)
    ├── ScriptExhausted         the offline script has no item for this request (fake_api)
    └── CompactionFailed        a compaction could not summarise the history (context/autocompact.py)

API errors stay the SDK's own types (``anthropic.APIStatusError`` and its
subclasses); the loop decides what they mean. ``abort.Aborted`` is internal.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CompactionFailed", "DreamloopError", "IncompleteStreamError", "ScriptExhausted"]


class DreamloopError(Exception):
    """Base class of dreamloop's exceptions."""


class IncompleteStreamError(DreamloopError):
    """A model stream ended before ``message_delta``: not a success.

    ``partial`` is the SDK ``Message`` accumulated so far (``stop_reason`` None).
    """

    def __init__(self, message: str, partial: Any = None) -> None:
        super().__init__(message)
        self.partial = partial


class ScriptExhausted(DreamloopError):
    """The offline script has no turn left for request ``index``."""


class CompactionFailed(DreamloopError):
    """A compaction did not happen: nothing to summarise, the summarising request failed, or it
    came back without text. The autocompact stage turns it into a notice; recovery into a Terminal."""
