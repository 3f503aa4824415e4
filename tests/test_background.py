"""Background commands and task notifications (issue 34, item 3): Bash's ``run_in_background``, TaskOutput and
TaskStop, one notification per ended command at phase 5, and no background process outliving its run."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tasks import TAIL_CHARS, BackgroundTasks, TaskNotification
from dreamloop.tools import BashTool
from dreamloop.tools.background import TaskOutputTool, TaskStopTool


def requests_of(model):
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def texts(request) -> str:
    out = []
    for message in request["messages"]:
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


def params(model, tmp_path, **extra):
    return QueryParams(messages="go", model=model, tools=[BashTool(), TaskOutputTool(), TaskStopTool()],
                       workspace=tmp_path, permission_mode="bypass", background_tasks=True, **extra)


def bash(command, id, background=True):
    return S.tool_use("Bash", {"command": command, "run_in_background": background}, id=id)


def notifications(run):
    return [m.attachment for m in run.messages if getattr(m, "type", None) == "attachment"
            and m.attachment.get("type") == "task_notification"]


async def drain(run):
    return [event async for event in run]


async def test_a_command_that_ends_while_the_model_waits_is_notified_once_then_the_run_completes(offline, tmp_path):
    model = offline([S.reply(bash("echo started; sleep 0.3; echo finished", "T1")), S.reply("It runs."),
                     S.reply("It finished.")])
    run = query(params(model, tmp_path))
    await drain(run)
    sent = requests_of(model)
    assert run.terminal.reason == "completed" and len(sent) == 3
    assert "bash_1" in texts(sent[1]) and "finished" not in texts(sent[1])  # the call returned at once
    assert [n["task_id"] for n in notifications(run)] == ["bash_1"]
    assert notifications(run)[0]["status"] == "completed" and notifications(run)[0]["exit_code"] == 0
    assert "finished" in texts(sent[2]) and texts(sent[2]).count("Background task bash_1") == 1


async def test_a_command_that_ends_before_the_next_request_is_notified_at_phase_5(offline, tmp_path):
    model = offline([S.reply(bash("exit 3", "T1")), S.reply(S.tool_use("Bash", {"command": "sleep 0.3"}, id="T2")),
                     S.reply("done")])
    run = query(params(model, tmp_path))
    await drain(run)
    sent = requests_of(model)
    assert run.terminal.reason == "completed" and len(sent) == 3
    assert texts(sent[2]).count("Background task bash_1") == 1 and "failed, exit code 3" in texts(sent[2])
    assert len(notifications(run)) == 1


async def test_task_output_reads_a_running_command_and_an_unknown_id_is_an_error(offline, tmp_path):
    model = offline([S.reply(bash("echo first; sleep 5", "T1")),
                     S.reply(S.tool_use("Bash", {"command": "sleep 0.3"}, id="T2")),
                     S.reply(S.tool_use("TaskOutput", {"task_id": "bash_1"}, id="T3"),
                             S.tool_use("TaskOutput", {"task_id": "bash_9"}, id="T4")),
                     S.reply(S.tool_use("TaskStop", {"task_id": "bash_1"}, id="T5")),
                     S.reply("stopped it")])
    run = query(params(model, tmp_path))
    await drain(run)
    results = {b["tool_use_id"]: b for m in requests_of(model)[4]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"}
    assert "running" in str(results["T3"]["content"]) and "first" in str(results["T3"]["content"])
    assert results["T4"].get("is_error") is True and "bash_9" in str(results["T4"]["content"])
    assert "stopped" in str(results["T5"]["content"])
    assert [n["status"] for n in notifications(run)] == ["stopped"]
    assert run.terminal.reason == "completed"


async def test_off_a_background_call_is_an_error_and_starts_nothing(offline, tmp_path):
    model = offline([S.reply(bash("touch made", "T1")), S.reply("ok")])
    run = query(params(model, tmp_path).model_copy(update={"background_tasks": False}))
    await drain(run)
    await asyncio.sleep(0.2)
    assert not (tmp_path / "made").exists() and "off" in texts(requests_of(model)[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_stop_while_a_background_command_runs_leaves_no_process(offline, tmp_path):
    """A Stop while the model waits on a background command: the run ends at once, the command's group killed;
    asyncio.run returns with no task left."""
    pidfile = tmp_path / "pid"

    async def main():
        model = offline([S.reply(bash(f"echo $$ > {pidfile}; sleep 30", "T1")), S.reply("waiting")])
        p = params(model, tmp_path)
        run = query(p)
        asyncio.get_running_loop().call_later(0.5, p.abort.abort)
        await drain(run)
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        return run.terminal.reason, left

    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(out=asyncio.run(main())), daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive()
    reason, left = box["out"]
    assert reason == "aborted_tools" and left == []
    assert not _alive(int(pidfile.read_text()))


async def test_output_is_bounded_however_much_a_command_writes(tmp_path):
    tasks = BackgroundTasks(limit=1000)
    task_id = await tasks.start_command("yes 0123456789 | head -c 5000000", cwd=tmp_path, env=dict(os.environ))
    await tasks.wait_for_notification(30)
    [note] = tasks.take_notifications()
    status, output = tasks.output(task_id)
    assert note.status == "completed" and len(note.tail) <= TAIL_CHARS and len(output) < 1100
    assert "earlier characters not shown" in output
    assert sum(len(p) for p in tasks._commands[task_id].process.stdout.parts) <= 2000
    await tasks.close()


def test_a_notification_is_posted_once_per_task():
    tasks = BackgroundTasks()
    note = TaskNotification("agent_1", "agent", "completed", "a sub-agent's task", tail="its answer")
    tasks.post(note)
    tasks.post(note)
    assert tasks.take_notifications() == [note]
    tasks.post(note)
    assert tasks.take_notifications() == [] and not tasks.pending()


async def test_where_a_notification_goes_follows_claude_code(offline, tmp_path):
    """A command that ended while tools ran: inside the next request's last tool_result, naming the call's description
    (Claude Code 2.1.332 in background_command_ends_before_next_request); one that ends after the model answered: a
    reminder of its own (background_command_ends_later). The attachment stays an attachment in the history."""
    quick = S.tool_use("Bash", {"command": "echo hi", "description": "a quick job", "run_in_background": True}, id="T1")
    model = offline([S.reply(quick), S.reply(S.tool_use("Bash", {"command": "sleep 0.5"}, id="T2")),
                     S.reply(bash("sleep 0.3", "T3")), S.reply("waiting"), S.reply("done")])
    run = query(params(model, tmp_path))
    await drain(run)
    sent = requests_of(model)
    assert len(sent) == 5 and len(notifications(run)) == 2
    last = sent[2]["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result"]  # no text block beside the result
    (result,) = last["content"]
    inner = result["content"] if isinstance(result["content"], str) else " ".join(b["text"] for b in result["content"])
    assert result["tool_use_id"] == "T2" and "Background task bash_1 (command: a quick job) completed" in inner
    own = sent[4]["messages"][-1]
    assert own["role"] == "user" and "Background task bash_2 (command: sleep 0.3)" in own["content"][-1]["text"]
    assert all("tool_result" != b["type"] for b in own["content"])
