"""Switchboard: which feature switches were on, run by run (or chapter by chapter), in one table.

Rows are ``QueryParams``' switches (the fields marked ``json_schema_extra={"switch": True,
"chapter": "NN"}``), with the chapter that explains each and what it turns on; columns are the runs
given (a ``QueryParams``, a ``QueryRun``, a ``Trace`` or a ``switches()`` dict), each cell on or off
(an options switch shows its settings on hover). It reads the switches; it knows nothing about how
a branch works.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import ipywidgets as W

from ..language import tr
from .html import esc, pane
from .static import StaticHTML

__all__ = ["Switchboard", "switch_fields"]


def switch_fields() -> list[tuple[str, str, str]]:
    """``(name, chapter, what it turns on)`` for every switch of ``QueryParams``, in field order."""
    from ..query import QueryParams

    rows = []
    for name, info in QueryParams.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("switch"):
            rows.append((name, str(extra.get("chapter", "?")), info.description or ""))
    return rows


def _switches(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if hasattr(value, "switches") and callable(value.switches):  # QueryParams
        return value.switches()
    trace = getattr(value, "trace", value)  # a QueryRun, or a Trace
    switches = getattr(trace, "switches", None)
    if isinstance(switches, dict):
        return switches
    raise TypeError("Switchboard needs QueryParams, a QueryRun, a Trace or a switches dict, "
                    f"not {type(value).__name__}")


class Switchboard(StaticHTML, W.VBox):
    """``Switchboard({"chapter 05": params, "dreamloop run": switches, ...})``: switches × runs, on or off.

    ``columns``: column title → what to read the switches of. ``table`` is the ``HTML`` part;
    ``on(column)`` lists the switches on in a column. ``text/plain``: ``Switchboard(switches=6, columns=N)``.
    """

    def __init__(self, columns: Mapping[str, Any]) -> None:
        self.columns = {title: _switches(value) for title, value in columns.items()}
        self.rows = switch_fields()
        self.table = W.HTML(pane(self._table()))
        super().__init__(children=[self.table])
        self.add_class("dreamloop-switchboard")

    def on(self, column: str) -> list[str]:
        """The switches on in ``column``, in field order."""
        values = self.columns[column]
        return [name for name, _, _ in self.rows if values.get(name) not in (None, False)]

    def __repr__(self) -> str:
        return f"Switchboard(switches={len(self.rows)}, columns={len(self.columns)})"

    def static_html(self) -> str:
        return self._table()

    def _table(self) -> str:
        # narrow padding and 12 px: the table fits a notebook beside JupyterLab's file browser (about 830 px)
        cell = 'style="padding:2px 4px;border-bottom:1px solid #e2e8f0;text-align:left"'
        mid = 'style="padding:2px 4px;border-bottom:1px solid #e2e8f0;text-align:center"'
        heads = "".join(f"<th {mid}>{esc(title)}</th>" for title in self.columns)
        head = (f"<tr><th {cell}>{esc(tr('switch'))}</th><th {cell}>{esc(tr('chapter'))}</th>"
                f"<th {cell}>{esc(tr('turns on'))}</th>{heads}</tr>")
        rows = [head]
        off, on = esc(tr("off")), esc(tr("on"))
        for name, chapter, what in self.rows:
            cells = []
            for values in self.columns.values():
                value = values.get(name)
                if value in (None, False):
                    cells.append(f'<td {mid} class="dl-sw-off"><span style="color:#a0aec0">{off}</span></td>')
                    continue
                tip = esc(json.dumps(value, sort_keys=True)[:400]) if not isinstance(value, bool) else on
                shown = esc(value) if isinstance(value, str) else on
                cells.append(f'<td {mid} class="dl-sw-on" title="{tip}"><b style="color:#2f855a">● {shown}</b></td>')
            breakable = esc(name).replace("_", "_<wbr>")  # a long switch name may break after an underscore
            rows.append(f'<tr><td {cell}><code>{breakable}</code></td><td {cell}>{esc(chapter)}</td>'
                        f'<td {cell}><span style="font-size:12px">{esc(tr(what) if what else what)}</span></td>{"".join(cells)}</tr>')
        return f'<table style="border-collapse:collapse;font-size:12px;margin:4px 0">{"".join(rows)}</table>'
