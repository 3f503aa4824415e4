"""The offline demo model: a small, real, rule-based coding agent.

``demo_policy`` is a ``Policy`` for the fake Messages API (see ``scripts.py``):
it receives each request body and answers with the next ``Turn``. It decides
only from that body -- the user's task and the tool results that came back,
errors included -- so it works on any workspace, and nothing is canned per run.
It knows nothing of the loop, the tools' code or the fake API's internals: it
speaks the Messages API like a model does.

Task grammar (one line, case-insensitive; in a longer message, such as a stop
hook's feedback, a task on a line of its own counts; anything else gets an
honest answer that offline mode only does these, and how to go live):

* ``set NAME to VALUE [in FILE]`` or ``change NAME to VALUE [in FILE]``
  (``=`` may replace ``to``; NAME may be in backticks; VALUE may be quoted).
  Find the assignment ``NAME = ...`` (Grep, unless FILE is given), Read the
  file, Edit that line keeping the value's form (a quoted value stays quoted,
  a trailing comment stays), find the project's test command (Grep for
  ``python -m unittest|pytest`` in its docs, else Glob for ``test*.py``), run
  it with Bash, and answer with what changed and how the tests went.
* ``make the failing test pass`` (also "tests"): find and run the tests, read
  the first failure that checks a constant against a literal -- the failing
  line ``self.assertEqual(config.value, 2)`` (or ``assertEqual(2, ...)``,
  ``assert config.value == 2``, ``assertTrue/assertFalse/assertIsNone(x)``) and
  its ``AssertionError: 1 != 2``: NAME is ``value``, the expected VALUE is
  ``2``, ``config`` hints at ``config.py``. Then the same steps as ``set``;
  the second test run shows whether it worked. Other failures are reported.

Recovery: an Edit that fails (not found, not unique) makes the policy re-read
the file and retry once with more context; a FILE that cannot be read makes it
search the workspace; ``python: command not found`` makes it retry with
``python3``; a denied tool call, a second failure or tests that still fail are
reported as they are. It makes at most ``MAX_TOOL_CALLS`` tool calls per task,
then answers with what it got done.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath
from typing import Any, Callable, Union

from dreamloop.context.autocompact import SUMMARY_PREFIX, compact_prompt, is_compaction_request
from dreamloop.hooks import stop_feedback
from dreamloop.scripts import Turn, reply, tool_use

__all__ = [
    "EDIT_RETRIES",
    "compaction_summary",
    "MAX_TOOL_CALLS",
    "Conversation",
    "FixFailingTest",
    "SetValue",
    "Step",
    "Task",
    "demo_policy",
    "parse_task",
    "read_conversation",
]

MAX_TOOL_CALLS = 12
"""Tool calls the policy makes for one task before it answers with what it has."""

EDIT_RETRIES = 1
"""After a failed Edit: re-read the file and retry this many times, then report."""

TEST_COMMAND_PATTERN = r"python3? -m (unittest|pytest)"
"""What the policy greps for to learn a project's documented test command."""

TEST_FILES_GLOB = "**/test*.py"
"""Fallback when no command is documented: unittest's default test file names."""


# ---------------------------------------------------------------------------
# The task grammar


@dataclass(frozen=True)
class SetValue:
    """``set NAME to VALUE [in FILE]``: VALUE as typed (quotes kept), FILE relative or None."""

    name: str
    value: str
    file: str | None = None


@dataclass(frozen=True)
class FixFailingTest:
    """``make the failing test pass``."""


Task = Union[SetValue, FixFailingTest]

_SET = re.compile(
    r"""^(?:please\s+)?(?:set|change)\s+(?:the\s+)?`?(?P<name>[A-Za-z_]\w*)`?
        \s+(?:to|=)\s+(?P<value>"[^"]*"|'[^']*'|`[^`]*`|\S+)
        (?:\s+in\s+`?(?P<file>[^\s`]+)`?)?$""",
    re.IGNORECASE | re.VERBOSE,
)
_FIX = re.compile(r"^(?:please\s+)?make\s+the\s+failing\s+tests?\s+pass$", re.IGNORECASE)


def parse_task(prompt: str) -> Task | None:
    """The task a prompt asks for, or None when it is outside the grammar.

    >>> parse_task("change value to 2")
    SetValue(name='value', value='2', file=None)
    >>> parse_task('set name to "beta" in settings.py.')
    SetValue(name='name', value='"beta"', file='settings.py')
    >>> parse_task("make the failing test pass")
    FixFailingTest()
    >>> parse_task("<system-reminder>\\nA Stop hook kept the turn from ending. It said:\\nmake the failing test pass")
    FixFailingTest()
    """
    for line in (prompt, *prompt.splitlines()):  # the whole text, else a line of its own
        task = _parse_line(line)
        if task is not None:
            return task
    return None


def _parse_line(text: str) -> Task | None:
    line = text.strip().rstrip(".!").strip()
    if _FIX.match(line):
        return FixFailingTest()
    match = _SET.match(line)
    if match is None:
        return None
    value = match["value"]
    if value.startswith("`"):
        value = value.strip("`")
    return SetValue(match["name"], value, match["file"])


# ---------------------------------------------------------------------------
# Reading the conversation: the task and the tool calls made for it since


@dataclass(frozen=True)
class Step:
    """One tool call of the policy (from an assistant message) and its tool_result."""

    index: int
    name: str
    input: dict[str, Any]
    result: str
    is_error: bool

    @property
    def denied(self) -> bool:
        """An error that says the call was not allowed (a permission decision), not a failure of the work."""
        return self.is_error and _DENIAL.search(self.result) is not None


_DENIAL = re.compile(r"permission|denied|declined|refused|not allowed|rejected|doesn't want to proceed", re.IGNORECASE)


@dataclass(frozen=True)
class Conversation:
    """What a request body says: the latest task prompt, the steps since, the tools offered."""

    prompt: str
    steps: tuple[Step, ...]
    tools: frozenset[str]


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _result_text(content: Any) -> str:
    return "\n".join(b.get("text", "") for b in _blocks(content) if b.get("type") == "text")


_SUMMARY_TASK = re.compile(r"^Primary request: (.*)$", re.MULTILINE)


_STOP_FEEDBACK = stop_feedback("\0").partition("\0")[0]
"""How a stop hook's feedback opens (``hooks.stop_feedback``)."""


def read_conversation(body: dict[str, Any]) -> Conversation:
    """Parse a Messages API request body.

    The task is the latest user message that carries text and no tool_result
    (earlier tasks of the session are done); context the loop added (a
    ``<system-reminder>``, a ``<collapsed>`` fold) is not a task, unless it relays a stop hook's
    feedback (``hooks.stop_feedback``: the hook asks for work), and a
    compaction summary stands for the task it names (``Primary request: ...``). The steps are the tool_use blocks
    of the assistant messages after it, each paired by id with its tool_result.
    """
    messages = body.get("messages", [])
    start, prompt = 0, ""
    for i, message in enumerate(messages):
        blocks = _blocks(message.get("content"))
        if message.get("role") == "user":
            texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
            summaries = [t for t in texts if t.startswith(SUMMARY_PREFIX)]
            if summaries:  # a compaction summary: the task is the one it names; the steps start after it
                found = _SUMMARY_TASK.search(summaries[-1])
                start, prompt = i, found.group(1).strip() if found else prompt
                continue
            if any(b.get("type") == "tool_result" for b in blocks):
                continue
            texts = [t for t in texts if t.startswith(_STOP_FEEDBACK)
                     or not t.lstrip().startswith(("<system-reminder>", "<collapsed"))]
            if texts:
                start, prompt = i, "\n".join(texts).strip()
    calls: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for message in messages[start + 1 :]:
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_use":
                calls.append(block)
            elif block.get("type") == "tool_result":
                results[block.get("tool_use_id", "")] = block
    steps: list[Step] = []
    for call in calls:
        result = results.get(call.get("id", ""))
        if result is not None:
            text = _result_text(result.get("content"))
            steps.append(Step(len(steps), call["name"], dict(call.get("input") or {}), text, bool(result.get("is_error"))))
    tools = frozenset(t.get("name", "") for t in body.get("tools") or [])
    return Conversation(prompt, tuple(steps), tools)


# ---------------------------------------------------------------------------
# Reading tool results: Grep hits, Read listings, assignments, test runs


@dataclass(frozen=True)
class Hit:
    """A Grep result line ``path:lineno:line``."""

    path: str
    lineno: int
    line: str


def _grep_hits(result: str) -> list[Hit]:
    hits = []
    for row in result.splitlines():
        match = re.match(r"^(.+?):(\d+):(.*)$", row)
        if match:
            hits.append(Hit(match[1], int(match[2]), match[3]))
    return hits


def _read_lines(result: str) -> dict[int, str]:
    """Line number -> text, from Read's ``cat -n`` output (``{n:>6}\\t{line}``)."""
    lines = {}
    for row in result.splitlines():
        match = re.match(r"^\s*(\d+)\t(.*)$", row)
        if match:
            lines[int(match[1])] = match[2]
    return lines


def assignment_pattern(name: str) -> str:
    """The regex (for Grep) of ``NAME = ...`` or ``NAME: type = ...`` at the start of a line, not ``==``."""
    return rf"^\s*{re.escape(name)}\s*(?::[^=]*)?=(?!=)"


def _assignment(name: str) -> re.Pattern[str]:
    """``assignment_pattern`` with groups: ``lhs`` up to the value, ``rest`` the value and what follows."""
    return re.compile(rf"^(?P<lhs>\s*{re.escape(name)}\s*(?::[^=]*)?=(?!=)\s*)(?P<rest>.*)$")


def _split_value(rest: str) -> tuple[str, str]:
    """``'"x"  # note'`` -> (``'"x"'``, ``'  # note'``): the value's source and what follows it."""
    if rest[:1] in ("'", '"'):
        end = rest.find(rest[0], 1)
        while end > 0 and rest[end - 1] == "\\":
            end = rest.find(rest[0], end + 1)
        if end > 0:
            return rest[: end + 1], rest[end + 1 :]
    value = rest.split("#", 1)[0].rstrip()
    return value, rest[len(value) :]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        return value[1:-1]
    return value


def _in_form_of(old: str, wanted: str) -> str:
    """``wanted`` written the way ``old`` is: quoted with the same quote if ``old`` was quoted."""
    if old[:1] not in ("'", '"'):
        return wanted
    inner, quote = _unquote(wanted), old[0]
    if quote in inner:
        quote = "'" if quote == '"' else '"'
    escaped = inner.replace(quote, "\\" + quote)
    return quote + escaped + quote


def _rewrite(line: str, name: str, wanted: str) -> tuple[str, str, str] | None:
    """(old value, new value, new line) for an assignment line, None if it is not one."""
    match = _assignment(name).match(line)
    if match is None:
        return None
    old, tail = _split_value(match["rest"])
    new = _in_form_of(old, wanted)
    return old, new, match["lhs"] + new + tail


def _is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p in ("tests", "test") for p in parts[:-1]) or parts[-1].startswith("test_")


def _is_doc_path(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in (".md", ".rst", ".txt")


def _is_vendored(path: str) -> bool:
    """Inside a virtualenv, a hidden directory or installed packages: not the project's own files."""
    parts = PurePosixPath(path).parts
    return any(p.startswith(".") or p in ("site-packages", "node_modules", "venv") for p in parts[:-1])


@dataclass(frozen=True)
class Failure:
    """One failed test from unittest's output: its id, the failing source line, the error line."""

    test: str
    code: str
    message: str


@dataclass(frozen=True)
class TestRun:
    """How one Bash run of the test command went.

    ``outcome``: ``passed``, ``failed``, ``no_tests``, ``denied`` (permission),
    ``missing`` (``python`` not found) or ``error`` (anything else).
    """

    __test__ = False  # not a pytest class

    step: Step
    outcome: str
    ran: int | None
    failures: tuple[Failure, ...]

    @property
    def tail(self) -> str:
        """The last lines of the output, for an answer."""
        rows = [r.strip() for r in self.step.result.splitlines() if r.strip()]
        return " / ".join(rows[-3:])[:240]


def _test_run(step: Step) -> TestRun:
    out = step.result
    ran_match = re.search(r"^Ran (\d+) tests?", out, re.MULTILINE)
    pytest_counts = re.findall(r"(\d+) (passed|failed|error)", out)
    ran = int(ran_match[1]) if ran_match else (sum(int(n) for n, _ in pytest_counts) if pytest_counts else None)
    failures = tuple(_failures(out))
    if ran == 0 or "NO TESTS RAN" in out or re.search(r"^no tests ran", out, re.MULTILINE):
        outcome = "no_tests"
    elif ran is not None:
        outcome = "failed" if step.is_error or failures else "passed"
    elif step.denied:
        outcome = "denied"
    elif re.search(r"python3?: (?:command )?not found|Exit code: 127", out):
        outcome = "missing"
    else:
        outcome = "error" if step.is_error else "passed"
    return TestRun(step, outcome, ran, failures)


def _failures(output: str) -> list[Failure]:
    """The FAIL/ERROR blocks of unittest's output, each reduced to its last frame's line and error."""
    found = []
    for block in re.split(r"^=+$", output, flags=re.MULTILINE)[1:]:
        header = re.search(r"^(?:FAIL|ERROR): (\w+)", block, re.MULTILINE)
        if header is None:
            continue
        rows = block.splitlines()
        code, message = "", ""
        for i, row in enumerate(rows):
            if re.match(r'^\s+File ".*", line \d+', row) and i + 1 < len(rows):
                code = rows[i + 1].strip()
            elif row and not row[0].isspace() and code and not message and not row.startswith(("-", "Traceback")):
                message = row.strip()
        found.append(Failure(header[1], code, message))
    return found


@dataclass(frozen=True)
class Change:
    """The edit to make: set NAME to VALUE, in FILE if known; ``module`` hints at ``module.py``."""

    name: str
    value: str
    file: str | None = None
    module: str | None = None
    because: Failure | None = None


_ASSERT_EQUAL = ("assertEqual", "assertEquals")
_ASSERT_CONSTANT = {"assertTrue": "True", "assertFalse": "False", "assertIsNone": "None"}


def _compared(code: str) -> tuple[ast.expr, str] | None:
    """(subject, expected source) of a failing check, if it compares something with a literal.

    ``self.assertEqual(config.value, 2)``, ``assertEqual(2, config.value)`` and
    ``assert config.value == 2`` give (``config.value``, ``"2"``);
    ``self.assertTrue(app.DEBUG)`` gives (``app.DEBUG``, ``"True"``).
    """
    try:
        statement = ast.parse(code).body[0]
    except (SyntaxError, IndexError):
        return None
    if isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare):
        test = statement.test
        if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
            return None
        sides = [test.left, test.comparators[0]]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        method = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if method in _ASSERT_CONSTANT and call.args:
            return call.args[0], _ASSERT_CONSTANT[method]
        if method not in _ASSERT_EQUAL or len(call.args) < 2:
            return None
        sides = call.args[:2]
    else:
        return None
    for subject, expected in (sides, sides[::-1]):
        source = ast.get_source_segment(code, expected)
        if source is not None and _is_literal(expected) and not _is_literal(subject):
            return subject, source
    return None


def _diagnose(failure: Failure) -> Change | None:
    """The constant a failing check wants: ``assertEqual(config.value, 2)`` -> value = 2, probably in config.py."""
    compared = _compared(failure.code)
    if compared is None:
        return None
    subject, source = compared
    if isinstance(subject, ast.Name):
        return Change(subject.id, source, because=failure)
    if isinstance(subject, ast.Attribute):
        module = subject.value.id if isinstance(subject.value, ast.Name) else None
        return Change(subject.attr, source, module=module, because=failure)
    return None  # a call or an expression: not a constant to set


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return False
    return True


def _unique_block(lines: dict[int, str], lineno: int, at_least: int) -> tuple[int, int]:
    """The line range around ``lineno`` whose text occurs once in the file, with ``at_least`` extra lines."""
    text = "\n".join(lines[n] for n in sorted(lines))
    first = last = lineno
    while True:
        extra = last - first
        block = "\n".join(lines[n] for n in range(first, last + 1))
        if (extra >= at_least and text.count(block) == 1) or (first - 1 not in lines and last + 1 not in lines):
            return first, last
        if last + 1 in lines and (extra % 2 == 0 or first - 1 not in lines):
            last += 1
        else:
            first -= 1


# ---------------------------------------------------------------------------
# What the policy knows now, derived from the steps


class Situation:
    """The task plus everything the tool results have told the policy so far.

    Every property is derived from the request body, so the policy keeps no
    state between requests: the conversation is the state.
    """

    def __init__(self, task: Task, conversation: Conversation) -> None:
        self.task = task
        self.steps = conversation.steps
        self.tools = conversation.tools

    def calls(self, name: str, **same: Any) -> list[Step]:
        return [s for s in self.steps if s.name == name and all(s.input.get(k) == v for k, v in same.items())]

    # -- the project's tests

    @cached_property
    def test_command(self) -> str | None:
        """The documented test command (Grep), else unittest on the Glob's test directory, else None."""
        for step in self.calls("Grep", pattern=TEST_COMMAND_PATTERN):
            for hit in _grep_hits(step.result):
                match = re.search(r"python3? -m (?:unittest|pytest)(?: [\w./*'\"=-]+)*", hit.line)
                if match:
                    return match[0].strip()
        for step in self.calls("Glob", pattern=TEST_FILES_GLOB):
            paths = [PurePosixPath(p) for p in step.result.splitlines() if not step.is_error and p.endswith(".py")]
            paths = [p for p in paths if _is_test_path(str(p)) and not _is_vendored(str(p))]
            if paths:
                folder = str(min(paths, key=lambda p: (len(p.parts), str(p))).parent)
                return "python -m unittest discover -v" + ("" if folder == "." else f" -s {folder}")
        return None

    def test_runs(self, after_edit: bool) -> list[TestRun]:
        """Bash runs of the tests before the edit succeeded, or after it."""
        edit = self.edit_done
        cut = edit.index if edit else len(self.steps)
        return [_test_run(s) for s in self.calls("Bash") if (s.index > cut) == after_edit]

    # -- what to change

    @cached_property
    def diagnosis(self) -> TestRun | None:
        """The last test run before the edit: what ``make the failing test pass`` starts from."""
        runs = self.test_runs(after_edit=False)
        return runs[-1] if runs else None

    @cached_property
    def change(self) -> Change | None:
        """The assignment to make: from the prompt, or from the first failure we can read."""
        if isinstance(self.task, SetValue):
            return Change(self.task.name, self.task.value, self.task.file)
        if self.diagnosis is None or self.diagnosis.outcome != "failed":
            return None
        return next(filter(None, map(_diagnose, self.diagnosis.failures)), None)

    # -- where it is

    @cached_property
    def search(self) -> Step | None:
        """The Grep for the assignment, once made."""
        found = [s for s in self.calls("Grep") if s.input.get("pattern") != TEST_COMMAND_PATTERN]
        return found[-1] if found else None

    @cached_property
    def candidates(self) -> list[Hit]:
        """Grep hits that look like the setting: source files, not tests or docs; top-level first."""
        assert self.change is not None and self.search is not None
        hits = [h for h in _grep_hits(self.search.result) if not _is_test_path(h.path) and not _is_doc_path(h.path)]
        preferred = [h for h in hits if PurePosixPath(h.path).stem == self.change.module]
        hits = preferred or hits
        return [h for h in hits if not h.line[:1].isspace()] or hits

    @cached_property
    def target(self) -> str | None:
        """The file to edit: the one the user named (unless unreadable), else the single candidate."""
        change = self.change
        if change is None:
            return None
        if change.file and not any(r.is_error for r in self.calls("Read", file_path=change.file)):
            return change.file
        if self.search is not None and len(self.candidates) == 1:
            return self.candidates[0].path
        return None

    @cached_property
    def reads(self) -> list[Step]:
        return self.calls("Read", file_path=self.target) if self.target else []

    @cached_property
    def edits(self) -> list[Step]:
        return self.calls("Edit")

    @cached_property
    def edit_done(self) -> Step | None:
        return next((e for e in self.edits if not e.is_error), None)

    @cached_property
    def edit_failures(self) -> list[Step]:
        return [e for e in self.edits if e.is_error]


# ---------------------------------------------------------------------------
# The steps. Each looks at the situation and either returns the next Turn (a
# tool call, or a final answer when it cannot go on) or None: its job is done.


def _call(s: Situation, say: str, name: str, **input: Any) -> Turn:
    """A turn that says what it does and calls a tool, or an honest answer if the tool is not offered."""
    if name not in s.tools:
        return _final(f"I can't go on: this session offers no {name} tool, and I need it next. {summary(s)}")
    return reply(say, tool_use(name, input))


def _final(message: str) -> Turn:
    """The last turn: text only."""
    return reply(message)


def _answer(s: Situation, message: str) -> Turn:
    """A final answer that first says which failure it was about (``make the failing test pass``)."""
    return _final(_failure_sentence(s) + message)


def find_test_command(s: Situation) -> Turn | None:
    """Learn how the project runs its tests: its docs first, then test file names."""
    if s.test_command is not None:
        return None
    if not s.calls("Grep", pattern=TEST_COMMAND_PATTERN) and "Grep" in s.tools:
        return _call(s, "I'll look for the project's test command.", "Grep", pattern=TEST_COMMAND_PATTERN)
    if not s.calls("Glob", pattern=TEST_FILES_GLOB) and "Glob" in s.tools:
        return _call(s, "No test command is documented; I'll look for test files.", "Glob", pattern=TEST_FILES_GLOB)
    return None  # no tests: the answer says so


def run_tests(s: Situation, after_edit: bool) -> Turn | None:
    """Run the test command once (again with ``python3`` if ``python`` is missing)."""
    if s.test_command is None or "Bash" not in s.tools:
        return None
    runs = s.test_runs(after_edit)
    say = "I'll run the tests to check the change." if after_edit else "I'll run the tests to see what fails."
    if not runs:
        return _call(s, say, "Bash", command=s.test_command, description="Run the project's tests")
    last = runs[-1]
    command = last.step.input.get("command", "")
    if last.outcome == "missing" and command.startswith("python "):
        retry = "python3 " + command.removeprefix("python ")
        return _call(s, "`python` is not on this PATH; I'll try `python3`.", "Bash", command=retry, description="Run the project's tests")
    return None


def run_tests_before_edit(s: Situation) -> Turn | None:
    """``make the failing test pass`` starts by running the tests."""
    if s.edit_done is not None:
        return None
    if s.test_command is None:
        return _final("I found no tests in this workspace (no documented test command, no test*.py files), so there is no failing test to fix.")
    if "Bash" not in s.tools:
        return _final("I can't run the tests: this session offers no Bash tool, so I can't see which test fails.")
    return run_tests(s, after_edit=False)


def diagnose(s: Situation) -> Turn | None:
    """Read the first failure: which name, which expected value. Stop honestly if there is none to fix."""
    if s.change is not None or s.edit_done is not None:
        return None
    run = s.diagnosis
    assert run is not None  # run_tests_before_edit made sure
    if run.outcome == "passed":
        return _final(f"All the tests pass already ({_count(run.ran)}); there is no failing test to fix.")
    if run.outcome == "no_tests":
        return _final(f"`{run.step.input.get('command')}` found no tests to run, so there is no failing test to fix.")
    if run.outcome == "denied":
        return _final(f"I could not run the tests: the Bash call was denied ({_first_line(run.step.result)}). Nothing was changed.")
    if run.outcome != "failed":
        return _final(f"I could not run the tests with `{run.step.input.get('command')}`: {run.tail}. Nothing was changed.")
    first = run.failures[0] if run.failures else None
    detail = f"{first.test} fails at `{first.code}` ({first.message})" if first else run.tail
    return _final(
        f"The tests fail, but not in a way I can fix offline: {detail}. I only fix a check of a constant "
        "against a literal, like `self.assertEqual(config.value, 2)` or `self.assertTrue(app.DEBUG)`. "
        "Nothing was changed."
    )


def locate(s: Situation) -> Turn | None:
    """Find the one file that assigns NAME: the user's FILE, else a Grep for ``NAME =``."""
    change = s.change
    assert change is not None
    if s.target is not None:
        return None
    if s.search is None:
        if change.file:
            say = f"I couldn't read {change.file}; I'll search the workspace for where `{change.name}` is set."
        else:
            say = f"I'll find where `{change.name}` is set."
        return _call(s, say, "Grep", pattern=assignment_pattern(change.name))
    i = f"{change.file} could not be read, and I" if change.file else "I"
    if s.search.is_error:
        return _answer(s, f"{i} could not search the workspace: {_first_line(s.search.result)}. Nothing was changed.")
    if not s.candidates:
        return _answer(s, f"{i} found no assignment to `{change.name}` in the workspace, so I changed nothing.")
    places = ", ".join(f"{h.path}:{h.lineno}" for h in s.candidates)
    return _answer(
        s,
        f"`{change.name}` is set in several places ({places}), and I won't guess which one you mean. "
        f"Say which file, e.g. `set {change.name} to {change.value} in {s.candidates[0].path}`."
    )


def read(s: Situation) -> Turn | None:
    """Read the target file; again after a failed Edit, while a retry is left."""
    target = s.target
    assert target is not None
    last_failure = s.edit_failures[-1] if s.edit_failures else None
    retry = (
        last_failure is not None
        and s.edit_done is None
        and not last_failure.denied
        and len(s.edit_failures) <= EDIT_RETRIES
        and (not s.reads or s.reads[-1].index < last_failure.index)
    )
    if not s.reads:
        return _call(s, f"I'll read {target}.", "Read", file_path=target)
    if retry:
        return _call(s, f"The edit failed ({_first_line(last_failure.result)}); I'll read {target} again.", "Read", file_path=target)
    if s.reads[-1].is_error:
        return _answer(s, f"I could not read {target}: {_first_line(s.reads[-1].result)}. Nothing was changed.")
    return None


def edit(s: Situation) -> Turn | None:
    """Replace the assignment line (with enough context to be unique); report a second failure."""
    if s.edit_done is not None:
        return None
    change, target = s.change, s.target
    assert change is not None and target is not None
    if s.edit_failures and (s.edit_failures[-1].denied or len(s.edit_failures) > EDIT_RETRIES):
        return _answer(s, f"I could not edit {target}: {_first_line(s.edit_failures[-1].result)}. Nothing was changed.")
    lines = _read_lines(s.reads[-1].result)
    pattern = _assignment(change.name)
    found = [n for n, line in lines.items() if pattern.match(line)]
    found = [n for n in found if not lines[n][:1].isspace()] or found
    if not found:
        return _answer(s, f"{target} has no line that sets `{change.name}`, so I changed nothing.")
    if len(found) > 1:
        return _answer(s, f"`{change.name}` is set on several lines of {target} ({', '.join(map(str, found))}); I won't guess which one you mean.")
    lineno = found[0]
    rewritten = _rewrite(lines[lineno], change.name, change.value)
    assert rewritten is not None
    old, new, new_line = rewritten
    if new_line == lines[lineno]:
        return _answer(s, f"`{change.name}` is already {new} in {target}; nothing to change.")
    first, last = _unique_block(lines, lineno, at_least=len(s.edit_failures))
    old_string = "\n".join(lines[n] for n in range(first, last + 1))
    new_string = "\n".join(new_line if n == lineno else lines[n] for n in range(first, last + 1))
    say = f"I'll change `{change.name}` from {old} to {new} in {target}."
    if s.edit_failures:
        say = f"I'll retry the edit with {last - first} line(s) of context around line {lineno}."
    return _call(s, say, "Edit", file_path=target, old_string=old_string, new_string=new_string)


def run_tests_after_edit(s: Situation) -> Turn | None:
    """Check the change with the project's tests."""
    return run_tests(s, after_edit=True)


Plan = tuple[Callable[[Situation], Union[Turn, None]], ...]

SET_PLAN: Plan = (locate, read, edit, find_test_command, run_tests_after_edit)
FIX_PLAN: Plan = (find_test_command, run_tests_before_edit, diagnose, locate, read, edit, run_tests_after_edit)


# ---------------------------------------------------------------------------
# Answers


def _count(ran: int | None) -> str:
    return "tests" if ran is None else f"{ran} test{'s' if ran != 1 else ''}"


def _first_line(text: str) -> str:
    """The first line of a tool result, to quote in an answer (no final period: the answer adds its own)."""
    rows = [r.strip() for r in text.splitlines() if r.strip()]
    line = rows[0] if rows else "no output"
    return line[:160] + "…" if len(line) > 160 else line.rstrip(".")


def _failure_sentence(s: Situation) -> str:
    change = s.change
    if change is None or change.because is None:
        return ""
    return f"{change.because.test} failed with `{change.because.message}`. "


def _tests_clause(s: Situation) -> str:
    """How the tests went after the edit: the end of the sentence that says what changed."""
    if find_test_command(s) is not None:
        return "; I did not run the tests"
    if s.test_command is None:
        if not {"Grep", "Glob"} & s.tools:
            return "; I did not look for tests: this session offers no Grep or Glob tool"
        return "; I found no tests to run"
    if "Bash" not in s.tools:
        return "; I did not run the tests: this session offers no Bash tool"
    runs = s.test_runs(after_edit=True)
    if not runs:
        return "; I did not run the tests"
    run = runs[-1]
    if run.outcome == "passed":
        return f"; the tests pass ({_count(run.ran)})"
    if run.outcome == "failed":
        names = ", ".join(f"{f.test} ({f.message})" if f.message else f.test for f in run.failures) or run.tail
        return f", but {len(run.failures) or 'some'} of {_count(run.ran)} fail: {names}"
    if run.outcome == "denied":
        return f"; I could not run the tests: the Bash call was denied ({_first_line(run.step.result)})"
    if run.outcome == "no_tests":
        return f"; `{run.step.input.get('command')}` found no tests to run"
    return f"; running the tests failed: {run.tail}"


def _changed_line(edit_input: dict[str, Any]) -> tuple[str, str]:
    """The (old, new) line an Edit of ours changed: the one line where old_string and new_string differ."""
    pairs = zip(edit_input["old_string"].splitlines(), edit_input["new_string"].splitlines())
    return next(((o, n) for o, n in pairs if o != n), (edit_input["old_string"], edit_input["new_string"]))


def summary(s: Situation, stopped: bool = False) -> str:
    """The final answer: what the failure was, what changed, how the tests went."""
    failure = _failure_sentence(s)
    parts = [failure.strip()] if failure else []
    change = s.change
    done = s.edit_done
    if done is not None and change is not None:
        old_line, new_line = _changed_line(done.input)
        old = _split_value(_assignment(change.name).sub(r"\g<rest>", old_line))[0]
        new = _split_value(_assignment(change.name).sub(r"\g<rest>", new_line))[0]
        parts.append(f"Changed {change.name} from {old} to {new} in {done.input['file_path']}{_tests_clause(s)}.")
    else:
        parts.append("I have not changed anything yet.")
    if stopped:
        parts.append(f"I stopped there: I reached my limit of {MAX_TOOL_CALLS} tool calls for one task.")
    return " ".join(parts)


def _shell_word(text: str) -> str:
    """``text`` as one shell word: in double quotes when that is safe, else ``shlex.quote``."""
    return f'"{text}"' if not set(text) & set('"$`\\!') else shlex.quote(text)


def compaction_summary(body: dict[str, Any]) -> Turn:
    """The answer to a summarising request (the context pipeline's compaction): the task and the steps so far.

    Its first line, ``Primary request: <the task>``, is what ``read_conversation``
    reads the task from after the compaction.
    """
    ask = compact_prompt().split("\n", 1)[0]
    messages = [{**m, "content": [b for b in _blocks(m.get("content")) if not str(b.get("text", "")).startswith(ask)]}
                for m in body.get("messages", [])]
    conversation = read_conversation({**body, "messages": messages})
    lines = [f"Primary request: {conversation.prompt}"]
    for step in conversation.steps:
        outcome = "failed" if step.is_error else "done"
        first = next((line for line in step.result.splitlines() if line.strip()), "")[:80]
        lines.append(f"- {step.name} {json.dumps(step.input)[:80]}: {outcome}; {first}")
    lines.append(f"Done so far: {len(conversation.steps)} tool calls. Next: continue the task from here.")
    return _final("\n".join(lines))


def explain_grammar(prompt: str) -> Turn:
    """The honest answer to a prompt outside the grammar."""
    shown = " ".join(prompt.split())
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    heard = f'"{shown}" is not one of them.' if prompt else "I got no task text."
    return _final(
        "Offline, dreamloop's model is a small rule-based demo agent, not Claude, and it does only two tasks:\n"
        "  • set NAME to VALUE [in FILE]  (or: change NAME to VALUE [in FILE]), e.g. change value to 2\n"
        "  • make the failing test pass\n"
        f"{heard} To ask a real model, go live: set ANTHROPIC_API_KEY and run\n"
        f"  dreamloop run --live {_shell_word(shown or '...')}\n"
        "(set ANTHROPIC_BASE_URL too to use any Anthropic-compatible endpoint)."
    )


# ---------------------------------------------------------------------------
# The policy


def demo_policy(body: dict[str, Any], index: int) -> Turn:
    """The next turn of the demo agent for a Messages API request body.

    A ``Policy`` (see ``scripts.py``): ``body`` is the parsed JSON request
    (``messages``, ``tools``, ``system``...), ``index`` the request's number,
    unused: everything is decided from the body. Each turn is a short text
    saying what the agent does next, plus one ``tool_use``; the last turn is
    text only. Deterministic.

    >>> body = {"messages": [{"role": "user", "content": "change value to 2"}], "tools": [{"name": "Grep"}]}
    >>> [block["type"] for block in demo_policy(body, 0).content]
    ['text', 'tool_use']
    >>> demo_policy(body, 0).content[0]["text"]
    "I'll find where `value` is set."
    """
    if is_compaction_request(body):
        return compaction_summary(body)
    conversation = read_conversation(body)
    task = parse_task(conversation.prompt)
    if task is None:
        return explain_grammar(conversation.prompt)
    s = Situation(task, conversation)
    # The plan is a list of steps; the first one with work left (or a reason to stop) acts.
    plan = FIX_PLAN if isinstance(task, FixFailingTest) else SET_PLAN
    turn = next((t for t in (step(s) for step in plan) if t is not None), None)
    if turn is None:
        return _final(summary(s))
    if any(b["type"] == "tool_use" for b in turn.content) and len(s.steps) >= MAX_TOOL_CALLS:
        return _final(summary(s, stopped=True))
    return turn
