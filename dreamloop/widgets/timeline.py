"""Timeline: model streaming vs tool execution, per turn, from a Trace's event times.

Owns the spans (the model's from ``stream_request_start`` to the assistant
message; each tool call's from progress ``started`` to ``done``), a bar chart
of them (one SVG in one HTML value; overlapping bars are a parallel batch; a
dashed line marks where the stream ended, so calls that started while the
model still streamed show left of it) and a one-line-per-turn text summary. It reads trace events only and knows
nothing about how the loop schedules tools. Times vary from run to run, so
they appear in the chart and the summary but never in the ``repr``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import ipywidgets as W

from ..language import tr
from ..trace import Checkpoint, Trace
from .html import COLORS, esc, pane
from .static import StaticHTML

__all__ = ["Span", "Timeline", "TurnSpans", "side_by_side", "turn_spans"]


@dataclass(frozen=True)
class Span:
    """One bar: ``kind`` ``"model"`` (a request's streaming) or ``"tool"`` (one call's run).

    ``start`` / ``end`` are seconds since the run started; ``label`` is
    ``"model"`` or the tool name; ``detail`` a short input; ``finished`` is
    False when the span never got its end (interrupted: it ends at the turn's
    last event); ``is_error`` marks an ``is_error`` result.
    """

    kind: Literal["model", "tool"]
    label: str
    start: float
    end: float
    tool_use_id: str | None = None
    detail: str = ""
    finished: bool = True
    is_error: bool = False

    @property
    def seconds(self) -> float:
        return max(self.end - self.start, 0.0)


@dataclass(frozen=True)
class TurnSpans:
    """The spans of one checkpoint (one loop iteration): ``model`` and ``tools`` (in start order)."""

    index: int
    turn_count: int
    model: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)

    @property
    def stream_end(self) -> float | None:
        """When this turn's (last) model stream ended; None without one."""
        return max((s.end for s in self.model), default=None)

    @property
    def seconds(self) -> float:
        """The turn's wall time: from its first span's start to its last span's end."""
        spans = [*self.model, *self.tools]
        return max((s.end for s in spans), default=0.0) - min((s.start for s in spans), default=0.0)

    def early(self) -> list[Span]:
        """Tool spans that started before the stream ended (streaming tool execution)."""
        end = self.stream_end
        return [s for s in self.tools if end is not None and s.start < end]

    def batches(self) -> list[list[Span]]:
        """Tool spans grouped where they overlap in time (a parallel batch shows as one group)."""
        groups: list[list[Span]] = []
        group_end = float("-inf")
        for span in sorted(self.tools, key=lambda s: (s.start, s.end)):
            if groups and span.start < group_end:
                groups[-1].append(span)
                group_end = max(group_end, span.end)
            else:
                groups.append([span])
                group_end = span.end
        return groups

    def summary(self, times: bool = True) -> str:
        """``turn 1: model 0.12 s, tools: Read ×4 in parallel 0.21 s`` (``times=False``: without the seconds).

        Calls that started while the model still streamed say so:
        ``Read ×3 in parallel 1.00 s (started while the model streamed)``.
        """
        model = sum(s.seconds for s in self.model)
        text = tr("turn {n}: model", n=self.turn_count) + (_seconds(model) if times else "")
        if any(not s.finished for s in self.model):
            text += tr(" (interrupted)")
        if not self.tools:
            return text + tr(", no tools")
        described = []
        for group in self.batches():
            seconds = max(s.end for s in group) - min(s.start for s in group)
            names = Counter(s.label for s in group)
            calls = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in names.items())
            together = tr(" in parallel") if len(group) > 1 else ""
            notes = []
            errors = sum(s.is_error for s in group)
            if errors:
                notes.append(tr("{count} is_error", count=errors))
            if any(not s.finished for s in group):
                notes.append(tr("interrupted"))
            early = sum(s in self.early() for s in group)
            if early:
                notes.append(tr("started while the model streamed") if early == len(group)
                             else tr("{count} started while the model streamed", count=early))
            extra = tr(" ({notes})", notes=tr(", ").join(notes)) if notes else ""
            took = _seconds(seconds) if times else ""
            described.append(f"{calls}{together}{took}{extra}")
        return text + tr(", tools: ") + tr(", then ").join(described)


def turn_spans(trace: Trace, point: Checkpoint) -> TurnSpans:
    """The spans of one checkpoint, from its events (``t`` seconds, ``type``)."""
    events = point.events
    last_t = events[-1]["t"] if events else 0.0
    model: list[Span] = []
    opened: float | None = None
    started: dict[str, tuple[float, Any]] = {}
    tools: dict[str, Span] = {}
    for event in events:
        kind, t = event["type"], event["t"]
        if kind == "stream_request_start":
            if opened is not None:  # a request that never produced a message (a retry)
                model.append(Span("model", "model", opened, t, finished=False))
            opened = t
        elif kind == "assistant" and opened is not None:
            model.append(Span("model", "model", opened, t))
            opened = None
        elif kind == "progress":
            message = trace.messages.get(event.get("uuid", ""))
            data = message.data if message is not None else {}
            ident = event.get("tool_use_id", "")
            if event.get("stage") == "started":
                started[ident] = (t, data)
            elif event.get("stage") == "done" and ident in started:
                t0, first = started.pop(ident)
                result = data.get("result") or {}
                tools[ident] = Span("tool", first.get("name", "?"), t0, t, ident, _detail(first.get("input")),
                                    is_error=bool(result.get("is_error")))
    if opened is not None:
        model.append(Span("model", "model", opened, last_t, finished=False))
    for ident, (t0, first) in started.items():  # never finished: interrupted
        tools[ident] = Span("tool", first.get("name", "?"), t0, last_t, ident, _detail(first.get("input")),
                            finished=False, is_error=True)
    ordered = sorted(tools.values(), key=lambda s: (s.start, s.end))
    return TurnSpans(point.index, point.turn_count, model, ordered)


class Timeline(StaticHTML, W.VBox):
    """Model streaming vs tool runs, per turn: ``Timeline(trace)``; ``display(timeline)``.

    ``trace``: a ``Trace`` (live or loaded) or a ``QueryRun`` (its ``.trace``).
    ``turns`` holds one ``TurnSpans`` per checkpoint; ``chart`` is one
    ``HTML`` with an SVG bar chart (a row for the model, one lane per
    overlapping tool call, so a parallel batch shows as stacked, overlapping
    bars) and the text summary under it; ``summary()`` returns that text.
    ``refresh()`` re-reads a trace still being filled. ``seconds`` fixes the
    time axis (default: the trace's last end), so timelines drawn with the
    same ``seconds`` compare bar for bar (``side_by_side``). The repr is
    ``Timeline(turns=N)``: times never appear in it. A row's label is the
    tool and its input, cut at a word with the whole of it as a tooltip;
    the stored output carries the chart as static HTML (``StaticHTML``).
    """

    def __init__(self, trace: Trace | Any, *, width: int = 720, seconds: float | None = None) -> None:
        self.trace = trace if isinstance(trace, Trace) else getattr(trace, "trace", None)
        if not isinstance(self.trace, Trace):
            raise TypeError(f"Timeline needs a Trace or a QueryRun, not {type(trace).__name__}")
        self.width = width
        self.seconds = seconds
        self.turns: list[TurnSpans] = []
        self.chart = W.HTML()
        super().__init__(children=[self.chart])
        self.add_class("dreamloop-timeline")
        self.refresh()

    def refresh(self) -> None:
        """Re-read the trace and redraw."""
        self.turns = [turn_spans(self.trace, point) for point in self.trace.checkpoints]
        self.chart.value = self._svg() + self._summary_html()
        self.refresh_static()

    def static_html(self) -> str:
        """The chart and the per-turn summary, as the widget shows them."""
        return self.chart.value

    def summary(self, times: bool = True) -> str:
        """One line per turn (``turn 1: model 0.12 s, tools: Read ×4 in parallel 0.21 s``), then the total.

        ``times=False`` leaves the seconds out (and the total line): text that
        is the same on every run, for a notebook's checked output.
        """
        if not self.turns:
            return tr("no turns yet")
        lines = [turn.summary(times) for turn in self.turns]
        if times:
            lines.append(tr("total") + _seconds(self._end()))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Timeline(turns={len(self.turns)})"

    # -- drawing --------------------------------------------------------------

    def _end(self) -> float:
        ends = [s.end for turn in self.turns for s in (*turn.model, *turn.tools)]
        return max(ends, default=0.0)

    def _summary_html(self) -> str:
        return pane(f'<pre class="dl-pre">{esc(self.summary())}</pre>')

    def _svg(self) -> str:
        if not self.turns:
            return pane(f'<span class="dl-dim">{esc(tr("No checkpoint yet."))}</span>')
        row, pad = 16, 4
        labels = [tr("turn {n} model", n=turn.turn_count) for turn in self.turns] + [
            _lane_label(lane) for turn in self.turns for lane in _lanes(turn.tools)]
        left = _label_width(labels)
        plot = self.width - left - 20
        total = max(self.seconds or 0.0, self._end()) or 1.0
        x = lambda t: left + plot * t / total  # noqa: E731
        rows: list[str] = []
        y = 28
        for turn in self.turns:
            top = y
            rows.append(f'<line x1="0" x2="{self.width}" y1="{y - 2}" y2="{y - 2}" stroke="#e2e8f0"/>')
            rows.append(_label(4, y + row - 4, tr("turn {n} model", n=turn.turn_count), COLORS["assistant"],
                               left - 8))
            for span in turn.model:
                rows.append(_bar(x(span.start), y, x(span.end), row - pad, COLORS["user"], span))
            y += row
            for lane in _lanes(turn.tools):
                rows.append(_label(12, y + row - 4, _lane_label(lane), COLORS["tool_use"], left - 16))
                for span in lane:
                    color = COLORS["error"] if span.is_error else "#dd6b20"
                    rows.append(_bar(x(span.start), y, x(span.end), row - pad, color, span))
                y += row
            if turn.early():  # the calls left of this line started while the model streamed
                end = x(turn.stream_end or 0.0)
                rows.append(f'<line class="stream-end" x1="{end:.1f}" x2="{end:.1f}" y1="{top}" y2="{y}" '
                            f'stroke="{COLORS["user"]}" stroke-dasharray="3,2">'
                            f'<title>{esc(tr("the stream ended here"))}</title></line>')
            y += pad
        ticks = []
        step = _tick_step(total)
        t = 0.0
        while t <= total + 1e-9:
            ticks.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="14" y2="{y}" stroke="#edf2f7"/>'
                         f'<text x="{x(t):.1f}" y="11" font-size="11" text-anchor="middle" fill="#718096">'
                         f"{esc(tr('{seconds:g} s', seconds=t))}</text>")
            t += step
        legend = (f'<text x="4" y="11" font-size="11" fill="#4a5568">{esc(tr("seconds since the run started"))} · '
                  f'<tspan fill="{COLORS["user"]}">■ {esc(tr("model streaming"))}</tspan> '
                  f'<tspan fill="#dd6b20">■ {esc(tr("tool running"))}</tspan> '
                  f'<tspan fill="{COLORS["error"]}">■ {esc(tr("is_error / interrupted"))}</tspan></text>')
        height = y + 4
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{height + 14}" '
                f'viewBox="0 0 {self.width} {height + 14}" font-family="sans-serif" role="img" '
                f'aria-label="{esc(tr("seconds since the run started"))}">'
                f'<rect width="100%" height="100%" fill="white"/>'
                f'<g transform="translate(0,14)">{"".join(ticks)}{"".join(rows)}</g>{legend}</svg>')


class _SideBySide(StaticHTML, W.VBox):
    """What ``side_by_side`` returns: labelled timelines on one axis, with a stored static fallback."""

    static_title = "Timelines"

    def __init__(self, timelines: dict[str, Timeline]) -> None:
        self.timelines = timelines
        children: list[W.Widget] = []
        for label, timeline in timelines.items():
            children += [W.HTML(f"<b>{esc(label)}</b>"), timeline]
        super().__init__(children=children)
        self.add_class("dreamloop-timelines")

    def static_html(self) -> str:
        return "".join(f"<div><b>{esc(label)}</b></div>{timeline.static_html()}"
                       for label, timeline in self.timelines.items())

    def __repr__(self) -> str:
        return f"side_by_side({', '.join(repr(label) for label in self.timelines)})"


def side_by_side(traces: dict[str, Trace | Any], *, width: int = 720) -> W.VBox:
    """One labelled ``Timeline`` per trace (or ``QueryRun``), all on the same time axis, one above the other.

    ``traces``: label → trace, e.g. ``{"switch off": off.trace, "switch on": on.trace}``. Returns a
    ``VBox`` of a label and a ``Timeline`` per entry (``.timelines``: label → Timeline); its repr,
    ``side_by_side('switch off', 'switch on')``, names no times.
    """
    timelines = {label: Timeline(trace, width=width) for label, trace in traces.items()}
    axis = max((t._end() for t in timelines.values()), default=0.0)
    for timeline in timelines.values():
        timeline.seconds = axis
        timeline.refresh()
    return _SideBySide(timelines)


def _seconds(value: float) -> str:
    """`` 0.12 s`` in the learner's language (a leading space: it follows a label)."""
    return tr(" {seconds:.2f} s", seconds=value)


def _lanes(spans: list[Span]) -> list[list[Span]]:
    """Greedy interval partitioning: overlapping spans go to different lanes."""
    lanes: list[list[Span]] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        for lane in lanes:
            if lane[-1].end <= span.start:
                lane.append(span)
                break
        else:
            lanes.append([span])
    return lanes


def _bar(x0: float, y: float, x1: float, h: float, color: str, span: Span) -> str:
    width = max(x1 - x0, 1.5)
    label = tr("model") if span.label == "model" else span.label  # a tool's name stays as it is
    title = f"{label} {span.detail}".strip() + tr(" {seconds:.3f} s", seconds=span.seconds)
    if not span.finished:
        title += tr(" (interrupted)")
    if span.is_error and span.finished:
        title += tr(" (is_error)")
    opacity = "0.55" if not span.finished else "0.9"
    return (f'<rect x="{x0:.1f}" y="{y}" width="{width:.1f}" height="{h}" rx="2" fill="{color}" '
            f'fill-opacity="{opacity}"><title>{esc(title)}</title></rect>')


_CHAR_PX = 6.2
"""About how wide one character of the 11 px label font is."""


def _lane_label(lane: list[Span]) -> str:
    """What a lane of tool bars is: one call's tool and input, or the tools of the calls that share it."""
    if len(lane) == 1:
        return f"{lane[0].label} {lane[0].detail}".strip()
    return ", ".join(sorted({s.label for s in lane}))


def _label_width(labels: list[str]) -> int:
    """The label column: wide enough for the longest label, between 150 and 300 px."""
    longest = max((len(text) for text in labels), default=0)
    return int(min(max(150, longest * _CHAR_PX + 24), 300))


def _label(x: float, y: float, text: str, color: str, width: float) -> str:
    """A row label that fits ``width`` px: cut at a word (never inside one), with the whole text as a tooltip."""
    room = max(int(width / _CHAR_PX), 8)
    shown = text if len(text) <= room else _cut_at_word(text, room)
    title = f"<title>{esc(text)}</title>" if shown != text else ""
    return (f'<text x="{x}" y="{y}" font-size="11" fill="{color}" xml:space="preserve">{title}'
            f"{esc(shown)}</text>")


def _cut_at_word(text: str, room: int) -> str:
    """``text`` cut to at most ``room`` characters at a space or comma, ending with "…"."""
    head = text[: room - 1]
    cut = max(head.rfind(" "), head.rfind(","))
    if cut >= room // 3:
        head = head[:cut]
    return head.rstrip(" ,=") + "…"


def _tick_step(total: float) -> float:
    for step in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600):
        if total / step <= 8:
            return step
    return total / 8


def _detail(value: Any) -> str:
    if isinstance(value, dict):
        text = ", ".join(f"{k}={v!r}" for k, v in value.items())
    else:
        text = "" if value is None else repr(value)
    return text if len(text) <= 60 else text[:59] + "…"
