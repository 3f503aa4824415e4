"""What the context pipeline costs as a session grows, and what autocompact and the prompt cache do.

(a) A 2,000-turn scripted session with every stage on but autocompact, in a window large enough that the
    session fits: the pipeline's time per turn around turn 20 against around turn 2,000 (goal: <= 2x; the
    pipeline reads only what is new each turn), and the process's peak memory. With ``--firing``, also
    (a') the same session in a window where snip, microcompact and collapse keep firing.
(b) The same 2,000 turns with every stage on, autocompact included, in a small window: tokens sent
    against tokens the unreduced history would have sent, and the cache's reads against its writes.

The per-turn time is ``Checkpoint.context["seconds"]`` (phase 2 alone), the median over 50 turns
(turns 11-60 against the last 50).

    .venv/bin/python bench/context_scaling.py [--turns 2000] [--firing]

The whole session goes through the official SDK and the offline API, whose cost per request grows with
the history (JSON, validation, the simulated cache): (a) takes minutes at 2,000 turns.

Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.context import ContextOptions, ToolResultBudget, is_compaction_request
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.tokens import TokenCounter

NOTE = "Reading the next file; I will note what it says before the next step."


class ReadInput(BaseModel):
    n: int


@dl.tool(ReadInput, name="Read", read_only=True)
async def read(input: ReadInput) -> str:
    """Read file n."""
    n = input.n
    if n % 50 == 7:  # now and then a big one, for the tool-result budget
        return f"file {n}: " + "a long line of output text\n" * 400
    if n % 3 == 0:  # short results: low-information turns that collapse can fold
        return f"file {n}: ok"
    return f"file {n}: " + "some content of medium length. " * 8


def policy(turns: int):
    count = {"n": 0}

    def answer(body, index):
        if is_compaction_request(body):
            return S.reply(f"Primary request: read {turns} files. Read {count['n']} so far; continue.")
        count["n"] += 1
        if count["n"] <= turns:
            return S.reply(NOTE, S.tool_use("Read", {"n": count["n"]}))
        return S.reply("All files read.")

    return answer


async def session(turns: int, window: int, options: ContextOptions) -> tuple[dl.QueryRun, list[int]]:
    model = dl.offline(policy(turns), context_window=window)
    workspace = Path(tempfile.mkdtemp(prefix="dreamloop-bench-"))
    run = dl.query(dl.QueryParams(messages=f"read files 1 to {turns}", model=model, tools=[read], workspace=workspace,
                                  system_prompt="You read files for the user and take notes.", context=options,
                                  max_tokens=1024, deps=QueryDeps(uuid=counting_uuids())))
    counter, unreduced, role, at_request = TokenCounter(), 0, None, []
    async for event in run:
        if event.type == "stream_request_start":
            at_request.append(unreduced)
            model.api.requests.clear()  # the offline API's request log would hold every body: O(turns²) memory
        elif event.type in ("user", "assistant") and not getattr(event, "is_meta", False):
            unreduced, role = counter.extend(unreduced, role, [event])
    return run, at_request


def per_turn_ms(run: dl.QueryRun, first: int, last: int) -> float:
    """The median of phase 2's time over turns ``first`` .. ``last``, in milliseconds."""
    points = [p for p in run.trace.checkpoints if first <= p.turn_count <= last and p.context]
    return statistics.median(p.context["seconds"] for p in points) * 1000


def fired(run: dl.QueryRun) -> dict[str, int]:
    counts: dict[str, int] = {}
    for point in run.trace.checkpoints:
        for stage in (point.context or {}).get("stages", []):
            counts[stage["stage"]] = counts.get(stage["stage"], 0) + 1
    return counts


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--firing", action="store_true", help="also (a'): a window where the light stages fire")
    args = parser.parse_args()
    turns = args.turns
    budget = ToolResultBudget(max_result_tokens=1500)

    # (a) everything but autocompact; a window the whole session fits in
    started = time.perf_counter()
    run, _ = await session(turns, 4_000_000, ContextOptions.all_on(autocompact=None, tool_result_budget=budget))
    wall = time.perf_counter() - started
    early, late = per_turn_ms(run, 11, 60), per_turn_ms(run, turns - 49, turns)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    last = run.trace.checkpoints[-1].context
    print(f"(a) {turns} turns, every stage but autocompact, window 4,000,000 ({wall:.0f} s wall)")
    print(f"    terminal {run.terminal.reason}; history at the end {last['tokens']:,} tokens, "
          f"{len(run.trace.checkpoints[-1].state_messages):,} messages; stages fired {fired(run)}")
    print(f"    pipeline per turn (median of 50): {early:.3f} ms at turns 11-60, {late:.3f} ms at turns "
          f"{turns - 49}-{turns}: ratio {late / early:.2f}x (goal <= 2x)")
    print(f"    peak memory (process RSS): {peak_mb:.0f} MB")

    if args.firing:  # (a') the same, in a window where the light stages keep firing
        run, _ = await session(turns, 120_000, ContextOptions.all_on(autocompact=None, tool_result_budget=budget))
        early, late = per_turn_ms(run, 11, 60), per_turn_ms(run, turns - 49, turns)
        print(f"(a') the same in a 120,000-token window: terminal {run.terminal.reason}, stages fired {fired(run)}")
        print(f"    pipeline per turn (median of 50): {early:.3f} ms at turns 11-60, {late:.3f} ms at the last 50: "
              f"ratio {late / early:.2f}x")

    # (b) every stage, autocompact included, in a small window
    run, unreduced = await session(turns, 40_000, ContextOptions.all_on(tool_result_budget=budget))
    usages = [m.message.usage for m in run.messages if m.type == "assistant"]
    sent = [p.context["tokens"] for p in run.trace.checkpoints if p.context and p.assistant_messages]
    read_total = sum(u.cache_read_input_tokens for u in usages)
    written = sum(u.cache_creation_input_tokens for u in usages)
    plain = sum(u.input_tokens for u in usages)
    compactions = [p.context["compaction"] for p in run.trace.checkpoints if p.context and p.context["compaction"]]
    summarising = sum(c.get("input_tokens", 0) + c.get("cache_read_input_tokens", 0)
                      + c.get("cache_creation_input_tokens", 0) for c in compactions)
    print(f"(b) {turns} turns, every stage, window 40,000: terminal {run.terminal.reason}; "
          f"stages fired {fired(run)}")
    print(f"    tokens sent: {sum(sent):,} over {len(sent)} requests (largest {max(sent):,}); the unreduced "
          f"history would have sent {sum(unreduced):,} (largest {max(unreduced):,}): "
          f"{sum(unreduced) / max(sum(sent), 1):.1f}x more")
    print(f"    at the end: {sent[-1]:,} tokens sent, {unreduced[-1]:,} kept in the transcript")
    print(f"    {len(compactions)} compactions, their requests {summarising:,} input tokens")
    print(f"    cache: read {read_total:,}, written {written:,}, uncached {plain:,}; "
          f"{read_total / max(written, 1):.1f} tokens read per token written")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
