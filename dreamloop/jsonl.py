"""Reading the JSON and JSON Lines files dreamloop is handed, one way everywhere.

Owns three rules that every reader (transcripts, traces, cassettes, session files, settings)
follows: a JSONL file is split on ``\\n`` only (dreamloop's choice: never on U+2028, U+2029 or
U+0085, which JavaScript's ``JSON.stringify`` writes raw inside strings), JSON nested too
deeply to read is a
decode error rather than a ``RecursionError``, and a file that is a directory, unreadable or not
UTF-8 is a ``FileFormatError`` naming it (and the line). It knows nothing of what the records mean.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import FileFormatError

__all__ = ["MAX_DEPTH", "depth", "loads", "numbered_lines", "read_text"]

MAX_DEPTH = 200
"""The deepest nesting of arrays and objects read (the API's own messages nest a few levels)."""


def loads(text: str | bytes) -> Any:
    """``json.loads``, except that nesting deeper than ``MAX_DEPTH`` raises ``json.JSONDecodeError``
    ("nested too deeply"), as bad JSON does, instead of ``RecursionError`` (here or in what reads it later)."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    else:
        if depth(value) <= MAX_DEPTH:
            return value
    doc = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    raise json.JSONDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)", doc, 0)


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply ``value``'s lists and dicts nest (level by level, no recursion; stops past ``limit``)."""
    level, deepest = [value] if isinstance(value, (dict, list)) else [], 0
    while level and deepest <= limit:
        deepest += 1
        level = [child for item in level for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (dict, list))]
    return deepest


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of the non-blank lines of ``text``, split on ``\\n`` only (a ``\\r``
    before it is dropped): a raw U+2028 inside a JSON string stays inside its line."""
    return [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]


def read_text(path: str | Path) -> str:
    """The UTF-8 text of ``path``. ``FileNotFoundError`` if it is missing; ``FileFormatError`` naming it
    for a directory, an unreadable file, or bytes that are not UTF-8 (with the line)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise FileFormatError(path, None, "a directory, not a file") from None
    except PermissionError as error:
        raise FileFormatError(path, None, f"cannot be read ({error.strerror})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileFormatError(path, data.count(b"\n", 0, error.start) + 1, "not UTF-8 text") from None
