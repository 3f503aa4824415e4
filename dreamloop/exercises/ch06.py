"""Chapter 06: the context pipeline: the exercise checks."""

from __future__ import annotations

from typing import Any

from ..context import (CLEARED, Autocompact, BlockingLimit, ContextCollapse, ContextOptions, Microcompact, Snip,
                       clearable_tool_results)
from ..context import compaction_cut as _package_cut
from ..context import stages_over
from ..context.content import is_tool_result_message
from ..language import N_, tr
from ..messages import AssistantMessage, AttachmentMessage, SystemMessage, normalize_messages_for_api, user_message
from ..tokens import estimate_block_tokens
from ..tools import tool_results_message
from ._checking import _call, _Fail, _message, _require_callable, _run, _short, _use, _verdict

__all__ = ["check_clearable", "check_first_stage", "check_safe_cut"]


# ---------------------------------------------------------------------------
# Histories the checks use (loop messages, as the stages see them)


def _a(*blocks: dict[str, Any]) -> AssistantMessage:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return AssistantMessage(message=_message(*blocks, stop_reason=stop))


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _results(*pairs: tuple[str, str]) -> Any:
    blocks = {i: {"type": "tool_result", "tool_use_id": i, "content": text} for i, text in pairs}
    return tool_results_message([{"id": i} for i, _ in pairs], blocks)


def _f8() -> list[Any]:
    """U0, A1[T1], U1[r T1], A2[T2], U2[r T2], A3[T3], U3[r T3], A4[text] (field case F8)."""
    return [user_message("fix the bug"), _a(_use("T1")), _results(("T1", "one")), _a(_use("T2")),
            _results(("T2", "two")), _a(_use("T3")), _results(("T3", "three")), _a(_text("All three read."))]


def _parallel() -> list[Any]:
    """Two calls in one message, a notice between turns, a queued prompt at the end."""
    return [user_message("read a and b"), _a(_text("Both at once."), _use("T1"), _use("T2")),
            _results(("T1", "a"), ("T2", "b")),
            SystemMessage(subtype="microcompact", content="microcompact: cleared 1 old tool result"),
            _a(_use("T3")), _results(("T3", "c")), _a(_text("Done.")), user_message("now c"),
            _a(_use("T4")), _results(("T4", "d"))]


def _queued() -> list[Any]:
    """A prompt typed while the loop ran, sent to the model as an attachment between two turns."""
    return [user_message("read a"), _a(_use("T1")), _results(("T1", "a")), _a(_text("Done.")),
            AttachmentMessage(attachment={"type": "queued_command", "prompt": "now read b"}),
            _a(_use("T2")), _results(("T2", "b")), _a(_text("b read."))]


def _notice_first() -> list[Any]:
    """A notice before anything the model is sent (a resumed session's first line)."""
    return [SystemMessage(subtype="resume", content="session resumed"), user_message("read a"), _a(_use("T1")),
            _results(("T1", "a")), _a(_text("a read."))]


def _cut_cases() -> list[tuple[str, list[Any], int]]:
    return [(N_("F8, keep 4"), _f8(), 4), (N_("F8, keep 5"), _f8(), 5), (N_("F8, keep 2"), _f8(), 2),
            (N_("parallel calls, keep 3"), _parallel(), 3), (N_("parallel calls, keep 5"), _parallel(), 5),
            (N_("parallel calls, keep 7"), _parallel(), 7), (N_("parallel calls, keep 8"), _parallel(), 8),
            (N_("a queued prompt, keep 4"), _queued(), 4), (N_("a notice first, keep 4"), _notice_first(), 4)]


def _sent(message: Any) -> bool:
    """Does the model get ``message`` (a user or assistant message, an attachment it reads)?"""
    return bool(normalize_messages_for_api([message]))


def _tail_problem(messages: list[Any], cut: int) -> str | None:
    """Why a cut is wrong for the API, or None."""
    tail = messages[cut:]
    calls = {b.id for m in tail if isinstance(m, AssistantMessage) for b in m.message.content if b.type == "tool_use"}
    for m in tail:
        for block in (m.message["content"] if is_tool_result_message(m) else []):
            if block["tool_use_id"] not in calls:
                return tr("the kept tail starts with the result of {id} but its tool_use is in the summarised part: "
                          "the API would reject it (unexpected tool_use_id).", id=block["tool_use_id"])
    head = normalize_messages_for_api(messages[:cut])
    if head and head[-1]["role"] == "assistant" and any(b.get("type") == "tool_use" for b in head[-1]["content"]):
        return tr("the summarised part ends on a tool_use whose result is in the tail: a call without its answer.")
    return None


def check_safe_cut(fn: Any) -> bool:
    """Check ``fn(messages, keep_recent) -> int``: where the kept tail starts, never between a ``tool_use`` and
    its ``tool_result`` (field case F8): the newest ``keep_recent`` messages the model is sent (user and
    assistant messages, attachments it reads; not notices), the cut moved back to the call when it lands on a
    result, 0 when nothing sent is left before it; on nine histories, against
    ``dreamloop.context.compaction_cut``."""
    hint = tr("walk back from the end counting the messages the model is sent (user and assistant messages, and an "
              "attachment it reads, such as a queued prompt; not system notices) until keep_recent are counted; if "
              "the message there is a tool_result message, move back to the assistant message that made the call, "
              "so the pair stays together in the tail; if nothing the model is sent is left before the cut, there "
              "is nothing to summarise.")
    todo = tr("return the index where the kept tail starts: count the newest keep_recent messages the model is "
              "sent, and never start the tail with a result whose call would be summarised.")

    def body() -> str:
        _require_callable(fn, "safe_cut")
        for name, messages, keep in _cut_cases():
            case = tr(name)
            got = _run(lambda: _call(f"safe_cut(<{case}>, {keep})", fn, list(messages), keep, hint=hint, todo=todo))
            if not isinstance(got, int) or isinstance(got, bool):
                raise _Fail(tr("for '{case}' it returned {value}; expected an index (int).", case=case,
                               value=_short(repr(got), 80)), hint)
            right = _package_cut(messages, keep)
            if got == right:
                continue
            problem = _tail_problem(messages, got) if 0 <= got <= len(messages) else \
                tr("it is not an index of the list.")
            if problem:
                raise _Fail(tr("for '{case}' (keep_recent={keep}) the cut is {cut}: {problem}", case=case, keep=keep,
                               cut=got, problem=problem), hint)
            kept = sum(_sent(m) for m in messages[got:])
            if got > 0 and not any(_sent(m) for m in messages[:got]):
                problem = tr("nothing before it is sent to the model (only notices): there is nothing to summarise "
                             "there.")
            elif kept < keep:
                problem = tr("the tail keeps {kept} message(s) the model is sent, fewer than keep_recent (a notice "
                             "is not sent, so it does not count).", kept=kept)
            else:
                problem = tr("the tail keeps {kept} messages the model is sent: more than keep_recent needs (an "
                             "attachment the model reads counts as one).", kept=kept)
            raise _Fail(tr("for '{case}' (keep_recent={keep}) the cut is {cut}: {problem}", case=case, keep=keep,
                           cut=got, problem=problem), hint)
        return tr("every cut keeps each tool_result with its tool_use, on nine histories (F8 among them).")

    return _verdict(tr("safe compaction cut"), body)


# ---------------------------------------------------------------------------
# Which stage acts first

_THRESHOLD_STAGES = ("snip", "microcompact", "context_collapse", "autocompact", "blocking_limit")


def _stage_cases() -> list[tuple[int, ContextOptions]]:
    chapter = ContextOptions(context_window=6000, snip=Snip(threshold=2000), microcompact=Microcompact(threshold=2000),
                             context_collapse=True, autocompact=Autocompact(threshold=2800), blocking_limit=True)
    only_heavy = ContextOptions(context_window=10_000, autocompact=True, blocking_limit=BlockingLimit(limit=9000))
    defaults = ContextOptions.all_on(context_window=200_000)
    # unseen: a lighter stage with the higher threshold; the blocking limit on its own
    lighter_later = ContextOptions(context_window=8000, snip=Snip(threshold=3000),
                                   microcompact=Microcompact(threshold=2000), autocompact=Autocompact(threshold=6000))
    only_blocking = ContextOptions(context_window=10_000, blocking_limit=True)
    # unseen: every stage on, the heavier the stage the lower its threshold, so each is the answer once with
    # every heavier one over too (a wrong order, a stage left out, the lowest or highest threshold all differ);
    # collapse stages its folds early (1,000) and commits them over 3,000, the threshold that counts
    upside_down = ContextOptions(context_window=10_000, snip=Snip(threshold=5000),
                                 microcompact=Microcompact(threshold=4000),
                                 context_collapse=ContextCollapse(stage_threshold=1000, threshold=3000),
                                 autocompact=Autocompact(threshold=2000), blocking_limit=BlockingLimit(limit=1000))
    cases = [(tokens, chapter) for tokens in (1500, 2000, 2001, 2700, 4300, 5400)]
    cases += [(tokens, only_heavy) for tokens in (5000, 8350, 8351, 9001)]
    cases += [(tokens, defaults) for tokens in (99_000, 100_001, 167_001, 177_001)]
    cases += [(tokens, lighter_later) for tokens in (2500, 3500, 7000)]
    cases += [(tokens, only_blocking) for tokens in (8000, 9500)]
    cases += [(tokens, upside_down) for tokens in (5500, 4500, 3500, 2500, 1500)]
    return cases


def check_first_stage(fn: Any) -> bool:
    """Check ``fn(tokens, options) -> str | None``: the lightest threshold-triggered stage that acts at
    ``tokens`` (``"snip"``, ``"microcompact"``, ``"context_collapse"``, ``"autocompact"``,
    ``"blocking_limit"``), or None; against ``dreamloop.context.stages_over`` on 24 cases."""
    hint = tr("take options.thresholds(options.context_window): stages that are off have None; the first stage, "
              "in pipeline order, whose threshold tokens is strictly over, acts first.")
    todo = tr("return the name of the first stage, in pipeline order, whose threshold the request is over (None "
              "when it is over none).")

    def body() -> str:
        _require_callable(fn, "first_stage")
        for tokens, options in _stage_cases():
            want = (stages_over(tokens, options.thresholds(options.context_window or 0)) or [None])[0]
            got = _run(lambda: _call(f"first_stage({tokens}, options)", fn, tokens, options, hint=hint, todo=todo))
            if got != want:
                on = ", ".join(options.stages_on())
                limits = options.thresholds(options.context_window or 0)
                limit = getattr(limits, got, None) if isinstance(got, str) else None
                if got is None:
                    why = tr("the request is over at least one threshold of a stage that is on.")
                elif got not in _THRESHOLD_STAGES:
                    why = tr("{stage} is not a stage a threshold triggers.", stage=_short(repr(got), 40))
                elif limit is None:
                    why = tr("{stage} is off in these options.", stage=got)
                elif tokens <= limit:
                    why = tr("{stage}'s threshold is {limit:,}: a stage acts only when the context is *over* it.",
                             stage=got, limit=limit)
                else:
                    why = tr("{stage} is over its threshold, but a lighter stage that is on is over its own too, and "
                             "the pipeline runs light to heavy.", stage=got)
                raise _Fail(tr("with {tokens:,} tokens (stages on: {on}; window {window:,}) you said {got!r}: {why}",
                               tokens=tokens, on=on, window=options.context_window, got=got, why=why), hint)
        return tr("{count} predictions match the pipeline's thresholds (off stages skipped, lightest first, strictly "
                  "over).", count=len(_stage_cases()))

    return _verdict(tr("which stage acts first"), body)


# ---------------------------------------------------------------------------
# What microcompact may clear


def _read_turns(count: int, *, cleared: tuple[int, ...] = (), parallel: int | None = None,
                short: tuple[int, ...] = (), half_cleared: int | None = None) -> list[Any]:
    history: list[Any] = [user_message("read the files, then fix config.py")]
    for n in range(1, count + 1):
        ids = [f"T{n}a", f"T{n}b"] if n in (parallel, half_cleared) else [f"T{n}"]
        history.append(_a(*[_use(i, file_path=f"file{n}.py") for i in ids]))
        text = "ok" if n in short else f"contents of file{n}.py\n" * 20
        history.append(_results(*[(i, CLEARED if n in cleared or (n == half_cleared and i.endswith("a")) else text)
                                  for i in ids]))
        if n == 3:
            history.append(SystemMessage(subtype="microcompact", content="a notice between turns"))
    return history


def _clear_cases() -> list[tuple[str, list[Any], int]]:
    return [(N_("six reads, keep 3"), _read_turns(6), 3),
            (N_("six reads, keep 0 (F16: the last two turns stay anyway)"), _read_turns(6), 0),
            (N_("six reads, two already cleared, keep 2"), _read_turns(6, cleared=(1, 2)), 2),
            (N_("five reads, turn 2 read two files at once, keep 2"), _read_turns(5, parallel=2), 2),
            (N_("five reads, turn 4 read two files at once, keep 3"), _read_turns(5, parallel=4), 3),
            (N_("two reads, keep 0"), _read_turns(2), 0),
            (N_("five reads, turn 2's result only 'ok', keep 2"), _read_turns(5, short=(2,)), 2),
            (N_("five reads, one of turn 1's two results already cleared, keep 2"), _read_turns(5, half_cleared=1), 2)]


_MARKER_TOKENS = estimate_block_tokens({"type": "tool_result", "tool_use_id": "", "content": CLEARED})


def check_clearable(fn: Any) -> bool:
    """Check ``fn(messages, keep_recent) -> list of tool_use ids``: the results microcompact may clear (old, not
    cleared yet, longer than the marker; never those of the newest ``max(keep_recent, 2)`` tool-result messages,
    field case F16); against ``dreamloop.context.clearable_tool_results`` on eight histories."""
    hint = tr("count tool-result user messages from the end: the newest max(keep_recent, 2) of them are kept (the "
              "current and previous turn always); a result in an older message may be cleared unless its content "
              "already is {cleared!r} or it is no longer than that marker (clearing it would save nothing).",
              cleared=CLEARED)
    todo = tr("return the tool_use ids whose old results microcompact would clear; the last two turns' results "
              "always stay.")

    def body() -> str:
        _require_callable(fn, "clearable")
        for name, messages, keep in _clear_cases():
            case = tr(name)
            want = [tool_use_id for _, tool_use_id, _ in clearable_tool_results(messages, keep_recent=keep)]
            got = _run(lambda: _call(f"clearable(<{case}>, {keep})", fn, list(messages), keep, hint=hint, todo=todo))
            if not isinstance(got, (list, tuple, set)):
                raise _Fail(tr("for '{case}' it returned {value}; expected a list of tool_use ids.", case=case,
                               value=_short(repr(got), 80)), hint)
            got = list(got)
            if sorted(got) == sorted(want):
                continue
            blocks = {b["tool_use_id"]: b for m in messages if is_tool_result_message(m) for b in m.message["content"]}
            wrong = [i for i in got if i not in want]
            again = [i for i in wrong if blocks.get(i, {}).get("content") == CLEARED]
            short = [i for i in wrong if i not in again and i in blocks
                     and estimate_block_tokens(blocks[i]) <= _MARKER_TOKENS]
            recent = [i for i in wrong if i not in again and i not in short]
            extra = ""
            if recent:
                extra += tr(" {ids} must stay: the model may still need what it just read (F16).",
                            ids=", ".join(map(str, recent)))
            if again:
                extra += tr(" {ids} is already cleared.", ids=again[0]) if len(again) == 1 else \
                    tr(" {ids} are already cleared.", ids=", ".join(again))
            if short:
                extra += tr(" {ids}: too short for clearing to save anything.", ids=", ".join(short))
            left = len([i for i in want if i not in got])
            if left:
                extra += tr(" You left out {count} old result(s) that clearing would shrink.", count=left)
            raise _Fail(tr("for '{case}' you would clear {got}:{extra}", case=case, got=got, extra=extra), hint)
        return tr("eight histories: old results cleared, short and cleared ones left, the last two turns' results "
                  "always kept (F16).")

    return _verdict(tr("what microcompact may clear"), body)
