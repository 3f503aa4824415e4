"""The language of what the kit says to a learner: the exercise checks' ✅/❌ lines and hints, the widgets' labels.

Owns the setting (``language("zh")``; English, ``"en"``, is the default) and the lookup ``tr(text, **fields)``.
The English text is its own key; every other language has a catalogue of those keys written by people
(``dreamloop/zh/``), so nothing is machine-translated at run time. ``N_(text)`` marks a text kept as data (a
case name, a hint chosen later) so the catalogue tests find it; it is translated where it is shown, with ``tr``.
It knows nothing about exercises or widgets; what goes to the model (tool results, hook feedback) is never
translated.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

__all__ = ["LANGUAGES", "N_", "catalogue", "language", "missing", "tr"]

LANGUAGES = ("en", "zh")
"""The languages the kit speaks: English (the default, the keys) and Chinese (``dreamloop/zh/``)."""

_current = "en"
_catalogues: dict[str, Mapping[str, str]] = {}
_missing: set[tuple[str, str]] = set()


def language(code: str | None = None) -> str:
    """Set the language of the checks' feedback and the widgets' labels: ``"en"`` (default) or ``"zh"``.

    ``language("zh")`` at the top of a chapter makes every ✅/❌ line, hint and widget label after it Chinese;
    ``language()`` returns the current one. The setting is per kernel (per process), and texts already shown
    stay as they were. An unknown code is a ``ValueError`` naming the known ones.
    """
    global _current
    if code is None:
        return _current
    key = str(code).strip().lower().replace("_", "-")
    key = {"zh-cn": "zh", "zh-hans": "zh", "中文": "zh", "en-us": "en", "en-gb": "en"}.get(key, key)
    if key not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}: the kit speaks {', '.join(map(repr, LANGUAGES))}")
    if key != "en":
        catalogue(key)  # load it now: a broken catalogue fails here, not in the middle of a check
    _current = key
    return _current


def tr(text: str, /, **fields: Any) -> str:
    """``text`` (English, the key) in the current language, with ``fields`` filled in (``str.format``).

    ``tr("for '{case}' it returned {got}.", case=..., got=...)``. Without fields the text is returned as it is
    (braces and all). A text the catalogue lacks is shown in English and remembered in ``missing()``; the
    tests make sure that never happens.
    """
    template = text
    if _current != "en":
        found = catalogue(_current).get(text)
        if found is None:
            _missing.add((_current, text))
        else:
            template = found
    return template.format(**fields) if fields else template


def N_(text: str) -> str:
    """Mark ``text`` as one the catalogue must hold, without translating it now: returns ``text`` unchanged.

    For texts kept as data and shown later (``tr(case)`` where the case is displayed).
    """
    return text


def catalogue(code: str) -> Mapping[str, str]:
    """The catalogue of ``code`` ("zh"): English text → its translation (loaded once)."""
    if code not in _catalogues:
        if code == "en" or code not in LANGUAGES:
            raise ValueError(f"no catalogue for {code!r}: English is the keys themselves")
        _catalogues[code] = import_module(f"dreamloop.{code}").texts()
    return _catalogues[code]


def missing() -> list[tuple[str, str]]:
    """``(language, text)`` for every text shown in English because its language's catalogue lacks it."""
    return sorted(_missing)
