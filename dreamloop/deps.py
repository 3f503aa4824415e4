"""QueryDeps: what the loop takes from outside besides its params (queryLoop()'s ``deps``).

The model call comes from ``QueryParams.model`` (there is no implicit model);
deps hold the id source and the clock, so tests and notebooks can make runs
fully deterministic. Later stages (compaction) add their callables here.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
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
    """

    uuid: Callable[[], str] = new_uuid
    clock: Callable[[], float] = field(default=time.monotonic)
