"""Pacing for a person: the runs that teach Stop go slowly enough to press it, when a person is watching.

``person_watching()`` says whether anyone can click: not under the notebook targets (``make test``,
``make nbval``, ``make notebooks`` and the browser check's run-all set ``DREAMLOOP_AUTO_ANSWER``, the
same variable that lets an ``AskPrompt`` answer itself), so those stay fast and their outputs stay the
same. ``paced(script, ...)`` streams a script's replies (a list of turns or a policy) at a reading pace;
``slowed(tools, seconds)`` makes each call wait first (an ``await``, so Stop cancels it at once). The
notebook decides what to slow down; this module only knows the environment, the ``Turn`` fields and the
tool's ``call()``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, AsyncIterator, Callable

from .ask import AUTO_ANSWER_ENV

__all__ = ["paced", "person_watching", "slowed"]


def person_watching() -> bool:
    """True when a person may click (``DREAMLOOP_AUTO_ANSWER`` unset or 0/false/no), False under the targets."""
    value = os.environ.get(AUTO_ANSWER_ENV, "").strip().lower()
    return value in ("", "0", "false", "no")


def paced(script: Any, *, tokens_per_second: float, chunk_size: int = 4) -> Any:
    """The same script, each reply streamed at ``tokens_per_second`` in ``chunk_size``-character deltas.

    ``script``: a list of ``Turn``s (returns a new list) or a policy ``(body, index) -> Turn`` (returns a
    policy). Only the pacing changes: the same blocks, the same requests.
    """

    def pace(turn: Any) -> Any:
        return turn.model_copy(update={"tokens_per_second": tokens_per_second, "chunk_size": chunk_size})

    if callable(script):
        policy: Callable[[Any, int], Any] = script
        return lambda body, index: pace(policy(body, index))
    return [pace(turn) for turn in script]


def slowed(tools: list[Any], seconds: float) -> list[Any]:
    """The same tools, each call first waiting ``seconds`` (so a person sees it run, and can stop it).

    The wait is an ``asyncio.sleep``: the abort signal cancels it like any other await. Everything else
    (name, schema, permissions, concurrency) is the tool's own.
    """
    return [_Slowed(tool, seconds) for tool in tools]


class _Slowed:
    """A tool whose ``call()`` waits before the real one; every other attribute is the tool's."""

    def __init__(self, tool: Any, seconds: float) -> None:
        self._tool, self._seconds = tool, seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tool, name)

    async def call(self, input: Any, context: Any) -> AsyncIterator[Any]:
        await asyncio.sleep(self._seconds)
        async for item in self._tool.call(input, context):
            yield item

    def __repr__(self) -> str:
        return f"slowed({self._tool!r}, {self._seconds:g})"
