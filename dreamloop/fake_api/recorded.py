"""Recorded API responses as script items: ``RawTurn`` and the fixture loaders.

A ``Turn`` describes a response to be rendered; a ``RawTurn`` is one that was
recorded and is served as it was: a raw ``text/event-stream`` body (streamed
frame by frame, as recorded) and/or a JSON body (a Message, or an error body
when ``status`` is not 200). A RawTurn is a script item like any other: it
consumes one request. Loaders read the three fixture formats of
``tests/fixtures/recorded`` (see its SOURCES.md): ``.sse`` raw bodies,
``.jsonl`` data-only chunks (``event:`` lines are added, the SDK needs them),
``.yaml`` pydantic-ai VCR cassettes, and ``.json`` error bodies.
This module knows nothing about HTTP or validation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from ..errors import FileFormatError
from ..jsonl import MAX_DEPTH, depth, loads, numbered_lines, read_text

__all__ = ["RawTurn", "RecordedInteraction", "load_cassette", "load_recorded", "recorded_turn"]

_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class RawTurn(BaseModel):
    """A recorded response, served verbatim; one script item.

    * ``sse``: a ``text/event-stream`` body. Streaming requests get it frame by
      frame, unchanged (``\n`` line endings; a last frame that lost its blank
      line gets it back); non-streaming requests get the Message it adds up to.
    * ``body``: a JSON body. Non-streaming requests get it unchanged; streaming
      requests get it rendered as events (when ``status`` is 200).
    * ``status``: the HTTP status (an error body goes with a 4xx/5xx status).
    * ``headers``: extra response headers. ``source``: where it was loaded from.
    """

    model_config = ConfigDict(frozen=True)
    sse: str | None = None
    body: dict[str, Any] | None = None
    status: int = 200
    headers: dict[str, str] = {}
    source: str | None = None


class RecordedInteraction(BaseModel):
    """One request/response pair of a cassette: the JSON ``request`` body the client sent and the reply."""

    model_config = ConfigDict(frozen=True)
    request: dict[str, Any]
    turn: RawTurn


def load_recorded(path: str | Path) -> list[RawTurn]:
    """The recorded responses in a fixture file, in order (one per response; a script).

    ``.sse`` → one RawTurn; ``.jsonl`` → one RawTurn (event lines added);
    ``.yaml`` cassette → one per interaction; ``.json`` error body → one RawTurn
    with the status its error type implies. Raises ``ValueError`` for other suffixes.
    """
    path = Path(path)
    source = path.name
    if path.suffix == ".sse":
        return [RawTurn(sse=path.read_text(encoding="utf-8"), source=source)]
    if path.suffix == ".jsonl":
        return [RawTurn(sse=jsonl_to_sse(path.read_text(encoding="utf-8")), source=source)]
    if path.suffix in (".yaml", ".yml"):
        return [interaction.turn for interaction in load_cassette(path)]
    if path.suffix == ".json":
        body = json.loads(path.read_text(encoding="utf-8"))
        status = _ERROR_STATUS.get(body.get("error", {}).get("type"), 200) if body.get("type") == "error" else 200
        return [RawTurn(body=body, status=status, source=source)]
    raise ValueError(f"not a recorded fixture format (.sse, .jsonl, .yaml, .json): {path}")


def recorded_turn(path: str | Path) -> RawTurn:
    """The single recorded response in ``path``; ``ValueError`` if it holds more than one."""
    turns = load_recorded(path)
    if len(turns) != 1:
        raise ValueError(f"{path} holds {len(turns)} responses; use load_recorded()")
    return turns[0]


def load_cassette(path: str | Path) -> list[RecordedInteraction]:
    """The interactions of a pydantic-ai VCR cassette: request bodies and RawTurns, in order."""
    path = Path(path)
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as error:  # a Python tag is refused here (safe_load), never run
        mark = getattr(error, "problem_mark", None)
        raise FileFormatError(path, mark.line + 1 if mark else None,
                              f"not a YAML cassette ({getattr(error, 'problem', None) or error})") from None
    except RecursionError:
        raise FileFormatError(path, None, f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise FileFormatError(path, None, "not a VCR cassette: a mapping with an 'interactions' list of exchanges")
    if depth(data) > MAX_DEPTH:
        raise FileFormatError(path, None, f"nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        return _interactions(path, data["interactions"])
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise FileFormatError(path, None, f"an interaction is not a VCR exchange ({type(error).__name__}: "
                                          f"{error})") from None


def _interactions(path: Path, items: list[Any]) -> list[RecordedInteraction]:
    interactions = []
    for n, item in enumerate(items):
        response = item["response"]
        headers = {k: v[0] if isinstance(v, list) else v for k, v in response.get("headers", {}).items()}
        keep = {k: v for k, v in headers.items() if k == "content-type"}
        status = response.get("status", {}).get("code", 200)
        source = f"{path.name}#{n}"
        if "body" in response and isinstance(response["body"], dict) and "string" in response["body"]:
            turn = RawTurn(sse=response["body"]["string"], status=status, headers=keep, source=source)
        else:
            turn = RawTurn(body=response.get("parsed_body"), status=status, headers=keep, source=source)
        interactions.append(RecordedInteraction(request=item["request"]["parsed_body"], turn=turn))
    return interactions


def jsonl_to_sse(text: str) -> str:
    """Data-only JSON lines (vercel/ai chunks) as an SSE body with ``event:`` lines."""
    frames = []
    for _, line in numbered_lines(text):
        if line.strip():
            event_type = loads(line)["type"]
            frames.append(f"event: {event_type}\ndata: {line}\n\n")
    return "".join(frames)
