"""Running the tool calls of one assistant message: ``run_tools()`` (the four-step-loop text's ``runTools()``).

Owns the order of execution (``partition_tool_calls``: consecutive
concurrency-safe calls run in parallel, every other call alone), the life of
one call (``run_tool_use``: look up, validate, ``pre_tool_use`` hooks, decide
permission, call, ``post_tool_use`` hooks, turn failures into ``is_error``
results), the sibling rule as ``run_tools()`` applies it (``cancellation.py``
decides), and pairing results with calls by id
(``tool_results_message``). It knows nothing about the model, the loop's
State, or what a particular tool does.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import uuid as _uuid
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, AsyncIterator, Collection, Iterable, Mapping, Sequence

from pydantic import ValidationError

from .. import hooks as _hooks  # a module, not names: hooks.py imports from this package too
from ..errors import HookError
from ..messages import AttachmentMessage, ProgressMessage, UserMessage, block_field, tool_result_block
from .base import Tool, ToolResult, ToolUseContext, find_tool
from .cancellation import INTERRUPTED, NOT_STARTED, USER_INTERRUPT, Unfinished, cancels_siblings, sibling_failure
from .environment import redact
from .permissions import Allow, Deny, decide_permission

__all__ = [
    "ToolBatch",
    "partition_tool_calls",
    "progress_uuid",
    "run_tool_use",
    "run_tools",
    "tool_results_message",
    "tool_schemas",
    "unfinished_progress",
]


@dataclass(frozen=True)
class ToolBatch:
    """A run of calls executed together (one ``Batch`` of ``partition_tool_calls``).

    ``concurrency_safe``: the calls run in parallel; otherwise the batch holds
    exactly one call. ``tool_uses`` keep their call order.
    """

    concurrency_safe: bool
    tool_uses: tuple[Any, ...]


def partition_tool_calls(tool_uses: Iterable[Any], tools: list[Tool]) -> list[ToolBatch]:
    """Split calls into batches, in order (dreamloop's design: the four-step-loop text leaves the order of
    calls to a later article).

    Consecutive calls whose tool says ``is_concurrency_safe(input)`` form one
    batch; any other call (unsafe, unknown tool, invalid input, or a check
    that raised) is a batch of its own. ``[R, R, W, R]`` becomes
    ``[[R, R], [W], [R]]``.
    """
    batches: list[ToolBatch] = []
    for tool_use in tool_uses:
        safe = _is_concurrency_safe(tool_use, tools)
        if safe and batches and batches[-1].concurrency_safe:
            batches[-1] = ToolBatch(True, batches[-1].tool_uses + (tool_use,))
        else:
            batches.append(ToolBatch(safe, (tool_use,)))
    return batches


async def run_tools(
    tool_uses: Iterable[Any], context: ToolUseContext,
) -> AsyncIterator[ProgressMessage | AttachmentMessage | UserMessage]:
    """Run one assistant message's tool calls; yield progress, then one user message of results.

    ``tool_uses``: the message's ``tool_use`` blocks in order (the SDK's
    ``ToolUseBlock``, or dicts with ``id``, ``name``, ``input``). Batches from
    ``partition_tool_calls`` run in order; the calls of a parallel batch run
    as asyncio tasks (at most ``context.max_concurrency`` at once).

    Yields ``ProgressMessage``s as things happen, in completion order: per
    call ``{"stage": "started"}``, any ``{"stage": "progress", ...}``, and
    ``{"stage": "done", "result": <tool_result block>}`` (a call that never
    started gets only its ``done``); with hooks (``context.hooks``) also their
    ``AttachmentMessage``s (see ``run_tool_use``). Last, one ``UserMessage``
    whose content is every ``tool_result`` block in *call* order
    (``source_tool_use_ids`` likewise). Nothing to run: yields nothing.

    Last, with ``context.results_as_finished``, the results are listed in the order the
    calls finished (the four-step-loop text has concurrent calls yield their results as
    they complete) instead of call order.

    The sibling rule, with ``context.sibling_rule`` on (``cancels_siblings``): when a
    Bash call's result is an error, the calls still running beside it are cancelled and
    the later ones never start; each gets an ``is_error`` result naming the failed call.

    Never raises for a tool's failure: unknown tool, bad input, denial and
    exceptions become ``is_error`` results (a Python hook that raises is not a
    tool's failure: ``HookError`` propagates). Cancelling the task that iterates
    this cancels the running calls (Bash kills its process group) and the
    ``CancelledError`` propagates; close the transcript then with
    ``tool_results_message(tool_uses, results_so_far, started=started_ids)``.

    Example::

        async for message in run_tools(assistant_tool_uses(reply), context):
            if message.type == "user":
                history.append(message)        # the results, in call order
    """
    tool_uses = list(tool_uses)
    if not tool_uses:
        return
    by_id = {block_field(tool_use, "id"): tool_use for tool_use in tool_uses}
    results: dict[str, dict[str, Any]] = {}
    failed: Unfinished | None = None  # set once a Bash call failed: nothing else starts
    for batch in partition_tool_calls(tool_uses, context.tools):
        if failed is not None:
            for tool_use in batch.tool_uses:
                message = unfinished_progress(tool_use, failed.not_started)
                results[message.tool_use_id] = message.data["result"]
                yield message
            continue
        if batch.concurrency_safe and len(batch.tool_uses) > 1:
            messages = _run_parallel(batch.tool_uses, context)
        else:
            messages = run_tool_use(batch.tool_uses[0], context)
        async with aclosing(messages):
            async for message in messages:
                if message.type == "progress" and message.data["stage"] == "done":
                    result = results[message.tool_use_id] = message.data["result"]
                    if failed is None and context.sibling_rule and cancels_siblings(
                            by_id[message.tool_use_id], result, message.data.get("ran", True)):
                        failed = sibling_failure(by_id[message.tool_use_id])
                yield message
    yield tool_results_message(tool_uses, results, uuid=context.uuid(),
                               finished=list(results) if context.results_as_finished else None)


async def run_tool_use(tool_use: Any, context: ToolUseContext) -> AsyncIterator[ProgressMessage | AttachmentMessage]:
    """Run one call and yield its progress, with ``{"stage": "done", "result": block}`` once it has a result.

    The four-step-loop text's ``runToolUse()``: find the tool (unknown → an
    ``is_error`` result with the call's id, ``"Error: No such tool available:
    NAME"``), refuse an input that is not a JSON object (the model's JSON did not
    parse, or was an array, a string...: never run), validate the input against
    ``input_model`` (``"InputValidationError: field: message"``), run the
    ``pre_tool_use`` hooks (``context.hooks``; their deny is the result, their
    allow skips the prompt, their ``updated_input`` is validated again), decide
    permission (``decide_permission``; a ``Deny`` → its reason;
    ``Allow(updated_input)`` → the new input, validated again), then iterate
    ``tool.call`` for at most ``context.tool_timeout_s`` seconds; after a call
    that ran, the ``post_tool_use`` hooks. Hook records and a
    ``hook_additional_context`` attachment (what the hooks tell the model) are
    yielded as ``AttachmentMessage``s; a ``post_tool_use`` hook's context also
    goes inside the call's result (a ``<system-reminder>`` appended to its
    content), so the ``done`` progress comes after the ``post_tool_use`` hooks
    ran. Every failure ends as an ``is_error`` block with the original id; a
    result never has empty content (it says what happened instead); only
    cancellation, ``HookError`` (a Python hook's own bug) and other
    ``BaseException`` propagate. If the abort signal has already fired, the call
    never starts: only its ``done`` is yielded, with ``NOT_STARTED``.
    """
    tool_use_id, name = block_field(tool_use, "id"), block_field(tool_use, "name")
    raw_input = block_field(tool_use, "input")
    if context.abort.aborted:
        yield unfinished_progress(tool_use, NOT_STARTED)
        return
    seq = itertools.count()
    yield ProgressMessage(uuid=progress_uuid(tool_use_id, next(seq)), tool_use_id=tool_use_id,
                          data={"stage": "started", "name": name, "input": raw_input})
    tool = find_tool(context.tools, name)
    result: ToolResult | None = None
    ran = False  # did tool.call start? (not: refused by validation, a hook or permission)
    if tool is None:
        result = ToolResult(f"Error: No such tool available: {name}", is_error=True)
    elif not isinstance(raw_input, dict):
        result = ToolResult(_not_an_object(name, raw_input), is_error=True)
    else:
        deadline = asyncio.get_running_loop().time() + context.tool_timeout_s
        timer: asyncio.Timeout | None = None
        try:
            async with aclosing(_call_tool(tool, tool_use_id, raw_input, context)) as items:
                while True:
                    try:
                        if result is None:  # the tool's time limit (hooks after the result keep their own)
                            async with (timer := asyncio.timeout_at(deadline)):  # the await only, never a yield
                                item = await anext(items)
                        else:
                            item = await anext(items)
                    except StopAsyncIteration:
                        break
                    if item is _CALLING:
                        ran = True
                    elif isinstance(item, ToolResult):  # the result; post_tool_use hooks run before it is done
                        result = item
                    elif isinstance(item, AttachmentMessage):
                        if result is not None and item.attachment.get("type") == "hook_additional_context":
                            result = _with_hook_context(result, item.attachment.get("content") or [])
                        yield item
                    else:
                        data = {**item, "stage": "progress", "name": name}
                        yield ProgressMessage(uuid=progress_uuid(tool_use_id, next(seq)), tool_use_id=tool_use_id,
                                              data=data)
            if result is None:
                raise RuntimeError(f"{name}.call ended without yielding a ToolResult")
            if ran and not result.is_error and context.result_note is not None:
                result = _with_hook_context(result, [note] if (note := context.result_note(name, raw_input)) else [])
            yield _done(tool_use_id, name, result, progress_uuid(tool_use_id, next(seq)), ran, context.secrets)
            return
        except HookError:
            raise
        except Exception as exc:  # a tool's failure is a result the model reads; CancelledError passes
            if result is not None:
                raise
            if isinstance(exc, TimeoutError) and timer is not None and timer.expired():
                result = ToolResult(f"Error: {name} did not finish within {context.tool_timeout_s:g} s "
                                    "(the tool time limit) and was stopped.", is_error=True)
            else:
                result = ToolResult(f"Error: {type(exc).__name__}: {exc}", is_error=True)
    yield _done(tool_use_id, name, result, progress_uuid(tool_use_id, next(seq)), ran, context.secrets)


def _redacted(content: Any, secrets: tuple[str, ...]) -> Any:
    """A result's content with the kit's known credentials redacted (text and text blocks)."""
    if isinstance(content, str):
        return redact(content, secrets)
    return [{**b, "text": redact(b["text"], secrets)} if isinstance(b, dict) and isinstance(b.get("text"), str)
            else b for b in content]


def _with_hook_context(result: ToolResult, lines: list[str]) -> ToolResult:
    """The result with what a ``post_tool_use`` hook tells the model appended inside it, as a
    ``<system-reminder>`` (where Claude Code 2.1.332 puts it: scenario ``hook_post_tool_use_context``);
    ``context.result_note``'s text goes there too (a nested memory file: scenario ``nested_memory_file``)."""
    if not lines:
        return result
    note = "<system-reminder>\n" + "\n".join(map(str, lines)) + "\n</system-reminder>"
    content = result.content
    if isinstance(content, list):
        content = [*content, {"type": "text", "text": note}]
    else:
        content = f"{content}\n\n{note}" if content.strip() else note
    return ToolResult(content, is_error=result.is_error)


def _done(tool_use_id: str, name: str, result: ToolResult, uuid: str, ran: bool,
          secrets: tuple[str, ...] = ()) -> ProgressMessage:
    """The ``done`` progress: ``result`` (the tool_result block) and ``ran`` (whether ``tool.call`` started)."""
    content = _redacted(_non_empty(result.content, name, result.is_error), secrets)
    block = tool_result_block(tool_use_id, content, is_error=result.is_error)
    return ProgressMessage(uuid=uuid, tool_use_id=tool_use_id,
                           data={"stage": "done", "name": name, "result": block, "ran": ran})


def tool_results_message(
    tool_uses: Iterable[Any], results: Mapping[str, dict[str, Any]], missing: str | Unfinished = USER_INTERRUPT,
    *, started: Collection[str] = (), uuid: str | None = None, finished: Sequence[str] | None = None,
) -> UserMessage:
    """The user message answering ``tool_uses``: one ``tool_result`` per call, in call order.

    ``results`` maps ``tool_use_id`` → ``tool_result`` block (e.g. collected
    from the ``"done"`` progress so far); a call without one gets an
    ``is_error`` block, like the four-step-loop text's ``yieldMissingToolResultBlocks()``,
    so the transcript stays valid after an interrupt or a model error. Its
    text is ``missing``: a string for every such call, or an ``Unfinished``
    pair, whose ``running`` text goes to the calls in ``started`` (ids of
    calls that had started) and ``not_started`` to the others (default:
    ``INTERRUPTED`` / ``NOT_STARTED``). ``finished``: ids in the order the calls
    finished; given, those results come first in that order, the rest after them in
    call order (None: call order). Raises ``ValueError`` if ``tool_uses`` is empty.
    """
    ids = [block_field(tool_use, "id") for tool_use in tool_uses]
    if not ids:
        raise ValueError("tool_results_message() needs at least one tool_use to answer")
    if finished is not None:
        first = [i for i in dict.fromkeys(finished) if i in ids]
        ids = [*first, *(i for i in ids if i not in first)]

    def unanswered(i: str) -> dict[str, Any]:
        text = missing.text(i in started) if isinstance(missing, Unfinished) else missing
        return tool_result_block(i, text if text.strip() else INTERRUPTED, is_error=True)  # never an empty error

    blocks = [results.get(i) or unanswered(i) for i in ids]
    message = UserMessage(message={"role": "user", "content": blocks}, source_tool_use_ids=tuple(ids))
    return message.model_copy(update={"uuid": uuid}) if uuid else message


def unfinished_progress(tool_use: Any, text: str) -> ProgressMessage:
    """The ``done`` progress of a call that got no result of its own: an ``is_error`` result saying ``text``."""
    tool_use_id = block_field(tool_use, "id")
    block = tool_result_block(tool_use_id, text, is_error=True)
    return ProgressMessage(uuid=progress_uuid(tool_use_id, "unfinished"), tool_use_id=tool_use_id,
                           data={"stage": "done", "name": block_field(tool_use, "name"), "result": block, "ran": False})


_PROGRESS_IDS = _uuid.UUID("5b1f3c2e-8d47-4a6b-9c0e-7f2a1d3e4b5c")


def progress_uuid(tool_use_id: str, seq: int | str) -> str:
    """The uuid of a call's ``seq``-th progress message: a uuid5 of the call's id and ``seq``.

    Progress is UI only and never enters the State, so its ids are derived
    from the call rather than drawn from ``ToolUseContext.uuid``: however
    progress interleaves with the stream (streaming tool execution on or
    off), the ids of the State's messages stay the same.
    """
    return str(_uuid.uuid5(_PROGRESS_IDS, f"{tool_use_id}/{seq}"))


def tool_schemas(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """The request's ``tools`` array: ``tool.to_api()`` for each, in order.

    Raises ``ValueError`` on duplicate names (the API would answer 400).
    """
    params = [t.to_api() for t in tools]
    names = [p["name"] for p in params]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate tool names: {', '.join(duplicates)}")
    return params


# ---------------------------------------------------------------------------
# One call: validate → permission → call


_CALLING = object()
"""What ``_call_tool`` yields just before it calls the tool: the call ran (the sibling rule needs it)."""


async def _call_tool(tool: Tool, tool_use_id: str, raw_input: Any,
                     context: ToolUseContext) -> AsyncIterator[dict[str, Any] | ToolResult | AttachmentMessage]:
    try:
        parsed = tool.input_model.model_validate(raw_input)
    except ValidationError as exc:
        yield ToolResult(_validation_message(exc), is_error=True)
        return
    hook_decision = None
    if context.hooks is not None:
        outcome = await _pre_tool_use(tool, tool_use_id, parsed, context)
        for record in outcome.records:
            yield record
        if outcome.stopped:
            yield ToolResult(f"Not run: {outcome.stop_reason}", is_error=True)
            return
        hook_decision = _hooks.permission_from_hook(outcome)
        updated = outcome.decision.updated_input
        if updated is not None and not isinstance(hook_decision, Deny):
            try:
                parsed = tool.input_model.model_validate(updated)
            except ValidationError as exc:
                yield ToolResult(f"{outcome.hook_name} hook's updatedInput: {_validation_message(exc)}", is_error=True)
                return
    decision = await decide_permission(tool, parsed, context, hook_decision)
    if not isinstance(decision, Allow):
        yield ToolResult(decision.reason, is_error=True)
        return
    if decision.updated_input is not None:
        try:
            parsed = tool.input_model.model_validate(decision.updated_input)
        except ValidationError as exc:
            yield ToolResult(_validation_message(exc), is_error=True)
            return
    result = None
    yield _CALLING  # from here on the call may have effects
    produced = tool.call(parsed, context.for_call(tool_use_id))
    if inspect.isawaitable(produced):  # a plain `async def call` that returns its result
        result = ToolResult.of(await produced)
    else:
        async with aclosing(produced) as items:
            async for item in items:
                if isinstance(item, ToolResult):
                    result = item
                    break
                if not isinstance(item, dict):
                    kind = type(item).__name__
                    raise TypeError(f"{tool.name}.call yielded {kind}; expected a progress dict or a ToolResult")
                yield item
    if result is None:
        return
    yield result
    if context.hooks is not None:
        for message in await _post_tool_use(tool, tool_use_id, parsed, result, context):
            yield message


def _hook_ids(tool_use_id: str) -> Any:
    """Ids for the messages a call's hooks make, derived from the call like ``progress_uuid``: they never
    depend on when the call ran (with streaming tool execution, while the model still streams)."""
    counter = itertools.count()
    return lambda: progress_uuid(tool_use_id, f"hook-{next(counter)}")


async def _pre_tool_use(tool: Tool, tool_use_id: str, parsed: Any, context: ToolUseContext) -> _hooks.HookOutcome:
    hooks = context.hooks
    input = hooks.input("pre_tool_use", workspace=context.workspace, permission_mode=context.permission_mode,
                        tool_name=tool.name, tool_input=parsed.model_dump(mode="json", exclude_unset=True),
                        tool_use_id=tool_use_id)
    return await _hooks.run_hooks(hooks, input, value=tool.name, tool_use_id=tool_use_id,
                                  uuid=_hook_ids(f"{tool_use_id}/pre"))


async def _post_tool_use(tool: Tool, tool_use_id: str, parsed: Any, result: ToolResult,
                         context: ToolUseContext) -> list[AttachmentMessage]:
    """The post_tool_use records, then what they tell the model (it goes with this call's result)."""
    hooks = context.hooks
    input = hooks.input("post_tool_use", workspace=context.workspace, permission_mode=context.permission_mode,
                        tool_name=tool.name, tool_input=parsed.model_dump(mode="json", exclude_unset=True),
                        tool_use_id=tool_use_id, tool_response=result.content, is_error=result.is_error)
    ids = _hook_ids(f"{tool_use_id}/post")
    outcome = await _hooks.run_hooks(hooks, input, value=tool.name, tool_use_id=tool_use_id, uuid=ids)
    context_message = _hooks.post_tool_use_context(outcome, ids, tool_use_id, in_tool_result=True)
    return [*outcome.records, *([context_message] if context_message else [])]


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "input"
        parts.append(f"{where}: {error['msg']}")
    return "InputValidationError: " + "; ".join(parts)


def _is_concurrency_safe(tool_use: Any, tools: list[Tool]) -> bool:
    tool = find_tool(tools, block_field(tool_use, "name"))
    if tool is None:
        return False
    try:
        parsed = tool.input_model.model_validate(block_field(tool_use, "input"))
        return bool(tool.is_concurrency_safe(parsed))
    except Exception:  # dreamloop's choice: a call we cannot judge runs alone
        return False


def _non_empty(content: str | list[dict[str, Any]], name: str, is_error: bool) -> str | list[dict[str, Any]]:
    """``content`` without blank text blocks at any depth; if nothing is left, a text saying what happened.

    The API rejects an ``is_error`` result with empty content, and empty text
    blocks anywhere (field case F12); a failure never reads as "completed".
    """
    if isinstance(content, list):
        content = _without_blank_text(content)
    if (isinstance(content, str) and content.strip()) or (isinstance(content, list) and content):
        return content
    return f"({name} failed with no error message)" if is_error else f"({name} completed with no output)"


def _without_blank_text(blocks: list[Any]) -> list[Any]:
    kept = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "text" and not str(block.get("text", "")).strip():
            continue
        if isinstance(block, dict) and isinstance(block.get("content"), list):  # e.g. a search_result's own blocks
            block = {**block, "content": _without_blank_text(block["content"])}
        kept.append(block)
    return kept


def _not_an_object(name: str, raw_input: Any) -> str:
    if isinstance(raw_input, str):
        sent = f"text that is not a JSON object: {raw_input[:300]!r}"
    else:
        kind = {list: "array", bool: "boolean", int: "number", float: "number", type(None): "null"}.get(
            type(raw_input), type(raw_input).__name__)
        sent = f"a JSON {kind}: {json.dumps(raw_input)[:300]}"
    return f"Error: {name} was not run: its input must be a JSON object, but the model sent {sent}"


# ---------------------------------------------------------------------------
# A parallel batch: one task per call, progress merged in completion order


async def _run_parallel(tool_uses: tuple[Any, ...],
                        context: ToolUseContext) -> AsyncIterator[ProgressMessage | AttachmentMessage]:
    queue: asyncio.Queue[ProgressMessage | AttachmentMessage | None] = asyncio.Queue()
    slots = asyncio.Semaphore(context.max_concurrency)

    async def pump(tool_use: Any) -> None:
        try:
            async with slots:
                async with aclosing(run_tool_use(tool_use, context)) as messages:
                    async for message in messages:
                        queue.put_nowait(message)
        finally:
            queue.put_nowait(None)  # this call is over, however it ended

    tasks = {block_field(t, "id"): asyncio.create_task(pump(t), name=f"tool {block_field(t, 'id')}") for t in tool_uses}
    started: set[str] = set()
    done: set[str] = set()
    try:
        remaining = len(tasks)
        while remaining:
            message = await queue.get()
            if message is None:
                remaining -= 1
                for task in tasks.values():  # a BaseException in a call (not a tool error) surfaces here
                    if task.done() and not task.cancelled() and task.exception() is not None:
                        raise task.exception()  # type: ignore[misc]
                continue
            stage = message.data["stage"] if message.type == "progress" else None  # else a hook's attachment
            if stage == "started":
                started.add(message.tool_use_id)
            yield message
            if stage != "done":
                continue
            done.add(message.tool_use_id)
            failed = next(t for t in tool_uses if block_field(t, "id") == message.tool_use_id)
            if context.sibling_rule and cancels_siblings(failed, message.data["result"],
                                                         message.data.get("ran", True)):
                async for stopped in _stop_siblings(tool_uses, tasks, queue, started, done, sibling_failure(failed)):
                    yield stopped
                return
    finally:
        # Reached on completion, on cancellation of the consumer, or on aclose():
        # stop whatever still runs and wait for it to unwind.
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)


async def _stop_siblings(tool_uses: tuple[Any, ...], tasks: dict[str, asyncio.Task], queue: asyncio.Queue,
                         started: set[str], done: set[str],
                         why: Unfinished) -> AsyncIterator[ProgressMessage | AttachmentMessage]:
    """The sibling rule in a parallel batch: cancel the calls still running, answer each in call order.

    The failed call itself finishes (its ``post_tool_use`` hooks run); what finished while the others
    were being cancelled keeps its real result.
    """
    for ident, task in tasks.items():
        if ident not in done:
            task.cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)
    while not queue.empty():
        message = queue.get_nowait()
        if message is None:
            continue
        if message.type == "progress":
            if message.tool_use_id in done:
                continue
            started.add(message.tool_use_id)
            if message.data["stage"] == "done":
                done.add(message.tool_use_id)
        yield message
    for tool_use in tool_uses:
        ident = block_field(tool_use, "id")
        if ident not in done:
            yield unfinished_progress(tool_use, why.text(ident in started))
