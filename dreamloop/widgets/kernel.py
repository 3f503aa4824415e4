"""Can a button act while a cell runs? The ipykernel version check, made where a widget is built.

Clicks reach a cell that is awaiting the loop only on ipykernel >= 7.4: it
dispatches comm messages while an async cell awaits (ipython/ipykernel#1565,
"Allow async cell to process Comm messages", fixing ipykernel#646). Earlier
kernels queue them until the cell ends, or (7.0-7.3 with JupyterLab's
``commsOverSubshells``) run them on a subshell thread, off the event loop.
The widgets with buttons call ``warn_if_old_kernel()`` when they are built,
never at import. It knows nothing about the widgets themselves.
"""

from __future__ import annotations

import re
import sys
import warnings

__all__ = ["MIN_IPYKERNEL", "kernel_version", "warn_if_old_kernel"]

MIN_IPYKERNEL = (7, 4)
"""The first ipykernel whose comm messages reach an awaiting cell (ipykernel#1565)."""

_warned = False


def kernel_version() -> str | None:
    """The ipykernel version if this code runs inside an ipykernel kernel, else None."""
    module = sys.modules.get("ipykernel")
    if module is None:
        return None
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipykernel always brings IPython
        return None
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    return getattr(module, "__version__", None)


def _too_old(version: str) -> bool:
    match = re.match(r"(\d+)\.(\d+)", version)
    return bool(match) and (int(match[1]), int(match[2])) < MIN_IPYKERNEL


def warn_if_old_kernel(version: str | None = None) -> bool:
    """Warn once per process if the kernel's ipykernel is older than 7.4; True if it is.

    ``version`` defaults to ``kernel_version()`` (None outside a kernel: no
    warning). The warning is a ``UserWarning`` naming the reason: Stop and
    Allow/Deny clicks are not handled while a cell is running.
    """
    global _warned
    version = kernel_version() if version is None else version
    if version is None or not _too_old(version):
        return False
    if not _warned:
        _warned = True
        warnings.warn(
            f"ipykernel {version} cannot run a button's callback while a cell is running: the Stop and "
            "Allow/Deny buttons will only act after the cell ends (an awaited prompt waits for its timeout). "
            "Install ipykernel>=7.4 and restart the kernel.",
            UserWarning,
            stacklevel=3,
        )
    return True
