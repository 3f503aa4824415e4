"""StateInspector: a slider over a Trace's checkpoints, the State of each turn in panes.

Owns the widget that lets a reader step through a run: for the chosen
checkpoint, ``turn_count``, ``transition`` and (at the end) the Terminal, what
changed since the previous checkpoint, and one HTML pane per collector of
queryLoop() (``messages``, ``messages_for_query``, ``assistant_messages``,
``tool_results``, ``attachments``). In ``messages_for_query`` a message a
context stage wrote (a cleared result, a fold, a summary) carries the stage's
mark and unfolds to the messages it stands for; a message a tombstone withdrew
(a replaced response) is struck out. After a recovery pass the header shows the
State's counters. A checkpoint imported with the request it was sent (a session
file that records requests, as Claude Code 2.1.332's did in
``max_tokens_always``) shows that request above ``messages_for_query``: its
fields, system prompt, tools and where ``cache_control`` went. Only the visible
checkpoint is rendered; each message's HTML is cached by uuid. It reads traces
(live or loaded) and knows nothing about how the loop fills them. In the
``attachments`` pane each attachment is labelled with where it came from
(``attachment_origin``: a memory file's path, a changed file, queued input, a
hook, a background task, the loop itself); ``origins()`` says the same as text.
A checkpoint whose response holds an ``Agent`` call that started a sub-agent run (``Trace.children``) offers
that child: ``open_child`` shows its trace in a nested StateInspector in place of the parent's panes, with a
button back; a child the parent's Stop ended says it was stopped (dreamloop's words).
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ..claude_code import tr_note
from ..language import N_, tr, tr_formatted
from ..subagents import AGENT_TOOL, STOP_NOTES
from ..trace import Checkpoint, Trace
from .html import badge, esc, message_html, message_kind, pane, pretty_json, preview, terminal_html, tool_names
from .meter import STAGE_COLORS
from .static import StaticHTML

__all__ = ["PANES", "StateInspector", "agent_calls", "attachment_origin", "child_label"]

PANES = ("messages", "messages_for_query", "assistant_messages", "tool_results", "attachments")
"""The panes, in tab order; each is one ``ipywidgets.HTML`` in ``StateInspector.panes``."""

_PANE_NOTES = {
    "messages": N_("State.messages as the iteration began"),
    "messages_for_query": N_("what phase 2 (the context pipeline) handed to the model call"),
    "assistant_messages": N_("phase 3: the model's response(s) this turn"),
    "tool_results": N_("phase 4: the tool_result messages this turn"),
    "attachments": N_("phase 5 and notices: queued input, max_turns_reached, hook records, stop hook feedback"),
}
"""What each pane holds (the pane names are the collectors the four-step-loop text names, plus ``attachments``;
they stay as they are in every language)."""

PANE_HEIGHT = 420
"""A pane's height cap in CSS pixels: a longer history scrolls inside it, so the slider stays in view above
what it moves (inline style: it holds in the stored snapshot too)."""
_SCROLL = f"max-height:{PANE_HEIGHT}px;overflow-y:auto"


def attachment_origin(attachment: Mapping[str, Any]) -> str | None:
    """Where an attachment (``AttachmentMessage.attachment``) came from, in the current language: ``memory file
    CLAUDE.md`` (``memory_changed``: its path as shown), ``changed file config.py`` (``changed_file``), ``queued
    input`` (``queued_command``), ``hook PreToolUse (audit)`` (a ``hook_*`` record), ``background task b1``
    (``task_notification``), ``the loop (max_turns)`` (``max_turns_reached``); None for a kind not listed.
    The labels are dreamloop's words."""
    kind = str(attachment.get("type", ""))
    if kind == "memory_changed":
        return tr("memory file {path}", path=attachment.get("name") or attachment.get("path", "?"))
    if kind == "changed_file":
        return tr("changed file {path}", path=attachment.get("name") or attachment.get("path", "?"))
    if kind == "queued_command":
        return tr("queued input")
    if kind.startswith("hook_"):
        event, name = attachment.get("hookEvent") or "?", attachment.get("hookName")
        return tr("hook {event} ({name})", event=event, name=name) if name else tr("hook {event}", event=event)
    if kind == "task_notification":
        return tr("background task {task}", task=attachment.get("task_id", "?"))
    if kind == "max_turns_reached":
        return tr("the loop (max_turns)")
    return None


def agent_calls(trace: Trace, point: Checkpoint) -> list[tuple[str, str]]:
    """The ``Agent`` calls of ``point``'s response(s) whose child run ``trace.children`` holds, in order:
    ``(tool_use id, label)``, the label ``Agent · count files · completed, 2 turns`` (the call's
    ``description``, then how the child ended: its Terminal, ``stopped (aborted_streaming): the parent's Stop
    ended it`` for an ``aborted_*`` one, or ``started, no end recorded`` while (or if) it has none). A call
    without a child (a bad call, a trace saved before version 9) is left out."""
    calls = []
    for uuid in point.assistant_messages:
        message = trace.messages.get(uuid)
        if message is None or message.type != "assistant":
            continue
        for block in message.message.content:
            if block.type != "tool_use" or block.name != AGENT_TOOL or block.id not in trace.children:
                continue
            description = (block.input or {}).get("description") if isinstance(block.input, dict) else None
            calls.append((block.id, child_label(description or block.id, trace.children[block.id])))
    return calls


def child_label(description: str, child: Trace) -> str:
    """``Agent · {description} · {how the child ended}`` (the ending as ``agent_calls`` words it)."""
    return f"{AGENT_TOOL} · {description} · {_child_ending(child)}"


def _child_ending(child: Trace) -> str:
    terminal = child.checkpoints[-1].terminal if child.checkpoints else None
    if terminal is None:
        return tr("started, no end recorded")
    if terminal.reason.startswith("aborted_"):
        note = next((n for n in child.checkpoints[-1].notes if n.startswith("stopped ")), None)
        if note is None:  # a trace saved before children's stops were noted
            return tr("stopped ({reason})", reason=terminal.reason)
        return tr("stopped ({reason}): {note}", reason=terminal.reason,
                  note=tr_formatted(note, STOP_NOTES.values()))
    return tr("{reason}, {count} turns", reason=terminal.reason, count=terminal.turn_count)


class StateInspector(StaticHTML, W.VBox):
    """Step through a run's checkpoints: ``StateInspector(trace)``; ``display(inspector)``.

    ``trace``: a ``Trace`` (live or ``Trace.load(path)``), a ``QueryRun``
    (its ``.trace``) or a path to a saved trace. Parts, for notebooks and tests:

    * ``slider``: ``IntSlider`` (description ``"checkpoint"``), 0 .. len(checkpoints) - 1;
    * ``header``: ``HTML`` with turn_count, transition (and what it did: ``escalating
      max_tokens to 64,000``), the State's counters once a recovery branch is on or
      has acted, the Terminal at the end, and a ``changed: turn_count 1→2, +3
      messages`` line;
    * ``tabs``: ``Tab`` of the panes; ``panes["messages"]`` etc. (``PANES``), one
      ``HTML`` each. Messages new since the previous checkpoint are marked ``new``;
      in ``messages_for_query`` a message a context stage wrote is marked with
      the stage's name (``replaced_by(uuid)``) and unfolds to the originals.

    * ``child_picker``: ``Dropdown`` of the shown checkpoint's ``Agent`` calls that started a child run
      (``agent_calls``), ``open_button`` opens the chosen one (``open_child``); ``child``: the nested
      StateInspector while one is open (None otherwise), ``back_button`` returns to this trace
      (``close_child``).

    ``refresh()`` re-reads a trace that is still being filled. ``max_messages``
    caps the messages drawn per pane (the latest are kept; None: all).
    Rendering a checkpoint costs O(messages shown), with per-message HTML
    cached by uuid, so stepping through a 500-turn trace stays fast. The
    stored output carries ``static_html()`` (``StaticHTML``): a table of every
    checkpoint, then the shown checkpoint's header and panes.
    """

    def __init__(self, trace: Trace | Any, *, index: int = 0, max_messages: int | None = 200) -> None:
        self.trace = _as_trace(trace)
        self.max_messages = max_messages
        self._cache: dict[str, str] = {}
        self._names: dict[str, str] = {}
        self._replaced: dict[str, tuple[str, list[str]]] = {}
        self._withdrawn: dict[str, str] = {}  # uuid -> why a tombstone withdrew it
        self._indexed = 0
        self.slider = W.IntSlider(value=0, min=0, max=0, description=tr("checkpoint"),
                                  continuous_update=True, layout=W.Layout(width="420px"))
        self.header = W.HTML()
        self.panes: dict[str, W.HTML] = {name: W.HTML() for name in PANES}
        self.tabs = W.Tab(children=[self.panes[name] for name in PANES], titles=PANES)
        self.child: StateInspector | None = None
        self._child_id: str | None = None
        self.child_picker = W.Dropdown(options=[], description=tr("sub-agent"), layout=W.Layout(width="420px"))
        self.open_button = W.Button(description=tr("open the child run"), icon="level-down")
        self.back_button = W.Button(description=tr("back to the parent run"), icon="level-up")
        self.crumb = W.HTML()
        self.calls = W.HBox([self.child_picker, self.open_button])
        self.open_button.on_click(lambda _button: self.open_child())
        self.back_button.on_click(lambda _button: self.close_child())
        self._own = [self.slider, self.header, self.calls, self.tabs]
        super().__init__(children=self._own)
        self.add_class("dreamloop-inspector")
        self._sync_slider()
        self.slider.value = min(max(index, 0), self.slider.max)
        self.slider.observe(self._on_slide, names="value")
        self.render()

    # -- public -------------------------------------------------------------

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The checkpoint the slider shows (None while the trace has none)."""
        points = self.trace.checkpoints
        return points[self.slider.value] if points else None

    def withdrawn(self, uuid: str) -> str | None:
        """Why a tombstone withdrew the message ``uuid`` (struck out in the panes), or None."""
        self._index_names()
        return self._withdrawn.get(uuid)

    def replaced_by(self, uuid: str) -> tuple[str, list[str]] | None:
        """``(stage, original uuids)`` if a context stage wrote the message ``uuid``, else None."""
        self._index_names()
        return self._replaced.get(uuid)

    def origins(self) -> list[str]:
        """The shown checkpoint's ``attachments`` pane as text, one line per message: ``[0] attachment ·
        changed_file <- changed file config.py`` (its kind, then where it came from; a message that is not an
        attachment, or of a kind ``attachment_origin`` does not know, has its kind only)."""
        point = self.checkpoint
        if point is None:
            return []
        lines = []
        for position, uuid in enumerate(point.attachments):
            message = self.trace.messages[uuid]
            label = message_kind(message)
            origin = attachment_origin(message.attachment) if message.type == "attachment" else None
            lines.append(f"[{position}] {label}" + (f" <- {origin}" if origin else ""))
        return lines

    def agent_calls(self) -> list[tuple[str, str]]:
        """The shown checkpoint's ``Agent`` calls that started a child run (``agent_calls``): ``(id, label)``."""
        point = self.checkpoint
        return agent_calls(self.trace, point) if point is not None else []

    def open_child(self, tool_use_id: str | None = None) -> "StateInspector":
        """Show the child run of the ``Agent`` call ``tool_use_id`` (default: the one ``child_picker`` names) in
        a nested StateInspector, in place of this one's parts, and return it. KeyError naming the id if the
        trace holds no child run for it."""
        tool_use_id = tool_use_id if tool_use_id is not None else self.child_picker.value
        if tool_use_id is None or tool_use_id not in self.trace.children:
            raise KeyError(f"no sub-agent run for the Agent call {tool_use_id!r} in this trace "
                           f"(known: {', '.join(self.trace.children) or 'none'})")
        self.child = StateInspector(self.trace.children[tool_use_id], max_messages=self.max_messages)
        self._child_id = tool_use_id
        label = dict(agent_calls(self.trace, self.checkpoint)).get(tool_use_id, tool_use_id) \
            if self.checkpoint is not None else tool_use_id
        self.crumb.value = pane(esc(tr("the child run of the call {call} (checkpoint {index} of the parent)",
                                       call=label, index=self.slider.value)))
        self.children = [W.HBox([self.back_button, self.crumb]), self.child]
        return self.child

    def close_child(self) -> None:
        """Back to this trace's own parts (the checkpoint the slider was at)."""
        self.child, self._child_id = None, None
        self.children = self._own

    def refresh(self) -> None:
        """Re-read the trace (new checkpoints of a live run); a slider at the end follows the end."""
        at_end = self.slider.value == self.slider.max
        self._sync_slider()
        if at_end and self.slider.value != self.slider.max:
            self.slider.value = self.slider.max  # renders through the observer
        else:
            self.render()

    def render(self) -> None:
        """Draw the header and every pane for the slider's checkpoint."""
        self._index_names()
        point = self.checkpoint
        if point is None:
            self.child_picker.options, self.calls.layout.display = [], "none"
            self.header.value = pane(esc(tr("No checkpoint yet: the first is taken after turn 1's tools ran "
                                            "(or when the loop ends).")))
            for widget in self.panes.values():
                widget.value = ""
            return
        previous = self.trace.checkpoints[point.index - 1] if point.index > 0 else None
        self.header.value = self._header(point, previous)
        calls = agent_calls(self.trace, point)
        self.child_picker.options = [(label, call) for call, label in calls]
        if calls and self.child_picker.value is None:
            self.child_picker.value = calls[0][0]  # options set again after an empty list leave no value
        self.child_picker.disabled = self.open_button.disabled = not calls
        self.calls.layout.display = None if calls else "none"
        seen_state = set(previous.state_messages) if previous else None
        seen_query = set(previous.messages_for_query) if previous else None
        self.panes["messages"].value = self._pane("messages", point.state_messages, seen_state)
        same = point.messages_for_query == point.state_messages
        extra = tr(" (the same as State.messages: no context stage changed them)") if same else \
            tr(" (differs from State.messages: a context stage changed them)")
        if self.trace.source is not None:
            extra = tr(" (the conversation messages only: the file holds no system prompt and no tool definitions)")
        if point.request is not None:
            extra = tr(" (the request's messages as sent, recorded in the file, with the reminders Claude Code "
                       "added)")
        self.panes["messages_for_query"].value = self._pane("messages_for_query", point.messages_for_query,
                                                            seen_query, extra=extra, marks=True,
                                                            before=_request_html(point.request, self.trace.source))
        for name in ("assistant_messages", "tool_results", "attachments"):
            self.panes[name].value = self._pane(name, getattr(point, name), None)

    def __repr__(self) -> str:
        own = f"checkpoints={len(self.trace.checkpoints)}"
        if self.child is not None:
            return f"StateInspector({own}, child={self._child_id}: {self.child!r})"
        return f"StateInspector({own})"

    def static_html(self) -> str:
        """Every checkpoint as a table row, then the shown one's header, its ``Agent`` calls that started a child
        and panes (for a stored notebook); while a child is open, which call's child it is, then the child's."""
        if self.child is not None:
            return self.crumb.value + self.child.static_html()
        points = self.trace.checkpoints
        if not points:
            return self.header.value
        cell = 'style="padding:1px 4px;border-bottom:1px solid #e2e8f0;text-align:left"'
        heads = (tr("checkpoint"), "turn_count", "transition", "State.messages", "messages_for_query",
                 "assistant_messages", "tool_results", tr("then"))

        def breakable(value: Any) -> str:  # a long name may break after _ or . (the table fits a narrow notebook)
            return esc(value).replace("_", "_<wbr>").replace(".", ".<wbr>")

        rows = [f"<tr>{''.join(f'<th {cell}>{breakable(h)}</th>' for h in heads)}</tr>"]
        for point in points:
            then = (f"Terminal {point.terminal.reason}" if point.terminal is not None else
                    tr("continue: {reason}", reason=point.next_transition.reason)
                    if point.next_transition is not None else "…")
            values = (point.index, point.turn_count, point.transition.reason if point.transition else "None",
                      len(point.state_messages), len(point.messages_for_query), len(point.assistant_messages),
                      len(point.tool_results), then)
            rows.append(f"<tr>{''.join(f'<td {cell}>{breakable(v)}</td>' for v in values)}</tr>")
        table = (f'<div style="max-height:{PANE_HEIGHT // 2}px;overflow-y:auto">'
                 f'<table style="border-collapse:collapse;font-size:12px;margin:4px 0">{"".join(rows)}</table></div>')
        panes = "".join(f'<div style="margin-top:8px">{self.panes[name].value}</div>' for name in PANES)
        calls = "".join(f"<li>{esc(label)}</li>" for _call, label in self.agent_calls())
        if calls:
            calls = (f'<div class="dl-small">{esc(tr("sub-agent runs started here (open_child shows one):"))}'
                     f'<ul style="margin:0">{calls}</ul></div>')
        return table + self.header.value + calls + f'<div style="max-height:{PANE_HEIGHT + 60}px;overflow-y:auto">{panes}</div>'


    # -- parts --------------------------------------------------------------

    def _on_slide(self, change: dict[str, Any]) -> None:
        self.render()

    def _sync_slider(self) -> None:
        count = len(self.trace.checkpoints)
        self.slider.max = max(count - 1, 0)
        self.slider.disabled = count <= 1

    def _index_names(self) -> None:
        messages = self.trace.messages
        if len(messages) == self._indexed:
            return
        new = list(messages.values())[self._indexed:]
        self._names.update(tool_names(new))
        for message in new:  # the context stages' notices say which message stands for which
            if message.type == "tombstone":
                self._withdrawn[message.target_uuid] = message.reason or "withdrawn"
            meta = getattr(message, "metadata", None) or {}
            for written, originals in (meta.get("replaced") or {}).items():
                self._replaced[written] = (str(meta.get("stage", message.subtype)), list(originals))
        self._indexed = len(messages)

    def _message(self, uuid: str) -> str:
        cached = self._cache.get(uuid)
        if cached is None:
            cached = self._cache[uuid] = message_html(self.trace.messages[uuid], self._names)
        return cached

    def _pane(self, name: str, uuids: list[str], seen: set[str] | None, *, extra: str = "",
              marks: bool = False, before: str = "") -> str:
        shown = uuids if self.max_messages is None else uuids[-self.max_messages:] if self.max_messages else []
        new_count = sum(1 for u in uuids if u not in seen) if seen is not None else 0
        counts = _messages(len(uuids))
        if new_count:
            counts += tr(", {count} new", count=new_count)
        head = (f'<div class="dl-small"><b>{esc(name)}</b>: {esc(counts)} · '
                f'<span class="dl-dim">{esc(tr(_PANE_NOTES[name]))}{esc(extra)}</span></div>')
        parts: list[str] = [before] if before else []
        hidden = len(uuids) - len(shown)
        if hidden:
            parts.append(f'<div class="dl-dim dl-small">'
                         f'{esc(tr("… {count} earlier messages not shown (StateInspector(trace, max_messages=None) shows all)", count=hidden))}'
                         "</div>")
        if not uuids:
            parts.append(f'<div class="dl-dim"><i>{esc(tr("(none)"))}</i></div>')
        for position, uuid in enumerate(shown, start=hidden):
            fresh = seen is not None and uuid not in seen
            mark = badge(tr("new"), "new", filled=True) if fresh else ""
            written = self._replaced.get(uuid) if marks else None
            if written is not None:
                mark += _stage_badge(written[0])
            if name == "attachments":
                origin = self._origin(uuid)
                if origin is not None:
                    mark += badge(tr("from: {origin}", origin=origin), "attachment")
            body = self._message(uuid) + (self._unfold(*written) if written is not None else "")
            gone = self._withdrawn.get(uuid)
            if gone is not None:
                mark += badge(tr("tombstoned"), "error", filled=True)
                note = tr("withdrawn by a tombstone ({reason}): no request carries it", reason=gone)
                body = (f'<del class="dl-struck" style="display:block">{body}</del>'
                        f'<div class="dl-small dl-c-error">{esc(note)}</div>')
            parts.append(f'<div class="{"dl-new" if fresh else "dl-item"}"><div class="dl-pos">{mark}[{position}]'
                         f"</div>{body}</div>")
        return pane(f'{head}<div class="dl-scroll" style="{_SCROLL}">{"".join(parts)}</div>')

    def _origin(self, uuid: str) -> str | None:
        message = self.trace.messages[uuid]
        return attachment_origin(message.attachment) if message.type == "attachment" else None

    def _unfold(self, stage: str, originals: list[str], limit: int = 20) -> str:
        """The messages a stage's message stands for, folded away under a ``<details>``."""
        known = [u for u in originals if u in self.trace.messages]
        shown = "".join(self._message(u) for u in known[:limit])
        more = (f'<div class="dl-dim dl-small">{esc(tr("… {count} more", count=len(known) - limit))}</div>'
                if len(known) > limit else "")
        summary = (tr("{stage} wrote this: unfold the {count} original message", stage=stage, count=1) if len(originals) == 1 else
                   tr("{stage} wrote this: unfold the {count} original messages", stage=stage, count=len(originals)))
        return (f'<details class="dl-small"><summary class="dl-dim">{esc(summary)}</summary>{shown}{more}'
                "</details>")

    def _header(self, point: Checkpoint, previous: Checkpoint | None) -> str:
        total = len(self.trace.checkpoints)
        transition = point.transition.reason if point.transition else tr("None (the first iteration)")
        did = f" ({esc(point.transition.detail)})" if point.transition and point.transition.detail else ""
        lines = [
            f"<b>{esc(tr('checkpoint {index} (numbered 0 to {last})', index=point.index, last=total - 1))}</b> · "
            f"turn_count=<b>{point.turn_count}</b> · "
            f"transition=<b>{esc(transition)}</b>{did} · State.messages: {len(point.state_messages)}"
        ]
        if _shows_counters(self.trace, point):
            lines.append(f'<span class="dl-small">{esc(tr("counters:"))} {_counters_html(point.counters)}</span>')
        source = self.trace.source
        if source is not None:
            lines.append(_source_html(source))
        if point.stop_hook_active:
            lines.append('<span class="dl-c-system">stop_hook_active=<b>True</b>: ' +
                         esc(tr("the model is answering a stop hook's feedback (the meta user message marked new "
                                "in messages)")) + "</span>")
        if previous is None:
            first = tr("changed: nothing before this (the loop's first State)")
            lines.append(f'<span class="dl-dim">{esc(first)}</span>')
        else:
            lines.append(f'<span class="dl-c-new">{esc(tr("changed: {changes}", changes=_changes(previous, point)))}'
                         "</span>")
        if point.context:
            record = point.context
            stages = ", ".join(f"{s['stage']} −{s['before'] - s['after']:,}" for s in record.get("stages", []))
            lines.append(esc(tr("context: {tokens:,} tokens sent of a {window:,}-token window",
                                tokens=record["tokens"], window=record["window"]))
                         + (f" · {esc(stages)}" if stages else esc(tr(" · no stage changed anything"))))
        if point.terminal is not None:
            lines.append(terminal_html(point.terminal))
        elif point.next_transition is not None:
            then = point.next_transition
            did = f" ({esc(then.detail)})" if then.detail else ""
            text = (tr("→ continue: next transition={reason} (the next State has {count} messages, rewritten by "
                       "the recovery)", reason="\0", count=len(point.messages_after))
                    if point.next_messages is not None else
                    tr("→ continue: next transition={reason} (the next State has {count} messages)",
                       reason="\0", count=len(point.messages_after)))
            lines.append(esc(text).replace("\0", f"<b>{esc(then.reason)}</b>{did}"))
        elif point.index == total - 1 and source is not None:
            lines.append(f'<span class="dl-dim">{esc(tr("the file ends here (no Terminal recorded)"))}</span>')
        elif point.index == total - 1:
            lines.append(f'<span class="dl-dim">{esc(tr("the run is still going (refresh() to re-read)"))}</span>')
        if point.notes:
            items = "".join(f"<li>{esc(tr_formatted(tr_note(note), STOP_NOTES.values()))}</li>" for note in point.notes)
            lines.append(f'<span class="dl-small">{esc(tr("notes:"))}</span>'
                         f'<ul class="dl-small" style="margin:0">{items}</ul>')
        return pane('<div style="line-height:1.7">' + "<br>".join(lines) + "</div>")


_RECOVERY_SWITCHES = ("recovery", "fallback_model", "token_budget")


def _shows_counters(trace: Trace, point: Checkpoint) -> bool:
    """The counters line: once a recovery switch is on, or a counter moved (a trace before version 6 has none)."""
    if not point.counters:
        return False
    return any(trace.switches.get(name) for name in _RECOVERY_SWITCHES) or any(
        point.counters.get(name) for name in ("max_output_tokens_recovery_count", "max_output_tokens_override",
                                              "has_attempted_reactive_compact", "token_budget_tracking"))


def _counters_html(counters: dict[str, Any]) -> str:
    """``max_output_tokens_recovery_count=1 · max_output_tokens_override=64,000 · ...``, the moved ones bold."""
    parts = []
    for name, value in counters.items():
        if isinstance(value, dict):  # the token budget's tracking
            shown = ", ".join(f"{k}={v:,}" for k, v in value.items())
            text = f"{name}=({shown})"
        else:
            text = f"{name}={value:,}" if isinstance(value, int) and not isinstance(value, bool) else f"{name}={value}"
        parts.append(f"<b>{esc(text)}</b>" if value not in (0, None, False) else esc(text))
    return " · ".join(parts)


def _stage_badge(stage: str) -> str:
    color = STAGE_COLORS.get(stage, "#718096")
    return (f'<span class="dl-b" style="color:#fff;background:{color};border-color:{color}">'
            f"{esc(stage)}</span>")


def _source_html(source: dict[str, Any]) -> str:
    """Where a trace the loop did not record came from, and what its file cannot hold."""
    if source.get("kind") == "claude_code_session":
        name = Path(str(source.get("path", "?"))).name
        versions = ", ".join(source.get("claude_code_versions") or []) or "?"
        branch = str(source.get("branch") or "?")[:8]
        what = esc(tr("Claude Code session {name} (Claude Code {versions}) · branch {branch}{sidechain} of {branches}",
                      name="\0", versions=versions, branch=branch,
                      sidechain=tr(" (a sidechain)") if source.get("sidechain") else "",
                      branches=source.get("branches", 1))).replace("\0", f"<b>{esc(name)}</b>")
    else:
        what = esc(tr("imported: {kind}", kind=source.get("kind", "?")))
    note = f'<br><span class="dl-c-system dl-small">{esc(source["note"])}</span>' if source.get("note") else ""
    return f"<span>{what}</span>{note}"


def _request_html(request: dict[str, Any] | None, source: dict[str, Any] | None) -> str:
    """The request a checkpoint was sent, as recorded (``Checkpoint.request``): one line, the texts folded away."""
    if request is None:
        return ""
    params = request.get("params") or {}
    digest = {True: tr("digest checked"), False: tr("digest differs"), None: ""}[request.get("digest_ok")]
    line = tr("request as sent (line {line}): model {model}, max_tokens {max_tokens}, system prompt {blocks} "
              "block(s), {tools} tool(s), {messages} message(s) with {reminders} <system-reminder> block(s); "
              "cache_control at {cache}", line=request.get("line"), model=params.get("model", "?"),
              max_tokens=params.get("max_tokens", "?"), blocks=len(request.get("system") or []),
              tools=len(request.get("tools") or []), messages=request.get("messages", 0),
              reminders=request.get("reminders", 0), cache=", ".join(request.get("cache_control") or []) or "-")
    shape = ((source or {}).get("request_shapes") or {}).get(request.get("shape")) or {}
    system = shape.get("system") or []
    texts = "".join(f'<div class="dl-small dl-dim">system[{i}] · {len(str(b.get("text", ""))):,} chars</div>'
                    f'<pre class="dl-pre" style="max-height:12em;overflow:auto;white-space:pre-wrap">'
                    f'{esc(preview(str(b.get("text", ""))))}</pre>' for i, b in enumerate(system) if isinstance(b, dict))
    tools = ", ".join(f"{esc(name)} ({length:,})" for name, length in request.get("tools") or [])
    fields = esc(pretty_json({k: v for k, v in params.items() if k not in ("model", "max_tokens")}))
    body = (f'<div class="dl-small">{esc(tr("tools (description length):"))} {tools}</div>'
            f'<div class="dl-small">{esc(tr("other fields:"))}</div><pre class="dl-pre">{fields}</pre>{texts}')
    return (f'<details class="dl-small dl-c-system"><summary>{esc(line)}'
            f'{" · " + esc(digest) if digest else ""}</summary>{body}</details>')


def _changes(before: Checkpoint, after: Checkpoint) -> str:
    """``turn_count 1→2, transition None→next_turn, +3 messages`` (what a reader should notice)."""
    parts = []
    if before.turn_count != after.turn_count:
        parts.append(f"turn_count {before.turn_count}→{after.turn_count}")
    old = before.transition.reason if before.transition else "None"
    new = after.transition.reason if after.transition else "None"
    if old != new:
        parts.append(f"transition {old}→{new}")
    if before.stop_hook_active != after.stop_hook_active:
        parts.append(f"stop_hook_active {before.stop_hook_active}→{after.stop_hook_active}")
    for name, value in after.counters.items():
        if name in before.counters and before.counters[name] != value and not isinstance(value, dict):
            parts.append(f"{name} {before.counters[name]}→{value}")
    delta = len(after.state_messages) - len(before.state_messages)
    parts.append(tr("{delta:+d} message", delta=delta) if abs(delta) == 1 else
                 tr("{delta:+d} messages", delta=delta))
    return tr(", ").join(parts)


def _messages(count: int) -> str:
    """``1 message`` / ``3 messages`` in the learner's language."""
    return tr("{count} message", count=count) if count == 1 else tr("{count} messages", count=count)


def _as_trace(value: Any) -> Trace:
    if isinstance(value, Trace):
        return value
    if isinstance(value, (str, Path)):
        return Trace.load(value)
    trace = getattr(value, "trace", None)
    if isinstance(trace, Trace):
        return trace
    raise TypeError(f"StateInspector needs a Trace, a QueryRun or a path to a saved trace, not {type(value).__name__}")
