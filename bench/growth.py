"""What a long session costs to keep: the trace on disk, the uuid references its checkpoints hold, and memory.

A session of N tool turns (short results, every switch off, so the history is never reduced; the offline
API's default 200,000-token window), for N in 250, 500, 1,000, 2,000, each in a fresh interpreter. Printed per
N: the saved trace's size (``Trace.save``), the uuid references its checkpoints hold in memory (the lengths of
their uuid lists: ``state_messages``, ``messages_for_query``, ...; a list shared with the checkpoint before
counts once), the process's peak RSS (the offline API's request log included: ``offline()``'s default), and
the wall time. Then the ratio of each figure between consecutive sizes: linear growth doubles it (2.0x),
quadratic growth quadruples it.

Run: ``.venv/bin/python bench/growth.py [--turns 250 500 1000 2000]``. To measure another checkout (e.g.
before a change): ``PYTHONPATH=/path/to/checkout .venv/bin/python bench/growth.py``. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def session(turns: int) -> dict:
    import dreamloop as dl
    from dreamloop import scripts as S
    from dreamloop.deps import QueryDeps, counting_uuids
    from pydantic import BaseModel

    class NoteInput(BaseModel):
        n: int

    @dl.tool(NoteInput, name="note", read_only=True)
    async def note(input: NoteInput) -> str:
        """Note n."""
        return f"noted {input.n}"

    def policy(body, index):
        return S.reply(f"step {index}", S.tool_use("note", {"n": index})) if index < turns else S.reply("done")

    async def main() -> dl.QueryRun:
        run = dl.query(dl.QueryParams(messages="take notes", model=dl.offline(policy), tools=[note],
                                      max_turns=turns + 5, deps=QueryDeps(uuid=counting_uuids())))
        async for _ in run:
            pass
        return run

    started = time.perf_counter()
    run = asyncio.run(main())
    seconds = time.perf_counter() - started
    fields = ("state_messages", "messages_for_query", "assistant_messages", "tool_results", "attachments",
              "next_messages")
    refs, bases = 0, set()
    for point in run.trace.checkpoints:
        for name in fields:
            value = getattr(point, name)
            base = getattr(value, "_base", None)  # a SharedList: a view of a list that others share, counted once
            if base is None:
                refs += len(value or ())
            elif id(base) not in bases:
                bases.add(id(base))
                refs += len(base)
    with tempfile.TemporaryDirectory() as tmp:
        path = run.trace.save(Path(tmp) / "trace.jsonl")
        size = path.stat().st_size
    return {"turns": turns, "terminal": run.terminal.reason, "checkpoints": len(run.trace.checkpoints),
            "trace_mb": size / 1e6, "uuid_refs": refs, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child: one session, JSON out
    args = parser.parse_args()
    if args.one:
        print(json.dumps(session(args.one)))
        return
    import dreamloop

    print(f"dreamloop from {Path(dreamloop.__file__).parent}")
    rows = []
    for turns in args.turns:
        out = subprocess.run([sys.executable, __file__, "--one", str(turns)], capture_output=True, text=True,
                             env=os.environ, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        rows.append(row)
        print(f"  {turns:>5} turns ({row['terminal']}, {row['checkpoints']} checkpoints): trace {row['trace_mb']:8.1f} MB"
              f"  uuid refs {row['uuid_refs']:>10,}  peak RSS {row['rss_mb']:7.0f} MB  ({row['seconds']:.0f} s)",
              flush=True)
    for before, after in zip(rows, rows[1:]):
        print(f"  {before['turns']} -> {after['turns']} turns: trace x{after['trace_mb'] / before['trace_mb']:.2f}, "
              f"uuid refs x{after['uuid_refs'] / before['uuid_refs']:.2f}, RSS x{after['rss_mb'] / before['rss_mb']:.2f}"
              " (linear: x2.00)")


if __name__ == "__main__":
    main()
