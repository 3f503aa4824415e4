"""The file tools: Read, Write, Edit, Glob, Grep.

Read, Edit and Write are named and shaped as Claude Code 2.1.332's: its recorded requests list tools of those
names (session 09, its run of ``max_tokens_always``), and in ``read_then_edit`` its Read and Edit took the same
scripted calls as dreamloop's (``file_path``; ``old_string``, ``new_string``). Glob and Grep are dreamloop's own:
no Claude Code 2.1.332 request recorded here lists a tool of either name.

Each resolves its paths inside ``context.workspace`` (``workspace.py``) and
does its file I/O in a worker thread (``asyncio.to_thread``), so the event
loop and its Stop/Allow buttons stay responsive; the thread checks a
``_Budget`` as it goes, so the tool time limit and an abort stop it (Grep's
regular expressions run on the ``regex`` engine, which takes a timeout and
releases the interpreter lock: a pattern that backtracks forever cannot
freeze the loop; ``_Matcher`` says how a file is searched fast). Results and
errors show workspace-relative paths.

Two rules, the same for every file tool:

* **UTF-8 text only.** Read and Edit refuse a binary file (a NUL byte in its
  first 8 KiB) or one that is not valid UTF-8, with an ``is_error`` result
  that says so; Grep skips such files and counts them. So no Read → Edit or
  Read → Write round trip can silently change bytes it did not show. (Write
  may replace any file whole: it writes UTF-8.)
* **Links.** Every file is opened through ``open_in_workspace`` (``workspace.py``): no
  link is followed from the root down at the moment of the open, so a file swapped for a
  symlink after its path was checked is refused, not read or written outside. Read, Write,
  Edit and Grep refuse a file with more than one hard link: the other names may lie outside
  the workspace (reading it would show an outside file; changing it would change them too).
  Bash is not confined (``workspace.py``).

These tools know nothing about permissions beyond answering ``is_read_only``
and, for Write/Edit, the accept-edits default.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any, AsyncIterator, Generator, Iterator

import regex
from pydantic import BaseModel, ConfigDict, Field

from .base import BaseTool, ToolResult, ToolUseContext, cap_output
from .file_state import refusal_text
from .patterns import check_pattern, finds_every_matching_line
from .permissions import ASK_REASONS, Allow, Ask, Deny, PermissionDecision
from .workspace import display_path, open_in_workspace, resolve_in_workspace, workspace_root

__all__ = [
    "EditInput",
    "EditTool",
    "GlobInput",
    "GlobTool",
    "GrepInput",
    "GrepTool",
    "ReadInput",
    "ReadTool",
    "WriteInput",
    "WriteTool",
]

READ_DEFAULT_LINES = 2000
"""Read returns at most this many lines unless ``limit`` says otherwise (dreamloop's default, a figure first taken
from Claude Code's Read tool; no scenario reads a file this long)."""

READ_MAX_LINE_CHARS = 2000
"""Longer lines are cut in Read's output."""

GREP_LINE_TIMEOUT_S = 1.0
"""The most Grep's regular expression may take on one line, in seconds (catastrophic backtracking stops here;
after an abort, a worker thread may finish its current line first)."""

GREP_MAX_FILE_BYTES = 64 * 1024 * 1024
"""Grep skips larger files (and says how many it skipped)."""

_SNIFF_BYTES = 8192  # a NUL byte here marks a binary file (as git and grep decide)


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


_PATH_HELP = "relative to the workspace root, or absolute inside it"


def _error(text: str) -> ToolResult:
    return ToolResult(text, is_error=True)


def _locate(context: ToolUseContext, path: str) -> tuple[Path, Path]:
    """(root, resolved path); ``ValueError`` if there is no workspace or the path escapes it."""
    root = workspace_root(context.workspace)
    return root, resolve_in_workspace(root, path)


class _Stopped(Exception):
    """Internal: the worker thread was told to stop (abort) or ran out of time."""


class _Budget:
    """A file tool call's time limit, shared with its worker thread.

    The thread calls ``check()`` as it goes; ``cancel()`` (the await was
    cancelled: an abort, or the loop's tool time limit) makes the next check
    stop it, so no thread keeps working for a call nobody waits for.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        if self._cancelled.is_set():
            raise _Stopped("cancelled")
        if self.remaining() <= 0:
            raise _Stopped(f"stopped after {self.seconds:g} s (the tool time limit)")


class _FileTool(BaseTool):
    """A file tool: its blocking ``run(input, context, budget)`` is done in a worker thread.

    An ``OSError`` becomes an ``is_error`` result naming the path relative to
    the workspace; running out of time becomes one saying so.
    """

    async def call(self, input: Any, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        budget = _Budget(context.tool_timeout_s)
        try:
            yield await asyncio.to_thread(self._run, input, context, budget)
        finally:
            budget.cancel()  # cancelled or done: the thread stops at its next check

    def _run(self, input: Any, context: ToolUseContext, budget: _Budget) -> ToolResult:
        try:
            return self.run(input, context, budget)
        except _Stopped as stop:
            return _error(f"{self.name} {stop}.")
        except OSError as exc:
            return _error(_os_error(context, exc))

    def run(self, input: Any, context: ToolUseContext, budget: _Budget) -> ToolResult:
        raise NotImplementedError


def _os_error(context: ToolUseContext, exc: OSError) -> str:
    """``Permission denied: src/a.py``: the OS's words, the path relative to the workspace."""
    what = exc.strerror or type(exc).__name__
    name = exc.filename
    if name is None:
        return what
    try:
        root = workspace_root(context.workspace)
        name = display_path(root, Path(name).absolute())
    except ValueError:
        name = Path(name).name  # outside the workspace (or none): never print an absolute path
    return f"{what}: {name}"


def _refuse_non_text(shown: str, data: bytes, tool: str, *, line: int = 1, byte: int = 0) -> ToolResult | None:
    """An ``is_error`` result if ``data`` is binary or not UTF-8; ``data`` starts at ``line`` / ``byte`` of the file."""
    if b"\0" in data[:_SNIFF_BYTES]:
        return _error(f"{shown} is a binary file; {tool} works on UTF-8 text files only.")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.start >= len(data) - 3:
            return None  # a character cut by the sniffing window, not an encoding problem
        line += data.count(b"\n", 0, exc.start)
        return _error(
            f"{shown} is not UTF-8 text (line {line}, byte {byte + exc.start} cannot be decoded). Read, Edit and Write "
            "work on UTF-8 text only, so that no round trip changes bytes they did not show; look at it or "
            "convert it with Bash (e.g. `file`, `iconv -f latin1 -t utf-8`)."
        )
    return None


def _refuse_hard_link(shown: str, links: int, tool: str) -> ToolResult | None:
    if links > 1:
        what = "reading it could show a file from outside the workspace" if tool == "Read" else \
            "changing it would also change its other names"
        return _error(
            f"{shown} has {links} hard links, and its other names may lie outside the workspace: {what}. "
            f"{tool} refuses multiply-linked files; copy it to a new file first (e.g. with Bash: cp)."
        )
    return None


def _open_regular(root: Path, path: Path, shown: str, tool: str, flags: int,
                  make_dirs: bool = False) -> int | ToolResult:
    """``open_in_workspace`` for one file tool: the descriptor of a regular file with one link, else the
    ``is_error`` result saying why (changed while opened, not a regular file, multiply linked)."""
    try:
        fd = open_in_workspace(root, path, flags | os.O_NONBLOCK, make_dirs=make_dirs)  # a pipe never blocks
    except ValueError as exc:
        return _error(str(exc))
    info = os.fstat(fd)
    refusal = (None if stat.S_ISREG(info.st_mode) else _error(
        f"{shown} is not a regular file (a device, a pipe or a socket); {tool} works on files only.")) \
        or _refuse_hard_link(shown, info.st_nlink, tool)
    if refusal is not None:
        os.close(fd)
        return refusal
    os.set_blocking(fd, True)
    return fd


def _refuse_unseen(context: ToolUseContext, tool: str, path: Path, shown: str) -> ToolResult | None:
    """With a ``FileState`` (``QueryParams.file_state``): an ``is_error`` result if the model has not seen the
    existing file ``path`` as it is now (``file_state.check``)."""
    if context.file_state is None:
        return None
    refusal = context.file_state.refusal(tool, path)
    return None if refusal is None else _error(refusal_text(refusal, shown))


class _ReadingTool(_FileTool):
    """Read, Glob, Grep: read-only and concurrency-safe, so allowed in every mode and run in parallel."""

    def is_read_only(self, input: Any) -> bool:
        return True

    def is_concurrency_safe(self, input: Any) -> bool:
        return True


class _EditingTool(_FileTool):
    """Write, Edit: not read-only, not concurrency-safe; allowed without asking in accept-edits mode."""

    async def check_permissions(self, input: Any, context: ToolUseContext) -> PermissionDecision:
        try:
            root, path = _locate(context, input.file_path)
        except ValueError as exc:
            return Deny(str(exc))  # never ask a person to approve a write outside the workspace
        if context.permission_mode == "accept-edits":
            return Allow()
        return Ask(ASK_REASONS["change"].format(tool=self.name, path=display_path(root, path)))


# ---------------------------------------------------------------------------
# Read


class ReadInput(_Input):
    file_path: str = Field(description=f"The file to read, {_PATH_HELP}.")
    offset: int | None = Field(default=None, ge=1, description="The line number to start reading from (1-based).")
    limit: int | None = Field(default=None, ge=1, description="The number of lines to read.")


class ReadTool(_ReadingTool):
    """Read a text file as ``cat -n`` lines. Read-only, concurrency-safe."""

    name = "Read"
    description = (
        "Reads a file from the workspace. Returns its lines numbered like `cat -n` "
        f"(up to {READ_DEFAULT_LINES} lines by default; use offset and limit for long files). "
        f"file_path is {_PATH_HELP}."
    )
    input_model = ReadInput

    def run(self, input: ReadInput, context: ToolUseContext, budget: _Budget) -> ToolResult:
        try:
            root, path = _locate(context, input.file_path)
        except ValueError as exc:
            return _error(str(exc))
        if path.is_dir():
            return _error(f"{display_path(root, path)} is a directory, not a file; use Glob to list it.")
        if not path.exists():
            return _error(f"File does not exist: {input.file_path}")
        shown = display_path(root, path)
        if not path.is_file():
            return _error(f"{shown} is not a regular file (a device, a pipe or a socket); Read shows files only.")
        start = (input.offset or 1) - 1
        wanted = input.limit or READ_DEFAULT_LINES
        chosen: list[str] = []
        total = position = 0
        opened = _open_regular(root, path, shown, "Read", os.O_RDONLY)
        if isinstance(opened, ToolResult):
            return opened
        with os.fdopen(opened, "rb") as f:  # line by line: a huge file costs only the lines shown
            refusal = _refuse_non_text(shown, f.peek(_SNIFF_BYTES)[:_SNIFF_BYTES], "Read")
            if refusal is not None:
                return refusal
            for total, raw in enumerate(f, 1):
                if total % 4096 == 0:
                    budget.check()
                if start < total <= start + wanted:
                    try:
                        chosen.append(raw.decode("utf-8").removesuffix("\n").removesuffix("\r"))
                    except UnicodeDecodeError:
                        return _refuse_non_text(shown, raw, "Read", line=total, byte=position) or _error(
                            f"{shown} is not UTF-8 text.")
                position += len(raw)
        if not total:
            if context.file_state is not None:
                context.file_state.saw(path)
            return ToolResult(f"The file {shown} exists but is empty.")
        if start >= total:
            return ToolResult(f"The file {shown} has {total} lines; offset {input.offset} is past its end.")
        if context.file_state is not None:
            context.file_state.saw(path)
        text = "\n".join(f"{n:>6}\t{line[:READ_MAX_LINE_CHARS]}" for n, line in enumerate(chosen, start + 1))
        rest = total - start - len(chosen)
        if rest and input.limit is None:
            text += f"\n... {rest} more lines; read them with offset={start + len(chosen) + 1}"
        return ToolResult(cap_output(text, context.max_output_chars))


def _lines(text: str) -> list[str]:
    # Lines as `cat -n` counts them: split on "\n", no phantom line after a final newline.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


# ---------------------------------------------------------------------------
# Write and Edit


class WriteInput(_Input):
    file_path: str = Field(description=f"The file to write, {_PATH_HELP}. Missing directories are created.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(_EditingTool):
    """Create or overwrite a file."""

    name = "Write"
    description = (
        "Writes a file in the workspace, replacing it if it exists (prefer Edit for changes to an "
        f"existing file). file_path is {_PATH_HELP}."
    )
    input_model = WriteInput

    def run(self, input: WriteInput, context: ToolUseContext, budget: _Budget) -> ToolResult:
        try:
            root, path = _locate(context, input.file_path)
        except ValueError as exc:
            return _error(str(exc))
        shown = display_path(root, path)
        if path.is_dir():
            return _error(f"{shown} is a directory, not a file.")
        existed = path.exists()
        refusal = _refuse_unseen(context, "Write", path, shown)
        if refusal is not None:
            return refusal
        opened = _open_regular(root, path, shown, "Write", os.O_WRONLY | os.O_CREAT, make_dirs=True)
        if isinstance(opened, ToolResult):
            return opened
        os.ftruncate(opened, 0)
        with os.fdopen(opened, "w", encoding="utf-8", newline="") as f:
            f.write(input.content)
        if context.file_state is not None:
            context.file_state.after_change(path, was_current=True)  # the model wrote all of it
        if existed:
            return ToolResult(f"The file {shown} has been updated.")
        return ToolResult(f"File created successfully at: {shown}")


class EditInput(_Input):
    file_path: str = Field(description=f"The file to modify, {_PATH_HELP}.")
    old_string: str = Field(min_length=1, description="The exact text to replace.")
    new_string: str = Field(description="The text to replace it with (must differ from old_string).")
    replace_all: bool = Field(default=False, description="Replace every occurrence of old_string (default false).")


class EditTool(_EditingTool):
    """Replace an exact string in a file; it must match exactly once unless ``replace_all``."""

    name = "Edit"
    description = (
        "Performs an exact string replacement in a workspace file. old_string must occur exactly once "
        "(add surrounding context to make it unique) unless replace_all is true. "
        f"file_path is {_PATH_HELP}."
    )
    input_model = EditInput

    def run(self, input: EditInput, context: ToolUseContext, budget: _Budget) -> ToolResult:
        try:
            root, path = _locate(context, input.file_path)
        except ValueError as exc:
            return _error(str(exc))
        if input.old_string == input.new_string:
            return _error("No changes to make: old_string and new_string are exactly the same.")
        if path.is_dir():
            return _error(f"{display_path(root, path)} is a directory, not a file.")
        if not path.exists():
            return _error(f"File does not exist: {input.file_path}")
        shown = display_path(root, path)
        if not path.is_file():
            return _error(f"{shown} is not a regular file (a device, a pipe or a socket); Edit changes files only.")
        refusal = _refuse_unseen(context, "Edit", path, shown)
        if refusal is not None:
            return refusal
        was_current = context.file_state is not None and context.file_state.current(path)
        opened = _open_regular(root, path, shown, "Edit", os.O_RDWR)
        if isinstance(opened, ToolResult):
            return opened
        with os.fdopen(opened, "r+b") as f:
            result = self._edit(input, f, shown, budget)
        if context.file_state is not None and not result.is_error:
            context.file_state.after_change(path, was_current)  # changed behind the model: still not seen
        return result

    @staticmethod
    def _edit(input: EditInput, f: Any, shown: str, budget: _Budget) -> ToolResult:
        data = f.read()
        refusal = _refuse_non_text(shown, data, "Edit")
        if refusal is not None:
            return refusal
        text = data.decode("utf-8")
        budget.check()
        count = text.count(input.old_string)
        if count == 0:
            return _error(f"String to replace not found in {shown}.\nString: {input.old_string}")
        if count > 1 and not input.replace_all:
            return _error(
                f"Found {count} matches of the string to replace, but replace_all is false. To replace all "
                "occurrences, set replace_all to true. To replace only one occurrence, provide more context "
                f"to identify the instance uniquely.\nString: {input.old_string}"
            )
        f.seek(0)
        f.truncate()
        f.write(text.replace(input.old_string, input.new_string).encode("utf-8"))  # count == 1 unless replace_all
        if count > 1:
            return ToolResult(f"The file {shown} has been updated. All {count} occurrences were replaced.")
        return ToolResult(f"The file {shown} has been updated.")


# ---------------------------------------------------------------------------
# Glob and Grep


class GlobInput(_Input):
    pattern: str = Field(min_length=1, description='The glob pattern, e.g. "**/*.py" or "src/*.ts".')
    path: str | None = Field(default=None, description=f"The directory to search in ({_PATH_HELP}); default: the root.")


class GlobTool(_ReadingTool):
    """Find files by glob pattern. Read-only, concurrency-safe."""

    name = "Glob"
    description = (
        'Finds files in the workspace by glob pattern ("**/*.py", "src/**/*.ts"). Returns matching '
        "file paths relative to the workspace root, sorted, one per line. Hidden files and "
        'directories are skipped unless the pattern names them (".github/**/*").'
    )
    input_model = GlobInput

    def run(self, input: GlobInput, context: ToolUseContext, budget: _Budget) -> ToolResult:
        try:
            root, base = _locate(context, input.path or ".")
        except ValueError as exc:
            return _error(str(exc))
        pattern = PurePosixPath(input.pattern)
        if pattern.is_absolute() or ".." in pattern.parts:
            return _error(f"path escapes the workspace: {input.pattern} (patterns are relative, without '..')")
        if not base.is_dir():
            return _error(f"Not a directory: {input.path}")
        show_hidden = any(part.startswith(".") for part in pattern.parts)
        found = []
        for match in base.glob(input.pattern):
            budget.check()
            if not show_hidden and any(part.startswith(".") for part in match.relative_to(base).parts):
                continue
            if _inside(root, match) and match.is_file():
                found.append(display_path(root, match))
        if not found:
            return ToolResult("No files found")
        return ToolResult(cap_output("\n".join(sorted(found)), context.max_output_chars))


class GrepInput(_Input):
    pattern: str = Field(min_length=1, description="The regular expression to search for (Python `re` syntax).")
    path: str | None = Field(
        default=None, description=f"The file or directory to search in ({_PATH_HELP}); default: the root."
    )
    glob: str | None = Field(default=None, description='Only search files matching this glob, e.g. "*.py".')


class GrepTool(_ReadingTool):
    """Search file contents with a regular expression. Read-only, concurrency-safe."""

    name = "Grep"
    description = (
        "Searches file contents in the workspace with a regular expression (Python re syntax). "
        'Returns matching lines as "path:line_number:line", paths relative to the workspace root. '
        "Hidden files and directories and binary files are skipped."
    )
    input_model = GrepInput

    def run(self, input: GrepInput, context: ToolUseContext, budget: _Budget) -> ToolResult:
        problem = check_pattern(input.pattern)  # Python's dialect and its error messages decide what is valid
        if problem is not None:
            return _error(f"Invalid regular expression {input.pattern!r}: {problem}")
        matcher = _Matcher(input.pattern)
        try:
            root, base = _locate(context, input.path or ".")
        except ValueError as exc:
            return _error(str(exc))
        if not base.exists():
            return _error(f"Path does not exist: {input.path}")
        hits: list[str] = []
        size = skipped = 0
        for file in [base] if base.is_file() else _walk(base):
            budget.check()
            shown = display_path(root, file)
            if input.glob and not _glob_match(shown, input.glob):
                continue
            text = _text(root, file)
            if isinstance(text, bytes):  # text, but not UTF-8: say so, matches may hide there
                skipped += 1
                continue
            if text is None:
                continue
            for number, line in matcher.matching_lines(text, budget, shown):
                hits.append(f"{shown}:{number}:{line}")
                size += len(hits[-1]) + 1
            if size > context.max_output_chars:
                break  # cap_output will say it was truncated
        note = f" ({skipped} file{'s' * (skipped > 1)} skipped: not UTF-8 text)" if skipped else ""
        if not hits:
            return ToolResult("No matches found" + note)
        return ToolResult(cap_output("\n".join(hits), context.max_output_chars) + ("\n" + note.strip() if note else ""))


class _Matcher:
    """Grep's search of one file: which lines ``pattern`` matches, each line on its own (as ``grep`` does).

    Searching line by line costs a call into the engine per line (~10 µs with its timeout: 5 s for 50 MB).
    So, when the pattern allows it (``patterns.finds_every_matching_line``), the whole text is searched first, a
    megabyte at a time: a match in the whole text marks a line that *may* match, and only those lines are
    searched on their own. The whole-text search finds every line that matches on its own (it may find
    more: a match across a newline, a lookahead seeing the next line); the per-line search decides. Both
    run on the guarded engine (``_search``); a whole-text search that is slow (a pattern that backtracks),
    or one that keeps marking lines that do not match, hands the rest of the file to the per-line search.
    """

    def __init__(self, pattern: str) -> None:
        self.line = regex.compile(pattern, flags=regex.VERSION0)
        self.text = (regex.compile(pattern, flags=regex.VERSION0 | regex.MULTILINE)
                     if finds_every_matching_line(pattern) else None)

    def matching_lines(self, text: str, budget: _Budget, shown: str) -> Iterator[tuple[int, str]]:
        """(line number, line) of each line of ``text`` that the pattern matches, in order."""
        if "\r" in text:  # lines as `_lines` gives them: one "\r" before each "\n" is not part of the line
            text = "\n".join(_lines(text)) + "\n"
        position, number = 0, 1  # the start of line `number`
        if self.text is not None:
            position, number = yield from self._candidates(text, budget, shown)
        if position < len(text):  # line by line from here
            lines = text[position:].split("\n")
            if lines[-1] == "":
                lines.pop()
            for number, line in enumerate(lines, number):
                if _search(self.line, line, budget, f"{shown}:{number}"):
                    yield number, line

    def _candidates(self, text: str, budget: _Budget, shown: str) -> Generator[tuple[int, str], None, tuple[int, int]]:
        # The whole-text search; returns where the line-by-line search takes over (position, line number).
        position, misses = 0, 0
        counted, number = 0, 1  # line `number` starts at `counted` (lines are counted only where needed)
        while position < len(text):
            end = text.find("\n", position + _CHUNK_CHARS)
            end = len(text) if end < 0 else end + 1  # a chunk ends after a newline
            while position < end:
                budget.check()
                try:
                    found = self.text.search(text, position, end, concurrent=True,
                                             timeout=max(min(GREP_LINE_TIMEOUT_S, budget.remaining()), 0.001))
                except TimeoutError:
                    return position, number + text.count("\n", counted, position)
                if found is None or (found.start() == end and text[end - 1] == "\n"):  # (the next line's start)
                    position = end
                    break
                start = max(text.rfind("\n", position, found.start()) + 1, position)
                stop = text.find("\n", found.start())
                stop = len(text) if stop < 0 else stop
                number += text.count("\n", counted, start)
                counted = start
                line = text[start:stop]
                if _search(self.line, line, budget, f"{shown}:{number}"):
                    yield number, line
                else:
                    misses += 1
                    if misses > _MAX_MISSES:
                        return start, number
                position = stop + 1
        return position, number


_CHUNK_CHARS = 1 << 20  # the whole-text search's step: a slow step is stopped after GREP_LINE_TIMEOUT_S
_MAX_MISSES = 64  # lines the whole-text search marked that did not match, before a file goes line by line


def _search(pattern: Any, line: str, budget: _Budget, where: str) -> bool:
    """Does ``pattern`` match in ``line``? Never longer than the budget or ``GREP_LINE_TIMEOUT_S``.

    ``concurrent=True`` lets other threads (the event loop) run while it matches. The engine's
    ``timeout`` counts the process's CPU time, not the clock's: while other threads of the process
    are busy (another Grep's thread finishing its line) it runs out early, so a timeout is checked
    against the clock here, and the search tried again with what is left of the line's second and
    of the budget. So which limit stopped a match is decided by the clock, whatever else runs.
    """
    started = time.monotonic()
    while True:
        budget.check()
        left = min(started + GREP_LINE_TIMEOUT_S, budget.deadline) - time.monotonic()
        if left <= 0:
            break
        try:
            return pattern.search(line, timeout=left, concurrent=True) is not None
        except TimeoutError:
            continue
    budget.check()
    raise _Stopped(
        f"stopped: the pattern took more than {GREP_LINE_TIMEOUT_S:g} s on one line ({where}); it probably "
        "backtracks catastrophically (nested quantifiers such as (a+)+); simplify it"
    )


def _walk(base: Path) -> Iterator[Path]:
    # Files under base in sorted order; hidden entries skipped, symlinked directories not followed.
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                yield Path(dirpath, name)


def _glob_match(relpath: str, glob: str) -> bool:
    path = PurePosixPath(relpath)
    return path.match(glob) or (glob.startswith("**/") and path.match(glob[3:]))


def _inside(root: Path, path: Path) -> bool:
    try:
        resolve_in_workspace(root, path)
    except ValueError:
        return False
    return True


def _text(root: Path, path: Path) -> str | bytes | None:
    # The file's text for Grep; its bytes if it is text but not UTF-8; None if it is outside the
    # workspace (a symlink), not a regular file, too large, binary, or unreadable.
    try:
        resolved = resolve_in_workspace(root, path)
        fd = open_in_workspace(root, resolved, os.O_RDONLY | os.O_NONBLOCK)
    except (ValueError, OSError):
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > GREP_MAX_FILE_BYTES or info.st_nlink > 1:
            return None
        try:
            data = f.read()
        except OSError:
            return None
    if b"\0" in data[:_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
