"""Chapter 12: the loop inside the loop (sub-agents, background commands): the exercise checks.

Both checks run the loop themselves on the offline API, on scripts the chapter does not show, and hand the
learner's function the request bodies the offline server received (``model.api.requests``), in the order it
received them. The answer key reads the same bodies: who sent a request is how its conversation begins (a
sub-agent's first user message is its prompt), and a task's notification is the first request whose user
messages carry its ``Background task <id> `` text (the loop tells the model in a user message; the model's own
words may name the task too, and are not a notification). A check never prints the answer: it names the run and
the request that is wrong and in which direction.
"""

from __future__ import annotations

from typing import Any

from .. import scripts as S
from ..deps import QueryDeps, counting_uuids
from ..language import N_, tr
from ._checking import _call, _Fail, _require_callable, _run, _short, _verdict

__all__ = ["check_notified_at", "check_whose", "first_text", "notified_at", "whose"]

PARENT = "parent"
"""What ``whose`` says of a request the parent (the main loop) sent."""


# ---------------------------------------------------------------------------
# The answer key


def first_text(body: dict[str, Any]) -> str:
    """The text of a request's first message: the string, or its last text block (a context reminder may come
    first)."""
    messages = body.get("messages") or []
    if not messages:
        return ""
    content = messages[0].get("content")
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    return texts[-1] if texts else ""


def whose(requests: list[dict[str, Any]], prompts: list[str]) -> list[str]:
    """For each request body, the prompt of the sub-agent that sent it, or ``"parent"``: a child's conversation
    begins with its prompt, the parent's with the person's."""
    return [next((p for p in prompts if first_text(body) == p), PARENT) for body in requests]


def _texts(body: dict[str, Any], role: str | None = None) -> list[str]:
    """Every text of a request's messages (only ``role``'s, if given): strings, text blocks, and the texts inside
    tool_results."""
    out: list[str] = []
    for message in body.get("messages") or []:
        if role is not None and message.get("role") != role:
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    out.append(inner)
                else:
                    out.extend(b.get("text", "") for b in inner or [] if isinstance(b, dict))
    return out


def notified_at(requests: list[dict[str, Any]], task_id: str) -> int | None:
    """The number (from 1) of the first request that carries ``task_id``'s notification in a user message, or
    None."""
    mark = f"Background task {task_id} "
    return next((n for n, body in enumerate(requests, start=1) if any(mark in t for t in _texts(body, "user"))),
                None)


# ---------------------------------------------------------------------------
# The runs the checks hand the learner


def _bodies(model: Any) -> list[dict[str, Any]]:
    return [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]


def _agent(prompt: str, id: str) -> dict[str, Any]:
    return S.tool_use("Agent", {"description": "a task", "prompt": prompt}, id=id)


_SUB_AGENT_RUNS = (
    (N_("the run with one sub-agent"), "How many notes are there?", ["Count the notes in this folder."],
     lambda p: S.by_prompt([S.reply(_agent(p[0], "toolu_a1")), S.reply("There are two.")],
                           {p[0]: [S.reply(S.tool_use("Glob", {"pattern": "*.md"}, id="toolu_g1")),
                                   S.reply("Two notes.")]})),
    (N_("the run with two sub-agents"), "Survey the folder.", ["List the notes.", "Say what the config holds."],
     lambda p: S.by_prompt([S.reply(_agent(p[0], "toolu_a1"), _agent(p[1], "toolu_a2")),
                            S.reply(S.tool_use("Glob", {"pattern": "*"}, id="toolu_g9")), S.reply("Surveyed.")],
                           {p[0]: [S.reply(S.tool_use("Glob", {"pattern": "*.md"}, id="toolu_g1")),
                                   S.reply("a.md and b.md.")],
                            p[1]: [S.reply("value = 1.")]})),
)


async def _sub_agent_run(prompt: str, script: Any) -> list[dict[str, Any]]:
    import dreamloop as dl
    from ..scratch import scratch_dir
    from ..tools import builtin_tools

    desk = scratch_dir("ch12-check-")
    for name, text in {"a.md": "first\n", "b.md": "second\n", "config.py": "value = 1\n"}.items():
        (desk / name).write_text(text, encoding="utf-8")
    model = dl.offline(script)
    run = dl.query(dl.QueryParams(messages=prompt, model=model, tools=builtin_tools(), sub_agents=True,
                                  workspace=desk, permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids())))
    async for _ in run:
        pass
    return _bodies(model)


def _bash(command: str, id: str, background: bool = True) -> dict[str, Any]:
    fields: dict[str, Any] = {"command": command}
    if background:
        fields["run_in_background"] = True
    return S.tool_use("Bash", fields, id=id)


_BACKGROUND_RUNS = (
    (N_("the run where the command ends during another call"), "bash_1",
     [S.reply(_bash("sleep 0.5; echo built", "toolu_b1")), S.reply(_bash("echo a", "toolu_b2", background=False)),
      S.reply(_bash("sleep 1", "toolu_b3", background=False)),
      S.reply(_bash("echo more", "toolu_b4", background=False)), S.reply("Done.")]),
    (N_("the run where the model waits for the command"), "bash_1",
     [S.reply(_bash("sleep 0.2; echo built", "toolu_b1")), S.reply("It runs."),
      S.reply(_bash("echo check", "toolu_b2", background=False)), S.reply("It finished.")]),
    (N_("the run with two commands"), "bash_2",
     [S.reply(_bash("echo first", "toolu_b1"), _bash("sleep 0.3; echo second", "toolu_b2")),
      S.reply(_bash("sleep 0.8", "toolu_b3", background=False)), S.reply(_bash("echo more", "toolu_b4",
                                                                                 background=False)),
      S.reply("Both ended.")]),
    (N_("the run where the model names the task before it ends"), "bash_1",
     [S.reply(_bash("sleep 1.5; echo built", "toolu_b1")),
      S.reply("Background task bash_1 is building; meanwhile a quick look.",
              _bash("echo a", "toolu_b2", background=False)),
      S.reply(_bash("sleep 2.5", "toolu_b3", background=False)), S.reply("Built.")]),
    (N_("the run with one command, asked about a task it never started"), "bash_7",
     [S.reply(_bash("echo only", "toolu_b1")), S.reply(_bash("sleep 0.4", "toolu_b2", background=False)),
      S.reply("Done.")]),
)


async def _background_run(script: Any) -> list[dict[str, Any]]:
    import dreamloop as dl
    from ..scratch import scratch_dir
    from ..tools import BashTool

    model = dl.offline(script)
    run = dl.query(dl.QueryParams(messages="Build it in the background.", model=model, tools=[BashTool()],
                                  background_tasks=True, workspace=scratch_dir("ch12-check-"),
                                  permission_mode="bypass", deps=QueryDeps(uuid=counting_uuids())))
    async for _ in run:
        pass
    return _bodies(model)


# ---------------------------------------------------------------------------
# Exercise 1: whose request is it?


def check_whose(fn: Any) -> bool:
    """Check ``fn(requests, prompts) -> list``: for each request body the offline server received, in order,
    ``"parent"`` or the prompt of the sub-agent that sent it (``prompts``: the ``Agent`` calls' prompts), on two
    runs the chapter does not show (one sub-agent; two in one response)."""
    hint = tr("a request resends its whole conversation; a sub-agent's conversation is its own, and what tells "
              "one conversation from another is how it begins.")
    todo = tr("return one entry per request: 'parent', or the prompt of the sub-agent that sent it")

    def body() -> str:
        _require_callable(fn, "whose")
        count = 0
        for label, prompt, prompts, script in _SUB_AGENT_RUNS:
            requests = _run(lambda: _sub_agent_run(prompt, script(prompts)))
            want = whose(requests, prompts)
            got = _run(lambda: _call("whose(requests, prompts)", fn, requests, list(prompts), hint=hint,
                                     todo=todo))
            if not isinstance(got, (list, tuple)) or not all(isinstance(g, str) for g in got):
                raise _Fail(tr("on {run} it returned {got}; expected a list of strings.", run=tr(label),
                               got=_short(repr(got), 80)), hint)
            if len(got) != len(want):
                raise _Fail(tr("on {run} you gave {count} entries; the server received {requests} requests.",
                               run=tr(label), count=len(got), requests=len(want)),
                            tr("one entry per request, the parent's and the sub-agents' alike."))
            for number, (said, sender) in enumerate(zip(got, want), start=1):
                if said != sender:
                    raise _Fail(tr("on {run}, request {number} was not sent by {said!r}.", run=tr(label),
                                   number=number, said=_short(said, 60)), _whose_hint(said, sender, requests[number - 1]))
            count += len(want)
        return tr("{count} requests of two runs, each given to the loop that sent it.", count=count)

    return _verdict(tr("whose request"), body)


def _whose_hint(said: str, sender: str, request: dict[str, Any]) -> str:
    if sender == PARENT and said != PARENT:
        return tr("the parent's request after an Agent call carries that call's input, its prompt included, and "
                  "the sub-agent's answer: a prompt somewhere in a request does not make it the sub-agent's. Look "
                  "at how the conversation begins.")
    if said == PARENT:
        return tr("a sub-agent's later requests end with its own tool_result, not with its prompt; what every "
                  "request of one conversation shares is its first message.")
    return tr("sub-agents started in one response run side by side: their requests interleave, so their order "
              "says nothing about whose they are. Match each request to the prompt its conversation begins with.")


# ---------------------------------------------------------------------------
# Exercise 2: which request carries the notification?


def check_notified_at(fn: Any) -> bool:
    """Check ``fn(requests, task_id) -> int | None``: the number (from 1) of the first request that carries the
    notification of the background task ``task_id``, or None if none does, on five runs the chapter does not
    show."""
    hint = tr("a background call's own result names its task id at once, when the command starts; the "
              "notification comes later, once, as a text that says the task ended (inside the last tool_result "
              "when the task ended while tools ran, else a reminder of its own), and every later request resends it.")
    todo = tr("return the number of the first request that carries the task's notification, or None")

    def body() -> str:
        _require_callable(fn, "notified_at")
        for label, task_id, script in _BACKGROUND_RUNS:
            requests = _run(lambda: _background_run(script))
            want = notified_at(requests, task_id)
            got = _run(lambda: _call("notified_at(requests, task_id)", fn, requests, task_id, hint=hint, todo=todo))
            if got is not None and (isinstance(got, bool) or not isinstance(got, int)):
                raise _Fail(tr("on {run} it returned {got}; expected a request number (an int) or None.",
                               run=tr(label), got=_short(repr(got), 80)), hint)
            if got == want:
                continue
            if want is None:
                raise _Fail(tr("on {run}, for {task}: no request carries that task's notification, but you said "
                               "{got}.", run=tr(label), task=task_id, got=got),
                            tr("a task the run never started has no notification: say None."))
            if got is None:
                raise _Fail(tr("on {run}, for {task}: you found no request carrying its notification.",
                               run=tr(label), task=task_id),
                            tr("the notification is a text in the messages a request sends (look at every text, "
                               "a text block's and the text inside each tool_result), and requests count from 1."))
            if got < want:
                raise _Fail(tr("on {run}, for {task}: request {got} is too early.", run=tr(label), task=task_id,
                               got=got), _early_hint(requests, task_id, got))
            raise _Fail(tr("on {run}, for {task}: request {got} is too late.", run=tr(label), task=task_id,
                           got=got),
                        tr("once delivered, a notification stays in the conversation, so every later request "
                           "carries it again: the task was told of in the first of them."))
        return tr("{count} runs: each notification found in the request that first told the model.",
                  count=len(_BACKGROUND_RUNS))

    return _verdict(tr("notified at"), body)


def _early_hint(requests: list[dict[str, Any]], task_id: str, got: int) -> str:
    mark = f"Background task {task_id} "
    said = requests[got - 1] if 1 <= got <= len(requests) else {}
    if any(mark in t for t in _texts(said, "assistant")) and not any(mark in t for t in _texts(said, "user")):
        return tr("in that request the words are the model's own (an assistant message names the task); the "
                  "notification is what the loop tells the model, in a user message: inside a tool_result or a "
                  "reminder of its own.")
    named = next((n for n, body in enumerate(requests, start=1) if any(task_id in t for t in _texts(body))), None)
    if got == named:
        return tr("that request names the task id, but in the Bash call's own result, sent when the command "
                  "started; the notification is the text that says the task ended.")
    return tr("requests count from 1, as the chapter counts them: the first request is number 1.")
