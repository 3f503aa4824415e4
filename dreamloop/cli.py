"""The ``dreamloop`` command: ``demo``, ``run``, ``replay``, ``serve-fake``.

``demo`` is the main job: a small real project is copied to a temporary
directory and "change value to 2" runs through ``query()`` against the
offline API with the real tools, printed turn by turn. ``run`` runs any
prompt, offline (the demo policy) or ``--live``; it is the production loop:
every branch that exists is on (``--no-…`` turns one off; ``--json`` and the
trace say which were on). This module parses arguments and wires the pieces;
the loop lives in ``query.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.syntax import Syntax

__all__ = ["main"]

DEMO_PROMPT = "change value to 2"
TEST_COMMAND_PREFIXES = ("python -m unittest", "python3 -m unittest")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dreamloop", description="The agent loop of a coding agent, running.")
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help='run "change value to 2" on a copy of the sample project, offline')
    demo.add_argument("--trace", type=Path, help="save the run's trace (JSONL) here")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace")

    run = sub.add_parser("run", help="run any prompt through the loop")
    run.add_argument("prompt")
    run.add_argument("--workspace", type=Path, default=Path.cwd(), help="root the tools are confined to (default: .)")
    run.add_argument("--live", action="store_true", help="use the live API (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL)")
    run.add_argument("--model", default=None, help="model name (live: default dreamloop.model.DEFAULT_LIVE_MODEL)")
    run.add_argument("--max-turns", type=int, default=None)
    run.add_argument("--permission-mode", choices=["default", "accept-edits", "bypass"], default="default")
    run.add_argument("--trace", type=Path, help="save the run's trace (JSONL) here")
    run.add_argument("--json", action="store_true",
                     help="print the Terminal, the switches that were on and the transcript as JSON")
    run.add_argument("--no-streaming-tools", dest="streaming_tools", action="store_false",
                     help="run tools after the whole response (default: each call starts when its block is complete)")

    replay = sub.add_parser("replay", help="print a saved trace")
    replay.add_argument("trace", type=Path)

    fake = sub.add_parser("serve-fake", help="serve the offline Messages API on 127.0.0.1")
    fake.add_argument("--port", type=int, default=8765)
    fake.add_argument("--script", default=None, help="JSON/YAML list of turns, or module:function policy")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dreamloop`` command; returns the exit status (2: bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return asyncio.run(_demo(args))
        if args.command == "run":
            return asyncio.run(_run(args))
        if args.command == "replay":
            from .render import print_trace
            from .trace import Trace

            print_trace(Trace.load(args.trace), _console())
            return 0
    except (ValidationError, ValueError, FileNotFoundError, MissingCredentials) as error:
        parser.error(_one_line(error))
    from .fake_api import serve_fake_main

    return serve_fake_main(["--port", str(args.port)] + (["--script", args.script] if args.script else []))


class MissingCredentials(Exception):
    """``--live`` without a key: said before anything is sent."""


def _one_line(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
    return str(error)


def allow_test_commands(prefixes: tuple[str, ...] = TEST_COMMAND_PREFIXES) -> Any:
    """A ``can_use_tool`` that allows Bash running the project's unittest command.

    Every other call gets the tool's own decision under the permission mode
    (``check_permissions``), as if no ``can_use_tool`` were given.
    """
    from .tools import Allow

    async def can_use_tool(tool: Any, input: dict[str, Any], context: Any) -> Any:
        command = str(input.get("command", "")).strip()
        if tool.name == "Bash" and command.startswith(prefixes) and not set(";|&$`<>") & set(command):
            return Allow()
        if context.permission_mode == "bypass":
            return Allow()
        return await tool.check_permissions(tool.input_model.model_validate(input), context)

    return can_use_tool


async def _demo(args: argparse.Namespace) -> int:
    from .demo import copy_sample_project, demo_policy, sample_project_path
    from .model import offline
    from .query import QueryParams, query
    from .render import print_run, workspace_diff
    from .tools import builtin_tools

    console = _console()
    workspace = copy_sample_project()
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
    if not args.keep:
        shutil.rmtree(workspace, ignore_errors=True)
    return 0 if terminal.reason == "completed" and diff else 1


async def _run(args: argparse.Namespace) -> int:
    from .model import live, offline
    from .query import QueryParams, query
    from .render import print_run
    from .tools import builtin_tools

    if args.live:
        if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
            raise MissingCredentials("--live needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN); "
                                     "set ANTHROPIC_BASE_URL too for an Anthropic-compatible endpoint")
        model = live(args.model) if args.model else live()
    else:
        from .demo import demo_policy

        model = offline(demo_policy, **({"model": args.model} if args.model else {}))
    if not args.workspace.is_dir():
        raise FileNotFoundError(f"--workspace {args.workspace} is not a directory")
    console = _console(stderr=args.json)
    params = QueryParams(
        messages=args.prompt,
        model=model,
        tools=builtin_tools(),
        workspace=args.workspace.resolve(),
        permission_mode=args.permission_mode,
        ask=_terminal_ask(console) if sys.stdin.isatty() and not args.json else None,
        can_use_tool=None if args.live else allow_test_commands(),
        max_turns=args.max_turns,
        streaming_tool_execution=args.streaming_tools,
    )
    run = query(params)
    if args.json:
        async for _ in run:
            pass
        transcript = [m.model_dump(mode="json") for m in run.messages]
        print(json.dumps({"terminal": run.terminal.model_dump(mode="json"), "switches": params.switches(),
                          "transcript": transcript}, indent=2))
    else:
        console.print(f"[bold]user:[/] {args.prompt}")
        await print_run(run, console)
    if args.trace:
        run.trace.save(args.trace)
    return 0 if run.terminal.reason == "completed" else 1


def _console(stderr: bool = False) -> Console:
    """A rich Console; 100 columns when the output is not a terminal (logs, pipes), so lines don't wrap at 80."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 100)


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
