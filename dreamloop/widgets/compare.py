"""CompareView: two loops' requests on the same script, one request at a time, side by side.

Reads what ``dreamloop.compare.anatomy`` keeps of each request (shapes: fields,
system blocks, tools, every message's blocks with kinds and lengths, where
``cache_control`` sits, which messages are new) for two sides, usually Claude
Code 2.1.332 and dreamloop on one ``dreamloop compare`` scenario (``one_tool``
and six more are recorded), recorded or just run. A slider picks the request;
each column shows that side's request; the header says MATCH or DIFFER (the
MATCH rule of ``compare.shapes``) and what differs at this request. It shows no
text of a request, only shapes, and knows nothing about how the requests were
sent.
"""

from __future__ import annotations

from typing import Any, Mapping

import ipywidgets as W

from ..language import tr
from .html import esc
from .static import StaticHTML

__all__ = ["CompareView", "side_title"]

_BOX = "border:1px solid #cbd5e0;border-radius:4px;padding:4px 8px;margin:2px 0;font-size:12px;line-height:1.45"
_MONO = "font-family:var(--jp-code-font-family,monospace);font-size:12px"
_NEW = "background:#fefcbf"
_TD = "vertical-align:top;text-align:left;padding:1px 4px"
"""Every cell says its alignment: a notebook's stylesheet right-aligns table cells."""
_ROLE = {"user": "#2b6cb0", "assistant": "#2f855a"}
_KIND = {"reminder": "#b7791f", "tool_use": "#6b46c1", "tool_result": "#4a5568", "thinking": "#718096"}


def side_title(side: Mapping[str, Any], name: str) -> str:
    """``Claude Code 2.1.332``: ``name`` and the side's ``version``."""
    return f"{name} {side.get('version', '')}".strip()


def _verdict(left: Mapping[str, Any], right: Mapping[str, Any], order_free: bool) -> list[str]:
    from ..compare.shapes import SideRun, differences

    def run(side: Mapping[str, Any]) -> SideRun:
        return SideRun.from_data({"side": "side", "version": side.get("version", ""),
                                  "requests": [r["shape"] for r in side["requests"]],
                                  "ending": {"reason": side["ending"]["reason"], "turns": side["ending"].get("turns")},
                                  "markers": side.get("markers", ()), "workspace": side.get("workspace")})

    return differences(run(left), run(right), order_free=order_free)


def _block(block: Mapping[str, Any]) -> str:
    kind = block.get("kind", "?")
    color = _KIND.get(kind, "#2d3748")
    bits = [f'<b style="color:{color}">{esc(kind)}</b>']
    if kind == "tool_use":
        bits.append(esc(block.get("name", "")))
    if kind == "tool_result":
        bits.append(f'<span style="{_MONO}">…{esc(str(block.get("id", ""))[-4:])}</span>')
        if block.get("is_error"):
            bits.append('<b style="color:#c53030">is_error</b>')
    bits.append(esc(tr("{count} ch", count=f"{block.get('length', 0):,}")))
    if block.get("hash"):
        bits.append(f'<span style="{_MONO};color:#718096">#{esc(block["hash"])}</span>')
    if block.get("inside"):
        bits.append(esc(tr("+{count} reminder inside", count=block["inside"])))
    if block.get("cache"):
        bits.append('<b style="color:#c05621">⚑ cache_control</b>')
    return " ".join(bits)


def _blocks(blocks: list[Mapping[str, Any]]) -> str:
    """One line per block; a run of plain reminders (no marker) in one line, their hashes on hover."""
    lines: list[str] = []
    run: list[Mapping[str, Any]] = []

    def flush() -> None:
        if len(run) > 2:
            sizes = ", ".join(f"{b.get('length', 0):,}" for b in run)
            hashes = " ".join(f"#{b.get('hash', '')}" for b in run)
            lines.append(f'<span title="{esc(hashes)}"><b style="color:{_KIND["reminder"]}">reminder</b> ×{len(run)}: '
                         f'{esc(tr("{count} ch", count=sizes))}</span>')
        else:
            lines.extend(_block(b) for b in run)
        run.clear()

    for block in blocks:
        if block.get("kind") == "reminder" and not block.get("cache"):
            run.append(block)
            continue
        flush()
        lines.append(_block(block))
    flush()
    return "<br>".join(lines)


class CompareView(StaticHTML, W.VBox):
    """``CompareView(name, left, right)``: the requests of two sides of one scenario, stepped together.

    ``left`` / ``right``: a side as ``compare.anatomy`` records it (``{"version", "ending", "requests"}``,
    each request an anatomy with its ``shape``); ``titles``: the sides' names. ``order_free``:
    compare tool_result ids as a set. Parts: ``slider`` (request, from 1), ``header``, ``columns``
    (two ``HTML``). ``differences``: the MATCH rule's lines (empty: MATCH). ``text/plain``:
    ``CompareView('one_tool': Claude Code 2.1.332 2 requests -> completed | dreamloop ... | MATCH)``.
    """

    static_title = "CompareView"

    def __init__(self, name: str, left: Mapping[str, Any], right: Mapping[str, Any], *, index: int = 1,
                 order_free: bool = False, titles: tuple[str, str] = ("Claude Code", "dreamloop")) -> None:
        self.name, self.sides = name, (left, right)
        self.titles = tuple(side_title(side, title) for side, title in zip(self.sides, titles))
        self.differences = _verdict(left, right, order_free)
        count = max(len(left["requests"]), len(right["requests"]), 1)
        self.slider = W.IntSlider(value=min(max(index, 1), count), min=1, max=count, description=tr("request"),
                                  continuous_update=True, layout=W.Layout(width="420px"))
        self.header = W.HTML()
        self.columns = (W.HTML(layout=W.Layout(width="50%")), W.HTML(layout=W.Layout(width="50%")))
        super().__init__(children=[self.slider, self.header, W.HBox(list(self.columns))])
        self.add_class("dreamloop-compare")
        self.slider.observe(lambda change: self.render(), names="value")
        self.render()

    @property
    def verdict(self) -> str:
        """``MATCH`` or ``DIFFER``."""
        return "DIFFER" if self.differences else "MATCH"

    def __repr__(self) -> str:
        cells = " | ".join(f"{title} {len(s['requests'])} requests -> {s['ending']['reason']}"
                           for title, s in zip(self.titles, self.sides))
        return f"CompareView({self.name!r}: {cells} | {self.verdict})"

    def render(self) -> None:
        """Draw the header and both columns for the slider's request."""
        number = self.slider.value
        self.header.value = self._header(number)
        for column, title, side, other in zip(self.columns, self.titles, self.sides, reversed(self.sides)):
            column.value = self._request(title, side, other, number)

    # -- drawing --------------------------------------------------------------

    def _header(self, number: int) -> str:
        color = "#c53030" if self.differences else "#2f855a"
        here = [d for d in self.differences if d.startswith(f"request {number}:")]
        whole = [d for d in self.differences if not d.startswith("request ")]
        lines = "".join(f"<li>{esc(d)}</li>" for d in here + whole)
        said = (f'<ul style="margin:2px 0 2px 18px;padding:0">{lines}</ul>' if lines else
                f'<div style="color:#718096">{esc(tr("request {number}: the same under the MATCH rule", number=number))}'
                "</div>")
        return (f'<div style="{_BOX}"><b>{esc(self.name)}</b> · <b style="color:{color}">{self.verdict}</b> · '
                f'{esc(tr("request {number} of {count}", number=number, count=self.slider.max))}{said}</div>')

    def _request(self, title: str, side: Mapping[str, Any], other: Mapping[str, Any], number: int) -> str:
        title = f"<b>{esc(title)}</b>"
        requests = side["requests"]
        ending = side["ending"]
        end = esc(tr("ending: {reason}", reason=ending["reason"])) + (
            esc(tr(" · {turns} turns", turns=ending["turns"])) if ending.get("turns") is not None else "")
        if number > len(requests):
            return (f'<div style="{_BOX}">{title}<div style="color:#718096">'
                    f'{esc(tr("no request {number}: this side sent {count}", number=number, count=len(requests)))}'
                    f"</div><div><b>{end}</b></div></div>")
        request = requests[number - 1]
        theirs = other["requests"][number - 1] if number <= len(other["requests"]) else None
        return f'<div style="{_BOX}">{title} · {self._body(request, theirs)}' + (
            f"<div><b>{end}</b></div>" if number == len(requests) else "") + "</div>"

    def _body(self, request: Mapping[str, Any], theirs: Mapping[str, Any] | None) -> str:
        status = f"{request['status']}" + (f"/{request['error']}" if request.get("error") else "")
        way = "stream" if request.get("streamed") else "no-stream"
        line = (f'<span style="{_MONO}">{esc(status)} · {way} · max_tokens {esc(request.get("max_tokens"))} '
                f'· model {esc(request.get("model"))}</span>')
        others = set(theirs["fields"]) if theirs else set()
        fields = ", ".join(f"<b>{esc(f)}</b>" if theirs and f not in others else esc(f) for f in request["fields"])
        system = request.get("system") or []
        sys_text = (", ".join(_block({"kind": "text", **b}) for b in system) if system else esc(tr("none")))
        tools = request.get("tools") or {}
        tool_text = esc(tr("{count} tools", count=tools.get("count", 0))) + (
            ' <b style="color:#c05621">⚑ cache_control</b>' if tools.get("cache") else "")
        rows = []
        for i, message in enumerate(request["messages"]):
            role = message["role"]
            mark = f'<b style="color:#d69e2e">{esc(tr("new"))}</b>' if message.get("new") else ""
            blocks = _blocks(message["blocks"])
            style = f' style="{_NEW if message.get("new") else "background:transparent"}"'
            rows.append(f'<tr{style}><td style="{_TD};{_MONO}">{i}</td>'
                        f'<td style="{_TD};color:{_ROLE.get(role, "#2d3748")}">'
                        f'<b>{esc(role)}</b> {mark}</td><td style="{_TD}">{blocks}</td></tr>')
        return (f"{line}<div>{esc(tr('fields'))}: {fields}</div>"
                f"<div>system: {sys_text}</div><div>tools: {tool_text}</div>"
                f'<div>messages ({len(request["messages"])}):</div>'
                f'<table style="border-collapse:collapse;margin:2px 0;font-size:12px">{"".join(rows)}</table>')

    def static_html(self) -> str:
        rows = []
        for number in range(1, self.slider.max + 1):
            cells = "".join(f'<td style="{_TD};width:50%">{self._request(t, s, o, number)}</td>'
                            for t, s, o in zip(self.titles, self.sides, reversed(self.sides)))
            rows.append(f'<tr style="background:transparent"><td colspan="2" style="{_TD}">{self._header(number)}</td>'
                        f'</tr><tr style="background:transparent">{cells}</tr>')
        return f'<table style="border-collapse:collapse;width:100%;font-size:12px">{"".join(rows)}</table>'
