"""Chapters 10 and 10b: sessions, and real session files read call by call: the exercise checks.

Chapter 10's check (``check_resume_answers``) builds small transcripts in dreamloop's own format, each cut
off where a crash would leave it (a prefix of the records: every record is on disk before its event is
handed on), and takes its answer key from ``inspect_transcript``. Chapter 10b's checks build small session
files in code, shaped like the real ones the chapter opens (one record per content block, parallel calls,
results written between the blocks of one response in 2.1.x, inline sidechains, a message written twice,
rejections and interrupts), so they need no file from the repository.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ..language import N_, tr
from ..claude_code import import_claude_code
from ..trace import Trace
from ..transcript import inspect_transcript
from ._checking import _call, _Fail, _require_callable, _run, _short, _verdict

__all__ = ["check_interrupted", "check_model_calls", "check_resume_answers"]

_REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
             "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
             "tell you how to proceed.")
_FOR_TOOLS = "[Request interrupted by user for tool use]"
_PLAIN = "[Request interrupted by user]"


# ---------------------------------------------------------------------------
# Chapter 10, exercise 1: what a resume answers


class _Transcript:
    """Records of a made-up dreamloop transcript (``transcript.py``'s format), chained one after another."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def _add(self, kind: str, **fields: Any) -> None:
        uuid = f"00000000-0000-4000-8000-{len(self.records) + 1:012d}"
        parent = self.records[-1]["uuid"] if self.records else None
        self.records.append({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "dreamloop-session",
                             **fields})

    def prompt(self, text: str) -> None:
        self._add("user", message={"role": "user", "content": text})

    def response(self, mid: str, *calls: tuple[str, str], text: str = "") -> None:
        content = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": call_id, "name": name, "input": {"path": call_id[6:]}}
                    for call_id, name in calls]
        self._add("assistant", message={
            "id": mid, "type": "message", "role": "assistant", "model": "claude-scripted-1", "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}})

    def finished(self, call_id: str, name: str = "Read") -> None:
        """The finished-call record the engine writes the moment a call finishes."""
        result = {"type": "tool_result", "tool_use_id": call_id, "content": f"contents of {call_id[6:]}"}
        self._add("progress", tool_use_id=call_id, data={"stage": "done", "name": name, "result": result,
                                                         "ran": True})

    def results(self, *call_ids: str, lost: tuple[str, ...] = ()) -> None:
        """The results message of a batch (or a resume's repair: ``lost`` calls answered is_error)."""
        blocks = [{"type": "tool_result", "tool_use_id": call_id, "content": f"contents of {call_id[6:]}",
                   **({"is_error": True} if call_id in lost else {})} for call_id in call_ids]
        self._add("user", message={"role": "user", "content": blocks}, source_tool_use_ids=list(call_ids))

    def notice(self, text: str) -> None:
        self._add("system", subtype="resume_repair", content=text, level="warning")


def _crashed_transcripts() -> dict[str, _Transcript]:
    mid_batch = _Transcript()  # section 1's crash: T2 never finished
    mid_batch.prompt("Read a, b and c.")
    mid_batch.response("msg_1", ("toolu_a", "Read"), ("toolu_slow", "Read"), ("toolu_c", "Read"),
                       text="Working on it.")
    mid_batch.finished("toolu_a")
    mid_batch.finished("toolu_c")

    out_of_order = _Transcript()  # the last call finished first
    out_of_order.prompt("Find value, run the tests, read config.py.")
    out_of_order.response("msg_1", ("toolu_grep", "Grep"), ("toolu_tests", "Bash"), ("toolu_config", "Read"))
    out_of_order.finished("toolu_config")
    out_of_order.finished("toolu_grep", "Grep")

    second_turn = _Transcript()  # the first batch answered; killed before any call of the second finished
    second_turn.prompt("Read a and b, then edit them.")
    second_turn.response("msg_1", ("toolu_a", "Read"), ("toolu_b", "Read"))
    second_turn.finished("toolu_b")
    second_turn.finished("toolu_a")
    second_turn.results("toolu_a", "toolu_b")
    second_turn.response("msg_2", ("toolu_edit", "Edit"), text="Editing a.")

    answered = _Transcript()  # killed after the results message was written, before the next response
    answered.prompt("Read a and b.")
    answered.response("msg_1", ("toolu_a", "Read"), ("toolu_b", "Read"))
    answered.finished("toolu_a")
    answered.finished("toolu_b")
    answered.results("toolu_a", "toolu_b")

    all_finished = _Transcript()  # every call finished; the results message was never written
    all_finished.prompt("Read a and b.")
    all_finished.response("msg_1", ("toolu_a", "Read"), ("toolu_b", "Read"))
    all_finished.finished("toolu_b")
    all_finished.finished("toolu_a")

    resumed = _Transcript()  # repaired by an earlier resume, then killed again in the next run
    resumed.prompt("Read a, b and c.")
    resumed.response("msg_1", ("toolu_a", "Read"), ("toolu_slow", "Read"), ("toolu_c", "Read"))
    resumed.finished("toolu_c")
    resumed.finished("toolu_a")
    resumed.results("toolu_a", "toolu_slow", "toolu_c", lost=("toolu_slow",))
    resumed.notice("Resumed after the session ended mid-run; repaired the transcript.")
    resumed.prompt("Where were we? Try b again.")
    resumed.response("msg_2", ("toolu_again", "Read"), ("toolu_b", "Read"), ("toolu_d", "Read"),
                     text="Trying again.")
    resumed.finished("toolu_d")
    resumed.finished("toolu_again")

    return {
        N_("killed mid-batch (section 1)"): mid_batch,
        N_("the calls finished out of call order"): out_of_order,
        N_("killed in the second turn"): second_turn,
        N_("killed after the results message"): answered,
        N_("every call finished, no results message"): all_finished,
        N_("resumed once, then killed again"): resumed,
    }


def _resume_key(records: list[dict[str, Any]], path: Path) -> tuple[list[str], list[str]]:
    """What ``QueryEngine.resume`` would answer, from ``inspect_transcript``: (saved, lost) ids in call order."""
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    report = inspect_transcript(path)
    return ([block.id for block in report.dangling if block.id in report.saved_results],
            [block.id for block in report.dangling if block.id not in report.saved_results])


def check_resume_answers(fn: Any) -> bool:
    """Check ``fn(records) -> (saved, lost)`` on six transcripts a crash cut off, against ``inspect_transcript``.

    ``records``: the transcript's lines, parsed. ``saved``: the ids of the calls a resume answers with the
    result saved when they finished; ``lost``: those it answers with an ``is_error`` result; each in call order.
    """
    hint = tr("a resume answers the calls of the last assistant message that no results message answers: a call "
              "with a finished-call record (a progress record) gets the result saved there, any other an "
              "is_error result; both in the order of the calls.")
    todo = tr("find the calls the crash left without a results message and split them into those whose result "
              "was saved when they finished and those that get an is_error result; return (saved, lost), each in "
              "call order")

    def body() -> str:
        _require_callable(fn, "resume_answers")
        with tempfile.TemporaryDirectory() as folder:
            count = 0
            for n, (name, transcript) in enumerate(_crashed_transcripts().items()):
                want = _resume_key(transcript.records, Path(folder) / f"crashed-{n}.jsonl")
                records = [json.loads(json.dumps(record)) for record in transcript.records]
                got = _run(lambda: _call("resume_answers(records)", fn, records, hint=hint, todo=todo))
                _judge_resume(tr(name), got, want, transcript.records, hint)
                count += 1
        return tr("{count} crashed transcripts: every call left without a result answered as a resume answers it, "
                  "saved or is_error, in call order.", count=count)

    return _verdict(tr("what a resume answers"), body)


def _judge_resume(case: str, got: Any, want: tuple[list[str], list[str]], records: list[dict[str, Any]],
                  hint: str) -> None:
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(part, (tuple, list)) for part in got):
        raise _Fail(tr("for '{case}' it returned {value}; expected a pair of lists (saved, lost).", case=case,
                       value=_short(repr(got), 100)), hint)
    saved, lost = want
    got_saved, got_lost = [list(part) for part in got]
    calls = [block["id"] for record in records if record["type"] == "assistant"
             for block in record["message"]["content"] if block["type"] == "tool_use"]
    for call_id in got_saved + got_lost:
        if call_id in saved or call_id in lost:
            continue
        if call_id in calls:
            raise _Fail(tr("for '{case}' you answered {call}, but a results message in the file already answers it.",
                           case=case, call=_short(call_id, 60)),
                        tr("only the calls of the last assistant message that no user message answers yet are left "
                           "dangling; a call an earlier results message answered is history, whatever records it "
                           "has."))
        raise _Fail(tr("for '{case}' you answered {call}, which is not a call in that transcript.", case=case,
                       call=_short(repr(call_id), 60)),
                    tr("answer with the ids of the tool_use blocks (their id field), nothing else."))
    wrongly_saved = [call_id for call_id in got_saved if call_id in lost]
    if wrongly_saved:
        raise _Fail(tr("for '{case}' you answered {call} with a saved result, but it never finished: no result of "
                       "it was saved.", case=case, call=_short(wrongly_saved[0], 60)),
                    tr("a result is saved only when its call finished: the finished-call (progress) record that "
                       "names it. A call without one gets an is_error result, since it may have had effects."))
    wrongly_lost = [call_id for call_id in got_lost if call_id in saved]
    if wrongly_lost:
        raise _Fail(tr("for '{case}' you gave {call} an is_error result, but it finished and its result was saved.",
                       case=case, call=_short(wrongly_lost[0], 60)),
                    tr("each call that finished has a record of its own, written the moment it finished, before any "
                       "results message: a resume sends that saved result."))
    if len(got_saved) != len(set(got_saved)) or len(got_lost) != len(set(got_lost)) or set(got_saved) & set(got_lost):
        raise _Fail(tr("for '{case}' a call is answered more than once.", case=case),
                    tr("each dangling call gets exactly one answer, in one of the two lists."))
    missing = len(saved) + len(lost) - len(got_saved) - len(got_lost)
    if missing:
        raise _Fail(tr("for '{case}' {count} call(s) left without a result have no answer.", case=case,
                       count=missing),
                    tr("every tool_use block of the last assistant message that no results message answers needs "
                       "an answer: the API refuses a request with one unanswered."))
    if got_saved != saved or got_lost != lost:
        raise _Fail(tr("for '{case}' the right calls in another order.", case=case),
                    tr("a resume answers in call order: the order of the tool_use blocks in the assistant message, "
                       "not the order the calls finished in."))


# ---------------------------------------------------------------------------
# Chapter 10b: made-up Claude Code session files


class _Session:
    """Records of a made-up session, chained one after another (1.0/2.0 style unless told otherwise)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._n = 0

    def _uuid(self) -> str:
        self._n += 1
        return f"00000000-0000-4000-8000-{self._n:012d}"

    def _add(self, kind: str, content: Any, *, parent: str | None = "last", **extra: Any) -> str:
        uuid = self._uuid()
        if parent == "last":
            parent = self.records[-1]["uuid"] if self.records else None
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(id=extra.pop("mid"), type="message", model="claude-sonnet-4", stop_reason=None,
                           usage={"input_tokens": 10, "output_tokens": 5})
        self.records.append({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s",
                             "isSidechain": extra.pop("sidechain", False), "message": message, **extra})
        return uuid

    def prompt(self, text: str, **extra: Any) -> str:
        return self._add("user", text, **extra)

    def text(self, mid: str, text: str, **extra: Any) -> str:
        return self._add("assistant", [{"type": "text", "text": text}], mid=mid, **extra)

    def call(self, mid: str, tool_id: str, name: str = "Bash", **extra: Any) -> str:
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": {"command": f"run {tool_id}"}}
        return self._add("assistant", [block], mid=mid, **extra)

    def result(self, tool_id: str, content: str = "ok", *, error: bool = False, **extra: Any) -> str:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        if error:
            block["is_error"] = True
        return self._add("user", [block], **extra)

    def marker(self, text: str) -> str:
        return self._add("user", [{"type": "text", "text": text}])

    def trace(self, folder: Path, name: str) -> Trace:
        path = folder / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return import_claude_code(path)


# ---------------------------------------------------------------------------
# Chapter 10b, exercise 1: the call the person interrupted


def _interrupt_sessions() -> dict[str, tuple[_Session, Any]]:
    rejected = _Session()  # like session 04
    rejected.prompt("push to github")
    rejected.text("msg_a", "Let me check first.")
    rejected.call("msg_a", "toolu_status")
    rejected.call("msg_a", "toolu_remote")
    rejected.result("toolu_remote", "origin git@example")
    rejected.result("toolu_status", "On branch main")
    rejected.call("msg_b", "toolu_add")
    rejected.call("msg_b", "toolu_commit")
    rejected.call("msg_b", "toolu_push")
    rejected.result("toolu_add", "")
    rejected.result("toolu_commit", _REJECTED, error=True)
    rejected.result("toolu_push", _REJECTED, error=True)
    rejected.marker(_FOR_TOOLS)
    rejected.prompt("continue")
    rejected.call("msg_c", "toolu_commit2")
    rejected.result("toolu_commit2", "[main 5c1b231] done")
    rejected.text("msg_d", "Pushed.")

    finished = _Session()  # like session 03: the tools had finished when the person pressed Esc
    finished.prompt("start the server in the background")
    finished.call("msg_a", "toolu_start")
    finished.result("toolu_start", "running in the background")
    finished.text("msg_b", "Let me check it started.")
    finished.call("msg_b", "toolu_check")
    finished.result("toolu_check", "listening on :4000")
    finished.marker(_PLAIN)
    finished.prompt("scrolling does not work")
    finished.text("msg_c", "Let me look.")

    errors_only = _Session()  # like session 01: is_error results, and nobody interrupted
    errors_only.prompt("run cat nonexistent.txt")
    errors_only.call("msg_a", "toolu_cat")
    errors_only.result("toolu_cat", "Exit code 1\ncat: nonexistent.txt: No such file or directory", error=True)
    errors_only.text("msg_b", "As expected, the file does not exist.")

    streaming = _Session()  # stopped while the answer was streaming
    streaming.prompt("explain the loop")
    streaming.text("msg_a", "The loop has five phases. First")
    streaming.marker(_PLAIN)
    streaming.prompt("shorter please")
    streaming.text("msg_b", "Five phases.")

    cancelled = _Session()  # like session 06: the results themselves say interrupted; a later run is fine
    cancelled.prompt("scan the files")
    cancelled.call("msg_a", "toolu_one", "Task")
    cancelled.call("msg_a", "toolu_two", "Task")
    cancelled.result("toolu_one", "found nothing")
    cancelled.result("toolu_two", _FOR_TOOLS, error=True)
    cancelled.prompt("scan them again")
    cancelled.call("msg_b", "toolu_three", "Task")
    cancelled.result("toolu_three", "found nothing")
    cancelled.text("msg_c", "Nothing sensitive.")

    twice = _Session()  # unseen: a failed command first, then two interrupts; the calls' ids not in order
    twice.prompt("tidy the repo")
    twice.call("msg_a", "toolu_ls")
    twice.result("toolu_ls", "ls: cannot access 'tmp': No such file or directory", error=True)
    twice.text("msg_b", "No tmp folder. Zipping and cleaning now.")
    twice.call("msg_b", "toolu_zip")
    twice.call("msg_b", "toolu_clean")
    twice.call("msg_b", "toolu_add")
    twice.result("toolu_add", "")
    twice.result("toolu_zip", _REJECTED, error=True)
    twice.result("toolu_clean", _REJECTED, error=True)
    twice.marker(_FOR_TOOLS)
    twice.prompt("just zip it")
    twice.call("msg_c", "toolu_zip2")
    twice.result("toolu_zip2", _FOR_TOOLS, error=True)
    twice.marker(_FOR_TOOLS)
    twice.prompt("never mind")
    twice.text("msg_d", "Stopped.")

    return {
        N_("tool errors, no interrupt (like 01)"): (errors_only, None),
        N_("rejected at the prompt, then interrupted (like 04)"): (rejected, (1, ["toolu_commit", "toolu_push"])),
        N_("interrupted after the tools finished (like 03)"): (finished, (1, [])),
        N_("interrupted while the answer streamed"): (streaming, (0, [])),
        N_("results that say interrupted (like 06)"): (cancelled, (0, ["toolu_two"])),
        N_("a failed command, then two interrupts"): (twice, (1, ["toolu_zip", "toolu_clean"])),
    }


def check_interrupted(fn: Any) -> bool:
    """Check ``fn(trace) -> (index, not_run) | None`` on five made-up sessions shaped like the real ones.

    ``index``: the first checkpoint whose run the person interrupted (its Terminal
    is ``aborted_tools`` or ``aborted_streaming``); ``not_run``: the tool_use ids of
    that call whose tool_result is ``is_error``, in call order; None when no one interrupted.
    """
    hint = tr("the interrupted call is the checkpoint whose run ended right there (its Terminal says aborted); the "
              "calls that did not run are the is_error results among that checkpoint's tool results.")
    todo = tr("go through the checkpoints, find the first whose run the person interrupted, and return its index "
              "with the ids of its calls that did not run; return None when nobody interrupted")

    def body() -> str:
        _require_callable(fn, "interrupted")
        with tempfile.TemporaryDirectory() as folder:
            answers = []
            for n, (case, (session, want)) in enumerate(_interrupt_sessions().items()):
                trace = session.trace(Path(folder), f"session-{n}")
                got = _run(lambda: _call("interrupted(trace)", fn, trace, hint=hint, todo=todo))
                _judge_interrupt(tr(case), got, want, trace, hint)
                answers.append(case)
        return tr("{count} sessions read: the interrupted call and the calls that did not run, or None.",
                  count=len(answers))

    return _verdict(tr("the interrupted call"), body)


def _judge_interrupt(case: str, got: Any, want: Any, trace: Trace, hint: str) -> None:
    if want is None:
        if got is not None:
            raise _Fail(tr("for '{case}' you answered {got}; nobody interrupted that session (its runs all ended "
                           "completed).", case=case, got=_short(got, 80)),
                        tr("an is_error result is not an interrupt: a failed command is a result the model reads. "
                           "Look at each checkpoint's terminal, not at the results."))
        return
    if got is None:
        raise _Fail(tr("for '{case}' you answered None, but the person did interrupt a run in that session.",
                       case=case), hint)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise _Fail(tr("for '{case}' it returned {value}; expected a pair (index, not_run).", case=case,
                       value=_short(repr(got), 100)), hint)
    index, not_run = got
    if index != want[0]:
        points = trace.checkpoints
        ended = points[index].terminal.reason if isinstance(index, int) and not isinstance(index, bool) \
            and 0 <= index < len(points) and points[index].terminal is not None else None
        if ended is not None and ended.startswith("aborted"):
            said = tr("checkpoint {index}, an interrupted run, but not the first one", index=index)
        elif index == want[0] + 1:
            said = tr("the checkpoint after the interrupt (its messages_for_query holds the marker)")
        else:
            said = tr("checkpoint {index}, whose run the person did not interrupt", index=_short(index, 40))
        raise _Fail(tr("for '{case}' you found {said}.", case=case, said=said),
                    tr("the interrupted call is the one whose run ended there (its checkpoint's Terminal says "
                       "aborted); the first such checkpoint. Give its position among the checkpoints (its index), "
                       "not its turn_count."))
    if list(not_run or []) != want[1]:
        got_ids = list(not_run or [])
        ran = [i for i in got_ids if i not in want[1]]
        if ran:
            problem = tr("{ids} did run (its result is not is_error, or it belongs to another run).",
                         ids=", ".join(map(str, ran)))
        elif sorted(map(str, got_ids)) == sorted(want[1]):
            problem = tr("the right calls in another order.")
        else:
            problem = tr("{count} call(s) that did not run are missing.", count=len(want[1]) - len(got_ids))
        raise _Fail(tr("for '{case}' the calls that did not run are {got}: {problem}", case=case,
                       got=_short(got_ids, 100), problem=problem),
                    tr("a call whose result is not is_error did run (git add ran before the person stopped the "
                       "rest): only the calls with an is_error result in that checkpoint did not, in the order of "
                       "the calls."))


# ---------------------------------------------------------------------------
# Chapter 10b, exercise 2: how many model calls


def _call_sessions() -> dict[str, tuple[list[dict[str, Any]], int]]:
    split = _Session()  # 1.0/2.0: one record per block, parallel calls, results chained after the response
    split.prompt("do two things at once")
    split.text("msg_1", "Two calls at once.")
    split.call("msg_1", "toolu_a", "Read")
    split.call("msg_1", "toolu_b", "Read")
    split.result("toolu_b")
    split.result("toolu_a")
    split.text("msg_2", "Both done.")
    split.call("msg_2", "toolu_c")
    split.result("toolu_c")
    split.text("msg_3", "All done.")

    streamed = _Session()  # 2.1.x: a result written between two blocks of the same response
    streamed.prompt("create the tasks")
    streamed.text("msg_1", "Creating three tasks.")
    first = streamed.call("msg_1", "toolu_a", "TaskCreate")
    streamed.result("toolu_a", parent=first)
    second = streamed.call("msg_1", "toolu_b", "TaskCreate")
    streamed.result("toolu_b", parent=second)
    third = streamed.call("msg_1", "toolu_c", "TaskCreate")
    streamed.result("toolu_c", parent=third)
    streamed.text("msg_2", "Three tasks.")

    subagent = _Session()  # 1.0.x: a Task's subagent written inline, isSidechain: true
    subagent.prompt("/orchestrator update CLAUDE.md")
    subagent.text("msg_1", "I'll ask a subagent.")
    subagent.call("msg_1", "toolu_task", "Task")
    subagent.prompt("Examine package.json", parent=None, sidechain=True)
    subagent.call("msg_s1", "toolu_s1", "Glob", sidechain=True)
    subagent.result("toolu_s1", "package.json", sidechain=True)
    subagent.text("msg_s2", "React 19, Next 15.", sidechain=True)
    subagent.result("toolu_task", "React 19, Next 15.", parent=subagent.records[2]["uuid"])
    subagent.text("msg_2", "Updated.")

    twice = _Session()  # like session 06: one response written once whole and again split, other uuids
    twice.prompt("launch the agents")
    twice._add("assistant", [{"type": "text", "text": "Launching."},
                             {"type": "tool_use", "id": "toolu_a", "name": "Task", "input": {}}], mid="msg_1")
    twice.text("msg_1", "Launching.")
    twice.call("msg_1", "toolu_a", "Task")
    twice.result("toolu_a", "launched")
    twice.text("msg_2", "Running.")

    same = _Session()  # unseen: two responses that say the same thing, and a subagent that ran in between
    same.prompt("look at both files")
    same.text("msg_1", "Let me look.")
    same.call("msg_1", "toolu_a", "Read")
    same.result("toolu_a")
    same.text("msg_2", "Let me look.")
    same.call("msg_2", "toolu_task", "Task")
    same.prompt("Look at b.txt", parent=None, sidechain=True)
    same.text("msg_s1", "Let me look.", sidechain=True)
    same.result("toolu_task", "b is fine", parent=same.records[5]["uuid"])
    same.text("msg_3", "Both fine.")

    quiet = _Session()  # unseen: responses with no text at all, and a subagent's response in two records
    quiet.prompt("run the checks")
    quiet.call("msg_1", "toolu_a")
    quiet.result("toolu_a")
    quiet.text("msg_2", "Asking a helper.")
    task = quiet.call("msg_2", "toolu_task", "Task")
    quiet.prompt("check the logs", parent=None, sidechain=True)
    quiet.text("msg_s1", "Checking.", sidechain=True)
    quiet.call("msg_s1", "toolu_s1", "Grep", sidechain=True)
    quiet.result("toolu_s1", "no errors", sidechain=True)
    quiet.text("msg_s2", "No errors.", sidechain=True)
    quiet.result("toolu_task", "no errors", parent=task)
    quiet.call("msg_3", "toolu_b")
    quiet.result("toolu_b")
    quiet.text("msg_4", "All clear.")

    return {
        N_("parallel calls, one record per block (1.0/2.0)"): (split.records, 3),
        N_("two responses that say the same, and a subagent"): (same.records, 3),
        N_("results between the blocks of one response (2.1.x)"): (streamed.records, 2),
        N_("an inline subagent (isSidechain)"): (subagent.records, 2),
        N_("one response written twice"): (twice.records, 2),
        N_("responses without text, and a subagent's response in two records"): (quiet.records, 4),
    }


def check_model_calls(fn: Any) -> bool:
    """Check ``fn(records) -> int``: the main thread's model calls in a session file's records (parsed lines)."""
    hint = tr("one response is one message.id, however many records it was written in and whatever sits "
              "between them; a subagent's records are marked isSidechain.")
    todo = tr("count the model calls of the main thread: the responses, not the records they were written in")

    def body() -> str:
        _require_callable(fn, "model_calls")
        counts = []
        for name, (records, want) in _call_sessions().items():
            case = tr(name)
            got = _run(lambda: _call("model_calls(records)", fn, [dict(r) for r in records], hint=hint, todo=todo))
            if isinstance(got, bool) or not isinstance(got, int):
                raise _Fail(tr("for '{case}' it returned {value}; expected a whole number.", case=case,
                               value=_short(repr(got), 80)),
                            tr("return how many model calls there are: an int."))
            if got != want:
                raise _Fail(tr("for '{case}' you counted {got}: {more_or_fewer} than the model calls on the main "
                               "thread.", case=case, got=got, more_or_fewer=tr("more") if got > want else tr("fewer")),
                            _calls_hint(records, got))
            counts.append(want)
        listed = ", ".join(map(str, counts))
        return tr("{count} files counted ({listed} model calls): by message.id, main thread only.",
                  count=len(counts), listed=listed)

    return _verdict(tr("model calls"), body)


def _calls_hint(records: list[dict[str, Any]], got: int) -> str:
    assistant = [r for r in records if r["type"] == "assistant"]
    if got == len(assistant) or got == len([r for r in assistant if not r.get("isSidechain")]):
        return tr("you counted records: Claude Code writes each content block of a response as its own record, "
                  "all with the same message.id.")
    if got == len({r["message"]["id"] for r in assistant}):
        return tr("records with isSidechain: true are a subagent's own conversation, never the main thread's calls.")
    main = [r for r in assistant if not r.get("isSidechain")]
    if got == len({r["message"]["id"] for r in main if any(b.get("type") == "text" for b in r["message"]["content"])}):
        return tr("a response need not say anything: one that holds only tool_use blocks is a model call too.")
    if got == len({r["message"]["id"] for r in assistant}) - (len(assistant) - len(main)):
        return tr("a subagent's response can be written in several records too: leave its records out, rather than "
                  "taking their number off.")
    return tr("tool_result records can sit between the blocks of one response (2.1.x runs tools while the "
              "response streams), so runs of adjacent assistant records are not responses.")
