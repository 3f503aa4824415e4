"""Phase 3's attempts: a request that failed is asked again, handed to the fallback model, or kept as far as it came.

The loop (``query.py``) streams one attempt at a time (its ``_stream_model``); this module runs them: after an
attempt that failed, ``recovery.decide_attempt`` decides (pure) and this module applies the step:

* ``retry`` (an overloaded API), after ``recovery.retry_delay`` (an abort cuts the wait short);
* ``fallback``: ``QueryParams.fallback_model`` takes over for the rest of the run (``run.model``) and is asked
  the same request;
* ``resend`` / ``non_streaming``: the streaming fallback sends the same request again, streamed or not;
* ``keep`` / ``resume``: the blocks that finished stay as the response (``endings.attempt_kept``);
* None: nothing is asked again, and the error is left for the loop (``iteration.error``).

What an attempt that is asked again showed is withdrawn (``endings.attempt_withdrawn``: tombstones, a notice),
so nothing of it enters the history. The words are in ``endings``, the decisions in ``recovery``; here only the
order in which they are applied. ``run`` is the ``QueryRun``, ``iteration`` the loop's iteration (its
``broke``, ``partial``, ``executor``, ``started``, ``shown`` describe the attempt that just ended).
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Callable

from . import endings
from .abort import Aborted
from .language import tr
from .partial import one_call_per_id
from .recovery import RecoveryOptions, decide_attempt, failure_of, retry_delay
from .state import Continue

__all__ = ["attempts"]


async def attempts(params: Any, run: Any, iteration: Any,
                   attempt: Callable[[bool], AsyncIterator[Any]]) -> AsyncIterator[Any]:
    """Phase 3: ``attempt(streaming)`` (one request, its events yielded) until one answers, is kept, or nothing
    is asked again; the messages that withdraw or keep a failed attempt, in yield order.

    Ends with ``iteration.aborted`` set (an abort while it streamed, or while it waited to ask again: then nothing
    of the withdrawn attempt is kept), ``iteration.error`` (a failure nothing asks again), a kept response
    (``iteration.transition`` set for ``resume``), or a whole response. ``run.overloads`` and ``run.failures``
    count failed attempts in a row across the run (reset by a whole response and by the fallback).
    """
    streaming = True
    while True:
        async for event in attempt(streaming):
            yield event
        if iteration.aborted:
            return
        if iteration.broke is None:  # a whole response
            run.overloads = run.failures = 0
            return
        error, started = iteration.broke, _started(iteration)
        step = _decide(params, run, iteration, started)
        if step in (None, "keep", "resume"):
            if step != "keep" and iteration.executor is not None:  # no call of it is kept: stop them (the
                await iteration.executor.discard()                 # progress already yielded says what ran)
            if step is None:
                iteration.error = error
                return
            for message in _keep_finished(params, iteration, error, step, started):
                yield message
            return
        for message in await _withdraw(params, run, iteration, error, step):
            yield message
        iteration.new_attempt(None)  # nothing of the withdrawn attempt is kept, whatever comes next
        if step == "fallback":
            run.model, run.overloads, run.failures = params.fallback_model, 0, 0
        streaming = step in ("fallback", "resend") or (streaming and step != "non_streaming")
        try:
            await _pause(params, error, step, run.overloads)
        except Aborted:  # stopped while waiting to ask again
            iteration.aborted = "retry_wait"
            return


def _started(iteration: Any) -> list[str]:
    """The calls of the attempt that had started (the loop's record and the executor's), sorted."""
    executor = iteration.executor
    return sorted(iteration.started | set(executor.started() if executor is not None else ()))


def _decide(params: Any, run: Any, iteration: Any, started: list[str]) -> str | None:
    """Count the failed attempt (``run.overloads``, ``run.failures``) and ask ``recovery.decide_attempt`` what next."""
    finished = iteration.partial.message()
    failure = failure_of(iteration.broke, [block.type for block in finished.content] if finished else [],
                         bool(started))
    run.overloads = run.overloads + 1 if failure.overloaded else 0
    run.failures += 1
    return decide_attempt(failure, overloads=run.overloads, failures=run.failures,
                          has_fallback=params.fallback_model is not None, switched=run.model is params.fallback_model,
                          options=params.recovery, retries=getattr(run.model, "max_retries", None))


async def _pause(params: Any, error: Exception, step: str, overloads: int) -> None:
    """Before asking an overloaded API again, wait ``recovery.retry_delay`` (an abort cuts it short). A broken
    stream, or another model, is asked at once."""
    if step != "retry":
        return
    with params.abort.guard():
        await asyncio.sleep(retry_delay(error, overloads))


def _keep_finished(params: Any, iteration: Any, error: Exception, step: str, started: list[str]) -> list[Any]:
    """The streaming fallback's ``keep`` and ``resume`` (and any attempt a call of which had started): the blocks
    that finished stay as the response (``endings.attempt_kept``). ``keep``: its finished calls run as if the
    response had ended there, those that had started on to their end, once. ``resume``: a note asks the model to
    go on (``streaming_fallback_resume``); the cut call is gone."""
    finished = iteration.partial.message()
    if finished is not None:
        finished, iteration.repeated_ids = one_call_per_id(finished)
    cut = iteration.partial.shown() if iteration.partial.cut_blocks() else None
    messages = iteration.close(endings.attempt_kept(step, error, cut, finished, started, params.deps.uuid,
                                                    params.model.last_request_id))
    if step == "resume":
        iteration.transition = Continue(reason="streaming_fallback_resume", detail=tr("the stream broke; resuming"))
    return messages


async def _withdraw(params: Any, run: Any, iteration: Any, error: Exception, step: str) -> list[Any]:
    """A failed attempt that is asked again: discard its calls, and the messages that withdraw what it showed and
    say what happens (``endings.attempt_withdrawn``). Nothing of the attempt enters the history."""
    limit = (params.recovery or RecoveryOptions()).overloads_before_fallback
    yielded = [*(m.uuid for m in iteration.assistant_messages), *iteration.shown]
    shown = iteration.partial.shown()
    iteration.assistant_messages.clear()
    started = await iteration.executor.discard() if iteration.executor is not None else ()
    fallback = getattr(params.fallback_model, "model", None)
    most = limit if params.fallback_model is not None else getattr(run.model, "max_retries", limit - 1) + 1
    return endings.attempt_withdrawn(step, error, shown, yielded, started, params.deps.uuid, model=run.model.model,
                                     fallback=fallback, switched=run.model is params.fallback_model,
                                     overloads=run.overloads, most=most, failures=run.failures)
