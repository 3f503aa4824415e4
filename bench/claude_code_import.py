"""What ``dreamloop import-claude-code`` costs as a session file grows.

Generated Claude Code session files (the 2.1.x record shape): a prompt, then N model calls, each an assistant
record with a ``tool_use`` and a user record with its ``tool_result`` (progress records between them), so
2,002 / 5,002 / 10,002 records for N = 1,000 / 2,500 / 5,000; and a file of the same kind with a compaction
after every call (a ``compact_boundary`` whose logical parent is not in the file, then the summary), 2,000
boundaries. Each is imported as the command does it (``read_session`` → ``trace()`` → ``print_trace``,
output discarded), in a fresh interpreter; the wall time is printed, and the ratio between sizes
(linear: the records' ratio).

Run: ``.venv/bin/python bench/claude_code_import.py [--records 2002 5002 10002] [--boundaries 2000]``; another
checkout: ``PYTHONPATH=/path/to/checkout .venv/bin/python bench/claude_code_import.py``. Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SESSION = "5f1e4b2a-0000-4000-8000-000000000000"


def records(calls: int, *, compact_every_call: bool = False) -> list[dict]:
    out: list[dict] = []
    parent: str | None = None

    def add(kind: str, **fields) -> str:
        nonlocal parent
        uuid = f"00000000-0000-4000-8000-{len(out):012d}"
        out.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work",
                    "sessionId": SESSION, "version": "2.1.38", "type": kind, "uuid": uuid,
                    "timestamp": "2026-02-10T22:57:54.684Z", **fields})
        parent = uuid
        return uuid

    add("user", message={"role": "user", "content": "read every file and note what it says"})
    for n in range(calls):
        add("assistant", requestId=f"req_{n:06d}", message={
            "model": "claude-opus-4-6", "id": f"msg_{n:06d}", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": f"Reading file {n}."},
                        {"type": "tool_use", "id": f"toolu_{n:06d}", "name": "Read", "input": {"file_path": f"f{n}.py"}}],
            "stop_reason": "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000 + n, "output_tokens": 20}})
        add("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{n:06d}", "content": f"contents of file {n}"}]},
            toolUseResult={"type": "text"})
        if compact_every_call:
            missing = parent
            parent = None
            add("system", subtype="compact_boundary", content="Conversation compacted", level="info",
                logicalParentUuid=missing + "-gone", compactMetadata={"trigger": "auto", "preTokens": 150000})
            add("user", isCompactSummary=True, message={"role": "user", "content": f"Summary: read {n + 1} files."})
    add("assistant", requestId="req_last", message={
        "model": "claude-opus-4-6", "id": "msg_last", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "All files read."}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 5}})
    return out


def one(path: Path) -> float:
    from rich.console import Console

    from dreamloop.claude_code import read_session
    from dreamloop.render import print_trace

    started = time.perf_counter()
    session = read_session(path)
    trace = session.trace()
    print_trace(trace, Console(file=io.StringIO(), width=100))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, nargs="*", default=[2002, 5002, 10002])
    parser.add_argument("--boundaries", type=int, default=2000)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    import dreamloop

    print(f"dreamloop from {Path(dreamloop.__file__).parent}")
    cases = [(f"{n:,} records", records((n - 2) // 2)) for n in args.records]
    if args.boundaries:
        cases.append((f"{args.boundaries:,} compactions", records(args.boundaries, compact_every_call=True)))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, lines in cases:
            path = Path(tmp) / "session.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in lines))
            out = subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True, text=True,
                                 env=os.environ, check=True).stdout
            seconds = json.loads(out.strip().splitlines()[-1])
            rows.append((len(lines), seconds))
            print(f"  {label:<20} ({len(lines):,} lines): {seconds:7.2f} s", flush=True)
    for (n0, s0), (n1, s1) in zip(rows, rows[1:len(args.records)]):
        print(f"  {n0:,} -> {n1:,} records: time x{s1 / s0:.1f} (linear: x{n1 / n0:.1f})")


if __name__ == "__main__":
    main()
