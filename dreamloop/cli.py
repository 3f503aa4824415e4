"""The ``dreamloop`` command: ``demo``, ``sample``, ``run``, ``replay``, ``import-claude-code``, ``serve-fake``,
``compare``.

``demo`` is the main job: a small real project is copied to a temporary
directory and "change value to 2" runs through ``query()`` against the
offline API with the real tools, printed turn by turn. ``sample DIR`` copies
that project to DIR, a safe place to try ``run``, which runs any prompt,
offline (the demo policy), ``--live`` (``--record`` writes a cassette) or
from a recorded cassette (``--cassette``), as the production loop: Claude Code
2.1.332 as observed (``presets.observed_loop()``, the one place its defaults live; every
branch that exists is on, each with a flag to turn it off: ``--no-hooks``,
``--no-context`` / ``--no-stage STAGE``, ``--no-recovery`` / ``--no-recovery-branch
BRANCH``, ``--results-in-call-order``; ``--fallback-model NAME``, ``--token-budget N`` and
``--sibling-rule`` turn those on; where Claude Code 2.1.332 as observed (``max_tokens_once``,
``tool_use_without_block``, ...) differs from both texts, the defaults follow the observation),
and exits with the code of its
Terminal reason (``EXIT_CODES``). ``import-claude-code`` rebuilds a session
file call by call. ``run`` is the production loop: every branch
that exists is on (``--no-…`` turns one off; ``--json`` and the trace say which
were on). This module parses arguments, checks them before anything runs, and
wires the pieces; the loop lives in ``query.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any, Iterator

from pydantic import ValidationError
from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

from .context.options import STAGES
from .tools.permissions import allow_test_commands  # the demo's policy (chapters import it from here too)

RECOVERY_BRANCHES = ("max_output_tokens_escalate", "max_output_tokens_recovery", "collapse_drain_retry",
                     "reactive_compact_retry", "streaming_fallback")
"""The recovery branches (``RecoveryOptions``' flags), each named as its transition. ``run`` turns on
all but the escalation, which Claude Code 2.1.332 did not use in ``max_tokens_once``
(``presets.observed_recovery()``); ``--recovery-branch`` turns on the others, ``--no-recovery-branch`` turns one off."""

__all__ = ["EXIT_CODES", "main"]

DEMO_PROMPT = "change value to 2"

EXIT_CODES: dict[str, int] = {
    "completed": 0,
    "aborted_streaming": 3,
    "aborted_tools": 4,
    "max_turns": 5,
    "model_error": 6,
    "prompt_too_long": 7,
    "blocking_limit": 8,
    "image_error": 9,
    "stop_hook_prevented": 10,
    "hook_stopped": 11,
    "api_error": 13,
    "malformed_tool_use_exhausted": 14,
}
"""``dreamloop run``'s exit status per Terminal reason. 1 is left to an unexpected crash (a traceback) and
2 to a usage error (bad arguments, nothing ran), as command-line tools expect; every other reason has its
own code from 3 up. The numbers are documented (``--help``, README): never renumber, only add."""

EXIT_CRASH, EXIT_USAGE = 1, 2

EXIT_PROMPT_BLOCKED = 12
"""``dreamloop run``'s exit status when a ``UserPromptSubmit`` hook blocked the prompt: no run, no Terminal."""


def _exit_codes_help() -> str:
    rows = [f"  {code:>2}  {reason}" for reason, code in EXIT_CODES.items()]
    return "\n".join(["exit status (the run's Terminal reason):", *rows[:1],
                      f"  {EXIT_CRASH:>2}  an unexpected crash (a traceback)",
                      f"  {EXIT_USAGE:>2}  a usage error (bad arguments; nothing ran)", *rows[1:],
                      f"  {EXIT_PROMPT_BLOCKED:>2}  a UserPromptSubmit hook blocked the prompt (nothing ran)"])


def _parser() -> argparse.ArgumentParser:
    from .model import DEFAULT_LIVE_MODEL
    from .presets import observed_recovery

    seen = observed_recovery()  # the defaults the help states are the preset's own

    parser = argparse.ArgumentParser(prog="dreamloop", description="The agent loop of a coding agent, running.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help='run "change value to 2" on a copy of the sample project, offline',
                          description='Run "change value to 2" on a fresh copy of the sample project, offline '
                                      "(the demo policy plays the model; the tools are real).")
    demo.add_argument("--trace", type=Path, metavar="FILE", help="save the run's trace (JSONL) here")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace (its path is printed)")

    sample = sub.add_parser("sample", help="copy the sample project to DIR: a safe workspace for `run`",
                            description="Copy the sample project (config.py, greeter.py and their tests) to "
                                        "DIR, which must be empty or not exist yet. Then: "
                                        'dreamloop run "set retries to 5" --workspace DIR')
    sample.add_argument("dir", type=Path, metavar="DIR", help="where the copy goes (empty or new)")

    run = sub.add_parser("run", help="run any prompt through the loop (exit status: its Terminal reason)",
                         description="Run one prompt through the production loop with the built-in tools\n"
                                     "in --workspace (default: the current directory, as Claude Code does;\n"
                                     "`dreamloop sample DIR` makes a safe one to try). Offline, the demo\n"
                                     "policy plays the model; --live uses a real one. Ctrl-C stops the run\n"
                                     "(Terminal aborted_streaming or aborted_tools).",
                         epilog=_exit_codes_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("prompt", help="what to ask (not empty)")
    run.add_argument("--workspace", type=Path, default=None, metavar="DIR",
                     help="root the tools are confined to; every edit lands here (default: the current directory)")
    run.add_argument("--live", action="store_true", help="use the live API (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL)")
    run.add_argument("--model", default=None, metavar="NAME",
                     help=f"model name (default: {DEFAULT_LIVE_MODEL} with --live, claude-scripted-1 offline)")
    run.add_argument("--max-turns", type=_positive_int, default=None, metavar="N",
                     help="end with Terminal max_turns instead of starting turn N+1 (default: no limit)")
    run.add_argument("--permission-mode", choices=["default", "accept-edits", "bypass"], default=None,
                     help="what runs without asking: default (read-only calls), accept-edits (+ file edits "
                          "in the workspace), bypass (everything). Without a terminal to ask on, anything "
                          "else is denied. (default: default)")
    run.add_argument("--trace", type=Path, metavar="FILE", help="save the run's trace (JSONL) here")
    run.add_argument("--json", action="store_true",
                     help="print the Terminal, token totals, the switches that were on and the transcript as "
                          "JSON on stdout (the rest goes to stderr)")
    run.add_argument("--record", type=Path, metavar="CASSETTE",
                     help="record every request, response (raw SSE) and tool result here (never the key)")
    run.add_argument("--cassette", type=Path, metavar="CASSETTE",
                     help="replay a recorded run: the model's side comes from CASSETTE, offline")
    run.add_argument("--recorded-tools", action="store_true",
                     help="with --cassette: answer tool calls with the recorded results instead of running them")
    run.add_argument("--thinking-budget", type=int, metavar="TOKENS",
                     help="extended thinking with this budget (>= 1024, below the output limit)")
    run.add_argument("--settings", type=Path, action="append", default=[], metavar="FILE",
                     help="run the hooks of this Claude Code settings file (repeatable; merged in order). "
                          "Without it the hooks branch is on with no hook: a workspace's own settings never run "
                          "unasked")
    run.add_argument("--no-hooks", action="store_true", help="turn the hooks branch off")
    # A flag left out is None: the preset's value (presets.observed_fields()) holds, never a copy of it here.
    run.add_argument("--no-streaming-tools", dest="streaming_tool_execution", action="store_const", const=False,
                     help="run tools after the whole response (default: each call starts as soon as its "
                          "tool_use block is complete, while the model still streams)")
    run.add_argument("--sibling-rule", action="store_const", const=True,
                     help="a Bash call that ran and failed cancels the calls beside and after it (dreamloop's "
                          "reading of the executor; default: off, as Claude Code 2.1.332 was observed)")
    run.add_argument("--results-in-call-order", dest="results_as_finished", action="store_const", const=False,
                     help="send the results of parallel calls in call order (default: in the order the calls "
                          "finished, as Claude Code 2.1.332 sends them)")
    run.add_argument("--no-context", action="store_true",
                     help="turn the context pipeline off (default: every stage on, thresholds from the model's "
                          "window)")
    run.add_argument("--no-stage", action="append", default=[], choices=STAGES, metavar="STAGE",
                     help=f"turn one context stage off (repeatable): {', '.join(STAGES)}")
    run.add_argument("--context-window", type=_positive_int, default=None, metavar="TOKENS",
                     help="the context window in tokens (default: the model's, from the Models API)")
    run.add_argument("--no-recovery", action="store_true",
                     help="turn the recovery branches off (default: as Claude Code 2.1.332 was seen to recover: "
                          "after a max_tokens cut, resume up to 3 times, then end api_error; a stream that breaks "
                          "part-way is asked again (the streaming fallback); after 'prompt is too long', drain the "
                          "staged collapses, then compact once; stop_reason tool_use without a tool_use block is "
                          "asked again twice)")
    run.add_argument("--no-recovery-branch", action="append", default=[], choices=RECOVERY_BRANCHES,
                     metavar="BRANCH",
                     help=f"turn one recovery branch off (repeatable): {', '.join(RECOVERY_BRANCHES)}")
    run.add_argument("--recovery-branch", action="append", default=[], choices=RECOVERY_BRANCHES, metavar="BRANCH",
                     help="turn on a branch the source text names that Claude Code 2.1.332 was not seen to use "
                          "(repeatable): max_output_tokens_escalate (the first cut raises the limit to 64,000)")
    run.add_argument("--max-tokens-exhausted", choices=["api_error", "completed"], default=None,
                     help="how a run ends when max_tokens cuts outlast the resumes: api_error or completed (the "
                          f"source text); default: {seen.max_tokens_exhausted}, as Claude Code 2.1.332 in "
                          "max_tokens_always")
    run.add_argument("--malformed-tool-use-retries", type=int, default=None, metavar="N",
                     help="stop_reason tool_use without a tool_use block: ask again N times, then end "
                          f"malformed_tool_use_exhausted (default {seen.malformed_tool_use_retries}, as Claude Code "
                          "2.1.332 in tool_use_without_block; 0: end completed at once)")
    run.add_argument("--max-tokens", type=_positive_int, default=None, metavar="TOKENS",
                     help="the output limit of each request (default: each model's own, as Claude Code 2.1.332 "
                          "sent it: 128,000 to claude-opus-5-5, 32,000 to claude-sonnet-4-5 and claude-haiku-4-5, "
                          "at most 64,000 on a request sent again without streaming; another model's from its "
                          "information)")
    run.add_argument("--no-observed-output-limits", dest="observed_output_limits", action="store_false",
                     default=None,
                     help="with no --max-tokens, take each model's output limit from its information (the Models "
                          "API) alone, not as Claude Code 2.1.332 sent it")
    run.add_argument("--fallback-model", default=None, metavar="NAME",
                     help="after 3 overloaded attempts in a row (or a 404 for the model), switch to this model "
                          "(same endpoint) and ask it again; what the failed attempts showed is withdrawn "
                          "(default: no fallback)")
    run.add_argument("--token-budget", type=_positive_int, default=None, metavar="N",
                     help="an output-token budget for the run: a turn that ends under 90%% of it goes on with a "
                          "note of how much is used, until diminishing returns (default: no budget)")
    run.add_argument("--system-prompt", default=None, metavar="TEXT",
                     help="use TEXT as the system prompt instead of dreamloop's own (the environment block still "
                          "follows it unless --no-environment)")
    run.add_argument("--append-system-prompt", default=None, metavar="TEXT",
                     help="add TEXT to the end of the system prompt (after a blank line)")
    run.add_argument("--no-environment", dest="environment", action="store_const", const=False,
                     help="tell the model nothing about where it runs (default: working directory, platform, git "
                          "repository or not, after the system prompt; the date before the first prompt)")
    run.add_argument("--no-memory-files", dest="memory_files", action="store_const", const=False,
                     help="do not send the CLAUDE.md files (default: the workspace's, its parents' up to the "
                          "repository root, and ~/.claude/CLAUDE.md open the first user message)")
    run.add_argument("--no-file-state", dest="file_state", action="store_const", const=False,
                     help="let Write and Edit change a file the model has not read as it is now (default: they "
                          "refuse it, as Claude Code 2.1.332 was seen to do)")
    run.add_argument("--no-background-tasks", dest="background_tasks", action="store_const", const=False,
                     help="Bash refuses run_in_background (default: the command runs in the background and the "
                          "model is told once when it ends)")
    run.add_argument("--no-sub-agents", dest="sub_agents", action="store_const", const=False,
                     help="offer no Agent tool (default: Agent is offered, and a call without run_in_background runs "
                          "its sub-agent in the background, its answer arriving as a notification, as Claude Code "
                          "2.1.332 was seen to do)")
    run.add_argument("--changed-files", action="store_const", const=True,
                     help="tell the model when a file it read, or a CLAUDE.md, changes on disk during the run "
                          "(default: off, as Claude Code 2.1.332 was seen to do within one run)")
    run.add_argument("--tool-use-summaries", action="store_const", const=True,
                     help="make a one-line summary of each batch of tool calls (live: one small extra request per "
                          "batch, outside the conversation; default: off)")

    replay = sub.add_parser("replay", help="print a saved trace")
    replay.add_argument("trace", type=Path, metavar="FILE", help="a trace saved with --trace")

    claude = sub.add_parser("import-claude-code", help="rebuild the model calls of a Claude Code session file",
                            description="Rebuild a Claude Code session file (~/.claude/projects/<project>/"
                                        "<session>.jsonl) as one checkpoint per model call, print it, and save "
                                        "it as a trace for the State inspector.")
    claude.add_argument("file", type=Path, metavar="FILE", help="a session file (or a subagent's agent-*.jsonl)")
    claude.add_argument("--branch", default=None, metavar="UUID",
                        help="the branch to rebuild (a uuid or a prefix; default: the last main-thread branch)")
    claude.add_argument("--list-branches", action="store_true", help="list the branches (rewinds, sidechains) and stop")
    claude.add_argument("--trace", type=Path, metavar="FILE", help="save the rebuilt trace (JSONL) here")

    from .fake_api.server import add_serve_fake_arguments

    add_serve_fake_arguments(sub.add_parser(
        "serve-fake", help="serve the offline Messages API on 127.0.0.1 (a free port, printed)",
        description="Serve the offline Messages API on 127.0.0.1 for curl or any SDK, until Ctrl-C. It prints\n"
                    "the port it chose and the ANTHROPIC_BASE_URL to use."))

    from .compare.command import add_compare_arguments

    add_compare_arguments(sub.add_parser(
        "compare", help="Claude Code and dreamloop on the same scripts, side by side (MATCH or DIFFER)",
        description="Run each scenario through Claude Code (claude -p) and dreamloop run, each against its own\n"
                    "offline API server with the same script, and compare the requests they sent and how they\n"
                    "ended. Without Claude Code, dreamloop's side runs alone.",
        formatter_class=argparse.RawDescriptionHelpFormatter))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dreamloop`` command; returns the exit status.

    Each command checks everything it can first: a problem there is a usage
    error (exit 2, said on stderr) and nothing has run. Then it runs: ``run``
    exits with ``EXIT_CODES[terminal.reason]``; 1 is only ever an unexpected
    crash (Python's own status for an uncaught exception).
    """
    from .tools.environment import hand_off_credentials, take_credentials

    if argv is None:
        take_credentials()  # started again by hand_off_credentials: the key comes through a pipe
    parser = _parser()
    args = parser.parse_args(argv)
    if argv is None and args.command == "run" and args.live:
        hand_off_credentials()  # a command cannot read the key in /proc/$PPID/environ (issue 24, item 10b)
    try:
        if args.command == "demo":
            _check_output_path(args.trace, "--trace")
        elif args.command == "sample":
            return _sample(args)
        if args.command == "run":
            prepared = _prepare_run(args)
        elif args.command == "replay":
            from .trace import Trace

            if args.trace.is_dir():
                raise ValueError(f"{args.trace} is a directory; give a trace file saved with --trace")
            with warnings.catch_warnings(record=True) as caught:  # a torn last line: skipped, said on stderr
                warnings.simplefilter("always")
                trace = Trace.load(args.trace)
            for warning in caught:
                print(f"dreamloop replay: warning: {_one_line(Exception(warning.message))}", file=sys.stderr)
        elif args.command == "import-claude-code":
            session, trace = _prepare_import(args)
    except (ValidationError, ValueError, FileNotFoundError, FileExistsError, KeyError, MissingCredentials) as error:
        _subparser(parser, args.command).error(_one_line(error))
    if args.command == "demo":
        return asyncio.run(_demo(args))
    if args.command == "run":
        return asyncio.run(_run(*prepared))
    if args.command == "replay":
        from .render import print_trace

        print_trace(trace, _console())
        return 0
    if args.command == "import-claude-code":
        return _import_claude_code(args, session, trace)
    if args.command == "compare":
        from .compare.command import run_compare

        return run_compare(args, _subparser(parser, "compare"))
    from .fake_api.server import run_serve_fake

    return run_serve_fake(args, _subparser(parser, "serve-fake"))


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (its usage line heads an error about it)."""
    for action in parser._subparsers._group_actions if parser._subparsers else []:  # noqa: SLF001
        if command in getattr(action, "choices", {}):
            return action.choices[command]
    return parser


def _positive_int(text: str) -> int:
    """argparse type for counts: an int >= 1 (argparse names the flag in its error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _prepare_run(args: argparse.Namespace) -> tuple[Any, argparse.Namespace, Any, _NobodyToAsk, Any]:
    """Everything ``run`` checks before it starts; a usage error is raised here, never after an edit.

    Returns the ``QueryParams``, the arguments, the console, the non-interactive ``ask`` and the
    ``Cassette`` being replayed (or None).
    """
    from .context.environment import run_system_prompt
    from .model import live, offline
    from .presets import observed_fields, observed_loop
    from .tools import builtin_tools

    if not args.prompt.strip():
        raise ValueError("the prompt is empty: say what the agent should do, e.g. "
                         'dreamloop run "set retries to 5" --workspace DIR')
    workspace = args.workspace if args.workspace is not None else Path.cwd()
    if not workspace.is_dir():
        raise FileNotFoundError(f"--workspace {workspace} is not a directory")
    workspace = workspace.resolve()
    _check_not_the_package(workspace, given=args.workspace is not None)
    _check_output_path(args.trace, "--trace")
    _check_output_path(args.record, "--record")
    if args.thinking_budget is not None and args.thinking_budget < 1024:
        raise ValueError(f"--thinking-budget must be at least 1024 tokens (the API's minimum), "
                         f"not {args.thinking_budget}")
    if args.recorded_tools and not args.cassette:
        raise ValueError("--recorded-tools replays a cassette's tool results: give --cassette too")
    if args.thinking_budget is not None and args.max_tokens is not None and args.max_tokens <= args.thinking_budget:
        raise ValueError(f"--thinking-budget {args.thinking_budget} must be below --max-tokens {args.max_tokens}")
    thinking = {"type": "enabled", "budget_tokens": args.thinking_budget} if args.thinking_budget else None
    options: dict[str, Any] = {"record": args.record, "thinking": thinking}
    if args.model:
        options["model"] = args.model
    console = _console(stderr=args.json)
    preset = observed_fields()  # Claude Code 2.1.332 as observed; a flag changes only what it names
    hooks = None if args.no_hooks else _load_hooks(args.settings, console, preset["hooks"])
    tools, replayed = builtin_tools(), None  # last: a recording model creates its cassette file
    if args.live:
        if args.cassette:
            raise ValueError("--live and --cassette exclude each other (a cassette replays a live run offline)")
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise MissingCredentials("--live needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); "
                                     "set ANTHROPIC_BASE_URL too for an Anthropic-compatible endpoint")
        _check_base_url(os.environ.get("ANTHROPIC_BASE_URL"))
        model = live(**options)
    elif args.cassette:
        from .fake_api.cassette import cassette

        replayed = cassette(args.cassette)
        model = offline(replayed, **options)
        if args.recorded_tools:
            tools = replayed.tools(like=tools)
    else:
        from .demo import demo_policy

        model = offline(demo_policy, **options)
    interactive = sys.stdin.isatty() and not args.json
    nobody = _NobodyToAsk()
    flags = {name: getattr(args, name) for name in (
        "streaming_tool_execution", "sibling_rule", "results_as_finished", "max_tokens", "fallback_model",
        "token_budget", "environment", "memory_files", "file_state", "changed_files", "tool_use_summaries",
        "observed_output_limits", "background_tasks", "sub_agents")}
    if args.system_prompt is not None or args.append_system_prompt is not None:
        flags["system_prompt"] = run_system_prompt(args.system_prompt, args.append_system_prompt)
    params = observed_loop(
        messages=args.prompt,
        model=model,
        tools=tools,
        workspace=workspace,
        permission_mode=args.permission_mode or "default",
        ask=_terminal_ask(console) if interactive else nobody,
        can_use_tool=None if args.live or args.cassette else allow_test_commands(),
        max_turns=args.max_turns,
        hooks=hooks,
        context=_context_options(args, preset["context"]),
        recovery=_recovery_options(args, preset["recovery"]),
        **{name: value for name, value in flags.items() if value is not None},
    )
    return params, args, console, nobody, replayed


def _context_options(args: argparse.Namespace, preset: Any) -> Any:
    """The preset's pipeline (every context stage on, thresholds from the model's window), minus the
    ones turned off, with ``--context-window`` if given. None with ``--no-context``."""
    if args.no_context:
        _not_both("--no-context", "--no-stage", args.no_stage)
        return None
    window = {} if args.context_window is None else {"context_window": args.context_window}
    return preset.model_copy(update={**window, **{stage: None for stage in args.no_stage}})


def _not_both(whole: str, part: str, parts: list[str]) -> None:
    """A flag that turns one part off, beside the flag that turns the whole branch off: a usage error."""
    if parts:
        raise ValueError(f"{part} {parts[0]} with {whole}: {whole} already turns every part off; give one of them")


def _recovery_options(args: argparse.Namespace, preset: Any) -> Any:
    """The preset's recovery (``presets.observed_recovery()``), with the branches and settings the flags
    name; None with ``--no-recovery``."""
    from .recovery import RecoveryOptions

    if args.no_recovery:
        _not_both("--no-recovery", "--no-recovery-branch", args.no_recovery_branch)
        _not_both("--no-recovery", "--recovery-branch", args.recovery_branch)
        return None
    both = set(args.recovery_branch) & set(args.no_recovery_branch)
    if both:
        raise ValueError(f"--recovery-branch and --no-recovery-branch both name {sorted(both)[0]}: give one")
    if args.malformed_tool_use_retries is not None and args.malformed_tool_use_retries < 0:
        raise ValueError(f"--malformed-tool-use-retries must be 0 or more, not {args.malformed_tool_use_retries}")
    settings = {name: getattr(args, name) for name in ("max_tokens_exhausted", "malformed_tool_use_retries")
                if getattr(args, name) is not None}
    return RecoveryOptions(**{**preset.model_dump(), **{branch: True for branch in args.recovery_branch},
                              **{branch: False for branch in args.no_recovery_branch}, **settings})


def _load_hooks(settings: list[Path], console: Console, preset: Any) -> Any:
    """The hooks branch, on: the settings files' hooks (none given: the preset's, no hook, the branch still on).

    Hooks that cannot run are said on the console, not dropped silently; a broken file is a
    usage error (``load_hooks`` raises ``ValueError`` / ``FileNotFoundError``).
    """
    import warnings

    from .hooks import load_hooks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hooks = load_hooks(*settings) if settings else preset
    for line in hooks.unsupported:
        console.print(Text("hook not run: ", style="yellow") + Text(line))
    return hooks


def _check_base_url(url: str | None) -> None:
    """A malformed ``ANTHROPIC_BASE_URL`` is a usage error before the run, not a traceback at the first request."""
    if not url:
        return
    from urllib.parse import urlsplit

    problem = None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number in range)
    except ValueError as error:
        problem = str(error)
    else:
        if parts.scheme not in ("http", "https"):
            problem = "the scheme must be http or https"
        elif not parts.hostname or any(c.isspace() for c in url):
            problem = "no host name, or a space in it"
    if problem is None:
        import httpx2

        try:
            httpx2.URL(url)
        except httpx2.InvalidURL as error:  # the SDK's own URL parser: what it refuses is refused here first
            problem = str(error)
    if problem:
        raise ValueError(f"ANTHROPIC_BASE_URL {url!r} is not a URL the client can use ({problem}); "
                         "e.g. https://api.anthropic.com or http://127.0.0.1:8080")


def _check_not_the_package(workspace: Path, *, given: bool) -> None:
    """Refuse a workspace that holds dreamloop's own source: a run there could edit the sample project."""
    package = Path(__file__).resolve().parent
    if package == workspace or workspace in package.parents or package in workspace.parents:
        where = f"--workspace {workspace}" if given else f"the current directory ({workspace})"
        raise ValueError(f"{where} is or holds dreamloop's own package ({package}); a run there could edit the "
                         "package's sample project. Make a copy to work on: dreamloop sample DIR, then "
                         "dreamloop run ... --workspace DIR")


def _check_output_path(path: Path | None, flag: str) -> None:
    """An output file must be writable where it is going, checked before the run changes anything."""
    if path is None:
        return
    if path.is_dir():
        raise ValueError(f"{flag} {path} is a directory; give a file name (e.g. {path / 'run.jsonl'})")
    if path.is_symlink() and not path.exists():
        raise FileNotFoundError(f"{flag} {path} is a link to {os.readlink(path)}, which does not exist")
    parent = path.parent
    if not parent.is_dir():
        raise FileNotFoundError(f"{flag} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"{flag} {path}: not writable")


def _sample(args: argparse.Namespace) -> int:
    from .demo import copy_sample_project

    if args.dir.exists() and not args.dir.is_dir():
        raise FileExistsError(f"{args.dir} is a file; the sample project goes to an empty directory")
    workspace = copy_sample_project(args.dir)
    print(f"copied the sample project to {workspace}")
    print(f'try: dreamloop run "set retries to 5" --workspace {workspace}')
    return 0


class MissingCredentials(Exception):
    """``--live`` without a key: said before anything is sent."""


_FLAGS = {"messages": "prompt", "max_turns": "--max-turns", "permission_mode": "--permission-mode",
          "workspace": "--workspace", "model": "--model", "fallback_model": "--fallback-model",
          "token_budget": "--token-budget", "max_tokens": "--max-tokens"}
"""QueryParams fields set from a command-line flag: an error names the flag, not the field."""


def _one_line(error: Exception) -> str:
    """The error for stderr, its control characters shown, never obeyed (a file name can hold ESC too)."""
    from .render import visible

    if isinstance(error, KeyError):  # str() of a KeyError quotes its message
        return visible(str(error.args[0]) if error.args else "not found")
    if isinstance(error, ValidationError):
        return visible("; ".join(_one_error(e) for e in error.errors()))
    return visible(str(error))


def _one_error(error: Any) -> str:
    """One pydantic error as ``flag: what is wrong``, without pydantic's ``Value error,`` prefix.

    A check across fields has no location; its message starts ``field: ...`` and the field becomes its flag.
    """
    message = str(error["ctx"]["error"]) if error["type"] == "value_error" else error["msg"]
    if error["loc"]:
        where = _FLAGS.get(str(error["loc"][0]), ".".join(map(str, error["loc"])))
        return f"{where}: {message}"
    field, sep, rest = message.partition(": ")
    return f"{_FLAGS[field]}: {rest}" if sep and field in _FLAGS else message


async def _demo(args: argparse.Namespace) -> int:
    from .demo import copy_sample_project, demo_policy, sample_project_path
    from .model import offline
    from .query import QueryParams, query
    from .render import print_run, workspace_diff
    from .tools import builtin_tools

    console = _console()
    # --keep: a folder of its own that outlives the process; otherwise the kit's temporary one
    workspace = copy_sample_project(Path(tempfile.mkdtemp(prefix="dreamloop-demo-")) if args.keep else None)
    console.print("[bold]dreamloop demo[/]: offline API, demo policy, real tools on a copy of the sample project")
    console.print(f"workspace: {workspace}")
    console.print(f"[bold]user:[/] {DEMO_PROMPT}")
    params = QueryParams(
        messages=DEMO_PROMPT,
        model=offline(demo_policy),
        tools=builtin_tools(),
        workspace=workspace,
        permission_mode="accept-edits",
        can_use_tool=allow_test_commands(),
        max_turns=12,
    )
    run = query(params)
    terminal = await print_run(run, console)
    diff = workspace_diff(sample_project_path(), workspace)
    console.print(Syntax(diff or "(no changes)\n", "diff", theme="ansi_dark", background_color="default"))
    if args.trace:
        run.trace.save(args.trace)
        console.print(f"trace saved to {args.trace} (dreamloop replay {args.trace})")
    if args.keep:
        console.print(f"the workspace is kept: {workspace}")
    else:
        shutil.rmtree(workspace, ignore_errors=True)
    if terminal.reason != "completed":
        return EXIT_CODES[terminal.reason]
    return 0 if diff else EXIT_CRASH  # the demo's own job (a change) not done: unexpected


async def _run(params: Any, args: argparse.Namespace, console: Console, nobody: _NobodyToAsk,
               replayed: Any) -> int:
    from .hooks import submit_prompt
    from .query import query
    from .render import TurnPrinter, print_run

    console.print(f"workspace: {params.workspace}")
    if params.hooks is not None:  # user_prompt_submit runs before the loop; a block means no run
        check = await submit_prompt(params.hooks, args.prompt, workspace=params.workspace,
                                    permission_mode=params.permission_mode)
        if check.blocked:
            for message in check.messages:
                TurnPrinter(console).message(message)
            return EXIT_PROMPT_BLOCKED
        params = params.model_copy(update={"messages": [*params.messages, *check.messages]})
    run = query(params)
    with _ctrl_c_stops(run):
        if args.json:
            async for _ in run:
                pass
        else:
            console.print(f"[bold]user:[/] {args.prompt}")
            await print_run(run, console)
    if args.json:
        transcript = [m.model_dump(mode="json") for m in run.messages]
        print(json.dumps({"terminal": run.terminal.model_dump(mode="json"), "usage": _usage(run.messages),
                          "switches": run.trace.switches, "transcript": transcript}, indent=2))
    if args.trace:
        run.trace.save(args.trace)
    recorder = params.model.recorder
    if recorder is not None:
        recorder.finish(run)  # the results of a last turn no request carried
        console.print(f"recorded {recorder.exchanges} exchanges to {args.record} "
                      f"(replay: dreamloop run ... --cassette {args.record})", highlight=False, markup=False,
                      soft_wrap=True)
    if replayed is not None:
        said = str(replayed.first_difference) if replayed.first_difference else "every request matched the recording"
        console.print(f"replayed {params.model.api.consumed} of {len(replayed)} recorded responses; {said}",
                      highlight=False, markup=False, soft_wrap=True)
    if nobody.denied:
        _say_denied(nobody.denied, args.permission_mode)
    return EXIT_CODES[run.terminal.reason]


@contextlib.contextmanager
def _ctrl_c_stops(run: Any) -> Iterator[None]:
    """While the run goes, Ctrl-C fires its abort signal (Terminal aborted_*); a second Ctrl-C is Python's."""
    loop = asyncio.get_running_loop()

    def stop() -> None:
        loop.remove_signal_handler(signal.SIGINT)
        print("\nstopping (Ctrl-C fired the abort signal; press it again to quit at once)", file=sys.stderr)
        run.abort("interrupted (Ctrl-C)")

    try:
        loop.add_signal_handler(signal.SIGINT, stop)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _usage(messages: list[Any]) -> dict[str, int]:
    """Token totals over the run's assistant messages (the API's usage, summed). A request's input is
    ``input_tokens`` + ``cache_creation_input_tokens`` + ``cache_read_input_tokens`` (prompt caching)."""
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    totals = dict.fromkeys(keys, 0)
    for message in messages:
        if message.type == "assistant":
            usage = message.message.usage
            for key in keys:
                totals[key] += getattr(usage, key, None) or 0
    totals["requests"] = sum(1 for m in messages if m.type == "assistant")
    return totals


class _NobodyToAsk:
    """``run``'s ``ask`` without a terminal: deny, say why to the model, and remember it for stderr."""

    def __init__(self) -> None:
        self.denied: list[tuple[str, str]] = []

    async def __call__(self, tool: Any, input: dict[str, Any], reason: str) -> Any:
        from .tools import Deny

        self.denied.append((tool.name, reason))
        return Deny(f"{tool.name} needs permission and there is no one to ask: dreamloop run has no terminal "
                    f"to ask on ({reason}). Nothing was run.")


def _say_denied(denied: list[tuple[str, str]], mode: str | None) -> None:
    edits = any(name in ("Write", "Edit") for name, _ in denied)
    fix = "--permission-mode accept-edits" if edits and mode != "accept-edits" else "--permission-mode bypass"
    lines = [(f"dreamloop: {len(denied)} tool call(s) needed permission and there was no terminal to ask "
              "on, so they were denied and changed nothing:")]
    lines += [f"  {name}: {reason}" for name, reason in denied[:5]]
    if len(denied) > 5:
        lines.append(f"  … and {len(denied) - 5} more")
    lines.append(f"to let them run, re-run with {fix}"
                 + (" (file edits in the workspace)" if "accept-edits" in fix else " (everything: not a sandbox)"))
    from .render import visible

    print(visible("\n".join(lines)), file=sys.stderr)


def _prepare_import(args: argparse.Namespace) -> tuple[Any, Any]:
    """``import-claude-code``'s checks: the file reads, the branch exists, --trace is writable."""
    from .claude_code import read_session

    if args.file.is_dir():
        raise ValueError(f"{args.file} is a directory; give a session file (<session>.jsonl)")
    _check_output_path(args.trace, "--trace")
    session = read_session(args.file)
    trace = None if args.list_branches or not session.branches else session.trace(args.branch)
    return session, trace


def _import_claude_code(args: argparse.Namespace, session: Any, trace: Any) -> int:
    from .render import print_trace

    console = _console()
    kinds = ", ".join(f"{n} {kind}" for kind, n in session.record_types.most_common())
    console.print(f"{args.file.name}: Claude Code {', '.join(session.versions) or '?'}; {len(session.records)} "
                  f"records ({kinds or 'none'}); {len(session.branches)} branch(es)", highlight=False, markup=False)
    if session.torn_line:
        console.print(f"line {session.torn_line} is torn (a write cut short) and was skipped", style="yellow")
    if trace is None:
        for branch in session.branches:
            console.print(str(branch), highlight=False, markup=False)
        if not session.branches:
            console.print("no branch with a model call: nothing to rebuild")
        return 0
    branch = session.branch(args.branch)
    console.print(f"branch {branch.tip}{' (default)' if branch.default else ''}: {len(trace)} model calls "
                  f"(--list-branches lists all {len(session.branches)})", highlight=False, markup=False)
    console.print(trace.source["note"], style="yellow", highlight=False, markup=False)
    print_trace(trace, console)
    rejected = trace.source["rejected_exchanges"]
    console.print(f"{len(trace)} exchanges rebuilt; " + (
        f"the real API would have rejected {len(rejected)}: checkpoints {rejected}" if rejected
        else "every one passes the offline API's validation"), highlight=False, markup=False)
    if args.trace:
        trace.save(args.trace)
        console.print(f"trace saved to {args.trace} (StateInspector(Trace.load(...)) or dreamloop replay)",
                      highlight=False, markup=False)
    return 0


def _console(stderr: bool = False) -> Console:
    """A rich Console; 100 columns when the output is not a terminal (logs, pipes), so lines don't wrap at 80."""
    from .render import SafeConsole

    stream = sys.stderr if stderr else sys.stdout
    return SafeConsole(stderr=stderr, width=None if stream.isatty() else 100)


def _terminal_ask(console: Console) -> Any:
    """An ``ask`` that puts the permission question to the person at the terminal."""
    from .tools import Allow, Deny

    async def ask(tool: Any, input: dict[str, Any], reason: str) -> Any:
        question = f"{tool.name} {json.dumps(input)[:200]} — {reason}. Allow? [y/N] "
        answer = await asyncio.to_thread(console.input, question, markup=False)
        return Allow() if answer.strip().lower() in ("y", "yes") else Deny("The user denied this tool call.")

    return ask


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
