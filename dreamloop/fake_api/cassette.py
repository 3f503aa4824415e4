"""Replaying a recorded run: ``cassette(path)`` is a script the offline API serves, response by response.

A cassette (written by ``dreamloop.recording.CassetteRecorder``, JSONL) holds
every request a run sent, the raw bytes of every response and every tool
result. As a script, request n gets recorded response n as a ``RawTurn``: a
recorded stream is sent frame by frame as it was received, so the SDK parses
the same events. Each request is compared with the recorded one (without its
environment part: working directory, platform, date); the first
difference is kept as information (``first_difference``): when tools run for
real, a result that differs changes the next request, and the recorded
responses are served anyway. ``tool_results`` (and ``Cassette.tools()``) give
the recorded results back instead. pydantic-ai VCR cassettes (``.yaml``) are
read too. This module knows nothing about HTTP or the loop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamloop.context.environment import without_environment
from dreamloop.errors import FileFormatError, ScriptExhausted

from ..jsonl import read_jsonl
from .recorded import RawTurn, RecordedInteraction, load_cassette

__all__ = ["Cassette", "RequestDifference", "cassette"]


@dataclass(frozen=True)
class RequestDifference:
    """Where a replayed request first differs from the recorded one.

    ``index``: the request (0-based); ``path``: the JSON path of the first
    difference (``messages.3.content.0.content``); ``recorded`` / ``replayed``:
    the two values there, shortened.
    """

    index: int
    path: str
    recorded: str
    replayed: str

    def __str__(self) -> str:
        return (f"request #{self.index} differs from the recording at {self.path or '(the body)'}: "
                f"recorded {self.recorded}, now {self.replayed} (the recorded response was served anyway)")


class Cassette:
    """A recorded run, as a script for ``offline()``: ``offline(cassette(path))``.

    * ``exchanges``: the recorded requests and responses (``RecordedInteraction``), in order;
    * ``tool_results``: the recorded tool results, dicts with ``tool_use_id``,
      ``name``, ``input``, ``content``, ``is_error``, in the order they were written;
    * ``tool_definitions``: the ``tools`` of the recorded requests (by name, first seen);
    * ``model``: the recorded model name (``offline()`` sends it, so requests match);
    * ``first_difference``: a ``RequestDifference`` once a replayed request differed
      from its recording (None: none so far); reset when a replay starts.

    ``tools(like=None)`` gives tools that answer with the recorded results (see
    ``dreamloop.tools.recorded``): with them, a replay sends the recorded requests byte for byte.
    """

    def __init__(self, exchanges: list[RecordedInteraction], tool_results: list[dict[str, Any]] | None = None,
                 *, model: str | None = None, source: str | None = None) -> None:
        self.exchanges = exchanges
        self.tool_results = list(tool_results or [])
        self.model = model or next((str(e.request["model"]) for e in exchanges if e.request.get("model")), None)
        self.source = source
        self.first_difference: RequestDifference | None = None

    def __len__(self) -> int:
        return len(self.exchanges)

    def __repr__(self) -> str:
        return (f"Cassette({self.source or '?'}: {len(self.exchanges)} exchanges, "
                f"{len(self.tool_results)} tool results, model={self.model!r})")

    @property
    def tool_definitions(self) -> list[dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for exchange in self.exchanges:
            for tool in exchange.request.get("tools") or []:
                if isinstance(tool, dict) and "name" in tool:
                    found.setdefault(tool["name"], tool)
        return list(found.values())

    def tools(self, like: list[Any] | None = None) -> list[Any]:
        """Tools that return the recorded results (``RecordedTool``s), one per recorded definition.

        ``like``: the tools the run was recorded with; their ``is_read_only`` /
        ``is_concurrency_safe`` are kept, so calls are batched as they were.
        """
        from dreamloop.tools.recorded import recorded_tools

        return recorded_tools(self.tool_definitions, self.tool_results, like=like)

    def __call__(self, body: dict[str, Any], index: int) -> RawTurn:
        """The script policy: the recorded response for request ``index`` (noting a first difference)."""
        if index == 0:
            self.first_difference = None
        if index >= len(self.exchanges):
            raise ScriptExhausted(f"the cassette {self.source or ''} holds {len(self.exchanges)} responses; request "
                                  f"#{index} has none (the replay went further than the recorded run)")
        exchange = self.exchanges[index]
        if self.first_difference is None:
            # Compared without the environment (folder, platform, date): a run recorded elsewhere still matches.
            where = _first_difference(without_environment(exchange.request), without_environment(body))
            if where is not None:
                path, recorded, replayed = where
                self.first_difference = RequestDifference(index, path, _short(recorded), _short(replayed))
        return exchange.turn


def cassette(path: str | Path) -> Cassette:
    """Read a cassette: a dreamloop JSONL cassette (``live(record=path)``) or a pydantic-ai VCR ``.yaml``.

    Raises ``FileNotFoundError``; ``FileFormatError`` (a ``ValueError``) naming
    the line of a bad record; a torn last line (a crash while recording) is skipped.

    Example::

        model = dl.offline(dl.cassette("run.cassette.jsonl"))   # the recorded model's side, offline
    """
    path = Path(path)
    if path.suffix in (".yaml", ".yml"):
        return Cassette(load_cassette(path), source=path.name)
    lines = read_jsonl(path, header="cassette")  # split on \n only: a raw U+2028 stays inside its string
    (_, header), *records = lines.records  # a torn last line (a crash while recording) is left out
    exchanges: list[RecordedInteraction] = []
    results: list[dict[str, Any]] = []
    for number, record in records:
        if record.get("kind") == "exchange":
            exchanges.append(_exchange(path, number, record))
        elif record.get("kind") == "tool_result":
            if not isinstance(record.get("tool_use_id"), str) or "content" not in record:
                raise FileFormatError(path, number, "a tool_result record without tool_use_id and content")
            results.append(record)
    if not exchanges:
        raise FileFormatError(path, None, "holds no exchange: nothing to replay")
    return Cassette(exchanges, results, model=header.get("model"), source=path.name)


def _exchange(path: Path, number: int, record: dict[str, Any]) -> RecordedInteraction:
    request, status = record.get("request"), record.get("status")
    if not isinstance(request, dict) or not isinstance(status, int) or isinstance(status, bool):
        raise FileFormatError(path, number, "an exchange without its request (a JSON object) and status")
    headers = record.get("headers") or {}
    if not isinstance(headers, dict):
        raise FileFormatError(path, number, f"an exchange whose headers are a JSON {type(headers).__name__}, "
                                            "not an object")
    headers = {str(k): str(v) for k, v in headers.items() if str(k).lower() != "request-id"}
    source = f"{path.name}#{record.get('index', '?')}"
    if isinstance(record.get("sse"), str):
        turn = RawTurn(sse=record["sse"], status=status, headers=headers, source=source)
    elif isinstance(record.get("body"), dict):
        turn = RawTurn(body=record["body"], status=status, headers=headers, source=source)
    else:
        raise FileFormatError(path, number, "an exchange without a response (sse or a JSON body)")
    return RecordedInteraction(request=request, turn=turn)


def _first_difference(recorded: Any, replayed: Any, path: str = "") -> tuple[str, Any, Any] | None:
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        for key in list(recorded) + [k for k in replayed if k not in recorded]:
            if key not in recorded or key not in replayed:
                return _join(path, key), recorded.get(key, "(absent)"), replayed.get(key, "(absent)")
            found = _first_difference(recorded[key], replayed[key], _join(path, key))
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(replayed, list):
        for i, (a, b) in enumerate(zip(recorded, replayed)):
            found = _first_difference(a, b, _join(path, i))
            if found:
                return found
        if len(recorded) != len(replayed):
            return path, f"{len(recorded)} items", f"{len(replayed)} items"
        return None
    return None if recorded == replayed else (path, recorded, replayed)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
