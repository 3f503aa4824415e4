"""Grep's regular expressions: is a pattern valid, and may a whole text be searched for it at once.

Owns the one use of the standard library's private parser of a pattern (``re._parser`` and ``re._constants``,
CPython 3.11 and later): Grep promises Python's ``re`` dialect, and the stdlib's own parse is what says how a
pattern is built (``finds_every_matching_line``). Should a Python release move them, this module is what
changes; the rest of the kit asks ``check_pattern``. It knows nothing about files or how Grep searches them.
"""

from __future__ import annotations

import re
from re import _constants as _c, _parser  # private: see the module docstring
from typing import Any

import regex

__all__ = ["check_pattern", "finds_every_matching_line"]


def check_pattern(pattern: str) -> str | None:
    """None if Grep can run ``pattern``, else why not, in Python's words.

    Valid means Python's ``re`` compiles it (its dialect and its error messages decide, ``unterminated
    character set at position 0``) and the ``regex`` engine Grep searches with takes it too.
    """
    try:
        re.compile(pattern)
        regex.compile(pattern, flags=regex.VERSION0)
    except (re.error, regex.error) as error:
        return str(error)
    return None


def finds_every_matching_line(pattern: str) -> bool:
    """Does a search of the whole text (with ``^``/``$`` at each line) find every line ``pattern`` matches?

    A match inside one line is a match in the whole text at the same place, unless the pattern asks what is
    *not* there (a negative lookaround: a newline may be what it finds), commits to one way of matching
    (atomic groups, possessive repeats: taken over a newline, the commitment may differ), or anchors at the
    string's ends (``\\A``, ``\\Z``, ``$`` with multiline turned off). Those patterns go line by line.
    ``pattern`` must be valid (``check_pattern``); else ``re.error``.
    """
    return _whole_text_safe(_parser.parse(pattern).data)


def _whole_text_safe(items: Any) -> bool:
    for op, av in items:
        if op in (_c.ASSERT_NOT, _c.ATOMIC_GROUP, _c.POSSESSIVE_REPEAT):
            return False
        if op is _c.AT and av in (_c.AT_BEGINNING_STRING, _c.AT_END_STRING):
            return False
        if op is _c.SUBPATTERN and av[2] & _c.SRE_FLAG_MULTILINE:  # (?-m:...)
            return False
        inner = {_c.SUBPATTERN: lambda: [av[3]], _c.MAX_REPEAT: lambda: [av[2]], _c.MIN_REPEAT: lambda: [av[2]],
                 _c.ASSERT: lambda: [av[1]], _c.BRANCH: lambda: av[1],
                 _c.GROUPREF_EXISTS: lambda: [p for p in av[1:] if p is not None]}.get(op)
        if inner is not None and not all(_whole_text_safe(part.data) for part in inner()):
            return False
    return True
