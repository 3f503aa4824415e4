"""The exercise checks: each passes on the solution, fails (printing a hint) on a wrong answer and on one
that raises, and never raises itself.

The solutions here are the ones in notebooks/solutions/; the checks compare them with the package.
"""

from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

import dreamloop as dl
import dreamloop.exercises as ex
import dreamloop.exercises._checking  # noqa: F401  (the checks' shared settings)
from dreamloop.fake_api import validate_request
from dreamloop.tools import Allow

# ---------------------------------------------------------------------------
# Solutions (kept in step with notebooks/solutions/*.ipynb)

HELLO = [dl.reply("Hello, loop!")]
TOOL_SCRIPT = [
    dl.reply("Let me read it.", dl.tool_use("Read", {"file_path": "config.py"}, id="toolu_1")),
    dl.reply("config.py sets value = 1."),
]


def find_tool_uses(response):
    return [block for block in response.content if block.type == "tool_use"]


async def my_agent_loop(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(
            model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        if not tool_uses:
            return response
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)}
                   for u in tool_uses]
        messages = [*messages, {"role": "assistant", "content": response.content},
                    {"role": "user", "content": results}]


def answer_tool_uses(tool_uses, functions):
    results = []
    for use in tool_uses:
        if use.name not in functions:
            block = {"content": f"Error: No such tool available: {use.name}", "is_error": True}
        else:
            try:
                block = {"content": functions[use.name](**use.input)}
            except Exception as exc:
                block = {"content": f"Error: {type(exc).__name__}: {exc}", "is_error": True}
        results.append({"type": "tool_result", "tool_use_id": use.id, **block})
    return {"role": "user", "content": results}


def close_dangling(tool_uses, results):
    missing = {"content": "Interrupted by user", "is_error": True}
    return {"role": "user", "content": [
        results.get(use.id) or {"type": "tool_result", "tool_use_id": use.id, **missing} for use in tool_uses]}


async def last_answer(run):
    last = None
    async for event in run:
        if event.type == "assistant":
            last = event
    text = "".join(b.text for b in last.message.content if b.type == "text")
    return text, run.terminal.reason


def next_state(state, messages_for_query, assistant_messages, tool_results):
    return dl.State(
        messages=(*messages_for_query, *assistant_messages, *tool_results),
        turn_count=state.turn_count + 1,
        transition=dl.Continue(reason="next_turn"),
    )


def predict(max_turns):
    return max_turns, max_turns


class WordCountInput(BaseModel):
    text: str
    unique: bool = False


@dl.tool(WordCountInput, name="WordCount", read_only=True)
def word_count(input: WordCountInput) -> str:
    """Count the words of a text (distinct words with unique)."""
    words = input.text.split()
    return str(len(set(words)) if input.unique else len(words))


def partition(tool_uses, tools):
    by_name = {t.name: t for t in tools}
    batches, last_safe = [], False
    for use in tool_uses:
        tool = by_name.get(use.name)
        try:
            safe = tool is not None and tool.is_concurrency_safe(tool.input_model.model_validate(use.input))
        except Exception:
            safe = False
        if safe and last_safe:
            batches[-1].append(use.id)
        else:
            batches.append([use.id])
        last_safe = safe
    return batches


async def can_use_tool(tool, input, context):
    command = input.get("command", "")
    if tool.name == "Bash" and command.startswith(("python -m unittest", "python3 -m unittest")) \
            and not set(";|&$`<>") & set(command):
        return Allow()
    return await tool.check_permissions(tool.input_model.model_validate(input), context)


def interrupted(trace):
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
            return point.index, [b["tool_use_id"] for b in blocks if b.get("is_error")]
    return None


def model_calls(records):
    return len({r["message"]["id"] for r in records if r["type"] == "assistant" and not r.get("isSidechain")})


# ---------------------------------------------------------------------------
# Wrong answers: one plausible mistake each, and one that raises


def raises(*args):
    raise NotImplementedError("write your answer here")


async def loop_without_assistant(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        if not tool_uses:
            return response
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)} for u in tool_uses]
        messages = [*messages, {"role": "user", "content": results}]  # forgot the assistant message


async def loop_that_never_stops(model, messages, tools, run_tool):
    while True:
        response = await model.client.messages.create(model=model.model, max_tokens=1024, messages=messages, tools=tools)
        tool_uses = [b for b in response.content if b.type == "tool_use"]
        results = [{"type": "tool_result", "tool_use_id": u.id, "content": run_tool(u.name, u.input)} for u in tool_uses]
        messages = [*messages, {"role": "assistant", "content": response.content},
                    {"role": "user", "content": results or "go on"}]  # never returns


def answer_without_errors(tool_uses, functions):
    return {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": u.id, "content": functions[u.name](**u.input)} for u in tool_uses]}


def close_in_completion_order(tool_uses, results):
    blocks = list(results.values())
    answered = set(results)
    blocks += [{"type": "tool_result", "tool_use_id": u.id, "content": "Interrupted by user", "is_error": True}
               for u in tool_uses if u.id not in answered]
    return {"role": "user", "content": blocks}


async def last_answer_reading_terminal_first(run):
    reason = run.terminal.reason
    return "", reason


async def last_answer_first_message(run):
    first = None
    async for event in run:
        if event.type == "assistant" and first is None:
            first = event
    return "".join(b.text for b in first.message.content if b.type == "text"), run.terminal.reason


def next_state_results_first(state, messages_for_query, assistant_messages, tool_results):
    return dl.State(messages=(*messages_for_query, *tool_results, *assistant_messages),
                    turn_count=state.turn_count + 1, transition=dl.Continue(reason="next_turn"))


def predict_one_short(max_turns):
    return max_turns, max_turns - 1


class WordCountNoDefault(BaseModel):
    text: str
    unique: bool


@dl.tool(WordCountNoDefault, name="WordCount", read_only=True)
def word_count_required_unique(input: WordCountNoDefault) -> str:
    return str(len(input.text.split()))


@dl.tool(WordCountInput, name="WordCount")
def word_count_not_read_only(input: WordCountInput) -> str:
    return str(len(input.text.split()))


def partition_by_name(tool_uses, tools):
    safe_names = {"Read", "Glob", "Grep", "Bash"}
    batches, last_safe = [], False
    for use in tool_uses:
        safe = use.name in safe_names
        if safe and last_safe:
            batches[-1].append(use.id)
        else:
            batches.append([use.id])
        last_safe = safe
    return batches


async def allow_everything(tool, input, context):
    return Allow()


def interrupted_at_first_error(trace):
    for point in trace.checkpoints:
        blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
        errors = [b["tool_use_id"] for b in blocks if b.get("is_error")]
        if errors:
            return point.index, errors
    return None


def interrupted_where_the_marker_is_sent(trace):
    for point in trace.checkpoints:
        texts = [m.message["content"] for m in trace.resolve(point.messages_for_query) if m.type == "user"]
        if any("[Request interrupted" in str(t) for t in texts):
            return point.index, []
    return None


def interrupted_every_call(trace):
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            return point.index, [b.id for m in trace.resolve(point.assistant_messages)
                                 for b in m.message.content if b.type == "tool_use"]
    return None


def interrupted_turn_count(trace):
    for point in trace.checkpoints:
        if point.terminal and point.terminal.reason.startswith("aborted"):
            blocks = [b for m in trace.resolve(point.tool_results) for b in m.message["content"]]
            return point.turn_count, [b["tool_use_id"] for b in blocks if b.get("is_error")]
    return None


def model_calls_by_runs(records):
    count, previous = 0, None
    for record in records:
        if record.get("isSidechain"):
            continue
        if record["type"] == "assistant" and previous != "assistant":
            count += 1
        previous = record["type"]
    return count


# ---------------------------------------------------------------------------
# The table: check, solution, wrong answers (each with a phrase its ❌ must contain)

CASES = [
    (ex.check_hello_script, HELLO, [([dl.reply("Hello!")], "not 'Hello, loop!'"),
                                    (dl.reply("Hello, loop!"), "one Turn"),
                                    ("Hello, loop!", "list of turns")]),
    (ex.check_tool_script, TOOL_SCRIPT, [([dl.reply(dl.tool_use("Read", {"file_path": "conf.py"}, id="toolu_1")),
                                           dl.reply("value is 1")], "expected Read with file_path 'config.py'"),
                                          ([dl.reply("value is 1")], "no tool_use")]),
    (ex.check_find_tool_uses, find_tool_uses, [(lambda r: [b for b in r.content if b.type != "text"], "tool_use ids"),
                                               (lambda r: r.content if r.stop_reason == "tool_use" else [], "tool_use ids"),
                                               (lambda r: [b for b in r.content if b.type == "tool_use"]
                                                if r.stop_reason == "tool_use" else [], "never from stop_reason"),
                                               (raises, "NotImplementedError")]),
    (ex.check_four_steps, my_agent_loop, [(loop_without_assistant, "400"),
                                          (loop_that_never_stops, "more often than the script has turns"),
                                          (raises, "NotImplementedError")]),
    (ex.check_answer_tool_uses, answer_tool_uses, [(answer_without_errors, "KeyError"),
                                                   (raises, "NotImplementedError")]),
    (ex.check_close_dangling, close_dangling, [(close_in_completion_order, "call order"),
                                               (lambda uses, results: {"role": "user", "content": list(results.values())},
                                                "the calls were"),
                                               (raises, "NotImplementedError")]),
    (ex.check_last_answer, last_answer, [(last_answer_reading_terminal_first, "has not ended yet"),
                                         (last_answer_first_message, "the last assistant message says"),
                                         (raises, "NotImplementedError")]),
    (ex.check_next_state, next_state, [(next_state_results_first, "assistant_messages, then tool_results"),
                                       (lambda s, q, a, r: dl.State(messages=(*s.messages, *a, *r),
                                                                    turn_count=s.turn_count + 1,
                                                                    transition=dl.Continue(reason="next_turn")),
                                        "not from state.messages"),
                                       (lambda s, q, a, r: {"messages": q}, "expected a State"),
                                       (raises, "NotImplementedError")]),
    (ex.check_max_turns, predict, [(predict_one_short, "ran 1 tool batch(es)"), (raises, "NotImplementedError")]),
    (ex.check_tool_definition, word_count, [(word_count_required_unique, "required"),
                                            (word_count_not_read_only, "read-only"),
                                            (len, "expected a tool")]),
    (ex.check_partition, partition, [(partition_by_name, "partition_tool_calls gives"),
                                     (raises, "NotImplementedError")]),
    (ex.check_can_use_tool, can_use_tool, [(allow_everything, "expected Ask"), (raises, "NotImplementedError")]),
    (ex.check_interrupted, interrupted, [(interrupted_at_first_error, "an is_error result is not an interrupt"),
                                         (interrupted_where_the_marker_is_sent, "the checkpoint after the interrupt"),
                                         (interrupted_every_call, "did run (git add ran"),
                                         (interrupted_turn_count, "not its turn_count"),
                                         (raises, "NotImplementedError")]),
    (ex.check_model_calls, model_calls, [(lambda records: sum(r["type"] == "assistant" for r in records),
                                          "you counted records"),
                                         (lambda records: len({r["message"]["id"] for r in records
                                                               if r["type"] == "assistant"}), "isSidechain: true"),
                                         (model_calls_by_runs, "tool_result records can sit between the blocks"),
                                         (lambda records: float(model_calls(records)), "expected a number"),
                                         (raises, "NotImplementedError")]),
]


@pytest.mark.parametrize("check, solution", [(c, s) for c, s, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_passes_on_the_solution(check, solution, capsys):
    assert check(solution) is True
    out = capsys.readouterr().out
    assert out.startswith("✅ ") and "❌" not in out


WRONG = [(c, w, phrase) for c, _, wrongs in CASES for w, phrase in wrongs]


@pytest.mark.parametrize("check, wrong, phrase", WRONG,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(WRONG)])
def test_check_fails_with_a_hint(check, wrong, phrase, capsys):
    assert check(wrong) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ ") and "\n   Hint: " in out
    assert phrase in out


@pytest.mark.parametrize("check", [c for c, _, _ in CASES], ids=[c.__name__ for c, _, _ in CASES])
def test_check_never_raises_on_nonsense(check, capsys):
    assert check(None) is False
    assert check(object()) is False
    out = capsys.readouterr().out
    assert out.count("❌ ") == 2


def test_check_setup_passes(capsys):
    assert ex.check_setup() is True
    assert capsys.readouterr().out.startswith("✅ setup")


def test_a_hang_is_reported_not_waited_for(monkeypatch, capsys):
    monkeypatch.setattr(ex._checking, "TIMEOUT_S", 0.3)

    def slow(response):
        time.sleep(3.0)
        return []

    started = time.monotonic()
    assert ex.check_find_tool_uses(slow) is False
    assert time.monotonic() - started < 2.0
    assert "did not finish within 0.3 s" in capsys.readouterr().out


def test_a_learner_exception_inside_a_loop_is_named(capsys):
    async def broken(model, messages, tools, run_tool):
        return 1 / 0

    assert ex.check_four_steps(broken) is False
    out = capsys.readouterr().out
    assert "raised ZeroDivisionError: division by zero" in out


def test_the_dangling_answers_pass_the_offline_api():
    """The reference behind check_close_dangling agrees with the fake API's own pairing rule."""
    uses = [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {}}]
    body = {"model": "m", "max_tokens": 8, "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": uses},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}]}]}
    assert "toolu_2" in validate_request(body).message
    body["messages"][2] = close_dangling([type("U", (), u)() for u in uses], {})
    assert validate_request(body) is None
