"""See chapter 03 as a learner sees it: JupyterLab in a real (headless) Chromium, checked automatically.

    make browser-test                          # installs chromium / playwright when missing, then runs this
    .venv/bin/python tests/browser/check_lab.py [--notebook notebooks/03_*.ipynb] [--out build/browser]

What it does, all on 127.0.0.1 and nothing else (every other request the page makes is aborted):

1. copies ``notebooks/`` (and ``images/``) to a temp root, so the checkout is never written to;
2. starts ``jupyter lab`` there on a free port (own config/data/settings dirs, ``DREAMLOOP_AUTO_ANSWER=1``);
3. opens chapter 03 in Debian's Chromium through Playwright (``executable_path``; never ``playwright install``),
   runs every cell (``notebook:run-all-cells`` through ``window.jupyterapp``) and then checks, in the page:
   the cells all ran without an error output, the State inspector rendered (slider + panes), moving its
   slider one step with the keyboard shows the next checkpoint in the messages pane (and the kernel got the
   new value), the live view shows the streamed text and every tool call, the Mermaid figure rendered;
4. saves ``state-inspector.png`` and ``live-view.png`` (element screenshots for the README), ``lab.png``
   (the whole window) and ``mermaid.png`` under ``--out`` (default ``build/browser``).

What the page must show is asked of the kernel, not hard-coded: the texts and tool names of the run each
LiveView followed, the messages of the checkpoint the slider moves to. A failure names the check, says
what was expected, dumps the page's console errors and the server log tail, and saves ``failure.png``.
The whole check has a budget (default 85 s) and the server it started is always stopped (the API's
shutdown, then its process group, then any kernel left, by pid), and the browser too: also when the
budget runs out, on Ctrl-C or on SIGTERM.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    # without these, Chromium floods a closed network with background requests
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run", "--disable-quic", "--disable-default-apps", "--disable-domain-reliability",
]
LOOPBACK = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:")


# ---------------------------------------------------------------------------------------------------------
# budget, checks, failures


class CheckFailed(Exception):
    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"{check}: {message}")
        self.check, self.message = check, message


class Budget:
    """The whole check's time; every wait is capped by what is left of it."""

    def __init__(self, seconds: float) -> None:
        self.total = seconds
        self.t0 = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.total - self.elapsed()

    def ms(self, cap_seconds: float) -> float:
        """A Playwright timeout (ms): ``cap_seconds`` or what is left, whichever is less (at least 0.5 s)."""
        return max(500.0, min(cap_seconds, self.left() - 1.0) * 1000.0)


class Report:
    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.current = "start"
        self.passed: list[tuple[str, float, str]] = []
        self.console: list[str] = []  # the page's console errors and warnings, uncaught errors
        self.blocked: list[str] = []  # requests to anything but the server, aborted
        self.failure_png: Path | None = None
        self._note = ""

    @contextlib.contextmanager
    def check(self, name: str) -> Iterator[None]:
        self.current = name
        started = time.monotonic()
        try:
            yield
        except CheckFailed:
            raise
        except Exception as error:  # a Playwright timeout, a JS error: name the check it happened in
            text = str(error).strip().splitlines()
            raise CheckFailed(name, f"{type(error).__name__}: {' / '.join(text[:4])}") from error
        took = time.monotonic() - started
        note, self._note = self._note, ""
        self.passed.append((name, took, note))
        print(f"  ok  {name:<48} {took:5.1f} s  {note}", flush=True)

    def note(self, text: str) -> None:
        self._note = text


def fail(check: str, message: str) -> None:
    raise CheckFailed(check, message)


# ---------------------------------------------------------------------------------------------------------
# the JupyterLab server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """Every live process under ``pid`` (from /proc; the kernels run in their own sessions)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def sweep_children(grace: float = 2.0) -> None:
    """End, by pid, whatever this process started that still runs (the Playwright driver, Chromium).

    Grandchildren first (Chromium ends its own helpers and is reaped by the driver), then our own
    children (reaped here); SIGTERM, then SIGKILL after ``grace`` seconds.
    """
    mine = descendants(os.getpid())
    children = {pid for pid in mine if _ppid(pid) == os.getpid()}
    for wave in ([p for p in mine if p not in children], [p for p in mine if p in children]):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            live = [pid for pid in wave if alive(pid)]
            for pid in live:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + grace
            while live and time.monotonic() < deadline:
                for pid in live:
                    if pid in children:
                        with contextlib.suppress(ChildProcessError, OSError):
                            os.waitpid(pid, os.WNOHANG)
                live = [pid for pid in live if alive(pid)]
                time.sleep(0.05)
            if not live:
                break


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie of ours is dead for our purpose
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class LabServer:
    def __init__(self, root: Path, notebook_dir: Path, env: dict[str, str]) -> None:
        self.root, self.port, self.token = root, free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = root / "jupyter-lab.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self.cmd = [
            sys.executable, "-m", "jupyter", "lab", "--no-browser",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={notebook_dir}",
            "--ServerApp.allow_root=True",          # CI runs as root; Jupyter refuses without it
            "--ServerApp.open_browser=False",
            "--LabApp.news_url=None",               # no news fetches
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            f"--LabApp.workspaces_dir={root / 'workspaces'}",
            f"--LabApp.user_settings_dir={root / 'user-settings'}",
            "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: run JupyterLab commands from the page
            "--LanguageServerManager.autodetect=False",  # no scan for language servers at start
        ]
        self.env = env

    def start(self) -> None:
        settings = self.root / "user-settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        # no "get notified about Jupyter news?" toast over the notebook
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False}))
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT, env=self.env,
                                     cwd=self.root, start_new_session=True)

    def wait_ready(self, budget: Budget, cap: float = 30.0) -> None:
        deadline = time.monotonic() + min(cap, budget.left() - 1)
        url = f"{self.base}/api/status?token={self.token}"
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                fail("JupyterLab server starts", f"jupyter lab exited with code {self.proc.returncode}")
            try:
                with urllib.request.urlopen(url, timeout=1) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        fail("JupyterLab server starts", f"no answer from {self.base}/api/status")

    def log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server and everything it started; safe to call twice and from another thread."""
        with self._lock:
            if self._stopped or self.proc is None:
                return
            self._stopped = True
        proc = self.proc
        kids = descendants(proc.pid)  # kernels run in their own process groups: remember them now
        if proc.poll() is None:
            try:  # the clean way: the server shuts its kernels down itself
                request = urllib.request.Request(f"{self.base}/api/shutdown?token={self.token}", method="POST")
                urllib.request.urlopen(request, timeout=3).close()
            except (urllib.error.URLError, OSError):
                pass
            try:
                proc.wait(6)
            except subprocess.TimeoutExpired:
                for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 3)):
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, sig)
                    try:
                        proc.wait(wait)
                        break
                    except subprocess.TimeoutExpired:
                        continue
        for pid in kids:  # anything the shutdown left behind (a kernel, its children): by pid
            if alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self._log.close()


# ---------------------------------------------------------------------------------------------------------
# page helpers (JavaScript)

JS_HELPERS = r"""
() => {
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const panel = () => window.jupyterapp && window.jupyterapp.shell.currentWidget;
  window.__dl = {
    norm,
    panel,
    // StateInspector: a VBox whose children are [IntSlider "checkpoint", HTML header, Tab of panes]
    inspectors() {
      const marked = [...document.querySelectorAll('.dreamloop-inspector')];
      if (marked.length) return marked;
      return [...document.querySelectorAll('.widget-slider')]
        .filter((s) => norm((s.querySelector('.widget-label') || {}).textContent) === 'checkpoint')
        .map((s) => s.parentElement)
        .filter((root) => root && root.querySelector(':scope > .widget-tab, :scope > .jupyter-widget-tab'));
    },
    inspectorParts(root) {
      const tab = root.querySelector(':scope > .widget-tab, :scope > .jupyter-widget-tab');
      const titles = [...tab.querySelectorAll('.lm-TabBar-tabLabel')].map((t) => norm(t.textContent));
      const contents = tab.querySelector('.widget-tab-contents') || tab.querySelector('.lm-StackedPanel');
      const panes = contents ? [...contents.children] : [];
      const header = [...root.children].find((c) => c.classList.contains('widget-html'));
      const slider = root.querySelector('.widget-slider');
      return {
        titles,
        paneTexts: panes.map((p) => norm(p.textContent)),
        header: norm(header && header.textContent),
        readout: norm((slider.querySelector('.widget-readout') || {}).textContent),
        handle: !!slider.querySelector('.noUi-handle'),
      };
    },
    // LiveView: a VBox whose first child is an HBox [Stop button (.dreamloop-stop), status]
    liveViews() {
      const marked = [...document.querySelectorAll('.dreamloop-live')];
      if (marked.length) return marked;
      return [...document.querySelectorAll('.dreamloop-stop')]
        .map((b) => b.closest('.widget-hbox'))
        .map((h) => h && h.parentElement)
        .filter(Boolean);
    },
    cellStatus() {
      const p = panel();
      if (!p || !p.content || !p.content.model) return { ready: false };
      const cells = [];
      const model = p.content.model;
      for (let i = 0; i < model.cells.length; i++) {
        const c = model.cells.get(i);
        if (c.type !== 'code') continue;
        const outputs = c.outputs ? c.outputs.toJSON() : [];
        const tags = (c.getMetadata && c.getMetadata('tags')) || [];
        const error = tags.includes('raises-exception') ? null : outputs.find((o) => o.output_type === 'error');
        cells.push({
          index: i,
          count: c.executionCount,
          error: error ? `${error.ename}: ${error.evalue}` : null,
          source: c.sharedModel.getSource().split('\n')[0].slice(0, 80),
        });
      }
      const kernel = p.sessionContext && p.sessionContext.session && p.sessionContext.session.kernel;
      const dialog = document.querySelector('.jp-Dialog');
      return {
        ready: true,
        cells,
        kernel: kernel ? kernel.status : 'none',
        runAll: window.__dlRunAll || null,
        dialog: dialog ? norm(dialog.textContent).slice(0, 200) : null,
        tracebacks: [...document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')]
          .map((e) => e.textContent).filter((t) => t.includes('Traceback')).map((t) => t.slice(0, 600)),
      };
    },
    // record what the live views' "streaming…" part showed while the cells ran (distinct texts, capped)
    watchStreaming() {
      const record = window.__dlStream = { frames: 0, samples: [] };
      const seen = new Set();
      const look = () => {
        for (const el of document.querySelectorAll('.dreamloop-live .widget-html-content')) {
          const t = norm(el.textContent);
          if (!t.includes('streaming…') || seen.has(t)) continue;
          seen.add(t);
          record.frames += 1;
          if (record.samples.length < 400) record.samples.push(t.slice(0, 2000));
        }
      };
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, characterData: true });
    },
  };
  return true;
}
"""

RUN_ALL = r"""
() => {  // start the command, do not wait for it: the Python side polls window.__dlRunAll and the cells
  window.__dlRunAll = { done: false, result: null, error: null };
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    (result) => { window.__dlRunAll = { done: true, result: result === undefined ? null : !!result, error: null }; },
    (e) => { window.__dlRunAll = { done: true, result: false, error: String(e) }; });
  return true;
}
"""

KERNEL_EXECUTE = r"""
async ([code, ms]) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  let out = '', err = '';
  const future = kernel.requestExecute({ code, silent: false, store_history: false });
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === 'stream') { if (msg.content.name === 'stdout') out += msg.content.text; else err += msg.content.text; }
    if (t === 'error') err += msg.content.ename + ': ' + msg.content.evalue;
  };
  const late = new Promise((resolve) => setTimeout(() => resolve('timeout'), ms));
  if (await Promise.race([future.done.then(() => 'done'), late]) === 'timeout')
    err += `the kernel did not answer within ${ms} ms (busy?)`;
  return { out, err };
}
"""

# Run in the learner's kernel (not stored in history, outputs parented to this request, not to a cell).
PROBE_PY = r'''
def _dreamloop_browser_probe():
    import json, re
    try:
        from ipywidgets.widgets.widget import _instances as widgets
    except ImportError:
        import ipywidgets
        widgets = ipywidgets.Widget.widgets
    from dreamloop.widgets import LiveView, StateInspector

    def field(obj, key, default=None):
        return obj.get(key, default) if isinstance(obj, dict) else getattr(obj, key, default)

    def content(message):
        inner = field(message, "message")
        blocks = field(inner, "content", []) if inner is not None else []
        return [{"type": "text", "text": blocks}] if isinstance(blocks, str) else list(blocks or [])

    def norm(text):
        return re.sub(r"\s+", " ", str(text or "")).strip()

    def snippet(message):
        for block in content(message):
            kind = field(block, "type")
            if kind == "text" and norm(field(block, "text")):
                return norm(field(block, "text"))[:40]
            if kind == "tool_result":
                body = field(block, "content")
                if isinstance(body, list):
                    body = " ".join(str(field(b, "text", "")) for b in body)
                return norm(body)[:40] or "tool_result"
            if kind == "tool_use":
                return str(field(block, "name"))
        return None

    out = {"live": [], "inspectors": []}
    for widget in list(widgets.values()):
        if isinstance(widget, LiveView):
            run = getattr(widget, "run", None)
            trace = getattr(run, "trace", None)
            texts, tools = [], []
            if trace is not None:
                for message in trace.messages.values():
                    if field(message, "type") != "assistant":
                        continue
                    for block in content(message):
                        if field(block, "type") == "text" and norm(field(block, "text")):
                            texts.append(norm(field(block, "text")))
                        elif field(block, "type") == "tool_use":
                            tools.append(str(field(block, "name")))
            out["live"].append({"model_id": widget.model_id, "texts": texts, "tools": sorted(set(tools)),
                                "terminal": repr(widget.terminal)})
        elif isinstance(widget, StateInspector):
            points = widget.trace.checkpoints
            value = widget.slider.value
            entry = {"model_id": widget.model_id, "value": value, "max": widget.slider.max,
                     "count": len(points), "steps": {}}
            for step in range(1, len(points)):
                before = set(points[step - 1].state_messages)
                fresh = [u for u in points[step].state_messages if u not in before]
                entry["steps"][str(step)] = {
                    "snippets": [s for s in (snippet(widget.trace.messages[u]) for u in fresh) if s],
                    "kinds": [field(widget.trace.messages[u], "type") for u in fresh],
                }
            out["inspectors"].append(entry)
    print("@@DL@@" + json.dumps(out))

_dreamloop_browser_probe()
del _dreamloop_browser_probe
'''


# ---------------------------------------------------------------------------------------------------------
# the check


def find_notebook(pattern: str) -> Path:
    hits = sorted(REPO.glob(pattern)) if not Path(pattern).is_absolute() else [Path(pattern)]
    hits = [h for h in hits if ".ipynb_checkpoints" not in h.parts]
    if not hits:
        fail("chapter 03 exists", f"no notebook matches {pattern!r} under {REPO}")
    return hits[0].resolve()


def find_chromium() -> str:
    for candidate in (os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser"),
                      "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    fail("Chromium is installed", "no chromium found (apt-get install chromium, or set CHROMIUM=/path); "
         "`make browser-test` installs it")
    return ""


def mermaid_blocks(notebook: Path) -> int:
    cells = json.loads(notebook.read_text())["cells"]
    return sum("```mermaid" in "".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown")


def run(args: argparse.Namespace, budget: Budget, report: Report, server_box: list[LabServer]) -> None:
    from playwright.sync_api import sync_playwright

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("failure.png", "state-inspector.png", "live-view.png", "lab.png", "mermaid.png"):
        (out / stale).unlink(missing_ok=True)

    with report.check("chapter 03 exists"):
        notebook = find_notebook(args.notebook)
        source_dir = notebook.parent
        report.note(str(notebook.relative_to(REPO)) if notebook.is_relative_to(REPO) else str(notebook))

    root = Path(tempfile.mkdtemp(prefix="dreamloop-browser-"))
    lab_root = root / "lab"
    env = dict(os.environ)
    env.update({
        "DREAMLOOP_AUTO_ANSWER": "1",   # ask prompts answer themselves
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_CONFIG_DIR": str(root / "config"),
        "JUPYTER_DATA_DIR": str(root / "data"),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
        "IPYTHONDIR": str(root / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
    })
    env.pop("JUPYTER_PATH", None)
    server = LabServer(root, lab_root, env)
    server_box.append(server)  # from here on, main() stops it and removes root, whatever happens
    # a copy: JupyterLab saves, checkpoints and the kernel writes; the checkout must stay untouched
    shutil.copytree(source_dir, lab_root / source_dir.name,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc"))
    if (REPO / "images").is_dir() and source_dir.parent == REPO:
        shutil.copytree(REPO / "images", lab_root / "images")  # notebooks may show ../images/*.svg
    rel = f"{source_dir.name}/{notebook.name}"

    with report.check("JupyterLab server starts"):
        server.start()
        server.wait_ready(budget)
        report.note(f"127.0.0.1:{server.port}")

    console, blocked = report.console, report.blocked
    with sync_playwright() as p:
        with report.check("Chromium starts"):
            chromium = find_chromium()
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_FLAGS,
                                        timeout=budget.ms(20))
            report.note(f"{chromium} {browser.version}")
        try:
            # 2x pixels: the screenshots stay sharp in the README
            context = browser.new_context(viewport={"width": 1280, "height": 1000}, device_scale_factor=2,
                                          service_workers="block")

            def guard(route: Any) -> None:  # loopback only
                url = route.request.url
                if url.startswith(LOOPBACK) and (url.startswith(f"{server.base}/") or not url.startswith("http")):
                    route.continue_()
                else:
                    blocked.append(url)
                    route.abort()

            context.route("**/*", guard)
            page = context.new_page()
            page.on("console", lambda m: console.append(f"console.{m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            page.on("crash", lambda _p: console.append("the page crashed"))
            try:
                check_page(page, server, rel, notebook, out, budget, report, args.run_timeout)
            except CheckFailed:
                with contextlib.suppress(Exception):  # the page as it was when the check failed
                    page.screenshot(path=str(out / "failure.png"), timeout=3000)
                    report.failure_png = out / "failure.png"
                raise
        finally:
            with contextlib.suppress(Exception):
                browser.close()


def wait_until(predicate: Callable[[], Any], seconds: float, budget: Budget, step: float = 0.25) -> Any:
    deadline = time.monotonic() + max(0.5, min(seconds, budget.left() - 1.0))
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(step)


def shoot(page: Any, element: Any, path: Path, budget: Budget) -> None:
    """An element screenshot that shows all of the element: the window grows when the element is taller."""
    size = page.viewport_size
    box = element.bounding_box() or {"height": 0}
    tall = box["height"] + 200 > size["height"]
    if tall:
        page.set_viewport_size({"width": size["width"], "height": min(int(box["height"]) + 300, 6000)})
        page.wait_for_timeout(300)
    try:
        element.scroll_into_view_if_needed(timeout=budget.ms(5))
        page.mouse.move(0, 0)  # no hover highlight in the picture
        page.wait_for_timeout(200)
        element.screenshot(path=str(path), timeout=budget.ms(10))
    finally:
        if tall:
            page.set_viewport_size(size)


def longest_prefix(text: str, sample: str) -> int:
    """How much of ``text`` (from its start) ``sample`` contains."""
    low, high = 0, len(text)
    while low < high:  # "text[:n] in sample" is monotonic in n
        mid = (low + high + 1) // 2
        if text[:mid] in sample:
            low = mid
        else:
            high = mid - 1
    return low


def kernel_probe(page: Any, budget: Budget) -> dict[str, Any]:
    result = page.evaluate(KERNEL_EXECUTE, [PROBE_PY, int(budget.ms(15))])
    for line in result["out"].splitlines():
        if line.startswith("@@DL@@"):
            return json.loads(line[len("@@DL@@"):])
    raise RuntimeError(f"the kernel probe printed no result; stderr: {result['err'][-800:]}")


def check_page(page: Any, server: LabServer, rel: str, notebook: Path, out: Path, budget: Budget,
               report: Report, run_timeout: float) -> None:
    code_cells = sum(c.get("cell_type") == "code" for c in json.loads(notebook.read_text())["cells"])

    with report.check("JupyterLab loads"):
        page.goto(f"{server.base}/lab/tree/{rel}?token={server.token}&reset", timeout=budget.ms(20),
                  wait_until="domcontentloaded")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=budget.ms(20))
        page.evaluate(JS_HELPERS)
        page.evaluate("() => window.__dl.watchStreaming()")

    with report.check("chapter 03 opens"):
        opened = time.monotonic()
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=budget.ms(20))
        shown = time.monotonic() - opened
        page.wait_for_function(
            """(rel) => { const p = window.__dl.panel();
                          return p && p.context && p.context.path === rel && p.sessionContext; }""",
            arg=rel, timeout=budget.ms(15))
        page.evaluate("""(ms) => Promise.race([window.__dl.panel().context.ready,
                                                new Promise((r) => setTimeout(r, ms))])""", int(budget.ms(15)))

        def kernel_ready() -> Any:
            status = page.evaluate("() => window.__dl.cellStatus()")
            if status.get("dialog"):  # "Select Kernel": accept the preselected kernel
                with contextlib.suppress(Exception):
                    page.locator(".jp-Dialog .jp-mod-accept").click(timeout=2000)
            return status.get("kernel") == "idle"

        if not wait_until(kernel_ready, 30, budget):
            status = page.evaluate("() => window.__dl.cellStatus()")
            fail("chapter 03 opens", f"the kernel never became idle (status {status.get('kernel')!r}, "
                                     f"dialog {status.get('dialog')!r})")
        shell_cells = page.evaluate("() => window.__dl.panel().content.model.cells.length")
        report.note(f"{shell_cells} cells ({code_cells} code) shown after {shown:.1f} s, "
                    f"kernel idle after {time.monotonic() - opened:.1f} s")
        # room for the notebook (the file browser stays closed, as in most learners' screenshots)
        page.evaluate("() => window.jupyterapp.shell.collapseLeft && window.jupyterapp.shell.collapseLeft()")

    with report.check("run all cells (no error output)"):
        page.evaluate(RUN_ALL)  # returns at once; the command's promise is recorded in window.__dlRunAll
        started = time.monotonic()
        state: dict[str, Any] = {}

        def finished() -> bool:
            nonlocal state
            state = page.evaluate("() => window.__dl.cellStatus()")
            errors = [c for c in state["cells"] if c["error"]]
            if errors or state["tracebacks"]:
                first = errors[0] if errors else None
                where = (f"cell {first['index'] + 1} ({first['source']!r}): {first['error']}" if first
                         else state["tracebacks"][0])
                fail("run all cells (no error output)", f"a cell failed: {where}")
            if state.get("dialog"):
                with contextlib.suppress(Exception):
                    page.locator(".jp-Dialog .jp-mod-accept").click(timeout=2000)
            run_all = state.get("runAll") or {}
            if run_all.get("error"):
                fail("run all cells (no error output)", f"notebook:run-all-cells raised {run_all['error']}")
            counted = all(isinstance(c["count"], int) for c in state["cells"])
            return bool(run_all.get("done") and counted and state["kernel"] == "idle")

        if not wait_until(finished, run_timeout, budget):
            pending = [f"cell {c['index'] + 1} ({c['source']!r})" for c in state.get("cells", [])
                       if not isinstance(c["count"], int)]
            fail("run all cells (no error output)",
                 f"not finished after {time.monotonic() - started:.0f} s: kernel {state.get('kernel')!r}, "
                 f"run-all done={bool((state.get('runAll') or {}).get('done'))}, not yet run: "
                 f"{', '.join(pending[:5]) or 'none'}")
        report.note(f"{len(state['cells'])} code cells ran in {time.monotonic() - started:.1f} s")

    probe: dict[str, Any] = {}
    with report.check("State inspector rendered"):
        page.wait_for_function("() => window.__dl.inspectors().length > 0", timeout=budget.ms(10))
        probe = kernel_probe(page, budget)
        if not probe["inspectors"]:
            fail("State inspector rendered", "the page shows a StateInspector but the kernel has none")
        roots = page.evaluate_handle("() => window.__dl.inspectors()")
        count = page.evaluate("(roots) => roots.length", roots)
        parts = [page.evaluate("([roots, i]) => window.__dl.inspectorParts(roots[i])", [roots, i])
                 for i in range(count)]
        from_kernel = probe["inspectors"]
        for i, part in enumerate(parts):
            if part["titles"][:1] != ["messages"]:
                fail("State inspector rendered", f"inspector {i}: tab titles {part['titles']}, expected "
                                                 "'messages' first")
            if not part["handle"]:
                fail("State inspector rendered", f"inspector {i}: the slider has no handle (.noUi-handle)")
            if not part["paneTexts"] or "messages:" not in part["paneTexts"][0]:
                fail("State inspector rendered", f"inspector {i}: the messages pane is empty or unexpected: "
                                                 f"{(part['paneTexts'] or [''])[0][:200]!r}")
            if "checkpoint" not in part["header"]:
                fail("State inspector rendered", f"inspector {i}: header {part['header'][:200]!r}")
        # the one to drive: the first whose slider can move (a kernel-side inspector with >1 checkpoints)
        movable = [i for i, part in enumerate(parts)
                   if any(k["count"] > 1 and str(k["value"]) == part["readout"] for k in from_kernel)]
        if not movable:
            fail("State inspector rendered", f"no inspector with more than one checkpoint (page: "
                 f"{[p_['readout'] for p_ in parts]}, kernel: {[(k['value'], k['count']) for k in from_kernel]})")
        index = movable[0]
        report.note(f"{count} in the page; tabs {'/'.join(parts[index]['titles'])}")

    with report.check("slider moves to the next checkpoint"):
        root_el = page.evaluate_handle("([roots, i]) => roots[i]", [roots, index]).as_element()
        handle = root_el.query_selector(".noUi-handle")
        root_el.scroll_into_view_if_needed(timeout=budget.ms(5))
        value = int(parts[index]["readout"])
        candidates = {k["model_id"]: k for k in from_kernel if k["value"] == value and k["count"] > 1}

        def press(key: str, target: int) -> dict[str, Any]:
            """One key on the focused handle; wait until the readout says ``target`` and the pane changed."""
            before = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
            handle.focus()
            page.keyboard.press(key)

            def moved() -> Any:
                now = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
                return now if now["readout"] == str(target) and now["paneTexts"][0] != before["paneTexts"][0] \
                    else None

            after = wait_until(moved, 10, budget, step=0.1)
            if not after:
                now = page.evaluate("(el) => window.__dl.inspectorParts(el)", root_el)
                fail("slider moves to the next checkpoint",
                     f"after {key} on the slider handle the readout is {now['readout']!r} (expected {target}) "
                     f"and the messages pane {'did not change' if now['paneTexts'][0] == before['paneTexts'][0] else 'changed'}")
            return after

        start = value
        if all(k["value"] >= k["count"] - 1 for k in candidates.values()):  # at the end: step back first
            start = value - 1
            press("ArrowLeft", start)
        target = start + 1
        after = press("ArrowRight", target)
        # the kernel got the new value (browser -> kernel), the pane shows that checkpoint (kernel -> browser)
        probe_after = kernel_probe(page, budget)
        moved_ids = [k["model_id"] for k in probe_after["inspectors"] if k["model_id"] in candidates
                     and k["value"] == target]
        if not moved_ids:
            fail("slider moves to the next checkpoint", f"the page shows checkpoint {target} but no kernel-side "
                 f"StateInspector has slider.value == {target}: {[k['value'] for k in probe_after['inspectors']]}")
        expected = candidates[moved_ids[0]]["steps"][str(target)]
        pane = after["paneTexts"][0]
        missing = [snip for snip in expected["snippets"] if snip not in pane]
        if missing or not expected["snippets"]:
            fail("slider moves to the next checkpoint",
                 f"the messages pane of checkpoint {target} lacks {missing!r} (messages new there: "
                 f"{expected['kinds']}); pane text: {pane[:300]!r}")
        if f"checkpoint {target} / " not in after["header"]:
            fail("slider moves to the next checkpoint", f"header {after['header'][:200]!r} does not say "
                                                        f"'checkpoint {target} / '")
        report.note(f"readout {'%d→' % value if start != value else ''}{start}→{target}; "
                    f"new in the pane: {', '.join(repr(snip[:22]) for snip in expected['snippets'][:3])}")
        shoot(page, root_el, out / "state-inspector.png", budget)

    with report.check("live view shows the streamed text and tool calls"):
        lives = probe["live"]
        if not lives:
            fail("live view shows the streamed text and tool calls", "the kernel has no LiveView")
        followed = [lv for lv in lives if lv["texts"] or lv["tools"]]
        if not followed:
            fail("live view shows the streamed text and tool calls",
                 "no LiveView in the kernel followed a run with text or tool calls (cannot tell what to expect)")
        page.wait_for_function("() => window.__dl.liveViews().length > 0", timeout=budget.ms(10))
        texts = page.evaluate("() => window.__dl.liveViews().map((el) => window.__dl.norm(el.textContent))")
        shown_by: list[int] = []
        for lv in followed:
            want = [t[:40] for t in lv["texts"]] + lv["tools"]
            hits = [i for i, text in enumerate(texts) if all(w in text for w in want)]
            if not hits:
                best = max(range(len(texts)), key=lambda i: sum(w in texts[i] for w in want))
                missing = [w for w in want if w not in texts[best]]
                fail("live view shows the streamed text and tool calls",
                     f"no live view in the page shows {missing!r} (the run it followed streamed "
                     f"{len(lv['texts'])} text block(s) and called {lv['tools']}); closest live view text: "
                     f"{texts[best][:300]!r}")
            shown_by.append(hits[0])
        svg = page.evaluate("(i) => !!window.__dl.liveViews()[i].querySelector('svg')", shown_by[0])
        if not svg:
            fail("live view shows the streamed text and tool calls", "the live view has no loop diagram (svg)")
        # while the cell ran, the page showed the text growing in the "streaming…" part (not only the end)
        samples = page.evaluate("() => (window.__dlStream || {samples: []}).samples")
        growth = {}
        for text in (t for lv in followed for t in lv["texts"]):
            lengths = {longest_prefix(text, sample) for sample in samples} - {0}
            growth[text] = sorted(lengths)
        streamed = {t: n for t, n in growth.items() if len(n) >= 2 and min(n) < len(t)}
        if not streamed:
            fail("live view shows the streamed text and tool calls",
                 f"the page never showed a text growing in the live view's 'streaming…' part while the cell ran "
                 f"({len(samples)} distinct streaming frames seen; prefixes seen per text: "
                 f"{ {t[:30]: n for t, n in growth.items()} }). A stream without pacing (tokens_per_second) ends "
                 "before the page can draw it.")
        tools = sorted({t for lv in followed for t in lv["tools"]})
        first = next(iter(streamed))
        report.note(f"{len(followed)} live view(s); tools {', '.join(tools) or '-'}; {first[:24]!r} seen "
                    f"growing in {len(streamed[first])} frames")
        live_el = page.evaluate_handle("(i) => window.__dl.liveViews()[i]", shown_by[0]).as_element()
        shoot(page, live_el, out / "live-view.png", budget)

    with report.check("Mermaid figure rendered"):
        wanted = mermaid_blocks(notebook)
        if not wanted:
            fail("Mermaid figure rendered", f"{notebook.name} has no ```mermaid markdown cell")

        def rendered() -> Any:  # JupyterLab 4 draws a mermaid block as <img src="data:image/svg+xml,...">
            return page.evaluate("""() => [...document.querySelectorAll('.jp-RenderedMermaid')].map((m) => {
                const img = m.querySelector('img'), svg = m.querySelector('svg');
                const src = img ? decodeURIComponent(img.getAttribute('src') || '') : '';
                const markup = svg ? svg.outerHTML : src;
                return {
                  drawn: (!!svg && svg.getBoundingClientRect().width > 0) ||
                         (!!img && img.complete && img.naturalWidth > 0 && src.includes('<svg')),
                  error: m.classList.contains('jp-mod-warning') || /Syntax error|Parse error/i.test(markup),
                  text: window.__dl.norm(m.textContent).slice(0, 200),
                  size: img ? `${img.naturalWidth}x${img.naturalHeight}` : svg ? 'inline svg' : '-',
                };
              })""")

        figures = wait_until(lambda: (lambda f: f if sum(x["drawn"] for x in f) >= wanted else None)(rendered()),
                             15, budget)
        figures = figures or rendered()
        bad = [f for f in figures if f["error"]]
        if bad:
            fail("Mermaid figure rendered", f"Mermaid reported an error: {bad[0]['text']!r}")
        drawn = [f for f in figures if f["drawn"]]
        if len(drawn) < wanted:
            fail("Mermaid figure rendered", f"{len(drawn)} of {wanted} mermaid block(s) drawn (.jp-RenderedMermaid "
                                            f"with a loaded svg image); found {figures!r}")
        with contextlib.suppress(Exception):
            figure = page.locator(".jp-RenderedMermaid").first.element_handle(timeout=budget.ms(3))
            shoot(page, figure, out / "mermaid.png", budget)
        report.note(f"{len(drawn)} figure(s), {', '.join(f['size'] for f in drawn)} px")

    with contextlib.suppress(Exception):
        page.evaluate("() => window.__dl.inspectors()[0].scrollIntoView({block: 'center'})")
        page.screenshot(path=str(out / "lab.png"), timeout=budget.ms(5))


# ---------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", default="notebooks/03_*.ipynb",
                        help="the notebook (a glob relative to the repo; default: %(default)s)")
    parser.add_argument("--out", default=str(REPO / "build" / "browser"), help="screenshots go here")
    parser.add_argument("--budget", type=float, default=85.0, help="seconds for the whole check")
    parser.add_argument("--run-timeout", type=float, default=60.0, help="seconds for run-all-cells")
    args = parser.parse_args(argv)

    budget = Budget(args.budget)
    report = Report(budget)
    servers: list[LabServer] = []
    print(f"browser check: JupyterLab in headless Chromium, budget {args.budget:.0f} s", flush=True)

    def emergency_stop(code: int, message: str) -> None:
        """Stop everything this process started (server, kernel, browser) and exit at once."""
        print(f"\n{message}", file=sys.stderr, flush=True)
        for server in servers:
            server.stop()
            shutil.rmtree(server.root, ignore_errors=True)
        sweep_children()
        os._exit(code)

    def watchdog() -> None:  # the last resort if something hangs outside a bounded wait
        emergency_stop(3, f"FAILED [{report.current}]: the whole check went over its budget of {args.budget:.0f} s "
                          "(+4 s grace); stopped the server and the browser")

    timer = threading.Timer(args.budget + 4, watchdog)
    timer.daemon = True
    timer.start()
    # Playwright's sync API does not unwind cleanly from an exception raised in a signal handler: clean up here
    signal.signal(signal.SIGTERM, lambda *_: emergency_stop(143, f"terminated during [{report.current}]"))
    signal.signal(signal.SIGINT, lambda *_: emergency_stop(130, f"interrupted during [{report.current}]"))
    code = 0
    try:
        run(args, budget, report, servers)
    except CheckFailed as error:
        code = 1
        print(f"\nFAILED [{error.check}]: {error.message}", file=sys.stderr)
        dump_failure(report, servers, Path(args.out))
    except ModuleNotFoundError as error:
        code = 2
        print(f"\nFAILED [setup]: {error}; run `make browser-test` (it installs playwright), or "
              f"{sys.executable} -m pip install -e '.[browser]'", file=sys.stderr)
    finally:
        stopping = time.monotonic()
        for server in servers:
            server.stop()
            shutil.rmtree(server.root, ignore_errors=True)
        sweep_children()  # a browser that did not close
        timer.cancel()
        if servers:
            print(f"  stopped the JupyterLab server and its kernel ({time.monotonic() - stopping:.1f} s)",
                  file=sys.stderr if code else sys.stdout, flush=True)
    if code == 0:
        blocked, console = report.blocked, report.console
        print(f"all checks passed in {budget.elapsed():.1f} s; screenshots in {args.out}")
        if console:
            print(f"  page console errors/warnings (not failures): {len(console)}; first: {console[0][:200]}")
        if blocked:
            print(f"  non-loopback requests aborted: {len(blocked)}; first: {blocked[0][:120]}")
        print(f"browser: {len(report.passed)} passed, 0 failed")
    return code


def dump_failure(report: Report, servers: list[LabServer], out: Path) -> None:
    if report.failure_png is not None:
        print(f"  the page when it failed: {report.failure_png}", file=sys.stderr)
    console = report.console
    print(f"  page console errors/warnings ({len(console)}):", file=sys.stderr)
    for line in console[-20:] or ["(none)"]:
        print(f"    {line[:400]}", file=sys.stderr)
    if report.blocked:
        print(f"  non-loopback requests aborted ({len(report.blocked)}): {report.blocked[:5]}", file=sys.stderr)
    for server in servers:
        print(f"  jupyter lab log ({server.log_path}), last lines:", file=sys.stderr)
        for line in server.log_tail().splitlines():
            print(f"    {line}", file=sys.stderr)
    print(f"  passed before the failure: {', '.join(name for name, _, _ in report.passed) or 'none'}",
          file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
