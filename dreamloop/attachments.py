"""Phase 5: what the loop attaches between turns, before the next State.

The conversation-loop text's phase 5 injects attachments after the tools ran:
memory files that changed, notices of changed files, queued commands.
``Attachments`` holds what one run needs for that: the memory files read at
the start (their text goes into the first request, stage 5) and the files
the model read, each with a stamp (``mtime_ns``, size) and the text it saw (to diff a change against). ``after_tools(turn)``
is phase 5's one call; it returns, in order:

* ``memory_changed``: a memory file (CLAUDE.md) that changed, appeared or went
  away since it was last sent; its new text goes to the model (``changed_files``);
* ``changed_file``: a file the model read (Read) that changed on disk since,
  not by the loop's own Edit or Write (a change by Bash counts: a notice says what changed, not who);
  its changed lines, within the turn's budget (``file_notices.py``; ``changed_files``);
* ``queued_command``: input typed while the loop ran (``QueryParams.queued_input``), all of it at once and kept
  in the history before the first is yielded, so a Stop never leaves a text both drained and unsent.
  (Input a Stop left queued goes in front of the next prompt: ``QueryEngine.submit_message``.)
  ``queued_input_sent(trace)`` says where each queued text went.

``nested_memory(tool, input)`` is the tool calls' ``result_note``: the first Read, Edit or
Write of a file in a folder below the workspace root that has memory files puts them inside
that call's result, once (where Claude Code 2.1.332 put them: scenario ``nested_memory_file``),
and from then on they are part of the preamble. ``preamble()`` is asked again after every
compaction, so the requests after it carry each memory file as it is on disk then.

Each is an ``AttachmentMessage`` whose ``text`` is what the model reads
(dreamloop's wording); nothing here raises for what is on disk. It knows
nothing about the model call or how tools run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, NamedTuple

from .context.environment import date_reminder, environment_block, environment_facts
from .context.memory import (MemoryFile, memory_reminder, nested_memory_files, nested_memory_text, read_memory_files,
                             read_with_imports, stamp)
from .context.system_prompt import Preamble
from .file_notices import Change, notices
from .messages import AttachmentMessage, SystemMessage

__all__ = ["MAX_KEPT_CHARS", "Attachments", "QueuedSent", "changed_file_text", "queued_input_sent"]

MAX_KEPT_CHARS = 256 * 1024
"""The longest text of a file read that is kept to diff a later change against (dreamloop's choice); a longer
file's change is named, and the model is told to read it again."""

_READS = {"Read"}
_OWN_EDITS = {"Edit", "Write"}


@dataclass
class Attachments:
    """What one run attaches (phase 5) and sends once at its start (stage 5's preamble).

    ``workspace``: where relative paths are taken (None: no file is watched); ``uuid``, ``today``,
    ``home``, ``platform``: ``QueryDeps``'; the switches ``memory_files``, ``changed_files`` and
    ``environment`` (``QueryParams``); ``queued_input``: ``QueryParams.queued_input``.
    """

    workspace: Path | None
    uuid: Callable[[], str]
    today: Callable[[], Any]
    home: Path
    platform: str
    memory_files: bool = False
    changed_files: bool = False
    environment: bool = False
    queued_input: Callable[[], list[AttachmentMessage]] | None = None
    memory: list[MemoryFile] = field(default_factory=list)
    read: dict[Path, tuple[int, int] | None] = field(default_factory=dict)
    nested: list[tuple[Path, Any, Path]] = field(default_factory=list)  # nested memory files added, in order
    told: set[str] = field(default_factory=set)  # notices said (a compaction does not repeat them)
    pending: list[SystemMessage] = field(default_factory=list)  # notices of nested files, for phase 5
    seen: dict[Path, str] = field(default_factory=dict)

    @classmethod
    def for_run(cls, params: Any) -> "Attachments":
        """From a ``QueryParams`` (its switches, workspace, deps and queued input)."""
        deps = params.deps
        return cls(workspace=params.workspace, uuid=deps.uuid, today=deps.today, home=deps.home,
                   platform=deps.platform, memory_files=params.memory_files, changed_files=params.changed_files,
                   environment=params.environment, queued_input=params.queued_input)

    # -- once, at the start (stage 5 sends it with every request) -----------------------------

    def preamble(self) -> Preamble:
        """The environment block (system, after the system prompt), the memory files and the date (reminders
        opening the first user message), and a notice for each memory file not sent."""
        system: list[str] = []
        reminders: list[str] = []
        notices: list[SystemMessage] = []
        if self.environment and self.workspace is not None:
            system.append(environment_block(environment_facts(self.workspace, platform=self.platform)))
        if self.memory_files and self.workspace is not None:
            self.memory = read_memory_files(self.workspace, self.home)
            nested = self._read_nested(self.nested, {file.path for file in self.memory})
            text = memory_reminder(self.memory + nested)
            if text is not None:
                reminders.append(text)
            notices += self._notices_of(self.memory + nested)
        if self.environment:
            reminders.append(date_reminder(self.today()))
        return Preamble(system=tuple(system), reminders=tuple(reminders), notices=tuple(notices))

    # -- a tool call's result note -----------------------------------------------------------

    def nested_memory(self, tool: str, data: Any) -> str | None:
        """The memory files a Read, Edit or Write of ``data["file_path"]`` adds (those of its folders below
        the workspace root not added yet), as the text that goes inside its result; None when none."""
        if not self.memory_files or self.workspace is None or tool not in _READS | _OWN_EDITS:
            return None
        given = data.get("file_path") if isinstance(data, dict) else None
        if not isinstance(given, str) or not given:
            return None
        path = Path(given) if Path(given).is_absolute() else Path(self.workspace) / given
        known = {entry[0] for entry in self.nested}
        new = [entry for entry in nested_memory_files(self.workspace, path) if entry[0] not in known]
        if not new:
            return None
        self.nested += new
        files = self._read_nested(new, {file.path for file in self.memory})
        self.pending += self._notices_of(files)
        return nested_memory_text(files)

    # -- phase 5 --------------------------------------------------------------------------

    def after_tools(self, tool_uses: list[Any], results: dict[str, dict[str, Any]]) -> list[Any]:
        """Phase 5's attachments after a turn whose calls were ``tool_uses`` (SDK blocks) with ``results``
        (tool_use_id → tool_result block): changed memory files, changed files read, queued input."""
        out: list[Any] = list(self.pending)  # a nested memory file not sent, and why
        self.pending = []
        if self.changed_files:
            out += self._memory_changes()
            out += self._file_changes(tool_uses, results)
        for attachment in self.queued_input() if self.queued_input else []:
            out.append(attachment)
        return out

    def _memory_changes(self) -> list[AttachmentMessage]:
        if not self.memory_files or self.workspace is None:
            return []
        known = {file.path: file for file in self.memory}
        out, now = [], []
        for file in read_memory_files(self.workspace, self.home):  # again: one may have appeared, or an import
            before = known.pop(file.path, None)
            now.append(file)
            if before is not None and file.stamp == before.stamp and file.problem == before.problem:
                continue
            said = "changed" if before is not None else "appeared"
            body = file.text.rstrip("\n") if file.text is not None else f"(not included: {file.problem})"
            out.append(self._attach("memory_changed", file.path, said, f"The memory file "
                                    f"{_shown(file.path, self.workspace)} {said} during "
                                    f"the run. Its instructions now read:\n{body}"))
        for path in known:  # sent at the start, gone now
            out.append(self._attach("memory_changed", path, "removed", f"The memory file "
                                    f"{_shown(path, self.workspace)} was removed during "
                                    "the run; its instructions no longer apply."))
        self.memory = now
        return out

    def _file_changes(self, tool_uses: list[Any], results: dict[str, dict[str, Any]]) -> list[AttachmentMessage]:
        if self.workspace is None:
            return []
        touched: dict[Path, str] = {}  # this turn's reads and own edits, by resolved path
        for use in tool_uses:
            result = results.get(use.id)
            path = self._path(use)
            if path is not None and result is not None and not result.get("is_error") and use.name in _READS | _OWN_EDITS:
                touched[path] = use.name
        changed = []
        for path, before in list(self.read.items()):
            if path in touched:
                continue
            now = stamp(path)
            if now != before:
                self.read[path] = now  # announced once
                changed.append(path)
        out = []
        changes = [_change(path, self.seen.get(path), self.workspace) for path in changed]
        for path, change, notice in zip(changed, changes, notices(changes)):
            if notice.shown:  # the model saw the change: the next diff starts from it (else from what it saw)
                self._keep(path, change.now)
            out.append(self._attach("changed_file", path, "deleted" if change.now is None else "modified",
                                    notice.text))
        for path, tool in touched.items():
            if tool in _READS or path in self.read:  # the loop's own edit of a file read: no notice, a new stamp
                self.read[path] = stamp(path)
                self._keep(path, _text(path))
        return out

    def _keep(self, path: Path, text: str | None) -> None:
        if text is None or len(text) > MAX_KEPT_CHARS:
            self.seen.pop(path, None)
        else:
            self.seen[path] = text

    def _path(self, use: Any) -> Path | None:
        given = use.input.get("file_path") if isinstance(use.input, dict) else None
        if not isinstance(given, str) or not given:
            return None
        path = Path(given)
        return (path if path.is_absolute() else Path(self.workspace or ".") / path).resolve()

    def _attach(self, kind: str, path: Path, change: str, text: str) -> AttachmentMessage:
        return AttachmentMessage(uuid=self.uuid(), attachment={
            "type": kind, "path": str(path), "name": _shown(path, self.workspace), "change": change,
            "text": f"<system-reminder>\n{text}\n</system-reminder>"})

    def _read_nested(self, entries: list[tuple[Path, Any, Path]], seen: set[Path]) -> list[MemoryFile]:
        files: list[MemoryFile] = []
        for path, scope, tree in entries:
            files += read_with_imports(path, scope, tree, seen=seen | {file.path for file in files})
        return files

    def _notices_of(self, files: list[MemoryFile]) -> list[SystemMessage]:
        out = []
        for file in files:
            if file.notice and file.notice not in self.told:
                self.told.add(file.notice)
                out.append(self._notice("memory_file_skipped", file.notice))
        return out

    def _notice(self, subtype: str, said: str | None) -> SystemMessage:
        return SystemMessage(uuid=self.uuid(), subtype=subtype, content=said or "", level="warning")


def changed_file_text(path: Path, workspace: Path | None = None, before: str | None = None) -> str:
    """What the model is told about a file it read (as ``before``; None: not kept) that changed since: deleted,
    or its changed lines (``file_notices``); a binary or unreadable file is named, never shown."""
    return notices([_change(path, before, workspace)], budget=10**9)[0].text


def _text(path: Path) -> str | None:
    """The file's text now (None: missing, unreadable or binary)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return None if b"\0" in data else data.decode("utf-8", errors="replace")


def _change(path: Path, before: str | None, workspace: Path | None) -> Change:
    name = _shown(path, workspace)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return Change(name, before, None)
    except OSError as error:
        return Change(name, before, "", problem=f"it can no longer be read ({error.strerror})")
    if b"\0" in data:
        return Change(name, before, "", problem="it is binary now")
    return Change(name, before, data.decode("utf-8", errors="replace"))


def _shown(path: Path, workspace: Path | None) -> str:
    if workspace is not None:
        try:
            return str(Path(path).relative_to(Path(workspace).resolve()))
        except ValueError:
            pass
    return str(path)


class QueuedSent(NamedTuple):
    """Where one queued text went (``queued_input_sent``).

    ``prompt``: the text as typed; ``uuid``: its ``queued_command`` attachment; ``via``: ``"phase 5"`` (drained
    after a tool turn, a member of checkpoint ``added_at``'s ``attachments``) or ``"before the prompt"`` (left
    queued by an earlier ending, put in front of this run's prompt: an event of checkpoint 0); ``checkpoint``:
    the index of the first checkpoint whose ``messages_for_query`` (its request) holds it, or None when the run
    ended before another request (it is in the history: the next prompt's request carries it).
    """

    prompt: str
    uuid: str
    via: Literal["phase 5", "before the prompt"]
    added_at: int
    checkpoint: int | None


def queued_input_sent(trace: Any) -> list[QueuedSent]:
    """Each ``queued_command`` attachment a run's ``Trace`` recorded, in the order it was added, with the request
    (checkpoint) that carried it. Pure; reads a live or loaded trace."""
    out: list[QueuedSent] = []
    for point in trace.checkpoints:
        phase5 = set(point.attachments)
        events = [e["uuid"] for e in point.events if e.get("type") == "attachment" and "uuid" in e]
        for uuid in dict.fromkeys([*events, *point.attachments]):
            message = trace.messages.get(uuid)
            if message is None or getattr(message, "attachment", {}).get("type") != "queued_command":
                continue
            sent = next((p.index for p in trace.checkpoints[point.index:] if uuid in set(p.messages_for_query)),
                        None)
            out.append(QueuedSent(str(message.attachment.get("prompt", "")), uuid,
                                  "phase 5" if uuid in phase5 else "before the prompt", point.index, sent))
    return out
