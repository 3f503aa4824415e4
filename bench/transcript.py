"""What a crash-safe transcript costs: every record written and fsynced before its event is yielded.

1. A 100-turn scripted session, three parallel trivial tools per turn (five records a turn:
   the assistant message, three finished calls, the results message), through ``QueryEngine``
   without a transcript and with one: per-turn time, the overhead and the ratio. The offline
   model answers in about 10 ms, a live one in seconds: the overhead is measured against the
   first and printed as a share of a 2-second live turn, which is where it matters.
2. One record: ``append_records`` (os.write + fsync) against an unsynced ``file.write``.

Run: ``.venv/bin/python bench/transcript.py``. Prints figures; not a test.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.transcript import append_records

TURNS = 100
RECORDS = 500


class NoInput(BaseModel):
    pass


@dl.tool(NoInput, name="noop", read_only=True)
async def noop(input: NoInput) -> str:
    """Do nothing."""
    return "ok"


def script() -> list[S.Turn]:
    calls = [S.tool_use("noop", {}) for _ in range(3)]
    return [S.reply(*calls) for _ in range(TURNS - 1)] + [S.reply("done")]


async def session(transcript: Path | None) -> float:
    engine = dl.QueryEngine(model=dl.offline(script()), tools=[noop], transcript=transcript)
    start = time.perf_counter()
    async for _ in engine.submit_message("go"):
        pass
    assert engine.terminal.reason == "completed"
    return (time.perf_counter() - start) / TURNS


def one_record(directory: Path) -> tuple[float, float]:
    record = {"type": "progress", "uuid": "u", "data": {"stage": "done", "result": {"content": "x" * 500}}}
    synced, plain = directory / "synced.jsonl", directory / "plain.jsonl"
    start = time.perf_counter()
    for _ in range(RECORDS):
        append_records(synced, [record])
    fsynced = (time.perf_counter() - start) / RECORDS
    start = time.perf_counter()
    with plain.open("a") as out:
        for _ in range(RECORDS):
            out.write(json.dumps(record) + "\n")
    return fsynced, (time.perf_counter() - start) / RECORDS


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        memory = min(asyncio.run(session(None)) for _ in range(3))
        on_disk = min(asyncio.run(session(directory / f"s{i}.jsonl")) for i in range(3))
        print(f"session, per turn: no transcript {memory * 1e3:.2f} ms, crash-safe transcript "
              f"{on_disk * 1e3:.2f} ms: ratio {on_disk / memory:.2f}, overhead {(on_disk - memory) * 1e3:.2f} ms "
              f"a turn, {(on_disk - memory) / 2 * 100:.1f}% of a 2 s live turn")
        fsynced, plain = one_record(directory)
        print(f"one record: os.write + fsync {fsynced * 1e6:.0f} us, buffered write without fsync "
              f"{plain * 1e6:.1f} us ({fsynced / plain:.0f}x)")


if __name__ == "__main__":
    main()
