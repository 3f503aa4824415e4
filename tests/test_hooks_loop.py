"""Hooks in the loop: pre_tool_use / post_tool_use around each call, stop hooks in phase 4 (block,
prevent, the runaway guard), user_prompt_submit in QueryEngine.submit_message, and field case F17.

Every run goes through the public API against the offline API; the ``offline`` fixture asserts that
no request the loop sent would be rejected by the real API.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.engine import QueryEngine, load_transcript
from dreamloop.errors import HookError
from dreamloop.hooks import (
    CommandHook,
    Hooks,
    PreToolUseDecision,
    StopDecision,
    UserPromptSubmitDecision,
    stop_feedback,
)
from dreamloop.query import QueryParams, query
from dreamloop.tools import Allow, tool
from dreamloop.trace import TRACE_VERSION, Trace


class PathInput(BaseModel):
    path: str


def tools(ran: list | None = None):
    """Read (read-only: runs without asking) and Write (asks: denied when nobody answers)."""
    ran = ran if ran is not None else []

    @tool(PathInput, name="Read", read_only=True)
    async def read(input: PathInput) -> str:
        """Read a file."""
        ran.append(("Read", input.path))
        return f"contents of {input.path}"

    @tool(PathInput, name="Write")
    async def write(input: PathInput) -> str:
        """Write a file."""
        ran.append(("Write", input.path))
        return f"wrote {input.path}"

    return [read, write]


def requests_of(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def params(model, hooks, **extra):
    return QueryParams(messages="go", model=model, tools=extra.pop("tools", None) or tools(),
                       hooks=hooks, deps=QueryDeps(uuid=counting_uuids()), **extra)


async def drain(run):
    return [event async for event in run]


def hook_records(events, kind=None):
    return [e.attachment for e in events if e.type == "attachment" and e.attachment["type"].startswith("hook_")
            and (kind is None or e.attachment["type"] == kind)]


def results_of(request):
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


# ---------------------------------------------------------------------------
# Off by default


async def test_no_hooks_no_records_and_the_same_requests(offline):
    script = [S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("done")]
    plain, hooked = offline(list(script)), offline(list(script))
    a = await drain(query(params(plain, None)))
    b = await drain(query(params(hooked, Hooks())))  # switched on, nothing registered
    assert requests_of(plain) == requests_of(hooked)
    assert not hook_records(a) and not hook_records(b)


# ---------------------------------------------------------------------------
# pre_tool_use


@pytest.mark.parametrize("kind", ["python", "command"])
async def test_a_denied_call_never_runs_and_keeps_its_result_in_call_order(offline, kind):
    ran = []
    model = offline([
        S.reply("three reads", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "secret"}, id="T2"),
                S.tool_use("Read", {"path": "c"}, id="T3")),
        S.reply("ok"),
    ])
    hooks = Hooks()
    if kind == "python":
        hooks.add("pre_tool_use", lambda i: PreToolUseDecision(decision="deny", reason="no secrets")
                  if i.tool_input["path"] == "secret" else None, matcher="Read")
    else:
        hooks.add("pre_tool_use", CommandHook(
            "grep -q '\"path\":\"secret\"' && { echo 'no secrets' >&2; exit 2; }; exit 0"), matcher="Read")
    run = query(params(model, hooks, tools=tools(ran)))
    events = await drain(run)
    assert sorted(ran) == [("Read", "a"), ("Read", "c")]
    results = results_of(requests_of(model)[1])
    assert [r["tool_use_id"] for r in results] == ["T1", "T2", "T3"]
    denied = results[1]
    assert denied["is_error"] is True
    expected = "no secrets" if kind == "python" else "PreToolUse:Read hook error: ["
    assert denied["content"].startswith(expected) and "no secrets" in denied["content"]
    assert len(hook_records(events)) == 3 and run.terminal.reason == "completed"


async def test_an_exit_1_pre_tool_use_hook_fails_open(offline):
    ran = []
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])
    hooks = Hooks().add("pre_tool_use", CommandHook("echo BLOCKED >&2; exit 1"))
    events = await drain(query(params(model, hooks, tools=tools(ran))))
    assert ran == [("Read", "a")]  # exit 1 is a non-blocking error: the call runs (use exit 2 to block)
    assert hook_records(events)[0]["type"] == "hook_non_blocking_error"


async def test_allow_skips_the_permission_prompt_and_ask_goes_to_the_person(offline):
    ran, asked = [], []

    async def ask(tool, input, reason):
        asked.append((tool.name, reason))
        return Allow()

    model = offline([S.reply("w", S.tool_use("Write", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2")),
                     S.reply("ok")])
    hooks = (Hooks()
             .add("pre_tool_use", lambda i: PreToolUseDecision(decision="allow", reason="trusted"), matcher="Write")
             .add("pre_tool_use", lambda i: PreToolUseDecision(decision="ask", reason="really read b?"), matcher="Read"))
    await drain(query(params(model, hooks, tools=tools(ran), ask=ask)))
    assert ran == [("Write", "a"), ("Read", "b")]  # Write would have asked; the hook allowed it
    assert asked == [("Read", "really read b?")]  # Read is read-only; the hook made it ask


@pytest.mark.parametrize("hook", ["python", "command"])
async def test_a_hooks_allow_does_not_override_the_policys_deny_or_ask(offline, hook):
    """Issue 24 item 8: can_use_tool's Deny and Ask win over a hook's allow (Claude Code's deny and ask rules
    win over a hook's allow); the hook's allow only skips the tool's own prompt."""
    ran, asked = [], []

    async def policy(tool, input, context):
        return {"rm": dl.Deny("rm is denied by policy"), "ask": dl.Ask("sure?")}.get(input["path"], Allow())

    async def ask(tool, input, reason):
        asked.append(reason)
        return dl.Deny("no")

    allow = (lambda i: PreToolUseDecision(decision="allow")) if hook == "python" else \
        CommandHook("""echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'""")
    model = offline([S.reply("w", *(S.tool_use("Write", {"path": p}, id=f"T{n}") for n, p in enumerate(["rm", "ask", "ok"]))),
                     S.reply("done")])
    await drain(query(params(model, Hooks().add("pre_tool_use", allow), tools=tools(ran), can_use_tool=policy, ask=ask)))
    assert ran == [("Write", "ok")] and asked == ["sure?"]
    results = results_of(requests_of(model)[1])
    assert [r.get("is_error", False) for r in results] == [True, True, False]
    assert results[0]["content"] == "rm is denied by policy"


async def test_without_a_hook_write_is_denied_when_nobody_answers(offline):
    ran = []
    model = offline([S.reply("w", S.tool_use("Write", {"path": "a"}, id="T1")), S.reply("ok")])
    await drain(query(params(model, Hooks(), tools=tools(ran))))
    assert ran == []  # the contrast for the test above


async def test_updated_input_is_validated_and_used(offline):
    ran = []
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2")),
                     S.reply("ok")])
    hooks = Hooks().add("pre_tool_use", lambda i: PreToolUseDecision(
        updated_input={"path": "a.txt"} if i.tool_input["path"] == "a" else {"path": 7}))
    await drain(query(params(model, hooks, tools=tools(ran))))
    assert ran == [("Read", "a.txt")]
    results = results_of(requests_of(model)[1])
    assert results[1]["is_error"] and "updatedInput: InputValidationError: path" in results[1]["content"]


async def test_deny_beats_allow_from_another_hook_in_the_loop(offline):
    ran = []
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])
    hooks = (Hooks().add("pre_tool_use", lambda i: PreToolUseDecision(decision="allow"))
             .add("pre_tool_use", CommandHook("echo 'not today' >&2; exit 2"))
             .add("pre_tool_use", lambda i: PreToolUseDecision(decision="ask")))
    events = await drain(query(params(model, hooks, tools=tools(ran))))
    assert ran == []
    assert "not today" in results_of(requests_of(model)[1])[0]["content"]
    assert [r["decision"].get("decision") for r in hook_records(events)] == ["allow", "deny", "ask"]


async def test_a_hook_that_stops_while_tools_run_ends_hook_stopped(offline):
    ran = []
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Write", {"path": "b"}, id="T2")),
                     S.reply("never asked")])
    hooks = Hooks().add("pre_tool_use", lambda i: PreToolUseDecision(continue_=False, stop_reason="freeze"),
                        matcher="Write")
    run = query(params(model, hooks, tools=tools(ran)))
    events = await drain(run)
    assert run.terminal.reason == "hook_stopped"
    assert ran == [("Read", "a")] and len(requests_of(model)) == 1
    tool_results = [e for e in events if e.type == "user"][-1].message["content"]
    assert [r["tool_use_id"] for r in tool_results] == ["T1", "T2"]  # the transcript stays valid
    assert tool_results[1]["content"] == "Not run: freeze"
    notice = [e for e in events if e.type == "system"][-1]
    assert (notice.subtype, notice.content) == ("hook_stopped", "PreToolUse:Write hook stopped the run: freeze")


# ---------------------------------------------------------------------------
# post_tool_use


async def test_f17_post_tool_context_is_in_the_same_request_as_the_result(offline):
    """F17: the context a post_tool_use hook adds for T1 reaches the model with T1's result, not a turn late."""
    model = offline([
        S.reply("edit", S.tool_use("Read", {"path": "a"}, id="T1")),
        S.reply("next", S.tool_use("Read", {"path": "b"}, id="T2")),
        S.reply("done"),
    ])
    hooks = Hooks().add("post_tool_use", CommandHook(
        """grep -q '"tool_use_id":"T1"' && echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", """
        """"additionalContext": "lint: 2 warnings"}}'; exit 0"""))
    await drain(query(params(model, hooks)))
    first, second, third = requests_of(model)
    with_result = second["messages"][-1]["content"]
    assert with_result == [{"type": "tool_result", "tool_use_id": "T1", "content": (  # inside the result, once
        "contents of a\n\n<system-reminder>\nPostToolUse:Read hook additional context: lint: 2 warnings\n"
        "</system-reminder>")}]
    assert "lint" not in json.dumps(third["messages"][-1])  # said once, with T1's result


async def test_post_tool_use_exit_2_feedback_reaches_the_model_with_the_result(offline):
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])
    hooks = Hooks().add("post_tool_use", CommandHook("echo 'a is stale' >&2; exit 2"))
    await drain(query(params(model, hooks)))
    content = requests_of(model)[1]["messages"][-1]["content"]
    assert len(content) == 1 and "is_error" not in content[0]  # the call ran; the feedback is inside its result
    assert content[0]["content"].startswith("contents of a\n\n<system-reminder>\n")
    assert "PostToolUse:Read hook blocking error: [echo 'a is stale' >&2; exit 2]: a is stale" in content[0]["content"]


async def test_post_tool_use_runs_only_for_calls_that_ran(offline):
    seen = []
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Nope", {}, id="T2"),
                             S.tool_use("Write", {"path": "w"}, id="T3"), S.tool_use("Read", {"p": 1}, id="T4")),
                     S.reply("ok")])
    hooks = Hooks().add("post_tool_use", lambda i: seen.append((i.tool_use_id, i.tool_response)))
    await drain(query(params(model, hooks)))
    assert seen == [("T1", "contents of a")]  # not: unknown tool, denied, invalid input


async def test_post_tool_use_stop_ends_after_the_tools_ran(offline):
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("never")])
    hooks = Hooks().add("post_tool_use", lambda i: {"continue": False, "stopReason": "seen enough"})
    run = query(params(model, hooks))
    await drain(run)
    assert run.terminal.reason == "hook_stopped" and len(requests_of(model)) == 1
    assert run.messages[-1].content == "PostToolUse:Read hook stopped the run: seen enough"


async def test_hook_records_sit_on_their_call_in_the_trace(offline):
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])
    hooks = Hooks().add("pre_tool_use", lambda i: None).add("post_tool_use", lambda i: None)
    run = query(params(model, hooks))
    await drain(run)
    first = run.trace.checkpoints[0]
    attachments = [m.attachment for m in run.trace.resolve(first.attachments)]
    assert [(a["hookEvent"], a["toolUseID"]) for a in attachments] == [("PreToolUse", "T1"), ("PostToolUse", "T1")]


# ---------------------------------------------------------------------------
# stop hooks


async def test_a_blocking_stop_hook_sends_feedback_and_keeps_turn_count(offline):
    inputs = []

    def stop(input):
        inputs.append(input.stop_hook_active)
        return StopDecision(decision="block", reason="tests fail") if len(inputs) == 1 else None

    model = offline([S.reply("done?"), S.reply("now done")])
    run = query(params(model, Hooks().add("stop", stop)))
    events = await drain(run)
    assert run.terminal.reason == "completed" and run.terminal.turn_count == 1
    assert inputs == [False, True]
    first, second = run.trace.checkpoints
    assert first.next_transition == dl.Continue(reason="stop_hook_blocking", attempt=1)
    assert (second.turn_count, second.transition.reason, second.stop_hook_active) == (1, "stop_hook_blocking", True)
    assert second.state_messages == first.messages_after
    feedback = requests_of(model)[1]["messages"]
    assert [m["role"] for m in feedback] == ["user", "assistant", "user"]
    assert feedback[-1]["content"] == [{"type": "text", "text": stop_feedback("tests fail")}]
    assert stop_feedback("tests fail").startswith("<system-reminder>\n")  # a reminder block, as Claude Code sends it
    meta = [e for e in events if e.type == "user"][0]
    assert meta.is_meta


async def test_stop_hook_active_is_cleared_by_a_recovery_pass(offline):
    """dreamloop clears stop_hook_active on every continue but next_turn and a stop-hook block (its choice: the
    conversation-loop text names the flag, not when it is cleared): after a block, a response cut at max_tokens
    and resumed reaches the stop hooks with it False."""
    from dreamloop.recovery import RecoveryOptions

    inputs = []

    def stop(input):
        inputs.append(input.stop_hook_active)
        return StopDecision(decision="block", reason="tests fail") if len(inputs) == 1 else None

    model = offline([S.reply("done?"), S.reply("checking", stop_reason="max_tokens"), S.reply(" again: done")])
    run = query(params(model, Hooks().add("stop", stop),
                       recovery=RecoveryOptions(max_output_tokens_escalate=False)))
    await drain(run)
    assert run.terminal.reason == "completed" and len(requests_of(model)) == 3
    assert [c.transition.reason for c in run.trace.checkpoints[1:]] == ["stop_hook_blocking",
                                                                         "max_output_tokens_recovery"]
    assert [c.stop_hook_active for c in run.trace.checkpoints] == [False, True, False]
    assert inputs == [False, False]


@pytest.mark.parametrize("kind", ["python", "command"])
async def test_a_stop_hook_that_prevents_continuation(offline, kind):
    model = offline([S.reply("done")])
    hook = (lambda i: StopDecision(continue_=False, stop_reason="deploy freeze")) if kind == "python" else \
        CommandHook("""echo '{"continue": false, "stopReason": "deploy freeze"}'""")
    run = query(params(model, Hooks().add("stop", hook)))
    await drain(run)
    assert run.terminal.reason == "stop_hook_prevented"
    assert run.messages[-1].subtype == "stop_hook_prevented" and "deploy freeze" in run.messages[-1].content


@pytest.mark.parametrize("limit", [8, 2, 0])
async def test_the_runaway_guard_bounds_the_model_calls(offline, limit):
    model = offline([S.reply(f"answer {i}") for i in range(20)])
    hooks = Hooks(max_stop_hook_blocks=limit).add("stop", CommandHook("echo 'never satisfied' >&2; exit 2"))
    run = query(params(model, hooks))
    await drain(run)
    assert run.terminal.reason == "stop_hook_prevented"
    assert len(requests_of(model)) == limit + 1  # the first answer, then one per block answered
    assert run.messages[-1].subtype == "stop_hook_guard"
    assert f"blocked {limit} times in this run (Hooks.max_stop_hook_blocks={limit})" in run.messages[-1].content


async def test_stop_hook_active_lasts_through_tool_turns_and_the_guard_counts_them(offline):
    model = offline([S.reply("done"), S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("done"),
                     S.reply("never")])
    seen = []

    def stop(input):
        seen.append(input.stop_hook_active)
        return StopDecision(decision="block", reason="again")

    run = query(params(model, Hooks(max_stop_hook_blocks=1).add("stop", stop)))
    await drain(run)
    assert seen == [False, True]
    assert [c.transition.reason if c.transition else None for c in run.trace.checkpoints] == \
        [None, "stop_hook_blocking", "next_turn"]
    assert [c.stop_hook_active for c in run.trace.checkpoints] == [False, True, True]
    assert run.terminal.reason == "stop_hook_prevented" and len(requests_of(model)) == 3


async def test_no_stop_hook_after_an_api_error(offline):
    called = []
    model = offline([S.http_error(500, retry_after_ms=None)] * 5)
    run = query(params(model, Hooks().add("stop", lambda i: called.append(1))))
    await drain(run)
    assert run.terminal.reason == "api_error" and called == []


async def test_an_abort_while_stop_hooks_run_kills_them_and_prevents_continuation(offline, tmp_path):
    model = offline([S.reply("done")])
    hooks = Hooks().add("stop", CommandHook(f"echo $$ > {tmp_path}/pid; sleep 30"))
    run = query(params(model, hooks))

    async def stop_soon():
        while not (tmp_path / "pid").exists():
            await asyncio.sleep(0.02)
        run.abort("stop button")

    stopper = asyncio.create_task(stop_soon())
    await asyncio.wait_for(drain(run), 20)
    await stopper
    assert run.terminal.reason == "stop_hook_prevented"
    assert run.messages[-1].content == "Interrupted while the stop hooks ran."
    # issue 32: the model is told too, once, right after its response (the next request carries it)
    from dreamloop.endings import INTERRUPTED_STOP_HOOKS_NOTE, is_interrupted_note
    notes = [m for m in run.messages if is_interrupted_note(m)]
    assert [n.message["content"] for n in notes] == [INTERRUPTED_STOP_HOOKS_NOTE]
    assert run.messages[-3].type == "assistant" and run.messages[-2] is notes[0]


async def test_a_raising_hook_surfaces_as_hook_error(offline):
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])

    def broken(input):
        raise RuntimeError("my bug")

    with pytest.raises(HookError, match="my bug"):
        await drain(query(params(model, Hooks().add("pre_tool_use", broken))))
    model = offline([S.reply("ok")])
    with pytest.raises(HookError, match="stop hook"):
        await drain(query(params(model, Hooks().add("stop", broken))))


# ---------------------------------------------------------------------------
# user_prompt_submit, in QueryEngine.submit_message


@pytest.mark.parametrize("hook", [
    lambda i: UserPromptSubmitDecision(decision="block", reason="no secrets in prompts"),
    CommandHook("echo 'no secrets in prompts' >&2; exit 2"),
    CommandHook("""echo '{"decision": "block", "reason": "no secrets in prompts"}'"""),
])
async def test_a_blocked_prompt_starts_no_run_and_is_not_added(offline, tmp_path, hook):
    model = offline([S.reply("never")])
    engine = QueryEngine(model=model, transcript=tmp_path / "t.jsonl", hooks=Hooks().add("user_prompt_submit", hook),
                         deps=QueryDeps(uuid=counting_uuids()))
    events = [e async for e in engine.submit_message("my password=hunter2")]
    assert requests_of(model) == [] and engine.last_run is None and engine.terminal is None
    notice = events[-1]
    assert (notice.type, notice.subtype) == ("system", "user_prompt_blocked")
    assert "no secrets in prompts" in notice.content
    assert not any(m.type == "user" for m in engine.messages)
    assert "hunter2" not in (tmp_path / "t.jsonl").read_text()


async def test_prompt_context_goes_with_the_prompt(offline, tmp_path):
    model = offline([S.reply("ok")])
    hooks = (Hooks().add("user_prompt_submit", CommandHook("echo 'Current branch: main'"))
             .add("user_prompt_submit", lambda i: UserPromptSubmitDecision(additional_context=f"len={len(i.prompt)}")))
    transcript = tmp_path / "t.jsonl"
    engine = QueryEngine(model=model, hooks=hooks, transcript=transcript, session_id="s-1")
    events = [e async for e in engine.submit_message("hello")]
    (request,) = requests_of(model)
    content = request["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "hello"}
    assert "Current branch: main" in content[1]["text"] and "len=5" in content[1]["text"]
    assert [r["hookEvent"] for r in hook_records(events, "hook_success")] == ["UserPromptSubmit"] * 2
    assert [m.type for m in load_transcript(transcript)][:4] == ["user", "attachment", "attachment", "attachment"]


async def test_hook_inputs_name_the_session_and_transcript(offline, tmp_path):
    seen = []
    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])
    hooks = Hooks().add("pre_tool_use", lambda i: seen.append(i)).add("stop", lambda i: seen.append(i))
    engine = QueryEngine(model=model, tools=tools(), hooks=hooks, transcript=tmp_path / "t.jsonl",
                         session_id="s-42", workspace=tmp_path, permission_mode="accept-edits")
    [e async for e in engine.submit_message("go")]
    assert [(i.hook_event_name, i.session_id, i.transcript_path, i.cwd, i.permission_mode) for i in seen] == [
        ("PreToolUse", "s-42", str(tmp_path / "t.jsonl"), str(tmp_path), "acceptEdits"),
        ("Stop", "s-42", str(tmp_path / "t.jsonl"), str(tmp_path), "acceptEdits")]
    assert hooks.session_id == "dreamloop-session"  # the engine used a copy


# ---------------------------------------------------------------------------
# The trace keeps stop_hook_active; old traces still load


async def test_trace_round_trip_keeps_stop_hook_active(offline, tmp_path):
    model = offline([S.reply("a"), S.reply("b")])
    stops = iter([StopDecision(decision="block", reason="more"), None])
    run = query(params(model, Hooks().add("stop", lambda i: next(stops))))
    await drain(run)
    path = run.trace.save(tmp_path / "trace.jsonl")
    assert json.loads(path.read_text().splitlines()[0]) == {
        "kind": "trace", "version": TRACE_VERSION,
        "switches": {"results_as_finished": False, "streaming_tool_execution": False, "sibling_rule": False,
                     "context": False, "hooks": True, "recovery": False, "observed_output_limits": False,
                     "fallback_model": False, "token_budget": False, "memory_files": False, "changed_files": False,
                     "file_state": False, "tool_use_summaries": False, "environment": False, "sub_agents": False,
                     "background_tasks": False}}
    loaded = Trace.load(path)
    assert [c.stop_hook_active for c in loaded.checkpoints] == [False, True]
    old = tmp_path / "v1.jsonl"
    lines = path.read_text().splitlines()
    v1 = [json.dumps({"kind": "trace", "version": 1})]
    for line in lines[1:]:
        record = json.loads(line)
        if record["kind"] == "checkpoint":
            record["checkpoint"].pop("stop_hook_active")
        v1.append(json.dumps(record))
    old.write_text("\n".join(v1) + "\n")
    assert [c.stop_hook_active for c in Trace.load(old).checkpoints] == [False, False]


# ---------------------------------------------------------------------------
# dreamloop run --settings FILE


def test_run_with_a_settings_file_runs_its_hooks(capsys, tmp_path):
    from dreamloop.cli import main
    from dreamloop.demo import copy_sample_project

    workspace = copy_sample_project(tmp_path / "sample")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command":
                             "cd \"$CLAUDE_PROJECT_DIR\" && python3 -m unittest discover -s tests -p 'check_*.py' "
                             "2>/dev/null || { echo 'The tests fail.'; echo 'make the failing test pass'; } >&2 "
                             "&& python3 -m unittest discover -s tests -p 'check_*.py' 2>/dev/null || exit 2"}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}))
    status = main(["run", "set retries to 5", "--workspace", str(workspace), "--settings", str(settings),
                   "--permission-mode", "accept-edits", "--json"])
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert status == 0 and result["terminal"]["reason"] == "completed"
    assert {k: result["switches"][k] for k in ("streaming_tool_execution", "hooks")} == \
        {"streaming_tool_execution": True, "hooks": True}
    stops = [m["attachment"]["type"] for m in result["transcript"]
             if m["type"] == "attachment" and m["attachment"].get("hookEvent") == "Stop"]
    assert stops == ["hook_blocking_error", "hook_success"]
    assert "value = 2" in (workspace / "config.py").read_text()  # the stop hook made the agent fix the test
    assert "hook not run:" in captured.err and "SessionStart" in captured.err


def test_run_no_hooks_and_a_blocked_prompt(capsys, tmp_path):
    from dreamloop.cli import main
    from dreamloop.demo import copy_sample_project

    workspace = copy_sample_project(tmp_path / "sample")
    assert main(["run", "set retries to 5", "--workspace", str(workspace), "--no-hooks", "--json"]) == 0
    switches = json.loads(capsys.readouterr().out)["switches"]
    assert switches["streaming_tool_execution"] is True and switches["hooks"] is False
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'no prompts today' >&2; exit 2"}]}]}}))
    assert main(["run", "set retries to 5", "--workspace", str(workspace), "--settings", str(settings)]) == 12
    assert "UserPromptSubmit hook blocked the prompt: no prompts today" in capsys.readouterr().out
    assert "retries = 3" in (workspace / "config.py").read_text()  # nothing ran


def test_run_with_a_broken_settings_file_fails_clearly(capsys, tmp_path):
    from dreamloop.cli import main

    settings = tmp_path / "settings.json"
    settings.write_text("{not json")
    with pytest.raises(SystemExit) as exit:
        main(["run", "hi", "--workspace", str(tmp_path), "--settings", str(settings)])
    assert exit.value.code == 2
    assert "settings.json: not a Claude Code settings file" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# Each decision, from a Python hook and from a command hook's JSON, in the loop


def as_hook(kind: str, said: dict):
    """The same answer as a Python hook (returning the dict) or a command (printing it as JSON)."""
    if kind == "python":
        return lambda input: said
    return CommandHook(f"cat >/dev/null; echo '{json.dumps(said)}'")


PRE = {
    "allow": ({"hookSpecificOutput": {"permissionDecision": "allow"}}, "Write", [("Write", "a")], False),
    "deny": ({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "nope"}},
             "Read", [], True),
    "ask": ({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}},
            "Read", [("Read", "a")], False),
    "updated_input": ({"hookSpecificOutput": {"updatedInput": {"path": "b"}}}, "Read", [("Read", "b")], False),
    "stop": ({"continue": False, "stopReason": "halt"}, "Read", [], True),
}


@pytest.mark.parametrize("kind", ["python", "command"])
@pytest.mark.parametrize("decision", list(PRE))
async def test_each_pre_tool_use_decision(offline, kind, decision):
    said, tool_name, expected_ran, is_error = PRE[decision]
    ran, asked = [], []

    async def ask(tool, input, reason):
        asked.append(reason)
        return Allow()

    model = offline([S.reply("x", S.tool_use(tool_name, {"path": "a"}, id="T1")), S.reply("ok")])
    run = query(params(model, Hooks().add("pre_tool_use", as_hook(kind, said)), tools=tools(ran),
                       ask=ask if decision == "ask" else None))
    await drain(run)
    assert ran == expected_ran
    assert asked == (["sure?"] if decision == "ask" else [])
    if decision == "stop":
        assert run.terminal.reason == "hook_stopped" and len(requests_of(model)) == 1
    else:
        (result,) = results_of(requests_of(model)[1])
        assert bool(result.get("is_error")) is is_error
        assert result["content"] == ("nope" if decision == "deny" else f"contents of {expected_ran[0][1]}"
                                     if tool_name == "Read" else "wrote a")


POST = {
    "context": ({"hookSpecificOutput": {"additionalContext": "lint: ok"}}, "PostToolUse:Read hook additional "
                                                                            "context: lint: ok"),
    "block": ({"decision": "block", "reason": "stale"}, "PostToolUse:Read hook blocking error: stale"),
    "stop": ({"continue": False, "stopReason": "halt"}, None),
}


@pytest.mark.parametrize("kind", ["python", "command"])
@pytest.mark.parametrize("decision", list(POST))
async def test_each_post_tool_use_decision(offline, kind, decision):
    said, line = POST[decision]
    model = offline([S.reply("x", S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")])
    run = query(params(model, Hooks().add("post_tool_use", as_hook(kind, said))))
    await drain(run)
    if line is None:
        assert run.terminal.reason == "hook_stopped" and len(requests_of(model)) == 1
        return
    content = requests_of(model)[1]["messages"][-1]["content"]
    assert content == [{"type": "tool_result", "tool_use_id": "T1",  # the hook's words inside the result
                        "content": f"contents of a\n\n<system-reminder>\n{line}\n</system-reminder>"}]


def block_once(kind: str, said: dict):
    """A stop hook that answers ``said`` while stop_hook_active is false, then has no opinion."""
    if kind == "python":
        return lambda input: None if input.stop_hook_active else said
    return CommandHook(f"""grep -q '"stop_hook_active":false' && echo '{json.dumps(said)}'; exit 0""")


@pytest.mark.parametrize("kind", ["python", "command"])
@pytest.mark.parametrize("said, reason, calls", [
    ({"decision": "block", "reason": "tests fail"}, "completed", 2),
    ({"continue": False, "stopReason": "freeze"}, "stop_hook_prevented", 1),
    ({}, "completed", 1),
])
async def test_each_stop_decision(offline, kind, said, reason, calls):
    model = offline([S.reply("a"), S.reply("b")])
    run = query(params(model, Hooks().add("stop", block_once(kind, said))))
    await drain(run)
    assert run.terminal.reason == reason and len(requests_of(model)) == calls
    if calls == 2:
        assert requests_of(model)[1]["messages"][-1]["content"][0]["text"] == stop_feedback("tests fail")


@pytest.mark.parametrize("hook", [
    lambda i: {"continue": False, "stopReason": "no runs now"},
    CommandHook("""echo '{"continue": false, "stopReason": "no runs now"}'"""),
])
async def test_a_prompt_hook_that_stops_erases_the_prompt(offline, hook):
    model = offline([S.reply("never")])
    engine = QueryEngine(model=model, hooks=Hooks().add("user_prompt_submit", hook))
    events = [e async for e in engine.submit_message("hi")]
    assert requests_of(model) == [] and events[-1].content.endswith("no runs now")


def test_the_blocked_prompt_exit_code_is_documented(capsys):
    import re
    from pathlib import Path

    from dreamloop.cli import EXIT_CODES, EXIT_PROMPT_BLOCKED, main

    assert EXIT_PROMPT_BLOCKED not in EXIT_CODES.values() and 2 < EXIT_PROMPT_BLOCKED < 126
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert re.search(rf"^\s*{EXIT_PROMPT_BLOCKED}\s+a UserPromptSubmit hook blocked", capsys.readouterr().out, re.M)
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert f"| {EXIT_PROMPT_BLOCKED} | a `UserPromptSubmit` hook blocked the prompt" in readme


# ---------------------------------------------------------------------------
# Issue 24 item 5: a Python hook that raises leaves a valid history and a Terminal


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("event", ["pre_tool_use", "post_tool_use"])
async def test_a_raising_hook_leaves_a_valid_history_and_the_session_goes_on(offline, tmp_path, caplog, event, streaming):
    import gc

    def broken(input):
        raise RuntimeError("my bug")

    model = offline([S.reply("r", S.tool_use("Read", {"path": "a"}, id="T1"), S.tool_use("Read", {"path": "b"}, id="T2")),
                     S.reply("next prompt answered")])
    hooks = Hooks().add(event, broken)
    engine = QueryEngine(model=model, tools=tools(), hooks=hooks, transcript=tmp_path / "t.jsonl",
                         streaming_tool_execution=streaming, deps=QueryDeps(uuid=counting_uuids()))
    with pytest.raises(HookError, match="my bug"):
        async for _ in engine.submit_message("go"):
            pass
    run = engine.last_run
    assert run.terminal.reason == "hook_stopped" and "my bug" in run.terminal.error
    answered = [b["tool_use_id"] for b in engine.messages[-2].message["content"]]
    assert answered == ["T1", "T2"] and engine.messages[-1].subtype == "hook_error"
    assert [m.uuid for m in load_transcript(tmp_path / "t.jsonl")] == [m.uuid for m in engine.messages]
    hooks.entries.clear()  # the author fixed the hook: the same engine's next prompt is accepted
    async for _ in engine.submit_message("again"):
        pass
    assert engine.terminal.reason == "completed"  # and the offline fixture saw no rejected request
    gc.collect()
    assert "exception was never retrieved" not in caplog.text


async def test_a_raising_stop_hook_ends_the_run_in_a_terminal(offline):
    def broken(input):
        raise RuntimeError("my bug")

    run = query(params(offline([S.reply("ok")]), Hooks().add("stop", broken)))
    with pytest.raises(HookError):
        await drain(run)
    assert run.terminal.reason == "hook_stopped" and run.messages[-1].subtype == "hook_error"


# ---------------------------------------------------------------------------
# Nothing outlives a run (issue 32, item 3)


def _in_a_thread(main, timeout: float = 30.0):
    """``asyncio.run(main())`` in a thread of its own: its result, or AssertionError if it never returned."""
    import threading

    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(result=asyncio.run(main())), daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"asyncio.run did not return within {timeout:g} s"
    return box["result"]


@pytest.mark.parametrize("event", ["pre_tool_use", "post_tool_use"])
def test_a_python_hook_that_raises_beside_a_command_hook_leaves_nothing_running(event):
    """The property test's instance: a Python hook raised while a command hook for the same call was being started.
    The run ended hook_stopped, but the command hook's run, its shielded process start and the pipe connection were
    left; cancelled by asyncio.run's shutdown, the start never finished, so asyncio.run never returned."""
    def boom(input):
        raise RuntimeError("a bug in the hook")

    async def main():
        hooks = Hooks().add(event, "sleep 0.2; true").add(event, boom)
        ran: list = []
        run = query(params(dl.offline([S.reply(S.tool_use("Read", {"path": "a"}, id="T1")), S.reply("ok")]), hooks,
                           tools=tools(ran)))
        with pytest.raises(HookError):
            await drain(run)
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        return run.terminal.reason, left

    reason, left = _in_a_thread(main)
    assert reason == "hook_stopped" and left == []
