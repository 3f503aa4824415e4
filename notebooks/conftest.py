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


# ---------------------------------------------------------------------------
# A stored widget snapshot is held to a fresh run's (issue 35, item 6).
#
# A widget's stored text/html is its static copy (dreamloop/widgets/static.py), written when the cell's run
# ends through update_display, which nbval does not replay; the sanitize file therefore hides the whole copy
# from nbval's own comparison. Here nbval's messages are watched: a display that is updated takes its last
# update, and each stored static copy is compared with the fresh one as text (tags, pictures and times aside:
# a picture's geometry and a duration depend on the machine). A copy that says something else (a denied call
# that "ran", a verdict that changed) fails the cell, so a stored output whose code changed is re-executed.

import html as _html
import re as _re

_STATIC = _re.compile(r"<!-- dreamloop:static -->([\s\S]*?)<!-- /dreamloop:static -->")
_VOLATILE = [
    (_re.compile(r"<style>[\s\S]*?</style>"), " "),  # the stylesheet is how, not what (an untrusted page drops it)
    (_re.compile(r"<wbr>"), ""),  # a break opportunity is not a space
    (_re.compile(r"<img\b[^>]*>"), " "),  # pictures (SVG data URIs): their geometry is timing
    (_re.compile(r"<[^>]+>"), " "),
    (_re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "UUID"),
    (_re.compile(r"/tmp/[^\s'\"<]+"), "TMPDIR"),
    (_re.compile(r"\d+(?:[.,]\d+)*\s*(?:ms|s|秒|毫秒)\b"), "T"),
    (_re.compile(r"\b\d+(?:\.\d+)?\s*(?:tokens?/s|tok/s)"), "RATE"),
]


def snapshot_text(html: str) -> str:
    """What a stored static copy says, as text: tags, stylesheets and pictures out, times and ids normalised."""
    found = _STATIC.search(html)
    text = found.group(1) if found else html
    for pattern, replace in _VOLATILE:
        text = pattern.sub(replace, text)
    return " ".join(_html.unescape(text).split())


_displays: list[tuple[str | None, dict]] = []  # the cell's displays, in order: (display_id, data)
_updates: dict[str, dict] = {}  # display_id -> its last update's data
_cell_msg_id: list[str] = []


def _watch(get_kernel_message):
    def watched(self, timeout=None, stream="iopub"):
        msg = get_kernel_message(self, timeout=timeout, stream=stream)
        kind, content = msg.get("msg_type"), msg.get("content") or {}
        parent = (msg.get("parent_header") or {}).get("msg_id")
        display_id = (content.get("transient") or {}).get("display_id")
        if kind == "execute_input" and not _cell_msg_id:
            _cell_msg_id.append(parent)
        elif kind in ("display_data", "execute_result") and _cell_msg_id and parent == _cell_msg_id[0]:
            _displays.append((display_id, content.get("data") or {}))
        elif kind == "update_display_data" and display_id:
            _updates[display_id] = content.get("data") or {}
        return msg
    return watched


def _fresh_snapshots(test):
    """The fresh outputs' display data, each with its display's last update applied (the order of displays)."""
    shown = iter(_displays)
    for out in test:
        if out.get("output_type") in ("display_data", "execute_result"):
            display_id, _ = next(shown, (None, None))
            if display_id in _updates:
                out["data"] = dict(_updates[display_id])
    return test


def _snapshot_differences(test, ref) -> list[str]:
    fresh = [o["data"]["text/html"] for o in test if "text/html" in o.get("data", {}) and _STATIC.search(o["data"]["text/html"])]
    stored = [o["data"]["text/html"] for o in ref if "text/html" in o.get("data", {}) and _STATIC.search(o["data"]["text/html"])]
    problems = []
    if len(fresh) != len(stored):
        problems.append(f"widget snapshots: {len(stored)} stored, {len(fresh)} in a fresh run")
    for number, (a, b) in enumerate(zip(stored, fresh), start=1):
        said, says = snapshot_text(a), snapshot_text(b)
        if said != says:
            at = next((i for i, (x, y) in enumerate(zip(said, says)) if x != y), min(len(said), len(says)))
            problems.append(f"widget snapshot {number} differs from a fresh run's (re-execute the chapter): stored "
                            f"…{said[max(0, at - 80):at + 120]}… fresh …{says[max(0, at - 80):at + 120]}…")
    return problems


def pytest_configure(config):
    try:
        from nbval.plugin import IPyNbCell, IPyNbFile
    except ImportError:  # nbval not installed: nothing to watch
        return
    if getattr(IPyNbCell, "_dreamloop_snapshots", False):
        return
    IPyNbFile.get_kernel_message = _watch(IPyNbFile.get_kernel_message)
    runtest, compare = IPyNbCell.runtest, IPyNbCell.compare_outputs

    def fresh_runtest(self):
        _displays.clear()
        _cell_msg_id.clear()
        return runtest(self)

    def compare_with_snapshots(self, test, ref, skip_compare=None):
        same = compare(self, _fresh_snapshots(test), ref, skip_compare)
        problems = _snapshot_differences(test, ref)
        if problems:
            self.comparison_traceback = [*getattr(self, "comparison_traceback", []), *problems]
            return False
        return same

    IPyNbCell.runtest, IPyNbCell.compare_outputs = fresh_runtest, compare_with_snapshots
    IPyNbCell._dreamloop_snapshots = True
