"""dreamloop's own exceptions (few, on purpose).

    DreamloopError
    ├── StreamError                 the model's stream gave no whole response (model.py, partial.py)
    │   ├── IncompleteStreamError   it ended before message_delta, or the connection dropped
    │   └── MalformedStreamError    it broke the stream protocol (no message_start, a delta for a
    │                               block never started, a data frame that is not JSON, ...)
    ├── ScriptExhausted             the offline script has no item for this request (fake_api)
    ├── CompactionFailed            a compaction could not summarise the history (context/autocompact.py)
    ├── FileFormatError             a file dreamloop reads, or a line of it, is not what it should be
    │                               (also a ValueError; jsonl.py: traces, cassettes, session files)
    ├── HookError                   a Python hook raised: your bug, raised out of the loop (hooks.py)
    ├── TranscriptError             a transcript line a crash cannot explain (transcript.py)
    └── TranscriptBusy              another writer holds the transcript, or wrote to it since this
                                    engine did (engine.py)

    UserWarning
    └── TranscriptWarning           a torn last line skipped, or a transcript repaired on resume

API errors stay the SDK's own types (``anthropic.APIStatusError`` and its
subclasses); the loop decides what they mean. ``abort.Aborted`` is internal.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CompactionFailed",
    "DreamloopError",
    "FileFormatError",
    "HookError",
    "IncompleteStreamError",
    "MalformedStreamError",
    "ScriptExhausted",
    "StreamError",
    "TranscriptBusy",
    "TranscriptError",
    "TranscriptWarning",
]


class DreamloopError(Exception):
    """Base class of dreamloop's exceptions."""


class StreamError(DreamloopError):
    """A model stream that did not deliver a whole response; the loop ends ``model_error``.

    ``partial`` is the SDK ``Message`` of the blocks that finished before it
    went wrong (``stop_reason`` None unless ``message_delta`` arrived), or None.
    """

    def __init__(self, message: str, partial: Any = None) -> None:
        super().__init__(message)
        self.partial = partial


class IncompleteStreamError(StreamError):
    """A model stream ended before ``message_delta`` (or its connection dropped): not a success.

    ``dropped``: True when the connection dropped mid-stream (the streaming fallback sends the
    request again), False when the stream ended cleanly but early.
    """

    def __init__(self, message: str, partial: Any = None, *, dropped: bool = False) -> None:
        super().__init__(message, partial)
        self.dropped = dropped


class MalformedStreamError(StreamError):
    """A model stream broke the protocol: events out of order, a frame that is not a JSON event, a block that is not valid.

    What a later API version may add (an unknown event, delta or block type, an
    unknown ``stop_reason``) is not malformed: it is kept or reported, never raised.
    """


class ScriptExhausted(DreamloopError):
    """The offline script has no turn left for request ``index``."""


class CompactionFailed(DreamloopError):
    """A compaction did not happen: nothing to summarise, the summarising request failed, or it
    came back without text. The autocompact stage turns it into a notice; recovery into a Terminal."""


class FileFormatError(DreamloopError, ValueError):
    """A file dreamloop reads (a trace, a session file, a cassette, a settings file) is not what it should be.

    The message names the file and the line (1-based): ``path, line 7: not JSON (...)``.
    ``path`` and ``line`` are kept as attributes (``line`` None: the file as a whole).
    """

    def __init__(self, path: object, line: int | None, problem: str) -> None:
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line

class HookError(DreamloopError):
    """A Python hook raised (or returned something that is not a decision).

    Not turned into a tool result or a Terminal: a broken hook is the author's bug, so it
    leaves the loop with its traceback (``__cause__`` is the hook's own exception). A command
    hook that fails is not this: its exit code is a decision or a non-blocking error.
    """


class TranscriptError(DreamloopError):
    """A transcript line that is neither a record nor a torn last line (the file was changed by hand
    or by another program). The message names the file and the line; nothing is repaired."""


class TranscriptBusy(DreamloopError):
    """A second writer of one transcript: another ``QueryEngine`` (in this process or another) is writing
    it, or wrote to it since this engine last did. Raised before anything is written or sent; the message
    names the file and says what to do (wait, or ``QueryEngine.resume`` the file again)."""


class TranscriptWarning(UserWarning):
    """A transcript was read past a torn last line, or repaired by ``QueryEngine.resume``."""
