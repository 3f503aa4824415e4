"""Tool-use summaries: a short line per batch of tool calls, for a UI that folds the batch under it.

The conversation-loop text: after a batch of tools a brief summary is made
asynchronously and yielded in the next iteration (its State's 待处理的工具摘要,
``ToolUseSummaryMessage``). ``start_summary`` starts it at phase 5 as a task
(it never holds up the next request); ``finish_summary`` collects it after the
next response streamed. Offline (a model with a fake API behind it) the line
is written here, deterministically, so no script item is spent; live it is one
small request to ``ToolUseSummaries.model``, with a ``timeout_s`` of its own
(10 s, not the SDK's 600 s default). A summary that fails is skipped with a
notice; one not done ``grace_s`` (about a second) after the next response
streamed is dropped, with a ``tool_use_summary_dropped`` notice in the trace,
so it never holds up the next request (dreamloop's limits); the run goes on. It knows nothing about the loop's phases.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field

from .abort import AbortController, Aborted
from .messages import SystemMessage, ToolUseSummaryMessage

__all__ = ["PendingSummary", "ToolUseSummaries", "describe_batch", "finish_summary", "start_summary"]

Summarize = Callable[[list[Any], dict[str, dict[str, Any]]], Awaitable[str]]


class ToolUseSummaries(BaseModel):
    """The tool-use summaries switch (``QueryParams.tool_use_summaries``).

    * ``model``: the small model a live run asks (a name on the run's client); offline runs write the
      line themselves (``describe_batch``).
    * ``max_tokens``: the summary request's output limit.
    * ``summarize``: ``async (tool_uses, results) -> str`` instead of either (for a test, or your own);
      an exception from it skips the summary with a notice.
    * ``grace_s``: how long past the next response a summary is waited for; later, it is dropped.
    * ``timeout_s``: the live summary request's timeout (the SDK's own default is 600 s).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    model: str = "claude-haiku-4-5"
    max_tokens: int = Field(default=60, ge=1)
    grace_s: float = Field(default=1.0, ge=0)
    timeout_s: float = Field(default=10.0, gt=0)
    summarize: Summarize | None = Field(default=None, exclude=True)


@dataclass
class PendingSummary:
    """A summary being made (``State.pending_tool_use_summary``): its task and the calls of the batch."""

    task: asyncio.Task[str]
    tool_use_ids: tuple[str, ...]
    grace_s: float = 1.0

    def cancel(self) -> bool:
        """Cancel it if it still runs; True if it was running (the end of a run says so)."""
        if self.task.done():
            return False
        self.task.cancel()
        return True


def start_summary(options: ToolUseSummaries | None, model: Any, tool_uses: list[Any],
                  results: dict[str, dict[str, Any]]) -> PendingSummary | None:
    """Start the summary of a batch (None when the switch is off or there were no calls)."""
    if options is None or not tool_uses:
        return None
    if options.summarize is not None:
        work = options.summarize(list(tool_uses), dict(results))
    elif getattr(model, "api", None) is not None:  # offline: no request, the same line every time
        work = _written(describe_batch(tool_uses, results))
    else:
        work = _ask(model, options, tool_uses, results)
    return PendingSummary(asyncio.ensure_future(work), tuple(use.id for use in tool_uses), options.grace_s)


async def finish_summary(pending: PendingSummary | None, deps: Any, abort: AbortController) -> list[Any]:
    """The messages a pending summary ends in: a ``ToolUseSummaryMessage``, or a warning ``SystemMessage``
    (``tool_use_summary_failed``) when it failed, an info one (``tool_use_summary_dropped``) when it was not
    done ``pending.grace_s`` after the call; nothing when there is none or the abort signal fired."""
    if pending is None:
        return []
    try:
        with abort.guard():
            summary = await asyncio.wait_for(asyncio.shield(pending.task), pending.grace_s)
    except TimeoutError:
        pending.cancel()
        return [SystemMessage(uuid=deps.uuid(), subtype="tool_use_summary_dropped", level="info",
                              content=f"The summary of the last tool calls was dropped: not done "
                                      f"{pending.grace_s:g} s after the next response.")]
    except Aborted:
        pending.cancel()
        return []
    except asyncio.CancelledError:
        pending.cancel()
        raise
    except Exception as error:  # any failure of the summary call: the run goes on without it
        return [SystemMessage(uuid=deps.uuid(), subtype="tool_use_summary_failed", level="warning",
                              content=f"The summary of the last tool calls was skipped: "
                                      f"{type(error).__name__}: {error}")]
    summary = " ".join(str(summary).split())
    if not summary:
        return []
    return [ToolUseSummaryMessage(uuid=deps.uuid(), summary=summary, tool_use_ids=pending.tool_use_ids)]


def describe_batch(tool_uses: list[Any], results: dict[str, dict[str, Any]]) -> str:
    """dreamloop's own one-line summary: each call as its tool and main argument, and how many failed.

    ``Read config.py, Read notes.md`` · ``Bash pytest -q (1 failed)``.
    """
    calls = [f"{use.name} {_argument(use.input)}".rstrip() for use in tool_uses]
    failed = sum(1 for use in tool_uses if (results.get(use.id) or {}).get("is_error"))
    return ", ".join(calls) + (f" ({failed} failed)" if failed else "")


def _argument(data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    for key in ("file_path", "path", "command", "pattern", "url", "query"):
        value = data.get(key)
        if isinstance(value, str) and value:
            shown = PurePath(value).name if key in ("file_path", "path") else value
            return shown if len(shown) <= 40 else shown[:39] + "…"
    return ""


async def _written(line: str) -> str:
    return line


async def _ask(model: Any, options: ToolUseSummaries, tool_uses: list[Any], results: dict[str, dict[str, Any]]) -> str:
    """One small request, outside the conversation: the calls and whether each failed, in a few words back."""
    listing = "\n".join(f"- {use.name} {_argument(use.input)}"
                        f"{' (failed)' if (results.get(use.id) or {}).get('is_error') else ''}" for use in tool_uses)
    response = await model.client.messages.create(
        model=options.model, max_tokens=options.max_tokens, timeout=options.timeout_s,
        messages=[{"role": "user", "content": "Summarise these tool calls of a coding agent in at most eight words, "
                                              f"as a label for a folded list (no full stop):\n{listing}"}])
    return "".join(block.text for block in response.content if block.type == "text")
