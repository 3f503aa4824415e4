"""The context stages one by one, as plain functions over loop messages (no loop, no API).

Each stage: what it changes, what it never touches, and that what it returns is
still a request the API accepts. Field cases F8 (the compaction cut) and F16
(microcompact never clears what the model just read) are pinned here and in
test_context_pipeline.py through the loop.
"""

from __future__ import annotations

import json

import pytest
from anthropic.types import Message

from dreamloop.context import (
    CLEARED,
    ContextCollapse,
    ContextOptions,
    Snip,
    add_cache_breakpoints,
    append_system_context,
    apply_tool_result_budget,
    clearable_tool_results,
    commit_folds,
    compaction_cut,
    drain_collapses,
    find_folds,
    messages_after_compact_boundary,
    microcompact_messages,
    snip_messages,
    stages_over,
    staged_collapses,
    user_context_text,
)
from dreamloop.context.autocompact import is_compact_boundary
from dreamloop.context.content import replace_content
from dreamloop.deps import counting_uuids
from dreamloop.fake_api import validate_request
from dreamloop.messages import AssistantMessage, SystemMessage, normalize_messages_for_api, user_message
from dreamloop.tools import tool_results_message

# ---------------------------------------------------------------------------
# Building histories by hand


def A(*blocks, uuid=None):
    """An assistant message from API block dicts (a plain string is a text block)."""
    content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
    message = Message.model_validate({"id": "msg_x", "type": "message", "role": "assistant", "model": "m",
                                      "content": content, "stop_reason": "end_turn", "stop_sequence": None,
                                      "usage": {"input_tokens": 1, "output_tokens": 1}})
    return AssistantMessage(message=message, **({"uuid": uuid} if uuid else {}))


def use(id, name="Read", **input):
    return {"type": "tool_use", "id": id, "name": name, "input": input or {"file_path": f"{id}.py"}}


def R(*results, uuid=None):
    """A tool-result user message: (id, text) or (id, text, is_error) tuples, in call order."""
    blocks = {r[0]: {"type": "tool_result", "tool_use_id": r[0], "content": r[1],
                     **({"is_error": True} if len(r) > 2 else {})} for r in results}
    return tool_results_message([{"id": r[0]} for r in results], blocks, uuid=uuid)


def U(text):
    return user_message(text)


def accepted(messages):
    """The API's verdict on sending ``messages`` (None: accepted)."""
    return validate_request({"model": "m", "max_tokens": 10, "messages": normalize_messages_for_api(messages)})


def texts(messages):
    return json.dumps(normalize_messages_for_api(messages))


def f8_history():
    """Field case F8: U0, A1[T1], U1[r T1], A2[T2], U2[r T2], A3[T3], U3[r T3], A4[text]."""
    return [U("fix the bug"), A(use("T1")), R(("T1", "one")), A(use("T2")), R(("T2", "two")),
            A(use("T3")), R(("T3", "three")), A("All three read.")]


# ---------------------------------------------------------------------------
# 1. tool-result budget


def test_budget_persists_an_oversized_result_and_previews_it(tmp_path):
    big = "x" * 4000
    history = [U("go"), A(use("T1"), use("T2")), R(("T1", big), ("T2", "small"))]
    result = apply_tool_result_budget(history, max_result_tokens=200, directory=tmp_path / "results",
                                      uuid=counting_uuids(), root=tmp_path)
    assert result.changed and result.first_changed == 2
    saved = tmp_path / "results" / "T1.txt"
    assert saved.read_text() == big
    blocks = result.messages[2].message["content"]
    assert blocks[0]["content"].startswith("<persisted-output>\nOutput too large")
    assert "Full output saved to: results/T1.txt" in blocks[0]["content"]
    assert len(blocks[0]["content"]) < 1000 and blocks[1]["content"] == "small"
    assert list(result.replaced.values()) == [(history[2].uuid,)]
    assert result.messages[2].uuid != history[2].uuid and history[2].message["content"][0]["content"] == big
    assert accepted(result.messages) is None


def test_budget_reads_only_from_start_and_never_twice(tmp_path):
    history = [U("go"), A(use("T1")), R(("T1", "y" * 4000))]
    untouched = apply_tool_result_budget(history, max_result_tokens=200, directory=tmp_path, uuid=counting_uuids(),
                                         start=3)
    assert not untouched.changed and untouched.messages is history
    once = apply_tool_result_budget(history, max_result_tokens=200, directory=tmp_path, uuid=counting_uuids())
    twice = apply_tool_result_budget(once.messages, max_result_tokens=200, directory=tmp_path, uuid=counting_uuids())
    assert once.changed and not twice.changed


def test_budget_leaves_images_alone(tmp_path):
    image = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 5000}}]
    history = [U("go"), A(use("T1")), R(("T1", image))]
    result = apply_tool_result_budget(history, max_result_tokens=10, directory=tmp_path, uuid=counting_uuids())
    assert not result.changed


# ---------------------------------------------------------------------------
# 2. snip


def test_snip_trims_old_long_text_and_results_with_a_marker():
    long = "word " * 1000
    history = [U(long), A(long, use("T1", command=long)), R(("T1", long)), A("short"), U("recent " * 500)]
    result = snip_messages(history, keep_recent=2, max_chars=2000, keep_chars=400, uuid=counting_uuids())
    prompt, assistant, answer = result.messages[:3]
    assert prompt.message["content"][0]["text"].endswith("characters removed from this old message]")
    assert len(prompt.message["content"][0]["text"]) < 500
    assert assistant.message.content[0].text.startswith("word word") and "[snipped: 4,600 of 5,000" in \
        assistant.message.content[0].text
    assert assistant.message.content[1].input == {"command": long}  # a tool_use input is never rewritten
    assert "[snipped:" in answer.message["content"][0]["content"]
    assert result.messages[3] is history[3] and result.messages[4] is history[4]  # the newest keep_recent
    assert accepted(result.messages) is None
    again = snip_messages(result.messages, keep_recent=2, max_chars=2000, keep_chars=400, uuid=counting_uuids())
    assert not again.changed


def test_snip_never_touches_thinking_or_loop_written_text():
    long = "z" * 3000
    thought = {"type": "thinking", "thinking": long, "signature": "sig"}
    history = [user_message(long, is_meta=True), A(thought, "ok"), U("a"), A("b")]
    result = snip_messages(history, keep_recent=2, max_chars=2000, keep_chars=400, uuid=counting_uuids())
    assert not result.changed


def test_snip_options_keep_less_than_they_cut():
    with pytest.raises(ValueError, match="keep_chars"):
        Snip(max_chars=500, keep_chars=450)


# ---------------------------------------------------------------------------
# 3. microcompact


def microcompact_history():
    turns = [U("read everything")]
    for n in range(1, 7):
        turns += [A(use(f"T{n}")), R((f"T{n}", f"contents of file {n} " * 40))]
    return turns


def test_microcompact_clears_old_results_and_keeps_the_pairs():
    history = microcompact_history()
    result = microcompact_messages(history, keep_recent=3, uuid=counting_uuids())
    contents = [m.message["content"][0]["content"] for m in result.messages[2::2]]
    assert contents[:3] == [CLEARED] * 3 and all(c != CLEARED for c in contents[3:])
    assert result.detail == "cleared 3 old tool results" and result.first_changed == 2
    assert [m.message["content"][0]["tool_use_id"] for m in result.messages[2::2]] == [f"T{n}" for n in range(1, 7)]
    assert accepted(result.messages) is None
    assert not microcompact_messages(result.messages, keep_recent=3, uuid=counting_uuids()).changed


def test_f16_the_current_and_previous_turn_are_never_cleared():
    """F16: read in turn N, edit in turn N+1: even with keep_recent=0 the last two turns' results stay."""
    history = microcompact_history()
    result = microcompact_messages(history, keep_recent=0, uuid=counting_uuids())
    contents = [m.message["content"][0]["content"] for m in result.messages[2::2]]
    assert contents[:4] == [CLEARED] * 4
    assert contents[4].startswith("contents of file 5") and contents[5].startswith("contents of file 6")
    assert [i for i, _, _ in clearable_tool_results(history, keep_recent=0)] == [2, 4, 6, 8]


# ---------------------------------------------------------------------------
# 4. context collapse


def collapse_history():
    """Three short Glob calls, a long Read, two short Bash calls, a long Read, then the end of the task."""
    history = [U("look around")]
    for n, name in enumerate(["Glob", "Glob", "Glob"], start=1):
        history += [A(f"Step {n}.", use(f"G{n}", name, pattern=f"*.{n}")), R((f"G{n}", f"a{n}.py"))]
    history += [A(use("R1")), R(("R1", "long file line\n" * 200))]
    history += [A(use("B1", "Bash", command="ls")), R(("B1", "README")),
                A(use("B2", "Bash", command="pwd")), R(("B2", "/ws", True))]
    history += [A(use("R2")), R(("R2", "another long line\n" * 200)), A("Done looking."), U("thanks")]
    return history


def test_collapse_stages_runs_of_short_pairs_only():
    history = collapse_history()
    folds, resume = find_folds(history, ContextCollapse(keep_recent=2))
    assert [f.calls for f in folds] == [3, 2]
    assert folds[0].uuids == tuple(m.uuid for m in history[1:7])
    assert folds[1].uuids == tuple(m.uuid for m in history[9:13])
    assert 'Glob {"pattern": "*.1"} → a1.py' in folds[0].text
    assert 'Bash {"command": "pwd"} → /ws (is_error)' in folds[1].text
    assert resume == 14
    assert find_folds(history, ContextCollapse(keep_recent=2, min_pairs=4))[0] == []


def test_collapse_leaves_an_open_run_for_later_and_finds_the_same_folds():
    history = collapse_history()
    options = ContextCollapse(keep_recent=2)
    folds, resume = find_folds(history, options, end=12)
    assert [f.calls for f in folds] == [3] and resume == 9  # the Bash run starts at 9 and may still grow
    more, _ = find_folds(history, options, start=resume)
    assert folds + more == staged_collapses(history, options)


def test_an_unbroken_run_of_small_calls_is_folded_as_it_ages():
    """30 short Reads in a row, the session still reading: the run is never closed by another kind of
    turn, yet it is folded in pieces of max_pairs as it passes the kept tail (read at once or turn by turn)."""
    history = [U("read them all")]
    for n in range(30):
        history += [A(use(f"R{n}", "Read", file_path=f"f{n}.py")), R((f"R{n}", f"x = {n}"))]
    options = ContextCollapse(keep_recent=6)
    folds, _ = find_folds(history, options)
    assert [f.calls for f in folds] == [10, 10]  # the last 10 pairs reach the kept tail: not yet
    pieces, start = [], 0
    for seen in range(3, len(history) + 1, 2):  # the scan as the loop does it, one turn at a time
        found, start = find_folds(history[:seen], options, start=start)
        pieces += found
    assert pieces == folds
    with pytest.raises(ValueError, match="below min_pairs"):
        ContextCollapse(min_pairs=4, max_pairs=3)


def test_committing_folds_keeps_every_pair_valid():
    history = collapse_history()
    folds = staged_collapses(history, ContextCollapse(keep_recent=2))
    result = commit_folds(history, folds, uuid=counting_uuids())
    assert len(result.messages) == len(history) - 6 - 4 + 2
    folded = result.messages[1]
    assert folded.is_meta and folded.message["content"].startswith('<collapsed calls="3">')
    assert result.replaced[folded.uuid] == folds[0].uuids
    assert accepted(result.messages) is None
    sent = normalize_messages_for_api(result.messages)
    assert sent[0]["content"][0]["text"] == "look around" and sent[0]["content"][1]["text"].startswith("<collapsed")


def test_a_stale_fold_is_not_committed():
    history = collapse_history()
    folds = staged_collapses(history, ContextCollapse(keep_recent=2))
    rewritten = list(history)
    rewritten[2] = replace_content(history[2], history[2].message["content"], counting_uuids())  # a new uuid
    result = commit_folds(rewritten, folds, uuid=counting_uuids())
    assert result.replaced and folds[0].uuids not in result.replaced.values()  # only the Bash fold
    assert list(result.replaced.values()) == [folds[1].uuids]


def test_drain_commits_every_staged_fold_and_says_how_many():
    history = collapse_history()
    drained = drain_collapses(history, ContextCollapse(keep_recent=2), uuid=counting_uuids())
    assert drained.committed == 2 and len(drained.messages) == len(history) - 8
    assert accepted(drained.messages) is None
    nothing = drain_collapses(drained.messages, ContextCollapse(keep_recent=2), uuid=counting_uuids())
    assert nothing.committed == 0 and nothing.messages == drained.messages


def test_thinking_turns_are_never_folded():
    thought = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    history = [U("go"), A(thought, use("T1")), R(("T1", "a")), A(thought, use("T2")), R(("T2", "b")), A("x"), U("y")]
    assert staged_collapses(history, ContextCollapse(keep_recent=2)) == []


# ---------------------------------------------------------------------------
# 5. system-prompt assembly and cache breakpoints


def test_system_context_is_appended_and_user_context_wrapped():
    assert append_system_context("Be brief.", {"cwd": "/ws", "os": "linux"}) == [
        {"type": "text", "text": "Be brief."}, {"type": "text", "text": "cwd: /ws\nos: linux"}]
    assert append_system_context(None, {}) == []
    text = user_context_text({"claudeMd": "Use tabs."})
    assert text.startswith("<system-reminder>\n") and "# claudeMd\nUse tabs." in text
    assert user_context_text({}) is None


def test_breakpoints_go_on_copies_of_the_last_blocks():
    system = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]}]
    new_system, new_messages = add_cache_breakpoints(system, messages)
    assert new_system[-1]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in new_system[0]
    assert new_messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in system[-1] and "cache_control" not in messages[0]["content"][-1]
    assert add_cache_breakpoints("plain", [])[0] == [{"type": "text", "text": "plain",
                                                      "cache_control": {"type": "ephemeral"}}]


# ---------------------------------------------------------------------------
# 6. autocompact: the cut and where the history lives


def test_f8_the_cut_moves_to_a_pair_boundary():
    history = f8_history()
    cut = compaction_cut(history, keep_recent=4)  # the last 4 would start at U2, an orphan result
    assert cut == 3 and [m.type for m in history[cut:]] == ["assistant", "user", "assistant", "user", "assistant"]
    head = history[:cut]
    assert normalize_messages_for_api(head)[-1]["role"] == "user"  # never ends on an unanswered call
    assert accepted(history[cut:][:0] + [U("summary")] + history[cut:]) is None
    assert compaction_cut(history, keep_recent=5) == 3
    for keep in range(0, 9):
        cut = compaction_cut(history, keep)
        tail = history[cut:]
        kept_calls = {b.id for m in tail if m.type == "assistant" for b in m.message.content if b.type == "tool_use"}
        kept_results = {b["tool_use_id"] for m in tail if m.type == "user" and isinstance(m.message["content"], list)
                        for b in m.message["content"] if b.get("type") == "tool_result"}
        assert kept_results <= kept_calls, keep
        assert accepted([U("summary"), *tail]) is None, keep


def test_nothing_to_compact_when_everything_is_kept():
    assert compaction_cut(f8_history(), keep_recent=8) == 0
    assert compaction_cut([SystemMessage(subtype="x", content="y"), U("hi")], keep_recent=1) == 0


def boundary_for(summary, tail):
    return SystemMessage(subtype="compact_boundary", content="compacted",
                         metadata={"summary_uuid": summary.uuid, "kept": [m.uuid for m in tail]})


def test_after_the_boundary_in_the_loops_state_nothing_moves():
    summary = user_message("summary", is_meta=True)
    tail = f8_history()[3:]
    boundary = boundary_for(summary, tail)
    state = [boundary, summary, *tail, U("next")]
    assert messages_after_compact_boundary(state) == state
    assert messages_after_compact_boundary(tail) == tail


def test_after_the_boundary_in_a_transcript_the_kept_tail_is_put_back():
    history = f8_history()
    summary = user_message("summary", is_meta=True)
    boundary = boundary_for(summary, history[3:])
    later = [A("more"), U("next")]
    transcript = [*history, boundary, summary, *later]
    view = messages_after_compact_boundary(transcript)
    assert view == [boundary, summary, *history[3:], *later]
    assert is_compact_boundary(view[0]) and accepted(view) is None


# ---------------------------------------------------------------------------
# Thresholds


def test_thresholds_come_from_the_window_unless_set():
    options = ContextOptions.all_on()
    at_200k = options.thresholds(200_000)
    assert (at_200k.autocompact, at_200k.blocking_limit) == (167_000, 177_000)
    small = ContextOptions(snip=Snip(threshold=1000), autocompact=True).thresholds(4000)
    assert (small.snip, small.autocompact, small.microcompact) == (1000, 3340, None)
    assert stages_over(3500, small) == ["snip", "autocompact"]
    assert stages_over(900, small) == []
    assert list(at_200k.lines()) == ["snip", "microcompact", "context_collapse", "autocompact", "blocking_limit",
                                     "window"]


def test_a_stage_is_switched_on_with_true():
    options = ContextOptions(microcompact=True, snip=False)
    assert options.stages_on() == ["microcompact"] and options.microcompact.keep_recent == 3
    with pytest.raises(ValueError):
        ContextOptions(microcompact={"keep_recent": -1})
    with pytest.raises(ValueError):
        ContextOptions(no_such_stage=True)
