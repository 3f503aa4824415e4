"""The offline demo policy, driven by a small in-test loop on real workspaces.

The harness below plays the loop and the tools with plain local versions of
Read/Edit/Grep/Glob/Bash (their result formats follow the built-in tools'), so
these tests need no network and no other module of the package than the
policy. Every request body goes through JSON, shaped like the real API's.
End-to-end runs through the real loop and tools live elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from dreamloop.demo import (
    MAX_TOOL_CALLS,
    FixFailingTest,
    SetValue,
    copy_sample_project,
    demo_policy,
    parse_task,
    sample_project_path,
)
from dreamloop.demo import policy as policy_module

WORKSPACES = Path(__file__).parent / "fixtures" / "workspaces"
TEST_COMMAND = 'python -m unittest discover -s tests -p "check_*.py"'
TOOL_NAMES = ("Read", "Edit", "Write", "Glob", "Grep", "Bash")


# ---------------------------------------------------------------------------
# Local tools: the built-in tools' result formats, none of their safeguards


def _read(root: Path, file_path: str, offset: int | None = None, limit: int | None = None) -> tuple[str, bool]:
    path = root / file_path
    if not path.is_file():
        return f"File does not exist: {file_path}", True
    lines = path.read_text().splitlines()
    start = (offset or 1) - 1
    chosen = lines[start : start + limit] if limit else lines[start:]
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chosen, start + 1)), False


def _edit(root: Path, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> tuple[str, bool]:
    path = root / file_path
    if not path.is_file():
        return f"File does not exist: {file_path}", True
    text = path.read_text()
    count = text.count(old_string)
    if count == 0:
        return f"String to replace not found in file.\nString: {old_string}", True
    if count > 1 and not replace_all:
        return f"Found {count} matches of the string to replace, but replace_all is false.", True
    path.write_text(text.replace(old_string, new_string))
    return f"The file {file_path} has been updated.", False


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _grep(root: Path, pattern: str, path: str | None = None, glob: str | None = None) -> tuple[str, bool]:
    regex = re.compile(pattern)
    rows = []
    for file in _files(root / (path or ".")):
        if glob and not file.match(glob):
            continue
        for n, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
            if regex.search(line):
                rows.append(f"{file.relative_to(root).as_posix()}:{n}:{line}")
    return ("\n".join(rows) or "No matches found"), False


def _glob(root: Path, pattern: str, path: str | None = None) -> tuple[str, bool]:
    base = root / (path or ".")
    found = sorted(p.relative_to(root).as_posix() for p in base.glob(pattern) if "__pycache__" not in p.parts)
    return ("\n".join(found) or "No files found"), False


def _bash(root: Path, command: str, timeout: int | None = None, description: str | None = None) -> tuple[str, bool]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True, text=True, timeout=(timeout or 30_000) / 1000)
    output = (done.stdout + done.stderr).rstrip()
    if done.returncode:
        return f"{output}\nExit code: {done.returncode}", True
    return output, False


LOCAL_TOOLS: dict[str, Callable[..., tuple[str, bool]]] = {"Read": _read, "Edit": _edit, "Grep": _grep, "Glob": _glob, "Bash": _bash}

Override = Callable[[str, dict[str, Any], int], "tuple[str, bool] | None"]
"""(tool name, input, how many calls of that tool came before) -> a result to use instead, or None."""


@dataclass
class Run:
    """One conversation: the request bodies sent, the tool calls made, the final answer."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    answer: str = ""

    @property
    def tool_names(self) -> list[str]:
        return [name for name, _ in self.calls]


def drive(
    root: Path,
    prompt: str,
    *,
    override: Override | None = None,
    tools: tuple[str, ...] = TOOL_NAMES,
    previous: Run | None = None,
    max_requests: int = 30,
) -> Run:
    """The four-step loop, in the test: ask the policy, run its tool_use blocks, send the results back."""
    run = Run(messages=list(previous.messages) if previous else [])
    run.messages.append({"role": "user", "content": prompt})
    tool_specs = [{"name": n, "description": f"The {n} tool.", "input_schema": {"type": "object"}} for n in tools]
    for index in range(max_requests):
        body = {"model": "claude-demo", "max_tokens": 1024, "system": "You are a coding agent.", "tools": tool_specs, "messages": run.messages}
        body = json.loads(json.dumps(body))  # what goes over the wire
        run.bodies.append(body)
        turn = demo_policy(body, index)
        content = [dict(block) for block in turn.content]
        assert content and content[0]["type"] == "text" and content[0]["text"].strip(), "every turn starts by saying what it does"
        uses = [block for block in content if block["type"] == "tool_use"]
        for j, block in enumerate(uses):
            block.setdefault("id", f"toolu_{index:02d}_{j}")
        run.messages.append({"role": "assistant", "content": content})
        if not uses:
            run.answer = "\n".join(block["text"] for block in content if block["type"] == "text")
            return run
        results = []
        for block in uses:
            name, args = block["name"], block["input"]
            earlier = sum(1 for n, _ in run.calls if n == name)
            run.calls.append((name, args))
            result = override(name, args, earlier) if override else None
            if result is None:
                result = LOCAL_TOOLS[name](root, **args) if name in tools else (f"No such tool available: {name}", True)
            text, is_error = result
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": text, "is_error": is_error})
        run.messages.append({"role": "user", "content": results})
    raise AssertionError(f"the policy did not answer within {max_requests} requests")


def project_tests(root: Path) -> tuple[bool, str]:
    """Run a workspace's own unittest suite: (passed, output)."""
    output, is_error = _bash(root, TEST_COMMAND)
    return not is_error, output


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return copy_sample_project(tmp_path / "sample")


def workspace(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(WORKSPACES / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__")))


# ---------------------------------------------------------------------------
# The grammar


@pytest.mark.parametrize(
    ("prompt", "task"),
    [
        ("change value to 2", SetValue("value", "2")),
        ("Set timeout to 30 in settings.py", SetValue("timeout", "30", "settings.py")),
        ('set name to "beta".', SetValue("name", '"beta"')),
        ("set `retries` = 5 in `conf/app.py`", SetValue("retries", "5", "conf/app.py")),
        ("change the value to 2.5", SetValue("value", "2.5")),
        ("make the failing test pass", FixFailingTest()),
        ("Make the failing tests pass.", FixFailingTest()),
        ("refactor the app", None),
        ("change value", None),
        ("set value to 2 and run the tests", None),
        ("", None),
    ],
)
def test_parse_task(prompt: str, task: Any) -> None:
    assert parse_task(prompt) == task


# ---------------------------------------------------------------------------
# The three tasks on three workspaces


def test_change_value_on_the_sample_project(sample: Path) -> None:
    assert not project_tests(sample)[0], "the sample's test_value fails before the change"
    run = drive(sample, "change value to 2")
    assert run.tool_names == ["Grep", "Read", "Edit", "Grep", "Bash"]
    assert "value = 2\n" in (sample / "config.py").read_text()
    assert run.calls[-1][1]["command"] == 'python -m unittest discover -s tests -p "check_*.py" -v'  # from the README
    assert run.answer == "Changed value from 1 to 2 in config.py; the tests pass (4 tests)."
    assert project_tests(sample)[0]


def test_each_turn_says_what_it_does_before_the_tool_call(sample: Path) -> None:
    run = drive(sample, "change value to 2")
    turns = [m["content"] for m in run.messages if m["role"] == "assistant"]
    assert [t[0]["text"] for t in turns[:3]] == [
        "I'll find where `value` is set.",
        "I'll read config.py.",
        "I'll change `value` from 1 to 2 in config.py.",
    ]
    assert all([b["type"] for b in t] == ["text", "tool_use"] for t in turns[:-1])
    assert [b["type"] for b in turns[-1]] == ["text"]


def test_the_policy_is_deterministic(sample: Path, tmp_path: Path) -> None:
    first = drive(sample, "change value to 2")
    again = drive(copy_sample_project(tmp_path / "again"), "change value to 2")
    said = [m for m in first.messages if m["role"] == "assistant"]
    assert said == [m for m in again.messages if m["role"] == "assistant"]


def test_set_a_number_in_a_named_file(tmp_path: Path) -> None:
    root = workspace("service", tmp_path)
    run = drive(root, "set timeout to 30 in settings.py")
    assert run.tool_names == ["Read", "Edit", "Grep", "Bash"]  # the file is named: no search
    assert "timeout = 30  # seconds\n" in (root / "settings.py").read_text()  # the comment stays
    assert run.answer == "Changed timeout from 10 to 30 in settings.py; the tests pass (3 tests)."


@pytest.mark.parametrize("value", ['"beta"', "beta", "'beta'"])
def test_set_a_string_keeps_it_quoted(tmp_path: Path, value: str) -> None:
    root = workspace("service", tmp_path)
    run = drive(root, f"set name to {value}")
    assert 'name = "beta"\n' in (root / "settings.py").read_text()
    assert run.answer == 'Changed name from "alpha" to "beta" in settings.py; the tests pass (3 tests).'


def test_set_an_annotated_assignment(tmp_path: Path) -> None:
    root = workspace("service", tmp_path)
    drive(root, "change retries to 5")
    assert "retries: int = 5\n" in (root / "settings.py").read_text()


def test_a_local_variable_of_the_same_name_is_not_the_setting(tmp_path: Path) -> None:
    root = workspace("service", tmp_path)  # client.py has an indented `timeout = settings.timeout`
    run = drive(root, "set timeout to 30")
    assert run.calls[0] == ("Grep", {"pattern": r"^\s*timeout\s*(?::[^=]*)?=(?!=)"})
    assert run.calls[1] == ("Read", {"file_path": "settings.py"})
    assert "timeout = settings.timeout" in (root / "client.py").read_text()


def test_make_the_failing_test_pass_with_a_string(tmp_path: Path) -> None:
    root = workspace("failing", tmp_path)
    run = drive(root, "make the failing test pass")
    assert run.tool_names == ["Grep", "Bash", "Grep", "Read", "Edit", "Bash"]
    assert "unit = 'ms'  # the unit of every duration\n" in (root / "limits.py").read_text()
    assert run.answer == (
        "test_unit failed with `AssertionError: 's' != 'ms'`. "
        "Changed unit from 's' to 'ms' in limits.py; the tests pass (2 tests)."
    )
    assert project_tests(root)[0]


def test_make_the_failing_test_pass_on_the_sample_project(sample: Path) -> None:
    run = drive(sample, "make the failing test pass")
    assert "value = 2\n" in (sample / "config.py").read_text()
    assert run.answer.endswith("Changed value from 1 to 2 in config.py; the tests pass (4 tests).")


def test_no_failing_test_means_nothing_to_fix(tmp_path: Path) -> None:
    root = workspace("service", tmp_path)
    run = drive(root, "make the failing test pass")
    assert run.tool_names == ["Grep", "Bash"]
    assert run.answer == "All the tests pass already (3 tests); there is no failing test to fix."


def test_a_failure_that_is_not_a_constant_is_reported(tmp_path: Path) -> None:
    root = workspace("failing", tmp_path)
    check = root / "tests" / "check_limits.py"
    check.write_text(check.read_text().replace('self.assertEqual(limits.unit, "ms")', "self.assertTrue(limits.unit.startswith('m'))"))
    run = drive(root, "make the failing test pass")
    assert run.tool_names == ["Grep", "Bash"]
    assert "not in a way I can fix offline" in run.answer and "test_unit" in run.answer
    assert "unit = 's'" in (root / "limits.py").read_text()


def test_without_documented_command_the_tests_are_found_by_name(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "tests").mkdir(parents=True)
    (root / "app.py").write_text("DEBUG = False\n")
    (root / "tests" / "test_app.py").write_text("import unittest\nimport app\n\nclass T(unittest.TestCase):\n    def test_debug(self):\n        self.assertTrue(app.DEBUG)\n")
    run = drive(root, "make the failing test pass")
    assert run.tool_names == ["Grep", "Glob", "Bash", "Grep", "Read", "Edit", "Bash"]
    assert run.calls[2][1]["command"] == "python -m unittest discover -v -s tests"
    assert (root / "app.py").read_text() == "DEBUG = True\n"
    assert run.answer.endswith("Changed DEBUG from False to True in app.py; the tests pass (1 test).")


def test_a_project_without_tests_says_so(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("level = 1\n")
    run = drive(tmp_path, "set level to 3")
    assert run.tool_names == ["Grep", "Read", "Edit", "Grep", "Glob"]
    assert run.answer == "Changed level from 1 to 3 in settings.py; I found no tests to run."


def test_a_second_task_in_the_same_session_starts_afresh(sample: Path) -> None:
    first = drive(sample, "change value to 2")
    second = drive(sample, 'set name to "hello"', previous=first)
    assert second.tool_names == ["Grep", "Read", "Edit", "Grep", "Bash"]
    assert 'name = "hello"' in (sample / "config.py").read_text()
    assert second.answer.startswith('Changed name from "greeter" to "hello" in config.py; the tests pass')


# ---------------------------------------------------------------------------
# Honest answers and recovery


def test_an_edit_error_makes_it_reread_and_retry_with_context(sample: Path) -> None:
    def first_edit_fails(name: str, args: dict[str, Any], earlier: int) -> tuple[str, bool] | None:
        if name == "Edit" and earlier == 0:
            return "Found 2 matches of the string to replace, but replace_all is false.", True
        return None

    run = drive(sample, "change value to 2", override=first_edit_fails)
    assert run.tool_names == ["Grep", "Read", "Edit", "Read", "Edit", "Grep", "Bash"]
    first, retry = [args for name, args in run.calls if name == "Edit"]
    assert first["old_string"] == "value = 1"
    assert retry["old_string"].count("\n") >= 1 and "value = 1" in retry["old_string"]
    assert "value = 2\n" in (sample / "config.py").read_text()
    assert run.answer == "Changed value from 1 to 2 in config.py; the tests pass (4 tests)."


def test_an_edit_that_fails_twice_is_reported(sample: Path) -> None:
    def edits_fail(name: str, args: dict[str, Any], earlier: int) -> tuple[str, bool] | None:
        return ("String to replace not found in file.", True) if name == "Edit" else None

    run = drive(sample, "change value to 2", override=edits_fail)
    assert run.tool_names == ["Grep", "Read", "Edit", "Read", "Edit"]
    assert run.answer == "I could not edit config.py: String to replace not found in file. Nothing was changed."
    assert "value = 1\n" in (sample / "config.py").read_text()


def test_a_denied_edit_is_not_retried(sample: Path) -> None:
    def deny_edit(name: str, args: dict[str, Any], earlier: int) -> tuple[str, bool] | None:
        return ("Permission to use Edit has been denied.", True) if name == "Edit" else None

    run = drive(sample, "change value to 2", override=deny_edit)
    assert run.tool_names == ["Grep", "Read", "Edit"]
    assert "denied" in run.answer and "Nothing was changed" in run.answer


def test_a_denied_test_run_is_reported(sample: Path) -> None:
    def deny_bash(name: str, args: dict[str, Any], earlier: int) -> tuple[str, bool] | None:
        return ("Permission denied: the user declined to run this command.", True) if name == "Bash" else None

    run = drive(sample, "change value to 2", override=deny_bash)
    assert run.tool_names == ["Grep", "Read", "Edit", "Grep", "Bash"]
    assert run.answer == (
        "Changed value from 1 to 2 in config.py; I could not run the tests: the Bash call was denied "
        "(Permission denied: the user declined to run this command)."
    )


def test_a_missing_python_is_retried_as_python3(sample: Path) -> None:
    def no_python(name: str, args: dict[str, Any], earlier: int) -> tuple[str, bool] | None:
        if name == "Bash" and args["command"].startswith("python "):
            return "bash: line 1: python: command not found\nExit code: 127", True
        return None

    run = drive(sample, "change value to 2", override=no_python)
    assert [args["command"].split()[0] for name, args in run.calls if name == "Bash"] == ["python", "python3"]
    assert run.answer.endswith("the tests pass (4 tests).")


def test_tests_that_still_fail_are_reported(sample: Path) -> None:
    run = drive(sample, "change value to 3")
    assert run.answer == (
        "Changed value from 1 to 3 in config.py, but 1 of 4 tests fail: test_value (AssertionError: 3 != 2)."
    )


def test_a_missing_file_makes_it_search_the_workspace(tmp_path: Path) -> None:
    root = workspace("service", tmp_path)
    run = drive(root, "set timeout to 30 in setings.py")
    assert run.tool_names[:3] == ["Read", "Grep", "Read"]
    assert run.calls[2] == ("Read", {"file_path": "settings.py"})
    assert run.answer == "Changed timeout from 10 to 30 in settings.py; the tests pass (3 tests)."


def test_an_unknown_name_is_reported(sample: Path) -> None:
    run = drive(sample, "set colour to 7")
    assert run.tool_names == ["Grep"]
    assert run.answer == "I found no assignment to `colour` in the workspace, so I changed nothing."


def test_several_candidates_are_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("debug = False\n")
    (tmp_path / "b.py").write_text("x = 1\ndebug = False\n")
    run = drive(tmp_path, "set debug to True")
    assert run.tool_names == ["Grep"]
    assert "set in several places (a.py:1, b.py:2)" in run.answer
    assert "set debug to True in a.py" in run.answer


def test_an_unchanged_value_is_not_edited(sample: Path) -> None:
    run = drive(sample, "set retries to 3")
    assert run.tool_names == ["Grep", "Read"]
    assert run.answer == "`retries` is already 3 in config.py; nothing to change."


def test_a_session_without_bash_skips_the_tests(sample: Path) -> None:
    run = drive(sample, "change value to 2", tools=("Read", "Edit", "Grep", "Glob"))
    assert "Bash" not in run.tool_names
    assert run.answer == "Changed value from 1 to 2 in config.py; I did not run the tests: this session offers no Bash tool."


@pytest.mark.parametrize("prompt", ["refactor the app please", "what does greeter.py do?", ""])
def test_out_of_grammar_prompts_get_the_honest_answer(sample: Path, prompt: str) -> None:
    run = drive(sample, prompt)
    assert run.calls == []
    assert "set NAME to VALUE [in FILE]" in run.answer and "make the failing test pass" in run.answer
    assert "dreamloop run --live" in run.answer and "ANTHROPIC_API_KEY" in run.answer and "ANTHROPIC_BASE_URL" in run.answer


def test_the_tool_call_cap_ends_with_text(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy_module, "MAX_TOOL_CALLS", 3)
    run = drive(sample, "change value to 2")
    assert run.tool_names == ["Grep", "Read", "Edit"]
    assert run.answer == (
        "Changed value from 1 to 2 in config.py; I did not run the tests. "
        "I stopped there: I reached my limit of 3 tool calls for one task."
    )


def test_the_cap_holds_against_a_conversation_already_at_it() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "make the failing test pass"}]
    for i in range(MAX_TOOL_CALLS):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "Again."}, {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "false"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "Exit code: 1", "is_error": True}]})
    turn = demo_policy({"messages": messages, "tools": [{"name": n} for n in TOOL_NAMES]}, MAX_TOOL_CALLS)
    assert [b["type"] for b in turn.content] == ["text"]
    assert f"limit of {MAX_TOOL_CALLS} tool calls" in turn.content[0]["text"]


def test_the_sample_project_ships_clean() -> None:
    names = {p.name for p in Path(str(sample_project_path())).rglob("*")}
    assert {"README.md", "config.py", "greeter.py", "check_config.py", "check_greeter.py"} <= names
    assert not any(name.startswith("test_") for name in names), "pytest must never collect the sample's tests"


def test_copy_sample_project_refuses_a_full_directory(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    with pytest.raises(FileExistsError):
        copy_sample_project(tmp_path)
