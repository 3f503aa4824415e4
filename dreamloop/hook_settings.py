"""The hooks a settings file lists, read and checked (``hooks.load_hooks`` registers them).

Owns the file's shape, in dreamloop's design after Claude Code's hooks reference (code.claude.com/docs/en/hooks,
as published on 2025-11-24): ``{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
"command": "...", "timeout": 30}]}]}}``, other keys allowed and ignored; which of its hooks dreamloop can run
(``type: command`` with a command, under an event it has); and the errors, which name the file. It knows
nothing of how a hook runs or what it decides. A file of that shape, without ``timeout`` (one ``PreToolUse``
entry, its ``matcher`` ``Edit``, one ``command`` hook), Claude Code 2.1.332 ran to the same outcome in
``hook_pre_tool_use_deny``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Collection

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .jsonl import loads, read_text

__all__ = ["SettingsHook", "read_settings_hooks"]


@dataclass(frozen=True)
class SettingsHook:
    """One hook a settings file lists.

    ``event``: its event as the file spells it (the hooks reference's name, ``PreToolUse``); ``matcher``: its
    group's; ``type``; ``command`` (None if the file gives none); ``timeout`` in seconds (None: the default).
    ``runs``: dreamloop runs it (a ``command`` hook with a command); else it is kept as unsupported.
    """

    event: str
    matcher: str | None
    type: str
    command: str | None = None
    timeout: float | None = None

    @property
    def runs(self) -> bool:
        return self.type == "command" and bool(self.command)


class _Hook(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    command: str | None = None
    timeout: float | None = Field(None, gt=0)


class _Matcher(BaseModel):
    model_config = ConfigDict(extra="allow")
    matcher: str | None = None
    hooks: list[_Hook]


class _Settings(BaseModel):
    model_config = ConfigDict(extra="allow")
    hooks: dict[str, list[_Matcher]] = Field(default_factory=dict)


def read_settings_hooks(path: str | Path, *, events: Collection[str]) -> tuple[list[SettingsHook], list[str]]:
    """``(hooks, unsupported)``: the hooks of the settings file ``path`` under the ``events`` (the hooks
    reference's names) dreamloop has, in file order, and in words, in file order, what of the file never runs: an event
    not in ``events`` (all its hooks), a hook whose ``type`` is not ``command`` or that has no command (such a
    hook is in ``hooks`` too, ``runs`` False, so that its event can say so each time it fires).

    Raises ``FileNotFoundError``, or ``ValueError`` naming the file: bad JSON (with its line and column), a
    bad shape (and where), a directory, an unreadable file, bytes that are not UTF-8.
    """
    path = Path(path)
    text = read_text(path)  # a directory, an unreadable file, bytes that are not UTF-8: named
    try:
        settings = _Settings.model_validate(loads(text))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not a Claude Code settings file (not JSON: {error.msg}, line {error.lineno} "
                         f"column {error.colno})") from None
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        raise ValueError(f"{path}: not a Claude Code settings file ({where}: {first['msg']})") from None
    hooks: list[SettingsHook] = []
    unsupported: list[str] = []
    for name, groups in settings.hooks.items():
        if name not in events:
            unsupported.append(f"{path}: {name} hooks (dreamloop has no {name} event)")
            continue
        for group in groups:
            for spec in group.hooks:
                hook = SettingsHook(name, group.matcher, spec.type, spec.command, spec.timeout)
                if not hook.runs:
                    what = f"type {spec.type!r}" if spec.type != "command" else "a command hook without a command"
                    unsupported.append(f"{path}: {name} {what} (only type 'command' runs)")
                hooks.append(hook)
    return hooks, unsupported
