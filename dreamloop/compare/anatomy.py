"""A request's anatomy, as shapes: what a side sent, field by field, block by block, without its text.

``shapes.py`` keeps what the MATCH rule compares; this module keeps what a
reader looks at while stepping through a run's requests (chapter 11): the
body's top-level fields, the system prompt's blocks, how many tools, every
message with its blocks' kinds and lengths, where ``cache_control`` sits,
and which messages are new against the previous request. Anthropic's text
(system prompt, tool descriptions, reminders) is kept as a length and a short
hash only, never verbatim, so an anatomy can be stored in the repository.
``record_anatomies`` runs scenarios on both sides and writes them
(``conformance/claude-code-<version>.requests.json``); ``load_anatomies`` reads
them back. It knows nothing about widgets or notebooks.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from .scenarios import Scenario
from .shapes import REMINDER_OPEN, Ending, block_kind, is_probe, reminder_digest, request_shapes

__all__ = ["ANATOMY_SCENARIOS", "Anatomy", "anatomies", "conformance_file", "load_anatomies", "record_anatomies",
           "request_anatomy", "side_anatomy"]

ANATOMY_SCENARIOS = ("one_tool", "max_tokens_once", "stream_error_inside_tool_use", "http_500",
                     "hook_post_tool_use_context", "tool_use_without_block", "prompt_too_long_once")
"""The scenarios whose anatomies are recorded for chapter 11."""

Anatomy = dict[str, Any]
"""One request's anatomy (JSON-ready): ``status``, ``error``, ``streamed``, ``max_tokens``, ``model``
(``main`` / ``fallback`` / ``other:NAME``), ``fields`` (the body's top-level keys, sorted), ``system``
(one ``{"length", "hash", "cache"}`` per block), ``tools`` (``{"count", "cache"}``), ``messages`` (one
``{"role", "blocks", "new"}`` each; a block is ``{"kind", "length", "cache"}`` plus ``hash`` for a
reminder, ``id`` / ``is_error`` / ``inside`` (how many reminders inside) / ``reminders`` (each inside
reminder's ``{"length", "hash"}``, numbers blanked: ``shapes.reminder_digest``) for a tool_result, ``name``
for a tool_use), ``added`` (index of the first message new against the previous request)."""


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def _block(block: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {"kind": "?", "length": 0, "cache": False}
    kind = block_kind(block)
    shape: dict[str, Any] = {"kind": kind, "cache": "cache_control" in block}
    if kind in ("text", "reminder"):
        text = str(block.get("text", ""))
        shape["length"] = len(text)
        if kind == "reminder":
            shape["hash"] = _hash(text)
    elif kind == "tool_result":
        content = json.dumps(block.get("content", ""), ensure_ascii=False)
        inside = [reminder_digest(text) for text in _REMINDER.findall(_text_of(block.get("content", "")))]
        shape.update(length=len(content), id=str(block.get("tool_use_id")), is_error=bool(block.get("is_error")),
                     inside=content.count(REMINDER_OPEN),
                     reminders=[{"length": length, "hash": digest} for length, digest in inside])
    elif kind == "tool_use":
        shape.update(length=len(json.dumps(block.get("input", {}), ensure_ascii=False)), name=str(block.get("name")),
                     id=str(block.get("id")))
    elif kind in ("thinking", "redacted_thinking"):
        shape["length"] = len(str(block.get("thinking", block.get("data", ""))))
        shape["signed"] = bool(block.get("signature"))
    else:
        shape["length"] = len(json.dumps(block, ensure_ascii=False))
    return shape


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _message_key(message: dict[str, Any]) -> str:
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, dict) else b
              for b in _blocks(message)]
    return json.dumps([message.get("role"), blocks], sort_keys=True, ensure_ascii=False)


def request_anatomy(body: dict[str, Any], *, previous: Sequence[dict[str, Any]] | None, model: str,
                    fallback_model: str | None = None, status: int = 200, error: str | None = None) -> Anatomy:
    """The anatomy of one request ``body`` (the JSON as sent); ``previous``: the previous request's
    messages (None for the first), to mark which messages are new."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    added = 0
    if previous is not None:
        keys = [_message_key(m) for m in previous]
        while added < len(keys) and added < len(messages) and _message_key(messages[added]) == keys[added]:
            added += 1
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    tools = [t for t in body.get("tools", []) or [] if isinstance(t, dict)]
    name = body.get("model")
    role = "main" if name == model else "fallback" if fallback_model and name == fallback_model else f"other:{name}"
    return {
        "status": status, "error": error, "streamed": bool(body.get("stream")),
        "max_tokens": body.get("max_tokens") if isinstance(body.get("max_tokens"), int) else None,
        "model": role, "fields": sorted(body),
        "system": [{"length": len(str(b.get("text", ""))), "hash": _hash(str(b.get("text", ""))),
                    "cache": "cache_control" in b} for b in system or [] if isinstance(b, dict)],
        "tools": {"count": len(tools), "cache": any("cache_control" in t for t in tools)},
        "messages": [{"role": str(m.get("role")), "blocks": [_block(b) for b in _blocks(m)], "new": i >= added}
                     for i, m in enumerate(messages)],
        "added": added,
    }


def anatomies(requests: Iterable[Any], *, model: str, fallback_model: str | None = None) -> list[Anatomy]:
    """The anatomies of the ``/v1/messages`` requests in ``requests`` (``ReceivedRequest``s, in arrival
    order), a probe skipped (``shapes.is_probe``, as ``shapes.request_shapes`` does)."""
    out: list[Anatomy] = []
    previous: list[dict[str, Any]] | None = None
    for request in requests:
        if request.method != "POST" or not request.path.endswith("/v1/messages") or is_probe(request):
            continue
        body = request.body or {}
        out.append(request_anatomy(body, previous=previous, model=model, fallback_model=fallback_model,
                                   status=request.status, error=(request.error or {}).get("type")))
        previous = [m for m in body.get("messages", []) if isinstance(m, dict)]
    return out


def side_anatomy(run: Any, log: list[Any], scenario: Scenario) -> dict[str, Any]:
    """One side's run of ``scenario`` as the anatomies file keeps it: ``version``, ``ending``, ``probes``,
    ``retries``, ``markers`` and ``workspace`` (as ``SideRun`` has them), ``requests`` (each an anatomy with its
    ``shape``). ``run``: the ``SideRun``; ``log``: the ``ReceivedRequest``s its ``log=`` collected."""
    shapes, _ = request_shapes(log, model=scenario.model, fallback_model=scenario.fallback_model,
                               markers=scenario.markers, children=scenario.children)
    ending: Ending = run.ending
    return {"version": run.version, "ending": {"reason": ending.reason, "turns": ending.turns},
            "probes": run.probes, "retries": run.retries, "markers": list(run.markers),
            "workspace": None if run.workspace is None else list(run.workspace),
            "requests": [{**anatomy, "shape": shape.as_data()} for anatomy, shape in
                         zip(anatomies(log, model=scenario.model, fallback_model=scenario.fallback_model), shapes)]}


def record_anatomies(path: Path, names: Sequence[str] = ANATOMY_SCENARIOS, *, claude: str | None,
                     timeout: float = 90.0) -> dict[str, Any]:
    """Run each scenario in ``names`` on both sides and write their anatomies to ``path`` (shapes only);
    returns what was written. Needs ``claude`` (``make conformance`` installs the pinned version); None: only
    dreamloop's side runs, and Claude Code's is kept as ``path`` holds it (dreamloop changed, Claude Code did not;
    ``ValueError`` naming a scenario the file lacks)."""
    from .scenarios import scenario
    from .sides import claude_code_version, run_claude_code, run_dreamloop

    kept = load_anatomies(path) if claude is None else None
    version = kept["claude_code"] if kept is not None else claude_code_version(claude)
    scenarios: dict[str, Any] = {}
    for name in names:
        each = scenario(name)
        ours: list[Any] = []
        if kept is not None:
            if name not in kept["scenarios"]:
                raise ValueError(f"{path}: no recorded Claude Code side of {name} to keep (record it with --claude)")
            recorded = kept["scenarios"][name]["claude_code"]
        else:
            theirs: list[Any] = []
            run_theirs, _ = run_claude_code(each, claude, version=version, timeout=timeout, log=theirs)
            recorded = side_anatomy(run_theirs, theirs, each)
        run_ours, _ = run_dreamloop(each, timeout=timeout, log=ours)
        scenarios[name] = {"about": each.about, "claude_code": recorded, "dreamloop": side_anatomy(run_ours, ours, each)}
    data = {"claude_code": version,
            "about": "Each request of chapter 11's scenarios, both sides, as shapes: fields, block kinds and "
                     "lengths, where cache_control sits; Anthropic's text only as a length and a hash. Recorded "
                     "with `python -m dreamloop.compare.anatomy --record FILE`.",
            "scenarios": scenarios}
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data


def conformance_file(name: str) -> Path:
    """``conformance/NAME`` of the checkout this package runs from (or of the current directory or one
    of its parents); ``FileNotFoundError`` saying where it looked."""
    import dreamloop

    places = [Path(dreamloop.__file__).resolve().parent.parent, Path.cwd(), *Path.cwd().parents]
    for folder in places:
        if (folder / "conformance" / name).is_file():
            return folder / "conformance" / name
    raise FileNotFoundError(f"conformance/{name} not found beside the package or above {Path.cwd()}")


def load_anatomies(path: Path | None = None, version: str | None = None) -> dict[str, Any]:
    """The recorded anatomies (``record_anatomies``' file); by default the pinned version's."""
    if path is None:
        from .sides import CLAUDE_CODE_VERSION, expectations_name

        path = conformance_file(expectations_name(version or CLAUDE_CODE_VERSION, "requests"))
    return json.loads(Path(path).read_text(encoding="utf-8"))


if __name__ == "__main__":  # python -m dreamloop.compare.anatomy --record FILE [SCENARIO ...]
    import argparse

    from .sides import find_claude

    parser = argparse.ArgumentParser(prog="python -m dreamloop.compare.anatomy", description=__doc__)
    parser.add_argument("--record", type=Path, required=True, metavar="FILE")
    parser.add_argument("--claude", metavar="PATH")
    parser.add_argument("--dreamloop-only", action="store_true",
                        help="run dreamloop's side alone and keep Claude Code's as FILE holds it")
    parser.add_argument("scenarios", nargs="*", default=list(ANATOMY_SCENARIOS))
    args = parser.parse_args()
    found = None if args.dreamloop_only else find_claude(args.claude)
    if found is None and not args.dreamloop_only:
        parser.error("Claude Code is needed to record (make conformance installs it), or give --dreamloop-only")
    record_anatomies(args.record, args.scenarios or ANATOMY_SCENARIOS, claude=found)
    print(f"recorded {len(args.scenarios or ANATOMY_SCENARIOS)} scenario(s) to {args.record}")
