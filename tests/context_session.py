"""A long scripted session for the context-pipeline tests: a Read tool whose results have chosen sizes,
and a policy that reads a list of paths one per turn, answers summarising requests, then stops."""

from __future__ import annotations

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.context import is_compaction_request

SIZES = {"huge": 3000, "long": 900, "mid": 420, "tiny": 0}


class ReadInput(BaseModel):
    path: str


def contents(path: str) -> str:
    """``huge-3`` → 3000 characters of text naming the path; ``tiny-…`` → one short line."""
    kind = path.split("-", 1)[0]
    if kind == "tiny":
        return f"{path}: ok"
    line = f"{path} says: the value is {len(path)} and the quick brown fox jumps over the lazy dog.\n"
    return (line * (SIZES[kind] // len(line) + 1))[: SIZES[kind]]


@dl.tool(ReadInput, name="Read", read_only=True)
def read(input: ReadInput) -> str:
    """Read a file."""
    return contents(input.path)


NOTE = " I keep notes on what each file says, so that the next step can build on it."


def reader(paths: list[str], *, final: str = "All read.", summary: str = "Primary request: read the files.",
           summaries: list[str] | None = None, notes: int = 0, chatty_from: int | None = None):
    """A policy: turn n reads ``paths[n]`` (one call), then ``final``; summarising requests get ``summary``
    (or the next of ``summaries``). ``notes``: sentences of text before each call (6 from turn
    ``chatty_from`` on: text too long to fold, too short to snip). ``policy.compactions`` counts the
    summarising requests."""
    state = {"turn": 0}
    queue = list(summaries) if summaries is not None else None

    def policy(body, index):
        if is_compaction_request(body):
            policy.compactions += 1
            return S.reply(queue.pop(0) if queue is not None else summary)
        turn = state["turn"]
        state["turn"] += 1
        if turn < len(paths):
            said = NOTE * (6 if chatty_from is not None and turn >= chatty_from else notes)
            return S.reply(f"Reading {paths[turn]}.{said}", S.tool_use("Read", {"path": paths[turn]}))
        return S.reply(final)

    policy.compactions = 0
    return policy


LONG_SESSION = ["huge-1", "tiny-1", "tiny-2", "tiny-3", "long-1", "mid-1", "mid-2", "tiny-4", "tiny-5", "long-2",
                "mid-3", "mid-4", "tiny-6", "tiny-7", "tiny-8", "long-3", "mid-5", "mid-6", "huge-2", "mid-7",
                "tiny-9", "tiny-10", "mid-8", "long-4", "mid-9", "mid-10", "tiny-11", "tiny-12", "mid-11", "mid-12",
                "long-5", "mid-13", "tiny-13", "mid-14", "long-6", "mid-15", "tiny-14", "mid-16", "long-7", "mid-17"]
"""Forty turns that take a 6,000-token window through every stage, with ``reader(..., notes=3,
chatty_from=28)`` and ``session_options()``: the budget at turn 2, snip 12, microcompact 13, collapse 22,
autocompact 37."""


def session_options(**overrides):
    """Every stage on, with thresholds for a 6,000-token window, so each fires within the session."""
    from dreamloop.context import (Autocompact, BlockingLimit, ContextCollapse, ContextOptions, Microcompact, Snip,
                                   SystemPromptAssembly, ToolResultBudget)

    stages = dict(
        context_window=6000,
        tool_result_budget=ToolResultBudget(max_result_tokens=400, preview_chars=300),
        snip=Snip(threshold=2000, keep_recent=6, max_chars=600, keep_chars=150),
        microcompact=Microcompact(threshold=2000, keep_recent=2, min_savings=400),
        context_collapse=ContextCollapse(stage_threshold=2400, threshold=2600, keep_recent=6),
        system_prompt=SystemPromptAssembly(system_context={"workspace": "/ws"}, user_context={"notes": "Be brief."}),
        autocompact=Autocompact(threshold=2800, keep_recent=4),
        blocking_limit=BlockingLimit(limit=5000),
        prompt_caching=True,
    )
    return ContextOptions(**{**stages, **overrides})
