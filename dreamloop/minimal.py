"""agent_loop(): the four-step loop, nothing else (chapter 01).

Call the model; find the ``tool_use`` blocks (none: done); run each into a
``tool_result`` paired by id; append both and go round. It has no streaming
UI, no abort, no limits and no recovery: ``query.py`` is the production form.
Runs unchanged against the offline API and the live one.
"""

from __future__ import annotations

from typing import Any

from anthropic.types import Message, MessageParam

from .tools import ToolUseContext, run_tool_use, tool_schemas

__all__ = ["agent_loop"]


async def agent_loop(model: Any, messages: list[MessageParam], tools: list[Any], *,
                     max_tokens: int = 1024, context: ToolUseContext | None = None) -> Message:
    """Run the four steps until the model asks for no tool; return its last ``Message``.

    ``model``: an ``AnthropicModel`` (its SDK client and model name are used);
    ``messages``: API-shaped ``MessageParam`` dicts, **extended in place**
    with every assistant message and tool_result message, so the caller sees
    the whole conversation; ``tools``: ``Tool`` objects. Tools run with
    ``context`` (default: no permission checks, no workspace). SDK errors
    propagate.
    """
    context = context or ToolUseContext(tools=tools, permission_mode="bypass")
    while True:
        # 1. call the model with the messages and the tool definitions
        async with model.client.messages.stream(
            model=model.model, max_tokens=max_tokens, messages=messages, tools=tool_schemas(tools)
        ) as stream:
            response = await stream.get_final_message()
        # 2. find the tool_use blocks; none means the loop is done
        tool_uses = [block for block in response.content if block.type == "tool_use"]
        if not tool_uses:
            return response
        # 3. run each tool into a tool_result that points back at its tool_use id
        results = [await _run_tool(use, context) for use in tool_uses]
        # 4. append the assistant message and the results, then go round again
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in response.content]})
        messages.append({"role": "user", "content": results})


async def _run_tool(tool_use: Any, context: ToolUseContext) -> dict[str, Any]:
    """One call through the real ``run_tool_use`` (lookup, validation, call); its tool_result block."""
    async for progress in run_tool_use(tool_use, context):
        if progress.data["stage"] == "done":
            return progress.data["result"]
    raise RuntimeError("run_tool_use ended without a result")  # pragma: no cover
