"""Stage 5, system-prompt assembly, and where the prompt-cache breakpoints go.

The order is the texts': the system context joins the system prompt (the
conversation-loop text's stage 5) and the user context goes in front of the
messages (``prependUserContext``, in the four-step-loop text). The form is
dreamloop's design: the system context is one more system block of ``key: value``
lines, the user context a first user message inside
``<system-reminder>``, as Claude Code 2.1.332's first message opened with
reminder blocks (``one_tool``). Both are built once per run
and are byte-identical on every request, so the cached prefix (tools, system,
the first message) survives every turn. ``add_cache_breakpoints`` marks the
last system block and the last message block with ``cache_control``. This
module knows nothing about the history's contents.

A ``Preamble`` is what a run adds once, at its start, around the system prompt
and before the first message: the environment block (after the system prompt:
stable bytes first, what varies by machine last) and reminders (memory files,
the date) opening the first user message. ``attachments.Attachments`` builds it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["CACHE_CONTROL", "Preamble", "add_cache_breakpoints", "append_system_context", "system_blocks",
           "user_context_text"]

CACHE_CONTROL = {"type": "ephemeral"}
"""The breakpoint marker the API reads (the default 5-minute cache)."""


@dataclass(frozen=True)
class Preamble:
    """What a run sends with every request besides its history, built once at the start.

    * ``system``: texts appended to the system prompt as blocks of their own (the environment);
    * ``reminders``: ``<system-reminder>`` texts that open the first user message (memory files, the date);
    * ``notices``: ``SystemMessage``s for the person (a memory file not sent, and why), yielded once.
    """

    system: tuple[str, ...] = ()
    reminders: tuple[str, ...] = ()
    notices: tuple[Any, ...] = ()

    def system_prompt(self, system_prompt: str | list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        """``system_prompt``'s blocks, then one block per ``system`` text (None when there is nothing)."""
        if not self.system:
            return system_prompt or None  # as given: a string stays a string
        return system_blocks(system_prompt) + [{"type": "text", "text": text} for text in self.system]

    def first_message(self, user_context: str | None = None) -> list[dict[str, Any]]:
        """The blocks that open the first user message: ``user_context`` (stage 5's), then the reminders."""
        return [{"type": "text", "text": text} for text in (user_context, *self.reminders) if text]


def system_blocks(system_prompt: str | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The system prompt as a list of text blocks (a string becomes one block)."""
    if system_prompt is None or system_prompt == "":
        return []
    if isinstance(system_prompt, str):
        return [{"type": "text", "text": system_prompt}]
    return [dict(block) for block in system_prompt]


def append_system_context(system_prompt: str | list[dict[str, Any]] | None,
                          system_context: dict[str, str]) -> list[dict[str, Any]]:
    """The system prompt's blocks, then one block of ``key: value`` lines (the system context)."""
    blocks = system_blocks(system_prompt)
    if system_context:
        blocks.append({"type": "text", "text": "\n".join(f"{k}: {v}" for k, v in system_context.items())})
    return blocks


def user_context_text(user_context: dict[str, str]) -> str | None:
    """The user context as the first message's text (``prependUserContext`` in the four-step-loop text; the
    wording around the entries is dreamloop's own). None when there is no user context."""
    if not user_context:
        return None
    body = "\n".join(f"# {key}\n{value}" for key, value in user_context.items())
    return ("<system-reminder>\nContext about this session, for reference while you write (dreamloop):\n"
            f"{body}\n\nUse a part of it only where it helps with the request; otherwise, skip it.\n"
            "</system-reminder>")


def add_cache_breakpoints(system: list[dict[str, Any]] | str | None,
                          messages: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    """``(system, messages)`` with ``cache_control`` on the last system block and the last message's last block.

    The inputs are not modified (the changed blocks are copies). A string
    system prompt becomes one block so it can carry the marker.
    """
    blocks = system_blocks(system) if system else []
    if blocks:
        blocks[-1] = {**blocks[-1], "cache_control": dict(CACHE_CONTROL)}
    out = list(messages)
    if out and isinstance(out[-1].get("content"), list) and out[-1]["content"]:
        last = copy.copy(out[-1])
        content = list(last["content"])
        content[-1] = {**content[-1], "cache_control": dict(CACHE_CONTROL)}
        last["content"] = content
        out[-1] = last
    return (blocks or system), out
