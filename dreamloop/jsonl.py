"""Reading the JSON and JSON Lines files dreamloop is handed, one way everywhere.

Owns the one JSONL reader (``read_jsonl``: transcripts, traces, cassettes, session files) and the rules
every reader follows, settings files included: a JSONL file is split on ``\\n`` only (dreamloop's choice:
never on U+2028, U+2029 or U+0085, which JavaScript's ``JSON.stringify`` writes raw inside strings); a torn
last line (a write cut short) is set apart, the same way for every file, and each caller decides whether to
warn about it, keep it or refuse; JSON nested too deeply to read is a decode error rather than a
``RecursionError``; and a file that is a directory, unreadable or not UTF-8, or a line that is not a JSON
object, is a ``FileFormatError`` naming the file (and the line). It knows nothing of what the records mean.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .errors import FileFormatError

__all__ = ["MAX_DEPTH", "JsonLines", "TornLine", "depth", "loads", "numbered_lines", "parse_record", "read_jsonl",
           "read_text", "warn_torn"]

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
    return _decoded(path, _read_bytes(path))


def parse_record(line: str | bytes) -> dict[str, Any] | None:
    """The JSON object ``line`` holds, or None: not UTF-8, not JSON (nesting too deep included), or a JSON
    value that is not an object."""
    try:
        record = loads(line.decode("utf-8") if isinstance(line, bytes) else line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


@dataclass(frozen=True)
class TornLine:
    """A last line cut short by a crash: ``line`` (1-based), ``offset`` (its first byte in the file), ``data``
    (its bytes). What a writer killed mid-line leaves: no newline after it, and not a JSON object."""

    line: int
    offset: int
    data: bytes


@dataclass(frozen=True)
class JsonLines:
    """A JSONL file, read (``read_jsonl``): ``records`` are ``(line number, JSON object)`` in file order
    (1-based; blank lines skipped); ``torn``: the torn last line, or None."""

    path: Path
    records: list[tuple[int, dict[str, Any]]]
    torn: TornLine | None = None

    def warn_if_torn(self, category: type[Warning] = UserWarning) -> None:
        """Say with a warning of ``category`` that a torn last line was skipped (nothing if there is none)."""
        warn_torn(self.path, self.torn, category, stacklevel=4)


def warn_torn(path: str | Path, torn: TornLine | None, category: type[Warning] = UserWarning,
              stacklevel: int = 3) -> None:
    """The warning every reader gives for a torn last line it skipped (none for None):
    ``PATH, line N: skipped a torn last line (B bytes without a newline: a write cut short)``."""
    if torn is not None:
        warnings.warn(f"{path}, line {torn.line}: skipped a torn last line ({len(torn.data)} bytes without a "
                      "newline: a write cut short)", category, stacklevel=stacklevel)


def read_jsonl(path: str | Path, *, header: str | None = None,
               check: Callable[[int, dict[str, Any]], None] | None = None) -> JsonLines:
    """The records of a JSON Lines file, with their line numbers, and its torn last line if it has one.

    The file is split on ``\\n`` only. A last line without a newline after it that is not a JSON object
    (not UTF-8, not JSON, or another JSON value) is the torn tail a writer killed mid-line leaves: it is
    returned as ``torn``, never read as a record, and the caller decides whether to warn about it
    (``JsonLines.warn_if_torn``), keep it (a transcript's resume sets it aside) or refuse the file.
    ``header``: the file's kind: its first line must be ``{"kind": header, ...}``. ``check(line, record)``:
    the caller's test of each record, in file order, before the next line is read (so the first bad line
    is the one named, whatever is wrong with it); it raises to refuse.

    Raises ``FileNotFoundError``; ``FileFormatError`` (a ``ValueError``) naming the file and, for a line,
    the line: a directory, an unreadable file, bytes that are not UTF-8, a line (other than a torn last
    one) that is not JSON or not a JSON object, a first line that is not the ``header``.
    """
    path = Path(path)
    data = _read_bytes(path)
    body, torn = data, None
    if data and not data.endswith(b"\n"):
        start = data.rfind(b"\n") + 1
        if data[start:].strip() and parse_record(data[start:]) is None:
            body, torn = data[:start], TornLine(line=data.count(b"\n", 0, start) + 1, offset=start, data=data[start:])
    lines = _decoded(path, body).split("\n")
    if header is not None and (parse_record(lines[0]) or {}).get("kind") != header:
        raise FileFormatError(path, 1, f'not a dreamloop {header} (its first line must be the {{"kind": '
                                       f'"{header}", ...}} header)')
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as error:
            raise FileFormatError(path, number, f"not JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(record, dict):
            raise FileFormatError(path, number, f"a JSON {type(record).__name__}, not an object")
        if check is not None:
            check(number, record)
        records.append((number, record))
    return JsonLines(path, records, torn)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise FileFormatError(path, None, "a directory, not a file") from None
    except PermissionError as error:
        raise FileFormatError(path, None, f"cannot be read ({error.strerror})") from None


def _decoded(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileFormatError(path, data.count(b"\n", 0, error.start) + 1, "not UTF-8 text") from None
