"""dreamloop: the agent loop of a coding agent (Claude Code's queryLoop()), real and offline by default.

    import dreamloop as dl
    model = dl.offline([dl.reply("Hello!")])          # the in-process Messages API
                                                       # (dl.offline(dl.cassette(path)): a recorded live run)
    run = dl.query(dl.QueryParams(messages="hi", model=model))
    async for event in run: ...
    run.terminal                                       # Terminal(reason='completed', ...)

Importing has no side effects: nothing is started, read or sent.
"""

from .abort import AbortController
from .engine import QueryEngine
from .events import Event, RequestStart, StreamEvent
from .fake_api.cassette import cassette
from .hooks import Hooks, load_hooks
from .messages import (
    AssistantMessage,
    AttachmentMessage,
    LoopMessage,
    ProgressMessage,
    SystemMessage,
    TombstoneMessage,
    ToolUseSummaryMessage,
    UserMessage,
    normalize_messages_for_api,
    tool_result_block,
    user_message,
)
from .minimal import agent_loop
from .model import AnthropicModel, live, offline
from .query import QueryParams, QueryRun, query
from .scripts import Fault, Turn, reply, text, thinking, tool_use
from .state import Continue, State, Terminal
from .tools import Allow, Ask, BaseTool, Deny, ToolResult, ToolUseContext, builtin_tools, run_tools, tool
from .trace import Checkpoint, Trace
from .transcript import inspect_transcript

__version__ = "0.1.0"

__all__ = [
    "AbortController",
    "Allow",
    "AnthropicModel",
    "Ask",
    "AssistantMessage",
    "AttachmentMessage",
    "BaseTool",
    "Checkpoint",
    "Continue",
    "Deny",
    "Event",
    "Fault",
    "Hooks",
    "LoopMessage",
    "ProgressMessage",
    "QueryEngine",
    "QueryParams",
    "QueryRun",
    "RequestStart",
    "State",
    "StreamEvent",
    "SystemMessage",
    "Terminal",
    "TombstoneMessage",
    "ToolResult",
    "ToolUseContext",
    "ToolUseSummaryMessage",
    "Trace",
    "Turn",
    "UserMessage",
    "agent_loop",
    "builtin_tools",
    "cassette",
    "inspect_transcript",
    "live",
    "load_hooks",
    "normalize_messages_for_api",
    "offline",
    "query",
    "reply",
    "run_tools",
    "text",
    "thinking",
    "tool",
    "tool_result_block",
    "tool_use",
    "user_message",
]
