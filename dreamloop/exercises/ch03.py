"""Chapters 03, 03b and 03c: the exercise checks (``check_last_answer``, ``check_next_state`` and ``check_max_turns``,
chapter 03 queryLoop(); ``check_memory_files`` and ``check_next_attachments``, chapters 03b and 03c between turns)."""

from __future__ import annotations

from typing import Any

from .. import scripts as S
from ..deps import QueryDeps, counting_uuids
from ..language import N_, tr
from ..messages import block_field, user_message
from ..model import offline
from ..query import QueryParams, query
from ..state import State
from ._checking import (
    Verdict,
    _api_requests,
    _call,
    _Fail,
    _read_tool,
    _require_callable,
    _run,
    _short,
    _text_of,
    _verdict,
)

__all__ = ["check_last_answer", "check_max_turns", "check_memory_files", "check_next_attachments", "check_next_state"]


def _last_answer_cases() -> dict[str, tuple[Any, dict[str, Any]]]:
    return {
        N_("a Read, then the answer"): ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                                     S.reply("value is 1.")], {}),
        N_("a model that never stops, max_turns=2"): (lambda body, i: S.reply(f"Reading again ({i + 1}).",
                                                                            S.tool_use("Read", {"file_path": "config.py"})),
                                                  {"max_turns": 2}),
        N_("the API fails on the second request"): ([S.reply("Let me read it.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
                                                 S.http_error(500, retry_after_ms=None)], {}),
        N_("no tool at all"): ([S.reply("Hello!")], {}),
    }


def _fresh_run(script: Any, extra: dict[str, Any]) -> Any:
    return query(QueryParams(messages="What is value in config.py?", model=offline(script, max_retries=0),
                             tools=[_read_tool()], deps=QueryDeps(uuid=counting_uuids()), **extra))


def check_last_answer(fn: Any) -> Verdict:
    """Check ``await fn(run) -> (text, reason)``: iterate a ``QueryRun`` to the end, return the text of the
    last assistant message and ``run.terminal.reason``. Compared with the package's own run of four scripts."""
    todo = tr("iterate the run to its end with async for, keep the last assistant message you see, then return "
              "its text and the run's Terminal reason.")
    terminal_hint = tr("an async generator has no return value: the Terminal is on the run object, readable once "
                       "the async for loop has ended.")

    def body() -> str:
        _require_callable(fn, "last_answer")
        reasons = []
        for name, (script, extra) in _last_answer_cases().items():
            case = tr(name)
            async def reference() -> tuple[str, str]:
                run = _fresh_run(script, extra)
                async for _ in run:
                    pass
                answers = [m for m in run.messages if m.type == "assistant"]
                return _text_of(answers[-1].message), run.terminal.reason

            async def learner() -> Any:
                return await _call("last_answer(run)", fn, _fresh_run(script, extra), todo=todo, hint=terminal_hint)

            want = _run(reference)
            got = _run(learner)
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise _Fail(tr("for '{case}' it returned {value}; expected a pair (text, reason).", case=case,
                               value=_short(repr(got), 100)),
                            tr("return two things: the text (a str) and the reason (a str)."))
            text, reason = got
            if reason != want[1]:
                raise _Fail(tr("for '{case}' the reason is {got!r}, but the run did not end that way.", case=case,
                               got=reason),
                            tr("a run can end in several ways (completed, max_turns, model_error, ...): read the "
                               "reason from run.terminal after the async for loop, don't assume one."))
            if str(text).strip() != want[0].strip():
                raise _Fail(tr("for '{case}' the text is {got!r}, which is not what the last assistant message says.",
                               case=case, got=_short(text, 80)),
                            tr("the LAST assistant message of the run, whatever it asked for (it may still ask for "
                               "tools when max_turns or an error ends the run); its text blocks only."))
            reasons.append(reason)
        return tr("{count} runs read to the end; terminal reasons {reasons}.", count=len(reasons),
                  reasons=", ".join(reasons))

    return _verdict(tr("last answer and Terminal"), body)


def check_next_state(fn: Any) -> Verdict:
    """Check ``fn(state, messages_for_query, assistant_messages, tool_results) -> State``: the next State of
    the next_turn path (queryLoop(): messages, turn_count + 1, transition), against the package's trace."""
    todo = tr("build and return the dl.State the loop starts its next turn with (messages, turn_count, transition).")
    script = [S.reply("First config.py.", S.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
              S.reply("Now the notes.", S.tool_use("Read", {"file_path": "notes.md"}, id="toolu_2")),
              S.reply("value is 1; the notes want 2.")]

    def body() -> str:
        _require_callable(fn, "next_state")

        async def reference() -> Any:
            run = _fresh_run(script, {})
            async for _ in run:
                pass
            return run.trace

        trace = _run(reference)
        points = trace.checkpoints
        for point, after in zip(points, points[1:]):
            state = State(messages=tuple(trace.resolve(point.state_messages)), turn_count=point.turn_count,
                          transition=point.transition)
            args = (state, trace.resolve(point.messages_for_query), trace.resolve(point.assistant_messages),
                    trace.resolve(point.tool_results))
            got = _run(lambda: _call("next_state(...)", fn, *args, hint=todo, todo=todo))
            where = tr("after turn_count={turn_count}", turn_count=point.turn_count)
            messages = getattr(got, "messages", None)
            if not isinstance(got, State) or messages is None:
                raise _Fail(tr("{where} it returned {kind}; expected a State.", where=where, kind=type(got).__name__),
                            tr("the loop carries a State from turn to turn: return dl.State(...) with its fields."))
            ids = [getattr(m, "uuid", None) for m in messages]
            if ids != after.state_messages:
                kinds = [getattr(m, "type", "?") for m in messages]
                if "assistant" not in kinds:
                    hint = tr("the model must see its own call before the result: keep this turn's assistant "
                              "messages.")
                elif sorted(map(str, ids)) == sorted(after.state_messages):
                    hint = tr("the order matters: the model must see its call before the result (what was sent, "
                              "what came back, then the results).")
                else:
                    hint = tr("the next turn starts from everything the model saw this turn, plus what this turn "
                              "added.")
                raise _Fail(tr("{where} the new messages are {got}, not the ones queryLoop() starts its next turn "
                               "with.", where=where, got=kinds), hint)
            if getattr(got, "turn_count", None) != after.turn_count:
                raise _Fail(tr("{where} turn_count is {got}, not the next turn's.", where=where,
                               got=getattr(got, "turn_count", None)),
                            tr("turn_count goes up by one each time a batch of tool results is handed on."))
            transition = getattr(got, "transition", None)
            reason = block_field(transition, "reason", None)
            if reason != "next_turn":
                raise _Fail(tr("{where} transition is {got}: it does not say why the loop went round again.",
                               where=where, got=_short(repr(transition), 80)),
                            tr("transition records why the loop went round again (a dl.Continue with a reason); "
                               "tools ran and their results go back: that reason is next_turn."))
        # After a context stage, messages_for_query is shorter than State.messages; the next State
        # starts from what the model saw, not from the old history.
        point = points[-2]
        seen = trace.resolve(point.messages_for_query)
        dropped = user_message("(an old turn the context pipeline left out)")
        state = State(messages=(dropped, *seen), turn_count=point.turn_count, transition=point.transition)
        got = _run(lambda: _call("next_state(...)", fn, state, seen, trace.resolve(point.assistant_messages),
                                 trace.resolve(point.tool_results), hint=todo, todo=todo))
        if any(getattr(m, "uuid", None) == dropped.uuid for m in getattr(got, "messages", ())):
            raise _Fail(tr("when the context pipeline left a message out of messages_for_query, your next State "
                           "still has it."),
                        tr("build the next State from what the model saw this turn (messages_for_query), not from "
                           "state.messages: the pipeline may have shortened it."))
        return tr("{count} transitions, each the same State queryLoop() built (messages, turn_count, transition).",
                  count=len(points) - 1)

    return _verdict(tr("next State"), body)


_MAX_TURNS_FIELDS = ("requests", "tool_batches", "reason", "turn_count")
"""The names of the prediction's four values (a ❌ names the wrong ones, never their right values)."""

_MAX_TURNS_CASES = ((3, 1), (3, 2), (3, 3), (3, 6), (1, 1), (1, 0), (2, 5), (4, 2))
"""(max_turns, tool_turns) pairs the prediction is checked on."""


def check_max_turns(fn: Any) -> Verdict:
    """Check a prediction: ``fn(max_turns, tool_turns) -> (requests, tool_batches, reason, turn_count)``.

    The model asks for a tool on its first ``tool_turns`` responses and then answers in words; the loop runs
    with ``max_turns``. ``reason`` and ``turn_count`` are the Terminal's. Checked against the package's loop
    on eight pairs, among them a model that would have answered on the very turn max_turns forbids.
    """
    todo = tr("return a tuple (requests, tool_batches, reason, turn_count) for a run of the loop with this "
              "max_turns and a model that calls a tool tool_turns times before it answers.")

    def body() -> str:
        _require_callable(fn, "predict")
        rows = []
        for max_turns, tool_turns in _MAX_TURNS_CASES:
            async def reference() -> tuple[int, int, str, int]:
                script = [*(S.reply(f"Reading ({i + 1}).", S.tool_use("Read", {"file_path": "config.py"}))
                            for i in range(tool_turns)), S.reply("value is 1.")]
                model = offline(script)
                run = query(QueryParams(messages="loop", model=model, tools=[_read_tool()], max_turns=max_turns,
                                        deps=QueryDeps(uuid=counting_uuids())))
                batches = 0
                async for event in run:
                    batches += event.type == "user" and bool(event.source_tool_use_ids)
                return len(_api_requests(model)), batches, run.terminal.reason, run.terminal.turn_count

            want = _run(reference)
            call = f"predict({max_turns}, {tool_turns})"
            got = _run(lambda: _call(call, fn, max_turns, tool_turns, hint=todo, todo=todo))
            if not isinstance(got, (tuple, list)) or len(got) != 4:
                raise _Fail(tr("{call} returned {value}; expected (requests, tool_batches, reason, turn_count).",
                               call=call, value=_short(repr(got), 80)),
                            tr("four values, in that order; reason is the Terminal's reason, a string."))
            got = tuple(got)
            if got == want:
                rows.append(want)
                continue
            requests, batches, reason, turn_count = got
            wrong = [name for name, mine, loop in zip(_MAX_TURNS_FIELDS, got, want) if mine != loop]
            if reason != want[2] and want[2] == "completed":
                hint = tr("the limit only matters while the model keeps asking for tools: a model that stops asking "
                          "before the limit ends the run the ordinary way.")
            elif reason != want[2]:
                hint = tr("max_turns is checked after the tools ran and before the next request: a model that would "
                          "have answered on that next request never gets asked.")
            elif (requests, batches) != want[:2]:
                hint = tr("count the requests the loop sends and the batches of tools it runs: each turn the loop "
                          "starts sends one request, and its tools run before any check on max_turns.")
            else:
                hint = tr("turn_count in the Terminal: completed keeps the turn it ended in; max_turns carries the "
                          "turn the loop refused to start (like the max_turns_reached attachment).")
            raise _Fail(tr("{call}: you predicted {got}; the run differs in {fields}.", call=call, got=got,
                           fields=", ".join(wrong)), hint)
        return tr("your predictions match the loop on all {count} runs, e.g. predict(3, 3) = {example}: the answer "
                  "one request away never came.", count=len(rows), example=rows[2])

    return _verdict("max_turns", body)


def _difference(got: list[Any], want: list[Any]) -> str:
    """What is wrong with a list answer, by count and kind, never naming what is missing."""
    extra = [item for item in got if item not in want]
    missing = [item for item in want if item not in got]
    parts = []
    if extra:
        parts.append(tr("{count} of them should not be there", count=len(extra)))
    if missing:
        parts.append(tr("{count} more belong", count=len(missing)))
    if not parts:
        return tr("the right ones, in another order") if len(got) == len(want) else tr("one of them twice")
    return "; ".join(parts)


# ---------------------------------------------------------------------------
# Exercise: which memory files the first request carries (stage 5's preamble, context.memory)

_MEMORY_CASES: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"home/.claude/CLAUDE.md", "proj/.git/", "proj/CLAUDE.md"}), "proj"),
    (frozenset({"repo/.git/", "repo/CLAUDE.md", "repo/app/CLAUDE.local.md", "repo/app/CLAUDE.md", "CLAUDE.md"}),
     "repo/app"),
    (frozenset({"work/CLAUDE.md", "work/app/CLAUDE.md", "work/app/main.py"}), "work/app"),
    (frozenset({"src/main.py"}), "src"),
    (frozenset({"home/.claude/CLAUDE.md", "w/CLAUDE.local.md", "w/.git/", "w/lib/CLAUDE.md"}), "w/lib"),
    (frozenset({"home/.claude/CLAUDE.md", "mono/.git/", "mono/CLAUDE.md", "mono/pkg/.git/", "mono/pkg/CLAUDE.local.md",
                "mono/pkg/CLAUDE.md", "mono/pkg/lib/CLAUDE.md"}), "mono/pkg/lib"),  # a repository inside one
)
"""(files and folders of a small disk, the workspace): folders end with "/"; the home folder is "home"."""


def _memory_reference(paths: frozenset[str], workspace: str) -> list[str]:
    import tempfile
    from pathlib import Path

    from ..context.memory import find_memory_files

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        (root / "home").mkdir()
        for path in paths:
            target = root / path
            if path.endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("notes\n")
        (root / workspace).mkdir(parents=True, exist_ok=True)
        return [p.relative_to(root).as_posix() for p, _, _ in find_memory_files(root / workspace, root / "home")]


def _folders(paths: list[str]) -> list[str]:
    """The folder of each path, in order, a folder once (what the order across folders is)."""
    return list(dict.fromkeys(p.rsplit("/", 1)[0] if "/" in p else "" for p in paths))


def check_memory_files(fn: Any) -> Verdict:
    """Check ``fn(paths, workspace) -> list of paths``: the memory files a run sends, in the order it sends
    them (``dreamloop.context.memory.find_memory_files``), on six small disks. ``paths`` is a set of
    relative paths (a folder ends with ``/``), the home folder is ``home``, ``workspace`` a folder among them."""
    todo = tr("return the paths of the memory files (CLAUDE.md, CLAUDE.local.md) the run sends, in the order it "
              "sends them.")

    def body() -> str:
        _require_callable(fn, "memory_files")
        for paths, workspace in _MEMORY_CASES:
            want = _memory_reference(paths, workspace)
            call = f"memory_files({sorted(paths)}, {workspace!r})"
            got = _run(lambda: _call("memory_files(...)", fn, set(paths), workspace, hint=todo, todo=todo))
            if not isinstance(got, (list, tuple)) or not all(isinstance(p, str) for p in got):
                raise _Fail(tr("{call} returned {value}; expected a list of paths.", call=call,
                               value=_short(repr(got), 80)),
                            tr("return a list of strings, each a path as written in the set you were given."))
            got = [p.rstrip("/") for p in got]
            if got == want:
                continue
            if sorted(got) == sorted(want) and _folders(got) == _folders(want):
                hint = tr("in each folder the shared CLAUDE.md comes first, then the private CLAUDE.local.md.")
            elif sorted(got) == sorted(want):
                hint = tr("the order is the order of authority: the farthest instructions first (the user's own), "
                          "then folder by folder towards the workspace, so the nearest come last.")
            elif any(p not in want for p in got) and not any(p.startswith("home/") for p in set(got) - set(want)):
                hint = tr("the lookup goes up from the workspace only as far as the repository root (the nearest "
                          "folder up that holds .git); outside a git repository only the workspace's own folder is "
                          "read.")
            elif any(p.endswith("CLAUDE.local.md") for p in set(want) - set(got)):
                hint = tr("each folder can hold two memory files: the shared one and the private .local one.")
            elif any(p.startswith("home/") for p in set(want) - set(got)):
                hint = tr("the user's own memory file (in the home folder's .claude) counts too.")
            else:
                hint = tr("in a git repository every folder from the root down to the workspace counts.")
            raise _Fail(tr("{call} = {got}: {difference}.", call=call, got=got, difference=_difference(got, want)), hint)
        return tr("six disks, each with the memory files a run sends, in its order.")

    return _verdict(tr("memory files"), body)


# ---------------------------------------------------------------------------
# Exercise: what phase 5 attaches after a turn (attachments.py, changed_files on)

_ATTACH_CASES: tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("a.py",), (("Read", "b.py"),), ("a.py",), ()),
    (("a.py",), (("Edit", "a.py"),), (), ()),
    (("a.py", "b.py"), (("Read", "a.py"),), ("a.py", "b.py"), ("also run the tests",)),
    ((), (("Read", "a.py"),), ("c.py",), ()),
    (("b.py", "a.py"), (("Read", "c.py"),), ("a.py", "b.py"), ("stop after this",)),
    (("a.py",), (("Read", "b.py"), ("Edit", "b.py")), ("b.py",), ()),
    (("a.py", "b.py"), (("Write", "a.py"),), ("a.py", "b.py"), ()),  # a Write is the model's own change too
)
"""(read in earlier turns, this turn's calls, files someone else changed as this turn began, input queued)."""


async def _attachments_reference(read_before: tuple[str, ...], calls: tuple[tuple[str, str], ...],
                                 changed: tuple[str, ...], queued: tuple[str, ...]) -> list[tuple[str, str]]:
    import tempfile
    from pathlib import Path

    from ..messages import AttachmentMessage
    from ..tools import builtin_tools

    def call(tool: str, name: str) -> Any:
        if tool == "Edit":
            return S.tool_use("Edit", {"file_path": name, "old_string": "x = 1", "new_string": "x = 2"})
        if tool == "Write":
            return S.tool_use("Write", {"file_path": name, "content": "x = 3\n"})
        return S.tool_use("Read", {"file_path": name})

    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder).resolve()
        for name in ("a.py", "b.py", "c.py"):
            (workspace / name).write_text("x = 1\n")
        first = [call("Read", name) for name in read_before] or [S.tool_use("Glob", {"pattern": "*.md"})]

        def policy(body: Any, index: int) -> Any:
            if index == 0:
                return S.reply("Looking.", *first)
            if index == 1:
                for name in changed:  # someone else edits these while the model answers
                    with open(workspace / name, "a") as file:
                        file.write("# changed\n")
                return S.reply("Working.", *(call(tool, name) for tool, name in calls))
            return S.reply("Done.")

        drained = iter([[], [AttachmentMessage(attachment={"type": "queued_command", "prompt": text})
                             for text in queued]])
        run = query(QueryParams(messages="go", model=offline(policy), tools=builtin_tools(), workspace=workspace,
                                permission_mode="bypass", changed_files=True,
                                queued_input=lambda: next(drained, []), deps=QueryDeps(uuid=counting_uuids())))
        batches, out = 0, []
        async for event in run:
            if event.type == "user" and event.source_tool_use_ids:
                batches += 1
            elif event.type == "attachment" and batches == 2:
                found = event.attachment
                out.append((found["type"], Path(found["path"]).name if "path" in found else found["prompt"]))
        return out


def check_next_attachments(fn: Any) -> Verdict:
    """Check ``fn(read_before, calls, changed, queued) -> list of (type, what)``: what phase 5 attaches after a
    turn, with ``changed_files`` on: ``("changed_file", name)`` and ``("queued_command", text)``, in order.
    Checked against the package's loop on seven turns."""
    todo = tr("return the list of (type, what) pairs phase 5 attaches after this turn: ('changed_file', file name) "
              "and ('queued_command', text), in the order the loop attaches them.")

    def body() -> str:
        _require_callable(fn, "next_attachments")
        for read_before, calls, changed, queued in _ATTACH_CASES:
            want = _run(lambda: _attachments_reference(read_before, calls, changed, queued))
            call = (f"next_attachments({list(read_before)}, {[list(c) for c in calls]}, {list(changed)}, "
                    f"{list(queued)})")
            got = _run(lambda: _call("next_attachments(...)", fn, list(read_before), [tuple(c) for c in calls],
                                     list(changed), list(queued), hint=todo, todo=todo))
            if not isinstance(got, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2
                                                              for p in got):
                raise _Fail(tr("{call} returned {value}; expected a list of (type, what) pairs.", call=call,
                               value=_short(repr(got), 80)),
                            tr("a list of pairs, each ('changed_file', name) or ('queued_command', text)."))
            got = [tuple(p) for p in got]
            if got == want:
                continue
            mine = {name for tool, name in calls}
            noticed = {what for kind, what in got if kind == "changed_file"}
            if sorted(got) == sorted(want):
                hint = tr("the order: first the files, in the order the model first read them, then the queued "
                          "input, in the order it was typed.")
            elif noticed & mine:
                hint = tr("a notice is for a change the model has not seen: a file it read, edited or wrote in this "
                          "very turn needs none (its own change, or a read that already shows the change).")
            elif noticed - set(read_before):
                hint = tr("only files the model read earlier are watched: a change to any other file is not the "
                          "model's concern.")
            else:
                hint = tr("every file read in an earlier turn and changed by someone else since gets a notice, and "
                          "queued input follows the notices.")
            raise _Fail(tr("{call} = {got}: {difference}.", call=call, got=got, difference=_difference(got, want)), hint)
        return tr("seven turns, each with the attachments phase 5 added, in its order.")

    return _verdict(tr("next attachments"), body)
