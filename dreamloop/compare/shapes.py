"""What a side sent and how it ended, as shapes; and the MATCH rule between two sides.

Pure functions of the offline API's request log (``ReceivedRequest``s) and a
side's ending. A *shape* keeps what the loop decided, never what Anthropic
wrote: statuses, ``max_tokens`` (the absolute limit; also whether it rose or
fell against the side's first request), streamed or not, which model (main,
fallback, other), and what each request added to the conversation, as roles
and block kinds (``text``, ``reminder`` for a ``<system-reminder>`` text block,
``tool_use``, ``tool_result``, ``thinking``, ...) with the tool_result ids and
their ``is_error`` flags. Reminders *inside* a tool_result's content are kept as
a length and a short hash each, their numbers blanked first
(``RequestShape.result_reminders``): Claude Code 2.1.332 put one inside a
tool_result of every results message (the last, wherever the recording says which), in ``one_tool``,
``results_in_finishing_order`` and every scenario with a tool call, and a
PostToolUse hook's context went there in ``hook_post_tool_use_context``. A scenario's own texts (``Scenario.markers``:
a hook's reason, a file's new content) are looked for in what each request added
on the user's side, and where each first arrived is kept (``RequestShape.texts``,
``SideRun.markers``), so a scenario shows whose words reached the model and
where, without any text of Anthropic's.

The MATCH rule (``differences``; dreamloop's choice, written down in
``docs/compare.md``):

* the same number of requests reach the model (``/v1/messages``; the probe
  request of Claude Code 2.1.332, below, ``opus_probe``, is skipped and reported), counted per conversation
  where the scenario has sub-agents (``Scenario.children``: a child's requests are shaped and compared apart
  from its parent's, each against the same child's on the other side);
* request by request: the same HTTP status, streamed or not, the same
  absolute ``max_tokens``, the same model role (``main``, ``fallback`` or
  ``other``), the same added messages as roles and block kinds, the same
  tool_result ids with the same ``is_error`` flags (as a set where the
  scenario says the order depends on timing);
* where the scenario names texts of its own: each arrived at the same request
  and place on both sides (or never);
* the same files of the workspace changed;
* the same line count of each file the scenario counts (``Scenario.counts``: a command that appends a line
  each time it runs, so the count is how often it ran);
* the same ending, compared by name (dreamloop's Terminal reason against the
  ``terminal_reason`` of the ``claude -p`` result line).

The first user message's leading reminder blocks (eight from Claude Code 2.1.332
in ``one_tool``; the *context*) are counted apart (``RequestShape.context``) and
reported, not compared: compared, they would make every row differ on the same
point and hide what a scenario is about (and they are not the same in every
scenario: seven in ``opus_probe``, nine with a CLAUDE.md in ``memory_file``, the
first one's hash different in each scenario whose requests are recorded). The
reminders inside tool_results are recorded, not counted (dreamloop sends none of
its own there); a scenario about what the loop adds between turns names the
texts such an addition would carry.

The probe: with an Opus model Claude Code 2.1.332's first request carried
``role: "system"`` messages (what ``is_probe`` recognises); the offline API
answered 400 and it sent the request again without them (``opus_probe``: one
probe skipped).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

__all__ = ["Added", "Ending", "RequestShape", "SideRun", "block_kind", "differences", "is_probe",
           "reminder_digest", "request_labels", "request_shapes", "workspace_line"]

REMINDER_OPEN = "<system-reminder>"
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_NUMBERS = re.compile(r"[0-9]+")
_ROOTS = re.compile(r"(?:/[^\s/()'\"]+)+?/(workspace|home|scratch)(?=[/\s)'\"]|$)")
_RUN_NAMES = re.compile(r"<(task-id|output-file)>[^<]*</\1>")


@dataclass(frozen=True)
class Added:
    """One message a request added: its ``role`` and the ``kinds`` of its blocks, in order.
    ``extends``: the blocks were appended to the previous request's last message of that role
    (printed ``user+[reminder]``), as Claude Code 2.1.332 added a text to the message it had already sent
    after "prompt is too long" (``prompt_too_long_after_tools``; its words are not recorded)."""

    role: str
    kinds: tuple[str, ...]
    extends: bool = False

    def __str__(self) -> str:
        return f"{self.role}{'+' if self.extends else ''}[{', '.join(_runs(self.kinds))}]"


@dataclass(frozen=True)
class RequestShape:
    """One request to ``/v1/messages`` as a shape.

    ``status``: the HTTP status (200 for a stream, even one that later carried an
    error event); ``error``: the error type sent, mid-stream ones included (or
    None); ``streamed``; ``max_tokens`` (tokens, as sent) and ``max_tokens_change``
    ("=", "+", "-" against the side's first request); ``model`` ("main",
    "fallback" or "other:NAME"); ``added``: the messages new against the previous
    request (all of them for the first); ``tool_results``: ``(tool_use_id,
    is_error)`` of the added results, in order; ``context``: leading reminder
    blocks of the first user message (first request only); ``result_reminders``:
    ``(tool_use_id, length, hash)`` of each reminder inside the added tool_results'
    content (``reminder_digest``); ``texts``: ``(text, place)`` for each of the
    scenario's own texts found in what this request added on the user's side
    (``place``: ``context``, ``text``, ``reminder``, ``result ID`` or ``reminder inside
    result ID``); ``fields``: the body's top-level keys; ``cache_control``: where
    the markers sit, as ``"system"``, ``"tools"`` or ``"messages[i]"``; ``conversation``: ``""`` for the run's own
    conversation, else the key of the sub-agent's it belongs to (``Scenario.children``); ``tools``: how many tools the
    request offered, ``offers_agent``: whether ``Agent`` was among them.
    """

    status: int
    error: str | None
    streamed: bool
    max_tokens: int | None
    max_tokens_change: str
    model: str
    added: tuple[Added, ...]
    tool_results: tuple[tuple[str, bool], ...]
    context: int = 0
    result_reminders: tuple[tuple[str, int, str], ...] = ()
    texts: tuple[tuple[str, str], ...] = ()
    fields: tuple[str, ...] = ()
    cache_control: tuple[str, ...] = ()
    conversation: str = ""
    tools: int = 0
    offers_agent: bool = False

    def summary(self) -> str:
        """One line: ``200 stream max=32000(=) main +user[text] results[toolu_1 ok]``."""
        status = f"{self.status}" + (f"/{self.error}" if self.error else "")
        way = "stream" if self.streamed else "no-stream"
        added = " ".join(str(a) for a in self.added) or "(nothing new)"
        parts = [status, way, f"max={self.max_tokens}({self.max_tokens_change})", self.model, "+" + added]
        if self.conversation:
            parts.insert(0, f"[{self.conversation}]")
        if self.tool_results:
            parts.append("results[" + " ".join(f"{i}{' ERR' if e else ''}" for i, e in self.tool_results) + "]")
        if self.result_reminders:
            parts.append(f"({len(self.result_reminders)} reminder(s) inside results: "
                         + " ".join(f"{length}#{digest}" for _, length, digest in self.result_reminders) + ")")
        for said, place in self.texts:
            parts.append(f"{said!r} in {place}")
        if self.context:
            parts.append(f"context:{self.context} reminders")
        return " ".join(parts)

    def as_data(self) -> dict[str, Any]:
        """JSON-ready (lists for tuples)."""
        return json.loads(json.dumps(asdict(self)))


@dataclass(frozen=True)
class Ending:
    """How a side's run ended: ``reason`` (a Terminal reason / ``terminal_reason``, or ``timeout`` /
    ``no_result`` when the process gave none), ``turns`` (``turn_count`` / ``num_turns``),
    ``is_error`` (the flag of the ``claude -p`` result line; dreamloop: any reason but ``completed``)."""

    reason: str
    turns: int | None = None
    is_error: bool | None = None


@dataclass
class SideRun:
    """One side's run of one scenario: ``side`` ("claude-code" or "dreamloop"), ``version``,
    ``requests`` (shapes of the requests that reached the model), ``probes`` (skipped probe requests),
    ``ending``, ``seconds`` (wall time), ``notes`` (what a person should know: a retry line, a timeout),
    ``retries`` (the ``api_retry`` lines of ``claude -p``), ``markers`` (the scenario's own texts looked for:
    ``arrivals`` says where each first reached the model), ``workspace`` (what became of the scenario's files:
    ``("config.py changed",)``, ``()`` for none changed; None: not looked at), ``counted`` (for each file the scenario counts,
    ``Scenario.counts``: how many lines it had when the run ended, or -1 when it was not there)."""

    side: str
    version: str
    requests: list[RequestShape]
    ending: Ending
    probes: int = 0
    seconds: float = 0.0
    retries: int = 0
    notes: list[str] = field(default_factory=list)
    markers: tuple[str, ...] = ()
    workspace: tuple[str, ...] | None = None
    counted: dict[str, int] = field(default_factory=dict)

    def arrivals(self) -> list[tuple[str, str]]:
        """Each of ``markers`` with where it first reached the model: ``request N PLACE`` (places joined
        by ``, `` when it came in several at once; ``RequestShape.texts``; ``KEY request N PLACE`` in a sub-agent's
        conversation, ``request_labels``), or ``never``. The run's own conversation is looked at first."""
        found: list[tuple[str, str]] = []
        for marker in self.markers:
            where = "never"
            for label, shape in zip(request_labels(self.requests), self.requests):
                places = [place for said, place in shape.texts if said == marker]
                if places:
                    where = f"{label} {', '.join(places)}"
                    break
            found.append((marker, where))
        return found

    def as_data(self) -> dict[str, Any]:
        return {"side": self.side, "version": self.version, "requests": [r.as_data() for r in self.requests],
                "probes": self.probes, "ending": asdict(self.ending), "retries": self.retries,
                "seconds": round(self.seconds, 2), "notes": list(self.notes), "markers": list(self.markers),
                "workspace": None if self.workspace is None else list(self.workspace),
                "counted": dict(self.counted)}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> "SideRun":
        """The run ``as_data`` wrote (a file recorded before texts and reminders were kept reads with none)."""
        requests = [RequestShape(**{**r, "added": tuple(Added(a["role"], tuple(a["kinds"]), a.get("extends", False))
                                                   for a in r["added"]),
                                    "tool_results": tuple((i, bool(e)) for i, e in r["tool_results"]),
                                    "result_reminders": tuple((str(i), int(n), str(h)) for i, n, h in
                                                              _listed(r.get("result_reminders"))),
                                    "texts": tuple((str(t), str(p)) for t, p in _listed(r.get("texts"))),
                                    "fields": tuple(r.get("fields", ())),
                                    "cache_control": tuple(r.get("cache_control", ()))})
                    for r in data["requests"]]
        workspace = data.get("workspace")
        return cls(side=data["side"], version=data["version"], requests=requests, ending=Ending(**data["ending"]),
                   probes=data.get("probes", 0), seconds=data.get("seconds", 0.0), retries=data.get("retries", 0),
                   notes=list(data.get("notes", [])), markers=tuple(data.get("markers", ())),
                   workspace=None if workspace is None else tuple(workspace),
                   counted=dict(data.get("counted", {})))


def request_labels(shapes: Sequence[RequestShape]) -> list[str]:
    """Each shape's name in difference and outcome lines: ``request N`` counted from 1 within its conversation, with
    the conversation's key first for a sub-agent's (``CHILDTASK request 2``)."""
    seen: dict[str, int] = {}
    labels: list[str] = []
    for shape in shapes:
        seen[shape.conversation] = seen.get(shape.conversation, 0) + 1
        labels.append(f"{shape.conversation + ' ' if shape.conversation else ''}request {seen[shape.conversation]}")
    return labels


def _listed(value: Any) -> list[Any]:
    """A list field of recorded data; an older file's count (an int) or nothing reads as none."""
    return list(value) if isinstance(value, (list, tuple)) else []


# ---------------------------------------------------------------------------
# Shapes from the request log


def block_kind(block: Any) -> str:
    """A content block's kind: its ``type``, or ``reminder`` for a text block that opens with
    ``<system-reminder>``."""
    if isinstance(block, str):
        return "reminder" if block.lstrip().startswith(REMINDER_OPEN) else "text"
    kind = str(block.get("type", "?"))
    if kind == "text" and str(block.get("text", "")).lstrip().startswith(REMINDER_OPEN):
        return "reminder"
    return kind


def reminder_digest(text: str) -> tuple[int, str]:
    """A reminder's length and short hash (the first 8 hex digits of its SHA-256), its numbers blanked
    first (each run of digits read as ``0``; dreamloop's choice, so that a reminder whose figures move with
    the size of the request reads the same in every run), and a side's folder (``.../workspace``,
    ``.../home``, ``.../scratch``) read as ``<workspace>`` and so on, so a path in a reminder (a nested
    memory file's, ``nested_memory_file``) reads the same from any temporary folder, and what a ``<task-id>`` or
    ``<output-file>`` element holds is emptied, since a background task's name and file differ in every run, as in
    Claude Code 2.1.332's notification in ``background_command_ends_before_next_request``)."""
    blanked = _NUMBERS.sub("0", _ROOTS.sub(r"<\1>", _RUN_NAMES.sub(r"<\1></\1>", text)))
    return len(blanked), hashlib.sha256(blanked.encode("utf-8")).hexdigest()[:8]


def _content_text(content: Any) -> str:
    """The text of a tool_result's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _places(markers: Sequence[str], context: Sequence[Any], added: Sequence[dict[str, Any]]
            ) -> list[tuple[str, str]]:
    """Where each marker appears in the user's side of what a request added (see ``RequestShape.texts``)."""
    spots: list[tuple[str, str]] = [("context", str(b.get("text", "")) if isinstance(b, dict) else str(b))
                                    for b in context]
    for message in added:
        if message.get("role") != "user":
            continue
        for block in _blocks(message):
            kind = block_kind(block)
            if kind in ("text", "reminder"):
                spots.append((kind, str(block.get("text", "")) if isinstance(block, dict) else str(block)))
            elif kind == "tool_result":
                ident = str(block.get("tool_use_id"))
                body = _content_text(block.get("content", ""))
                inside = _REMINDER.findall(body)
                spots.append((f"result {ident}", _REMINDER.sub("", body)))
                spots.extend((f"reminder inside result {ident}", text) for text in inside)
    found: list[tuple[str, str]] = []
    for marker in markers:
        for place, text in spots:
            if marker in text and (marker, place) not in found:
                found.append((marker, place))
    return found


def is_probe(request: Any) -> bool:
    """The probe of Claude Code 2.1.332 (``opus_probe``): a rejected request whose messages carry
    ``role: "system"``."""
    body = request.body or {}
    return request.status == 400 and any(m.get("role") == "system" for m in body.get("messages", [])
                                         if isinstance(m, dict))


def request_shapes(requests: Iterable[Any], *, model: str, fallback_model: str | None = None,
                   markers: Sequence[str] = (), children: Sequence[str] = ()) -> tuple[list[RequestShape], int]:
    """The shapes of the ``/v1/messages`` requests in ``requests`` (``ReceivedRequest``s, in arrival
    order), and how many probe requests were skipped. ``model`` / ``fallback_model``: the scenario's
    names, so a request's model reads ``main`` or ``fallback``; ``markers``: the scenario's own texts to
    look for (``RequestShape.texts``).

    ``children``: the keys that tell a sub-agent's requests from the run's own (``Scenario.children``): a request
    whose first user message holds a key belongs to that sub-agent's conversation, as ``scripts.by_prompt`` tells
    them apart. Each conversation is shaped on its own (what a request added is against the previous request of
    the same conversation; its first request's leading reminders are its context), and the shapes come grouped:
    the run's own conversation first, then each key's in the order of ``children``, each in arrival order (how
    the two interleave depends on timing, dreamloop's choice to leave it out)."""
    grouped: dict[str, list[Any]] = {"": [], **{key: [] for key in children}}
    probes = 0
    for request in requests:
        if request.method != "POST" or not request.path.endswith("/v1/messages"):
            continue
        if is_probe(request):
            probes += 1
            continue
        grouped[_conversation(request.body or {}, children)].append(request)
    shapes: list[RequestShape] = []
    for key, members in grouped.items():
        shapes.extend(_conversation_shapes(members, key, model=model, fallback_model=fallback_model, markers=markers))
    return shapes, probes


def _conversation(body: dict[str, Any], children: Sequence[str]) -> str:
    """The key of the sub-agent whose request ``body`` is (its first user message holds the key), or ``""``."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    if not messages or not children:
        return ""
    first = "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in _blocks(messages[0]))
    return next((key for key in children if key in first), "")


def _conversation_shapes(requests: Sequence[Any], conversation: str, *, model: str, fallback_model: str | None,
                         markers: Sequence[str]) -> list[RequestShape]:
    shapes: list[RequestShape] = []
    previous: list[str] | None = None
    previous_messages: list[dict[str, Any]] = []
    first_max: int | None = None
    for request in requests:
        body = request.body or {}
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        keys = [_message_key(m) for m in messages]
        start = 0 if previous is None else _common_prefix(previous, keys)
        added_messages = messages[start:]
        extends = False
        if previous is not None and start < len(previous) and added_messages:
            extends, added_messages = _extension(previous_messages[start], added_messages)
        context, lead = 0, []
        if previous is None and added_messages:
            lead, added_messages = _split_context(added_messages)
            context = len(lead)
        results = [b for m in added_messages for b in _blocks(m)
                   if isinstance(b, dict) and b.get("type") == "tool_result"]
        max_tokens = body.get("max_tokens") if isinstance(body.get("max_tokens"), int) else None
        if first_max is None:
            first_max = max_tokens
        tools = [t for t in body.get("tools", []) or [] if isinstance(t, dict)]
        shapes.append(RequestShape(
            status=request.status,
            error=(request.error or {}).get("type"),
            streamed=bool(body.get("stream")),
            max_tokens=max_tokens,
            max_tokens_change=_change(first_max, max_tokens),
            model=_model_role(body.get("model"), model, fallback_model),
            added=tuple(Added(str(m.get("role")), tuple(block_kind(b) for b in _blocks(m)), extends and n == 0)
                        for n, m in enumerate(added_messages)),
            tool_results=tuple((str(b.get("tool_use_id")), bool(b.get("is_error"))) for b in results),
            context=context,
            result_reminders=tuple((str(b.get("tool_use_id")), *reminder_digest(text)) for b in results
                                   for text in _REMINDER.findall(_content_text(b.get("content", "")))),
            texts=tuple(_places(markers, lead, added_messages)),
            fields=tuple(sorted(body)),
            cache_control=tuple(_cache_control(body)),
            conversation=conversation,
            tools=len(tools),
            offers_agent=any(t.get("name") == "Agent" for t in tools),
        ))
        previous, previous_messages = keys, messages
    return shapes


def _blocks(message: dict[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def _message_key(message: dict[str, Any]) -> str:
    """What identifies a message across requests: its role and blocks without ``cache_control``."""
    return json.dumps([message.get("role"), [_block_key(b) for b in _blocks(message)]], ensure_ascii=False)


def _extension(old: dict[str, Any], added: list[dict[str, Any]]) -> tuple[bool, list[dict[str, Any]]]:
    """When the first added message is ``old`` with blocks appended (same role, ``old``'s blocks a
    prefix of its own), only the appended blocks are new."""
    new = added[0]
    old_blocks = [_block_key(b) for b in _blocks(old)]
    new_blocks = _blocks(new)
    if (old.get("role") != new.get("role") or len(new_blocks) <= len(old_blocks)
            or [_block_key(b) for b in new_blocks[:len(old_blocks)]] != old_blocks):
        return False, added
    return True, [{**new, "content": new_blocks[len(old_blocks):]}, *added[1:]]


def _block_key(block: Any) -> str:
    if isinstance(block, dict):
        block = {k: v for k, v in block.items() if k != "cache_control"}
    return json.dumps(block, sort_keys=True, ensure_ascii=False)


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def _split_context(messages: list[dict[str, Any]]) -> tuple[list[Any], list[dict[str, Any]]]:
    """The leading reminder blocks of the first user message, taken off: (those blocks, the messages left)."""
    first, rest = messages[0], messages[1:]
    if first.get("role") != "user":
        return [], messages
    blocks = _blocks(first)
    lead = 0
    while lead < len(blocks) - 1 and block_kind(blocks[lead]) == "reminder":
        lead += 1
    return blocks[:lead], [{**first, "content": blocks[lead:]}, *rest]


def _change(first: int | None, now: int | None) -> str:
    if first is None or now is None or first == now:
        return "="
    return "+" if now > first else "-"


def _model_role(name: Any, model: str, fallback: str | None) -> str:
    if name == model:
        return "main"
    if fallback is not None and name == fallback:
        return "fallback"
    return f"other:{name}"


def _cache_control(body: dict[str, Any]) -> Iterable[str]:
    system = body.get("system")
    if isinstance(system, list) and any(isinstance(b, dict) and "cache_control" in b for b in system):
        yield "system"
    if any(isinstance(t, dict) and "cache_control" in t for t in body.get("tools", []) or []):
        yield "tools"
    for i, message in enumerate(m for m in body.get("messages", []) if isinstance(m, dict)):
        if any(isinstance(b, dict) and "cache_control" in b for b in _blocks(message)):
            yield f"messages[{i}]"


def _runs(kinds: Sequence[str]) -> list[str]:
    """``text, reminder, reminder`` → ``text, reminder×2`` (for reading only)."""
    out: list[str] = []
    for kind in kinds:
        if out and out[-1].split("×")[0] == kind:
            head, _, count = out[-1].partition("×")
            out[-1] = f"{head}×{int(count or 1) + 1}"
        else:
            out.append(kind)
    return out


# ---------------------------------------------------------------------------
# The MATCH rule


def differences(left: SideRun, right: SideRun, *, order_free: bool = False) -> list[str]:
    """What differs between two sides' runs under the MATCH rule (empty: MATCH).

    ``order_free``: compare each request's tool_result ids as a set (their order depends on
    which parallel call finished first). A sub-agent's requests (``RequestShape.conversation``) are compared with
    the same sub-agent's on the other side. Each difference is one line naming the request (from 1; a sub-agent's
    with its key first, ``request_labels``),
    the text (``text 'config.py is frozen': request 3 result toolu_fake_0002 vs never``), the workspace
    or the ending. A side whose workspace was not looked at (None) is not compared on it.
    """
    found: list[str] = []
    for key in dict.fromkeys([s.conversation for s in left.requests + right.requests]):
        theirs = [s for s in left.requests if s.conversation == key]
        ours = [s for s in right.requests if s.conversation == key]
        if len(theirs) != len(ours):
            found.append(f"{key + ' ' if key else ''}requests: {len(theirs)} vs {len(ours)}")
        for label, a, b in zip(request_labels(theirs), theirs, ours):
            found.extend(f"{label}: {what}" for what in _request_differences(a, b, order_free))
    for (said, theirs), (_, ours) in zip(left.arrivals(), right.arrivals()):
        if theirs != ours:
            found.append(f"text {said!r}: {theirs} vs {ours}")
    if left.workspace is not None and right.workspace is not None and left.workspace != right.workspace:
        found.append(f"workspace: {workspace_line(left.workspace)} vs {workspace_line(right.workspace)}")
    for name in sorted(set(left.counted) | set(right.counted)):
        if left.counted.get(name) != right.counted.get(name):
            found.append(f"{name}: {counted_lines(left.counted.get(name))} vs {counted_lines(right.counted.get(name))}")
    if left.ending.reason != right.ending.reason:
        found.append(f"ending: {left.ending.reason} vs {right.ending.reason}")
    return found


def workspace_line(workspace: Sequence[str]) -> str:
    """``config.py changed`` (several joined by ``, ``), or ``unchanged``."""
    return ", ".join(workspace) or "unchanged"


def counted_lines(lines: int | None) -> str:
    """A counted file's line count as the outcome prints it: ``2 lines``, ``1 line``, ``absent``."""
    if lines is None or lines < 0:
        return "absent"
    return f"{lines} line{'' if lines == 1 else 's'}"


def _request_differences(a: RequestShape, b: RequestShape, order_free: bool) -> Iterable[str]:
    if a.status != b.status:
        yield f"status {a.status} vs {b.status}"
    if a.streamed != b.streamed:
        yield f"{'streamed' if a.streamed else 'not streamed'} vs {'streamed' if b.streamed else 'not streamed'}"
    if a.max_tokens != b.max_tokens:
        yield f"max_tokens {a.max_tokens} vs {b.max_tokens}"
    if a.model != b.model:
        yield f"model {a.model} vs {b.model}"
    if a.added != b.added:
        yield (f"added {' '.join(map(str, a.added)) or 'nothing'} vs {' '.join(map(str, b.added)) or 'nothing'}")
    results_a, results_b = a.tool_results, b.tool_results
    if order_free:
        results_a, results_b = tuple(sorted(results_a)), tuple(sorted(results_b))
    if results_a != results_b:
        yield (f"tool_results {_results(results_a)} vs {_results(results_b)}"
               + (" (as a set)" if order_free else ""))


def _results(results: Sequence[tuple[str, bool]]) -> str:
    return "[" + " ".join(f"{i}{' ERR' if e else ''}" for i, e in results) + "]"
