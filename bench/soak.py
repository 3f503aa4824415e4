"""Soak: many generated sessions through the loop under faults, counted per invariant (issue 9).

The sessions come from the property-based test's generator
(``tests/test_loop_properties.py``: scripts with every fault kind, corrupt
and future-shaped streams, aborts, input queued at random points, blank prompts, the feature switches); each
runs through ``QueryEngine`` against the offline API and is checked against
every invariant. Unlike the test, nothing stops at the first failure: it
counts. Goal: 0 violations of each invariant in 10,000 sessions.

Run: ``.venv/bin/python bench/soak.py [N] [--seed S]`` (default 10,000 sessions).
Prints figures and the first few violations; exits 1 if any invariant broke.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_loop_properties import INVARIANTS, describe, keeps_latest_request, run_and_check, sessions  # noqa: E402

from dreamloop.context.autocompact import is_compact_boundary  # noqa: E402
from dreamloop.endings import is_interrupted_note  # noqa: E402
from dreamloop.messages import UnknownContentBlock  # noqa: E402


def _attempts(outcome) -> Counter[str]:
    """Each failed attempt's notice: withdrawn and asked again (with the calls it had started, which must be none)
    or kept because a call had started (issue 32)."""
    counts: Counter[str] = Counter()
    for trace in outcome.traces:
        for m in trace.messages.values():
            if m.type != "system":
                continue
            meta = m.metadata or {}
            if m.subtype in ("api_retry", "model_fallback") or m.subtype == "streaming_fallback" \
                    and meta.get("step") in ("resend", "non_streaming"):
                counts["withdrawn"] += 1
                counts["withdrawn with a started call"] += bool(meta.get("discarded"))
            elif m.subtype == "streaming_fallback" and meta.get("started"):
                counts["kept because a call had started"] += 1
    return counts


def soak(n: int, random_seed: int) -> int:
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    transitions: Counter[str] = Counter()
    violations: Counter[str] = Counter()
    children: Counter[str] = Counter()  # sub-agent runs (Agent calls that started a child), by their Terminal
    attempts: Counter[str] = Counter()  # failed attempts: withdrawn (and with a started call), kept
    where: Counter[str] = Counter()  # aborts that fired, by point
    triggers: Counter[str] = Counter()  # compact boundaries, by trigger
    examples: list[str] = []

    @seed(random_seed)
    @settings(max_examples=n, deadline=None, database=None, phases=[Phase.generate], print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(sessions())
    def one(session):
        outcome, broken = run_and_check(session)
        counts["sessions"] += 1
        for name, what in broken:
            violations[name] += 1
            if len(examples) < 5:
                examples.append(f"{name}: {what}\n  {describe(session)}")
        if outcome.cut_short:
            return
        attempts.update(_attempts(outcome))
        if outcome.aborted:
            kind = session.abort_at[0]
            where["(event)" if ":" not in kind and kind != "request" else kind] += 1
            where["notes for the model"] += sum(1 for run in outcome.runs
                                                for m in run.messages[len(run.params.messages):]
                                                if is_interrupted_note(m))
        counts["requests"] += sum(1 for r in outcome.api.requests if r.path.endswith("/v1/messages"))
        counts["aborts"] += outcome.aborted
        counts["blank prompts"] += len(outcome.blank)
        counts["queued texts"] += len(outcome.queued)
        counts["queued texts left"] += len(outcome.engine.queue) if outcome.engine else 0
        unknown = sum(isinstance(b, UnknownContentBlock) for m in (outcome.engine.messages if outcome.engine else [])
                      if m.type == "assistant" for b in m.message.content)
        counts["unknown blocks"] += unknown
        counts["sessions with unknown blocks"] += unknown > 0
        counts["non-streamed"] += sum(1 for r in outcome.api.requests if r.path.endswith("/v1/messages")
                                      and r.body is not None and not r.body.get("stream"))
        reasons.update(t.reason for t in outcome.terminals if t is not None)
        boundaries = [m for m in (outcome.engine.messages if outcome.engine else []) if is_compact_boundary(m)]
        keep = keeps_latest_request(session.switches)
        counts["compact boundaries"] += len(boundaries)
        triggers.update(b.metadata.get("trigger") for b in boundaries)
        counts["sessions compacted"] += bool(boundaries)
        counts["sessions compacted, keep on"] += bool(boundaries) and keep
        counts["sessions compacted, keep off"] += bool(boundaries) and not keep
        built = {u for trace in outcome.traces for point in trace.checkpoints for u in point.messages_for_query}
        counts["boundaries, keep on, a request built after"] += sum(keep and b.uuid in built for b in boundaries)
        children.update(child.terminal.reason if child.done else "(no Terminal)" for run in outcome.runs
                        for child in run.children)
        transitions.update(p.next_transition.reason for trace in outcome.traces for p in trace.checkpoints
                           if p.next_transition is not None)
        transitions.update(f"({m.subtype})" for trace in outcome.traces for m in trace.messages.values()
                           if m.type == "system" and m.subtype in ("api_retry", "model_fallback", "streaming_fallback"))
        if counts["sessions"] % 1000 == 0:
            print(f"  ... {counts['sessions']} sessions", file=sys.stderr, flush=True)

    started = time.perf_counter()
    one()
    elapsed = time.perf_counter() - started

    print(f"sessions      {counts['sessions']}")
    print(f"requests      {counts['requests']}")
    print(f"aborts        {counts['aborts']}")
    print(f"blank prompts {counts['blank prompts']} (refused before sending)")
    print(f"queued        {counts['queued texts']} texts typed into the queue (at events, between prompts), "
          f"{counts['queued texts left']} still queued when their session ended")
    print(f"non-streamed  {counts['non-streamed']} requests (the streaming fallback's)")
    print(f"unknown blocks {counts['unknown blocks']} kept in histories, in {counts['sessions with unknown blocks']} "
          "sessions (types the SDK does not know)")
    print(f"compactions   {counts['compact boundaries']} boundaries in {counts['sessions compacted']} sessions "
          f"({counts['sessions compacted, keep on']} with keep_latest_request on, "
          f"{counts['sessions compacted, keep off']} off); {counts['boundaries, keep on, a request built after']} "
          "boundaries with the switch on and a request built after them (latest_request_survives_compaction); "
          + ", ".join(f"{trigger} {k}" for trigger, k in triggers.most_common()))
    print("terminals     " + ", ".join(f"{reason} {k}" for reason, k in reasons.most_common()))
    print(f"sub-agents    {sum(children.values())} children: " + ", ".join(f"{reason} {k}" for reason, k in
                                                                  children.most_common()))
    print("transitions   " + ", ".join(f"{reason} {k}" for reason, k in transitions.most_common()))
    print(f"withdrawn     {attempts['withdrawn']} attempts asked again, {attempts['withdrawn with a started call']} "
          f"of them with a call that had started (goal: 0); {attempts['kept because a call had started']} kept "
          "because a call had started")
    print("aborts fired  " + ", ".join(f"{kind} {k}" for kind, k in where.most_common()))
    print("violations per invariant (goal: 0 each)")
    for name in INVARIANTS:
        print(f"  {name:<22} {violations[name]}")
    print(f"sessions/s    {counts['sessions'] / elapsed:.1f}  ({elapsed:.1f} s)")
    for example in examples:
        print("\n" + example)
    return 1 if sum(violations.values()) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=10_000, help="how many sessions (default 10,000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0: reproducible)")
    args = parser.parse_args()
    return soak(args.n, args.seed)


if __name__ == "__main__":
    sys.exit(main())
