"""ContextMeter: the context window filling turn by turn, what each stage saved, what the cache did.

Owns one chart per run: for each checkpoint a bar of the tokens sent, with
each context stage's saving stacked above it in the stage's colour (the bar's
full height is the history before the stages), the thresholds and the window
as lines; under it, the request's input split into cache reads, cache writes
and uncached tokens (from the response's ``usage``). It reads a Trace
(``Checkpoint.context`` and the assistant messages' usage) and knows nothing
about how the stages work. The repr is ``ContextMeter(turns=N)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import ipywidgets as W

from ..language import N_, tr
from ..trace import Checkpoint, Trace
from .html import esc, pane
from .static import StaticHTML

__all__ = ["STAGE_COLORS", "ContextMeter", "MeterTurn", "meter_turn"]

STAGE_COLORS = {
    "tool_result_budget": "#805ad5",
    "snip": "#d69e2e",
    "microcompact": "#dd6b20",
    "context_collapse": "#319795",
    "autocompact": "#c53030",
    "blocking_limit": "#742a2a",
    "window": "#1a202c",
}
"""The colour of each stage's saving and threshold line (and of the window line)."""

SUMMARY_CAP = "max-height:18em;overflow:auto"
"""The per-turn summary's box under the chart: it scrolls past 18 lines, in the live widget and its stored copy."""

_SENT = "#2b6cb0"
_READ, _WRITE, _PLAIN = "#38a169", "#dd6b20", "#a0aec0"


@dataclass(frozen=True)
class MeterTurn:
    """One checkpoint as the meter draws it (token counts are estimates, as the offline API bills them).

    ``tokens``: the request as sent; ``tokens_in``: the history before the
    stages; ``savings``: ``(stage, tokens saved)`` in pipeline order;
    ``cache_read`` / ``cache_write`` / ``uncached``: the response's usage
    (0 when no response came back); ``thresholds`` and ``window`` from the
    pipeline's record (empty / None when the pipeline was off);
    ``staged_folds``: folds staged and not committed; ``stopped``: the
    Terminal's reason when the run ended at this checkpoint.
    """

    index: int
    turn_count: int
    tokens: int
    tokens_in: int
    savings: list[tuple[str, int]] = field(default_factory=list)
    cache_read: int = 0
    cache_write: int = 0
    uncached: int = 0
    thresholds: dict[str, int] = field(default_factory=dict)
    window: int | None = None
    staged_folds: int = 0
    stopped: str | None = None

    def summary(self) -> str:
        """``turn 12: 1,506 tokens sent (window 6,000) · microcompact −664 · cache read 0, written 1,506``."""
        window = tr(" (window {window:,})", window=self.window) if self.window else ""
        parts = [tr("turn {n}: {tokens:,} tokens sent", n=self.turn_count, tokens=self.tokens) + window]
        parts += [f"{stage} −{saved:,}" for stage, saved in self.savings if saved > 0]
        if self.staged_folds:
            parts.append(tr("{count} fold staged", count=1) if self.staged_folds == 1 else
                         tr("{count} folds staged", count=self.staged_folds))
        if self.cache_read or self.cache_write or self.uncached:
            parts.append(tr("cache read {read:,}, written {written:,}", read=self.cache_read, written=self.cache_write))
        if self.stopped:
            parts.append(tr("stopped: {reason} (nothing sent)", reason=self.stopped) if self.stopped == "blocking_limit"
                         else tr("ended: {reason}", reason=self.stopped))
        return " · ".join(parts)


def meter_turn(trace: Trace, point: Checkpoint) -> MeterTurn:
    """The meter's view of one checkpoint."""
    usages = [m.message.usage for m in trace.resolve(point.assistant_messages)]
    read = sum(u.cache_read_input_tokens or 0 for u in usages)
    write = sum(u.cache_creation_input_tokens or 0 for u in usages)
    plain = sum(u.input_tokens for u in usages)
    record = point.context or {}
    tokens = record.get("tokens", read + write + plain)
    savings: dict[str, int] = {}
    for stage in record.get("stages", []):
        savings[stage["stage"]] = savings.get(stage["stage"], 0) + stage["before"] - stage["after"]
    stopped = point.terminal.reason if point.terminal is not None else None
    return MeterTurn(point.index, point.turn_count, tokens, record.get("tokens_in", tokens), list(savings.items()),
                     read, write, plain, dict(record.get("thresholds", {})), record.get("window"),
                     record.get("staged_folds", 0), stopped)


class ContextMeter(StaticHTML, W.VBox):
    """The context window turn by turn: ``ContextMeter(trace)``; ``display(meter)``.

    ``trace``: a ``Trace`` (live or loaded) or a ``QueryRun`` (its ``.trace``).
    ``turns``: one ``MeterTurn`` per checkpoint; ``chart``: one ``HTML`` with
    the SVG (bars: tokens sent, each stage's saving stacked above in its
    colour; dashed lines: the thresholds; the window on top; under it, cache
    reads / writes / uncached per request) and the text summary.
    ``summary()`` returns that text; ``refresh()`` re-reads a trace being filled.
    ``select(index)`` marks one checkpoint; ``follow(inspector)`` keeps the
    mark on the checkpoint a ``StateInspector`` shows. The stored output
    carries the chart and the summary as static HTML (``StaticHTML``).
    """

    def __init__(self, trace: Trace | Any, *, width: int = 760) -> None:
        self.trace = trace if isinstance(trace, Trace) else getattr(trace, "trace", None)
        if not isinstance(self.trace, Trace):
            raise TypeError(f"ContextMeter needs a Trace or a QueryRun, not {type(trace).__name__}")
        self.width = width
        self.turns: list[MeterTurn] = []
        self.selected: int | None = None
        self.chart = W.HTML()
        super().__init__(children=[self.chart])
        self.add_class("dreamloop-meter")
        self.refresh()

    def refresh(self) -> None:
        """Re-read the trace and redraw."""
        self.turns = [meter_turn(self.trace, point) for point in self.trace.checkpoints]
        # the summary's cap is inline too: an untrusted notebook's stored copy loses the stylesheet (and with it
        # the dl-pre class's 18em), and 40 turns then stood 1,153 px tall under the chart
        self.chart.value = self._svg() + pane(f'<pre class="dl-pre" style="{SUMMARY_CAP}">{esc(self.summary())}</pre>')
        self.refresh_static()

    def static_html(self) -> str:
        """The chart and the per-turn summary, as the widget shows them."""
        return self.chart.value

    def select(self, index: int | None) -> None:
        """Mark checkpoint ``index`` on the chart (None: no mark)."""
        self.selected = index
        self.refresh()

    def follow(self, inspector: Any) -> "ContextMeter":
        """Mark the checkpoint ``inspector`` (a ``StateInspector``) shows, now and whenever its slider moves."""
        inspector.slider.observe(lambda change: self.select(change["new"]), names="value")
        self.select(inspector.slider.value)
        return self

    def summary(self) -> str:
        """One line per checkpoint, then the cache's totals (the same on every run of a script)."""
        if not self.turns:
            return tr("no turns yet")
        lines = [turn.summary() for turn in self.turns]
        read = sum(t.cache_read for t in self.turns)
        written = sum(t.cache_write for t in self.turns)
        sent = sum(t.cache_read + t.cache_write + t.uncached for t in self.turns)
        if sent:
            lines.append(tr("all requests: {sent:,} input tokens; cache read {read:,}, written {written:,}, "
                            "uncached {uncached:,}", sent=sent, read=read, written=written,
                            uncached=sent - read - written))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"ContextMeter(turns={len(self.turns)})"

    # -- drawing ---------------------------------------------------------------

    def _svg(self) -> str:
        if not self.turns:
            return pane(f'<span class="dl-dim">{esc(tr("No checkpoint yet."))}</span>')
        left, right, top = 56, 150, 22
        plot_w = self.width - left - right
        main_h, cache_h, gap = 200, 70, 34
        window = max((t.window or 0 for t in self.turns), default=0)
        ceiling = max([window, *(t.tokens_in for t in self.turns), *(t.tokens for t in self.turns), 1])
        step = plot_w / len(self.turns)
        bar = max(min(step * 0.7, 28), 1.5)
        y = lambda tokens: top + main_h - main_h * tokens / ceiling  # noqa: E731
        parts: list[str] = []
        if self.selected is not None and 0 <= self.selected < len(self.turns):
            parts.append(f'<rect x="{left + self.selected * step:.1f}" y="{top}" width="{step:.1f}" '
                         f'height="{main_h}" fill="#fefcbf"><title>{esc(tr("the checkpoint the inspector shows"))}</title></rect>')
        for k, turn in enumerate(self.turns):
            x = left + k * step + (step - bar) / 2
            parts.append(_rect(x, y(turn.tokens), bar, top + main_h - y(turn.tokens), _SENT,
                               tr("turn {n}: {tokens:,} tokens sent", n=turn.turn_count, tokens=turn.tokens)))
            base = turn.tokens
            for stage, saved in reversed(turn.savings):
                if saved <= 0:
                    continue
                color = STAGE_COLORS.get(stage, "#718096")
                parts.append(_rect(x, y(base + saved), bar, y(base) - y(base + saved), color,
                                   tr("turn {n}: {stage} saved {saved:,} tokens", n=turn.turn_count, stage=stage,
                                      saved=saved), opacity=0.55))
                base += saved
            if turn.stopped == "blocking_limit":
                parts.append(f'<text x="{x + bar / 2:.1f}" y="{y(turn.tokens) - 3:.1f}" font-size="11" '
                             f'text-anchor="middle" fill="{STAGE_COLORS["blocking_limit"]}">✕</text>')
        lines = dict(self.turns[-1].thresholds) or ({"window": window} if window else {})
        # thresholds at the same height share one line and one label ("snip · microcompact 2,000"); labels
        # closer than a line of text are pushed up, so none overlaps another
        levels: dict[int, list[str]] = {}
        for name, tokens in sorted(lines.items(), key=lambda item: (item[1], item[0])):
            levels.setdefault(tokens, []).append(name)
        placed: list[float] = []
        for tokens, names in sorted(levels.items()):
            ly = y(tokens)
            label_y = ly + 3 if not placed else min(ly + 3, placed[-1] - 12)
            placed.append(label_y)
            color = STAGE_COLORS.get(names[0], "#718096")
            dash = "" if names == ["window"] else ' stroke-dasharray="4 3"'
            label = " · ".join(f'<tspan fill="{STAGE_COLORS.get(n, "#718096")}">{esc(n)}</tspan>' for n in names)
            parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{ly:.1f}" y2="{ly:.1f}" stroke="{color}"{dash}/>'
                         f'<text x="{left + plot_w + 4}" y="{label_y:.1f}" font-size="11" fill="{color}">'
                         f"{label} {tokens:,}</text>")
        axis = (f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + main_h}" stroke="#a0aec0"/>'
                f'<text x="{left - 4}" y="{top + 4}" font-size="11" text-anchor="end" fill="#718096">{ceiling:,}</text>'
                f'<text x="{left - 4}" y="{top + main_h}" font-size="11" text-anchor="end" fill="#718096">0</text>')
        cache_top = top + main_h + gap
        biggest = max([t.cache_read + t.cache_write + t.uncached for t in self.turns] + [1])
        cy = lambda tokens: cache_h * tokens / biggest  # noqa: E731
        for k, turn in enumerate(self.turns):
            x = left + k * step + (step - bar) / 2
            bottom = cache_top + cache_h
            kinds = ((turn.cache_read, _READ, N_("cache read")), (turn.cache_write, _WRITE, N_("cache write")),
                     (turn.uncached, _PLAIN, N_("uncached")))
            for value, color, what in kinds:
                if value:
                    parts.append(_rect(x, bottom - cy(value), bar, cy(value), color,
                                       tr("turn {n}: {what} {value:,} tokens", n=turn.turn_count, what=tr(what),
                                          value=value)))
                    bottom -= cy(value)
            if k % max(1, len(self.turns) // 12) == 0:
                parts.append(f'<text x="{x + bar / 2:.1f}" y="{cache_top + cache_h + 12}" font-size="11" '
                             f'text-anchor="middle" fill="#718096">{turn.turn_count}</text>')
        stages = [s for s in STAGE_COLORS if s not in ("window", "blocking_limit")]
        legend = (f'<text x="4" y="12" font-size="11" fill="#4a5568">{esc(tr("tokens per request"))} · '
                  f'<tspan fill="{_SENT}">■ {esc(tr("sent"))}</tspan> '
                  + " ".join(f'<tspan fill="{STAGE_COLORS[s]}">■ {s}</tspan>' for s in stages)
                  + "</text>"
                  f'<text x="4" y="{cache_top - 6}" font-size="11" fill="#4a5568">{esc(tr("input by cache status"))} · '
                  f'<tspan fill="{_READ}">■ {esc(tr("read"))}</tspan> <tspan fill="{_WRITE}">■ {esc(tr("written"))}</tspan> '
                  f'<tspan fill="{_PLAIN}">■ {esc(tr("uncached"))}</tspan> · {esc(tr("turn_count below"))}</text>')
        height = cache_top + cache_h + 18
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{height}" '
                f'viewBox="0 0 {self.width} {height}" font-family="sans-serif" role="img" '
                f'aria-label="{esc(tr("tokens per request"))}">'
                f'<rect width="100%" height="100%" fill="white"/>{legend}{axis}{"".join(parts)}</svg>')


def _rect(x: float, y: float, w: float, h: float, color: str, title: str, opacity: float = 0.9) -> str:
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{max(h, 0.5):.1f}" fill="{color}" '
            f'fill-opacity="{opacity}"><title>{esc(title)}</title></rect>')
