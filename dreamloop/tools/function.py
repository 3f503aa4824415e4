"""Tools from plain functions: ``FunctionTool`` and the ``@tool`` decorator.

For notebooks and small experiments: a function plus a pydantic input model
becomes a full ``Tool``. It knows nothing about orchestration or permissions
beyond the ``read_only`` flag that ``BaseTool``'s default check reads.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from contextlib import aclosing
from typing import Any, AsyncIterator, Callable

from pydantic import BaseModel

from .base import BaseTool, ToolResult, ToolUseContext

__all__ = ["FunctionTool", "tool"]

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the API's tool-name pattern


class FunctionTool(BaseTool):
    """A ``Tool`` whose ``call`` is a plain function of ``(input)`` or ``(input, context)``.

    ``fn`` may be:

    * an ``async def`` returning a ``str``, a list of content blocks, or a ``ToolResult``;
    * an ``async def`` generator yielding progress dicts and finally a ``ToolResult`` (or a ``str``);
    * a plain ``def`` (blocking is fine: it runs in a worker thread via ``asyncio.to_thread``).

    ``name`` defaults to the function's name, ``description`` to its docstring.
    ``read_only`` (default False) drives the default permission check;
    ``concurrency_safe`` defaults to ``read_only``. Raises ``ValueError`` for a
    name the API would reject.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        input_model: type[BaseModel],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        concurrency_safe: bool | None = None,
    ) -> None:
        self.fn = fn
        self.input_model = input_model
        self.name = name or fn.__name__
        self.description = description if description is not None else (inspect.getdoc(fn) or "")
        self.read_only = read_only
        self.concurrency_safe = read_only if concurrency_safe is None else concurrency_safe
        if not _NAME.match(self.name):
            raise ValueError(f"tool name {self.name!r} must match {_NAME.pattern}")
        self._wants_context = len(inspect.signature(fn).parameters) >= 2

    def is_read_only(self, input: Any) -> bool:
        return self.read_only

    def is_concurrency_safe(self, input: Any) -> bool:
        return self.concurrency_safe

    async def call(self, input: Any, context: ToolUseContext) -> AsyncIterator[dict[str, Any] | ToolResult]:
        args = (input, context) if self._wants_context else (input,)
        if inspect.isasyncgenfunction(self.fn):
            async with aclosing(self.fn(*args)) as items:
                async for item in items:
                    yield item if isinstance(item, dict) else ToolResult.of(item)
            return
        if inspect.iscoroutinefunction(self.fn):
            yield ToolResult.of(await self.fn(*args))
        else:
            yield ToolResult.of(await asyncio.to_thread(self.fn, *args))


def tool(
    input_model: type[BaseModel],
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]:
    """Decorator: turn a function into a ``FunctionTool`` (see there for what ``fn`` may be).

    Example::

        class AddInput(BaseModel):
            a: int
            b: int

        @tool(AddInput, read_only=True)
        async def add(input: AddInput) -> str:
            "Add two integers."
            return str(input.a + input.b)
    """

    def wrap(fn: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            fn, input_model, name=name, description=description, read_only=read_only, concurrency_safe=concurrency_safe
        )

    return wrap

