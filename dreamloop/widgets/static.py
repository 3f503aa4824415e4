"""StaticHTML: a widget's stored output also carries a static ``text/html`` rendering of it.

A notebook opened without its kernel (on GitHub, in nbviewer, in JupyterLab before a run, where an
untrusted output may only show safe types) cannot draw a widget view from its model id; it shows the
bundle's next type instead. This mixin puts ``text/html`` beside ``application/vnd.jupyter.widget-view+json``
so that fallback is the widget's content, not ``StateInspector(checkpoints=6)``. Mix it in before the
ipywidgets base and write ``static_html()``::

    class Timeline(StaticHTML, W.VBox):
        def static_html(self) -> str:
            return "<pre>...</pre>"

``refresh_static()`` re-sends the bundle to every output the widget was displayed in (IPython's
``update_display``), so an output shows how things ended (``LiveView`` calls it when its run ends).
The HTML sits between ``STATIC_START`` and ``STATIC_END`` markers: its content changes from run to run
(times, a display updated after the cell's first output), so ``tests/nbval_sanitize.cfg`` compares only
that it is there, and the widget tests check what it says. Plain, semantic HTML with inline styles, so a
sanitizer that drops ``<style>`` and classes still leaves it readable.

A notebook from a fresh clone is untrusted, and JupyterLab's sanitiser drops inline ``<svg>`` from its
stored HTML (a chart became a run of its labels). So every ``<svg>`` in a snapshot is stored as an
``<img>`` whose ``src`` is the same SVG as a ``data:`` URI (``svg_as_img``), which the sanitiser keeps
(``tests/browser`` opens the notebooks untrusted and checks that every snapshot's pictures draw). It
knows nothing about any widget's content.
"""

from __future__ import annotations

import base64
import re
import uuid
from typing import Any

__all__ = ["STATIC_END", "STATIC_START", "StaticHTML", "static_block", "svg_as_img"]

STATIC_START = "<!-- dreamloop:static -->"
STATIC_END = "<!-- /dreamloop:static -->"


_SVG = re.compile(r"<svg\b[^>]*>.*?</svg>", re.S)
_ATTR = re.compile(r'\s(width|height|aria-label|style)="([^"]*)"')


def svg_as_img(html: str) -> str:
    """``html`` with every inline ``<svg>...</svg>`` replaced by an ``<img>`` of the same SVG (a base64
    ``data:`` URI), the size it was drawn at and its ``aria-label`` as ``alt``: what JupyterLab's
    sanitiser keeps in an untrusted notebook. The same input gives the same bytes.
    """

    def one(match: re.Match[str]) -> str:
        svg = match.group(0)
        opening = svg[: svg.index(">") + 1]
        attrs = dict(_ATTR.findall(opening))
        style = attrs.get("style", "")
        svg = svg.replace(f' style="{style}"', "", 1) if style else svg
        if 'xmlns="http://www.w3.org/2000/svg"' not in opening:
            svg = svg.replace("<svg", '<svg xmlns="http://www.w3.org/2000/svg"', 1)
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        size = "".join(f' {k}="{attrs[k]}"' for k in ("width", "height") if k in attrs)
        css = style or "max-width:100%;height:auto"
        alt = attrs.get("aria-label", "chart")
        return f'<img class="dreamloop-figure" src="data:image/svg+xml;base64,{data}"{size} alt="{alt}" style="{css}">'

    return _SVG.sub(one, html)


_BREAK_ANYWHERE = ".dl *{overflow-wrap:anywhere}"
_BREAK_WORDS = ".dl *{overflow-wrap:break-word}"
"""The live widget's stylesheet lets a word break anywhere (its HTML is a flex item, as wide as its longest word
otherwise); the stored copy is a plain block, where that rule shrinks columns until words break mid-word
("fa/llback"), so the snapshot breaks only a word longer than its line."""


def static_block(title: str, body: str) -> str:
    """The stored fallback: a titled box holding ``body`` (HTML), between the markers.

    ``title`` names the widget ("StateInspector"); a note (in the learner's language) says it is a snapshot.
    Inline SVG in ``body`` is stored as images (``svg_as_img``).
    """
    from ..language import tr
    from .html import esc

    body = svg_as_img(body).replace(_BREAK_ANYWHERE, _BREAK_WORDS)
    note = esc(tr("a snapshot stored with the notebook; run the cell for the live widget"))
    return (f'{STATIC_START}<div class="dreamloop-static" style="border:1px solid #cbd5e0;border-radius:4px;'
            f'padding:6px 10px;max-width:100%;overflow:auto">'
            f'<div style="font-size:12px;color:#718096"><b>{esc(title)}</b> · {note}</div>{body}</div>{STATIC_END}')


class StaticHTML:
    """Mixin for ipywidgets: ``text/html`` from ``static_html()`` in every display of the widget.

    ``static_html()`` returns the body (HTML, escaped by the widget); ``static_title`` names the box
    (default: the class name). ``refresh_static()`` updates the outputs already shown.
    """

    static_title: str | None = None

    def static_html(self) -> str:
        """The widget's content as static HTML (override)."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(bundle, dict):
            bundle["text/html"] = static_block(self.static_title or type(self).__name__, self.static_html())
        return bundle

    def _ipython_display_(self) -> None:
        """``display(widget)`` (and a cell's last expression): the bundle, under a display id we keep."""
        from IPython.display import display

        ids = self.__dict__.setdefault("_static_display_ids", [])
        ids.append(uuid.uuid4().hex)
        display(self._repr_mimebundle_(), raw=True, display_id=ids[-1])

    def refresh_static(self) -> None:
        """Re-send the bundle (fresh ``text/html``) to the outputs this widget was displayed in."""
        ids = self.__dict__.get("_static_display_ids") or []
        if not ids:
            return
        from IPython.display import update_display

        bundle = self._repr_mimebundle_()
        for display_id in ids:
            update_display(bundle, raw=True, display_id=display_id)
