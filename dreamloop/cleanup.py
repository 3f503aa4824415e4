"""What the loop does as it returns a Terminal: cancel what still runs, and say so for an abnormal end.

The conversation-loop text: before an abnormal Terminal is returned the loop
cleans up (cancels running tools, releases resources, logs why it ended).
``end_of_run`` does that for any ending: it cancels the tool-use summary still
being made and any tool call a streaming executor still runs, and for the
seven abnormal endings returns a ``SystemMessage`` (``run_ended``) naming the
reason and what was cancelled; the loop keeps it in the history (so the
transcript has it) and in the last checkpoint (so the trace has it). The
abort endings and ``completed`` already say what happened, so they get no
second notice. It knows nothing about how the ending was decided.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .messages import SystemMessage

__all__ = ["ABNORMAL", "end_of_run", "settle"]

ABNORMAL = frozenset({"max_turns", "model_error", "prompt_too_long", "blocking_limit", "image_error",
                      "stop_hook_prevented", "hook_stopped", "api_error", "malformed_tool_use_exhausted"})
"""The abnormal Terminal reasons (neither ``completed`` nor an abort). The conversation-loop text counts seven
abnormal endings without naming them all; dreamloop's seven are the first seven here (dreamloop's choice: the
four-step-loop text names ``max_turns``, ``model_error``, ``stop_hook_prevented`` and ``hook_stopped``). The other
two are the endings Claude Code 2.1.332 reported in ``http_529`` (``api_error``) and ``tool_use_without_block``
(``malformed_tool_use_exhausted``)."""


def end_of_run(terminal: Any, pending: list[Any], executor: Any, uuid: Any) -> SystemMessage | None:
    """Cancel what still runs at the end of a run; the ``run_ended`` notice for an abnormal ``terminal``.

    ``pending``: the tool-use summaries still being made (``PendingSummary``, None entries ignored);
    ``executor``: the last response's ``StreamingToolExecutor`` (or None): calls it still runs are
    cancelled (``cancel_running``). ``metadata`` holds ``reason``, ``turn_count`` and ``cancelled``.
    """
    cancelled: list[str] = []
    for summary in pending:
        if summary is not None and summary.cancel():
            cancelled.append(f"the tool-use summary of {', '.join(summary.tool_use_ids)}")
    if executor is not None:
        cancelled += [f"tool call {call_id}" for call_id in executor.cancel_running()]
    if terminal.reason not in ABNORMAL:
        return None
    what = "; ".join(cancelled) if cancelled else "nothing was still running"
    said = f"The run ended ({terminal.reason}, turn {terminal.turn_count}). Cancelled: {what}."
    return SystemMessage(uuid=uuid(), subtype="run_ended", content=said, level="warning",
                         metadata={"reason": terminal.reason, "turn_count": terminal.turn_count,
                                   "cancelled": cancelled})


async def settle(pending: list[Any], executor: Any, background: Any = None) -> None:
    """Wait until nothing the run started still runs: the tool-use summaries of ``pending`` and the calls of
    ``executor`` are cancelled (if ``end_of_run`` did not already) and awaited. The loop awaits this before its
    Terminal is returned, whatever ended the run, so no task outlives it (issue 32: ``asyncio.run`` around a run
    returns). ``background``: the run's ``tasks.BackgroundTasks`` (or None): every command still running is stopped
    and reaped, so no background process outlives its run."""
    tasks = [summary.task for summary in pending if summary is not None]
    for task in tasks:
        task.cancel()
    if executor is not None:
        await executor.stop()
    await asyncio.gather(*tasks, return_exceptions=True)
    if background is not None:
        await background.close()
