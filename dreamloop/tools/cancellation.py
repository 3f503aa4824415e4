"""What a call that did not finish is told, and the sibling rule (one failing Bash call stops the rest).

Owns the texts of the ``is_error`` results a call gets when it never
finished: interrupted while running vs never started (so the model can tell
which side effects may have happened), and the sibling rule: dreamloop's
design (neither source text names it; Claude Code 2.1.332 cancelled nothing in the ``dreamloop
compare`` scenarios ``bash_fails_parallel`` and ``bash_fails_serial``), applied
by ``run_tools()`` and the executor only with ``ToolUseContext.sibling_rule``.
Pure decisions and strings: it runs nothing and knows nothing about the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..messages import block_field

__all__ = [
    "INTERRUPTED",
    "NOT_STARTED",
    "SIBLING_CANCELLING_TOOLS",
    "USER_INTERRUPT",
    "Unfinished",
    "cancels_siblings",
    "describe_call",
    "hook_failure",
    "model_failure",
    "sibling_failure",
]

INTERRUPTED = "Interrupted by user while running; unless it only reads, it may have made changes before it stopped."
"""The result of a call that had started when the person interrupted the run (F14). One text for every tool (the
loop's closing message does not know which tools only read), so it is true of a Read too."""

NOT_STARTED = "Interrupted by user before it started; this call never ran."
"""The result of a call that had not started when the person interrupted the run (F14)."""

SIBLING_CANCELLING_TOOLS = frozenset({"Bash"})
"""Tools whose ``is_error`` result stops the calls beside and after it (dreamloop's choice: Bash only)."""


@dataclass(frozen=True)
class Unfinished:
    """The two strings for the calls of one response that never got a result of their own.

    ``running``: the call had started (it may have had effects); ``not_started``:
    it never ran. Each cause of an early end (an interrupt, a failing sibling,
    a failed model response) has its pair.
    """

    running: str
    not_started: str

    def text(self, started: bool) -> str:
        """``running`` if the call had started, else ``not_started``."""
        return self.running if started else self.not_started


USER_INTERRUPT = Unfinished(INTERRUPTED, NOT_STARTED)
"""The person pressed Stop (the abort signal fired)."""


def cancels_siblings(tool_use: Any, result: dict[str, Any], ran: bool = True) -> bool:
    """The sibling rule: does this finished call stop the other calls of its response?

    True when the tool is Bash (``SIBLING_CANCELLING_TOOLS``), its command ran
    (``ran``: the ``done`` progress's ``data["ran"]``), and its result is an
    ``is_error`` one: a nonzero exit (an error result in Claude Code 2.1.332 too,
    ``bash_fails_parallel``), a timeout, a crash.
    Bash commands often depend on each other (``mkdir`` then ``cd``), so the
    rest of the plan is void. A Bash call that never ran (denied by the person,
    a policy or a hook; bad input) stops nothing: the refusal was about that
    call alone. An error of any other tool (a Read of a missing file, a Grep
    with no match) stops nothing either: those calls are independent.
    """
    return ran and block_field(tool_use, "name", None) in SIBLING_CANCELLING_TOOLS and bool(result.get("is_error"))


def describe_call(tool_use: Any, limit: int = 40) -> str:
    """``Bash(make test)``: the name and, for Bash, the command (cut at ``limit`` characters)."""
    name, input = block_field(tool_use, "name", None), block_field(tool_use, "input", None) or {}
    command = input.get("command") if isinstance(input, dict) else None
    if not isinstance(command, str):
        return str(name)
    command = " ".join(command.split())
    return f"{name}({command if len(command) <= limit else command[: limit - 1] + '…'})"


def sibling_failure(failed: Any) -> Unfinished:
    """What the calls stopped by the failing call ``failed`` (a tool_use) are told."""
    what = describe_call(failed)
    return Unfinished(
        running=f"Cancelled while running because the call {what} failed; it may have made changes before it stopped.",
        not_started=f"Not started because the call {what} failed; this call never ran.",
    )


def hook_failure(error: str) -> Unfinished:
    """What the calls of a response are told when a Python hook raised (``HookError``) while they ran."""
    return Unfinished(
        running=f"Stopped because a hook failed ({error}); it may have made changes before it stopped.",
        not_started=f"Not run: a hook failed ({error}).",
    )


def model_failure(error: str) -> Unfinished:
    """What the calls of a response are told when the response itself failed (an API error mid-stream)."""
    return Unfinished(
        running=f"Stopped while running because the model's response failed ({error}); "
                "it may have made changes before it stopped.",
        not_started=f"Not run: {error}",
    )
