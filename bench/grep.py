"""What Grep costs on a large workspace: 50 MB of source-like text, searched with a few kinds of pattern.

The workspace (built once in a temporary directory): 200 files of 250 KB, lines of 30-90 characters, one
line in ~20,000 holding ``VALUE = 7`` (so each pattern reads every line and finds a few). Each pattern
is searched ``REPEATS`` times through the Grep tool (``run_tools``, as the loop calls it, a 60 s time
limit); the median wall time is printed, and MB/s. The patterns:

* ``literal``: ``VALUE = 7``
* ``class``: ``VAL\\w+ = [0-9]+$``
* ``alternation``: ``(?:VALUE|OTHER) = 7\\b``
* ``none``: ``no_such_name_anywhere`` (nothing matches: the whole text is read)
* ``lookahead``: ``VALUE(?= = 7)``

Run: ``.venv/bin/python bench/grep.py [--mb 50] [--repeats 3]``. To measure another checkout's Grep
(e.g. before a change), put it first on the path: ``PYTHONPATH=/path/to/checkout .venv/bin/python bench/grep.py``.
Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

import dreamloop
from dreamloop.tools import ToolUseContext, builtin_tools, run_tools

PATTERNS = {
    "literal": r"VALUE = 7",
    "class": r"VAL\w+ = [0-9]+$",
    "alternation": r"(?:VALUE|OTHER) = 7\b",
    "none": r"no_such_name_anywhere",
    "lookahead": r"VALUE(?= = 7)",
}
WORDS = ("def", "return", "self", "value", "items", "for", "in", "if", "else", "import", "print", "result",
         "count", "name", "data", "None", "True", "(", ")", ":", "=", "+", "1", "2", "x", "y")


def build(root: Path, megabytes: int) -> int:
    rng = random.Random(7)
    files, size = 200, megabytes * 1024 * 1024 // 200
    written = 0
    for f in range(files):
        lines, length = [], 0
        while length < size:
            if rng.random() < 1 / 20_000:
                line = "VALUE = 7"
            else:
                line = "    " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))
            lines.append(line)
            length += len(line) + 1
        text = "\n".join(lines) + "\n"
        (root / f"module_{f:03d}.py").write_text(text)
        written += len(text)
    return written


async def grep(root: Path, pattern: str) -> tuple[float, str]:
    context = ToolUseContext(tools=builtin_tools(), workspace=root, permission_mode="bypass", tool_timeout_s=60)
    started = time.perf_counter()
    messages = [m async for m in run_tools([{"id": "T1", "name": "Grep", "input": {"pattern": pattern}}], context)]
    seconds = time.perf_counter() - started
    block = messages[-1].message["content"][0]
    return seconds, ("error: " if block.get("is_error") else "") + block["content"]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"dreamloop from {Path(dreamloop.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="dreamloop-grep-") as tmp:
        root = Path(tmp)
        size = build(root, args.mb)
        print(f"workspace: 200 files, {size / 1e6:.1f} MB")
        for name, pattern in PATTERNS.items():
            times, answer = [], ""
            for _ in range(args.repeats):
                seconds, answer = await grep(root, pattern)
                times.append(seconds)
            median = statistics.median(times)
            hits = 0 if answer.startswith(("No matches", "error")) else answer.count("\n") + 1
            print(f"  {name:<12} {pattern!r:<28} {median:6.2f} s  ({size / 1e6 / median:6.1f} MB/s)  "
                  f"{hits} hits{'  ' + answer[:80] if answer.startswith('error') else ''}")


if __name__ == "__main__":
    asyncio.run(main())
