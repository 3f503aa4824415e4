"""Read, Write, Edit, Glob, Grep: happy paths, error paths, and workspace confinement."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from pathlib import Path

import pytest
import regex

from dreamloop.tools import ToolUseContext, builtin_tools, run_tools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a few files, plus a secret outside it and symlinks pointing out."""
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("import pkg\n\nVALUE = 1\nprint(VALUE)\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 'VALUE'\n")
    (root / "README.md").write_text("# demo\nSet VALUE to 2.\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.py").write_text("VALUE = 'hidden'\n")
    (root / "blob.bin").write_bytes(b"VALUE\0\1\2")
    (tmp_path / "secret.txt").write_text("VALUE = 'secret'\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "more.py").write_text("VALUE = 'outside'\n")
    (root / "link_file").symlink_to(tmp_path / "secret.txt")
    (root / "link_dir").symlink_to(tmp_path / "outside")
    (root / "dangling").symlink_to(tmp_path / "not-yet.txt")
    return root


async def call(root: Path | None, name: str, input: dict, **context) -> dict:
    context = ToolUseContext(tools=builtin_tools(), workspace=root, **{"permission_mode": "bypass", **context})
    messages = [m async for m in run_tools([{"id": "T1", "name": name, "input": input}], context)]
    return messages[-1].message["content"][0]


def ok(result: dict) -> str:
    assert not result.get("is_error"), result
    return result["content"]


def error(result: dict) -> str:
    assert result.get("is_error"), result
    return result["content"]


# ---------------------------------------------------------------------------
# Read


async def test_read_numbers_lines_like_cat_n(ws):
    assert ok(await call(ws, "Read", {"file_path": "src/main.py"})) == (
        "     1\timport pkg\n     2\t\n     3\tVALUE = 1\n     4\tprint(VALUE)"
    )
    assert ok(await call(ws, "Read", {"file_path": str(ws / "src/main.py"), "offset": 3, "limit": 1})) == (
        "     3\tVALUE = 1"
    )


async def test_read_errors_and_edges(ws):
    assert error(await call(ws, "Read", {"file_path": "nope.py"})) == "File does not exist: nope.py"
    assert "is a directory" in error(await call(ws, "Read", {"file_path": "src"}))
    (ws / "empty.txt").write_text("")
    assert ok(await call(ws, "Read", {"file_path": "empty.txt"})) == "The file empty.txt exists but is empty."
    assert "past its end" in ok(await call(ws, "Read", {"file_path": "README.md", "offset": 9}))
    assert error(await call(ws, "Read", {"file_path": "README.md", "offset": 0})).startswith(
        "InputValidationError: offset:"
    )


async def test_read_long_file_says_what_is_left(ws):
    (ws / "long.txt").write_text("".join(f"{n}\n" for n in range(1, 2501)))
    text = ok(await call(ws, "Read", {"file_path": "long.txt"}))
    assert text.splitlines()[-2] == "  2000\t2000"
    assert text.splitlines()[-1] == "... 500 more lines; read them with offset=2001"


# ---------------------------------------------------------------------------
# Write and Edit


async def test_write_creates_and_updates(ws):
    assert ok(await call(ws, "Write", {"file_path": "new/dir/a.txt", "content": "hi\n"})) == (
        "File created successfully at: new/dir/a.txt"
    )
    assert ok(await call(ws, "Write", {"file_path": "new/dir/a.txt", "content": "ho\n"})) == (
        "The file new/dir/a.txt has been updated."
    )
    assert (ws / "new/dir/a.txt").read_text() == "ho\n"
    assert "is a directory" in error(await call(ws, "Write", {"file_path": "src", "content": ""}))


async def test_edit_replaces_a_unique_string(ws):
    result = await call(ws, "Edit", {"file_path": "src/main.py", "old_string": "VALUE = 1", "new_string": "VALUE = 2"})
    assert ok(result) == "The file src/main.py has been updated."
    assert (ws / "src/main.py").read_text() == "import pkg\n\nVALUE = 2\nprint(VALUE)\n"


async def test_edit_errors(ws):
    edit = {"file_path": "src/main.py", "new_string": "X"}
    assert error(await call(ws, "Edit", {**edit, "old_string": "nothing like this"})).startswith(
        "String to replace not found in src/main.py."
    )
    assert error(await call(ws, "Edit", {**edit, "old_string": "VALUE"})).startswith(
        "Found 2 matches of the string to replace, but replace_all is false."
    )
    assert "exactly the same" in error(await call(ws, "Edit", {**edit, "old_string": "X"}))
    assert error(await call(ws, "Edit", {**edit, "file_path": "nope.py", "old_string": "a"})) == (
        "File does not exist: nope.py"
    )
    assert error(await call(ws, "Edit", {**edit, "old_string": ""})).startswith("InputValidationError: old_string:")
    assert (ws / "src/main.py").read_text() == "import pkg\n\nVALUE = 1\nprint(VALUE)\n"


async def test_edit_replace_all(ws):
    edit = {"file_path": "src/main.py", "old_string": "VALUE", "new_string": "V", "replace_all": True}
    result = await call(ws, "Edit", edit)
    assert ok(result) == "The file src/main.py has been updated. All 2 occurrences were replaced."
    assert (ws / "src/main.py").read_text() == "import pkg\n\nV = 1\nprint(V)\n"


async def test_edit_keeps_crlf_line_endings(ws):
    (ws / "dos.txt").write_bytes(b"a = 1\r\nb = 2\r\n")
    ok(await call(ws, "Edit", {"file_path": "dos.txt", "old_string": "b = 2", "new_string": "b = 3"}))
    assert (ws / "dos.txt").read_bytes() == b"a = 1\r\nb = 3\r\n"


# ---------------------------------------------------------------------------
# Glob and Grep


async def test_glob_lists_workspace_relative_sorted_files(ws):
    assert ok(await call(ws, "Glob", {"pattern": "**/*.py"})) == "src/main.py\nsrc/pkg/util.py"
    assert ok(await call(ws, "Glob", {"pattern": "*.py", "path": "src/pkg"})) == "src/pkg/util.py"
    assert ok(await call(ws, "Glob", {"pattern": "*.rs"})) == "No files found"
    assert error(await call(ws, "Glob", {"pattern": "*", "path": "README.md"})) == "Not a directory: README.md"


async def test_grep_reports_path_line_text(ws):
    assert ok(await call(ws, "Grep", {"pattern": r"VALUE\b"})) == (
        "README.md:2:Set VALUE to 2.\n"
        "src/main.py:3:VALUE = 1\n"
        "src/main.py:4:print(VALUE)\n"
        "src/pkg/util.py:2:    return 'VALUE'"
    )  # no .hidden/, no blob.bin, nothing through link_file or link_dir
    assert ok(await call(ws, "Grep", {"pattern": "VALUE =", "glob": "*.py"})) == "src/main.py:3:VALUE = 1"
    assert ok(await call(ws, "Grep", {"pattern": "VALUE", "path": "src/pkg"})) == "src/pkg/util.py:2:    return 'VALUE'"
    assert ok(await call(ws, "Grep", {"pattern": "print", "path": "src/main.py"})) == "src/main.py:4:print(VALUE)"
    assert ok(await call(ws, "Grep", {"pattern": "zebra"})) == "No matches found"


async def test_grep_errors_and_cap(ws):
    assert error(await call(ws, "Grep", {"pattern": "("})).startswith("Invalid regular expression '('")
    assert error(await call(ws, "Grep", {"pattern": "x", "path": "nope"})) == "Path does not exist: nope"
    (ws / "many.txt").write_text("match\n" * 1000)
    text = ok(await call(ws, "Grep", {"pattern": "match", "path": "many.txt"}, max_output_chars=100))
    assert text.startswith("many.txt:1:match\n") and "[output truncated]" in text


# ---------------------------------------------------------------------------
# Confinement: every file tool refuses paths that lead out of the workspace


ESCAPES = ["../secret.txt", "/etc/passwd", "link_file", "link_dir/more.py", "src/../../secret.txt"]

TOOL_INPUTS = {
    "Read": lambda p: {"file_path": p},
    "Write": lambda p: {"file_path": p, "content": "pwned"},
    "Edit": lambda p: {"file_path": p, "old_string": "VALUE", "new_string": "pwned"},
    "Grep": lambda p: {"pattern": "VALUE", "path": p},
}


@pytest.mark.parametrize("mode", ["bypass", "default"])
@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("name", list(TOOL_INPUTS))
async def test_file_tools_refuse_escapes(ws, name, path, mode):
    before = (ws.parent / "secret.txt").read_text()
    result = await call(ws, name, TOOL_INPUTS[name](path), permission_mode=mode)
    assert error(result) == f"path escapes the workspace: {path}"
    assert (ws.parent / "secret.txt").read_text() == before
    assert (ws.parent / "outside" / "more.py").read_text() == "VALUE = 'outside'\n"


@pytest.mark.parametrize("path", ["..", "/etc", "link_dir"])
async def test_glob_refuses_escaping_directories(ws, path):
    assert error(await call(ws, "Glob", {"pattern": "*", "path": path})) == f"path escapes the workspace: {path}"


@pytest.mark.parametrize("pattern", ["../*", "/etc/*"])
async def test_glob_refuses_escaping_patterns(ws, pattern):
    assert error(await call(ws, "Glob", {"pattern": pattern})).startswith(f"path escapes the workspace: {pattern}")


async def test_glob_does_not_list_through_symlinks_out(ws):
    listing = ok(await call(ws, "Glob", {"pattern": "*"}))
    assert "link_file" not in listing and "dangling" not in listing
    assert ok(await call(ws, "Glob", {"pattern": "link_dir/*"})) == "No files found"


async def test_dangling_symlink_out_cannot_be_written(ws):
    assert error(await call(ws, "Write", {"file_path": "dangling", "content": "x"})) == (
        "path escapes the workspace: dangling"
    )
    assert not (ws.parent / "not-yet.txt").exists()


async def test_paths_inside_are_fine_even_absolute_or_with_dotdot(ws):
    assert ok(await call(ws, "Read", {"file_path": str(ws / "README.md")})).startswith("     1\t# demo")
    assert ok(await call(ws, "Read", {"file_path": "src/pkg/../main.py", "limit": 1})) == "     1\timport pkg"
    (ws / "inner_link").symlink_to(ws / "README.md")
    assert ok(await call(ws, "Read", {"file_path": "inner_link", "limit": 1})) == "     1\t# demo"


async def test_file_tools_need_a_workspace():
    assert "no workspace" in error(await call(None, "Read", {"file_path": "a.txt"}))
    assert "no workspace" in error(await call(None, "Glob", {"pattern": "*"}))
    assert os.path.exists("/etc/passwd")  # the refusal above was not for lack of a file


# ---------------------------------------------------------------------------
# Issue 9: no file tool can freeze the loop; UTF-8 text only; hard links; relative error paths


async def test_a_catastrophic_pattern_cannot_freeze_the_loop(ws):
    """`(a+)+$` on 40 a's and a `!` froze the interpreter with Python's re; the regex engine is done at once,
    and a pattern it cannot shortcut is stopped at the time limit while the event loop keeps running.

    The time limit is the one that stops it, whatever else the process runs: the engine's own timeout counts
    the process's CPU time, so another thread matching at the same time (as a cancelled Grep's thread may
    still be, finishing its line) made it run out early, and Grep reported its per-line limit instead (a
    flaky failure on a busy first run). A thread matching beside the call makes that case certain here."""
    (ws / "aaa.txt").write_text("a" * 40 + "!\n")
    assert ok(await call(ws, "Grep", {"pattern": r"(a+)+$", "path": "aaa.txt"})) == "No matches found"

    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    done = threading.Event()

    def another_match():  # CPU time for the process while the call runs (the engine lets go of the GIL)
        slow = regex.compile(r"(a|aa)+$")
        while not done.is_set():
            with contextlib.suppress(TimeoutError):
                slow.search("a" * 40 + "!", timeout=0.05, concurrent=True)

    beside = threading.Thread(target=another_match, daemon=True)
    beside.start()
    beat = asyncio.create_task(ticker())
    started = time.monotonic()
    try:
        result = await call(ws, "Grep", {"pattern": r"(a|aa)+$", "path": "aaa.txt"}, tool_timeout_s=0.5)
    finally:
        beat.cancel()
        done.set()
        beside.join()
    assert error(result) in (
        "Grep stopped after 0.5 s (the tool time limit).",
        "Error: Grep did not finish within 0.5 s (the tool time limit) and was stopped.",
    )
    assert time.monotonic() - started < 5
    assert ticks >= 5  # the loop ran while the pattern did


async def test_grep_time_limits_follow_the_clock_not_the_engines_cpu_time(ws, monkeypatch):
    """The cause of the flaky failure above, made certain: an engine whose timeout runs out after half the
    time it was given (its CPU clock running at twice the wall clock, as with two busy threads) still stops
    at the tool time limit, with its message; and a line is given its whole second by the clock."""
    import types

    from dreamloop.tools import files

    class FastClock:  # the real pattern, whose timeouts come after half the wall time
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, line, *args, timeout=None, concurrent=None):
            if "a" * 40 not in line:
                return self.pattern.search(line, *args, timeout=timeout, concurrent=concurrent)
            time.sleep(timeout / 2)
            raise TimeoutError("regex timed out")

    engine = types.SimpleNamespace(compile=lambda pattern, flags=0: FastClock(regex.compile(pattern, flags=flags)),
                                   VERSION0=regex.VERSION0, MULTILINE=regex.MULTILINE, error=regex.error)
    monkeypatch.setattr(files, "regex", engine)
    (ws / "aaa.txt").write_text("b\n" + "a" * 40 + "!\n")
    result = await call(ws, "Grep", {"pattern": r"(a|aa)+$", "path": "aaa.txt"}, tool_timeout_s=0.5)
    assert error(result) in (
        "Grep stopped after 0.5 s (the tool time limit).",
        "Error: Grep did not finish within 0.5 s (the tool time limit) and was stopped.",
    )
    started = time.monotonic()
    result = await call(ws, "Grep", {"pattern": r"(a|aa)+$", "path": "aaa.txt"}, tool_timeout_s=30)
    assert error(result).startswith("Grep stopped: the pattern took more than 1 s on one line (aaa.txt:2)")
    assert time.monotonic() - started >= files.GREP_LINE_TIMEOUT_S


GREP_TEXT = "ab\r\n\n  a b\nb\r\r\nxa\nyy ab -\n\n\na\rb\nab!\nc"


@pytest.mark.parametrize("pattern", [
    r"a", r"^a", r"a$", r"a\s*b", r"[^x]*b$", r"(?<=a)b", r"(?<!a)b", r"a(?=\s)", r"a(?!b)", r"\bab\b", r"\Ba",
    r"(?s)a.b", r"^$", r"^\s*$", r"x|^y", r"(a)\1", r"(?>a+)b", r"a++", r"\Aa", r"b\Z", r"(?-m:b$)", r"\W",
    r"\s", r"a\nb", r"(?i)AB", r"\r", r"b\r?$", r"(a)?(?(1)b|c)",
])
async def test_grep_finds_the_lines_a_line_by_line_search_finds(ws, pattern):
    """Grep searches a file's whole text first and only the lines it marks one by one; the answer is the
    line-by-line answer, whatever the pattern does at a line's ends (anchors, lookarounds, newlines, \\r)."""
    (ws / "mixed.txt").write_text(GREP_TEXT, newline="")
    lines = [line.removesuffix("\r") for line in GREP_TEXT.split("\n")]
    wanted = [f"mixed.txt:{n}:{line}" for n, line in enumerate(lines, 1) if regex.search(pattern, line)]
    result = await call(ws, "Grep", {"pattern": pattern, "path": "mixed.txt"})
    assert (ok(result).split("\n") if wanted else ok(result)) == (wanted or "No matches found")


async def test_grep_keeps_pythons_dialect(ws):
    (ws / "demo.py").write_text("VALUE = 1\nVALUE_2 = 3\n")
    assert ok(await call(ws, "Grep", {"pattern": r"VALUE(?= =)", "path": "demo.py"})) == "demo.py:1:VALUE = 1"
    assert error(await call(ws, "Grep", {"pattern": r"\p{L}+"})).startswith("Invalid regular expression")


async def test_abort_stops_a_running_grep_at_once(ws, offline):
    from dreamloop import scripts as S
    from dreamloop.endings import INTERRUPTED_TOOLS_NOTE
    from dreamloop.query import QueryParams, query
    from dreamloop.tools import INTERRUPTED

    (ws / "aaa.txt").write_text(("a" * 40 + "!\n") * 50)
    model = offline([S.reply(S.tool_use("Grep", {"pattern": r"(a|aa)+$", "path": "aaa.txt"}, id="T1"))])
    run = query(QueryParams(messages="grep", model=model, tools=builtin_tools(), workspace=ws))
    started = None
    async for event in run:
        if event.type == "progress" and event.data["stage"] == "started":
            started = time.monotonic()
            asyncio.get_running_loop().call_later(0.2, run.abort)
    assert run.terminal.reason == "aborted_tools"
    assert time.monotonic() - started < 1.5
    results, note = [m for m in run.messages if m.type == "user"][-2:]  # the results, then the note to the model
    assert results.message["content"][0] == {"type": "tool_result", "tool_use_id": "T1", "content": INTERRUPTED,
                                             "is_error": True}
    assert note.is_meta and note.message["content"] == INTERRUPTED_TOOLS_NOTE
    for _ in range(300):  # the worker sees the cancel once its current line is done (at most 1 s of matching;
        if not _grep_threads():  # longer on a loaded machine)
            break
        await asyncio.sleep(0.05)
    assert not _grep_threads()


def _grep_threads():
    """Threads whose stack is inside Grep's search (sys._current_frames: every thread's current frame)."""
    import sys

    busy = []
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code.co_name == "_search":
                busy.append(frame)
                break
            frame = frame.f_back
    return busy


async def test_a_pipe_is_refused_not_waited_on(ws):
    os.mkfifo(ws / "pipe")
    assert "is not a regular file" in error(await call(ws, "Read", {"file_path": "pipe"}, tool_timeout_s=5))
    assert ok(await call(ws, "Grep", {"pattern": "VALUE = 1"}, tool_timeout_s=5)) == "src/main.py:3:VALUE = 1"


async def test_binary_and_non_utf8_files_are_refused_so_no_round_trip_corrupts_them(ws):
    assert error(await call(ws, "Read", {"file_path": "blob.bin"})) == (
        "blob.bin is a binary file; Read works on UTF-8 text files only.")
    latin1 = "caf\xe9 = 1\nna\xefve = 2\n".encode("latin-1")
    (ws / "old.py").write_bytes(latin1)
    refused = error(await call(ws, "Read", {"file_path": "old.py"}))
    assert refused.startswith("old.py is not UTF-8 text (line 1, byte 3 cannot be decoded).")
    assert error(await call(ws, "Edit", {"file_path": "old.py", "old_string": "= 2", "new_string": "= 3"})) == refused
    assert (ws / "old.py").read_bytes() == latin1
    assert ok(await call(ws, "Grep", {"pattern": "= 1"})) == "src/main.py:3:VALUE = 1\n(1 file skipped: not UTF-8 text)"
    (ws / "big.txt").write_bytes(("x" * 100 + "\n").encode() * 100 + b"\xff tail\n")  # bad byte past the sniff
    assert "line 101" in error(await call(ws, "Read", {"file_path": "big.txt", "offset": 101}))


async def test_read_write_edit_and_grep_refuse_a_hard_link_out_of_the_workspace(ws):
    outside = ws.parent / "secret.txt"
    os.link(outside, ws / "linked.txt")
    before = outside.read_text()
    refused = error(await call(ws, "Read", {"file_path": "linked.txt"}))
    assert refused.startswith("linked.txt has 2 hard links, and its other names may lie outside the workspace: "
                              "reading it could show a file from outside") and "secret" not in refused
    for name, input in [("Write", {"content": "pwned"}), ("Edit", {"old_string": "VALUE", "new_string": "pwned"})]:
        refused = error(await call(ws, name, {"file_path": "linked.txt", **input}))
        assert refused.startswith("linked.txt has 2 hard links") and "would also change its other names" in refused
    assert outside.read_text() == before
    assert "secret" not in ok(await call(ws, "Grep", {"pattern": "secret"}))


@pytest.mark.parametrize("tool, input", [("Read", {}), ("Write", {"content": "pwned"}),
                                         ("Edit", {"old_string": "VALUE", "new_string": "pwned"})])
async def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_followed(ws, tool, input):
    """The race of issue 24 (item 9): the path is checked, then a directory on it becomes a link out."""
    from dreamloop.tools.workspace import open_in_workspace, resolve_in_workspace, workspace_root

    (ws / "sub").mkdir()
    (ws / "sub" / "f.txt").write_text("VALUE = 'inside'\n")
    outside = ws.parent / "out"
    outside.mkdir()
    (outside / "f.txt").write_text("VALUE = 'secret'\n")
    root = workspace_root(ws)
    checked = resolve_in_workspace(root, "sub/f.txt")  # what the tool checked
    (ws / "sub").rename(ws / "old")
    (ws / "sub").symlink_to(outside)  # ... and what is there when it opens
    with pytest.raises(ValueError, match="sub/f.txt changed while it was being opened"):
        open_in_workspace(root, checked, os.O_RDONLY)
    result = await call(ws, tool, {"file_path": "sub/f.txt", **input})  # the tool itself resolves it again: outside
    assert result.get("is_error") and "escapes the workspace" in result["content"]
    assert (outside / "f.txt").read_text() == "VALUE = 'secret'\n"


async def test_the_workspace_root_swapped_for_a_symlink_is_not_followed(ws):
    from dreamloop.tools.workspace import open_in_workspace, resolve_in_workspace, workspace_root

    outside = ws.parent / "elsewhere"
    outside.mkdir()
    (outside / "config.py").write_text("value = 'outside'\n")
    root = workspace_root(ws)
    checked = resolve_in_workspace(root, "config.py")
    ws.rename(ws.parent / "moved")
    ws.symlink_to(outside)
    with pytest.raises(ValueError, match="changed while it was being opened"):
        open_in_workspace(root, checked, os.O_RDONLY)


async def test_os_errors_name_the_path_relative_to_the_workspace(ws):
    refused = error(await call(ws, "Write", {"file_path": "README.md/inside.txt", "content": "x"}))
    assert refused in ("File exists: README.md", "Not a directory: README.md/inside.txt", "Not a directory: README.md")
    assert str(ws) not in refused
