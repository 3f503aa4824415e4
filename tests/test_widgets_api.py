"""The widgets' public surface is pinned: a change to it is a decision."""

import dreamloop.widgets as widgets


def test_all_is_pinned():
    assert sorted(widgets.__all__) == sorted([
        "AUTO_ANSWER_ENV", "AskPrompt", "CompareView", "ContextMeter", "LiveView", "MeterTurn", "PANES", "STAGE_COLORS", "Span",
        "StateInspector", "StaticHTML", "Switchboard", "Timeline", "TurnSpans", "meter_turn", "paced",
        "person_watching", "side_by_side", "slowed", "switch_fields", "turn_spans", "warn_if_old_kernel",
    ])
    for name in widgets.__all__:
        assert hasattr(widgets, name), name
