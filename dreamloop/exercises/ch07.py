"""Chapters 07 and 07b: hooks: the exercise checks (the stop hook of 07; the rm guard and the settings file of 07b)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from ..tools.permissions import allow_test_commands
from ..demo import copy_sample_project, demo_policy
from ..errors import HookError
from ..hooks import Hooks, load_hooks, run_hooks
from ..language import N_, tr
from ..model import offline
from ..query import QueryParams, query
from ..scratch import scratch_dir
from ..scripts import reply, tool_use
from ..tools import builtin_tools
from ._checking import Verdict, _Fail, _require_callable, _run, _short, _stub_message, _verdict

__all__ = ["check_no_recursive_rm", "check_settings_hook", "check_tests_stop_hook"]

TASK = "set retries to 5"
"""The prompt the stop-hook check gives the demo agent: done as asked, it leaves test_value failing."""

_TASK_LINE = "make the failing test pass"


def _test_run_passes(workspace: Path) -> bool:
    done = subprocess.run([sys.executable, "-m", "unittest", "discover", "-s", "tests", "-p", "check_*.py"],
                          cwd=workspace, capture_output=True, text=True, timeout=60)
    return done.returncode == 0


def check_tests_stop_hook(hook: Any) -> Verdict:
    """Check a ``stop`` hook that blocks while the workspace's tests fail and lets the loop end once they pass.

    The check runs "set retries to 5" on a fresh copy of the sample project with the demo agent and your
    hook: the agent does as asked and stops while ``test_value`` still fails; your hook must block with
    feedback the agent can act on, then let the loop end ``completed`` when the tests pass.
    """
    todo = tr("run the project's tests in the workspace the input names; while they fail, block with the failures "
              "and the line '{task}' as the reason; once they pass, have no opinion.", task=_TASK_LINE)
    idea = tr("a stop hook blocks while the test run fails (its reason is the model's feedback) and has no opinion "
              "once it passes; the run happens in the workspace the input names.")

    def body() -> str:
        _require_callable(hook, "tests_must_pass")

        async def attempt() -> tuple[Any, Any, bool]:
            workspace = copy_sample_project()
            try:
                hooks = Hooks().add("stop", hook)
                run = query(QueryParams(messages=TASK, model=offline(demo_policy), tools=builtin_tools(),
                                        workspace=workspace, permission_mode="accept-edits",
                                        can_use_tool=allow_test_commands(), max_turns=30, hooks=hooks))
                async for _ in run:
                    pass
                return run, run.terminal, _test_run_passes(workspace)
            finally:
                shutil.rmtree(workspace, ignore_errors=True)

        try:
            run, terminal, passing = _run(attempt, timeout=60)
        except HookError as error:
            _unfinished(error, todo)
            raise _Fail(tr("your hook raised or returned something that is not a decision: {error}", error=error),
                        tr("a hook answers with its event's decision model, a dict shaped like its JSON, or None.")) \
                from None
        blocks = [p for p in run.trace.checkpoints if p.next_transition and p.next_transition.reason == "stop_hook_blocking"]
        feedback = [m.message["content"] for m in run.messages if m.type == "user" and m.is_meta]
        if terminal.reason == "completed" and not blocks:
            raise _Fail(tr("the loop ended `completed` while test_value still failed: your hook never blocked."),
                        tr("a stop hook with no opinion lets the loop end; it has to block while the tests fail."))
        if terminal.reason == "stop_hook_prevented" and any(m.type == "system" and m.subtype == "stop_hook_prevented"
                                                             for m in run.messages):
            raise _Fail(tr("your hook prevented continuation (continue_=False): the run ended instead of going on."),
                        tr("continue_=False ends the run; a block sends the reason to the model and the loop goes "
                           "on."))
        if terminal.reason == "stop_hook_prevented":
            last = feedback[-1] if feedback else ""
            if passing:
                raise _Fail(tr("the tests pass, yet your hook blocked {count} times until the runaway guard ended "
                               "the run: it never lets the loop end.", count=len(blocks)),
                            tr("decide from how the test run ended, run in the workspace the input names; once it "
                               "succeeds, the hook has no opinion."))
            if _TASK_LINE not in last.lower():
                raise _Fail(tr("the agent could not act on your feedback ({said!r}); the runaway guard ended the "
                               "run.", said=_short(last, 120)),
                            tr("the offline agent understands a task on a line of its own: end the reason with the "
                               "line '{task}'.", task=_TASK_LINE))
            raise _Fail(tr("the runaway guard ended the run after {count} blocks.", count=len(blocks)), idea)
        if terminal.reason != "completed" or not passing:
            raise _Fail(tr("the run ended {reason} with the tests passing.", reason=terminal.reason) if passing else
                        tr("the run ended {reason} with the tests failing.", reason=terminal.reason), idea)
        _stop_scenarios(hook, todo, idea)
        return tr("your hook blocked {count} time(s) ({said!r}), the agent fixed value, and the loop ended "
                  "completed with the tests passing; on {scenarios} other projects it decided from their tests.",
                  count=len(blocks), said=_short(_last_line(feedback[0]), 60), scenarios=len(_SCENARIOS))

    return _verdict(tr("tests-must-pass stop hook"), body)


_SCENARIOS = [
    # (what the project is like, file edits on the sample project, stop_hook_active, the failing test or None)
    (N_("retries set to 0 as well, and the model already answering a block"),
     {"config.py": ("retries = 3", "retries = 0")}, True, "test_retries_is_positive"),
    (N_("every test passing"), {"config.py": ("value = 1", "value = 2")}, False, None),
    (N_("value already 2, but the greeting broken"), {"config.py": ("value = 1", "value = 2"),
                                                   "greeter.py": ("Hello from {config.name}", "Hello")},
     False, "test_greeting_names_the_app"),
]
"""Projects the stop hook is called on directly, after the run (the learner never sees them): a stop hook
decides from the test run in ``input.cwd`` every time, also while ``stop_hook_active`` (the runaway guard,
not the hook, bounds the blocks), and its reason names what failed."""


def _stop_scenarios(hook: Any, todo: str, idea: str) -> None:
    for what, edits, active, failing in _SCENARIOS:
        workspace = copy_sample_project()
        try:
            for name, (old, new) in edits.items():
                path = workspace / name
                path.write_text(path.read_text().replace(old, new, 1))
            hooks = Hooks().add("stop", hook)
            input = hooks.input("stop", workspace=workspace, stop_hook_active=active)
            try:
                outcome = _run(lambda: run_hooks(hooks, input), timeout=60)
            except HookError as error:
                _unfinished(error, todo)
                raise _Fail(tr("on a project with {what}, your hook raised or returned something that is not a "
                               "decision: {error}", what=tr(what), error=error),
                            tr("a hook answers with its event's decision model, a dict shaped like its JSON, or "
                               "None.")) from None
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        decision = outcome.decision
        blocked = decision.decision == "block" and not outcome.stopped
        reason = decision.reason or ""
        if failing is None and (blocked or outcome.stopped):
            raise _Fail(tr("on a project with {what}, your hook still blocked.", what=tr(what)), idea)
        if failing is None:
            continue
        if not blocked:
            raise _Fail(tr("on a project with {what}, a test fails, yet your hook let the loop end{active}.",
                           what=tr(what), active=tr(" (stop_hook_active=True)") if active else ""),
                        tr("block whenever the test run fails, also while stop_hook_active is True: the runaway "
                           "guard bounds the blocks, and the model must keep working until the tests pass.")
                        if active else
                        tr("decide from running the tests in the workspace the input names, not from what a file "
                           "says."))
        if failing not in reason:
            raise _Fail(tr("on a project with {what}, your reason does not name the failing test ({test}): the "
                           "model reads only the reason.", what=tr(what), test=failing),
                        tr("put the failing lines of the test run in the reason (unittest writes them to stderr)."))
        if reason.strip().splitlines()[-1].strip().lower() != _TASK_LINE:
            raise _Fail(tr("on a project with {what}, your reason does not end with the line '{task}'.",
                           what=tr(what), task=_TASK_LINE),
                        tr("the offline agent understands a task on a line of its own: end the reason with the "
                           "line '{task}'.", task=_TASK_LINE))


def _unfinished(error: HookError, todo: str) -> None:
    """The untouched exercise cell: say what to do, not the answer."""
    if isinstance(error.__cause__, NotImplementedError):
        raise _Fail(tr("your hook raised NotImplementedError({error!r}): the exercise is not done yet.",
                       error=_stub_message(_short(error.__cause__))),
                    tr("replace the `raise NotImplementedError(...)` line with your code: {todo}", todo=todo)) from None


# ---------------------------------------------------------------------------
# A pre_tool_use hook that denies a recursive rm


_DENY = ["rm -rf build", "rm -fr /", "rm -r -f ~/project", "ls && rm -rf .", "rm --recursive old", "rm -R dist",
         "cd /tmp; rm -rf *", "rm -f -r build", "rm -vR logs", "sudo rm -rf /var/tmp", "/bin/rm -rf build",
         "find . -name '*.tmp' | xargs rm -rf", "(cd build && rm -rf *)", "echo $(rm -rf ~)", "rm --force --recur x",
         "env LC_ALL=C rm -Rf out", "true\nrm -rf ~", 'echo "$(rm -rf ~)"', "{ rm -rf cache; }"]
"""Commands a recursive-rm guard must deny: the spellings a model (or an attacker steering it) reaches for."""
_ALLOW = ["ls -la", "python -m unittest discover -s tests", "rm notes.txt", "grep -rf patterns.txt .",
          "cat README.md", "rm -f stale.pyc", "rm notes.txt && grep -r TODO .", "chmod -R u+w build", "cp -r src dst",
          "rmdir -p a/b", "echo 'never run rm -rf /'", "grep -rn 'rm -rf' docs", "./perform -r",
          'echo "x; rm -rf y"', "git commit -m 'rm -rf is gone'"]
"""Commands it must leave alone: no rm at all, an rm that is not recursive, a recursive flag on another command,
``rm -rf`` as text (quoted, searched for; a ``;`` inside quotes separates nothing)."""

_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U", "-r", "-t", "--user", "--group",
                       "--host", "--prompt", "--close-from", "--chdir", "--chroot", "--command-timeout",
                       "--other-user", "--role", "--type"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "xargs": frozenset({"-n", "-I", "-L", "-P", "-d", "-s", "-E", "-a", "--max-args", "--max-lines",
                        "--max-procs", "--delimiter", "--max-chars", "--eof", "--arg-file"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
}
"""Commands that run the command after them (``sudo rm -rf /`` runs ``rm``), each with its options that take the
next word as their value (``sudo -u root``, ``nice -n 10``; ``timeout`` then takes a duration). Every other
option is a flag of the wrapper's own: ``xargs -r`` (run nothing on empty input) is not ``rm``'s ``-r``."""

_WRAPPER_USES: dict[str, tuple[str, ...]] = {
    "sudo": ("", "-u root", "-n", "-E -u deploy", "--user=root"),
    "doas": ("", "-u root", "-n"),
    "env": ("", "-i", "-u HOME", "FOO=1", "-i PATH=/bin"),
    "command": ("", "-p"),
    "exec": ("", "-a worker"),
    "nohup": ("",),
    "nice": ("", "-n 5", "-5", "--adjustment=5"),
    "time": ("", "-p"),
    "xargs": ("", "-0", "-n 1", "-I {}", "-r"),
    "timeout": ("5", "-s KILL 10s", "-k 5 10", "--signal=TERM 1m"),
}
"""How each wrapper is written, bare and with its options: every use is tried around a recursive rm (deny) and
around a command that deletes nothing recursively (allow), so a guard that knows a wrapper's name but not its
options, or takes a wrapper's option for rm's, is caught."""


def _wrapped(wrapper: str, use: str, command: str) -> str:
    line = " ".join(part for part in (wrapper, use, command) if part)
    return f"find build -name '*.o' | {line}" if wrapper == "xargs" else line


_WRAPPED_DENY = [_wrapped(w, use, "rm -rf build") for w, uses in _WRAPPER_USES.items() for use in uses]
_WRAPPED_ALLOW = [_wrapped(w, use, command) for w, uses in _WRAPPER_USES.items() for use in uses
                  for command in ("rm -f notes.txt", "ls -R")]


def _substitution(line: str, i: int) -> tuple[str, int]:
    """The command line inside ``$( ... )`` or backticks starting at ``line[i]``, and the index after it."""
    if line[i] == "`":
        end = line.find("`", i + 1)
        end = len(line) if end < 0 else end
        return line[i + 1:end], end + 1
    depth, j = 1, i + 2
    while j < len(line) and depth:
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        j += 1
    return line[i + 2:j - 1 if depth == 0 else j], j


def _commands(line: str) -> list[list[str]]:
    """The words of each command a shell line runs: split at ``;``, ``&``, ``|``, a newline, parentheses and ``{ }``
    outside quotes; ``$( )`` and backticks are commands of their own, also inside double quotes; quoted text is
    one word (``echo "x; rm -rf y"`` is one command). A guard rail's reading of the shell, not a parser."""
    commands: list[list[str]] = []
    words: list[str] = []
    word: str | None = None

    def end_word() -> None:
        nonlocal word
        if word is not None:
            if word in ("{", "}"):
                end_command()
            else:
                words.append(word)
            word = None

    def end_command() -> None:
        if words:
            commands.append(list(words))
            words.clear()

    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            word, i = (word or "") + line[i + 1], i + 2
        elif c == "'":
            end = line.find("'", i + 1)
            end = len(line) if end < 0 else end
            word, i = (word or "") + line[i + 1:end], end + 1
        elif c == '"':
            i, text = i + 1, ""
            while i < len(line) and line[i] != '"':
                if line[i] == "\\" and i + 1 < len(line):
                    text, i = text + line[i + 1], i + 2
                elif line.startswith("$(", i) or line[i] == "`":
                    inner, i = _substitution(line, i)
                    commands.extend(_commands(inner))
                else:
                    text, i = text + line[i], i + 1
            word, i = (word or "") + text, i + 1
        elif line.startswith("$(", i) or c == "`":
            inner, i = _substitution(line, i)
            commands.extend(_commands(inner))
            word = word or ""
        elif c in ";&|\n()":
            end_word()
            end_command()
            i += 1
        elif c.isspace():
            end_word()
            i += 1
        else:
            word, i = (word or "") + c, i + 1
    end_word()
    end_command()
    return commands


def _command_words(words: list[str]) -> list[str]:
    """The words of the command that runs: past ``NAME=value`` assignments and wrappers with their options."""
    i = 0
    while i < len(words):
        word = words[i]
        name = Path(word).name
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word):
            i += 1
        elif name in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-") and words[i] != "-":
                if words[i] == "--":
                    i += 1
                    break
                i += 2 if words[i] in _WRAPPERS[name] else 1
            if name == "timeout" and i < len(words) and re.fullmatch(r"[\d.]+[smhd]?", words[i]):
                i += 1  # timeout 10 rm -rf x
        else:
            break
    return words[i:]


def recursive_rm(command: str) -> bool:
    """Does ``command`` run ``rm`` recursively anywhere (``-r``, ``-R``, ``--recursive`` or a prefix of it such
    as ``--recur``, in any flag group)?

    The answer key of ``check_no_recursive_rm``: the line is read as commands (``_commands``: split at ``;``,
    ``&``, ``|``, a newline, parentheses and braces outside quotes; ``$( )`` and backticks are commands too);
    a command's first word, past ``NAME=value`` and the wrappers of ``_WRAPPERS`` with their options
    (``sudo -u root``, ``nice -n 5``, ``timeout 5``, ``xargs -0``), is ``rm`` (any path: ``/bin/rm``), and one
    of its flags before ``--`` asks for recursion. Quoted text is not a command (``echo 'rm -rf /'``). A guard
    rail, not a sandbox: ``eval``, ``bash -c``, ``find -delete`` and friends pass.
    """
    for words in _commands(command):
        words = _command_words(words)
        if not words or Path(words[0]).name != "rm":
            continue
        for word in words[1:]:
            if word == "--":
                break
            if word in ("-r", "-R") or (len(word) >= 3 and "--recursive".startswith(word)) or (
                    re.fullmatch(r"-[A-Za-z]+", word) and set("rR") & set(word)):
                return True
    return False


def check_no_recursive_rm(hook: Any) -> Verdict:
    """Check a ``pre_tool_use`` hook for Bash that denies a recursive ``rm`` with a reason and has no
    opinion on anything else; then the same hook in the loop, where the denied call still gets its result."""
    todo = tr("deny a Bash command that runs rm recursively, with a reason; have no opinion on anything else.")
    idea = tr("a recursive rm can be spelt -rf, -fr, -r -f, -R or --recursive, can follow ; && | or a newline, "
              "sit inside ( ), $( ) or backticks, and run under sudo, env or xargs: look at each command of the "
              "line, past its wrappers, and at every flag its rm gets.")

    def decide(command: str) -> Any:
        hooks = Hooks().add("pre_tool_use", hook, matcher="Bash")
        input = hooks.input("pre_tool_use", tool_name="Bash", tool_input={"command": command}, tool_use_id="toolu_1")
        try:
            return _run(lambda: run_hooks(hooks, input, value="Bash")).decision
        except HookError as error:
            _unfinished(error, todo)
            cause = error.__cause__
            if isinstance(cause, TypeError) and "returned" in str(cause):
                returned = str(cause).removeprefix("it returned ").split(";", 1)[0]
                raise _Fail(tr("for {command!r} it returned {returned}; a pre_tool_use hook returns "
                               "PreToolUseDecision(...), a dict shaped like its JSON, or None.", command=command,
                               returned=returned),
                            tr("a hook answers with its event's decision model (PreToolUseDecision); dl.Deny is "
                               "can_use_tool's answer, not a hook's.")) from None
            raise _Fail(tr("for {command!r} your hook raised {kind}: {error}", command=command,
                           kind=type(cause).__name__, error=_short(cause, 120)), idea) from None

    def body() -> str:
        _require_callable(hook, "no_recursive_rm")
        for command in [*_DENY, *_WRAPPED_DENY]:
            got = decide(command)
            if got.decision != "deny":
                raise _Fail(tr("{command!r} was not denied (decision={decision!r}).", command=command,
                               decision=got.decision), idea)
            if not (got.reason or "").strip():
                raise _Fail(tr("{command!r} was denied without a reason: the model reads only the reason.",
                               command=command),
                            tr('give reason="..." saying what is not allowed, so the model can do something else.'))
        for command in [*_ALLOW, *_WRAPPED_ALLOW]:
            got = decide(command)
            if got.decision == "deny":
                raise _Fail(tr("{command!r} was denied, but it deletes nothing recursively.", command=command),
                            tr("deny only a recursive rm; for anything else return None (no opinion), so the "
                               "normal permission decision applies."))
            if got.decision is not None:
                raise _Fail(tr("{command!r} got decision={decision!r}; expected None (no opinion).", command=command,
                               decision=got.decision),
                            tr("return None for commands you don't deny: 'allow' would skip the permission prompt."))

        async def in_the_loop() -> tuple[Any, Any]:
            model = offline([reply("Cleaning up first.", tool_use("Bash", {"command": "rm -rf build"}, id="toolu_1"),
                                   tool_use("Bash", {"command": "echo ok"}, id="toolu_2")),
                             reply("I won't delete it.")])
            hooks = Hooks().add("pre_tool_use", hook, matcher="Bash")
            workspace = scratch_dir("ch07-")
            try:
                run = query(QueryParams(messages="clean up", model=model, tools=builtin_tools(), workspace=workspace,
                                        permission_mode="bypass", hooks=hooks))
                async for _ in run:
                    pass
            finally:
                shutil.rmtree(workspace, ignore_errors=True)
            return run, [r.body for r in model.api.requests if r.path.endswith("/v1/messages")]

        run, bodies = _run(in_the_loop)
        results = bodies[-1]["messages"][-1]["content"]
        denied, ran = results[0], results[1]
        if not (denied.get("is_error") and ran.get("content") == "ok" and run.terminal.reason == "completed"):
            raise _Fail(tr("in the loop the results were {results}.", results=_short(results, 160)), idea)
        return tr("{denied} recursive rm denied with a reason, {allowed} other commands left alone; in the loop the "
                  "denied call got its is_error result ({content!r}), the other ran.",
                  denied=len(_DENY) + len(_WRAPPED_DENY), allowed=len(_ALLOW) + len(_WRAPPED_ALLOW),
                  content=_short(denied["content"], 50))

    return _verdict(tr("no recursive rm hook"), body)


# ---------------------------------------------------------------------------
# A guard in a Claude Code settings file

PUSH = "git push --force origin main"
PUSHES = [PUSH, "git push origin main", "cd app && git push", "git  push -f"]
"""Pushes the guard must block: forced or not, after another command, however it is spaced."""
SAFE = ["python -m unittest discover -s tests", "git status", "ls", "git stash push -m wip",
        "python scripts/push_metrics.py", "echo pushed"]
"""Commands it must let through, ``push`` in some of them but no ``git push``."""


def check_settings_hook(settings: Any) -> Verdict:
    """Check a settings dict (or JSON text) whose ``PreToolUse`` command hook on ``Bash`` blocks
    any ``git push`` with exit code 2 and a reason on stderr, and lets other commands through."""
    shape = tr('a settings file is {"hooks": {EVENT: [{"matcher": ..., "hooks": [{"type": "command", '
               '"command": ...}]}]}}; the command gets the event as JSON on stdin.')

    def body() -> str:
        if isinstance(settings, str):
            try:
                data = json.loads(settings)
            except json.JSONDecodeError as error:
                raise _Fail(tr("that is not JSON ({error}).", error=error.msg), shape) from None
        else:
            data = settings
        if not isinstance(data, dict):
            raise _Fail(tr("expected the settings as a dict (or JSON text), got {kind}.", kind=type(data).__name__),
                        shape)
        folder = scratch_dir("ch07-")
        try:
            path = folder / "settings.json"
            path.write_text(json.dumps(data))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    hooks = load_hooks(path)
                except ValueError as error:
                    raise _Fail(tr("your settings: {error}", error=str(error).replace(f"{path}: ", "", 1)),
                                shape) from None
            if hooks.unsupported:
                said = "; ".join(u.replace(str(path), "settings") for u in hooks.unsupported)
                said = said.replace(" (only type 'command' runs)", tr(" (only type 'command' runs)"))
                raise _Fail(tr("these would not run: {hooks}", hooks=said),
                            tr('use the event name PreToolUse and "type": "command".'))
            if not any(e.event == "pre_tool_use" for e in hooks.entries):
                raise _Fail(tr("your settings have no PreToolUse hook yet: the exercise is not done yet."),
                            tr("add to PreToolUse one entry whose matcher names the Bash tool and whose hook is a "
                               "command that reads the event on stdin and blocks a git push, saying why."))
            if not hooks.matching("pre_tool_use", "Bash"):
                matchers = [e.matcher for e in hooks.entries if e.event == "pre_tool_use"]
                raise _Fail(tr("no PreToolUse hook matches the tool name Bash (matchers: {matchers}).",
                               matchers=matchers),
                            tr('matchers are case-sensitive tool names: "Bash".'))

            def outcome(command: str) -> Any:
                input = hooks.input("pre_tool_use", workspace=folder, tool_name="Bash",
                                    tool_input={"command": command}, tool_use_id="toolu_1")
                return _run(lambda: run_hooks(hooks, input, value="Bash"), timeout=30)

            for command in PUSHES:
                blocked = outcome(command)
                record = blocked.records[0].attachment if blocked.records else {}
                if blocked.decision.decision != "deny":
                    code = record.get("exitCode")
                    if code not in (None, 0, 2):
                        raise _Fail(tr("for {command!r} your command exited {code}: a non-blocking error, so the "
                                       "call would still run.", command=command, code=code),
                                    tr("block with exit 2 (any other non-zero exit code fails open)."))
                    if command != PUSH:
                        raise _Fail(tr("{command!r} was not blocked: it is a git push too.", command=command),
                                    tr("block any git push: forced or not, wherever it is on the line, however "
                                       "many spaces are between git and push."))
                    raise _Fail(tr("{command!r} was not blocked (exit code {code}, stdout {stdout!r}).",
                                   command=command, code=code, stdout=_short(record.get("stdout", ""), 60)),
                                tr("the event arrives as JSON on stdin, never as arguments: the command must read "
                                   "its standard input to see the tool's input."))
                if "No stderr output" in (blocked.decision.reason or ""):
                    raise _Fail(tr("{command!r} was blocked, but with nothing on stderr: the model is told no "
                                   "reason.", command=command),
                                tr("with exit code 2 the model reads only stderr: write the reason there."))
            blocked = outcome(PUSH)
            for command in SAFE:
                allowed = outcome(command)
                if allowed.decision.decision == "deny":
                    raise _Fail(tr("{command!r} was blocked too, and it is no git push.", command=command),
                                tr("exit 0 unless the command holds git push (git, then push, as words)."))
                failed = [r.attachment for r in allowed.records if r.attachment["type"] == "hook_non_blocking_error"]
                if failed:
                    raise _Fail(tr("for {command!r} your hook failed: {error}", command=command,
                                   error=_short(failed[0]["content"], 120)),
                                tr("exit 0 when there is nothing to block."))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return tr("{pushes} pushes blocked by exit 2 ({reason!r}), {count} other commands let through.",
                  pushes=len(PUSHES), reason=_short(blocked.decision.reason.split("]: ")[-1], 50), count=len(SAFE))

    return _verdict(tr("settings-file hook"), body)


def _last_line(feedback: str) -> str:
    """The stop feedback's last line of the hook's own words (not the ``<system-reminder>`` tags around it)."""
    lines = [line for line in feedback.splitlines() if line.strip() not in ("<system-reminder>", "</system-reminder>")]
    return lines[-1] if lines else ""
