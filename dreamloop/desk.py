"""A small disk for a chapter's cells, and where words landed in what the model was sent.

Chapters 03b and 03c watch phase 5 from the model's side: they write a few
files into a fresh workspace (and a home folder with its ``.claude/``), run
the loop on the offline API, then ask, request by request, where a memory
file's rule, a notice or a queued text ended up. ``place()`` makes the disk,
``sent()`` lists the loop's requests as the API received them, and
``where()`` finds words in one of them. This module knows nothing about the
loop: it reads request bodies (the Messages API's JSON) and writes files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .language import tr
from .scratch import scratch_dir

__all__ = ["place", "sent", "where"]


def place(files: Mapping[str, str], prefix: str = "desk-") -> tuple[Path, Path]:
    """A fresh ``(workspace, home)`` pair; each ``files`` entry (relative path -> text) written into the workspace.

    Both are folders of one ``scratch_dir(prefix)`` (``<scratch>/project`` and
    ``<scratch>/home``, ``home/.claude/`` made), so they are removed when the
    process ends, however it ends. Folders a relative path names are made.
    Raises ``ValueError`` for a path that is absolute or leaves the workspace
    (``../x``): nothing is written then.

    >>> workspace, home = place({"pkg/CLAUDE.md": "Helpers have docstrings.\\n"})
    >>> (workspace / "pkg" / "CLAUDE.md").read_text(), (home / ".claude").is_dir()
    ('Helpers have docstrings.\\n', True)
    """
    for name in files:
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts or not parts:
            raise ValueError(f"place(): {name!r} is not a path inside the workspace (relative, no '..')")
    desk = scratch_dir(prefix)
    workspace, home = desk / "project", desk / "home"
    (home / ".claude").mkdir(parents=True)
    workspace.mkdir()
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    return workspace, home


def sent(model: Any) -> list[dict[str, Any]]:
    """The loop's request bodies, in order, as ``model``'s offline API received them.

    ``model`` is an ``offline(...)`` model; a request without tools (a
    compaction's summary request, a tool-use summary's) is left out, so
    request N is the loop's N-th. A request is recorded once it is answered.
    """
    return [request.body for request in model.api.requests if "tools" in request.body]


def where(body: Mapping[str, Any], words: str) -> str:
    """Where ``words`` occur in one request body, each place named, joined by ", "; "-" if nowhere.

    A place is the request's leading reminder (the first block of its first
    message), inside a ``tool_result``, or "message N, block M" (1-based). A
    block matches if its JSON holds the words (so a quote or a newline in them
    must be as JSON writes it). The names follow the reader's language (``tr``).
    """
    places = []
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for j, block in enumerate(blocks):
            if words in json.dumps(block, ensure_ascii=False) or words in json.dumps(block):
                places.append(tr("leading reminder") if (i, j) == (0, 0) else
                              tr("inside a tool_result") if block["type"] == "tool_result" else
                              tr("message {number}, block {block}", number=i + 1, block=j + 1))
    return ", ".join(places) or "-"
