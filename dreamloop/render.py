"""Rich rendering of a run, turn by turn, for the terminal and notebooks.

``TurnPrinter`` prints what a reader of the loop wants to see: each turn's
turn_count and transition, the model's text and tool_use calls, the paired
tool_result blocks, tokens, notices and the Terminal. ``print_run()`` drives it
from a live ``QueryRun``; ``print_trace()`` from a saved ``Trace``. Output is
deterministic (no ids, no times). It knows nothing about how the loop works.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.control import strip_control_codes
from rich.panel import Panel
from rich.segment import Segment
from rich.rule import Rule
from rich.text import Text

from .hooks import describe_record
from .language import tr
from .messages import (AssistantMessage, AttachmentMessage, SystemMessage, TombstoneMessage, ToolUseSummaryMessage,
                       UnknownContentBlock, UserMessage)
from .state import Continue, Terminal
from .tokens import usage_text

__all__ = ["SafeConsole", "TurnPrinter", "print_run", "print_trace", "visible", "workspace_diff"]

_CONTROL_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A)},  # ESC -> ␛, BEL -> ␇, CR -> ␍ ...
    0x7F: 0x2421,  # DEL -> ␡
    **{code: 0xFFFD for code in range(0x80, 0xA0)},  # C1 controls (0x9B is a one-byte CSI in some terminals)
}


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # the characters _CONTROL_PICTURES changes, and CR


def visible(text: str) -> str:
    """``text`` with every control character shown as a picture (ESC as ␛, BEL as ␇), tab and newline kept.

    What the model writes, a file holds or a command prints may carry escape sequences (clear the
    screen, set the window title, rewrite the line); printed raw, the terminal would obey them.
    """
    if _CONTROL.search(text) is None:  # most text: no character to change (a search is far cheaper than translate)
        return text
    return text.replace("\r\n", "\n").translate(_CONTROL_PICTURES)


class SafeConsole(Console):
    """A rich ``Console`` that never writes a control character it was given: its text is ``visible()``.

    rich's own styling (colours, bold, links) is still written; only the characters of the text
    printed are changed, so no escape sequence from a model, a file or a command reaches the terminal.
    """

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(segment if segment.control else Segment(visible(segment.text), segment.style)
                                      for segment in buffer)

_PREVIEW_LINES = 6


def _preview(content: Any, lines: int = _PREVIEW_LINES) -> str:
    """The first and last lines of a result (the end of a test run matters most)."""
    if isinstance(content, list):
        content = "\n".join(b.get("text", json.dumps(b)) for b in content)
    rows = [row.rstrip() for row in str(content).rstrip().splitlines()] or [""]
    if len(rows) <= lines:
        return "\n".join(rows)
    half = lines // 2
    return "\n".join(rows[:half] + [tr("… ({count} more lines)", count=len(rows) - 2 * half)] + rows[-half:])


_HOLD = 400  # lines a holding printer prints at once


def _plain(text: str) -> str:
    """``text`` as rich writes it without styles through a ``SafeConsole``: BEL, BS, VT, FF and CR dropped, other
    control characters shown."""
    return visible(strip_control_codes(text)) if _CONTROL.search(text) else text


def _rule_line(title: str, width: int) -> Text:
    """``Rule(title, align="left")``'s characters as one line: the title (cut with … to fit), then ─ up to
    ``width`` cells."""
    if cell_len(title) > width - 2:
        title = set_cell_size(title, max(width - 3, 0)) + "…"
    return Text(title + " ") + Text("─" * max(width - cell_len(title) - 1, 0), style="cyan")


def _call(block: Any) -> str:
    """``Name(key=value, ...)``; an input that is not an object (a model's mistake) as its JSON."""
    if not isinstance(block.input, dict):
        return f"{block.name}({json.dumps(block.input)[:60]})"
    args = ", ".join(f"{k}={json.dumps(v)[:60]}" for k, v in block.input.items())
    return f"{block.name}({args})"


class TurnPrinter:
    """Prints a run's turns to a rich ``Console``.

    ``hold=True`` keeps lines and prints them as one text (every ``_HOLD`` lines, before the Terminal and at
    ``flush()``), written directly where the console writes no styles (a pipe, a file); a turn's rule is then
    a line of the same characters. The same text as line by line; printing a trace of 5,000 model calls to a
    pipe takes about 1.2 s instead of 12 s (rich costs about 0.2 ms per ``print`` call). A live run prints each
    line as it comes.
    """

    def __init__(self, console: Console | None = None, *, hold: bool = False) -> None:
        self.console = console or SafeConsole()
        self.usage = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_input_tokens",
                                    "cache_creation_input_tokens"), 0)  # the run's totals
        self._calls: dict[str, Any] = {}
        self._held: list[Text] | None = [] if hold else None

    def say(self, line: Text) -> None:
        """Print one line (kept, where the printer holds its lines, until ``_HOLD`` lines or the Terminal)."""
        if self._held is None:
            self.console.print(line)
            return
        self._held.append(line)
        if len(self._held) >= _HOLD:
            self.flush()

    def flush(self) -> None:
        """Print the lines held so far (nothing where the printer does not hold them)."""
        if not self._held:
            return
        console = self.console
        if console.color_system is None and not console.record and not console.is_jupyter:
            self._write_plain(console)
        else:
            console.print(Text("\n").join(self._held))
        self._held.clear()

    def _write_plain(self, console: Console) -> None:
        """No styles to write: each held line as rich writes it (control codes dropped, tabs expanded, escapes
        shown), written directly; a line wider than the console goes through rich, which wraps it."""
        width, chunk = console.width, []
        for line in self._held:
            text = line.plain
            if "\t" in text:
                expanded = line.copy()
                expanded.expand_tabs(console.tab_size)
                text = expanded.plain
            wide = 2 * len(text) > width  # a character takes at most 2 cells: shorter text always fits
            if wide and any(cell_len(row) > width for row in text.split("\n")):
                if chunk:
                    console.file.write(_plain("\n".join(chunk)) + "\n")
                    chunk = []
                console.print(line)
            else:
                chunk.append(text)
        if chunk:
            console.file.write(_plain("\n".join(chunk)) + "\n")

    def turn(self, turn_count: int, transition: Continue | None) -> None:
        why = transition.reason if transition else "None"
        if transition is not None and transition.detail:
            why += f" ({transition.detail})"
        title = f"turn_count={turn_count}  transition={why}"
        if self._held is None:
            self.console.print(Rule(title, align="left", style="cyan"))
        else:  # the rule's text as one held line: the same characters, the title not highlighted
            self.say(_rule_line(title, self.console.width))

    def assistant(self, message: AssistantMessage) -> None:
        usage = message.message.usage
        for field in self.usage:
            self.usage[field] += getattr(usage, field, 0) or 0
        for block in message.message.content:
            if block.type == "text" and block.text.strip():
                self.say(Text("assistant: ", style="bold") + Text(block.text))
            elif block.type == "tool_use":
                self._calls[block.id] = block
                self.say(Text("  tool_use  ", style="bold magenta") + Text(_call(block)))
            elif block.type in ("thinking", "redacted_thinking"):
                self.say(Text(f"  ({block.type})", style="dim"))
            elif isinstance(block, UnknownContentBlock):
                self.say(Text("  " + tr("({kind}: a block type this version does not know, kept as received)",
                                        kind=block.type), style="dim"))
        self.say(Text(
            f"  stop_reason={message.message.stop_reason}  {usage_text(usage)}",
            style="dim"))

    def tool_results(self, message: UserMessage) -> None:
        for block in message.message["content"]:
            if block.get("type") != "tool_result":
                continue
            call = self._calls.get(block["tool_use_id"])
            name = call.name if call else "?"
            failed = block.get("is_error", False)
            head = Text("  tool_result ", style="bold red" if failed else "bold green")
            head += Text(f"{name} {'✗ is_error' if failed else '✓'}")
            self.say(head)
            self.say(Text("    " + _preview(block.get("content", "")).replace("\n", "\n    "), style="dim"))

    def notice(self, message: Any) -> None:
        if isinstance(message, SystemMessage):
            style = {"error": "bold red", "warning": "yellow"}.get(message.level, "blue")
            self.say(Text(f"  [{message.subtype}] {message.content}", style=style))
        elif isinstance(message, AttachmentMessage) and str(message.attachment.get("type")).startswith("hook_"):
            self.say(Text(f"  hook  {describe_record(message.attachment)}", style="magenta"))
        elif isinstance(message, AttachmentMessage) and "text" in message.attachment:  # phase 5's notices
            said = message.attachment
            where = said.get("name") or said.get("path", "")  # in the workspace: its path there (same on any machine)
            head = f"  attachment {said.get('type')} {where} ({said.get('change', '')})"
            self.say(Text(head, style="blue"))
        elif isinstance(message, AttachmentMessage) and message.attachment.get("type") == "queued_command":
            prompt = message.attachment.get("prompt", "")  # what the person typed, quoted as one line
            self.say(Text(f"  attachment queued_command {json.dumps(prompt, ensure_ascii=False)}", style="blue"))
        elif isinstance(message, AttachmentMessage):
            self.say(Text(f"  attachment {json.dumps(message.attachment)}", style="blue"))
        elif isinstance(message, ToolUseSummaryMessage):
            self.say(Text(f"  summary of {', '.join(message.tool_use_ids)}: {message.summary}", style="dim"))
        elif isinstance(message, TombstoneMessage):
            self.say(Text(f"  tombstone  withdrawn {message.target_uuid} ({message.reason})", style="dim"))
        elif isinstance(message, UserMessage) and not message.source_tool_use_ids:
            self.say(Text("user: ", style="bold") + Text(_preview(message.message["content"])))

    def message(self, message: Any) -> None:
        if isinstance(message, AssistantMessage):
            self.assistant(message)
        elif isinstance(message, UserMessage) and message.source_tool_use_ids:
            self.tool_results(message)
        else:
            self.notice(message)

    def terminal(self, terminal: Terminal) -> None:
        body = f"reason={terminal.reason}  turn_count={terminal.turn_count}"
        body += "\n" + usage_text(SimpleNamespace(**self.usage))
        if terminal.error:
            body += f"\nerror: {terminal.error}"
        style = "green" if terminal.reason == "completed" else "yellow"
        self.flush()
        self.console.print(Panel(body, title="Terminal", border_style=style, expand=False))


async def print_run(run: Any, console: Console | None = None) -> Terminal:
    """Iterate ``run`` (a ``QueryRun``), printing it turn by turn; return its Terminal."""
    printed = None  # the State whose turn header is printed (another request in it says so instead)
    printer = TurnPrinter(console)
    async for event in run:
        if event.type == "stream_request_start" and event.attempt > 1 and run.state is printed:
            printer.console.print(Text(f"  (request {event.attempt} of this turn)", style="dim"))
        elif event.type == "stream_request_start":
            printer.turn(event.turn_count, run.state.transition if run.state else None)
            printed = run.state
        elif event.type not in ("stream_event", "progress"):
            printer.message(event)
    printer.terminal(run.terminal)
    return run.terminal


class _Nested(TurnPrinter):
    """A sub-agent's run printed inside its parent's, under the ``Agent`` call: each line behind ``  │ ``, the
    Terminal one line."""

    def __init__(self, outer: TurnPrinter) -> None:
        super().__init__(outer.console, hold=True)
        self.outer = outer

    def say(self, line: Text) -> None:
        self.outer.say(Text("  │ ", style="dim") + line)

    def flush(self) -> None:
        self.outer.flush()

    def turn(self, turn_count: int, transition: Continue | None) -> None:
        why = transition.reason if transition else "None"
        self.say(_rule_line(f"turn_count={turn_count}  transition={why}", self.console.width - 4))

    def terminal(self, terminal: Terminal) -> None:
        self.say(Text(f"Terminal: reason={terminal.reason}  turn_count={terminal.turn_count}"
                      + (f"  error: {terminal.error}" if terminal.error else ""),
                      style="green" if terminal.reason == "completed" else "yellow"))


def print_trace(trace: Any, console: Console | None = None) -> None:
    """Print a saved ``Trace`` the way ``print_run`` printed it live.

    A trace of several runs (an imported session file) prints the
    prompts that started each later run too, and every checkpoint's notes. A sub-agent's run
    (``trace.children``) is printed nested under the ``Agent`` call that started it, after that call's
    line: its prompt, its turns and its Terminal, each line behind ``  │ ``.
    """
    printer = TurnPrinter(console, hold=True)
    _print_points(trace, printer)
    printer.flush()
    if trace.terminal is None and trace.source is None:
        printer.console.print(Text("(the trace ends without a Terminal: the run did not finish, or its last "
                                   "checkpoint was lost)", style="yellow"))


def _print_points(trace: Any, printer: TurnPrinter) -> None:
    previous = None
    for point in trace.checkpoints:
        if point.index == 0 or point.transition is None:
            before = set(previous.messages_after) if previous is not None else set()  # read only where a run begins
            prompts = [m for m in trace.resolve(point.state_messages) if m.uuid not in before
                       and m.type == "user" and not m.source_tool_use_ids and not m.is_meta]
            for prompt in prompts[-1:] if point.index == 0 else prompts:
                printer.notice(prompt)
        printer.turn(point.turn_count, point.transition)
        for message in trace.resolve(point.assistant_messages):
            printer.message(message)
            for block in message.message.content if message.type == "assistant" else ():
                child = trace.children.get(block.id) if block.type == "tool_use" else None
                if child is not None:
                    printer.say(Text(f"  sub-agent of {block.name} call {block.id}: {len(child.checkpoints)} "
                                     "model calls", style="bold"))
                    _print_points(child, _Nested(printer))
        for message in trace.resolve(point.tool_results + point.attachments):
            printer.message(message)
        for note in point.notes:
            printer.say(Text(f"  note: {note}", style="dim italic"))
        if point.terminal:
            printer.terminal(point.terminal)
        previous = point


def workspace_diff(before: Path, after: Path, files: Iterable[str] | None = None) -> str:
    """A unified diff of text files that differ between two directory trees."""
    names = sorted(files) if files is not None else sorted(
        {str(p.relative_to(before)) for p in before.rglob("*") if p.is_file()}
        | {str(p.relative_to(after)) for p in after.rglob("*") if p.is_file()})
    chunks = []
    for name in names:
        if "__pycache__" in name:
            continue
        old, new = before / name, after / name
        a = old.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) if old.exists() else []
        b = new.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) if new.exists() else []
        if a != b:
            chunks.extend(difflib.unified_diff(a, b, f"a/{name}", f"b/{name}"))
    return "".join(chunks)
