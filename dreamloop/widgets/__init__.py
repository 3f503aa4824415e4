"""Widgets for seeing the loop in a notebook, composed from core ipywidgets.

* ``StateInspector(trace)``: a slider over checkpoints; turn_count,
  transition, Terminal; panes for messages, messages_for_query,
  assistant_messages, tool_results, attachments.
* ``LiveView()``: a running loop, live (streaming text, tool calls, the phase
  lit on the flowchart) with a Stop button: ``async for e in live.follow(run)``.
* ``Timeline(trace)``: model streaming vs tool runs per turn; ``side_by_side`` draws
  several runs on one time axis.
* ``ContextMeter(trace)``: the context window filling turn by turn, each
  context stage's saving, the thresholds, cache reads vs writes.
* ``AskPrompt(auto=None)``: Allow / Deny buttons as ``QueryParams(ask=...)``.
* ``Switchboard(columns)``: the feature switches (rows) on or off in each run (columns).
* ``CompareView(name, left, right)``: two loops' requests on one scenario, stepped side by side (chapter 11).
* ``person_watching()``, ``paced(script, ...)``, ``slowed(tools, s)``: slow a run down for a person
  (to press Stop), never under the notebook targets.

Every widget has a stable ``text/plain`` repr (no ids, no times) for nbval,
and its stored output carries a static ``text/html`` rendering beside the
widget view (``StaticHTML`` in ``static.py``; a new widget mixes it in), so a
notebook read without a kernel shows what the widget showed.
Each pane is one HTML value (``html.py`` renders messages). The package
knows nothing about the loop beyond what traces and events carry.
"""

from __future__ import annotations

from .ask import AUTO_ANSWER_ENV, AskPrompt
from .compare import CompareView
from .inspector import PANES, StateInspector
from .kernel import warn_if_old_kernel
from .live import LiveView
from .meter import STAGE_COLORS, ContextMeter, MeterTurn, meter_turn
from .pace import paced, person_watching, slowed
from .static import StaticHTML
from .switchboard import Switchboard, switch_fields
from .timeline import Span, Timeline, TurnSpans, side_by_side, turn_spans

__all__ = [
    "AUTO_ANSWER_ENV",
    "AskPrompt",
    "CompareView",
    "ContextMeter",
    "LiveView",
    "MeterTurn",
    "PANES",
    "STAGE_COLORS",
    "Span",
    "StateInspector",
    "StaticHTML",
    "Switchboard",
    "Timeline",
    "TurnSpans",
    "meter_turn",
    "paced",
    "person_watching",
    "side_by_side",
    "slowed",
    "switch_fields",
    "turn_spans",
    "warn_if_old_kernel",
]
