"""The browser checks wait for the widgets' own words: ``tests/browser/lab.py``'s ``says_checkpoint`` holds
against a real inspector's header in each language, so a reworded header fails here, in seconds, not in CI's
browser run (which failed once on chapter 03 waiting for 'checkpoint 1 / ' after the header said
'checkpoint 1 (numbered 0 to 1)')."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.language import LANGUAGES, language
from dreamloop.query import QueryParams, query
from dreamloop.widgets import StateInspector

sys.path.insert(0, str(Path(__file__).parent / "browser"))
from lab import says_checkpoint  # noqa: E402


def two_turns(offline):
    run = query(QueryParams(messages="read it", model=offline([S.reply(S.tool_use("Read", {"file_path": "a.txt"},
                                                                                     id="R1")),
                                                               S.reply("done")])))

    async def drain():
        async for _ in run:
            pass

    asyncio.run(drain())
    return run.trace


@pytest.mark.parametrize("code", LANGUAGES)
def test_says_checkpoint_reads_the_inspector_s_header(offline, code):
    trace = two_turns(offline)
    previous = language()
    try:
        language(code)
        inspector = StateInspector(trace, index=1)
        header = inspector.header.value
    finally:
        language(previous)
    assert says_checkpoint(header, 1), header
    assert not says_checkpoint(header, 0), header
