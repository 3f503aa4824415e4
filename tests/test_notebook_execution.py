"""Executing notebooks never saves a truncated one: late output is waited for, and past the wait it fails.

A kernel sends a cell's output on its IOPub channel and the "cell done" reply on
another; on a busy machine the output can come seconds after the reply. These
tests make it late on purpose, by holding the kernel's IOPub thread for a few
seconds at the end of a cell (what a loaded machine does by chance), so that a
display output arrives after the reply, and check
the build (``notebooks/build.py``) and nbval (``notebooks/conftest.py``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]

LATE_OUTPUT_CELL = """\
import sys, time
sys.stdout.flush_timeout = sys.stderr.flush_timeout = 0.01  # the cell's end does not wait for IOPub
get_ipython().kernel.iopub_thread.io_loop.add_callback(time.sleep, {seconds})  # IOPub held, as on a busy machine
display("the end of the output")  # a display output (rich, widgets) is sent by the IOPub thread: late
"""


def late_notebook(path: Path, seconds: float) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("print('first')"),
                nbformat.v4.new_code_cell(LATE_OUTPUT_CELL.format(seconds=seconds))]
    nbformat.write(nb, path)
    return path


def test_the_kit_waits_longer_than_nbclient_and_fails_past_it(notebook_build):
    assert notebook_build.IOPUB_TIMEOUT_S >= 30  # nbclient's default is 4 s
    client = notebook_build.notebook_client(nbformat.v4.new_notebook(), REPO)
    assert client.iopub_timeout == notebook_build.IOPUB_TIMEOUT_S and client.raise_on_iopub_timeout


@pytest.mark.slow
def test_late_output_is_waited_for_and_saved(tmp_path, notebook_build):
    path = late_notebook(tmp_path / "late.ipynb", seconds=6)  # longer than nbclient's default wait (4 s)
    _, _, error = asyncio.run(notebook_build.build(path, asyncio.Semaphore(1)))
    assert error is None
    stored = nbformat.read(path, as_version=4)
    assert [o["data"]["text/plain"] for o in stored.cells[1].outputs] == ["'the end of the output'"]


@pytest.mark.slow
def test_output_later_than_the_wait_fails_the_build_and_saves_nothing(tmp_path, notebook_build):
    path = late_notebook(tmp_path / "late.ipynb", seconds=5)
    before = path.read_bytes()
    _, _, error = asyncio.run(notebook_build.build(path, asyncio.Semaphore(1), iopub_timeout=1))
    assert error is not None and error.startswith("CellTimeoutError") and "IOPub" in error
    assert path.read_bytes() == before  # not saved with the end of its output missing


@pytest.mark.slow
def test_nbval_waits_as_long_as_the_build(tmp_path):
    """nbval gives up on output after 5 s between messages; notebooks/conftest.py makes it the build's wait."""
    path = late_notebook(tmp_path / "late.ipynb", seconds=7)
    asyncio.run(_store_expected_outputs(path))
    command = [sys.executable, "-m", "pytest", "-q", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
               "-p", "no:xdist", str(path)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "notebooks")}
    done = subprocess.run([*command, "-p", "conftest"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    without = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert without.returncode != 0 and "exceeded waiting for output" in without.stdout  # what the setting fixes


async def _store_expected_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # what the cells print, as a build would have stored it
        cell.execution_count = 1
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="first\n")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "'the end of the output'"})]
    nbformat.write(nb, path)
