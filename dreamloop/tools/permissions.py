"""Permission decisions: may this tool call run, and who says so.

Owns the three decisions (``Allow``, ``Deny``, ``Ask``), the permission
modes, the two callback shapes (``CanUseTool``, ``AskUser``),
``decide_permission()``, the one place where they combine, and the command
rules a decision reads (the one shell-syntax rule, the project's test command,
``allow_test_commands``). It knows nothing about how a tool runs or how its
result is delivered; a tool's own default lives in its ``check_permissions()``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Optional, Protocol, Union

from pydantic import BaseModel

from ..language import N_

__all__ = [
    "ASK_REASONS",
    "Allow",
    "Ask",
    "AskUser",
    "CanUseTool",
    "Deny",
    "PERMISSION_MODES",
    "PermissionDecision",
    "PermissionMode",
    "SHELL_EXPANSION",
    "SHELL_SYNTAX",
    "TEST_COMMAND_PREFIXES",
    "allow_test_commands",
    "decide_permission",
    "has_shell_syntax",
    "is_test_command",
]

PermissionMode = Literal["default", "accept-edits", "bypass"]
"""How much runs without asking (dreamloop's names; a session file's ``permissionMode`` field is the like of it).

* ``default``: read-only calls run; file writes and non-read-only Bash ask.
* ``accept-edits`` (``acceptEdits``): file edits inside the workspace run too; Bash still asks.
* ``bypass`` (``bypassPermissions``): everything runs. Path confinement still holds.
"""

PERMISSION_MODES: tuple[str, ...] = ("default", "accept-edits", "bypass")


@dataclass(frozen=True)
class Allow:
    """Run the call. ``updated_input`` (a dict), if given, replaces the model's input.

    Mirrors ``{behavior: 'allow', updatedInput}``; the replacement is
    validated again, so a hook or a person can rewrite a command safely.
    """

    updated_input: dict[str, Any] | None = None
    behavior: Literal["allow"] = field(default="allow", init=False)


@dataclass(frozen=True)
class Deny:
    """Don't run the call; ``reason`` goes back to the model as an ``is_error`` result.

    Mirrors ``{behavior: 'deny', message}``.
    """

    reason: str
    behavior: Literal["deny"] = field(default="deny", init=False)


@dataclass(frozen=True)
class Ask:
    """Someone must decide; ``reason`` says what is being asked (shown to the person).

    Mirrors ``{behavior: 'ask', message}``. ``decide_permission()`` hands it
    to ``ToolUseContext.ask``; with nobody to ask it becomes a ``Deny``.
    """

    reason: str
    behavior: Literal["ask"] = field(default="ask", init=False)


ASK_REASONS: dict[str, str] = {
    "change": N_("{tool} wants to change {path}"),  # Write, Edit: tools/files.py
    "command": N_("Bash wants to run: {command}"),  # tools/bash.py
    "input": N_("{tool} wants to run with {input}"),  # BaseTool's default
}
"""The templates of the built-in tools' ``Ask`` reasons: ``Ask(ASK_REASONS["change"].format(tool=..., path=...))``.

The reason stays English (with nobody to ask it goes to the model inside the ``Deny``); a widget shows it to a
person in the chapter's language with ``language.tr_formatted(reason, ASK_REASONS.values())``.
"""


PermissionDecision = Union[Allow, Deny, Ask]
"""What a permission check returns (TypeScript ``PermissionResult``, a name in neither text)."""


class CheckedTool(Protocol):
    """What a permission check reads of a tool (``dreamloop.tools.Tool`` has it): its name and own check.

    A protocol, so that this module knows nothing about how a tool runs (``tools/base.py`` imports it,
    never the other way round)."""

    name: str

    async def check_permissions(self, input: Any, context: Any) -> PermissionDecision: ...


class PermissionContext(Protocol):
    """What a permission check reads of the call's context (``dreamloop.tools.ToolUseContext`` has it)."""

    can_use_tool: Optional[CanUseTool]
    ask: Optional[AskUser]
    permission_mode: PermissionMode
    ask_lock: asyncio.Lock

CanUseTool = Callable[["CheckedTool", dict[str, Any], "PermissionContext"], Awaitable[PermissionDecision]]
"""``async can_use_tool(tool, input, context) -> Allow | Deny | Ask`` (``canUseTool``).

Given, it replaces the tools' own checks and the permission mode entirely.
``input`` is the validated input as a dict (the keys the model sent).
"""

AskUser = Callable[["CheckedTool", dict[str, Any], str], Awaitable[Union[Allow, Deny]]]
"""``async ask(tool, input, reason) -> Allow | Deny``: who answers an ``Ask``.

A terminal prompt or a notebook's Allow/Deny buttons. Calls are made one at
a time, even from a parallel batch, so a person sees one question at once.
"""


async def decide_permission(tool: CheckedTool, input: BaseModel, context: PermissionContext,
                            hook_decision: PermissionDecision | None = None) -> Allow | Deny:
    """Decide whether one validated call may run (the four-step-loop text's ``canUseTool``).

    The flow: a ``pre_tool_use`` hook's deny or ask (``hook_decision``) if it gave one; else
    ``context.can_use_tool(tool, input_dict, context)`` if given;
    else ``bypass`` mode allows; else the tool's own
    ``check_permissions(input, context)`` (which reads the mode). A hook's allow skips the
    tool's own check (the prompt) but not the policy: ``can_use_tool``'s ``Deny`` and ``Ask``
    still win over it (dreamloop's design, after Claude Code's published hooks reference; no scenario has
    tried what Claude Code 2.1.332 does here); so does a
    tool's own ``Deny`` (a write outside the workspace). An ``Ask``
    goes to ``context.ask(tool, input_dict, reason)``; with no ``ask`` it
    becomes a ``Deny`` that says how to allow it. Returns ``Allow`` or ``Deny``.

    Raises ``TypeError`` if a callback returns something that is not a
    decision (the caller turns that into an ``is_error`` result).
    """
    as_dict = input.model_dump(mode="json", exclude_unset=True)
    if isinstance(hook_decision, Allow):  # the policy's deny and ask still win over a hook's allow
        decision = await _policy_over_allow(tool, input, as_dict, context, hook_decision)
    elif hook_decision is not None:
        decision = hook_decision
    elif context.can_use_tool is not None:
        decision = await context.can_use_tool(tool, as_dict, context)
    elif context.permission_mode == "bypass":
        decision = Allow()
    else:
        decision = await tool.check_permissions(input, context)
    _check_decision(decision, "can_use_tool" if context.can_use_tool else f"{tool.name}.check_permissions")
    if not isinstance(decision, Ask):
        return decision
    if context.ask is None:
        return Deny(
            f"{tool.name} needs permission and there is no one to ask ({decision.reason}). "
            "Run with a more permissive --permission-mode (ToolUseContext.permission_mode: "
            "'accept-edits' for file edits, 'bypass' for everything), or allow it in can_use_tool."
        )
    async with context.ask_lock:  # one question at a time
        answer = await context.ask(tool, as_dict, decision.reason)
    _check_decision(answer, "ask")
    if isinstance(answer, Ask):
        return Deny(f"Permission to use {tool.name} was not given.")
    return answer


async def _policy_over_allow(tool: CheckedTool, input: BaseModel, as_dict: dict[str, Any], context: PermissionContext,
                             allow: Allow) -> PermissionDecision:
    """A hook allowed the call: ``can_use_tool`` (the policy) may still deny or ask; the tool's own
    check may still deny (its ask is the prompt the hook's allow skips)."""
    if context.can_use_tool is not None:
        policy = await context.can_use_tool(tool, as_dict, context)
        _check_decision(policy, "can_use_tool")
    else:
        policy = await tool.check_permissions(input, context)
        _check_decision(policy, f"{tool.name}.check_permissions")
        if isinstance(policy, Ask):
            return allow
    return allow if isinstance(policy, Allow) else policy


def _check_decision(decision: object, source: str) -> None:
    if not isinstance(decision, (Allow, Deny, Ask)):
        raise TypeError(f"{source} must return Allow, Deny or Ask, not {decision!r}")


# ---------------------------------------------------------------------------
# Command rules: what a command holds that runs without asking

SHELL_SYNTAX = frozenset(";|&$`<>\n\r")
"""Characters that chain commands, substitute one's output or redirect, and line breaks: a command that runs
without asking holds none of them (one command, nothing else run or written)."""

SHELL_EXPANSION = frozenset("(){}~\\")
"""Characters that group commands or expand a word into others (subshells, braces, ``~``, escapes): where a
command's arguments must be plain words (``tools.bash.is_read_only_command``), they hold none of these either."""


def has_shell_syntax(command: str, *, expansion: bool = False) -> bool:
    """Does ``command`` hold any of ``SHELL_SYNTAX`` (with ``expansion``, of ``SHELL_EXPANSION`` too)?

    The one shell-syntax rule: the test-command policy (``is_test_command``) refuses ``SHELL_SYNTAX``; the
    Bash tool's read-only allowlist refuses both sets. Deliberately conservative: a false "yes" only means
    the person is asked.
    """
    return not SHELL_SYNTAX.isdisjoint(command) or (expansion and not SHELL_EXPANSION.isdisjoint(command))


TEST_COMMAND_PREFIXES = ("python -m unittest", "python3 -m unittest")
"""The project's test command, as the demo and the chapters run it."""


def is_test_command(command: str, prefixes: tuple[str, ...] = TEST_COMMAND_PREFIXES) -> bool:
    """Is ``command`` (stripped) the project's test command: a prefix, then a space or the end, no shell syntax?"""
    return any(command == p or command.startswith(p + " ") for p in prefixes) and not has_shell_syntax(command)


def allow_test_commands(prefixes: tuple[str, ...] = TEST_COMMAND_PREFIXES) -> CanUseTool:
    """A ``can_use_tool`` that allows Bash running the project's unittest command.

    The command must be one of ``prefixes`` followed by a space or nothing (``python -m unittest_x`` runs
    another module, maybe one the model just wrote) and hold no shell syntax that could run or redirect
    anything else: none of ``; | & $ ` < >`` and no line break (``SHELL_SYNTAX``). Every other call gets the
    tool's own decision under the permission mode (``check_permissions``), as if no ``can_use_tool`` were given.
    """

    async def can_use_tool(tool: Any, input: dict[str, Any], context: Any) -> PermissionDecision:
        command = str(input.get("command", "")).strip()
        if tool.name == "Bash" and is_test_command(command, prefixes):
            return Allow()
        if context.permission_mode == "bypass":
            return Allow()
        return await tool.check_permissions(tool.input_model.model_validate(input), context)

    return can_use_tool
