"""QueryDeps: what the loop takes from outside besides its params (queryLoop()'s ``deps``).

The model call comes from ``QueryParams.model`` (there is no implicit model);
deps hold the id source, the clocks and what the machine says about itself (home,
platform), so tests, notebooks and cassettes can make runs fully deterministic.
Later stages (compaction) add their callables here.
"""

from __future__ import annotations

import datetime
import itertools
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .messages import new_uuid

__all__ = ["QueryDeps", "counting_uuids"]


def counting_uuids(start: int = 1) -> Callable[[], str]:
    """A uuid source that counts: ``00000000-0000-4000-8000-000000000001``, ... (deterministic)."""
    counter = itertools.count(start)
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


@dataclass(frozen=True)
class QueryDeps:
    """Injected dependencies of ``query()``.

    * ``uuid``: makes the id of every message the loop creates (default: uuid4).
    * ``clock``: seconds, monotonic; timestamps in the trace are relative to the run's start.
    * ``today``: the calendar date the environment reports (default: the machine's).
    * ``home``: the user's home folder, where ``~/.claude/CLAUDE.md`` is looked for (default: ``Path.home()``).
    * ``platform``: the platform the environment reports, as ``sys.platform`` names it.

    Example, a run that says the same on every machine and every day::

        QueryDeps(uuid=counting_uuids(), today=lambda: datetime.date(2026, 1, 2),
                  home=Path("/home/learner"), platform="linux")
    """

    uuid: Callable[[], str] = new_uuid
    clock: Callable[[], float] = field(default=time.monotonic)
    today: Callable[[], datetime.date] = field(default=datetime.date.today)
    home: Path = field(default_factory=Path.home)
    platform: str = sys.platform
