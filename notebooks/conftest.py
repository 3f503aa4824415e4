"""pytest settings for the notebooks under nbval (``make nbval``, ``make test``): late output is waited for.

nbval reads a cell's outputs from the kernel's IOPub channel after the cell
finished, and fails the cell if the next message takes longer than
``IPyNbCell.output_timeout`` (5 s; nbval has no option for it). On a busy
machine (a room of kernels on two cores) output can be that late, and the
chapter fails for no fault of its own. This sets the same wait as the build
(``build.IOPUB_TIMEOUT_S``); past it the cell still fails, loudly.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("dreamloop_notebook_build", Path(__file__).with_name("build.py"))
_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_build)

IOPUB_TIMEOUT_S = _build.IOPUB_TIMEOUT_S


def pytest_collection_modifyitems(items):
    for item in items:
        if type(item).__name__ == "IPyNbCell":
            item.output_timeout = IOPUB_TIMEOUT_S
