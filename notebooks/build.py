"""Re-execute the book's notebooks and save them with their outputs (``make notebooks``).

    python notebooks/build.py                     # every chapter and every solution, both editions
    python notebooks/build.py notebooks/03_*.ipynb notebooks/zh/03_*.ipynb

Each notebook runs top to bottom in a fresh ``python3`` kernel (nbclient) of
this interpreter, with the kernel's working directory at the notebook's folder
and the Makefile's notebook environment (``NB_ENV``; the same defaults are set
here when missing), so the stored outputs are what ``make nbval`` compares
against. Widget state and cell timings are not stored, so a rebuild changes
only outputs that really changed. A cell that raises stops that notebook's
build, unless it is tagged ``raises-exception``; so does output that arrives
later than ``IOPUB_TIMEOUT_S`` after its cell finished: a notebook is saved
complete or not at all, never with the end of its output missing.
``notebook_client()`` is the one way the kit executes a notebook (this build,
``bench/room.py``, the tests): import it from here. This script only executes
and saves; the notebooks themselves are the source.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

HERE = Path(__file__).resolve().parent

NB_ENV = {
    "DREAMLOOP_AUTO_ANSWER": "1",  # AskPrompt answers itself (nobody clicks during a build)
    "NO_COLOR": "1",  # rich prints plain text
    "JUPYTER_COLUMNS": "100",  # rich's width in a kernel
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",  # no debugger warning on stderr
}
"""The Makefile's NB_ENV: set here too, so a direct run stores the same outputs."""

CELL_TIMEOUT_S = 120
"""The same per-cell limit as ``make nbval``."""

IOPUB_TIMEOUT_S = 60
"""How long to wait for a cell's output after the kernel has said the cell finished.

Output travels on the kernel's IOPub channel, separately from the "cell done"
reply; on a busy machine (a room of kernels on two cores) it can come seconds
later. nbclient waits 4 s by default and then *keeps going with what it has*,
so a notebook was saved with the end of its output missing and the build said
ok (8 of 64 concurrent runs here). Here it waits this long and, past it, fails
the notebook (``raise_on_iopub_timeout``). nbval's own wait is set to the same
value in ``notebooks/conftest.py``."""


def notebook_client(nb: nbformat.NotebookNode, folder: Path, **settings: object) -> NotebookClient:
    """An nbclient ``NotebookClient`` for ``nb`` with the kit's execution settings, kernel cwd ``folder``.

    The settings: a fresh ``python3`` kernel, ``CELL_TIMEOUT_S`` per cell,
    ``IOPUB_TIMEOUT_S`` for late output with a failure past it (never a
    truncated notebook), one coalesced stdout output per cell (as nbval
    compares), no widget state or timings stored. ``settings`` override them.
    A late or timed-out cell raises ``CellTimeoutError``; a failing cell
    ``CellExecutionError``; a kernel that died ``DeadKernelError``.
    """
    options: dict[str, object] = {
        "timeout": CELL_TIMEOUT_S,
        "iopub_timeout": IOPUB_TIMEOUT_S,
        "raise_on_iopub_timeout": True,
        "kernel_name": "python3",
        "resources": {"metadata": {"path": str(folder)}},
        "store_widget_state": False,
        "record_timing": False,
        "coalesce_streams": True,  # one stdout output per cell, as nbval compares it
    }
    options.update(settings)
    return NotebookClient(nb, **options)


EDITIONS = ("", "zh")
"""The book's editions, by folder under ``notebooks/``: English (the folder itself) and Chinese (``zh/``)."""


def notebooks(paths: list[str]) -> list[Path]:
    """The notebooks to build: the given ones, else every edition's chapters and their solutions, in order."""
    if paths:
        return [Path(p).resolve() for p in paths]
    found: list[Path] = []
    for edition in EDITIONS:
        folder = HERE / edition
        found += sorted(folder.glob("[0-9][0-9]*_*.ipynb")) + sorted((folder / "solutions").glob("[0-9][0-9]*_*.ipynb"))
    return found


async def build(path: Path, slots: asyncio.Semaphore, **settings: object) -> tuple[Path, float, str | None]:
    """Execute one notebook in place; (path, seconds, error text or None). A failed notebook is not saved.

    ``settings`` override ``notebook_client()``'s (tests shorten the waits).
    """
    async with slots:
        nb = nbformat.read(path, as_version=4)
        client = notebook_client(nb, path.parent, **settings)
        started = time.monotonic()
        try:
            await client.async_execute()
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
            return path, time.monotonic() - started, _summary(error)
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, path)
        return path, time.monotonic() - started, None


SANITIZE_CFG = HERE.parent / "tests" / "nbval_sanitize.cfg"
"""The volatile-text patterns nbval applies (``regex:`` / ``replace:`` pairs)."""

SKIP_COMPARE = ("metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
                "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg")
"""What nbval leaves out of a comparison (its defaults: widget model ids are random)."""


def output_differences(stored: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> list[str]:
    """Where ``fresh``'s outputs differ from ``stored``'s, as ``make nbval`` would judge: one line per cell.

    Streams are merged per name, volatile text is sanitized with
    ``SANITIZE_CFG``, and each output field is compared in order (as nbval
    does; widget model ids and images are skipped). Cells stored unrun are not
    compared. Used where a notebook runs outside nbval: ``bench/room.py``,
    ``make hub-test``.
    """
    patterns = _sanitize_patterns()
    differences = []
    stored_cells = [c for c in stored.cells if c.cell_type == "code"]
    fresh_cells = [c for c in fresh.cells if c.cell_type == "code"]
    if len(stored_cells) != len(fresh_cells):
        return [f"{len(fresh_cells)} code cells, stored {len(stored_cells)}"]
    for number, (old, new) in enumerate(zip(stored_cells, fresh_cells), start=1):
        if old.get("execution_count") is None:
            continue
        want, got = _flatten(old.outputs, patterns), _flatten(new.get("outputs", []), patterns)
        if want != got:
            keys = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
            differences.append(f"code cell {number}: {', '.join(keys)} differ")
    return differences


def _sanitize_patterns() -> list[tuple[str, str]]:
    lines = [line.strip() for line in SANITIZE_CFG.read_text(encoding="utf-8").splitlines()]
    regexes = [line[len("regex:"):].strip() for line in lines if line.startswith("regex:")]
    replaces = [line[len("replace:"):].strip() for line in lines if line.startswith("replace:")]
    return list(zip(regexes, replaces))


def _flatten(outputs: list[Any], patterns: list[tuple[str, str]]) -> dict[str, list[Any]]:
    """nbval's view of a cell's outputs: field -> values in order, streams merged per name, text sanitized."""
    def clean(value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "".join(value)
        if isinstance(value, str):
            for regex, replace in patterns:
                value = re.sub(regex, replace, value)
        return value

    fields: dict[str, list[Any]] = defaultdict(list)
    streams: dict[str, str] = {}
    for output in outputs:
        if output["output_type"] == "stream":
            streams[output["name"]] = streams.get(output["name"], "") + clean(output["text"])
            continue
        for key, value in output.items():
            if key == "data":
                for mime, data in value.items():
                    if mime not in SKIP_COMPARE:
                        fields[mime].append(clean(data))
            elif key not in SKIP_COMPARE:
                fields[key].append(clean(value))
    for name, text in streams.items():
        fields[name].append(text)
    return dict(fields)


def _summary(error: Exception) -> str:
    """One line for the build's report: the exception a cell raised, or what timed out and after how long."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    if isinstance(error, CellTimeoutError):  # "A cell timed out ..., after N seconds." / "The message was: ..."
        return f"{type(error).__name__}: {' '.join(lines[:2])}"
    return f"{type(error).__name__}: {lines[-1] if lines else ''}"


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="notebooks to build (default: all chapters and solutions)")
    parser.add_argument("-j", "--jobs", type=int, default=4, help="notebooks built at once (default 4)")
    args = parser.parse_args(argv)
    for name, value in NB_ENV.items():
        os.environ.setdefault(name, value)
    slots = asyncio.Semaphore(max(args.jobs, 1))
    results = await asyncio.gather(*(build(path, slots) for path in notebooks(args.paths)))
    failed = 0
    for path, seconds, error in results:
        where = path.relative_to(HERE.parent) if path.is_relative_to(HERE.parent) else path
        print(f"{'FAILED' if error else 'ok':6} {seconds:5.1f} s  {where}" + (f"\n       {error}" if error else ""))
        failed += error is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
