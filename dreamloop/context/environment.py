"""Who the agent is and where it runs: the system prompt and environment of ``dreamloop run``.

Part of stage 5, system-prompt assembly. It builds the texts (dreamloop's own
wording): the identity paragraph, the environment block (working directory,
platform, git repository or not) and the date reminder. Everything machine-
or day-dependent comes from ``QueryDeps`` (``today``, ``platform``), so a test,
a notebook or a cassette fixes it. It also says which parts of a request are
the environment (``without_environment``), so a cassette recorded elsewhere or
on another day still matches. It knows nothing about the loop or the model.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

__all__ = ["DATE_OPEN", "ENVIRONMENT_OPEN", "IDENTITY", "date_reminder", "environment_block", "environment_facts",
           "git_root", "run_system_prompt", "without_environment"]

IDENTITY = (
    "You are dreamloop, a coding agent working in a project folder on the user's machine. You act through the "
    "tools you are given: read a file before you change it, make small edits, and run the project's checks to "
    "see whether a change works. Say briefly what you did and what you found; if a tool result is an error, read "
    "it and try another way rather than repeating the call. Instructions from the user's messages come first."
)
"""dreamloop's own system prompt for ``dreamloop run`` (stable bytes: it never changes within a version)."""

ENVIRONMENT_OPEN = "<environment>"
"""The first line of the environment block: what ``without_environment`` recognises."""

DATE_OPEN = "<system-reminder>\nThe date today:"
"""How the date reminder opens (the date is the only day-dependent part of a request)."""


def git_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding ``.git`` (a directory, or a worktree's file), or None."""
    folder = Path(folder).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def environment_facts(workspace: Path, *, platform: str) -> dict[str, str]:
    """The environment the model is told about: ``{"Working directory": ..., "Platform": ..., "Git repository": ...}``.

    ``workspace``: the folder the tools work in; ``platform``: ``QueryDeps.platform``.
    """
    root = git_root(workspace)
    return {
        "Working directory": str(workspace),
        "Platform": platform,
        "Git repository": f"yes (root: {root})" if root is not None else "no",
    }


def environment_block(facts: dict[str, str]) -> str:
    """The environment as one system block's text: ``<environment>``, ``key: value`` lines, ``</environment>``."""
    lines = "\n".join(f"{key}: {value}" for key, value in facts.items())
    return f"{ENVIRONMENT_OPEN}\n{lines}\n</environment>"


def date_reminder(today: Any) -> str:
    """The date as a ``<system-reminder>`` block (``today``: a ``datetime.date``, ``QueryDeps.today()``)."""
    return f"{DATE_OPEN} {today.isoformat()}.\n</system-reminder>"


def run_system_prompt(system_prompt: str | None = None, append: str | None = None) -> str:
    """The base system prompt of ``dreamloop run``: ``IDENTITY``, or ``system_prompt`` instead of it
    (``--system-prompt``), then ``append`` after a blank line (``--append-system-prompt``): flags named after
    those of Claude Code's CLI reference, with the meaning it gives them (dreamloop's choice; not observed)."""
    base = IDENTITY if system_prompt is None else system_prompt
    return f"{base}\n\n{append}" if append else base


def without_environment(body: Any) -> Any:
    """A request body without its environment parts (the environment system block, the date reminder).

    For comparing a replayed request with a recorded one: a cassette recorded in another folder, on
    another machine or another day still matches. The input is not changed.
    """
    if not isinstance(body, dict):
        return body
    out = copy.copy(body)
    system = body.get("system")
    if isinstance(system, list):
        out["system"] = [b for b in system if not _opens(b, ENVIRONMENT_OPEN)]
    messages = body.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        first = messages[0]
        if isinstance(first.get("content"), list):
            first = {**first, "content": [b for b in first["content"] if not _opens(b, DATE_OPEN)]}
        out["messages"] = [first, *messages[1:]]
    return out


def _opens(block: Any, marker: str) -> bool:
    return isinstance(block, dict) and str(block.get("text", "")).startswith(marker)
