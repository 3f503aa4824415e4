"""AskPrompt answering real permission questions: buttons clicked while the loop waits, auto mode, timeout."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from pydantic import BaseModel

from dreamloop import scripts as S
from dreamloop.query import QueryParams, query
from dreamloop.tools import tool
from dreamloop.widgets import AUTO_ANSWER_ENV, AskPrompt, warn_if_old_kernel
from dreamloop.widgets import kernel


class WriteInput(BaseModel):
    path: str
    text: str


def writer(written: list[str]):
    @tool(WriteInput, name="Write")  # not read-only: its own check asks
    async def write(input: WriteInput) -> str:
        """Write a file."""
        written.append(input.path)
        return f"wrote {input.path}"

    return write


async def run_with(prompt, offline):
    written: list[str] = []
    model = offline([S.reply(S.tool_use("Write", {"path": "a.txt", "text": "hi"}, id="T1")), S.reply("ok")])
    run = query(QueryParams(messages="write", model=model, tools=[writer(written)], ask=prompt))
    async for _ in run:
        pass
    result = run.trace.resolve(run.trace.checkpoints[0].tool_results)[0].message["content"][0]
    return run, result, written


def click_when_asked(button):
    """Click ``button`` as soon as it is enabled (a person answering the question)."""
    loop = asyncio.get_running_loop()
    button.observe(lambda change: loop.call_soon(button.click) if not change["new"] else None, names="disabled")


@pytest.fixture(autouse=True)
def no_auto_answer(monkeypatch):
    monkeypatch.delenv(AUTO_ANSWER_ENV, raising=False)


async def test_allow_button_lets_the_call_run(offline):
    prompt = AskPrompt()
    click_when_asked(prompt.allow_button)
    run, result, written = await run_with(prompt, offline)
    assert result == {"type": "tool_result", "tool_use_id": "T1", "content": "wrote a.txt"}
    assert written == ["a.txt"]
    assert prompt.answers == [("Write", "allow")]
    assert "Write" in prompt.question.value and "a.txt" in prompt.question.value
    assert "allowed" in prompt.status.value
    assert prompt.allow_button.disabled and prompt.deny_button.disabled
    assert run.terminal.reason == "completed"


async def test_deny_button_turns_the_call_into_an_error_result(offline):
    prompt = AskPrompt()
    click_when_asked(prompt.deny_button)
    _, result, written = await run_with(prompt, offline)
    assert result["is_error"] is True and "denied" in result["content"]
    assert written == []
    assert prompt.answers == [("Write", "deny")]


@pytest.mark.parametrize("value, expected", [("1", "allow"), ("allow", "allow"), ("deny", "deny")])
async def test_environment_answers_the_prompt(offline, monkeypatch, value, expected):
    monkeypatch.setenv(AUTO_ANSWER_ENV, value)
    prompt = AskPrompt()
    _, result, written = await run_with(prompt, offline)
    assert prompt.answers == [("Write", expected)]
    assert f"auto-answered: {expected}" in prompt.status.value
    assert bool(result.get("is_error")) is (expected == "deny")
    assert written == (["a.txt"] if expected == "allow" else [])


async def test_auto_argument_is_the_scripted_answer_under_the_notebook_targets(offline, monkeypatch):
    prompt = AskPrompt(auto="deny")
    assert prompt.auto_answer is None  # in JupyterLab a person clicks
    monkeypatch.setenv(AUTO_ANSWER_ENV, "1")
    _, result, _ = await run_with(prompt, offline)
    assert prompt.answers == [("Write", "deny")] and result["is_error"] is True
    assert "auto-answered: deny" in prompt.status.value
    with pytest.raises(ValueError):
        AskPrompt(auto="yes")


async def test_silence_times_out_as_deny(offline):
    prompt = AskPrompt(timeout=0.05)
    _, result, written = await run_with(prompt, offline)
    assert result["is_error"] is True and "no answer within 0.05 s" in result["content"]
    assert written == [] and prompt.answers == [("Write", "deny")]


def test_repr_is_stable():
    prompt = AskPrompt()
    assert repr(prompt) == "AskPrompt()" and prompt._repr_mimebundle_()["text/plain"] == "AskPrompt()"


def test_old_kernel_warns_once(monkeypatch):
    monkeypatch.setattr(kernel, "_warned", False)
    assert warn_if_old_kernel() is False  # not in a kernel: nothing to say
    assert warn_if_old_kernel("7.4.0") is False
    with pytest.warns(UserWarning, match="ipykernel 7.3.0 .* Stop and Allow/Deny"):
        assert warn_if_old_kernel("7.3.0") is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_old_kernel("6.31.0") is True  # still old, but said once already
