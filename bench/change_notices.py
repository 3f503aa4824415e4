"""What one turn's file-change notices add to the next request, with 50 changed files (issue 33, item 7).

A run with ``changed_files`` on: the model reads 50 files of 200 lines each (one turn of 50 Reads); before
the next request is answered, one line in the middle of every file changes on disk (as a formatter or a
person would); the run's phase 5 then attaches its notices. Printed: the bytes (UTF-8) of those notices'
texts, how many files are named, how many get their lines shown, and the ratio to ``BEFORE_BYTES``; once with
one line changed in each file, once with every line. ``BEFORE_BYTES`` is what this script printed on the commit before
issue 33's notices (the first 40 lines of each file, every file in full).

Run: ``.venv/bin/python bench/change_notices.py``; another checkout: ``PYTHONPATH=/path/to/checkout
.venv/bin/python bench/change_notices.py``. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

BEFORE_BYTES = {"one line": 47_900, "every line": 55_900}
"""Printed on commit 9e65da4 (before items 5-7): the notices' bytes with 50 changed files, one line changed in
each, and every line changed in each."""

FILES, LINES = 50, 200


def measure(every_line: bool) -> dict:
    from dreamloop import scripts as S
    from dreamloop.deps import QueryDeps, counting_uuids
    from dreamloop.model import offline
    from dreamloop.query import QueryParams, query
    from dreamloop.tools import builtin_tools

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        names = [f"module_{n:02}.py" for n in range(FILES)]
        for name in names:
            (root / name).write_text("".join(f"value_{i} = {i}\n" for i in range(LINES)))

        def policy(body, index):
            if index == 0:
                return S.reply("Reading.", *[S.tool_use("Read", {"file_path": name}) for name in names])
            if index == 1:
                for name in names:
                    path = root / name
                    old = path.read_text()
                    path.write_text(old.replace(" = ", " = 1 + ") if every_line else
                                    old.replace(f"value_{LINES // 2} = ", f"value_{LINES // 2} = 1 + "))
                return S.reply("Listing.", S.tool_use("Glob", {"pattern": "*.md"}))
            return S.reply("Done.")

        params = QueryParams(messages="read them", model=offline(policy), tools=builtin_tools(), workspace=root,
                             permission_mode="bypass", changed_files=True,
                             deps=QueryDeps(uuid=counting_uuids(), home=Path(tmp)))

        async def go():
            return [event async for event in query(params)]

        events = asyncio.run(go())
        notices = [e.attachment for e in events if e.type == "attachment" and e.attachment["type"] == "changed_file"]
        texts = [a["text"] for a in notices]
        return {"bytes": sum(len(t.encode("utf-8")) for t in texts), "named": len({a["path"] for a in notices}),
                "shown": sum("changed lines" in t or "It now reads" in t for t in texts)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    for case, every_line in (("one line", False), ("every line", True)):
        got = measure(every_line)
        before = BEFORE_BYTES[case]
        print(f"{FILES} changed files, {case} changed in each: notices {got['bytes']:,} bytes; {got['named']} named, "
              f"{got['shown']} with their lines; before {before:,} bytes: {before / max(got['bytes'], 1):.1f}x less")


if __name__ == "__main__":
    main()
