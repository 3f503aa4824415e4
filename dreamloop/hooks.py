"""Hooks: your code at fixed points of the loop, able to change what happens next.

Owns the five hook events (``user_prompt_submit``, ``pre_tool_use``,
``post_tool_use``, ``pre_compact``, ``stop``), their input and decision (one
pydantic model each), the two kinds of hook that share one contract (a Python
callable; a ``type: command`` hook from a settings file, the kind ``dreamloop compare``
gave Claude Code 2.1.332 in ``hook_pre_tool_use_deny``), how the
decisions of several matching hooks combine, and one record per hook run. A
settings file's shape is ``hook_settings``'s and a command's process
``tools.process``'s. It knows nothing about the loop's State or how a tool runs:
``run_tools()``, ``query()`` and ``QueryEngine`` call in at their phase and apply
the decision.

Command hooks follow Claude Code's hooks reference (code.claude.com/docs/en/hooks)
as published on 2025-11-24 (the Claude Code 2.0 series), in dreamloop's design; in the five
``hook_*`` scenarios (``hook_pre_tool_use_exit_2`` to ``hook_stop_exit_2_once``) ``dreamloop run`` and Claude
Code 2.1.332 ran the same settings to the same outcome. In short: the event as JSON on
stdin, ``CLAUDE_PROJECT_DIR`` set, a 60 s default timeout, matching hooks run in
parallel, identical commands run once. Exit 0: go on, and JSON on stdout may
carry a decision (``decision``/``reason``, ``hookSpecificOutput.permissionDecision``
/ ``permissionDecisionReason`` / ``updatedInput`` / ``additionalContext``,
``continue: false`` + ``stopReason``, ``systemMessage``); plain stdout is shown to
the person, except for ``UserPromptSubmit`` where it is context for the model.
Exit 2: a blocking error, stderr says why (JSON is not read); what it blocks
depends on the event (``EXIT_2``). Any other exit: a non-blocking error shown to
the person.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import re
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, ClassVar, Literal, Mapping, Union

from pydantic import AliasChoices, AliasPath, BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import HookError
from .hook_settings import read_settings_hooks
from .messages import AttachmentMessage, SystemMessage, new_uuid, user_message
from .tools.environment import command_environment, redact
from .tools.permissions import Allow, Ask, Deny
from .tools.process import run_command

__all__ = [
    "DECISIONS",
    "EVENT_NAMES",
    "EXIT_2",
    "INPUTS",
    "CommandHook",
    "HookDecision",
    "HookEntry",
    "HookEvent",
    "HookInput",
    "HookOutcome",
    "Hooks",
    "PostToolUseDecision",
    "PostToolUseInput",
    "PreCompactDecision",
    "PreCompactInput",
    "PreToolUseDecision",
    "PreToolUseInput",
    "PromptCheck",
    "StopCheck",
    "StopDecision",
    "StopInput",
    "UserPromptSubmitDecision",
    "UserPromptSubmitInput",
    "combine",
    "describe_record",
    "hook_env",
    "load_hooks",
    "matches",
    "permission_from_hook",
    "post_tool_use_context",
    "run_hooks",
    "run_pre_compact_hooks",
    "run_stop_hooks",
    "stop_feedback",
    "stop_verdict",
    "submit_prompt",
]

HookEvent = Literal["user_prompt_submit", "pre_tool_use", "post_tool_use", "pre_compact", "stop"]
"""The events dreamloop runs hooks for (their settings-file names in ``EVENT_NAMES``).

* ``user_prompt_submit``: a prompt was submitted, before it is added and the loop starts.
* ``pre_tool_use``: a call's input is valid, before the permission decision.
* ``post_tool_use``: a tool ran and returned its result.
* ``pre_compact``: before the context pipeline compacts the history.
* ``stop``: the model asked for no tools; the loop is about to end.
"""

EVENT_NAMES: dict[str, str] = {
    "user_prompt_submit": "UserPromptSubmit",
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "pre_compact": "PreCompact",
    "stop": "Stop",
}
"""dreamloop's event name → the settings-file key and ``hook_event_name`` (dreamloop's design, after Claude Code's
published hooks reference)."""

MAX_OUTPUT_CHARS = 30_000
"""Characters of a command hook's stdout (and of its stderr) kept; the rest is counted, not stored."""

DEFAULT_TIMEOUT_S = 60.0
"""A command hook's timeout when neither the hook nor ``Hooks`` sets one (the reference's default)."""


# ---------------------------------------------------------------------------
# Inputs: what a hook is told (a command hook gets exactly this JSON on stdin)


class HookInput(BaseModel):
    """The fields every event's input has (the common hook input of the hooks reference).

    * ``session_id``: the session (``QueryEngine.session_id``); ``transcript_path``: its JSONL, or "".
    * ``cwd``: the workspace (the command's working directory).
    * ``permission_mode``: ``default`` | ``acceptEdits`` | ``bypassPermissions`` (the reference's spelling).
    * ``hook_event_name``: ``PreToolUse``, ``Stop``, ... (``EVENT_NAMES``).
    """

    model_config = ConfigDict(frozen=True)
    event: ClassVar[str]

    session_id: str = "dreamloop-session"
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = "default"
    hook_event_name: str


class UserPromptSubmitInput(HookInput):
    """``user_prompt_submit``: ``prompt``, the text the person submitted."""

    event: ClassVar[str] = "user_prompt_submit"
    hook_event_name: Literal["UserPromptSubmit"] = "UserPromptSubmit"
    prompt: str


class PreToolUseInput(HookInput):
    """``pre_tool_use``: ``tool_name``, ``tool_input`` (validated, as a dict), ``tool_use_id``."""

    event: ClassVar[str] = "pre_tool_use"
    hook_event_name: Literal["PreToolUse"] = "PreToolUse"
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str


class PostToolUseInput(HookInput):
    """``post_tool_use``: the call as above plus ``tool_response``, the tool_result's content
    (a string or content blocks) and ``is_error``."""

    event: ClassVar[str] = "post_tool_use"
    hook_event_name: Literal["PostToolUse"] = "PostToolUse"
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str
    tool_response: Any
    is_error: bool = False


class PreCompactInput(HookInput):
    """``pre_compact``: ``trigger`` (``manual`` | ``auto``) and ``custom_instructions`` (manual only)."""

    event: ClassVar[str] = "pre_compact"
    hook_event_name: Literal["PreCompact"] = "PreCompact"
    trigger: Literal["manual", "auto"] = "auto"
    custom_instructions: str = ""


class StopInput(HookInput):
    """``stop``: ``stop_hook_active`` is True while the model is answering an earlier stop hook's
    feedback (``State.stop_hook_active``): check it, or a hook that always blocks never lets the loop end."""

    event: ClassVar[str] = "stop"
    hook_event_name: Literal["Stop"] = "Stop"
    stop_hook_active: bool = False


INPUTS: dict[str, type[HookInput]] = {cls.event: cls for cls in (
    UserPromptSubmitInput, PreToolUseInput, PostToolUseInput, PreCompactInput, StopInput)}
"""Event → its input model."""


# ---------------------------------------------------------------------------
# Decisions: what a hook may answer. A Python hook returns one (or None, or a dict
# shaped like the JSON); a command hook's stdout JSON is validated into one.


def _alias(*names: str | tuple[str, ...]) -> AliasChoices:
    """Accept the Python name and the hooks reference's JSON spelling (a tuple is a nested path)."""
    return AliasChoices(*(AliasPath(*name) if isinstance(name, tuple) else name for name in names))


class HookDecision(BaseModel):
    """What any hook may answer (the hooks reference's common JSON fields); None everywhere = no opinion.

    * ``continue_`` (JSON ``continue``): False stops the run after the hooks ran; it wins over any block.
    * ``stop_reason`` (``stopReason``): why, shown to the person (never to the model).
    * ``system_message`` (``systemMessage``): a note for the person.
    """

    model_config = ConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True, extra="ignore")

    continue_: bool = Field(True, validation_alias=_alias("continue_", "continue"), serialization_alias="continue")
    stop_reason: str | None = Field(None, validation_alias=_alias("stop_reason", "stopReason"))
    system_message: str | None = Field(None, validation_alias=_alias("system_message", "systemMessage"))

    def said(self) -> dict[str, Any]:
        """The fields this decision sets, as JSON (for records and reprs)."""
        return self.model_dump(mode="json", by_alias=True, exclude_defaults=True)


class PreToolUseDecision(HookDecision):
    """``pre_tool_use``: allow (skips the permission prompt), deny (the call never runs; ``reason``
    is its ``is_error`` tool_result), ask (the person decides; ``reason`` is the question), or change
    the input (``updated_input``, validated again).

    JSON: ``hookSpecificOutput.permissionDecision`` / ``permissionDecisionReason`` /
    ``updatedInput``; the deprecated ``decision: approve | block`` means allow / deny.
    """

    decision: Literal["allow", "deny", "ask"] | None = Field(
        None, validation_alias=_alias(("hookSpecificOutput", "permissionDecision"), "decision"))
    reason: str | None = Field(
        None, validation_alias=_alias(("hookSpecificOutput", "permissionDecisionReason"), "reason"))
    updated_input: dict[str, Any] | None = Field(
        None, validation_alias=_alias("updated_input", ("hookSpecificOutput", "updatedInput")))

    @field_validator("decision", mode="before")
    @classmethod
    def _deprecated_names(cls, value: Any) -> Any:
        return {"approve": "allow", "block": "deny"}.get(value, value)


class PostToolUseDecision(HookDecision):
    """``post_tool_use`` (the call already ran): ``decision="block"`` sends ``reason`` to the model as
    feedback; ``additional_context`` (``hookSpecificOutput.additionalContext``) is context for the model.
    Both reach it in the same request as the call's result."""

    decision: Literal["block"] | None = None
    reason: str | None = None
    additional_context: str | None = Field(
        None, validation_alias=_alias("additional_context", ("hookSpecificOutput", "additionalContext")))


class UserPromptSubmitDecision(HookDecision):
    """``user_prompt_submit``: ``decision="block"`` erases the prompt (no run; ``reason`` is shown to
    the person only); ``additional_context`` goes to the model with the prompt."""

    decision: Literal["block"] | None = None
    reason: str | None = None
    additional_context: str | None = Field(
        None, validation_alias=_alias("additional_context", ("hookSpecificOutput", "additionalContext")))


class StopDecision(HookDecision):
    """``stop``: ``decision="block"`` keeps the loop going, with ``reason`` as the model's feedback;
    ``continue_=False`` prevents continuation (Terminal ``stop_hook_prevented``); None lets it end."""

    decision: Literal["block"] | None = None
    reason: str | None = None


class PreCompactDecision(HookDecision):
    """``pre_compact``: only the common fields; the compaction goes on (a stop ends the run)."""


DECISIONS: dict[str, type[HookDecision]] = {
    "user_prompt_submit": UserPromptSubmitDecision,
    "pre_tool_use": PreToolUseDecision,
    "post_tool_use": PostToolUseDecision,
    "pre_compact": PreCompactDecision,
    "stop": StopDecision,
}
"""Event → its decision model."""


def _exit_2(event: str, hook_name: str, label: str, stderr: str) -> HookDecision:
    said = stderr.strip() or "No stderr output"
    quoted = f"[{label}]: {said}"  # the reference's "[command]: {stderr}"
    if event == "pre_tool_use":
        return PreToolUseDecision(decision="deny", reason=f"{hook_name} hook error: {quoted}")
    if event == "post_tool_use":
        return PostToolUseDecision(decision="block", reason=quoted)
    if event == "user_prompt_submit":
        return UserPromptSubmitDecision(decision="block", reason=said)
    if event == "stop":
        return StopDecision(decision="block", reason=quoted)
    return PreCompactDecision(system_message=said)


EXIT_2: dict[str, str] = {
    "pre_tool_use": "blocks the call; stderr is its is_error tool_result, for the model",
    "post_tool_use": "the call already ran; stderr goes to the model with its result",
    "user_prompt_submit": "blocks and erases the prompt; stderr is shown to the person only",
    "stop": "blocks stopping; stderr is the model's feedback and the loop goes on",
    "pre_compact": "stderr is shown to the person; the compaction goes on",
}
"""What exit code 2 means per event (the reference's "Exit Code 2 Behavior" table)."""


# ---------------------------------------------------------------------------
# Registering hooks


@dataclass(frozen=True)
class CommandHook:
    """A ``type: command`` hook: ``command`` runs in ``bash -c`` with the event's JSON on stdin.

    ``timeout`` in seconds (None: ``Hooks.timeout``). The tool input never reaches the command
    line, only stdin, so shell metacharacters in it are never interpreted.
    """

    command: str
    timeout: float | None = None


@dataclass(frozen=True)
class UnsupportedHook:
    """A settings-file hook dreamloop cannot run (``type`` other than ``command``).

    Kept, not dropped: each time its event fires it leaves a ``hook_non_blocking_error`` record.
    """

    type: str


HookCallable = Callable[[Any], Union["HookDecision", Mapping[str, Any], None, Awaitable[Any]]]
"""A Python hook: ``fn(input) -> decision | dict | None``, sync (run in a worker thread) or async."""


@dataclass(frozen=True)
class HookEntry:
    """One registered hook: its event, what runs, its matcher and where it came from."""

    event: HookEvent
    hook: HookCallable | CommandHook | UnsupportedHook
    matcher: str | None = None
    source: str = "python"

    @property
    def label(self) -> str:
        """How records and feedback name the hook: the command, or the function's name."""
        if isinstance(self.hook, CommandHook):
            return self.hook.command
        if isinstance(self.hook, UnsupportedHook):
            return f"<{self.hook.type} hook>"
        return getattr(self.hook, "__qualname__", None) or repr(self.hook)


_PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


def matches(matcher: str | None, value: str | None) -> bool:
    """Does ``matcher`` select ``value`` (a tool name, or ``manual``/``auto`` for ``pre_compact``)?

    None, ``""`` and ``*`` match everything; letters, digits, ``_`` and ``|`` are exact names
    (``Edit|Write``); anything else is a regular expression searched in the value (``Notebook.*``), as the
    hooks reference describes. Events without a matcher (``stop``, ``user_prompt_submit``) pass
    ``value=None``.
    """
    if not matcher or matcher == "*" or value is None:
        return True
    if _PLAIN_MATCHER.fullmatch(matcher):
        return value in matcher.split("|")
    return re.search(matcher, value) is not None


class Hooks:
    """The hooks of a run, by event: the switch ``QueryParams(hooks=...)`` (None: no hooks run).

    ``add(event, hook, matcher=...)`` registers a Python callable or a ``CommandHook``;
    ``load_hooks(path)`` reads the hooks of a settings file. Options:

    * ``max_stop_hook_blocks``: the runaway guard; when the stop hooks block this many times
      in one run, the next block ends it (Terminal ``stop_hook_prevented``). dreamloop's own.
    * ``timeout``: a command hook's default timeout in seconds (60, as the hooks reference gives it).
    * ``session_id``, ``transcript_path``: what hook inputs say (``QueryEngine`` fills its own in).

    Example::

        hooks = Hooks()
        hooks.add("pre_tool_use", no_rm_rf, matcher="Bash")
        hooks.add("stop", CommandHook("python3 -m unittest || exit 2"))
        run = query(QueryParams(..., hooks=hooks))
    """

    def __init__(self, *, max_stop_hook_blocks: int = 8, timeout: float = DEFAULT_TIMEOUT_S,
                 session_id: str = "dreamloop-session", transcript_path: str = "") -> None:
        if max_stop_hook_blocks < 0:
            raise ValueError("max_stop_hook_blocks must be >= 0")
        self.entries: list[HookEntry] = []
        self.unsupported: list[str] = []
        """Settings-file entries that never run, said in words (also warned about when loaded)."""
        self.max_stop_hook_blocks = max_stop_hook_blocks
        self.timeout = timeout
        self.session_id = session_id
        self.transcript_path = transcript_path

    def add(self, event: HookEvent, hook: HookCallable | CommandHook | str, *, matcher: str | None = None,
            source: str = "python") -> "Hooks":
        """Register ``hook`` for ``event`` (a string is a ``CommandHook``); returns ``self``.

        Raises ``ValueError`` for an unknown event or a matcher that is not a valid regex,
        ``TypeError`` for a hook that is neither callable nor a command.
        """
        if event not in EVENT_NAMES:
            raise ValueError(f"unknown hook event {event!r}; one of {', '.join(EVENT_NAMES)}")
        if isinstance(hook, str):
            hook = CommandHook(hook)
        if not isinstance(hook, (CommandHook, UnsupportedHook)) and not callable(hook):
            raise TypeError(f"a hook is a callable or a CommandHook, not {type(hook).__name__}")
        if matcher and not _PLAIN_MATCHER.fullmatch(matcher) and matcher != "*":
            try:
                re.compile(matcher)
            except re.error as error:
                raise ValueError(f"matcher {matcher!r} is not a valid regular expression: {error}") from None
        self.entries.append(HookEntry(event, hook, matcher, source))
        return self

    def matching(self, event: str, value: str | None = None) -> list[HookEntry]:
        """The entries of ``event`` whose matcher selects ``value``, in order; a command listed
        twice runs once (the reference's deduplication)."""
        found, commands = [], set()
        for entry in self.entries:
            if entry.event != event or not matches(entry.matcher, value):
                continue
            if isinstance(entry.hook, CommandHook):
                if entry.hook.command in commands:
                    continue
                commands.add(entry.hook.command)
            found.append(entry)
        return found

    def for_session(self, session_id: str, transcript_path: str | Path | None) -> "Hooks":
        """A copy whose inputs name this session (the entries are shared)."""
        copy = Hooks(max_stop_hook_blocks=self.max_stop_hook_blocks, timeout=self.timeout,
                     session_id=session_id, transcript_path=str(transcript_path or ""))
        copy.entries, copy.unsupported = self.entries, self.unsupported
        return copy

    def input(self, event: str, *, workspace: Path | str | None = None, permission_mode: str = "default",
              **fields: Any) -> HookInput:
        """The input model of ``event`` with the common fields filled in from this run."""
        return INPUTS[event](
            session_id=self.session_id, transcript_path=self.transcript_path,
            cwd=str(workspace) if workspace else os.getcwd(),
            permission_mode=_CLAUDE_MODES.get(permission_mode, permission_mode), **fields)

    def __repr__(self) -> str:
        counts = {}
        for entry in self.entries:
            counts[entry.event] = counts.get(entry.event, 0) + 1
        shown = ", ".join(f"{event}={n}" for event, n in counts.items()) or "none"
        extra = f", unsupported={len(self.unsupported)}" if self.unsupported else ""
        return f"Hooks({shown}, max_stop_hook_blocks={self.max_stop_hook_blocks}{extra})"


_CLAUDE_MODES = {"accept-edits": "acceptEdits", "bypass": "bypassPermissions"}


# ---------------------------------------------------------------------------
# Claude Code settings files


class UnsupportedHookWarning(UserWarning):
    """A settings file holds hooks dreamloop does not run (listed in ``Hooks.unsupported``)."""


_SETTINGS_EVENTS = {name: event for event, name in EVENT_NAMES.items()}


def load_hooks(*paths: str | Path, hooks: Hooks | None = None) -> Hooks:
    """The hooks of one or more settings files (``{"hooks": {"PreToolUse": [...]}}``; ``hook_settings``).

    Several files merge in order (user, project, local, as the hooks reference orders them); pass
    ``hooks`` to add to an existing ``Hooks``. Only ``type: command`` runs: other types, and events
    dreamloop has no phase for (``SessionStart``, ``Notification``, ...), are listed in
    ``hooks.unsupported`` and warned about (``UnsupportedHookWarning``), never dropped silently.
    Raises ``FileNotFoundError``, or ``ValueError`` naming the file for bad JSON, a bad shape, a bad
    matcher, a directory, an unreadable file or bytes that are not UTF-8.
    """
    hooks = hooks if hooks is not None else Hooks()
    for path in map(Path, paths):
        found, unsupported = read_settings_hooks(path, events=_SETTINGS_EVENTS)
        hooks.unsupported += unsupported
        for spec in found:
            hook = CommandHook(spec.command, spec.timeout) if spec.runs else UnsupportedHook(spec.type)
            try:
                hooks.add(_SETTINGS_EVENTS[spec.event], hook, matcher=spec.matcher, source=str(path))
            except ValueError as error:  # a bad matcher: say which file holds it
                raise ValueError(f"{path}: {spec.event}: {error}") from None
    if hooks.unsupported:
        warnings.warn("these hooks will not run: " + "; ".join(hooks.unsupported), UnsupportedHookWarning,
                      stacklevel=2)
    return hooks


# ---------------------------------------------------------------------------
# Running the matching hooks of one event


@dataclass(frozen=True)
class HookOutcome:
    """What the matching hooks of one event said: the combined decision and one record per run.

    ``records`` are ``AttachmentMessage``s, UI only, in registration order, with ``attachment.type``
    ``hook_success`` (exit 0 / the function returned), ``hook_blocking_error`` (exit 2) or
    ``hook_non_blocking_error`` (another exit, a timeout, bad JSON, an unsupported hook), and the
    fields ``hookEvent``, ``hookName``, ``toolUseID``, ``matcher``, ``decision``, ``content``,
    ``durationMs``; a command hook's also ``command``, ``exitCode``, ``stdout``, ``stderr``. When a
    hook stopped the run, one more record: ``hook_stopped_continuation`` (``stopReason``).
    """

    event: str
    hook_name: str
    decision: HookDecision
    records: tuple[AttachmentMessage, ...] = ()

    @property
    def stopped(self) -> bool:
        """A hook said ``continue: false``."""
        return not self.decision.continue_

    @property
    def stop_reason(self) -> str:
        return self.decision.stop_reason or f"{self.hook_name} hook stopped the run"


async def run_hooks(hooks: Hooks, input: HookInput, *, value: str | None = None, tool_use_id: str | None = None,
                    uuid: Callable[[], str] = new_uuid) -> HookOutcome:
    """Run every hook of ``input``'s event whose matcher selects ``value``, concurrently; combine.

    ``value``: the tool name (``pre_tool_use``/``post_tool_use``) or the trigger (``pre_compact``);
    ``tool_use_id`` is noted in the records. No matching hook: the empty decision, no records.
    A Python hook that raises raises ``HookError`` (your bug stays a bug, with its traceback).
    """
    event = input.event
    hook_name = EVENT_NAMES[event] + (f":{value}" if value else "")
    entries = hooks.matching(event, value)
    runs = [asyncio.ensure_future(_run_one(entry, input, hooks, hook_name)) for entry in entries]
    try:
        ran = await asyncio.gather(*runs)
    finally:  # one hook raised, or this was cancelled: the others are stopped and awaited, so none outlives it
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)
    outcome = HookOutcome(event, hook_name, combine(event, [d for d, _ in ran]))
    records = [AttachmentMessage(uuid=uuid(), attachment={**record, "toolUseID": tool_use_id}) for _, record in ran]
    if outcome.stopped:
        records.append(AttachmentMessage(uuid=uuid(), attachment={
            "type": "hook_stopped_continuation", "hookEvent": EVENT_NAMES[event], "hookName": hook_name,
            "toolUseID": tool_use_id, "stopReason": outcome.stop_reason}))
    return replace(outcome, records=tuple(records))


_RANK = {None: 0, "allow": 1, "ask": 2, "deny": 3}


def combine(event: str, decisions: list[HookDecision]) -> HookDecision:
    """The decision of several hooks of one event, the most restrictive winning (pure).

    ``continue: false`` from any hook stops (their ``stop_reason``s joined); for ``pre_tool_use``
    deny beats ask beats allow (the winners' reasons joined; ``updated_input`` from the first hook
    that gave one); for the other events one ``block`` blocks (reasons joined); every
    ``additional_context`` and ``system_message`` is kept, in registration order.
    """
    model = DECISIONS[event]
    joined = lambda values: "\n".join(v for v in values if v) or None  # noqa: E731
    common: dict[str, Any] = {
        "continue_": all(d.continue_ for d in decisions),
        "stop_reason": joined(d.stop_reason for d in decisions if not d.continue_),
        "system_message": joined(d.system_message for d in decisions),
    }
    if event == "pre_tool_use":
        winner = max((d.decision for d in decisions), key=_RANK.__getitem__, default=None)
        updated = next((d.updated_input for d in decisions if d.updated_input is not None), None)
        return model(**common, decision=winner, updated_input=updated,
                     reason=joined(d.reason for d in decisions if d.decision == winner))
    if model is PreCompactDecision:
        return model(**common)
    blocked = [d for d in decisions if d.decision == "block"]
    extra = {"additional_context": joined(d.additional_context for d in decisions)} \
        if "additional_context" in model.model_fields else {}
    return model(**common, **extra, decision="block" if blocked else None, reason=joined(d.reason for d in blocked))


async def _run_one(entry: HookEntry, input: HookInput, hooks: Hooks, hook_name: str) -> tuple[HookDecision, dict]:
    """Run one hook: (its decision, its record; ``run_hooks`` fills in ``toolUseID``)."""
    event, model = input.event, DECISIONS[input.event]
    started = time.monotonic()
    details: dict[str, Any]
    if isinstance(entry.hook, UnsupportedHook):
        kind, decision = "hook_non_blocking_error", model()
        content = (f"{entry.hook.type!r} hooks are not supported (from {entry.source}); "
                   "only type 'command' runs in dreamloop")
        details = {"unsupported": entry.label}
    elif isinstance(entry.hook, CommandHook):
        timeout = entry.hook.timeout or hooks.timeout
        code, stdout, stderr = await _run_command(entry.hook.command, input, timeout)
        stdout, stderr = redact(stdout), redact(stderr)  # a hook can read the key elsewhere (/proc/$PPID/environ)
        kind, decision, content = _read_command(event, hook_name, entry.label, code, stdout, stderr, timeout)
        details = {"command": entry.hook.command, "exitCode": code, "stdout": stdout, "stderr": stderr}
    else:
        kind, decision = "hook_success", await _call_python(entry, input, model)
        content, details = _summary(decision), {"callable": entry.label}
    record = {"type": kind, "hookEvent": EVENT_NAMES[event], "hookName": hook_name, "toolUseID": None,
              "matcher": entry.matcher, "decision": decision.said(), "content": content,
              "durationMs": round((time.monotonic() - started) * 1000), **details}
    return decision, record


async def _call_python(entry: HookEntry, input: HookInput, model: type[HookDecision]) -> HookDecision:
    fn = entry.hook
    try:
        value = await fn(input) if inspect.iscoroutinefunction(fn) else await asyncio.to_thread(fn, input)
        if inspect.isawaitable(value):
            value = await value
        if value is None:
            return model()
        if isinstance(value, model):
            return value
        if isinstance(value, Mapping):
            return model.model_validate(value)
        raise TypeError(f"it returned {type(value).__name__}; a {input.event} hook returns "
                        f"{model.__name__}(...), a dict shaped like its JSON, or None")
    except Exception as exc:
        raise HookError(f"{input.event} hook {entry.label} raised {type(exc).__name__}: {exc}") from exc


def _summary(decision: HookDecision) -> str:
    said = decision.said()
    return json.dumps(said, ensure_ascii=False) if said else "no opinion"


def _read_command(event: str, hook_name: str, label: str, code: int | None, stdout: str, stderr: str,
                  timeout: float) -> tuple[str, HookDecision, str]:
    """(record type, decision, what the person is told) from how a command hook ended."""
    model = DECISIONS[event]
    if code is None:
        return "hook_non_blocking_error", model(), f"timed out after {timeout:g}s; its process group was killed"
    if code == 2:
        decision = _exit_2(event, hook_name, label, stderr)
        return "hook_blocking_error", decision, f"Blocking error (exit 2): {stderr.strip() or 'No stderr output'}"
    if code != 0:
        return ("hook_non_blocking_error", model(),
                f"Failed with non-blocking status code {code}: {stderr.strip() or 'No stderr output'}")
    text = stdout.strip()
    if text.startswith("{"):
        try:
            decision = model.model_validate_json(text)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            return "hook_non_blocking_error", model(), f"Bad JSON on stdout ({first['msg']}): {text[:200]}"
        return "hook_success", decision, _summary(decision)
    if event == "user_prompt_submit" and text:  # plain stdout is context, for this event only
        return "hook_success", model(additional_context=text), text
    return "hook_success", model(), text or "no output"


def hook_env(workspace: Path | str | None) -> dict[str, str]:
    """The environment of a command hook: ours without the kit's credentials, plus ``CLAUDE_PROJECT_DIR``.

    As for the Bash tool (``tools.command_environment``), ``ANTHROPIC_API_KEY`` and
    ``ANTHROPIC_AUTH_TOKEN`` are removed, so a hook command cannot read the key the loop talks to
    the API with.
    """
    env = command_environment()
    env["CLAUDE_PROJECT_DIR"] = str(workspace or os.getcwd())
    return env


async def _run_command(command: str, input: HookInput, timeout: float) -> tuple[int | None, str, str]:
    """(exit code or None on timeout, stdout, stderr) of ``bash -c command`` fed ``input`` on stdin.

    Its own process group, killed on timeout, on cancellation and when it ends (background jobs
    don't outlive it); each stream kept to ``MAX_OUTPUT_CHARS`` (``tools.process.run_command``). A
    command that cannot be started at all ends as exit code 126 (a non-blocking error), as a shell
    reports it.
    """
    cwd = input.cwd or os.getcwd()
    try:
        done = await run_command(command, cwd=cwd, env=hook_env(cwd), timeout_s=timeout, limit=MAX_OUTPUT_CHARS,
                                 stdin=input.model_dump_json().encode(), merge_stderr=False)
    except OSError as error:  # no bash, or the workspace is gone: the shell's "cannot execute"
        return 126, "", f"could not start the hook: {error}"
    return done.code, done.stdout, done.stderr


def describe_record(attachment: Mapping[str, Any], width: int = 160) -> str:
    """One line for a person about a hook record or a ``hook_additional_context`` attachment.

    ``PreToolUse:Bash hook no-rm.sh (exit 2) → deny: ...``; no times or ids, so it prints stably.
    """
    kind, name = attachment.get("type"), attachment.get("hookName", "?")
    if kind == "hook_additional_context":
        line = f"{name} → to the model: " + " / ".join(map(str, attachment.get("content") or []))
    elif kind == "hook_stopped_continuation":
        line = f"{name} hook stopped the run: {attachment.get('stopReason')}"
    else:
        who = str(attachment.get("command") or attachment.get("callable") or attachment.get("unsupported"))
        who = who if len(who) <= 40 else who[:39] + "…"
        code = attachment.get("exitCode")
        how = ("returned" if "callable" in attachment else "not run" if "unsupported" in attachment
               else f"exit {code}" if code is not None else "timed out")
        if kind == "hook_non_blocking_error":
            line = f"{name} hook {who} ({how}, non-blocking error): {attachment.get('content')}"
        else:
            decision = attachment.get("decision") or {}
            verdict = ("stop" if decision.get("continue") is False else decision.get("decision")
                       or ("context" if decision.get("additional_context") else "no opinion"))
            said = decision.get("reason") or decision.get("additional_context") or decision.get("stop_reason") or ""
            line = f"{name} hook {who} ({how}) → {verdict}" + (f": {said}" if said else "")
    line = " ".join(line.split())
    return line if len(line) <= width else line[: width - 1] + "…"


# ---------------------------------------------------------------------------
# What each call site does with an outcome


def permission_from_hook(outcome: HookOutcome) -> Allow | Deny | Ask | None:
    """A ``pre_tool_use`` outcome as a permission decision: allow skips the prompt, deny never runs
    the call (its reason is the result), ask goes to the person; None leaves it to ``can_use_tool``."""
    decision = outcome.decision
    assert isinstance(decision, PreToolUseDecision)
    if decision.decision == "deny":
        return Deny(decision.reason or f"{outcome.hook_name} hook denied this tool call")
    if decision.decision == "ask":
        return Ask(decision.reason or f"{outcome.hook_name} hook asks before this call")
    if decision.decision == "allow":
        return Allow()
    return None


def post_tool_use_context(outcome: HookOutcome, uuid: Callable[[], str] = new_uuid,
                          tool_use_id: str | None = None, in_tool_result: bool = False) -> AttachmentMessage | None:
    """What a ``post_tool_use`` outcome tells the model, as one ``hook_additional_context`` attachment
    (its ``content`` lists each line; the model reads it with the call's result), or None.

    ``in_tool_result``: the lines also went inside the call's ``tool_result`` (``run_tool_use`` puts them
    there, as Claude Code 2.1.332 did in ``hook_post_tool_use_context``); the attachment says so
    (``inToolResult``) and is then a record for the person, never sent a second time."""
    decision = outcome.decision
    assert isinstance(decision, PostToolUseDecision)
    lines = []
    if decision.decision == "block":
        lines.append(f"{outcome.hook_name} hook blocking error: {decision.reason or 'blocked'}")
    if decision.additional_context:
        lines.append(f"{outcome.hook_name} hook additional context: {decision.additional_context}")
    return _context(outcome, lines, uuid, tool_use_id, in_tool_result)


def _context(outcome: HookOutcome, lines: list[str], uuid: Callable[[], str],
             tool_use_id: str | None, in_tool_result: bool = False) -> AttachmentMessage | None:
    if not lines:
        return None
    return AttachmentMessage(uuid=uuid(), attachment={
        "type": "hook_additional_context", "hookEvent": EVENT_NAMES[outcome.event], "hookName": outcome.hook_name,
        "toolUseID": tool_use_id, "content": lines, **({"inToolResult": True} if in_tool_result else {})})


@dataclass(frozen=True)
class PromptCheck:
    """What the ``user_prompt_submit`` hooks said about a prompt (``submit_prompt``).

    ``blocked``: the prompt is erased and no run starts; ``messages``: what to add after the
    prompt when it goes on (records, then a ``hook_additional_context`` attachment), or, when
    blocked, the records and a ``SystemMessage`` (``user_prompt_blocked``) telling the person why.
    """

    blocked: bool
    messages: tuple[Any, ...] = ()


async def submit_prompt(hooks: Hooks, prompt: str | list[dict[str, Any]], *, workspace: Path | None = None,
                        permission_mode: str = "default", uuid: Callable[[], str] = new_uuid) -> PromptCheck:
    """Run the ``user_prompt_submit`` hooks on a prompt (``QueryEngine.submit_message`` and
    ``dreamloop run`` call this before the loop starts). A block or a stop erases the prompt."""
    text = prompt if isinstance(prompt, str) else "\n".join(b.get("text", "") for b in prompt if b.get("type") == "text")
    outcome = await run_hooks(hooks, hooks.input("user_prompt_submit", workspace=workspace,
                                                 permission_mode=permission_mode, prompt=text), uuid=uuid)
    decision = outcome.decision
    assert isinstance(decision, UserPromptSubmitDecision)
    if decision.decision == "block" or outcome.stopped:
        why = decision.reason if decision.decision == "block" else outcome.stop_reason
        notice = SystemMessage(uuid=uuid(), subtype="user_prompt_blocked", level="warning",
                               content=f"UserPromptSubmit hook blocked the prompt: {why or 'no reason given'}")
        return PromptCheck(True, (*outcome.records, notice))
    lines = [f"UserPromptSubmit hook additional context: {decision.additional_context}"] \
        if decision.additional_context else []
    context = _context(outcome, lines, uuid, None)
    return PromptCheck(False, (*outcome.records, *([context] if context else [])))


StopVerdict = Literal["stop", "block", "prevent", "guard"]
"""What the loop does after the stop hooks: end ``completed``; continue ``stop_hook_blocking``;
end ``stop_hook_prevented`` because a hook said so; end ``stop_hook_prevented`` because the guard fired."""


def stop_verdict(decision: StopDecision, blocks_so_far: int, max_blocks: int) -> StopVerdict:
    """The stop hooks' combined decision + how often they blocked in this run → what the loop does (pure).

    ``continue: false`` wins over a block (the reference); a block after ``max_blocks`` blocks in a
    row is the runaway guard's cue.
    """
    if not decision.continue_:
        return "prevent"
    if decision.decision != "block":
        return "stop"
    return "guard" if blocks_so_far >= max_blocks else "block"


def stop_feedback(reason: str | None) -> str:
    """The meta user message a blocking stop hook sends the model: its reason, as one
    ``<system-reminder>`` block (where Claude Code 2.1.332 puts it: scenario ``hook_stop_exit_2_once``;
    the words are dreamloop's)."""
    said = reason or "(the hook gave no reason)"
    return f"<system-reminder>\nA Stop hook kept the turn from ending. It said:\n{said}\n</system-reminder>"


@dataclass(frozen=True)
class StopCheck:
    """The end-of-turn stop hooks, decided (the conversation-loop text's phase 4, when no tool was asked for).

    ``verdict``: see ``StopVerdict``; ``messages``: what to yield and keep, in order: the records,
    then for ``block`` the feedback (a meta ``UserMessage``, ``stop_feedback(reason)``, which the
    model reads next), for ``prevent`` / ``guard`` a ``SystemMessage`` (``stop_hook_prevented`` /
    ``stop_hook_guard``) telling the person why the run ends.
    """

    verdict: StopVerdict
    messages: tuple[Any, ...] = ()


async def run_stop_hooks(hooks: Hooks, *, stop_hook_active: bool, blocks_so_far: int,
                         workspace: Path | None = None, permission_mode: str = "default",
                         uuid: Callable[[], str] = new_uuid) -> StopCheck:
    """Run the ``stop`` hooks at the end of a turn and decide with ``stop_verdict``."""
    input = hooks.input("stop", workspace=workspace, permission_mode=permission_mode,
                        stop_hook_active=stop_hook_active)
    outcome = await run_hooks(hooks, input, uuid=uuid)
    decision = outcome.decision
    assert isinstance(decision, StopDecision)
    verdict = stop_verdict(decision, blocks_so_far, hooks.max_stop_hook_blocks)
    said: list[Any] = []
    if verdict == "block":
        said.append(user_message(stop_feedback(decision.reason), is_meta=True, uuid=uuid()))
    elif verdict == "prevent":
        said.append(SystemMessage(uuid=uuid(), subtype="stop_hook_prevented", level="warning",
                                  content=f"A Stop hook prevented continuation: {outcome.stop_reason}"))
    elif verdict == "guard":
        said.append(SystemMessage(uuid=uuid(), subtype="stop_hook_guard", level="warning", content=(
            f"Runaway guard: the stop hooks have blocked {blocks_so_far} times in this run "
            f"(Hooks.max_stop_hook_blocks={hooks.max_stop_hook_blocks}), so the run ends here. "
            f"Their last feedback: {decision.reason or '(none)'}")))
    return StopCheck(verdict, (*outcome.records, *said))


async def run_pre_compact_hooks(hooks: Hooks, *, trigger: Literal["manual", "auto"] = "auto",
                                custom_instructions: str = "", workspace: Path | None = None,
                                permission_mode: str = "default", uuid: Callable[[], str] = new_uuid) -> HookOutcome:
    """Run the ``pre_compact`` hooks before a compaction (the context pipeline calls this).

    The compaction goes on whatever they say; their records and ``system_message``s are for the
    person; ``outcome.stopped`` asks the caller to end the run (Terminal ``hook_stopped``).
    """
    input = hooks.input("pre_compact", workspace=workspace, permission_mode=permission_mode,
                        trigger=trigger, custom_instructions=custom_instructions)
    return await run_hooks(hooks, input, value=trigger, uuid=uuid)

