"""How a claim's evidence is read and checked (``docs/evidence.md``): the parts of the registry of facts.

``tests/evidence_facts.py`` holds the registry itself: the *facts* (what a recording shows), the
*quotations* (a few words of a source text) and, for each claim, where its sentence is in each edition and
which facts and quotations it rests on. This module knows how to read them:

* ``Observed``: one side of one ``dreamloop compare`` scenario, read from
  ``conformance/claude-code-<version>.json`` (the outcome lines, the ending, turns, context) and, for the
  scenarios it holds, ``conformance/claude-code-<version>.requests.json`` (each request's anatomy), as a
  small view addressed by paths (``request[2].added``, ``anatomy.request[1].tools.count``; see ``resolve``).
* ``Derived``: a value computed from the recordings (several scenarios at once, a kept session file, a
  scenario's own script) by a named function of ``Recordings``.
* ``Quote`` / ``Absent``: words found in (or, for a name said to be in neither, missing from) a source text.
* ``At`` / ``Backed``: a sentence (file, notebook cell id, a distinctive fragment) and what it rests on.

Nothing here knows the chapters' contents; ``tests/test_evidence.py`` finds the claims and holds the two
together.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "conformance"
SESSIONS = ROOT / "tests" / "fixtures" / "claude-code-sessions"
SEEDS = Path(os.environ.get("DREAMLOOP_SEEDS", ROOT.parent / "shared" / "seeds"))
"""Where the two source texts are: ``../shared/seeds/`` beside the checkout (CI), or ``$DREAMLOOP_SEEDS``."""

CC, DL = "claude_code", "dreamloop"
FOUR, CONV = "four-step-loop", "conversation-loop"
TEXT_FILES = {FOUR: "four-step-loop.zh.txt", CONV: "conversation-loop.zh.txt"}


# -- where a sentence is ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class At:
    """A sentence: ``path`` from the repository root, ``cell`` (a notebook cell's id, None elsewhere) and
    ``fragment``, a few words of it (whitespace is collapsed before comparing) that no other claim of that cell
    or file holds."""

    path: str
    cell: str | None
    fragment: str

    def __str__(self) -> str:
        return f"{self.path}" + (f" cell {self.cell}" if self.cell else "") + f": “{self.fragment}”"


@dataclass(frozen=True)
class Backed:
    """One claim, in each edition that has it (``at``), and the keys of the facts and quotations it rests on."""

    at: tuple[At, ...]
    rests_on: tuple[str, ...]


def chapter(name: str, cell: str, english: str, chinese: str | None, *rests_on: str) -> Backed:
    """A claim of chapter ``name`` (``08_recovery``) in cell ``cell`` of both editions (the zh twin keeps the
    cell's id); ``chinese`` None for a claim only the English edition makes."""
    at = [At(f"notebooks/{name}.ipynb", cell, english)]
    if chinese is not None:
        at.append(At(f"notebooks/zh/{name}.ipynb", cell, chinese))
    return Backed(tuple(at), rests_on)


def zh_only(name: str, cell: str, chinese: str, *rests_on: str) -> Backed:
    """A claim only the Chinese edition's sentence splitting makes separately."""
    return Backed((At(f"notebooks/zh/{name}.ipynb", cell, chinese),), rests_on)


def document(path: str, fragment: str, *rests_on: str) -> Backed:
    """A claim of the README or of a docstring in ``path``."""
    return Backed((At(path, None, fragment),), rests_on)


# -- facts -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class every:
    """An expectation: every element of the list at the path equals ``value`` (and there is at least one)."""

    value: Any


@dataclass(frozen=True)
class Observed:
    """What one side (``CC`` or ``DL``) did on one scenario, as the recording holds it: ``says`` in words, and
    ``expect``: path (``resolve``) -> the value the recording must hold there."""

    scenario: str
    side: str
    says: str
    expect: dict[str, Any]

    @property
    def subjects(self) -> tuple[str, ...]:
        return (self.scenario,)

    def failures(self, recordings: "Recordings") -> list[str]:
        view = recordings.side(self.scenario, self.side)
        if view is None:
            return [f"{self.scenario} ({self.side}) is not in {recordings.conformance_path.name}"]
        found = []
        for path, expected in self.expect.items():
            try:
                actual = resolve(view, path)
            except (KeyError, IndexError, TypeError) as error:
                found.append(f"{path}: not in the recording ({error})")
                continue
            if not matches(actual, expected):
                found.append(f"{path}: expected {_show(expected)}, recorded {_show(actual)}")
        return found


@dataclass(frozen=True)
class Derived:
    """A value computed from the recordings by ``value`` (a function of ``Recordings``), which must equal
    ``expect``; ``about``: the scenarios and session files it is about."""

    about: tuple[str, ...]
    says: str
    value: Callable[["Recordings"], Any]
    expect: Any

    @property
    def subjects(self) -> tuple[str, ...]:
        return self.about

    def failures(self, recordings: "Recordings") -> list[str]:
        try:
            actual = self.value(recordings)
        except (KeyError, IndexError, TypeError, ValueError, OSError) as error:
            return [f"cannot be computed: {type(error).__name__}: {error}"]
        return [] if matches(actual, self.expect) else [f"expected {_show(self.expect)}, found {_show(actual)}"]


@dataclass(frozen=True)
class Shipped:
    """Names Claude Code's program holds (an ending's name no scenario has reached): found in the files of the
    pinned version as ``make conformance`` installs it (``.claude-code/``). It shows the name is the program's,
    not what the program does with it. Checked by its own test, skipped (saying so) where the program is not
    installed."""

    names: tuple[str, ...]
    says: str

    @property
    def subjects(self) -> tuple[str, ...]:
        return ()

    def failures(self, recordings: "Recordings") -> list[str]:
        return []  # not a recording's fact: see program_failures

    def program_failures(self, program: list[Path]) -> list[str]:
        import mmap

        missing = list(self.names)
        for path in program:
            with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                missing = [name for name in missing if data.find(name.encode("utf-8")) < 0]
        return [f"{name} is not in Claude Code's installed files" for name in missing]


def claude_code_program(version: str = "2.1.332") -> list[Path] | None:
    """The files of Claude Code ``version`` as ``make conformance`` installs it under ``.claude-code/`` (its
    executable and scripts), or None when that version is not installed here."""
    package = ROOT / ".claude-code" / "node_modules" / "@anthropic-ai" / "claude-code"
    try:
        if json.loads((package / "package.json").read_text(encoding="utf-8")).get("version") != version:
            return None
    except (OSError, ValueError):
        return None
    files = [p for p in (package / "bin").glob("*") if p.is_file()] + sorted(package.glob("*.cjs"))
    return files or None


Fact = Observed | Derived | Shipped


def matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, every):
        return isinstance(actual, list) and bool(actual) and all(matches(a, expected.value) for a in actual)
    return _plain(actual) == _plain(expected)


def _plain(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _show(value: Any) -> str:
    return f"every element {value.value!r}" if isinstance(value, every) else repr(_plain(value))


_SEGMENT = re.compile(r"^(?P<name>[A-Za-z_][\w-]*)(?:\[(?P<index>\*|\d+)\])?$")


def resolve(view: Any, path: str) -> Any:
    """The value at ``path`` in ``view``: dotted names, each optionally indexed ``[n]`` (1-based, as the
    chapters count requests and messages) or ``[*]`` (every element, the rest of the path applied to each);
    a final ``|len``, ``|set`` or ``|sorted`` applies that function. Example: ``request[*].max_tokens_change``."""
    path, _, function = path.partition("|")
    values, many = [view], False
    for segment in path.split("."):
        match = _SEGMENT.match(segment)
        if match is None:
            raise KeyError(f"bad path segment {segment!r}")
        values = [value[match["name"]] for value in values]
        index = match["index"]
        if index == "*":
            values, many = [item for value in values for item in value], True
        elif index is not None:
            number = int(index)
            if number < 1:
                raise IndexError("paths count from 1")
            values = [value[number - 1] for value in values]
    result = values if many else values[0]
    if function == "len":
        return len(result)
    if function == "set":
        return sorted(set(result))
    if function == "sorted":
        return sorted(result)
    if function:
        raise KeyError(f"unknown function |{function}")
    return result


# -- quotations --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Quote:
    """A few words of source text ``text`` (``FOUR`` or ``CONV``) that the text holds (whitespace ignored)."""

    text: str
    words: str

    @property
    def texts(self) -> tuple[str, ...]:
        return (self.text,)

    def failures(self, texts: dict[str, str]) -> list[str]:
        return [] if _squeeze(self.words) in texts[self.text] else [f"not found in the {self.text} text"]


@dataclass(frozen=True)
class Absent:
    """A name a claim says neither text (or not ``texts``) holds: the test finds it in none of them."""

    words: str
    texts: tuple[str, ...] = (FOUR, CONV)

    def failures(self, texts: dict[str, str]) -> list[str]:
        return [f"found in the {t} text" for t in self.texts if _squeeze(self.words) in texts[t]]


Quotation = Quote | Absent


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def source_texts() -> dict[str, str] | None:
    """The two source texts, whitespace removed, by ``FOUR`` / ``CONV``; None where they are absent (a clone
    without the shared folder)."""
    paths = {key: SEEDS / name for key, name in TEXT_FILES.items()}
    if not all(path.is_file() for path in paths.values()):
        return None
    return {key: _squeeze(path.read_text(encoding="utf-8")) for key, path in paths.items()}


# -- the recordings --------------------------------------------------------------------------------------------

_LINE = re.compile(r"^(?P<status>\d+)(?:/(?P<error>\S+))? (?P<way>stream|no-stream) max_tokens=(?P<max_tokens>\d+) "
                   r"(?P<model>\S+) \+(?P<rest>.*)$")
_TEXTS = re.compile(r"""(?P<said>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") (?P<where>.*?)(?:; (?=['"])|$)""")
_COUNTED = re.compile(r"^(?P<name>[\w.-]+): (?P<lines>\d+) lines?$")
_CHILD_LINE = re.compile(r"^(?P<key>[A-Z][\w-]*): (?P<line>\d.*)$")
_CONVERSATION = re.compile(r"(?P<key>[\w-]+) (?P<n>\d+)(?P<agent> with Agent)?(?:, |$)")


def parse_conversations(lines: list[str]) -> dict[str, Any]:
    """A sub-agent scenario's lines (``Scenario.children``) as ``child`` ({key: {"requests": n, "request": [...]}},
    each request ``parse_line``'s), ``tools`` ({``main`` or key: how many tools its first request offered}),
    ``agent_offered`` ({... : whether ``Agent`` was among them}) and ``contexts`` ({...: its leading reminders});
    empty mappings for a scenario without sub-agents."""
    child: dict[str, Any] = {}
    for match in filter(None, map(_CHILD_LINE.match, lines)):
        entry = child.setdefault(match["key"], {"requests": 0, "request": []})
        entry["request"].append(parse_line(match["line"]))
        entry["requests"] += 1
    tools = next((line.removeprefix("tools: ") for line in lines if line.startswith("tools: ")), "")
    contexts = next((line.removeprefix("context: ") for line in lines if line.startswith("context: ")), "")
    return {"child": child,
            "tools": {m["key"]: int(m["n"]) for m in _CONVERSATION.finditer(tools)},
            "agent_offered": {m["key"]: bool(m["agent"]) for m in _CONVERSATION.finditer(tools)},
            "contexts": {m["key"]: int(m["n"]) for m in _CONVERSATION.finditer(contexts)}}


def parse_line(line: str) -> dict[str, Any]:
    """One request's outcome line of the conformance file as a dict: ``status`` (int), ``error``, ``streamed``,
    ``max_tokens`` (int, as sent), ``model``, ``added`` (the messages it added, as printed: ``assistant[text]
    user[reminder]``, ``nothing``), ``results`` (the tool_result ids in the order sent, ``:error`` marked) and
    ``inside`` (the reminders inside those results, ``toolu_fake_0001 79#5d93cac8`` each, or ``79#5d93cac8``
    where the scenario's order is timing-dependent)."""
    match = _LINE.match(line)
    if match is None:
        raise ValueError(f"not an outcome line: {line!r}")
    rest, _, inside = match["rest"].partition(" inside[")
    added, _, results = rest.partition(" results[")
    inside = inside.rstrip("]")
    if inside.startswith("toolu"):  # "ID N#HASH, ID N#HASH"
        reminders = [part.strip() for part in inside.split(",")]
    else:  # order-free: "N#HASH N#HASH"
        reminders = inside.split()
    return {"status": int(match["status"]), "error": match["error"], "streamed": match["way"] == "stream",
            "max_tokens": int(match["max_tokens"]), "model": match["model"], "added": added,
            "results": results.rstrip("]").split() if results else [], "inside": reminders}


def parse_texts(line: str) -> dict[str, str]:
    """A ``texts:`` line as {the scenario's own text: where it first reached the model} (``request 3 result
    toolu_fake_0002``, ``request 1 context``, ``never``)."""
    import ast

    body = line.removeprefix("texts: ")
    return {ast.literal_eval(m["said"]): m["where"] for m in _TEXTS.finditer(body)}


class Recordings:
    """The pinned recordings: the conformance file, its request anatomies, the kept session files, and the
    scenario library (``dreamloop/compare/scenarios.py``) that made them."""

    def __init__(self, version: str = "2.1.332") -> None:
        self.version = version
        self.conformance_path = CONFORMANCE / f"claude-code-{version}.json"
        self.anatomy_path = CONFORMANCE / f"claude-code-{version}.requests.json"

    @cached_property
    def conformance(self) -> dict[str, Any]:
        return json.loads(self.conformance_path.read_text(encoding="utf-8"))

    @cached_property
    def anatomy(self) -> dict[str, Any]:
        return json.loads(self.anatomy_path.read_text(encoding="utf-8"))

    @property
    def scenario_names(self) -> list[str]:
        """The recorded scenarios, in the file's order."""
        return list(self.conformance["scenarios"])

    def side(self, scenario: str, side: str) -> dict[str, Any] | None:
        """The view ``Observed`` paths address: ``requests`` (how many reached the model), ``request[n]``
        (``parse_line``, and ``max_tokens_change``: ``=``, ``+`` or ``-`` against the side's first request),
        ``texts`` (``parse_texts``: where each of the scenario's own texts first reached the model),
        ``workspace`` (``config.py changed``, ``unchanged``), ``counts`` (lines of each counted file),
        ``ending``, ``turns`` (``num_turns`` / ``turn_count``), ``probes``, ``context`` (Claude Code: the leading
        reminders of its first message), ``match``, ``deliberate`` (the chapter of a labelled difference),
        ``differences``, ``child``, ``tools``, ``agent_offered``, ``contexts`` (a sub-agent scenario's
        conversations: ``parse_conversations``); and ``anatomy`` (``request[n]`` with ``max_tokens``,
        ``fields``, ``system``, ``tools``, ``messages``, ``shape``) where the anatomy file holds the
        scenario."""
        recorded = self.conformance["scenarios"].get(scenario)
        if recorded is None or side not in recorded:
            return None
        lines = recorded[side]
        probes = sum(int(line.split()[1]) for line in lines if line.startswith("probe:"))
        requests = [parse_line(line) for line in lines if line[:1].isdigit()]
        for request in requests:
            first = requests[0]["max_tokens"]
            request["max_tokens_change"] = "=" if request["max_tokens"] == first else \
                "+" if request["max_tokens"] > first else "-"
        texts = [parse_texts(line) for line in lines if line.startswith("texts: ")]
        workspace = [line.removeprefix("workspace: ") for line in lines if line.startswith("workspace: ")]
        counted = {m["name"]: int(m["lines"]) for m in map(_COUNTED.match, lines) if m}
        view: dict[str, Any] = {
            "requests": len(requests), "request": requests, "probes": probes,
            "texts": texts[0] if texts else {}, "workspace": workspace[0] if workspace else None,
            "counts": counted,
            "ending": lines[-1].removeprefix("ending: "),
            "turns": recorded.get(f"{side}_turns"), "match": recorded["match"],
            "deliberate": (recorded.get("deliberate") or {}).get("chapter"),
            "differences": recorded.get("differences", []),
            **parse_conversations(lines),
        }
        if side == CC:
            view["context"] = recorded.get("claude_code_context")
        anatomy = self.anatomy["scenarios"].get(scenario, {}).get(side)
        if anatomy is not None:
            view["anatomy"] = {**anatomy, "request": anatomy["requests"]}
        return view

    def every_side(self, side: str) -> dict[str, dict[str, Any]]:
        """``side(name, side)`` of every recorded scenario, by name."""
        return {name: self.side(name, side) for name in self.scenario_names}

    def session(self, name: str) -> list[dict[str, Any]]:
        """The records of kept session file ``name`` (a file of ``tests/fixtures/claude-code-sessions/``)."""
        with (SESSIONS / name).open(encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]

    def scenario(self, name: str):
        """The scenario as the library defines it (``dreamloop.compare.scenarios.scenario``)."""
        from dreamloop.compare.scenarios import scenario

        return scenario(name)

    def script(self, name: str, workspace: str = "/ws") -> list[dict[str, Any]]:
        """The turns scenario ``name``'s script answers its first requests with (a policy is asked for up to
        eight, with empty bodies): each ``{"blocks": [[type, tool name or None, sorted input keys], ...],
        "fault": kind or None, "stop_reason": ...}``."""
        from dreamloop.scripts import Turn

        script = self.scenario(name).script(workspace)
        turns = script if isinstance(script, list) else [script({}, index) for index in range(8)]
        shown = []
        for turn in turns:
            assert isinstance(turn, Turn)
            blocks = [[b["type"], b.get("name"), sorted(b.get("input", {}))] for b in turn.content or []]
            shown.append({"blocks": blocks, "fault": turn.fault.kind if turn.fault else None,
                          "stop_reason": turn.stop_reason})
        return shown


def session_record_types(records: list[dict[str, Any]]) -> list[str]:
    """The distinct ``type``s of a session file's records, sorted."""
    return sorted({r.get("type") for r in records})


def session_tool_names(records: list[dict[str, Any]]) -> list[str]:
    """The tool names of a session file's ``api-request-shape`` records (Claude Code 2.1.332's request as
    sent), in order, from the first such record."""
    shapes = [r for r in records if r.get("type") == "api-request-shape"]
    return [tool["name"] for tool in shapes[0]["shape"]["tools"]] if shapes else []


def session_blocks_per_message(records: list[dict[str, Any]]) -> list[int]:
    """For each model response of a session file (its ``message.id``), how many ``assistant`` records hold it."""
    counts: dict[str, int] = {}
    for record in records:
        if record.get("type") == "assistant" and not record.get("isApiErrorMessage"):
            message_id = (record.get("message") or {}).get("id")
            if message_id:
                counts[message_id] = counts.get(message_id, 0) + 1
    return list(counts.values())


@dataclass
class Registry:
    """The facts, quotations and claims of ``evidence_facts``, with the inverse map (key -> claims)."""

    facts: dict[str, Fact]
    quotes: dict[str, Quotation]
    claims: list[Backed]
    names: dict[str, str] = field(default_factory=dict)

    def citing(self, key: str) -> list[Backed]:
        return [claim for claim in self.claims if key in claim.rests_on]
