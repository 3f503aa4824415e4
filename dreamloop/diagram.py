"""The loop's flowchart as SVG, with any phase lit (after the four-step-loop text's flowchart of queryLoop()).

Used by the live view (the current phase lit) and by ``images/build.py``
(which writes ``images/loop.svg`` and, in Chinese, ``images/loop.zh.svg``). Pure string building; the
same input in the same language (``dreamloop.language``) always gives the same bytes.
"""

from __future__ import annotations

from html import escape
from typing import Iterable

from .language import N_, tr

__all__ = ["PHASES", "loop_flowchart_svg"]

# id -> (label, x, y, shape); coordinates are box centres in a 700 x 600 canvas.
_NODES: dict[str, tuple[str, int, int, str]] = {
    "state": (N_("1. take the current State"), 250, 40, "box"),
    "context": (N_("2. messages_for_query (context pipeline)"), 250, 115, "box"),
    "model": (N_("3. call the model, stream the response"), 250, 190, "box"),
    "decide": (N_("tool_use received?"), 250, 275, "diamond"),
    "stop": (N_("stop checks"), 565, 275, "box"),
    "tools": (N_("4. run tools, collect tool_result"), 250, 365, "box"),
    "check": (N_("abort, hook stop, max_turns?"), 250, 455, "diamond"),
    "next": (N_("5. new State: turn_count + 1"), 250, 545, "box"),
    "terminal": (N_("Terminal (the reason)"), 565, 455, "terminal"),
}
PHASES = tuple(_NODES)
"""Node ids that can be lit: state, context, model, decide, stop, tools, check, next, terminal."""

# (from, to, label, path points between the two nodes' edges)
_EDGES = [
    ("state", "context", "", [(250, 58), (250, 97)]),
    ("context", "model", "", [(250, 133), (250, 172)]),
    ("model", "decide", "", [(250, 208), (250, 247)]),
    ("decide", "stop", N_("no"), [(370, 275), (473, 275)]),
    ("decide", "tools", N_("yes"), [(250, 303), (250, 347)]),
    ("stop", "terminal", N_("end"), [(565, 293), (565, 437)]),
    ("stop", "state", N_("a stop hook blocks"), [(565, 257), (565, 40), (412, 40)]),
    ("tools", "check", "", [(250, 383), (250, 427)]),
    ("check", "terminal", N_("yes"), [(370, 455), (473, 455)]),
    ("check", "next", N_("no"), [(250, 483), (250, 527)]),
    ("next", "state", N_("continue"), [(90, 545), (30, 545), (30, 40), (88, 40)]),
]

_BOX_W, _BOX_H = 320, 36


def _node(node_id: str, active: bool) -> str:
    label, x, y, shape = _NODES[node_id]
    fill, stroke, weight = ("#ffe08a", "#b7791f", 3) if active else ("#f4f6fb", "#5a6478", 1.5)
    if shape == "diamond":
        w, h = 240, 56
        points = f"{x},{y - h // 2} {x + w // 2},{y} {x},{y + h // 2} {x - w // 2},{y}"
        body = f'<polygon points="{points}" fill="{fill}" stroke="{stroke}" stroke-width="{weight}"/>'
    else:
        w = 180 if node_id in ("stop", "terminal") else _BOX_W
        rx = 18 if shape == "terminal" else 6
        body = (f'<rect x="{x - w // 2}" y="{y - _BOX_H // 2}" width="{w}" height="{_BOX_H}" rx="{rx}" '
                f'fill="{fill}" stroke="{stroke}" stroke-width="{weight}"/>')
    text = (f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-family="sans-serif" font-size="12" '
            f'fill="#1d2433">{escape(tr(label))}</text>')
    return f'<g id="phase-{node_id}" class="phase{" active" if active else ""}">{body}{text}</g>'


def _edge(label: str, points: list[tuple[int, int]]) -> str:
    path = " ".join(f"{x},{y}" for x, y in points)
    line = (f'<polyline points="{path}" fill="none" stroke="#5a6478" stroke-width="1.5" '
            f'marker-end="url(#arrow)"/>')
    if not label:
        return line
    segments = list(zip(points, points[1:]))
    (x1, y1), (x2, y2) = max(segments, key=lambda s: abs(s[1][0] - s[0][0]) + abs(s[1][1] - s[0][1]))
    lx, ly = (x1 + x2) // 2 + (6 if x1 == x2 else 0), (y1 + y2) // 2 - (0 if x1 == x2 else 5)
    return line + (f'<text x="{lx}" y="{ly}" font-family="sans-serif" font-size="11" '
                   f'fill="#5a6478">{escape(tr(label))}</text>')


def loop_flowchart_svg(active: str | Iterable[str] | None = None, *, title: str | None = None) -> str:
    """The flowchart as an SVG string; ``active`` (one of ``PHASES``, or several) is lit.

    Several phases are lit at once when they happen at once (streaming tool
    execution: ``("model", "tools")``). Raises ``ValueError`` for an unknown phase id.
    """
    title = tr("queryLoop(): one iteration") if title is None else title
    lit = {active} if isinstance(active, str) else set(active or ())
    unknown = sorted(lit - set(_NODES))
    if unknown:
        raise ValueError(f"unknown phase {unknown[0]!r}; expected one of {', '.join(PHASES)}")
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="700" height="600" viewBox="0 0 700 600" '
        f'role="img" aria-label="{escape(title)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#5a6478"/></marker></defs>',
        '<rect width="700" height="600" fill="white"/>',
        f'<text x="690" y="590" text-anchor="end" font-family="sans-serif" font-size="11" '
        f'fill="#8a93a6">{escape(title)}</text>',
    ]
    parts += [_edge(label, points) for _, _, label, points in _EDGES]
    parts += [_node(node_id, node_id in lit) for node_id in _NODES]
    parts.append("</svg>")
    return "\n".join(parts)
