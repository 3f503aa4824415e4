"""Re-execute the book's notebooks and save them with their outputs (``make notebooks``).

    python notebooks/build.py                     # every chapter and every solution
    python notebooks/build.py notebooks/03_*.ipynb

Each notebook runs top to bottom in a fresh ``python3`` kernel (nbclient) of
this interpreter, with the kernel's working directory at the notebook's folder
and the Makefile's notebook environment (``NB_ENV``; the same defaults are set
here when missing), so the stored outputs are what ``make nbval`` compares
against. Widget state and cell timings are not stored, so a rebuild changes
only outputs that really changed. A cell that raises stops that notebook's
build, unless it is tagged ``raises-exception``. This script only executes
and saves; the notebooks themselves are the source.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

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


def notebooks(paths: list[str]) -> list[Path]:
    """The notebooks to build: the given ones, else the chapters and their solutions, in order."""
    if paths:
        return [Path(p).resolve() for p in paths]
    return sorted(HERE.glob("[0-9][0-9]_*.ipynb")) + sorted((HERE / "solutions").glob("[0-9][0-9]_*.ipynb"))


async def build(path: Path, slots: asyncio.Semaphore) -> tuple[Path, float, str | None]:
    """Execute one notebook in place; (path, seconds, error text or None). A failed notebook is not saved."""
    async with slots:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            store_widget_state=False,
            record_timing=False,
            coalesce_streams=True,  # one stdout output per cell, as nbval compares it
        )
        started = time.monotonic()
        try:
            await client.async_execute()
        except CellExecutionError as error:
            return path, time.monotonic() - started, str(error).strip().splitlines()[-1]
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, path)
        return path, time.monotonic() - started, None


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
