"""The widgets' public surface is pinned: a change to it is a decision."""

import dreamloop.widgets as widgets


def test_all_is_pinned():
    assert sorted(widgets.__all__) == sorted([
        "AUTO_ANSWER_ENV", "AskPrompt", "LiveView", "PANES", "Span", "StateInspector", "StaticHTML", "Timeline",
        "TurnSpans", "paced", "person_watching", "side_by_side", "slowed", "turn_spans", "warn_if_old_kernel",
    ])
    for name in widgets.__all__:
        assert hasattr(widgets, name), name
