"""The transcript file: a session's durable record, and the repair a resume makes after a crash.

Owns the record format (below), appending records so that a killed process loses at most the
line it was writing, reading a file back (a torn last line, record types it does not know), and
the repair of what a crash leaves. It knows nothing about running the loop: ``engine.py``
(``QueryEngine``) decides when to write and calls ``repair_messages`` on resume.

The format is dreamloop's own, shaped like Claude Code's session files: one JSON object per line,
written with one ``os.write`` and then ``os.fsync`` (on disk before the engine hands the event
on). File order is the truth; ``parentUuid`` chains every record with a ``uuid`` to the one
written before it.

================  ===================================================  ============================
``type``          what the record is                                   read back as
================  ===================================================  ============================
``user``,         one loop message: its fields (``model_dump``) plus    ``load_transcript`` returns
``assistant``,    ``parentUuid`` and ``sessionId``                      them, in file order: the
``system``,                                                             history
``attachment``,
``tombstone``,
``tool_use_summary``
``progress``      a *finished tool call*: the ``ProgressMessage`` with  the saved result of that
                  ``data.stage == "done"``, ``tool_use_id``, and        call; never sent itself
                  ``data.result`` = the ``tool_result`` block as it
                  will be sent. Written when the call finishes, so a
                  crash before the batch's results message loses none
``torn_line``     a torn last line a resume set aside: ``line``          skipped
                  (1-based), ``text`` (the bytes, decoded with
                  replacement); no ``uuid``
``set_aside``     records a resume set aside: ``lines`` (1-based),      those lines are skipped
                  ``why`` (a duplicate uuid, a fork); no ``uuid``
``run_ended``     an abnormal end's cleanup (``cleanup.end_of_run``):   skipped (the trace keeps it
                  ``reason`` (the Terminal), ``content`` (what was     too; never sent)
                  cancelled, the reason); no ``uuid``
anything else     session-file bookkeeping, a newer version's records   kept on disk, never sent
================  ===================================================  ============================

What a crash can leave, and what ``QueryEngine.resume`` does about it before anything is sent:

* a torn last line (killed during a write): set aside as a ``torn_line`` record, with a warning;
* an assistant message whose ``tool_use`` blocks have no results message (killed while tools
  ran): one user message answering every such call in call order, with its saved result if
  it finished, else an ``is_error`` result saying the session ended first (``SESSION_ENDED``);
* then a ``SystemMessage`` (subtype ``resume_repair``) saying what was repaired. Both are
  written to the transcript, so the next resume finds nothing to repair.

What two writers can leave (a copied line, two processes resuming one session before the lock
below existed, a hand edit), also found on every read and repaired by a resume:

* a record whose ``uuid`` an earlier record has: a duplicate; the first is kept;
* records off the chain: the history is the ``parentUuid`` chain that ends at the last record
  (a fork: two writers continued from one record); the other branch is set aside.

Both are skipped on every read, and a resume writes a ``set_aside`` record naming their lines.
While a ``QueryEngine`` writes (a run, a resume's repair) it holds a lock on the file
(``lock_transcript``: ``flock`` on POSIX), so a second writer gets ``TranscriptBusy`` instead of
forking the chain; an engine whose file was appended to by another since it last wrote is refused
too (``TranscriptChanged``): resume the file again to continue.

Any other line that is not a record (a middle line, a line of a known type that does not
validate) was not made by a crash: ``TranscriptError`` names it and nothing is repaired.

**Side chains** (a sub-agent's messages, ``QueryParams.sub_agents``). The messages of the child run an ``Agent``
call started go into a file of their own beside the transcript, as Claude Code 2.1.332 wrote a foreground
``Agent`` call's sub-agent transcript (a probe run offline, ``tests/conformance/make_sidechain_fixture.py``,
its files kept as ``12_dreamloop-compare-probe_agent_foreground_v2.1.332_scrubbed.jsonl`` and the folder beside it): for ``S.jsonl``, ``S/subagents/agent-<agentId>.jsonl`` (``side_chain_path``; ``agentId``
is ``subagents.agent_id`` of the call's id), every record the main file's envelope plus ``isSidechain: true``
and ``agentId``, the child's prompt first with ``parentUuid`` null, the child's finished calls as ``progress``
records, each record fsynced before the child goes on (the main file's rule); and
``S/subagents/agent-<agentId>.meta.json`` (``agentType``, ``description``, ``toolUseId``: the parent's call,
written whole before the first record). The same layout as 2.1.332's (dreamloop's choice): one session's files
stay together, a folder of sessions lists each parent once, and ``import_claude_code`` reads either program's.
``inspect_side_chains`` finds each ``Agent`` call's side chain from the call alone; a torn last line is set
aside by a resume as in the main file, any other bad line is a ``TranscriptError`` naming that file and line
(nothing is changed); a child is never continued, so its dangling calls stay as they are (the parent's call is
the one a resume answers).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import TypeAdapter, ValidationError

from .errors import FileFormatError, TranscriptBusy, TranscriptError, TranscriptWarning
from .jsonl import TornLine, parse_record, read_jsonl, warn_torn
from .language import N_, tr
from .messages import AssistantMessage, LoopMessage, ProgressMessage, SystemMessage, UserMessage, new_uuid
from .subagents import AGENT_TOOL, agent_id
from .tools.orchestration import tool_results_message

__all__ = [
    "REPAIR_SUBTYPE",
    "SESSION_ENDED",
    "TornLine",
    "TranscriptReport",
    "append_records",
    "finished_call",
    "inspect_side_chains",
    "inspect_transcript",
    "last_chained_uuid",
    "load_transcript",
    "lock_transcript",
    "repair_messages",
    "run_ended_record",
    "set_aside_record",
    "side_chain_path",
    "side_chain_record",
    "torn_line_record",
    "transcript_record",
    "write_side_chain_meta",
]

SESSION_ENDED = ("The session ended before this call finished, so its result was lost. "
                 "It may have had effects: check before running it again.")
"""The ``is_error`` result text of a call a crash left unanswered (the model reads it)."""

REPAIR_SUBTYPE = "resume_repair"
"""The ``SystemMessage.subtype`` of the notice a resume writes after repairing a transcript."""

_MESSAGE = TypeAdapter(LoopMessage)
_MESSAGE_TYPES = {"user", "assistant", "system", "attachment", "tombstone", "tool_use_summary"}
_ENVELOPE = ("parentUuid", "sessionId")


# ---------------------------------------------------------------------------
# Writing


def transcript_record(message: Any, parent: str | None, session_id: str) -> dict[str, Any]:
    """One session-file record (the envelope: ``type``, ``uuid``, ``parentUuid``, ``sessionId``) holding a loop message.

    ``{"type", "uuid", "parentUuid", "sessionId", ...the message's other fields}``;
    ``load_transcript`` reads it back into the same message.
    """
    data = message.model_dump(mode="json")
    record = {"type": data.pop("type"), "uuid": data.pop("uuid"), "parentUuid": parent, "sessionId": session_id}
    record.update(data)
    return record


def side_chain_path(transcript: Path, agent_id: str) -> Path:
    """Where the side chain ``agent_id`` of the transcript ``transcript`` is: ``<stem>/subagents/agent-<id>.jsonl``
    beside it (``S.jsonl`` -> ``S/subagents/agent-<id>.jsonl``)."""
    return transcript.with_suffix("") / "subagents" / f"agent-{agent_id}.jsonl"


def side_chain_record(message: Any, parent: str | None, session_id: str, agent_id: str) -> dict[str, Any]:
    """A side chain's record: ``transcript_record`` plus ``isSidechain: true`` and ``agentId`` (the parent's
    ``sessionId``)."""
    return {**transcript_record(message, parent, session_id), "isSidechain": True, "agentId": agent_id}


def write_side_chain_meta(path: Path, meta: dict[str, Any]) -> None:
    """Write a side chain's ``.meta.json`` whole (a temporary file, fsynced, renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    target = path.with_suffix(".meta.json")
    temporary = target.with_name(target.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, (json.dumps(meta) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, target)


def inspect_side_chains(transcript: str | Path, messages: list[Any]) -> dict[str, "TranscriptReport"]:
    """The side chain of each ``Agent`` call in ``messages`` that has one on disk: call id -> its report.

    Each is read as ``inspect_transcript`` reads a transcript (a torn last line kept apart in ``report.torn``);
    raises ``TranscriptError`` naming the side chain's file and line for any other bad line."""
    found: dict[str, TranscriptReport] = {}
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for block in message.message.content:
            if block.type == "tool_use" and block.name == AGENT_TOOL:
                path = side_chain_path(Path(transcript), agent_id(block.id))
                if path.exists():
                    found[block.id] = inspect_transcript(path)
    return found


def finished_call(event: Any) -> bool:
    """True for the event that carries a finished tool call's result (a ``done`` ``ProgressMessage``)."""
    return isinstance(event, ProgressMessage) and event.data.get("stage") == "done"


def append_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Append ``records`` to ``path`` as JSON lines, then ``fsync``; create the file if needed.

    One ``os.write`` per call (no buffer in this process: what was written survives a
    SIGKILL or a dead kernel the moment this returns) and an ``fsync`` (survives the machine
    going down: about 0.2 ms per call on an ext4 disk). If the file does not end with a
    newline, one is written first, so a record never continues another line. If a write fails
    (``OSError``: no space left, a file size limit) the file is cut back to its size before the
    call, so nothing half-written stays, and the error is raised: the caller writes them again.
    """
    if not records:
        return
    data = "".join(json.dumps(record) + "\n" for record in records).encode("utf-8")
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            os.lseek(fd, -1, os.SEEK_END)
            if os.read(fd, 1) != b"\n":
                data = b"\n" + data
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:  # a full disk, a size limit: take back what got written, so no line is left torn
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)
    if created and os.name == "posix":  # the new file's directory entry, too
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


@contextlib.contextmanager
def lock_transcript(path: Path) -> Iterator[None]:
    """Hold the transcript's write lock for the ``with`` block (``flock``, exclusive, on the file itself).

    A second holder, in this process or another, gets ``TranscriptBusy`` at once (never a wait): two
    writers would fork the ``parentUuid`` chain. The lock goes with the process (a killed writer leaves
    none). Creates the file if it is missing. Where the system has no ``flock`` (Windows) it locks nothing.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TranscriptBusy(f"{path}: another session is writing this transcript (a QueryEngine in this or "
                                 "another process, during a run or a resume); wait until its run ends, then "
                                 "QueryEngine.resume the file to continue from what it wrote.") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def last_chained_uuid(path: Path, *, chunk: int = 65_536) -> str | None:
    """The ``uuid`` of the file's last record that has one (None for a missing or empty file).

    Reads backwards from the end, ``chunk`` bytes at a time, so it costs the size of the last records, not
    of the file; a torn last line and records without a ``uuid`` (``torn_line``, ``set_aside``) are passed.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        end = os.fstat(fd).st_size
        tail = b""
        while end > 0:
            start = max(0, end - chunk)
            tail = os.pread(fd, end - start, start) + tail
            end = start
            lines = tail.split(b"\n")
            complete = lines if start == 0 else lines[1:]  # the first piece may be a line's end
            for line in reversed(complete):
                record = parse_record(line) if line.strip() else None
                if record is not None and isinstance(record.get("uuid"), str):
                    return record["uuid"]
            tail = lines[0] if start else b""
        return None
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# Reading


def torn_line_record(torn: TornLine) -> dict[str, Any]:
    """The ``torn_line`` record that keeps a torn last line once a resume has set it aside."""
    return {"type": "torn_line", "line": torn.line, "text": torn.data.decode("utf-8", "replace")}


@dataclass(frozen=True)
class TranscriptReport:
    """What a transcript file holds, and what a resume must repair in it (``inspect_transcript``).

    * ``messages``: the loop messages, in file order (what ``load_transcript`` returns).
    * ``saved_results``: ``tool_use_id`` -> ``tool_result`` block, from the finished-call records.
    * ``dangling``: the ``tool_use`` blocks (SDK objects) of the last assistant message that no
      user message answers, in call order: the calls a crash cut off.
    * ``torn``: the torn last line, or None.
    * ``unknown``: ``(line, type)`` of records kept on disk and never sent.
    * ``repairs``: the ``resume_repair`` notices already in the file (earlier resumes).
    * ``session_id``, ``last_uuid``: of the last record, for appending to the chain.

    ``print(report)`` says it in words; ``needs_repair`` is what ``QueryEngine.resume`` acts on.
    """

    path: Path
    records: int
    messages: list[Any]
    saved_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    dangling: tuple[Any, ...] = ()
    torn: TornLine | None = None
    unknown: tuple[tuple[int, str], ...] = ()
    repairs: tuple[SystemMessage, ...] = ()
    session_id: str | None = None
    last_uuid: str | None = None
    set_aside: tuple[tuple[int, str], ...] = ()
    already_set_aside: frozenset[int] = frozenset()

    @property
    def needs_repair(self) -> bool:
        """True if a resume would change the file: a dangling ``tool_use``, a torn last line, or duplicate or
        forked records no resume has set aside yet."""
        return bool(self.dangling) or self.torn is not None or bool(self.new_set_aside)

    @property
    def new_set_aside(self) -> tuple[tuple[int, str], ...]:
        """``(line, why)`` of the records skipped on this read that no ``set_aside`` record names yet."""
        return tuple((line, why) for line, why in self.set_aside if line not in self.already_set_aside)

    def __str__(self) -> str:
        """The report in the reader's language (``dreamloop.language``; English by default, as the CLI prints it)."""
        kinds = [m.type for m in self.messages]
        shown = ", ".join(kinds if len(kinds) <= 8 else ["…", *kinds[-7:]]) or tr("none")
        lines = [tr("{name}: {records} records; {count} loop messages: {shown}", name=self.path.name,
                    records=self.records, count=len(kinds), shown=shown)]
        if self.dangling:
            calls = ", ".join(f"{block.id} ({block.name})" for block in self.dangling)
            saved = [block.id for block in self.dangling if block.id in self.saved_results]
            lines.append(tr("  tool_use without a results message: {calls}", calls=calls))
            lines.append(tr("  of those, finished and saved: {saved}", saved=", ".join(saved) or tr("none")))
        if self.torn:
            lines.append(tr("  torn last line: line {line}, {size} bytes", line=self.torn.line,
                            size=len(self.torn.data)))
        if self.unknown:
            lines.append(tr("  kept on disk, never sent: {lines}", lines=", ".join(
                tr("line {number} ({why})", number=n, why=kind) for n, kind in self.unknown)))
        if self.set_aside:
            lines.append(tr("  skipped: {lines}", lines=", ".join(
                tr("line {number} ({why})", number=n, why=why) for n, why in self.set_aside)))
        for notice in self.repairs:  # the notice's text is kept in the transcript, in English
            lines.append(tr("  repaired by an earlier resume: {notice}", notice=notice.content))
        lines.append(tr("  a resume would: {plan}", plan=_plan(self, say=tr)) if self.needs_repair
                     else tr("  nothing to repair"))
        return "\n".join(lines)

    __repr__ = __str__


def inspect_transcript(path: str | Path) -> TranscriptReport:
    """Read a transcript without changing it: its messages and what a crash left (``TranscriptReport``).

    Shows what ``QueryEngine.resume`` will repair (``print(report)``), and afterwards what it did
    (``report.repairs``). Duplicate and forked records are skipped (``report.set_aside``). Raises
    ``FileNotFoundError`` if ``path`` is missing and ``TranscriptError`` for a line a crash cannot explain.
    """
    path = Path(path)
    try:
        lines = read_jsonl(path)
    except FileFormatError as error:
        if error.line is None:  # a directory, an unreadable file
            raise TranscriptError(str(error)) from None
        raise TranscriptError(f"{error}. A crash only tears the last line, so something else changed this file; "
                              "fix or remove that line to resume.") from None
    records, torn = lines.records, lines.torn
    noted = frozenset(line for _, record in records if record.get("type") == "set_aside"
                      for line in record.get("lines") or [] if isinstance(line, int))
    skipped = _off_the_chain(records)
    messages: list[Any] = []
    saved: dict[str, dict[str, Any]] = {}
    unknown: list[tuple[int, str]] = []
    repairs: list[SystemMessage] = []
    session_id, last_uuid = None, None
    for number, record in records:
        session_id = record.get("sessionId", session_id)
        if number in skipped or number in noted:
            continue
        last_uuid = record.get("uuid", last_uuid)
        kind = record.get("type")
        if kind in _MESSAGE_TYPES:
            message = _message(record, path, number)
            messages.append(message)
            if isinstance(message, SystemMessage) and message.subtype == REPAIR_SUBTYPE:
                repairs.append(message)
        elif kind == "progress":
            block = (record.get("data") or {}).get("result")
            if (record.get("data") or {}).get("stage") == "done" and isinstance(block, dict):
                saved.setdefault(str(block.get("tool_use_id")), block)
        elif kind not in ("torn_line", "set_aside", "run_ended"):
            unknown.append((number, str(kind)))
    return TranscriptReport(
        path=path, records=len(records), messages=messages, saved_results=saved, dangling=_dangling(messages),
        torn=torn, unknown=tuple(unknown), repairs=tuple(repairs), session_id=session_id, last_uuid=last_uuid,
        set_aside=tuple(sorted(skipped.items())), already_set_aside=noted,
    )


def _off_the_chain(records: list[tuple[int, dict[str, Any]]]) -> dict[int, str]:
    """``line -> why`` for the records a read skips: a ``uuid`` seen before (a duplicate), and, where two
    records continue from one parent (a fork), those not on the ``parentUuid`` chain ending at the last record.
    Records with no parent (a file's first, or one written without chaining) never make a fork."""
    skipped: dict[int, str] = {}
    first: dict[str, int] = {}
    chained: list[tuple[int, dict[str, Any]]] = []
    for number, record in records:
        uuid = record.get("uuid")
        if not isinstance(uuid, str):
            continue
        if uuid in first:
            skipped[number] = f"a duplicate of line {first[uuid]}"
            continue
        first[uuid] = number
        chained.append((number, record))
    children: dict[str, int] = {}
    for _, record in chained:
        parent = record.get("parentUuid")
        if isinstance(parent, str):
            children[parent] = children.get(parent, 0) + 1
    forks = [first[parent] for parent, count in children.items() if count > 1 and parent in first]
    if not forks or not chained:
        return skipped
    parent_of = {record["uuid"]: record.get("parentUuid") for _, record in chained}
    chain: set[str] = set()
    uuid: Any = chained[-1][1]["uuid"]
    while isinstance(uuid, str) and uuid in parent_of and uuid not in chain:
        chain.add(uuid)
        uuid = parent_of[uuid]
    fork_line = min(forks)
    for number, record in chained:
        if number > fork_line and record["uuid"] not in chain:
            skipped[number] = f"another writer's branch from line {fork_line}"
    return skipped


def load_transcript(path: str | Path) -> list[Any]:
    """The loop messages of a transcript written by ``QueryEngine``, in file order (no repair).

    Finished-call, ``torn_line`` and unknown records are skipped; a torn last line is skipped
    with a ``TranscriptWarning``. Raises ``FileNotFoundError``, or ``TranscriptError`` for a
    line a crash cannot explain. ``QueryEngine.resume`` reads the same file and repairs it.
    """
    report = inspect_transcript(path)
    warn_torn(report.path, report.torn, TranscriptWarning)
    return report.messages


def _message(record: dict[str, Any], path: Path, number: int) -> Any:
    data = {key: value for key, value in record.items() if key not in _ENVELOPE}
    try:
        return _MESSAGE.validate_python(data)
    except ValidationError as error:
        problem = error.errors(include_url=False)[0]
        loc = problem["loc"][1:] if problem["loc"][:1] == (record["type"],) else problem["loc"]  # drop the tag
        where = ".".join(str(part) for part in loc)
        raise TranscriptError(f"{path}, line {number}: a {record['type']!r} record that is not a valid "
                              f"message ({where}: {problem['msg']}); fix or remove that line to resume.") from None


def _dangling(messages: list[Any]) -> tuple[Any, ...]:
    """The last assistant message's ``tool_use`` blocks that no later user message answers."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], AssistantMessage):
            answered = {
                block.get("tool_use_id")
                for later in messages[index + 1:] if isinstance(later, UserMessage)
                and isinstance(later.message["content"], list)
                for block in later.message["content"] if block.get("type") == "tool_result"
            }
            return tuple(block for block in messages[index].message.content
                         if block.type == "tool_use" and block.id not in answered)
    return ()


# ---------------------------------------------------------------------------
# The repair


def repair_messages(report: TranscriptReport, *, uuid: Callable[[], str] = new_uuid) -> list[Any]:
    """The messages a resume appends to repair what a crash left: ``[]`` if nothing.

    ``[results, notice]``: ``results`` is one ``UserMessage`` answering every dangling
    ``tool_use`` in call order, with its saved result if the call finished, else an ``is_error``
    ``SESSION_ENDED`` result (absent if nothing dangles); ``notice`` is a ``SystemMessage``
    (subtype ``resume_repair``, level ``warning``) saying what was repaired, torn line included.
    A pure function of the report; ``QueryEngine.resume`` writes what it returns.
    """
    if not report.needs_repair:
        return []
    repair: list[Any] = []
    if report.dangling:
        repair.append(tool_results_message(report.dangling, report.saved_results, missing=SESSION_ENDED,
                                           uuid=uuid()))
    summary = f"Resumed after the session ended mid-run; repaired the transcript: {_plan(report, done=True)}."
    repair.append(SystemMessage(uuid=uuid(), subtype=REPAIR_SUBTYPE, content=summary, level="warning"))
    return repair


def _plan(report: TranscriptReport, *, done: bool = False,
          say: Callable[..., str] = lambda text, **fields: text.format(**fields)) -> str:
    """What a repair of ``report`` does (``done``: did), in words; ``say`` fills each template (English, as the
    repair notice kept in the transcript has it; ``tr`` for a report shown to a reader)."""
    def calls(blocks: list[Any]) -> str:
        return ", ".join(f"{block.id} ({block.name})" for block in blocks)

    saved = [block for block in report.dangling if block.id in report.saved_results]
    lost = [block for block in report.dangling if block.id not in report.saved_results]
    steps = []
    if saved:
        steps.append(say(_SAVED[done, len(saved) == 1], calls=calls(saved)))
    if lost:
        steps.append(say(_LOST[done, len(lost) == 1], calls=calls(lost)))
    if report.torn:
        steps.append(say(N_("set aside a torn last line (line {line}, {size} bytes)"), line=report.torn.line,
                         size=len(report.torn.data)))
    for why, lines in _grouped(report.new_set_aside).items():
        template = N_("set aside line {lines} ({why})") if len(lines) == 1 else N_("set aside lines {lines} ({why})")
        steps.append(say(template,
                         lines=", ".join(map(str, lines)), why=why))
    return say("; ").join(steps)


_SAVED = {  # (done, one call): the words for calls answered with their saved results (done: the kept notice's,
    # English only)
    (False, True): N_("answer {calls} with the results saved when it finished"),
    (False, False): N_("answer {calls} with the results saved when they finished"),
    (True, True): "answered {calls} with the results saved when it finished",
    (True, False): "answered {calls} with the results saved when they finished",
}
_LOST = {  # (done, one call): the words for calls that never finished
    (False, True): N_("answer {calls} with an is_error result (the session ended before it finished)"),
    (False, False): N_("answer {calls} with an is_error result (the session ended before they finished)"),
    (True, True): "answered {calls} with an is_error result (the session ended before it finished)",
    (True, False): "answered {calls} with an is_error result (the session ended before they finished)",
}


def _grouped(set_aside: tuple[tuple[int, str], ...]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for line, why in set_aside:
        grouped.setdefault(why.split(" of line")[0].split(" from line")[0], []).append(line)
    return grouped


def run_ended_record(notice: SystemMessage, reason: str, session_id: str) -> dict[str, Any]:
    """The ``run_ended`` record of an abnormal end: ``{"type": "run_ended", "sessionId", "reason", "content"}``
    (``content``: the cleanup's notice, what it cancelled). Outside the ``parentUuid`` chain; never sent."""
    return {"type": "run_ended", "sessionId": session_id, "reason": reason, "content": notice.content}


def set_aside_record(report: TranscriptReport) -> dict[str, Any] | None:
    """The ``set_aside`` record a resume writes for the duplicate and forked records it skipped (None if none):
    ``{"type": "set_aside", "lines": [...], "why": [...]}``, so a later read finds nothing new to repair."""
    if not report.new_set_aside:
        return None
    return {"type": "set_aside", "lines": [line for line, _ in report.new_set_aside],
            "why": [why for _, why in report.new_set_aside]}
