"""``StreamingToolExecutor``: tool calls that start while the model still streams (the four-step-loop text's).

Owns the calls of one response from the moment each ``tool_use`` block is
complete in the stream (``add_tool``): the ordering rule applied as calls
arrive, their progress merged with the model's stream as it happens
(``alongside``), the results at the loop's checkpoint in call order
(``get_remaining_results``), the sibling rule, and ``discard()``. Each call
runs through ``run_tool_use`` exactly as in ``run_tools()``. It knows nothing
about the loop's State or how the model is called.
"""

from __future__ import annotations

import asyncio
from collections import deque
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, AsyncIterator, Literal, Sequence

from anthropic.types import Message

from ..messages import AttachmentMessage, ProgressMessage, UserMessage, block_field
from ..partial import PartialResponse
from .base import ToolUseContext
from .cancellation import Unfinished, cancels_siblings, sibling_failure
from .orchestration import _is_concurrency_safe, run_tool_use, tool_results_message, unfinished_progress

__all__ = ["CallStatus", "StreamingToolExecutor", "ready_to_start"]

CallStatus = Literal["queued", "running", "done"]
"""Where a call of the executor is: waiting to start, running (its task exists), ended."""


def ready_to_start(calls: Sequence[tuple[bool, CallStatus]]) -> list[int]:
    """The ordering rule: which queued calls may start now. Pure; the executor applies it.

    ``calls``: one ``(concurrency_safe, status)`` per call, in call order.
    Returns the indexes of the queued calls to start, in order. Walking the
    calls in order: a concurrency-safe call starts unless a non-safe call is
    running; a non-safe call starts only when nothing runs, and while it
    waits it holds back every call after it. A call that starts counts as
    running for the calls after it. The same semantics as
    ``partition_tool_calls``, applied as calls arrive and end::

        ready_to_start([(True, "running"), (True, "queued"), (False, "queued"), (True, "queued")]) == [1]
    """
    running = [safe for safe, status in calls if status == "running"]
    starting: list[int] = []
    for index, (safe, status) in enumerate(calls):
        if status != "queued":
            continue
        if not running or (safe and all(running)):
            starting.append(index)
            running.append(safe)
        elif not safe:
            break  # a waiting non-safe call holds back every call after it
    return starting


@dataclass(eq=False)
class _Call:
    """One call as the executor tracks it."""

    tool_use: Any
    safe: bool
    status: CallStatus = "queued"
    started: bool = False  # run_tool_use said "started": the call may have had effects
    result: dict[str, Any] | None = None
    ran: bool = False  # tool.call started (not refused by validation, a hook or permission)
    task: asyncio.Task | None = None
    cancelled: bool = False  # stopped by a failing sibling

    @property
    def id(self) -> str:
        return block_field(self.tool_use, "id")


class StreamingToolExecutor:
    """Start each tool call as soon as its block is complete; hand over the results at the checkpoint.

    Mirrors the ``StreamingToolExecutor`` the four-step-loop text names; the loop
    uses one per model response when ``QueryParams.streaming_tool_execution`` is
    on. Its contract, as dreamloop reads it (the texts show only
    ``getRemainingResults()``):

    * ``add_tool(tool_use)`` at the block's ``content_block_stop``;
      a block cut by ``max_tokens`` or by a dropped stream never gets one, so it
      never runs. ``alongside(stream)`` does this for the loop.
    * The ordering rule, applied as calls arrive (``partition_tool_calls``'s
      semantics): a concurrency-safe call starts at once unless a non-safe call
      is running; a non-safe call waits for every call before it and holds back
      every call after it. At most ``context.max_concurrency`` run at once.
    * Progress (``ProgressMessage``: ``started``, ``progress``, ``done``) is
      yielded while the model still streams: ``alongside`` interleaves it with
      the stream's items as they happen. The hooks' ``AttachmentMessage``s wait
      for ``get_remaining_results()``: they are history (some go to the
      model), and history keeps the order it has without the switch: the
      assistant message, then what its calls produced.
    * ``get_remaining_results()`` (``getRemainingResults``) at the checkpoint
      yields the progress still to come, then one ``UserMessage`` of every
      ``tool_result`` in **call order** (with ``context.results_as_finished``, in the
      order the calls finished): the message ``run_tools()`` makes.
    * The sibling rule (``cancels_siblings``, with ``context.sibling_rule``), as in
      ``run_tools()``: a Bash call that ran and failed cancels the calls still running
      and starts no other.
    * Ending early (the stream broke, the abort signal fired, the consumer
      closed ``alongside`` or ``get_remaining_results`` before the end): running
      calls are cancelled and awaited, no call starts; the caller closes the
      transcript from the progress it was shown (``tool_results_message``).
    * ``discard()``: see there.

    Example (what ``query()`` does when the switch is on)::

        executor = StreamingToolExecutor(context)
        async for item in executor.alongside(model.stream(...)):
            ...                              # stream events, and tools' progress as it happens
        async for update in executor.get_remaining_results():
            ...                              # the rest of the progress, then the results message
    """

    def __init__(self, context: ToolUseContext) -> None:
        self.context = context
        self._calls: list[_Call] = []
        self._updates: deque[ProgressMessage | AttachmentMessage] = deque()
        self._held: deque[AttachmentMessage] = deque()  # hook records made while the model streamed
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(context.max_concurrency)
        self._failed: Unfinished | None = None  # set once a Bash call failed (the sibling rule)
        self._finished: list[str] = []  # ids of the calls with a result, in the order they finished
        self._stopped = False  # ended early or discarded: no call starts any more
        self._discarded = False

    def __repr__(self) -> str:
        counts = {status: sum(c.status == status for c in self._calls) for status in ("queued", "running", "done")}
        return f"StreamingToolExecutor({', '.join(f'{k}={v}' for k, v in counts.items())})"

    # -- the executor's three methods --------------------------------------

    def add_tool(self, tool_use: Any) -> None:
        """Take one complete ``tool_use`` block and start it if the ordering rule allows.

        ``tool_use``: an SDK ``ToolUseBlock`` or a dict with ``id``, ``name``,
        ``input``. Raises ``RuntimeError`` after ``discard()`` or an early end
        (a new response needs a new executor).
        """
        if self._stopped:
            raise RuntimeError("this StreamingToolExecutor has ended (discarded or stopped early); "
                               "use a new one for the next response")
        if any(call.id == block_field(tool_use, "id") for call in self._calls):
            return  # a repeated tool_use id runs once; the loop keeps only the first block with it
        self._calls.append(_Call(tool_use, _is_concurrency_safe(tool_use, self.context.tools)))
        self._start_ready()

    def get_remaining_results(self) -> AsyncIterator[ProgressMessage | AttachmentMessage | UserMessage]:
        """The progress still to come, then one ``UserMessage`` of every result in call order (``getRemainingResults``).

        Waits for every call to end. Yields nothing after ``discard()`` or an
        early end, or if no call was added. Closing the iterator before its end
        (``aclose()``, as an abort does) stops the running calls.
        """
        return _StopOnClose(self._remaining(), self)

    async def discard(self) -> tuple[str, ...]:
        """Drop this response's calls: for a response that is withdrawn (the streaming fallback).

        Contract: no call starts any more; running calls are cancelled and
        awaited (Bash kills its process group); progress not yet yielded is
        dropped, and ``get_remaining_results()`` yields nothing, so nothing of
        this executor enters the transcript. The caller withdraws the
        assistant message that asked for these calls (a ``TombstoneMessage``),
        so no ``tool_result`` is owed for them. Returns the ids of the calls
        that had started: their effects (a file written) may remain, and the
        caller should say so. Later ``add_tool`` calls raise ``RuntimeError``.
        """
        started = self.started()
        self._discarded = True
        self._updates.clear()
        self._held.clear()
        await self._stop()
        return started

    def started(self) -> tuple[str, ...]:
        """The ids of the calls that have started (their effects may have happened), in call order."""
        return tuple(call.id for call in self._calls if call.started)

    async def stop(self) -> None:
        """No call starts any more; the running ones are cancelled and awaited (the end of a run: none outlives it)."""
        await self._stop()

    def cancel_running(self) -> tuple[str, ...]:
        """Cancel the calls still running, without waiting (the end of a run); their ids. No call starts after."""
        self._stopped = True
        running = [call for call in self._calls if call.task is not None and not call.task.done()]
        for call in running:
            call.task.cancel()
        return tuple(call.id for call in running)

    # -- the stream and the progress, interleaved ---------------------------

    async def alongside(self, stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """Yield ``stream``'s items and this executor's progress as each happens; start calls as blocks complete.

        ``stream``: ``AnthropicModel.stream()`` (raw events, then the final
        ``Message``). Each ``tool_use`` block is passed to ``add_tool`` when its
        ``content_block_stop`` is yielded, so the caller has seen every block a
        running call came from. The stream is read by one task of its own, so
        a tool's progress is yielded even while the model is silent. The
        stream's exception is raised here. If this ends before the stream did
        (an exception, ``aclose()``, cancellation), running calls are stopped.
        """
        items: deque[Any] = deque()
        blocks = PartialResponse()

        async def read() -> None:
            try:
                async for item in stream:
                    items.append(item)
                    self._wake.set()
            finally:
                self._wake.set()

        reader = asyncio.create_task(read(), name="model stream")
        complete = False
        try:
            while True:
                if self._updates:
                    update = self._updates.popleft()
                    if update.type == "attachment":
                        self._held.append(update)  # history: after the assistant message (get_remaining_results)
                    else:
                        yield update
                elif items:
                    item = items.popleft()
                    block = None if isinstance(item, Message) else blocks.add(item)
                    if block is not None and block.type == "tool_use":
                        self.add_tool(block)
                    yield item
                elif reader.done():
                    reader.result()  # the stream's own exception, if it raised one
                    complete = True
                    return
                else:
                    self._wake.clear()
                    await self._wake.wait()
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            if not complete:
                await self._stop()

    # -- the ordering rule ---------------------------------------------------

    def _start_ready(self) -> None:
        """Apply the ordering rule (``ready_to_start``); called when a call arrives and when one ends."""
        if self._failed is not None:  # after a failing Bash call nothing else starts
            for call in self._calls:
                if call.status == "queued":
                    self._end(call, unfinished_progress(call.tool_use, self._failed.not_started))
            return
        for index in ready_to_start([(call.safe, call.status) for call in self._calls]):
            self._start(self._calls[index])

    def _start(self, call: _Call) -> None:
        call.status = "running"
        call.task = asyncio.create_task(self._run(call), name=f"tool {call.id}")
        call.task.add_done_callback(lambda _: self._wake.set())  # also when it dies of a BaseException

    async def _run(self, call: _Call) -> None:
        async with self._slots:
            if call.status != "running":
                return
            async with aclosing(run_tool_use(call.tool_use, self.context)) as messages:
                async for message in messages:
                    if call.cancelled:  # stopped by a failing sibling, and the tool ignored the cancel
                        return
                    if message.type == "progress" and message.data["stage"] == "started":
                        call.started = True
                    elif message.type == "progress" and message.data["stage"] == "done":
                        call.result = message.data["result"]  # its post_tool_use hooks may follow
                        call.ran = message.data.get("ran", True)
                    self._post(message)
        self._finish(call)

    def _finish(self, call: _Call) -> None:
        """A call's run is over (its hooks included); a failing Bash call stops the others (the sibling rule)."""
        call.status = "done"
        if call.result is not None:
            self._finished.append(call.id)
        if self._failed is None and self.context.sibling_rule and cancels_siblings(call.tool_use, call.result or {},
                                                                                    call.ran):
            self._failed = sibling_failure(call.tool_use)
            for other in self._calls:
                if other.status == "running":
                    assert other.task is not None
                    other.cancelled = True
                    other.task.cancel()
                    self._end(other, unfinished_progress(other.tool_use, self._failed.text(other.started)))
        if not self._stopped:
            self._start_ready()

    def _end(self, call: _Call, done: ProgressMessage) -> None:
        call.status, call.result = "done", done.data["result"]
        self._finished.append(call.id)
        self._post(done)

    def _post(self, message: ProgressMessage | AttachmentMessage) -> None:
        if not self._discarded:
            self._updates.append(message)
            self._wake.set()

    # -- the checkpoint, and ending early ---------------------------------------

    async def _remaining(self) -> AsyncIterator[ProgressMessage | AttachmentMessage | UserMessage]:
        while self._held and not self._stopped:
            yield self._held.popleft()
        while True:
            if self._updates:
                yield self._updates.popleft()
                continue
            for call in self._calls:  # a call that died of a BaseException (not a tool error) surfaces here
                if call.task is not None and call.task.done() and not call.task.cancelled() \
                        and call.task.exception() is not None:
                    await self._stop()  # the others are stopped and their errors retrieved, not left to the log
                    raise call.task.exception()  # type: ignore[misc]
            if self._stopped or not self._calls:
                return
            if all(call.status == "done" for call in self._calls):
                break
            self._wake.clear()
            await self._wake.wait()
        # calls cancelled by a failing sibling unwind before the results are handed over (Bash: its group is dead)
        await asyncio.gather(*(call.task for call in self._calls if call.task is not None), return_exceptions=True)
        results = {call.id: call.result for call in self._calls if call.result is not None}
        yield tool_results_message([call.tool_use for call in self._calls], results, uuid=self.context.uuid(),
                                   finished=self._finished if self.context.results_as_finished else None)

    async def _stop(self) -> None:
        """End early: no call starts any more; cancel the running ones and wait for them to unwind."""
        self._stopped = True
        tasks = [call.task for call in self._calls if call.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # done ones too: their exceptions are retrieved


class _StopOnClose:
    """``get_remaining_results()``: an async iterator whose ``aclose()`` stops the executor's running calls.

    A plain async generator closed before its first step never runs its
    ``finally``; this one stops the calls however early it is closed.
    """

    def __init__(self, results: AsyncIterator[Any], executor: StreamingToolExecutor) -> None:
        self._results, self._executor = results, executor
        self._finished = False

    def __aiter__(self) -> "_StopOnClose":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._results.__anext__()
        except StopAsyncIteration:
            self._finished = True
            raise

    async def aclose(self) -> None:
        await self._results.aclose()  # type: ignore[attr-defined]
        if not self._finished:
            await self._executor._stop()
