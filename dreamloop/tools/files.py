"""The file tools: Read, Write, Edit, Glob, Grep (Claude Code's names and input fields).

Each resolves its paths inside ``context.workspace`` (``workspace.py``) and
does its file I/O in a worker thread (``asyncio.to_thread``), so the event
loop and its Stop/Allow buttons stay responsive. Results show
workspace-relative paths. These tools know nothing about permissions beyond
answering ``is_read_only`` and, for Write/Edit, the accept-edits default.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, AsyncIterator, Iterator

from pydantic import BaseModel, ConfigDict, Field

from .base import BaseTool, ToolResult, ToolUseContext, cap_output
from .permissions import Allow, Ask, Deny, PermissionDecision
from .workspace import display_path, resolve_in_workspace, workspace_root

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
"""Read returns at most this many lines unless ``limit`` says otherwise (as in Claude Code)."""

READ_MAX_LINE_CHARS = 2000
"""Longer lines are cut in Read's output."""


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


_PATH_HELP = "relative to the workspace root, or absolute inside it"


def _error(text: str) -> ToolResult:
    return ToolResult(text, is_error=True)


def _locate(context: ToolUseContext, path: str) -> tuple[Path, Path]:
    """(root, resolved path); ``ValueError`` if there is no workspace or the path escapes it."""
    root = workspace_root(context.workspace)
    return root, resolve_in_workspace(root, path)


class _FileTool(BaseTool):
    """A file tool: its blocking ``run(input, context)`` is done in a worker thread."""

    async def call(self, input: Any, context: ToolUseContext) -> AsyncIterator[ToolResult]:
        yield await asyncio.to_thread(self.run, input, context)

    def run(self, input: Any, context: ToolUseContext) -> ToolResult:
        raise NotImplementedError


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
        return Ask(f"{self.name} wants to change {display_path(root, path)}")


# ---------------------------------------------------------------------------
# Read


class ReadInput(_Input):
    file_path: str = Field(description=f"The file to read, {_PATH_HELP}.")
    offset: int | None = Field(default=None, ge=1, description="The line number to start reading from (1-based).")
    limit: int | None = Field(default=None, ge=1, description="The number of lines to read.")


class ReadTool(_ReadingTool):
    """Read a text file as ``cat -n`` lines (``FileReadTool``). Read-only, concurrency-safe."""

    name = "Read"
    description = (
        "Reads a file from the workspace. Returns its lines numbered like `cat -n` "
        f"(up to {READ_DEFAULT_LINES} lines by default; use offset and limit for long files). "
        f"file_path is {_PATH_HELP}."
    )
    input_model = ReadInput

    def run(self, input: ReadInput, context: ToolUseContext) -> ToolResult:
        try:
            root, path = _locate(context, input.file_path)
        except ValueError as exc:
            return _error(str(exc))
        if path.is_dir():
            return _error(f"{display_path(root, path)} is a directory, not a file; use Glob to list it.")
        if not path.exists():
            return _error(f"File does not exist: {input.file_path}")
        shown = display_path(root, path)
        lines = _lines(path.read_text(encoding="utf-8", errors="replace"))
        if not lines:
            return ToolResult(f"The file {shown} exists but is empty.")
        start = (input.offset or 1) - 1
        if start >= len(lines):
            return ToolResult(f"The file {shown} has {len(lines)} lines; offset {input.offset} is past its end.")
        chosen = lines[start : start + (input.limit or READ_DEFAULT_LINES)]
        text = "\n".join(f"{n:>6}\t{line[:READ_MAX_LINE_CHARS]}" for n, line in enumerate(chosen, start + 1))
        rest = len(lines) - start - len(chosen)
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
    """Create or overwrite a file (``FileWriteTool``)."""

    name = "Write"
    description = (
        "Writes a file in the workspace, replacing it if it exists (prefer Edit for changes to an "
        f"existing file). file_path is {_PATH_HELP}."
    )
    input_model = WriteInput

    def run(self, input: WriteInput, context: ToolUseContext) -> ToolResult:
        try:
            root, path = _locate(context, input.file_path)
        except ValueError as exc:
            return _error(str(exc))
        shown = display_path(root, path)
        if path.is_dir():
            return _error(f"{shown} is a directory, not a file.")
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(input.content)
        if existed:
            return ToolResult(f"The file {shown} has been updated.")
        return ToolResult(f"File created successfully at: {shown}")


class EditInput(_Input):
    file_path: str = Field(description=f"The file to modify, {_PATH_HELP}.")
    old_string: str = Field(min_length=1, description="The exact text to replace.")
    new_string: str = Field(description="The text to replace it with (must differ from old_string).")
    replace_all: bool = Field(default=False, description="Replace every occurrence of old_string (default false).")


class EditTool(_EditingTool):
    """Replace an exact string in a file (``FileEditTool``); it must match exactly once unless ``replace_all``."""

    name = "Edit"
    description = (
        "Performs an exact string replacement in a workspace file. old_string must occur exactly once "
        "(add surrounding context to make it unique) unless replace_all is true. "
        f"file_path is {_PATH_HELP}."
    )
    input_model = EditInput

    def run(self, input: EditInput, context: ToolUseContext) -> ToolResult:
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
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        count = text.count(input.old_string)
        if count == 0:
            return _error(f"String to replace not found in {shown}.\nString: {input.old_string}")
        if count > 1 and not input.replace_all:
            return _error(
                f"Found {count} matches of the string to replace, but replace_all is false. To replace all "
                "occurrences, set replace_all to true. To replace only one occurrence, provide more context "
                f"to identify the instance uniquely.\nString: {input.old_string}"
            )
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text.replace(input.old_string, input.new_string))  # count == 1 unless replace_all
        if count > 1:
            return ToolResult(f"The file {shown} has been updated. All {count} occurrences were replaced.")
        return ToolResult(f"The file {shown} has been updated.")


# ---------------------------------------------------------------------------
# Glob and Grep


class GlobInput(_Input):
    pattern: str = Field(min_length=1, description='The glob pattern, e.g. "**/*.py" or "src/*.ts".')
    path: str | None = Field(default=None, description=f"The directory to search in ({_PATH_HELP}); default: the root.")


class GlobTool(_ReadingTool):
    """Find files by glob pattern (``GlobTool``). Read-only, concurrency-safe."""

    name = "Glob"
    description = (
        'Finds files in the workspace by glob pattern ("**/*.py", "src/**/*.ts"). Returns matching '
        "file paths relative to the workspace root, sorted, one per line. Hidden files and "
        'directories are skipped unless the pattern names them (".github/**/*").'
    )
    input_model = GlobInput

    def run(self, input: GlobInput, context: ToolUseContext) -> ToolResult:
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
    """Search file contents with a regular expression (``GrepTool``). Read-only, concurrency-safe."""

    name = "Grep"
    description = (
        "Searches file contents in the workspace with a regular expression (Python re syntax). "
        'Returns matching lines as "path:line_number:line", paths relative to the workspace root. '
        "Hidden files and directories and binary files are skipped."
    )
    input_model = GrepInput

    def run(self, input: GrepInput, context: ToolUseContext) -> ToolResult:
        try:
            regex = re.compile(input.pattern)
        except re.error as exc:
            return _error(f"Invalid regular expression {input.pattern!r}: {exc}")
        try:
            root, base = _locate(context, input.path or ".")
        except ValueError as exc:
            return _error(str(exc))
        if not base.exists():
            return _error(f"Path does not exist: {input.path}")
        hits: list[str] = []
        size = 0
        for file in [base] if base.is_file() else _walk(base):
            shown = display_path(root, file)
            if input.glob and not _glob_match(shown, input.glob):
                continue
            text = _text(root, file)
            if text is None:
                continue
            for number, line in enumerate(_lines(text), 1):
                if regex.search(line):
                    hits.append(f"{shown}:{number}:{line}")
                    size += len(hits[-1]) + 1
            if size > context.max_output_chars:
                break  # cap_output will say it was truncated
        if not hits:
            return ToolResult("No matches found")
        return ToolResult(cap_output("\n".join(hits), context.max_output_chars))


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


def _text(root: Path, path: Path) -> str | None:
    # The file's text for Grep, or None: outside the workspace (a symlink), binary, or unreadable.
    if not _inside(root, path):
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
