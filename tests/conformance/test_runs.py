"""What a `make conformance` run leaves: every scenario ran on both sides to an ending, and nothing of Anthropic's
text reached the comparison's data."""

from __future__ import annotations

import json

from dreamloop.compare import SCENARIOS


def test_every_side_ended_on_its_own(conformance_runs):
    data = json.loads((conformance_runs.parent / "compare.json").read_text())
    assert {s["name"] for s in data["scenarios"]} == {s.name for s in SCENARIOS}
    for each in data["scenarios"]:
        for side in ("claude_code", "dreamloop"):
            if each[side] is not None:
                assert each[side]["ending"]["reason"] not in ("timeout", "no_result"), (each["name"], side)


def test_the_data_holds_shapes_not_anthropics_text(conformance_runs):
    raw = (conformance_runs.parent / "compare.json").read_text()
    assert "<system-reminder>" not in raw and "You are Claude" not in raw


def test_claude_code_wrote_a_session_file_for_each_scenario(claude_code_sessions):
    assert set(claude_code_sessions) == {s.name for s in SCENARIOS}
    for path in claude_code_sessions.values():
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        assert json.loads(first)["sessionId"]
