"""What importing the kit costs a kernel: wall time and memory of the imports a chapter makes.

Each case runs in a fresh interpreter (so nothing is cached in the process),
``REPEATS`` times; the median wall time of the imports and the process's peak
resident memory (``ru_maxrss``) are printed, with the number of modules loaded.
The cases, from the bare interpreter up to what a chapter's first cell imports:

* ``python``: nothing (the interpreter's own floor)
* ``anthropic``: the official SDK alone (every chapter talks to the offline API through it)
* ``dreamloop``: ``import dreamloop``
* ``chapter``: ``import dreamloop`` + ``dreamloop.widgets`` + ``dreamloop.render`` (a chapter's imports)
* ``first run``: ``chapter`` and one offline ``query()`` with a tool call (what a chapter's first
  run has loaded by its end: names used late are imported then, so this row shows what deferring
  saves for a real chapter, not only for the import line)

Run: ``.venv/bin/python bench/import_cost.py``. Prints figures; not a test.
Timings move with the machine's load (printed first): compare runs made at
similar load, or read the memory column, which does not move.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

REPEATS = 5

FIRST_RUN = """
import asyncio, os, tempfile
import dreamloop as dl
async def _run():
    script = [dl.reply("Reading.", dl.tool_use("Read", {"file_path": "a.txt"})), dl.reply("Done.")]
    with tempfile.TemporaryDirectory() as root:
        open(os.path.join(root, "a.txt"), "w").write("hi")
        run = dl.query(dl.QueryParams(messages="read a.txt", model=dl.offline(script), tools=dl.builtin_tools(),
                                      workspace=root))
        async for _ in run:
            pass
        assert run.terminal.reason == "completed", run.terminal
asyncio.run(_run())
"""

CASES = {
    "python": "",
    "anthropic": "import anthropic",
    "dreamloop": "import dreamloop",
    "chapter": "import dreamloop, dreamloop.widgets, dreamloop.render",
    "first run": "import dreamloop, dreamloop.widgets, dreamloop.render\n" + FIRST_RUN,
}

PROBE = """
import resource, sys, time
started = time.perf_counter()
{imports}
seconds = time.perf_counter() - started
print({{"s": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "modules": len(sys.modules)}})
"""


def measure(imports: str) -> dict[str, float]:
    """Median seconds, peak RSS (MB) and module count of ``imports`` in fresh interpreters."""
    runs = []
    for _ in range(REPEATS):
        done = subprocess.run([sys.executable, "-c", PROBE.format(imports=imports)],
                              capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().replace("'", '"')))
    return {"s": statistics.median(r["s"] for r in runs),
            "rss_mb": statistics.median(r["rss_mb"] for r in runs),
            "modules": runs[0]["modules"]}


def main() -> None:
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
          f"median of {REPEATS} fresh interpreters")
    print(f"{'case':<10} {'ms':>8} {'peak RSS MB':>12} {'modules':>8}")
    for name, imports in CASES.items():
        figures = measure(imports)
        print(f"{name:<10} {figures['s'] * 1000:>8.0f} {figures['rss_mb']:>12.1f} {figures['modules']:>8}")


if __name__ == "__main__":
    main()
