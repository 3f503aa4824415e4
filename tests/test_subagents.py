"""The Agent tool (issue 34, item 1, the synchronous form): a nested query() per call, through the same offline API.

Every test runs the loop with ``sub_agents`` on against the scripted API (``scripts.by_prompt`` tells the child's
requests from the parent's by the child's prompt); the ``offline`` fixture asserts no request was rejected.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from dreamloop import scripts as S
from dreamloop.deps import QueryDeps, counting_uuids
from dreamloop.query import QueryParams, query
from dreamloop.subagents import BACKGROUND_NOT_AVAILABLE, AgentTool, SubAgents
from dreamloop.tools import ToolUseContext, builtin_tools

SESSION10 = (Path(__file__).parent / "fixtures" / "claude-code-sessions"
             / "10_dreamloop-compare_prompt_too_long_after_tools_v2.1.332_scrubbed.jsonl")


def agent(prompt="child: count the files", **fields):
    return S.tool_use("Agent", {"description": "count files", "prompt": prompt, **fields})


async def drain(run):
    return [event async for event in run]


def results(run):
    """The tool_result blocks of the parent's history, in order."""
    return [b for m in run.messages if m.type == "user" and not isinstance(m.message["content"], str)
            for b in m.message["content"] if b.get("type") == "tool_result"]


def first_texts(model):
    out = []
    for r in model.api.requests:
        if r.path.endswith("/v1/messages"):
            content = r.body["messages"][0]["content"]
            out.append(content if isinstance(content, str) else content[-1].get("text"))
    return out


def test_the_schema_is_the_recorded_agent_tools():
    """Field names in order, required, no other field, the model's names: as the recorded request's Agent tool."""
    shape = next(json.loads(line) for line in SESSION10.open(encoding="utf-8") if '"api-request-shape"' in line)
    recorded = next(t for t in shape["shape"]["tools"] if t["name"] == "Agent")["input_schema"]
    ours = AgentTool().to_api()
    assert ours["name"] == "Agent"
    schema = ours["input_schema"]
    assert list(schema["properties"]) == list(recorded["properties"])
    assert schema["required"] == recorded["required"] and schema["additionalProperties"] is False
    for name, field in recorded["properties"].items():
        assert schema["properties"][name]["type"] == field["type"], name
        assert schema["properties"][name].get("enum") == field.get("enum"), name
    assert ours["description"] != "" and "[scrubbed" not in ours["description"]


async def test_a_call_runs_a_child_and_answers_with_its_final_answer(offline):
    script = S.by_prompt([S.reply(agent()), S.reply("The child says 3.")],
                         {"child: count the files": [S.reply(S.tool_use("Glob", {"pattern": "*"})),
                                                     S.reply("There are 3 files.")]})
    model = offline(script)
    run = query(QueryParams(messages="how many files?", model=model, tools=builtin_tools(), sub_agents=True,
                            workspace=Path(__file__).parent / "fixtures", permission_mode="bypass",
                            deps=QueryDeps(uuid=counting_uuids())))
    events = await drain(run)
    assert run.terminal.reason == "completed" and run.terminal.turn_count == 2
    [child] = run.children
    assert child.terminal.reason == "completed" and child.terminal.turn_count == 2
    assert results(run) == [{"type": "tool_result", "tool_use_id": results(run)[0]["tool_use_id"],
                             "content": "There are 3 files."}]
    # the requests: parent, child, child, parent; the child's first message is its prompt alone
    assert first_texts(model) == ["how many files?", "child: count the files", "child: count the files",
                                  "how many files?"]
    bodies = [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]
    parent_tools = [t["name"] for t in bodies[0]["tools"]]
    child_tools = [t["name"] for t in bodies[1]["tools"]]
    assert parent_tools[-1] == "Agent" and "Agent" not in child_tools and child_tools == parent_tools[:-1]
    # the parent's trace holds the child's start and end
    marks = [e.data for e in events if e.type == "progress" and "sub_agent" in e.data]
    assert [m["sub_agent"] for m in marks] == ["started", "ended"]
    assert marks[1]["terminal"] == "completed" and marks[0]["subagent_type"] == "general-purpose"
    assert child.trace is not run.trace and len(child.trace.checkpoints) == 2


async def test_explore_gets_the_read_only_tools(offline):
    script = S.by_prompt([S.reply(agent(subagent_type="Explore")), S.reply("ok")],
                         {"child:": [S.reply("looked")]})
    model = offline(script)
    run = query(QueryParams(messages="look", model=model, tools=builtin_tools(), sub_agents=True))
    await drain(run)
    bodies = [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]
    assert [t["name"] for t in bodies[1]["tools"]] == ["Read", "Glob", "Grep"]


@pytest.mark.parametrize("fields, says", [
    ({"prompt": "   "}, "Agent needs a prompt"),
    ({"subagent_type": "Planner"}, "unknown subagent_type 'Planner'; known: Explore, general-purpose"),
    ({"model": "fable"}, "unknown model 'fable' for a sub-agent; known: haiku, opus, sonnet"),
    ({"run_in_background": True}, BACKGROUND_NOT_AVAILABLE),  # background work off in this run
    ({"isolation": "worktree"}, "isolation is not available"),
    ({"effort": "high"}, "effort is not available"),
])
async def test_a_bad_call_is_an_error_result_naming_what_is_wrong_and_starts_no_child(offline, fields, says):
    block = S.tool_use("Agent", {"description": "d", "prompt": "child: x", **fields})
    model = offline([S.reply(block), S.reply("noted")])
    run = query(QueryParams(messages="go", model=model, sub_agents=True))
    await drain(run)
    [result] = results(run)
    assert result["is_error"] is True and says in result["content"]
    assert run.children == [] and run.terminal.reason == "completed"
    assert model.api.consumed == 2  # no child request


async def test_a_call_without_a_prompt_is_an_input_error(offline):
    model = offline([S.reply(S.tool_use("Agent", {"description": "d"})), S.reply("noted")])
    run = query(QueryParams(messages="go", model=model, sub_agents=True))
    await drain(run)
    [result] = results(run)
    assert result["is_error"] is True and "prompt" in result["content"] and run.children == []


async def test_another_model_goes_through_the_same_client(offline):
    script = S.by_prompt([S.reply(agent(model="haiku")), S.reply("ok")], {"child:": [S.reply("fast")]})
    model = offline(script)
    run = query(QueryParams(messages="go", model=model, sub_agents=True))
    await drain(run)
    bodies = [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]
    assert [b["model"] for b in bodies] == [model.model, "claude-haiku-4-5", model.model]


@pytest.mark.parametrize("child_turns, ending", [
    ([S.http_error(401, message="bad key")], "api_error"),
    ([S.reply(S.tool_use("Read", {"file_path": "x"}))] * 3, "max_turns"),
])
async def test_a_failing_child_is_an_error_result_and_the_parent_goes_on(offline, child_turns, ending):
    script = S.by_prompt([S.reply(agent()), S.reply("it failed, sorry")], {"child:": child_turns})
    run = query(QueryParams(messages="go", model=offline(script), tools=builtin_tools(), sub_agents=SubAgents(
        max_turns=2), workspace=Path(__file__).parent))
    await drain(run)
    [child] = run.children
    assert child.terminal.reason == ending
    agent_result = next(r for r in results(run) if "sub-agent" in str(r.get("content")))
    assert agent_result["is_error"] is True and f"ended {ending}" in agent_result["content"]
    if ending == "max_turns":  # the turns it had, not the turn the loop refused (Terminal.turn_count, 3 here)
        assert "it used its 2 turns without a final answer" in agent_result["content"]
        assert "turn 3" not in agent_result["content"]
    assert run.terminal.reason == "completed"


class Broken(Exception):
    pass


class BreakingAgent(AgentTool):
    """An Agent tool whose child's loop raises while it is iterated (a bug inside the nested run)."""

    async def call(self, input, context):
        start = context.sub_agent

        def broken(input, kind, tool_use_id=None):
            child = start(input, kind, tool_use_id)

            async def fail():
                raise Broken("the child's loop broke")
                yield  # pragma: no cover

            child._events = fail()
            return child

        context.sub_agent = broken
        async for item in super().call(input, context):
            yield item


async def test_a_child_that_raises_is_an_error_result_not_a_crashed_parent(offline):
    script = S.by_prompt([S.reply(agent()), S.reply("ok")], {"child:": [S.reply("hi")]})
    run = query(QueryParams(messages="go", model=offline(script), tools=[BreakingAgent()], sub_agents=True))
    await drain(run)
    [result] = results(run)
    assert result["is_error"] is True and "Broken: the child's loop broke" in result["content"]
    assert run.terminal.reason == "completed"


async def test_the_parents_stop_stops_the_child_which_ends_in_a_terminal(offline):
    params_box = {}

    def policy(body, index):
        first = body["messages"][0]["content"]
        first = first if isinstance(first, str) else first[-1].get("text", "")
        if first.startswith("child:"):
            params_box["params"].abort.abort("stop pressed")
            return S.reply("never seen")
        return S.reply(agent())

    params = QueryParams(messages="go", model=offline(policy), sub_agents=True)
    params_box["params"] = params
    run = query(params)
    await asyncio.wait_for(drain(run), 10)
    [child] = run.children
    assert child.terminal.reason == "aborted_streaming"
    assert run.terminal.reason == "aborted_tools"


async def test_two_calls_in_one_response_run_side_by_side(offline):
    started = []

    def policy(body, index):
        first = body["messages"][0]["content"]
        first = first if isinstance(first, str) else first[-1].get("text", "")
        if first.startswith("child"):
            started.append(first)
            return S.reply(f"answer of {first}")
        if len(body["messages"]) == 1:
            return S.reply(agent("child A"), agent("child B"))
        return S.reply("both done")

    run = query(QueryParams(messages="go", model=offline(policy), sub_agents=True))
    await drain(run)
    assert sorted(started) == ["child A", "child B"] and len(run.children) == 2
    assert [r["content"] for r in results(run)] == ["answer of child A", "answer of child B"]
    assert all(child.terminal.reason == "completed" for child in run.children)


def test_the_agent_tool_is_concurrency_safe_and_asks_no_permission():
    from dreamloop.subagents import AgentInput
    call = AgentInput(description="d", prompt="p")
    tool_ = AgentTool()
    assert tool_.is_concurrency_safe(call) and not tool_.is_read_only(call)
    assert type(asyncio.run(tool_.check_permissions(call, ToolUseContext()))).__name__ == "Allow"


def test_off_means_no_agent_tool(offline):
    params = QueryParams(messages="go", model=offline([S.reply("hi")]))
    assert params.switches()["sub_agents"] is False and all(t.name != "Agent" for t in params.tools)
    on = QueryParams(messages="go", model=offline([S.reply("hi")]), sub_agents=True)
    assert on.switches()["sub_agents"]["max_turns"] == 20 and on.tools[-1].name == "Agent"


async def test_an_agent_tool_without_the_switch_says_sub_agents_are_off(offline):
    model = offline([S.reply(agent()), S.reply("ok")])
    run = query(QueryParams(messages="go", model=model, tools=[AgentTool()]))
    await drain(run)
    [result] = results(run)
    assert result["is_error"] is True and "sub-agents are off" in result["content"]


def test_by_prompt_says_which_list_ran_out():
    policy = S.by_prompt([S.reply("a")], {"child": []})
    with pytest.raises(ValueError, match="the child's turns for 'child'"):
        policy({"messages": [{"role": "user", "content": "child task"}]}, 0)


async def test_a_stop_while_two_children_run_side_by_side_ends_both_in_a_terminal(offline):
    box = {}

    def policy(body, index):
        first = body["messages"][0]["content"]
        first = first if isinstance(first, str) else first[-1].get("text", "")
        if first == "child B":
            box["params"].abort.abort("stop pressed")
        if first.startswith("child"):
            return S.reply(f"answer of {first}", tokens_per_second=50)
        return S.reply(agent("child A"), agent("child B"))

    params = QueryParams(messages="go", model=offline(policy), sub_agents=True)
    box["params"] = params
    run = query(params)
    await asyncio.wait_for(drain(run), 10)
    assert len(run.children) == 2 and all(child.done for child in run.children)
    assert run.terminal.reason == "aborted_tools"
    assert {child.terminal.reason for child in run.children} <= {"aborted_streaming", "completed"}


async def test_a_child_past_the_tool_time_limit_ends_in_a_terminal_and_the_call_is_an_error(offline):
    script = S.by_prompt([S.reply(agent()), S.reply("too slow")],
                         {"child:": [S.reply("a slow answer " * 20, tokens_per_second=20)]})
    run = query(QueryParams(messages="go", model=offline(script), sub_agents=True, tool_timeout_s=0.2))
    await asyncio.wait_for(drain(run), 20)
    [child] = run.children
    assert child.done
    [result] = results(run)
    assert result["is_error"] is True and "did not finish within 0.2 s" in result["content"]
    assert run.terminal.reason == "completed"


# -- the background form (run_in_background: true, with background_tasks on) --------------------------------------

def notifications(run):
    return [m.attachment for m in run.messages if getattr(m, "type", None) == "attachment"
            and m.attachment.get("type") == "task_notification"]


def request_texts(body) -> str:
    out = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                out.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else " ".join(b.get("text", "") for b in inner or []))
    return "\n".join(out)


def bodies_of(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


async def test_a_background_call_answers_at_once_and_the_childs_answer_arrives_as_one_notification(offline):
    script = S.by_prompt([S.reply(agent(run_in_background=True)), S.reply("Launched; waiting."),
                          S.reply("The child found 3.")],
                         {"child: count the files": [S.reply("There are 3 files.", tokens_per_second=200)]})
    model = offline(script)
    run = query(QueryParams(messages="how many files?", model=model, sub_agents=True, background_tasks=True,
                            deps=QueryDeps(uuid=counting_uuids())))
    events = await asyncio.wait_for(drain(run), 10)
    assert run.terminal.reason == "completed"
    [child] = run.children
    assert child.terminal.reason == "completed"
    [result] = results(run)
    assert "agent_1" in result["content"] and "launched" in result["content"] and not result.get("is_error")
    assert "3 files" not in result["content"]  # the answer is not the call's result
    [note] = notifications(run)
    assert note["task_id"] == "agent_1" and note["kind"] == "agent" and note["status"] == "completed"
    parent = [b for b in bodies_of(model) if request_texts(b).startswith("how many")]
    assert len(parent) == 3  # the call, the launched result, the notification in a request of its own
    assert "There are 3 files." not in request_texts(parent[1])
    assert request_texts(parent[2]).count("Background task agent_1") == 1
    assert "There are 3 files." in request_texts(parent[2])
    marks = [e.data for e in events if e.type == "progress" and "sub_agent" in e.data]
    assert marks[0]["background"] is True and marks[0]["task_id"] == "agent_1"


async def test_the_run_waits_for_a_background_child_that_outlives_the_parents_answer(offline):
    """The parent answers while the child still streams: the run does not end until the child's notification
    is delivered (the completion wait watches background agents, not only commands)."""
    script = S.by_prompt([S.reply(agent(run_in_background=True)), S.reply("meanwhile"), S.reply("got it")],
                         {"child:": [S.reply("slow answer " * 10, tokens_per_second=60)]})
    model = offline(script)
    run = query(QueryParams(messages="go", model=model, sub_agents=True, background_tasks=True))
    await asyncio.wait_for(drain(run), 20)
    assert run.terminal.reason == "completed" and run.terminal.turn_count == 3
    assert [n["status"] for n in notifications(run)] == ["completed"]
    assert "slow answer" in request_texts(bodies_of(model)[-1])


async def test_a_failing_background_child_is_a_failed_notification_and_the_parent_goes_on(offline):
    script = S.by_prompt([S.reply(agent(run_in_background=True)), S.reply("waiting"), S.reply("it failed")],
                         {"child:": [S.http_error(401, message="bad key")]})
    run = query(QueryParams(messages="go", model=offline(script), sub_agents=True, background_tasks=True))
    await asyncio.wait_for(drain(run), 10)
    [note] = notifications(run)
    assert note["status"] == "failed" and "ended api_error" in note["text"]
    assert run.terminal.reason == "completed" and run.children[0].terminal.reason == "api_error"


async def test_a_stop_while_a_background_child_runs_ends_it_in_a_terminal(offline):
    box = {}

    def policy(body, index):
        first = body["messages"][0]["content"]
        first = first if isinstance(first, str) else first[-1].get("text", "")
        if first.startswith("child:"):
            box["params"].abort.abort("stop pressed")
            return S.reply("never seen", tokens_per_second=20)
        if len(body["messages"]) == 1:
            return S.reply(agent(run_in_background=True))
        return S.reply("waiting for it")

    params = QueryParams(messages="go", model=offline(policy), sub_agents=True, background_tasks=True)
    box["params"] = params
    run = query(params)
    await asyncio.wait_for(drain(run), 10)
    [child] = run.children
    assert child.done and child.terminal.reason.startswith("aborted")
    assert run.terminal.reason.startswith("aborted")
    assert notifications(run) == []  # a Stop delivers nothing more
    assert stop_notes(child) == ["stopped when the parent was stopped (stop pressed)"]


async def test_task_stop_stops_a_background_child_alone(offline):
    from dreamloop.tools.background import TaskOutputTool, TaskStopTool
    script = S.by_prompt([S.reply(agent(run_in_background=True)),
                          S.reply(S.tool_use("TaskOutput", {"task_id": "agent_1"}, id="T2"),
                                  S.tool_use("TaskStop", {"task_id": "agent_1"}, id="T3")),
                          S.reply("stopped it"), S.reply("noted")],
                         {"child:": [S.reply("a very slow answer " * 40, tokens_per_second=20)]})
    model = offline(script)
    run = query(QueryParams(messages="go", model=model, tools=[TaskOutputTool(), TaskStopTool()], sub_agents=True,
                            background_tasks=True))
    await asyncio.wait_for(drain(run), 20)
    assert run.terminal.reason == "completed"
    [child] = run.children
    assert child.terminal.reason == "aborted_streaming"
    contents = [r["content"] for r in results(run)]
    assert "Task agent_1: running" in contents[1] and contents[2] == "agent_1 stopped"
    assert [n["status"] for n in notifications(run)] == ["stopped"]
    assert stop_notes(child) == ["stopped by a TaskStop call"]


@pytest.mark.parametrize("background_field, default, expected", [
    (None, True, "background"),  # as Claude Code 2.1.332 ran it (sub_agent_call)
    (None, False, "waits"),
    (False, True, "waits"),     # the call's own field decides
    (True, False, "background"),
])
async def test_a_call_without_run_in_background_follows_the_default(offline, tmp_path, background_field, default,
                                                                   expected):
    from dreamloop.subagents import SubAgents

    call = {"description": "look", "prompt": "CHILD: look"}
    if background_field is not None:
        call["run_in_background"] = background_field
    model = offline(S.by_prompt([S.reply(S.tool_use("Agent", call, id="A1")), S.reply("ok"), S.reply("ok again")],
                                {"CHILD": [S.reply("seen")]}))
    run = query(QueryParams(messages="go", model=model, workspace=tmp_path, background_tasks=True,
                            sub_agents=SubAgents(background_by_default=default)))
    async for _ in run:
        pass
    result = run.messages[2].message["content"][0]["content"]
    if expected == "background":
        assert "launched in the background" in result and run.terminal.turn_count == 3
    else:
        assert result == "seen" and run.terminal.turn_count == 2


def test_the_observed_loop_offers_agent_in_the_background():
    from dreamloop.presets import observed_fields, texts_fields

    assert observed_fields()["sub_agents"].background_by_default and texts_fields()["sub_agents"] is None


# -- who stopped a child, in its trace; what a child starts ends with it ---------------------------------------


def stop_notes(child):
    return [n for n in child.trace.checkpoints[-1].notes if n.startswith("stopped ")]


async def test_a_background_child_still_running_when_the_parent_ends_says_so_in_its_trace(offline, tmp_path):
    """The parent reaches max_turns while its background child streams: the child is stopped, its trace says the
    parent's run ended (not a Stop), and the saved trace keeps the note."""
    from dreamloop.trace import Trace

    script = S.by_prompt([S.reply(agent(run_in_background=True)), S.reply("never asked")],
                         {"child:": [S.reply("a very slow answer " * 40, tokens_per_second=20)]})
    run = query(QueryParams(messages="go", model=offline(script), sub_agents=True, background_tasks=True,
                            max_turns=1))
    await asyncio.wait_for(drain(run), 20)
    [child] = run.children
    assert run.terminal.reason == "max_turns" and child.terminal.reason.startswith("aborted_")
    assert stop_notes(child) == ["stopped because the parent's run ended"]
    run.trace.save(tmp_path / "t.jsonl")
    [loaded] = Trace.load(tmp_path / "t.jsonl").children.values()
    assert loaded.checkpoints[-1].notes[-1] == "stopped because the parent's run ended"


async def test_a_completed_child_has_no_stop_note(offline):
    run = query(QueryParams(messages="how many?", model=offline(S.by_prompt(
        [S.reply(agent()), S.reply("3")], {"child:": [S.reply("3 files")]})), sub_agents=True))
    await drain(run)
    [child] = run.children
    assert child.terminal.reason == "completed" and stop_notes(child) == []


async def test_a_child_s_background_command_ends_with_the_child(offline, tmp_path):
    """A child starts a background command and then ends (its max_turns): the command's process is gone when the
    child has its Terminal, before the parent goes on; the parent's run has no task of the child's left."""
    pidfile = tmp_path / "pid"
    seen = {}

    def policy(body, index):
        first = body["messages"][0]["content"]
        first = first if isinstance(first, str) else first[-1].get("text", "")
        if first.startswith("child:") and len(body["messages"]) == 1:
            return S.reply(S.tool_use("Bash", {"command": f"echo $$ > {pidfile}; sleep 30",
                                               "run_in_background": True}, id="B1"))
        if first.startswith("child:"):  # a foreground wait, so the background command has started and noted its pid
            return S.reply(S.tool_use("Bash", {"command": f"while [ ! -s {pidfile} ]; do sleep 0.05; done"}, id="B2"))
        if len(body["messages"]) == 1:
            return S.reply(agent())
        seen["alive"] = pidfile.exists() and _alive(int(pidfile.read_text()))  # the parent's next request
        return S.reply("the helper stopped")

    from dreamloop.tools.bash import BashTool
    run = query(QueryParams(messages="go", model=offline(policy), tools=[BashTool()], workspace=tmp_path,
                            permission_mode="bypass", sub_agents=SubAgents(max_turns=2), background_tasks=True))
    await asyncio.wait_for(drain(run), 20)
    [child] = run.children
    assert child.terminal.reason == "max_turns" and run.terminal.reason == "completed"
    assert pidfile.exists() and seen == {"alive": False}


def _alive(pid: int) -> bool:
    import os
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_stop_at_the_calls_start_leaves_no_child_without_its_terminal(offline):
    """The soak's instance (10,000 sessions, 6 found): the parent's Stop lands on the Agent call's "started" progress,
    before the child's first step; the call is closed there, and the child, never iterated, had no Terminal. Now the
    call's end closes it (``QueryRun.aclose``): a child never run ends ``aborted_streaming`` at turn 1, no request."""
    model = offline(S.by_prompt([S.reply(agent()), S.reply("never")], {"child:": [S.reply("never either")]}))
    run = query(QueryParams(messages="go", model=model, tools=builtin_tools(), sub_agents=True,
                            workspace=Path(__file__).parent))
    async for event in run:
        if event.type == "progress" and event.data.get("sub_agent") == "started":
            run.abort()
    [child] = run.children
    assert run.terminal.reason == "aborted_tools"
    assert child.done and child.terminal.reason == "aborted_streaming"
    assert [r for r in model.api.requests if r.path.endswith("/v1/messages")][1:] == []  # the child sent none


async def test_a_run_closed_by_its_caller_has_its_terminal(offline):
    """Siblings: a run its caller closes (``aclose``) mid-stream, or before it ever started, still ends in a
    Terminal, as a cancelled task's does."""
    started = query(QueryParams(messages="go", model=offline([S.reply("a long answer")])))
    await started.__anext__()
    await started.aclose()
    never = query(QueryParams(messages="go", model=offline([S.reply("hi")])))
    await never.aclose()
    assert started.done and started.terminal.reason.startswith("aborted_")
    assert never.done and (never.terminal.reason, never.terminal.turn_count) == ("aborted_streaming", 1)
