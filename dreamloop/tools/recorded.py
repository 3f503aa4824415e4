"""Tools that answer with recorded results: replaying a cassette without running anything.

A ``RecordedTool`` has the recorded definition (name, description,
input_schema, sent exactly as recorded) and answers each call with the result
recorded for the same tool name and input, in recorded order, byte for byte
(content and ``is_error``). Its permission check allows every call: the
recorded result already holds what the person decided. A call with no
recorded result gets an ``is_error`` result saying so. This module knows
nothing about cassette files or HTTP; ``Cassette.tools()`` builds these.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from typing import Any, AsyncIterator

from pydantic import BaseModel, ConfigDict

from .base import BaseTool, Tool, ToolResult, ToolUseContext, find_tool
from .permissions import Allow, PermissionDecision

__all__ = ["NO_RECORDED_RESULT", "RecordedTool", "recorded_tools"]

NO_RECORDED_RESULT = ("[dreamloop replay] No result was recorded for this call (the replay asked for a call the "
                      "recorded run did not make, or made more often).")


class AnyInput(BaseModel):
    """Whatever input the model sent: a recorded tool accepts it as it is."""

    model_config = ConfigDict(extra="allow")


class _Results:
    """The recorded results, by (tool name, input as canonical JSON), each used once, in order."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self._queues: dict[tuple[str, str], deque[dict[str, Any]]] = defaultdict(deque)
        for result in results:
            self._queues[(str(result.get("name")), _canonical(result.get("input")))].append(result)

    def take(self, name: str, input: Any) -> dict[str, Any] | None:
        queue = self._queues.get((name, _canonical(input)))
        return queue.popleft() if queue else None


class RecordedTool(BaseTool):
    """One recorded tool: its definition as sent, and calls answered from the recording.

    ``like``: the tool the run was recorded with (optional): its
    ``is_read_only`` / ``is_concurrency_safe`` decide batching, as they did.
    """

    input_model = AnyInput

    def __init__(self, definition: dict[str, Any], results: _Results, like: Tool | None = None) -> None:
        self.name = str(definition["name"])
        self.description = str(definition.get("description", ""))
        self._definition = definition
        self._results = results
        self._like = like

    def to_api(self) -> dict[str, Any]:
        return dict(self._definition)

    def is_read_only(self, input: Any) -> bool:
        return self._ask_like("is_read_only", input)

    def is_concurrency_safe(self, input: Any) -> bool:
        return self._ask_like("is_concurrency_safe", input)

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        return Allow()  # the recorded result holds the decision taken when it was recorded

    async def call(self, input: Any, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        recorded = self._results.take(self.name, input.model_dump())
        if recorded is None:
            yield ToolResult(NO_RECORDED_RESULT, is_error=True)
        else:
            yield ToolResult(recorded["content"], is_error=bool(recorded.get("is_error")))

    def _ask_like(self, question: str, input: Any) -> bool:
        if self._like is None:
            return False
        try:
            parsed = self._like.input_model.model_validate(input.model_dump())
            return bool(getattr(self._like, question)(parsed))
        except Exception:  # an input the original tool would reject: judged as it was, unsafe
            return False


def recorded_tools(definitions: list[dict[str, Any]], results: list[dict[str, Any]],
                   like: list[Tool] | None = None) -> list[RecordedTool]:
    """One ``RecordedTool`` per definition, sharing the recorded ``results`` (dicts with ``name``,
    ``input``, ``content``, ``is_error``); ``like``: the original tools, matched by name."""
    shared = _Results(results)
    return [RecordedTool(d, shared, find_tool(like or [], str(d["name"]))) for d in definitions]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
