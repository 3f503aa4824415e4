"""LiveView: watch a running loop in a notebook cell, and stop it with a button.

Owns the live widget: streaming text as it arrives (throttled), each tool
call from started to done with the hooks that ran on it, the current phase lit on the loop's flowchart,
turn_count and transition (a recovery named as it happens: "escalating max_tokens to 64,000",
"resuming 2/3", "falling back to M"), what a tombstone withdrew struck out, the Terminal at the end,
and a Stop button that
fires the run's abort signal. An ``Agent`` call's child run (``run.trace.children``) can be opened from the
view, while it runs or after, in a StateInspector below the transcript (``open_child``). It follows the events a ``QueryRun`` yields
and knows nothing about how the loop produces them. No ``Output`` widget,
no ``clear_output``, no display updates: every part is a widget value.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, AsyncIterator, Callable

import ipywidgets as W

from ..diagram import loop_flowchart_svg
from ..hooks import describe_record
from ..language import language, tr
from ..tools.cancellation import INTERRUPTED
from .html import (
    badge,
    esc,
    message_html,
    pane,
    pretty_json,
    terminal_html,
    tool_names,
    tool_result_html,
)
from .inspector import StateInspector, child_label
from .kernel import warn_if_old_kernel
from .static import StaticHTML

__all__ = ["LiveView"]

_SVG: dict[tuple[str | None, frozenset[str], str], str] = {}


def _diagram(phase: str | None, also: frozenset[str] = frozenset()) -> str:
    """The flowchart with ``phase`` (and ``also``) lit (cached: a dozen variants per language).

    Drawn at its own size (700 px wide: labels 12 px, the edges' 11 px), shrunk only when the notebook is
    narrower than that; the transcript goes beside it when there is room, else below it.
    """
    key = (phase, also, language())
    if key not in _SVG:
        lit = [p for p in (phase, *sorted(also)) if p is not None]
        svg = loop_flowchart_svg(lit).replace("<svg ", '<svg style="width:100%;height:auto" ', 1)
        _SVG[key] = f'<div style="width:{DIAGRAM_WIDTH}px;max-width:100%">{svg}</div>'
    return _SVG[key]


DIAGRAM_WIDTH = 700
"""The flowchart's width in the live view, in CSS pixels: its own size, so no label is drawn below 11 px."""


class _Call:
    """One tool call as the live view shows it."""

    def __init__(self, tool_use_id: str, name: str, input: Any) -> None:
        self.id, self.name, self.input = tool_use_id, name, input
        self.started = time.monotonic()
        self.seconds: float | None = None
        self.last_progress: dict[str, Any] | None = None
        self.result: dict[str, Any] | None = None
        self.hooks: list[dict[str, Any]] = []
        self.withdrawn = False  # its attempt was withdrawn (a tombstone): struck out
        self.ran = False  # it started running (a "started" progress): an unfinished result means cut short

    def html(self) -> str:
        inner = self._html()
        if not self.withdrawn:
            return inner
        note = tr("withdrawn with its response (a tombstone): its effects may remain")
        return (f'<del class="dl-struck" style="display:block">{inner}</del>'
                f'<div class="dl-small dl-c-error">{esc(note)}</div>')

    def _html(self) -> str:
        call = (f'{badge("tool_use", "tool_use")}<b class="dl-mono">{esc(self.name)}</b> '
                f'<span class="dl-mono">{esc(_short_json(self.input))}</span> ')
        hooks = "".join(_hook_line(h) for h in self.hooks)
        if self.result is None:
            state = badge(tr("running…"), "system")
            if self.last_progress:
                state += f'<span class="dl-mono dl-dim">{esc(_short_json(self.last_progress))}</span>'
            return f'<div class="dl-item">{call}{state}{hooks}</div>'
        failed = bool(self.result.get("is_error"))
        took = tr(" {seconds:.2f} s", seconds=self.seconds) if self.seconds is not None else ""
        if failed and not self.ran:  # interrupted, cancelled or refused before it ran: no effects
            state = badge(tr("never started ✗"), "error")
        elif failed and _unfinished(self.result):  # stopped while it ran: it may have made changes
            state = badge(tr("cut short ✗{took}", took=took), "error")
        else:
            state = badge(tr("ran ✗{took}", took=took) if failed else tr("ran ✓{took}", took=took),
                          "error" if failed else "assistant")
        return (f'<div class="dl-item">{call}{state}{hooks}'
                f"{tool_result_html(self.result, self.name, max_chars=800)}</div>")


def _unfinished(result: dict[str, Any]) -> bool:
    """Is ``result`` what a call that had started is told when the run stops it (an interrupt, a failing
    sibling, a failed response), rather than its own result?"""
    content = result.get("content")
    text = content if isinstance(content, str) else ""
    return text == INTERRUPTED or text.startswith(("Stopped while running", "Cancelled while running"))


def _hook_line(record: dict[str, Any]) -> str:
    """A hook that ran on a call, one line: what it said (red when it blocked or stopped)."""
    said = record.get("decision") or {}
    blocked = record.get("type") in ("hook_blocking_error", "hook_stopped_continuation") or \
        said.get("decision") in ("deny", "block") or said.get("continue") is False
    kind = "error" if blocked else "attachment"
    return (f'<div class="dl-small dl-hook">{badge("hook", kind, filled=blocked)}'
            f'<span class="dl-mono">{esc(describe_record(record, width=200))}</span></div>')


class _Tools:
    """The tool calls of one turn, in the order they started; folded under their summary once it came."""

    def __init__(self) -> None:
        self.calls: dict[str, _Call] = {}
        self.summary: str | None = None  # the batch's ToolUseSummaryMessage (yielded next iteration)

    def html(self) -> str:
        calls = "".join(call.html() for call in self.calls.values())
        if self.summary is None:
            return calls
        return (f'<details class="dl-fold"><summary>{badge("tool_use_summary", "tool_use")}'
                f"{esc(self.summary)}</summary>{calls}</details>")


class _TurnView:
    def __init__(self, turn_count: int, transition: str | None, stop_hook_active: bool = False,
                 detail: str | None = None) -> None:
        self.turn_count, self.transition, self.stop_hook_active = turn_count, transition, stop_hook_active
        self.detail = detail  # what the transition did ("resuming 2/3"), or a fallback as it happens
        self.entries: list[str | _Tools] = []
        self.tools: _Tools | None = None

    def tool_section(self) -> _Tools:
        if self.tools is None:
            self.tools = _Tools()
            self.entries.append(self.tools)
        return self.tools

    def html(self) -> str:
        did = f" · <b>{esc(self.detail)}</b>" if self.detail else ""
        head = (f'<div class="dl-small dl-c-user" style="border-bottom:1px solid #e2e8f0;margin-top:6px">'
                f"<b>turn_count={self.turn_count}</b> · transition={esc(self.transition)}{did}"
                f"{' · <b>stop_hook_active</b>' if self.stop_hook_active else ''}</div>")
        return head + "".join(e if isinstance(e, str) else e.html() for e in self.entries)


class LiveView(StaticHTML, W.VBox):
    """A running loop, live: ``display(live)`` then ``async for event in live.follow(run)``.

    Usage in a notebook cell (top-level await, never a background task)::

        live = LiveView()
        display(live)
        async for event in live.follow(run):   # every event passes through
            ...
        # or: terminal = await live.watch(run)

    Parts: ``status`` (turn_count, transition, phase; the Terminal at the
    end), ``stop_button`` (fires ``run.abort("stop button")`` through
    ``loop.call_soon_threadsafe``; disabled when the run ends), ``diagram``
    (the flowchart, ``phase`` lit), ``transcript`` (finished messages and tool
    calls, turn by turn; the last ``max_turns_shown`` turns), ``stream`` (the
    response streaming now; refreshed at most every ``throttle`` seconds or at
    a block's end). ``phases`` lists every phase lit, in order (stable across
    runs of the same script: print it in a notebook). With streaming tool
    execution, a call that starts while the model still streams lights
    ``tools`` with ``model`` still lit (``also``): both phases at once.
    ``run`` is the run being (or last) followed; ``terminal`` its Terminal
    once it ended. When the run ends, the outputs showing the view get its
    final state as static HTML (``StaticHTML.refresh_static``), for a
    notebook read without a kernel.
    """

    def __init__(self, *, throttle: float = 0.05, max_turns_shown: int = 10) -> None:
        warn_if_old_kernel()
        self.throttle = throttle
        self.max_turns_shown = max_turns_shown
        self.phase: str | None = None
        self.also: frozenset[str] = frozenset()
        self.phases: list[str] = []
        self.terminal: Any = None
        self._streaming = False
        self._stopping = False
        self.status = W.HTML(self._status_html(tr("waiting for a run")))
        self.stop_button = W.Button(description=tr("Stop"), button_style="danger", icon="stop", disabled=True,
                                    tooltip=tr("Fire the run's abort signal"))
        self.stop_button.add_class("dreamloop-stop")
        self.diagram = W.HTML(_diagram(None))
        self.transcript = W.HTML()
        self.stream = W.HTML()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._abort: Callable[[str], Any] | None = None
        self._running = False
        self.run: Any = None
        self._reset()
        self.stop_button.on_click(self._clicked)
        self.child: StateInspector | None = None
        self.child_picker = W.Dropdown(options=[], description=tr("sub-agent"), layout=W.Layout(width="420px"))
        self.open_button = W.Button(description=tr("open the child run"), icon="level-down")
        self.back_button = W.Button(description=tr("back to the parent run"), icon="level-up")
        self.child_box = W.VBox([])
        self.calls = W.HBox([self.child_picker, self.open_button], layout=W.Layout(display="none"))
        self.open_button.on_click(lambda _button: self.open_child())
        self.back_button.on_click(lambda _button: self.close_child())
        self.diagram.layout = W.Layout(flex=f"0 1 {DIAGRAM_WIDTH}px", max_width="100%")
        right = W.VBox([self.transcript, self.stream], layout=W.Layout(flex="1 1 320px", min_width="320px"))
        super().__init__(children=[
            W.HBox([self.stop_button, self.status], layout=W.Layout(align_items="center")),
            W.HBox([self.diagram, right], layout=W.Layout(flex_flow="row wrap")),
            self.calls, self.child_box,
        ])
        self.add_class("dreamloop-live")

    # -- public -------------------------------------------------------------

    def follow(self, run: Any, *, abort: Callable[[str], Any] | None = None) -> AsyncIterator[Any]:
        """Iterate ``run`` (a ``QueryRun``), showing each event; every event is passed through.

        ``abort(reason)`` is what Stop calls; default ``run.abort``. The event
        loop is captured when iteration starts, so a click from any thread
        hops onto it. When the run ends (or raises), the Terminal is shown and
        Stop is disabled.
        """
        return _Follow(self, run, abort if abort is not None else getattr(run, "abort", None))

    async def watch(self, run: Any, *, abort: Callable[[str], Any] | None = None) -> Any:
        """Consume ``run`` through ``follow`` and return ``run.terminal``."""
        async for _ in self.follow(run, abort=abort):
            pass
        return run.terminal

    def open_child(self, tool_use_id: str | None = None) -> StateInspector:
        """Show the child run of the followed run's ``Agent`` call ``tool_use_id`` (default: the one
        ``child_picker`` names) in a StateInspector below the transcript (a live child: ``refresh()`` re-reads
        it), and return it. KeyError naming the id if the run started no child for it."""
        children = self.run.trace.children if self.run is not None else {}
        tool_use_id = tool_use_id if tool_use_id is not None else self.child_picker.value
        if tool_use_id is None or tool_use_id not in children:
            raise KeyError(f"no sub-agent run for the Agent call {tool_use_id!r} in this run "
                           f"(known: {', '.join(children) or 'none'})")
        self.child = StateInspector(children[tool_use_id])
        self.child_box.children = [self.back_button, self.child]
        return self.child

    def close_child(self) -> None:
        """Close the child run's inspector."""
        self.child = None
        self.child_box.children = []

    def __repr__(self) -> str:
        return "LiveView()"

    def static_html(self) -> str:
        """The status line, the flowchart as lit and the transcript, as the view shows them now; the child runs
        the run started, and the open one's inspector."""
        calls = "".join(f"<li>{esc(label)}</li>" for label, _call in self.child_picker.options)
        calls = (f'<div class="dl-small">{esc(tr("sub-agent runs started here (open_child shows one):"))}'
                 f'<ul style="margin:0">{calls}</ul></div>') if calls else ""
        child = self.child.static_html() if self.child is not None else ""
        return (self.status.value + '<div style="display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start">'
                f'{self.diagram.value}<div style="flex:1 1 320px;min-width:320px">{self.transcript.value}</div></div>'
                + calls + child)

    def _sync_children(self, run: Any, *, force: bool = False) -> None:
        """The picker lists the run's child runs (rebuilt when one starts, a call's results arrive, the run ends)."""
        trace = getattr(run, "trace", None)
        children = getattr(trace, "children", None) or {}
        if not force and len(children) == len(self.child_picker.options):
            return
        options = []
        for call, child in children.items():
            given = self._inputs.get(call)
            description = given.get("description") if isinstance(given, dict) else None
            options.append((child_label(description or call, child), call))
        self.child_picker.options = options
        if options and self.child_picker.value is None:
            self.child_picker.value = options[0][1]  # options set again after an empty list leave no value
        self.calls.layout.display = None if options else "none"

    # -- the run's life -------------------------------------------------------

    def _reset(self) -> None:
        self._turns: list[_TurnView] = []
        self._finished_html: list[str] = []
        self._names: dict[str, str] = {}
        self._shown: dict[str, tuple[_TurnView, int]] = {}  # assistant uuid -> where its entry is
        self._progress: dict[str, str] = {}  # progress uuid -> tool_use_id (a tombstone may withdraw it)
        self._inputs: dict[str, Any] = {}  # tool_use id -> its input, from the response that asked for it
        self._blocks: dict[int, dict[str, Any]] = {}
        self._state: Any = None
        self._flushed = 0.0
        self._streaming = False
        self.phase, self.also, self.phases, self.terminal = None, frozenset(), [], None
        self.transcript.value = self.stream.value = ""
        self.diagram.value = _diagram(None)
        if hasattr(self, "child_picker"):
            self.close_child()
            self.child_picker.options, self.calls.layout.display = [], "none"

    def _begin(self, run: Any, abort: Callable[[str], Any] | None) -> None:
        self._reset()
        self.run = run
        self._loop = asyncio.get_running_loop()
        self._abort = abort
        self._running = True
        self._stopping = False
        self.stop_button.description = tr("Stop")
        self.stop_button.disabled = abort is None
        self._update_status()

    def _end(self, run: Any, error: BaseException | None = None) -> None:
        if not self._running:
            return
        self._running = False
        self.stop_button.disabled = True
        self.stop_button.description = tr("Stop")
        self._flush_stream(force=True, label=tr("streamed before the end (blocks that never finished are not kept)"))
        self.terminal = run.terminal if getattr(run, "done", False) else None
        if self.terminal is not None:
            # completed leaves through the stop checks; max_turns and an abort during tools through the check
            path = {"completed": ["stop"], "stop_hook_prevented": ["stop"], "max_turns": ["check"],
                    "aborted_tools": ["check"], "hook_stopped": ["check"]}.get(self.terminal.reason, [])
            self._light(*path, "terminal")
        self._render_transcript()
        self._sync_children(run, force=True)
        if self.terminal is None and error is not None:
            self.status.value = self._status_html(tr("ended with {error}", error=type(error).__name__))
        else:
            self._update_status()
        self.refresh_static()

    def _clicked(self, _button: Any) -> None:
        # The click may arrive on another thread (ipykernel 7.0–7.3 subshells): hop onto the run's loop.
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop)
        else:
            self._stop()

    def _stop(self) -> None:
        if not self._running or self._abort is None:
            return
        self.stop_button.disabled = True
        self._stopping = True
        self.stop_button.description = tr("Stopping…")
        self._abort("stop button")
        self._update_status()

    # -- events ---------------------------------------------------------------

    def _on_event(self, run: Any, event: Any) -> None:
        kind = event.type
        self._sync_children(run, force=kind == "user" and bool(getattr(event, "source_tool_use_ids", None)))
        if kind == "stream_event":
            self._on_stream(event.event)
        elif kind == "stream_request_start":
            self._on_request(run, event)
        elif kind == "assistant":
            self._streaming = False
            self._flush_stream(force=True)
            self.stream.value = ""
            self._blocks = {}
            self._names.update(tool_names([event]))
            uses = {b.id: b.input for b in event.message.content if b.type in ("tool_use", "server_tool_use")}
            self._inputs.update(uses)
            for call in (self._turn().tools.calls.values() if self._turn().tools is not None else ()):
                if call.input is None and call.id in uses:
                    call.input = uses[call.id]
            turn = self._turn()
            at = len(turn.entries)
            if turn.tools is not None and set(uses) & set(turn.tools.calls) and turn.tools in turn.entries:
                at = turn.entries.index(turn.tools)  # calls that started while it streamed go below it
                self._shown = {u: (t, i + 1 if t is turn and i >= at else i) for u, (t, i) in self._shown.items()}
            self._shown[event.uuid] = (turn, at)
            turn.entries.insert(at, message_html(event, self._names, max_chars=1500))
            running = turn.tools is not None and any(c.result is None for c in turn.tools.calls.values())
            # streaming tool execution: calls that started while it streamed still run; the phase is theirs
            self._light("decide", "tools") if running else self._light("decide")
            self._render_transcript()
        elif kind == "tombstone":
            self._on_tombstone(event)
        elif kind == "tool_use_summary":
            self._on_summary(event)
        elif kind == "progress":
            self._on_progress(event)
        elif kind == "user" and event.source_tool_use_ids:
            self._on_results(event)
        elif kind == "attachment" and self._on_call_hook(event.attachment):
            self._render_transcript()
        else:
            if (kind == "user" and getattr(event, "is_meta", False)) or (kind == "system" and event.subtype == "interrupted"):
                self._settle_stream()  # the Stop note follows what streamed of the response, as in the history
            if kind == "system" and event.subtype == "model_fallback":
                self._turn().detail = tr("falling back to {model}", model=(event.metadata or {}).get("to", "?"))
            elif kind == "system" and event.subtype == "api_retry":
                meta = event.metadata or {}
                self._turn().detail = tr("overloaded: asking again {count}/{limit}", count=meta.get("overloads"),
                                         limit=meta.get("limit"))
            self._turn().entries.append(message_html(event, self._names, max_chars=1500))
            self._update_status()
            if kind == "attachment" and event.attachment.get("type") == "max_turns_reached":
                self._light("check")
            elif kind == "attachment" and event.attachment.get("hookEvent") == "Stop":
                self._light("stop")
            self._render_transcript()

    def _settle_stream(self) -> None:
        """What streamed of a response the person stopped goes into the transcript, in its place, so the notes
        that follow it read after it (no finished block: the loop keeps no message of it)."""
        if self._blocks:
            self._flush_stream(force=True, label=tr("stopped while streaming"))
            self._turn().entries.append(self.stream.value)
            self.stream.value = ""
            self._blocks = {}

    def _on_tombstone(self, event: Any) -> None:
        """Strike out what the tombstone withdraws: a response shown, a call's progress, or the partial
        response that was streaming (drawn from what the tombstone carries)."""
        target = event.target_uuid
        if target in self._shown:
            turn, at = self._shown.pop(target)
            note = tr("withdrawn by a tombstone ({reason})", reason=event.reason)
            turn.entries[at] = (f'<del class="dl-struck" style="display:block">{turn.entries[at]}</del>'
                                f'<div class="dl-small dl-c-error">{esc(note)}</div>')
        elif target in self._progress:
            call = self._turn().tool_section().calls.get(self._progress[target])
            if call is not None:
                call.withdrawn = True
        else:  # the response that broke while streaming: what was shown of it, struck out
            self._blocks = {}
            self.stream.value = ""
            self._turn().entries.append(message_html(event, self._names, max_chars=1500))
        self._render_transcript()

    def _on_summary(self, event: Any) -> None:
        """Fold the batch the summary is about (an earlier turn's calls) under its one line."""
        for index, turn in enumerate(self._turns):
            if turn.tools is not None and set(event.tool_use_ids) <= set(turn.tools.calls):
                turn.tools.summary = event.summary
                if index < len(self._finished_html):  # drawn already: draw it again, folded
                    self._finished_html[index] = turn.html()
                break
        self._render_transcript()

    def _on_call_hook(self, record: dict[str, Any]) -> bool:
        """A hook record (or what hooks told the model) about a tool call of this turn: shown on that call."""
        tools = self._turns[-1].tools if self._turns else None
        call = tools.calls.get(record.get("toolUseID") or "") if tools is not None else None
        if call is None or not str(record.get("type", "")).startswith("hook_"):
            return False
        call.hooks.append(record)
        return True

    def _on_request(self, run: Any, event: Any) -> None:
        current = self._turns[-1] if self._turns else None
        state = getattr(run, "state", None)
        new_state = state is not None and state is not self._state
        if current is None or current.turn_count != event.turn_count or new_state:
            self._state = state
            transition = state.transition.reason if state is not None and state.transition else None
            detail = state.transition.detail if state is not None and state.transition else None
            if current is not None:
                self._finished_html.append(current.html())
            self._turns.append(_TurnView(event.turn_count, transition, bool(getattr(state, "stop_hook_active", False)),
                                         detail))
            # only next_turn passes "5. new State"; a stop hook's block goes from the stop checks to the State
            path = ["next", "state", "context", "model"] if transition == "next_turn" else ["state", "context", "model"]
            self._light(*path)
        else:  # another request in the same turn (a retry, a recovery)
            self._light("context", "model")
        self._blocks = {}
        self._streaming = True
        self._render_transcript()
        self._update_status()

    def _on_stream(self, raw: Any) -> None:
        kind = raw.type
        if kind == "content_block_start":
            block = raw.content_block
            self._blocks[raw.index] = {"type": block.type, "text": "", "name": getattr(block, "name", ""),
                                       "id": getattr(block, "id", "")}
        elif kind == "content_block_delta":
            block = self._blocks.setdefault(raw.index, {"type": "text", "text": "", "name": "", "id": ""})
            delta = raw.delta
            block["text"] += getattr(delta, "text", None) or getattr(delta, "partial_json", None) \
                or getattr(delta, "thinking", None) or ""
            self._flush_stream()
        elif kind in ("content_block_stop", "message_delta", "message_stop"):
            self._flush_stream(force=True)

    def _on_progress(self, event: Any) -> None:
        data = event.data
        self._progress[event.uuid] = event.tool_use_id
        tools = self._turn().tool_section()
        call = tools.calls.get(event.tool_use_id)
        if call is None:
            given = data.get("input")
            call = tools.calls[event.tool_use_id] = _Call(event.tool_use_id, data.get("name", "?"),
                                                          given if given is not None else self._input(event.tool_use_id))
        stage = data.get("stage")
        call.ran = call.ran or stage in ("started", "progress")
        if stage == "progress":
            call.last_progress = {k: v for k, v in data.items() if k not in ("stage", "name")}
        elif stage == "done":
            call.result = data.get("result")
            call.seconds = time.monotonic() - call.started
            if "ran" in data:  # the call's own word: a call denied after it was announced never ran
                call.ran = bool(data["ran"])
        # streaming tool execution: the call runs while the model still streams, both phases lit
        self._light("tools", also=("model",) if self._streaming else ())
        self._render_transcript()

    def _on_results(self, event: Any) -> None:
        tools = self._turn().tool_section()
        for block in event.message.get("content", []):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            ident = block.get("tool_use_id", "")
            call = tools.calls.get(ident)
            if call is None:  # never started (e.g. interrupted before it ran): its input is in the response
                call = tools.calls[ident] = _Call(ident, self._names.get(ident, "?"), self._inputs.get(ident))
            if call.result is None:
                call.result = block
        count = len(event.source_tool_use_ids)
        self._turn().entries.append(
            f'<div class="dl-small dl-c-user">{esc(_results_line(count))}</div>')
        self._light("check")
        self._render_transcript()

    def _input(self, tool_use_id: str) -> Any:
        """A call's input before its result: from the response that asked for it, or as far as it streamed."""
        if tool_use_id in self._inputs:
            return self._inputs[tool_use_id]
        for block in self._blocks.values():
            if block.get("id") == tool_use_id:
                try:
                    return json.loads(block["text"] or "{}")
                except ValueError:
                    return block["text"]
        return None

    # -- drawing --------------------------------------------------------------

    def _turn(self) -> _TurnView:
        if not self._turns:
            self._turns.append(_TurnView(1, None))
        return self._turns[-1]

    def _light(self, *path: str, also: tuple[str, ...] = ()) -> None:
        for phase in path:
            if phase != self.phase:
                self.phases.append(phase)
                self.phase = phase
        self.also = frozenset(also)
        self.diagram.value = _diagram(self.phase, self.also)
        self._update_status()

    def _flush_stream(self, force: bool = False, label: str | None = None) -> None:
        now = time.monotonic()
        if not force and now - self._flushed < self.throttle:
            return
        self._flushed = now
        if not self._blocks:
            return
        parts = []
        for _, block in sorted(self._blocks.items()):
            kind = block["type"]
            if kind == "tool_use":
                parts.append(f'<div>{badge("tool_use", "tool_use")}<b class="dl-mono">{esc(block["name"])}</b> '
                             f'<span class="dl-mono">{esc(block["text"])}</span></div>')
            elif kind == "thinking":
                parts.append(f'<div>{badge("thinking", "thinking")}<pre class="dl-pre dl-think">{esc(block["text"])}'
                             "</pre></div>")
            else:
                parts.append(f'<pre class="dl-pre">{esc(block["text"])}</pre>')
        label = tr("streaming…") if label is None else label
        self.stream.value = pane(f'<div class="dl-m dl-m-assistant" style="border-left-style:dotted">'
                                 f'<div class="dl-head dl-c-assistant"><b>assistant · {esc(label)}</b></div>'
                                 f"{''.join(parts)}</div>")

    def _render_transcript(self) -> None:
        finished = self._finished_html[-max(self.max_turns_shown - 1, 0):] if self.max_turns_shown > 1 else []
        hidden = len(self._finished_html) - len(finished)
        note = (f'<div class="dl-dim dl-small">'
                f'{esc(tr("… {count} earlier turns (StateInspector(run.trace) shows every one)", count=hidden))}'
                "</div>") if hidden else ""
        current = self._turns[-1].html() if self._turns else ""
        self.transcript.value = pane(f'{note}{"".join(finished)}{current}')

    def _update_status(self) -> None:
        if self.terminal is not None:
            self.status.value = self._status_html(terminal_html(self.terminal), raw=True)
            return
        if not self._turns and not self._running:
            return
        turn = self._turns[-1] if self._turns else None
        parts = [esc(tr("● running")) if self._running else esc(tr("ended"))]
        if turn is not None:
            parts.append(f"turn_count=<b>{turn.turn_count}</b>")
            parts.append(f"transition=<b>{esc(turn.transition)}</b>")
            if turn.detail:
                parts.append(f"<b>{esc(turn.detail)}</b>")
            if turn.stop_hook_active:
                parts.append("<b>stop_hook_active</b>")
        if self.phase:
            lit = " + ".join(sorted(self.also)) + " + " + self.phase if self.also else self.phase
            parts.append(esc(tr("phase: {phase}", phase="\0")).replace("\0", f"<b>{esc(lit)}</b>"))
        if self._stopping and self._running:
            parts.append(f'<span class="dl-c-error">{esc(tr("stopping (abort signal fired)"))}</span>')
        self.status.value = self._status_html(" · ".join(parts), raw=True)

    @staticmethod
    def _status_html(text: str, *, raw: bool = False) -> str:
        body = text if raw else esc(text)
        return pane(f'<div style="padding-left:8px">{body}</div>')


class _Follow:
    """The async iterator ``LiveView.follow`` returns: shows each event, then passes it on."""

    def __init__(self, view: LiveView, run: Any, abort: Callable[[str], Any] | None) -> None:
        self._view, self._run, self._abort = view, run, abort
        self._started = False

    def __aiter__(self) -> "_Follow":
        return self

    async def __anext__(self) -> Any:
        if not self._started:
            self._started = True
            self._view._begin(self._run, self._abort)
        try:
            event = await self._run.__anext__()
        except StopAsyncIteration:
            self._view._end(self._run)
            raise
        except BaseException as error:  # shown, then re-raised (CancelledError included)
            self._view._end(self._run, error)
            raise
        self._view._on_event(self._run, event)
        return event

    async def aclose(self) -> None:
        """Close the run (if it can be closed) and show how it ended."""
        closer = getattr(self._run, "aclose", None)
        try:
            if closer is not None:
                await closer()
        finally:
            self._view._end(self._run)


def _results_line(count: int) -> str:
    """The line under a turn's tool calls: what goes back to the model."""
    if count == 1:
        return tr("→ user message with 1 tool_result block (call order) goes back to the model")
    return tr("→ user message with {count} tool_result blocks (call order) goes back to the model", count=count)


def _short_json(value: Any, limit: int = 120) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = pretty_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
