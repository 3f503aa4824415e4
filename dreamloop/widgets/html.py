"""HTML for loop messages and content blocks, shared by the widgets' panes.

Turns one loop message (user, assistant, system, attachment, progress, ...)
into one escaped HTML fragment: text, ``thinking``, ``tool_use`` (name, id,
JSON input), ``tool_result`` paired with its call's name (``is_error`` in
red), notices and attachments styled apart. Fragments use the ``dl-``
classes of one small stylesheet; ``pane(body)`` adds it, so each
widget value is self-contained (ipywidgets' HTML sets ``innerHTML``, no
sanitizer). Everything from a message is escaped. It knows nothing about
widgets, traces or the loop; callers pass the tool_use id → name map.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any, Iterable, Mapping

from ..hooks import describe_record
from ..language import tr
from ..messages import block_field
from ..tokens import usage_text

__all__ = [
    "COLORS",
    "MAX_CHARS",
    "STYLE",
    "badge",
    "block_html",
    "esc",
    "message_html",
    "message_kind",
    "pane",
    "preview",
    "pretty_json",
    "terminal_html",
    "tool_names",
    "tool_result_html",
    "tool_use_html",
]

MAX_CHARS = 4000
"""Characters of one text or result shown before it is cut (the rest is counted)."""

COLORS = {
    "user": "#2b6cb0",
    "assistant": "#2f855a",
    "tool_use": "#6b46c1",
    "tool_result": "#4a5568",
    "error": "#c53030",
    "thinking": "#718096",
    "system": "#b7791f",
    "attachment": "#805ad5",
    "progress": "#a0aec0",
    "new": "#d69e2e",
}
"""Accent colour per kind of thing (the ``dl-c-KIND`` / ``dl-m-KIND`` / ``dl-f-KIND`` classes);
``error`` is the red of ``is_error``."""

_CSS = (
    ".dl{font-family:var(--jp-ui-font-family,sans-serif);font-size:13px;line-height:1.4;max-width:100%}"
    # a live widget's HTML is a flex item as wide as its longest unbreakable word unless words may break anywhere;
    # the stored copy (no stylesheet) has the inline break-word of pane()
    ".dl *{overflow-wrap:anywhere}"
    ".dl pre.dl-pre{margin:2px 0;padding:0;background:none;white-space:pre-wrap;word-break:break-word;"
    "max-height:18em;overflow:auto;font-family:var(--jp-code-font-family,monospace);font-size:12px}"
    ".dl .dl-mono{font-family:var(--jp-code-font-family,monospace);font-size:12px}"
    ".dl .dl-b{border:1px solid;border-radius:8px;padding:0 6px;margin-right:4px;font-size:11px;"
    "font-family:sans-serif;white-space:nowrap}"
    ".dl .dl-m{border-left:3px solid;padding:2px 8px;margin:2px 0}"
    ".dl .dl-head{font-size:11px}"
    ".dl .dl-dashed{border-left-style:dashed}"
    ".dl .dl-dim{color:#718096}"
    ".dl .dl-small{font-size:12px}"
    ".dl .dl-think{font-style:italic;color:#718096}"
    ".dl .dl-errbox{background:#fff5f5}"
    ".dl .dl-tint-system{background:#fffaf0}"
    ".dl .dl-tint-attachment{background:#faf5ff}"
    ".dl .dl-new{outline:2px solid #d69e2e;margin:4px 0}"
    ".dl .dl-item{margin:4px 0}"
    ".dl .dl-pos{font-size:10px;color:#a0aec0}"
    ".dl .dl-struck{text-decoration:line-through}"
    + "".join(
        f".dl .dl-c-{k}{{color:{c};border-color:{c}}}.dl .dl-m-{k}{{border-left-color:{c}}}"
        f".dl .dl-f-{k}{{background:{c};color:#fff;border-color:{c}}}"
        for k, c in COLORS.items()
    )
)
STYLE = f"<style>{_CSS}</style>"
"""The stylesheet every fragment here relies on (scoped to ``.dl``); ``pane()`` includes it."""


PRE_WRAP = "white-space:pre-wrap;overflow-wrap:break-word"
"""How a ``<pre>`` of a pane wraps, inline on the tag: a sanitiser that drops ``<style>`` (an untrusted notebook's
stored copy) keeps it, so a long line (a scrubbed session's placeholder) wraps instead of pushing the widget
wider than its cell. Only values JupyterLab's sanitiser allows (``overflow-wrap: break-word``, not ``anywhere``)."""

_PRE_STYLED = re.compile(r'<pre class="(dl-pre[^"]*)" style="')
_PRE_BARE = re.compile(r'<pre class="(dl-pre[^"]*)"(?= ?>)')


def pane(body: str) -> str:
    """A self-contained widget value: ``body`` inside ``<div class="dl">``, then the stylesheet.

    The stylesheet goes last so the value's text starts with what a reader sees. Each ``<pre class="dl-pre">``
    gets ``PRE_WRAP`` inline, and the whole value may break a word too long for its line (inline too).
    """
    body = _PRE_STYLED.sub(lambda m: f'<pre class="{m.group(1)}" style="{PRE_WRAP};', body)
    body = _PRE_BARE.sub(lambda m: f'<pre class="{m.group(1)}" style="{PRE_WRAP}"', body)
    return f'<div class="dl" style="overflow-wrap:break-word">{body}</div>{STYLE}'


def esc(value: Any) -> str:
    """``str(value)`` with ``& < > " '`` escaped."""
    return escape(str(value), quote=True)


def badge(label: str, kind: str, *, filled: bool = False) -> str:
    """A small rounded label in the colour of ``kind`` (a ``COLORS`` key).

    ``badge("is_error", "error", filled=True)`` is the red ``is_error`` mark.
    """
    return f'<span class="dl-b {"dl-f-" if filled else "dl-c-"}{kind}">{esc(label)}</span> '


def preview(text: str, max_chars: int = MAX_CHARS) -> str:
    """``text`` cut to ``max_chars`` characters, saying how many were left out (plain text)."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n" + tr("… ({count} more characters)", count=len(text) - max_chars)


def pretty_json(value: Any, *, one_line: int = 80) -> str:
    """JSON for reading: on one line if it fits in ``one_line`` characters, else indented.

    Non-ASCII is kept; what JSON cannot hold is shown by ``repr``.
    """
    try:
        flat = json.dumps(value, ensure_ascii=False, default=_jsonable)
        if len(flat) <= one_line:
            return flat
        return json.dumps(value, indent=2, ensure_ascii=False, default=_jsonable)
    except (TypeError, ValueError):
        return repr(value)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", exclude_none=True)
    return repr(value)


def _pre(text: str, *, cls: str = "", max_chars: int = MAX_CHARS) -> str:
    return f'<pre class="dl-pre{" " + cls if cls else ""}">{esc(preview(text, max_chars))}</pre>'


# ---------------------------------------------------------------------------
# Blocks


def tool_use_html(name: str, tool_use_id: str | None, input: Any, *, max_chars: int = MAX_CHARS) -> str:
    """A ``tool_use`` block: name, id and the input as JSON."""
    ident = f' <span class="dl-dim dl-mono">{esc(tool_use_id)}</span>' if tool_use_id else ""
    return (f'<div>{badge("tool_use", "tool_use")}<b class="dl-mono">{esc(name)}</b>{ident}'
            f"{_pre(pretty_json(input), max_chars=max_chars)}</div>")


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        kind = block_field(block, "type", None)
        if kind == "text":
            parts.append(str(block_field(block, "text", "")))
        elif kind == "image":
            parts.append("[image]")
        else:
            parts.append(pretty_json(block))
    return "\n".join(parts)


def tool_result_html(block: Mapping[str, Any], name: str | None, *, max_chars: int = MAX_CHARS) -> str:
    """A ``tool_result`` block, paired with its call: ``name`` (None: the call is not known).

    An ``is_error`` result is drawn in red with an ``is_error`` badge.
    """
    failed = bool(block.get("is_error"))
    kind = "error" if failed else "tool_result"
    call = esc(tr("for {tool}", tool="\0")).replace("\0", f'<b class="dl-mono">{esc(name)}</b>') if name \
        else esc(tr("for an unknown call"))
    flag = badge("is_error", "error", filled=True) if failed else ""
    ident = f' <span class="dl-dim dl-mono">{esc(block.get("tool_use_id", ""))}</span>'
    body = _pre(_result_text(block.get("content", "")), cls="dl-c-error" if failed else "", max_chars=max_chars)
    frame = f"dl-m dl-m-{kind}" + (" dl-errbox" if failed else "")
    return f'<div class="{frame}">{badge("tool_result", kind)}{flag}{call}{ident}{body}</div>'


def block_html(block: Any, names: Mapping[str, str], *, max_chars: int = MAX_CHARS) -> str:
    """One content block (an SDK block object or an API dict) as HTML.

    ``names`` maps tool_use id → tool name, to pair a ``tool_result`` with its call.
    """
    kind = block_field(block, "type", None)
    if kind == "text":
        return _pre(str(block_field(block, "text", "")), max_chars=max_chars)
    if kind in ("tool_use", "server_tool_use"):
        return tool_use_html(block_field(block, "name", "?"), block_field(block, "id", None),
                             block_field(block, "input", {}),
                             max_chars=max_chars)
    if kind == "tool_result":
        data = block if isinstance(block, Mapping) else block.model_dump(mode="json")
        return tool_result_html(data, names.get(data.get("tool_use_id", "")), max_chars=max_chars)
    if kind == "thinking":
        text = str(block_field(block, "thinking", ""))
        if not text and block_field(block, "signature", None):  # the text was not kept, only its signature
            hidden = esc(tr("(hidden: only its signature was kept)"))
            return f'<div>{badge("thinking", "thinking")}<i class="dl-dim">{hidden}</i></div>'
        return f'<div>{badge("thinking", "thinking")}{_pre(text, cls="dl-think", max_chars=max_chars)}</div>'
    if kind == "redacted_thinking":
        return f'<div>{badge("redacted_thinking", "thinking")}<i class="dl-dim">{esc(tr("(encrypted)"))}</i></div>'
    if kind == "image":
        return f'<div>{badge("image", "user")}</div>'
    data = block if isinstance(block, Mapping) else _jsonable(block)
    return f'<div>{badge(str(kind), "thinking")}{_pre(pretty_json(data), max_chars=max_chars)}</div>'


# ---------------------------------------------------------------------------
# Messages


def message_kind(message: Any) -> str:
    """A short label: ``user``, ``user · tool_result``, ``assistant``, ``system · warning``, ..."""
    kind = message.type
    if kind == "user":
        if message.source_tool_use_ids or _has_tool_result(message.message.get("content")):
            return "user · tool_result"
        return "user · meta" if message.is_meta else "user"
    if kind == "system":
        return f"system · {message.level}"
    if kind == "attachment":
        return f"attachment · {message.attachment.get('type', '?')}"
    return kind


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(block_field(b, "type", None) == "tool_result" for b in content)


def _frame(label: str, kind: str, body: str, *, note: str = "", extra: str = "") -> str:
    head = f'<div class="dl-head dl-c-{kind}"><b>{esc(label)}</b>{note}</div>'
    return f'<div class="dl-m dl-m-{kind}{" " + extra if extra else ""}">{head}{body}</div>'


def message_html(message: Any, names: Mapping[str, str], *, max_chars: int = MAX_CHARS) -> str:
    """One loop message as an HTML fragment (the same message always gives the same bytes).

    ``names``: tool_use id → tool name (see ``tool_names``), used to pair results with calls.
    Needs ``STYLE`` (use ``pane()`` around the fragments).
    """
    kind = message.type
    label = message_kind(message)
    if kind == "assistant":
        api = message.message
        usage = api.usage
        note = (f' <span class="dl-dim">stop_reason={esc(api.stop_reason)} · '
                f"{esc(usage_text(usage))}</span>")
        body = "".join(block_html(b, names, max_chars=max_chars) for b in api.content)
        return _frame(label, "assistant", body, note=note)
    if kind == "user":
        content = message.message.get("content")
        if isinstance(content, str):
            body = _pre(content, max_chars=max_chars)
        else:
            body = "".join(block_html(b, names, max_chars=max_chars) for b in content or [])
        return _frame(label, "user", body, extra="dl-dashed" if message.is_meta else "")
    if kind == "system":
        color = {"error": "error", "warning": "system"}.get(message.level, "user")
        note = f' <span class="dl-dim">{esc(message.subtype)}</span>'
        return _frame(label, color, _pre(message.content, max_chars=max_chars), note=note, extra="dl-tint-system")
    if kind == "attachment" and str(message.attachment.get("type", "")).startswith("hook_"):
        return _hook_html(message.attachment, label, max_chars)
    if kind == "attachment" and "text" in message.attachment:  # phase 5's notices: what the model reads
        said = {k: v for k, v in message.attachment.items() if k not in ("type", "text")}
        if "name" in said:  # the file as the notice names it (workspace-relative); the full path stays in the trace
            said.pop("path", None)
        note = f' <span class="dl-dim">{esc(" · ".join(f"{k}={v}" for k, v in said.items()))}</span>' if said else ""
        body = _pre(str(message.attachment["text"]), max_chars=max_chars)
        return _frame(label, "attachment", body, note=note, extra="dl-dashed dl-tint-attachment")
    if kind == "attachment" and message.attachment.get("type") == "queued_command":  # what the person typed
        note = f' <span class="dl-dim">{esc(tr("origin: queued input"))}</span>'
        body = _pre(str(message.attachment.get("prompt", "")), max_chars=max_chars)
        return _frame(label, "attachment", body, note=note, extra="dl-dashed dl-tint-attachment")
    if kind == "attachment":
        body = _pre(pretty_json(message.attachment), max_chars=max_chars)
        return _frame(label, "attachment", body, extra="dl-dashed dl-tint-attachment")
    if kind == "progress":
        data = {k: v for k, v in message.data.items() if k != "result"}
        body = _pre(pretty_json(data), max_chars=max_chars)
        if "result" in message.data:
            body += tool_result_html(message.data["result"], message.data.get("name"), max_chars=max_chars)
        return _frame(f"progress · {message.data.get('stage', '?')}", "progress", body, extra="dl-dashed")
    if kind == "tombstone":
        shown = getattr(message, "message", None) or {}
        blocks = "".join(_shown_block_html(b, names, max_chars) for b in shown.get("content") or [])
        struck = f'<del class="dl-struck" style="display:block">{blocks}</del>' if blocks else ""
        withdrawn = esc(tr("withdrawn: {uuid}", uuid="\0")).replace(
            "\0", f'<span class="dl-mono">{esc(message.target_uuid)}</span>')
        body = (f'<div class="dl-dim">{withdrawn}</div>'
                f"{_pre(message.reason) if message.reason else ''}{struck}")
        return _frame(label, "thinking", body, extra="dl-dashed")
    if kind == "tool_use_summary":
        return _frame(label, "tool_use", _pre(message.summary, max_chars=max_chars), extra="dl-dashed")
    return _frame(str(kind), "thinking", _pre(pretty_json(_jsonable(message)), max_chars=max_chars))


def _shown_block_html(block: Mapping[str, Any], names: Mapping[str, str], max_chars: int) -> str:
    """A block of a withdrawn response as far as it came (an unfinished tool_use shows its raw JSON)."""
    if block.get("type") == "tool_use" and "partial_json" in block:
        return tool_use_html(str(block.get("name", "?")), block.get("id"), block["partial_json"] + " …",
                             max_chars=max_chars)
    return block_html(block, names, max_chars=max_chars)


def _hook_html(attachment: Mapping[str, Any], label: str, max_chars: int) -> str:
    """A hook record: one line saying what the hook said, then its fields (UI only, except
    ``hook_additional_context``, which the model reads)."""
    to_model = attachment.get("type") == "hook_additional_context"
    note = f' <span class="dl-c-user">{esc(tr("(sent to the model)"))}</span>' if to_model else \
        f' <span class="dl-dim">{esc(tr("(UI only)"))}</span>'
    line = f'<div class="dl-mono">{esc(describe_record(attachment, width=300))}</div>'
    fields = {k: v for k, v in attachment.items() if k not in ("type", "durationMs")}
    return _frame(label, "attachment", line + _pre(pretty_json(fields), max_chars=max_chars), note=note,
                  extra="dl-dashed dl-tint-attachment")


def tool_names(messages: Iterable[Any]) -> dict[str, str]:
    """tool_use id → tool name, from the ``tool_use`` blocks of the assistant messages among ``messages``."""
    names: dict[str, str] = {}
    for message in messages:
        if getattr(message, "type", None) == "assistant":
            for block in message.message.content:
                if block.type in ("tool_use", "server_tool_use"):
                    names[block.id] = block.name
    return names


def terminal_html(terminal: Any) -> str:
    """The ``Terminal``: reason, turn_count and error; green for ``completed``, red for errors, else amber."""
    kind = "assistant" if terminal.reason == "completed" else "system"
    if terminal.reason in ("model_error", "prompt_too_long", "image_error", "blocking_limit"):
        kind = "error"
    error = f' · error: <span class="dl-c-error">{esc(terminal.error)}</span>' if terminal.error else ""
    return (f"<span>{badge('Terminal', kind, filled=True)}reason=<b>{esc(terminal.reason)}</b> · "
            f"turn_count={terminal.turn_count}{error}</span>")
