"""The language of what the kit says to a learner: the exercise checks' ✅/❌ lines and hints, the widgets' labels.

Owns the setting (``language("zh")``; English, ``"en"``, is the default) and the lookup ``tr(text, **fields)``.
The English text is its own key; every other language has a catalogue of those keys written by people
(``dreamloop/zh/``), so nothing is machine-translated at run time. ``N_(text)`` marks a text kept as data (a
case name, a hint chosen later) so the catalogue tests find it; it is translated where it is shown, with ``tr``.
A text the package makes in English and keeps as data (a permission question's reason, an imported session's
notes) is shown translated with ``tr_formatted(text, templates)``: the template it was made from, found by its
words, filled again with the same values. It knows nothing about exercises or widgets; what goes to the model
(tool results, hook feedback) is never translated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import import_module
from string import Formatter
from typing import Any

__all__ = ["LANGUAGES", "N_", "catalogue", "language", "missing", "tr", "tr_formatted"]

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


def tr_formatted(text: str, templates: Iterable[str], /) -> str:
    """``text``, made in English by ``template.format(...)`` from one of ``templates``, in the current language.

    The first template whose words match the whole of ``text`` gives the fields' values (as they were written,
    padding and all); its translation is filled with them. ``tr_formatted("Edit wants to change a.py",
    ["{tool} wants to change {path}"])`` → ``"Edit 想要修改 a.py"`` under ``language("zh")``. A text no template
    made (a learner's own reason, say) is returned as it is; a template the catalogue lacks shows in English and
    is remembered in ``missing()``, as with ``tr``. In English the text is returned unchanged.
    """
    if _current == "en":
        return text
    for template in templates:
        found = _pattern(template).fullmatch(text)
        if found is None:
            continue
        translated = catalogue(_current).get(template)
        if translated is None:
            _missing.add((_current, template))
            return text
        values = {name: found.group(group) for group, name in _groups(template)}
        return "".join(literal + ("" if name is None else values[name])
                       for literal, name, _spec, _conversion in Formatter().parse(translated))
    return text


@lru_cache(maxsize=None)
def _groups(template: str) -> tuple[tuple[str, str], ...]:
    """(regex group, field name) for each distinct field of ``template``, in order."""
    names = dict.fromkeys(name for _literal, name, _spec, _conversion in Formatter().parse(template)
                          if name is not None)
    return tuple((f"f{k}", name) for k, name in enumerate(names))


@lru_cache(maxsize=None)
def _pattern(template: str) -> re.Pattern[str]:
    """The regex of the texts ``template`` makes: its words as they are, each field any text (shortest first)."""
    group = {name: g for g, name in _groups(template)}
    seen: set[str] = set()
    parts = []
    for literal, name, _spec, _conversion in Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is not None:
            parts.append(f"(?P={group[name]})" if name in seen else f"(?P<{group[name]}>.*?)")
            seen.add(name)
    return re.compile("".join(parts), re.DOTALL)


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
