"""The abort signal: how a caller (or a notebook's Stop button) interrupts the loop.

Mirrors the ``AbortController`` / ``abortController.signal`` that queryLoop()
checks. ``abort()`` sets the flag and cancels whatever await the loop is in
(the model stream or the tools), so a 30 s request stops at once; the loop
then closes the transcript and ends ``aborted_streaming`` / ``aborted_tools``.
It knows nothing of the loop's phases.
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from typing import Any, AsyncIterator, Callable, Iterator

__all__ = ["AbortController", "Aborted", "guarded"]


class Aborted(Exception):
    """Raised inside the loop when the abort signal fired during a guarded await."""


class AbortController:
    """An abort signal with a reason; thread-safe to trigger.

    ``abort(reason)`` may be called from any thread (a widget callback); it
    hops onto the loop's event loop with ``call_soon_threadsafe`` when needed.
    ``guard()`` marks a region of the loop (a model call, a tool batch) whose
    current await is cancelled on abort; inside it ``Aborted`` is raised.
    """

    def __init__(self) -> None:
        self.aborted = False
        self.reason: str | None = None
        self._guarded: dict[asyncio.Task, int] = {}
        self._listeners: list[Callable[[str], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def abort(self, reason: str = "interrupted") -> None:
        """Fire the signal (idempotent). Safe from any thread."""
        loop = self._loop
        if loop is not None and loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                loop.call_soon_threadsafe(self._fire, reason)
                return
        self._fire(reason)

    def _fire(self, reason: str) -> None:
        if self.aborted:
            return
        self.aborted, self.reason = True, reason
        try:
            current = asyncio.current_task()
        except RuntimeError:  # no running loop in this thread
            current = None
        for task in list(self._guarded):
            if task is current:  # fired from the guarded task itself (a hook, a script's policy): it is running,
                # not awaiting, so a cancel now would land at its next await, wherever that is; at its next await
                # inside a guard instead (or not at all: a guard entered later raises Aborted at once)
                task.get_loop().call_soon(self._cancel_if_guarded, task)
            else:
                task.cancel(msg="dreamloop-abort")
        for listener in list(self._listeners):
            listener(reason)

    def _cancel_if_guarded(self, task: asyncio.Task) -> None:
        if task in self._guarded and not task.done():
            task.cancel(msg="dreamloop-abort")

    def add_listener(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(reason)`` when the signal fires."""
        self._listeners.append(callback)

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Run the enclosed awaits so that ``abort()`` cancels them and ``Aborted`` is raised.

        A cancellation that did not come from this signal (the task itself was
        cancelled) propagates as ``CancelledError``, untouched.
        """
        task = asyncio.current_task()
        assert task is not None, "guard() needs a running task"
        self._loop = task.get_loop()
        if self.aborted:
            raise Aborted(self.reason)
        self._guarded[task] = self._guarded.get(task, 0) + 1
        try:
            yield
        except asyncio.CancelledError:
            if self.aborted and task.cancelling() and _only_abort_cancels(task):
                task.uncancel()
                raise Aborted(self.reason) from None
            raise
        finally:
            depth = self._guarded.pop(task, 1) - 1
            if depth:
                self._guarded[task] = depth

    def __repr__(self) -> str:
        return f"AbortController(aborted={self.aborted}, reason={self.reason!r})"


async def guarded(events: AsyncIterator[Any], abort: AbortController) -> AsyncIterator[Any]:
    """Iterate ``events`` so that the abort signal cancels the await in flight (``Aborted`` is raised here).

    Only the ``await`` for the next item is guarded, never the ``yield``: a
    click while the caller handles an event takes effect at the next await.
    ``events`` is closed however this ends.
    """
    iterator = events.__aiter__()
    try:
        while True:
            with abort.guard():
                try:
                    item = await iterator.__anext__()
                except StopAsyncIteration:
                    return
            yield item
    finally:
        await iterator.aclose()  # type: ignore[attr-defined]


def _only_abort_cancels(task: asyncio.Task) -> bool:
    # One pending cancel request, ours. More than one means someone else
    # (a caller cancelling the task) asked too: let CancelledError through.
    return task.cancelling() == 1
