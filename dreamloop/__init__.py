"""dreamloop: the agent loop of a coding agent (``queryLoop()`` of both texts), real and offline by default.

    import dreamloop as dl
    model = dl.offline([dl.reply("Hello!")])          # the in-process Messages API
                                                       # (dl.offline(dl.cassette(path)): a recorded live run)
    run = dl.query(dl.QueryParams(messages="hi", model=model))
    async for event in run: ...
    run.terminal                                       # Terminal(reason='completed', ...)

    dl.texts_loop(messages="hi", model=model, workspace=folder)     # every branch on, as both texts have it
    dl.observed_loop(messages="hi", model=model, workspace=folder)  # as `dreamloop run`: the presets module

Importing has no side effects: nothing is started, read or sent. It is also
cheap: a public name's module is imported the first time the name is used
(``dl.query`` imports ``dreamloop.query``), so a kernel pays only for what its
chapter touches. Every name is listed in ``__all__``, ``dir(dreamloop)`` and
the editor's completion as usual.
"""

import sys
import types
from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # public name: the module that defines it. A new public name is one line here (tests/test_public_api.py pins them).
    # The top level holds what the chapters use; the rest is in its module: the message classes in dl.messages,
    # the events in dl.events, tools' types in dl.tools, the trace in dl.trace, scripted faults in dl.scripts.
    "Allow": "tools",
    "Ask": "tools",
    "AssistantMessage": "messages",
    "AttachmentMessage": "messages",
    "ContextOptions": "context",
    "Continue": "state",
    "Deny": "tools",
    "Hooks": "hooks",
    "QueryDeps": "deps",
    "QueryEngine": "engine",
    "QueryParams": "query",
    "QueryRun": "query",
    "RecoveryOptions": "recovery",
    "State": "state",
    "Terminal": "state",
    "ToolUseContext": "tools",
    "Turn": "scripts",
    "agent_loop": "minimal",
    "builtin_tools": "tools",
    "counting_uuids": "deps",
    "cassette": "fake_api.cassette",
    "import_claude_code": "claude_code",
    "inspect_transcript": "transcript",
    "live": "model",
    "load_hooks": "hooks",
    "normalize_messages_for_api": "messages",
    "observed_loop": "presets",
    "observed_recovery": "presets",
    "offline": "model",
    "print_run": "render",
    "query": "query",
    "reply": "scripts",
    "run_tools": "tools",
    "text": "scripts",
    "texts_loop": "presets",
    "thinking": "scripts",
    "tool": "tools",
    "tool_use": "scripts",
    "user_message": "messages",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    """A public name's module is imported on first use; a submodule (``dl.tools``) too."""
    if name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    else:
        try:
            value = import_module(f".{name}", __name__)
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value  # later uses are plain attribute lookups
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """This package's module type: importing a submodule never hides the public name it shares.

    Python sets ``dreamloop.query`` to the submodule when ``dreamloop.query`` is
    first imported (by anyone); the public ``dl.query`` is the function, as if
    ``from .query import query`` had run here, so that assignment is skipped.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
