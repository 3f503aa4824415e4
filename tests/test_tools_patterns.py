"""Grep's patterns (issue 39, item 6): the public check, and which patterns a whole-text search may serve, as a table."""

from __future__ import annotations

import pytest

from dreamloop.tools.patterns import check_pattern, finds_every_matching_line


@pytest.mark.parametrize("pattern, problem", [
    ("VALUE = \\d+", None),
    ("(?P<name>a)(?P=name)", None),
    ("[bad", "unterminated character set at position 0"),
    ("a{2,1}", "min repeat greater than max repeat at position 2"),
    ("(?<=a+)b", "look-behind requires fixed-width pattern"),
])
def test_check_pattern_says_why_in_pythons_words(pattern, problem):
    assert check_pattern(pattern) == problem


@pytest.mark.parametrize("pattern, whole_text", [
    ("VALUE", True),
    ("^def \\w+", True),
    ("a$", True),                      # $ at each line: multiline is on in the whole-text search
    ("(foo|ba(?=r))", True),           # a positive lookahead inside a branch
    ("x(?!y)", False),                 # what is not there may be the newline
    ("(?<!a)b", False),
    ("(?>a+)b", False),                # atomic: the commitment may differ over a newline
    ("a++b", False),                   # possessive
    ("\\Aimport", False),              # the string's ends
    ("end\\Z", False),
    ("(?-m:a$)", False),               # $ with multiline turned off
    ("(a|(?!b))c", False),             # nested in a branch
    ("(?:(?>a))", False),              # nested in a group
    ("(x)?(?(1)(?!y)|z)", False),      # nested in a conditional
])
def test_which_patterns_a_whole_text_search_finds_every_line_of(pattern, whole_text):
    assert check_pattern(pattern) is None
    assert finds_every_matching_line(pattern) is whole_text
