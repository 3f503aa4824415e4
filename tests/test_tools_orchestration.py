"""run_tools(): partitioning, result order (F2), failures as results, cancellation."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from anthropic.types import ToolUseBlock
from pydantic import BaseModel

from dreamloop.abort import Aborted
from dreamloop.messages import ProgressMessage, UserMessage
from dreamloop.tools import (
    INTERRUPTED,
    NOT_STARTED,
    BaseTool,
    FunctionTool,
    ToolResult,
    ToolUseContext,
    partition_tool_calls,
    run_tools,
    tool,
    tool_results_message,
    tool_schemas,
)


class Nap(BaseModel):
    seconds: float = 0.0
    text: str = ""


def make_tools(log: list[str]):
    """A concurrency-safe `read` and an unsafe `write`, both sleeping and logging start/end."""

    def sleeper(name: str, read_only: bool):
        async def sleep_then_echo(input: Nap) -> str:
            log.append(f"start {input.text}")
            await asyncio.sleep(input.seconds)
            log.append(f"end {input.text}")
            return input.text

        return FunctionTool(sleep_then_echo, Nap, name=name, description="Sleep, then echo.", read_only=read_only)

    return [sleeper("read", read_only=True), sleeper("write", read_only=False)]


def use(id: str, name: str, **input) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id=id, name=name, input=input)


async def collect(tool_uses, context) -> tuple[list[ProgressMessage], UserMessage]:
    messages = [m async for m in run_tools(tool_uses, context)]
    assert all(isinstance(m, ProgressMessage) for m in messages[:-1])
    assert isinstance(messages[-1], UserMessage)
    return messages[:-1], messages[-1]


def blocks(message: UserMessage) -> list[dict]:
    return message.message["content"]


def test_partition_groups_consecutive_safe_calls():
    tools = make_tools([])
    calls = [
        use("1", "read"), use("2", "read"), use("3", "write"), use("4", "read"),
        use("5", "nope"), use("6", "read", seconds="bad"), use("7", "read"), use("8", "read"),
    ]  # fmt: skip
    batches = partition_tool_calls(calls, tools)
    assert [(b.concurrency_safe, [c.id for c in b.tool_uses]) for b in batches] == [
        (True, ["1", "2"]),
        (False, ["3"]),
        (True, ["4"]),
        (False, ["5"]),  # unknown tool: alone
        (False, ["6"]),  # invalid input: alone
        (True, ["7", "8"]),
    ]


async def test_batches_run_in_order_safe_ones_in_parallel():
    log: list[str] = []
    context = ToolUseContext(tools=make_tools(log), permission_mode="bypass")
    calls = [
        use("1", "read", seconds=0.05, text="r1"),
        use("2", "read", seconds=0.01, text="r2"),
        use("3", "write", seconds=0.01, text="w3"),
        use("4", "read", seconds=0.01, text="r4"),
    ]
    _, message = await collect(calls, context)
    # r1 and r2 overlap; w3 starts only after both ended; r4 after w3.
    assert log == ["start r1", "start r2", "end r2", "end r1", "start w3", "end w3", "start r4", "end r4"]
    assert [b["content"] for b in blocks(message)] == ["r1", "r2", "w3", "r4"]


async def test_f2_results_in_call_order_progress_in_completion_order():
    context = ToolUseContext(tools=make_tools([]))
    delays = {"T1": 0.04, "T2": 0.13, "T3": 0.0, "T4": 0.09}  # finish T3, T1, T4, T2
    calls = [use(i, "read", seconds=s, text=f"contents of {i}") for i, s in delays.items()]
    progress, message = await collect(calls, context)

    assert [p.tool_use_id for p in progress if p.data["stage"] == "started"] == ["T1", "T2", "T3", "T4"]
    done = [p for p in progress if p.data["stage"] == "done"]
    assert [p.tool_use_id for p in done] == ["T3", "T1", "T4", "T2"]
    assert message.source_tool_use_ids == ("T1", "T2", "T3", "T4")
    assert blocks(message) == [
        {"type": "tool_result", "tool_use_id": i, "content": f"contents of {i}"} for i in ("T1", "T2", "T3", "T4")
    ]
    assert [p.data["result"] for p in done] == [blocks(message)[i] for i in (2, 0, 3, 1)]


async def test_parallel_batch_is_parallel():
    context = ToolUseContext(tools=make_tools([]))
    start = time.perf_counter()
    await collect([use(f"T{i}", "read", seconds=0.2) for i in range(4)], context)
    assert time.perf_counter() - start < 0.7  # one after another would take 0.8 s


async def test_max_concurrency_limits_a_batch():
    log: list[str] = []
    context = ToolUseContext(tools=make_tools(log), max_concurrency=1)
    await collect([use("1", "read", seconds=0.01, text="a"), use("2", "read", text="b")], context)
    assert log == ["start a", "end a", "start b", "end b"]


async def test_unknown_tool_is_an_error_result_with_the_original_id():
    context = ToolUseContext(tools=make_tools([]))
    _, message = await collect([use("toolu_9", "Teleport", where="moon")], context)
    assert blocks(message) == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_9",
            "content": "Error: No such tool available: Teleport",
            "is_error": True,
        }
    ]


async def test_bad_input_names_the_field():
    class ReadInput(BaseModel):
        file_path: str
        limit: int | None = None

    @tool(ReadInput, read_only=True)
    async def read_file(input: ReadInput) -> str:
        return "never"

    context = ToolUseContext(tools=[read_file])
    _, message = await collect([use("1", "read_file"), use("2", "read_file", file_path="a", limit="many")], context)
    first, second = blocks(message)
    assert first["is_error"] and first["content"] == "InputValidationError: file_path: Field required"
    assert second["is_error"] and second["content"].startswith("InputValidationError: limit: ")


async def test_tool_exception_becomes_error_result():
    @tool(Nap, read_only=True)
    async def explode(input: Nap) -> str:
        raise RuntimeError("boom")

    context = ToolUseContext(tools=[explode, *make_tools([])])
    _, message = await collect([use("1", "explode"), use("2", "read", text="fine")], context)
    assert blocks(message)[0] == {
        "type": "tool_result", "tool_use_id": "1", "content": "Error: RuntimeError: boom", "is_error": True
    }  # fmt: skip
    assert blocks(message)[1]["content"] == "fine"


async def test_progress_from_a_generator_tool_and_empty_output():
    @tool(Nap, read_only=True)
    async def count(input: Nap):
        for n in range(3):
            yield {"step": n}
        yield ToolResult("")

    context = ToolUseContext(tools=[count])
    progress, message = await collect([use("1", "count")], context)
    assert [p.data for p in progress] == [
        {"stage": "started", "name": "count", "input": {}},
        {"step": 0, "stage": "progress", "name": "count"},
        {"step": 1, "stage": "progress", "name": "count"},
        {"step": 2, "stage": "progress", "name": "count"},
        {"stage": "done", "name": "count", "result": blocks(message)[0], "ran": True},
    ]
    assert blocks(message)[0]["content"] == "(count completed with no output)"


async def test_a_call_without_result_is_an_error():
    @tool(Nap, read_only=True)
    async def silent(input: Nap):
        yield {"note": "nothing to say"}

    _, message = await collect([use("1", "silent")], ToolUseContext(tools=[silent]))
    assert blocks(message)[0]["is_error"]
    assert "without yielding a ToolResult" in blocks(message)[0]["content"]


async def test_dict_tool_uses_work_too():
    context = ToolUseContext(tools=make_tools([]))
    _, message = await collect([{"id": "a", "name": "read", "input": {"text": "x"}}], context)
    assert blocks(message)[0]["content"] == "x"


async def test_nothing_to_run_yields_nothing():
    assert [m async for m in run_tools([], ToolUseContext())] == []


async def test_aborted_before_start_runs_nothing():
    log: list[str] = []
    context = ToolUseContext(tools=make_tools(log))
    context.abort.abort("stop")
    _, message = await collect([use("1", "read", text="a"), use("2", "write", text="b")], context)
    assert log == []
    assert [b["content"] for b in blocks(message)] == [NOT_STARTED, NOT_STARTED]


@pytest.mark.parametrize("parallel", [True, False])
async def test_cancelling_the_consumer_cancels_the_running_tool(parallel):
    cancelled = asyncio.Event()

    @tool(Nap, read_only=True, concurrency_safe=parallel)
    async def slow(input: Nap) -> str:
        try:
            await asyncio.sleep(input.seconds)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return input.text

    context = ToolUseContext(tools=[slow], permission_mode="bypass")
    calls = [use("T1", "slow", seconds=0.0, text="a"), use("T2", "slow", seconds=30, text="b")]
    results: dict[str, dict] = {}
    first_done = asyncio.Event()

    async def consume():
        async for message in run_tools(calls, context):
            if message.type == "progress" and message.data["stage"] == "done":
                results[message.tool_use_id] = message.data["result"]
                first_done.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_done.wait(), 1)
    await asyncio.sleep(0.01)  # T2 is sleeping now
    start = time.perf_counter()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set() and time.perf_counter() - start < 1.0  # T2 would sleep 30 s

    message = tool_results_message(calls, results, started={"T1", "T2"})
    assert message.source_tool_use_ids == ("T1", "T2")
    assert blocks(message) == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "a"},
        {"type": "tool_result", "tool_use_id": "T2", "content": INTERRUPTED, "is_error": True},
    ]


def test_tool_results_message_custom_missing_text_and_empty():
    message = tool_results_message([use("A", "x"), use("B", "y")], {}, missing="model error")
    assert [b["content"] for b in blocks(message)] == ["model error", "model error"]
    with pytest.raises(ValueError):
        tool_results_message([], {})


def test_tool_schemas_rejects_duplicate_names():
    read, write = make_tools([])
    assert [s["name"] for s in tool_schemas([read, write])] == ["read", "write"]
    with pytest.raises(ValueError, match="duplicate tool names: read"):
        tool_schemas([read, read])


async def test_a_base_tool_whose_call_returns_instead_of_yielding():
    class Shout(BaseTool):
        name = "shout"
        description = "Upper-case the text."
        input_model = Nap

        def is_read_only(self, input):
            return True

        async def call(self, input, context):
            return ToolResult(input.text.upper())

    _, message = await collect([use("1", "shout", text="hey")], ToolUseContext(tools=[Shout()]))
    assert blocks(message)[0]["content"] == "HEY"


async def test_f1_abort_while_parallel_tools_run():
    """F1: T1 finished, T2 still running when the Stop button fires: T2 is answered as interrupted."""
    context = ToolUseContext(tools=make_tools([]))
    calls = [use("T1", "read", text="contents of a"), use("T2", "read", seconds=30, text="contents of b")]
    results: dict[str, dict] = {}
    with pytest.raises(Aborted):
        with context.abort.guard():
            async for message in run_tools(calls, context):
                if message.type == "progress" and message.data["stage"] == "done":
                    results[message.tool_use_id] = message.data["result"]
                    # a button callback on another thread, as in a notebook
                    threading.Timer(0.02, context.abort.abort, args=("user pressed Stop",)).start()
    assert context.abort.reason == "user pressed Stop"
    assert blocks(tool_results_message(calls, results, started={"T1", "T2"})) == [
        {"type": "tool_result", "tool_use_id": "T1", "content": "contents of a"},
        {"type": "tool_result", "tool_use_id": "T2", "content": INTERRUPTED, "is_error": True},
    ]


async def test_blocking_tools_leave_the_loop_free_for_the_stop_button():
    """A plain `def` tool runs in a thread: abort lands at once, not when the thread ends."""

    def crunch(input: Nap) -> str:
        time.sleep(input.seconds)
        return "done"

    context = ToolUseContext(tools=[FunctionTool(crunch, Nap, read_only=True)])
    asyncio.get_running_loop().call_later(0.05, context.abort.abort)
    start = time.perf_counter()
    with pytest.raises(Aborted):
        with context.abort.guard():
            async for _ in run_tools([use("T1", "crunch", seconds=2.0)], context):
                pass
    assert time.perf_counter() - start < 1.0  # the thread itself sleeps 2 s
