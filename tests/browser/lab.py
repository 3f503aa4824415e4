"""The browser check's machinery: a JupyterLab server on loopback, the page helpers, the kernel probe.

``check_lab.py`` runs the chapters; each chapter's own checks live in ``chapters/chNN.py``. What every
chapter gets here: its stored outputs readable before a run (``check_stored_outputs``), its markdown
rendered as meant (``check_markdown``), and, for a chapter that teaches Stop, ``press_stop`` (re-run a
cell as a person would, click Stop, measure the click → Terminal latency). This module knows nothing
about what a particular chapter shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
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

    def start(self) -> None:
        """Start counting now (each chapter's budget starts when its chapter does)."""
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

    def wait_ready(self, budget: Budget, cap: float = 90.0) -> None:
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
    // the rendered markdown cells: what a reader sees, and the traces of markdown that went wrong
    markdownCells() {
      const p = panel();
      const out = [];
      p.content.widgets.forEach((cell, index) => {
        if (cell.model.type !== 'markdown') return;
        const html = cell.node.querySelector('.jp-RenderedMarkdown');
        if (!html) { out.push({ index, rendered: false }); return; }
        const prose = html.cloneNode(true);  // the text outside code: where markdown syntax must not show
        prose.querySelectorAll('code, pre, .jp-RenderedMermaid').forEach((c) => c.remove());
        out.push({
          index,
          rendered: true,
          text: norm(prose.textContent),
          nestedLists: [...html.querySelectorAll('li > ol, li > ul')].map((l) => ({
            tag: l.tagName.toLowerCase(), start: l.getAttribute('start'), text: norm(l.textContent).slice(0, 80) })),
          math: html.querySelectorAll('mjx-container, .MathJax, .katex').length,
          images: [...html.querySelectorAll('img')].filter((img) => !img.closest('.jp-RenderedMermaid'))
            .map((img) => ({ src: img.getAttribute('src'), ok: img.complete && img.naturalWidth > 0 })),
          mermaid: [...html.querySelectorAll('.jp-RenderedMermaid')].map((m) => ({
            error: m.classList.contains('jp-mod-warning') || /Syntax error|Parse error/i.test(m.innerHTML) })),
          pipes: [...html.querySelectorAll('p')].map((q) => q.textContent).filter((t) => /^\s*\|.*\|\s*$/m.test(t)),
        });
      });
      return out;
    },
    // one cell's pictures as drawn: the smallest label in CSS px of each flowchart (live or a stored image) and
    // Mermaid figure, the figures' sizes, the stored snapshots' images (loaded or not) and the inspectors' height
    figures(index) {
      const cell = panel().content.widgets[index];
      if (!cell) return null;
      const node = cell.node, px = (v) => Math.round(v * 10) / 10;
      const minFont = (svg) => {
        const box = svg.viewBox && svg.viewBox.baseVal, rect = svg.getBoundingClientRect();
        const scale = box && box.width ? rect.width / box.width : 1;
        const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(t.getAttribute('font-size') ||
          getComputedStyle(t).fontSize) * scale)
          .concat([...svg.querySelectorAll('.nodeLabel, .edgeLabel span, .edgeLabel p, foreignObject div')]
            .filter((e) => norm(e.textContent)).map((e) => parseFloat(getComputedStyle(e).fontSize) * scale));
        return sizes.length ? px(Math.min(...sizes)) : null;
      };
      const flowchart = (el) => /queryLoop/.test(el.getAttribute('aria-label') || el.getAttribute('alt') || '');
      // a stored picture (an <img> of an SVG data URI): its smallest font-size, scaled from its viewBox to how
      // wide it is drawn
      const imgLabel = (img) => {
        const src = img.getAttribute('src') || '', comma = src.indexOf(',');
        let text = '';
        try { text = /;base64,/.test(src.slice(0, comma + 1)) ? atob(src.slice(comma + 1))
                                                            : decodeURIComponent(src.slice(comma + 1)); } catch (e) {}
        const doc = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
        const box = doc && doc.getAttribute && doc.getAttribute('viewBox');
        const width = box ? parseFloat(box.split(/[\s,]+/)[2]) : parseFloat((doc && doc.getAttribute &&
          doc.getAttribute('width')) || img.naturalWidth);
        const sizes = [...text.matchAll(/font-size(?:="|:\s*)([\d.]+)/g)].map((m) => parseFloat(m[1]));
        const drawn = img.getBoundingClientRect().width;
        return sizes.length && width && drawn ? px(Math.min(...sizes) * drawn / width) : null;
      };
      return {
        trusted: !!cell.model.trusted,
        mermaid: [...node.querySelectorAll('.jp-RenderedMermaid svg, .jp-RenderedMermaid img')].map((el) => {
          const r = el.getBoundingClientRect();
          if (el.tagName.toLowerCase() === 'svg') return { width: px(r.width), height: px(r.height), labelPx: minFont(el) };
          // JupyterLab draws a Mermaid figure as an <img> of its SVG: read the SVG's font size and viewBox
          const src = el.getAttribute('src') || '', comma = src.indexOf(',');
          let text = '';
          try { text = /;base64,/.test(src.slice(0, comma + 1)) ? atob(src.slice(comma + 1))
                                                              : decodeURIComponent(src.slice(comma + 1)); } catch (e) {}
          const doc = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
          const box = doc && doc.getAttribute('viewBox'), font = /font-size:\s*([\d.]+)px/.exec(text);
          const width = box ? parseFloat(box.split(/[\s,]+/)[2]) : el.naturalWidth;
          return { width: px(r.width), height: px(r.height),
                   labelPx: font && width ? px(parseFloat(font[1]) * r.width / width) : null };
        }),
        flowcharts: [...node.querySelectorAll('.dreamloop-live svg')].filter(flowchart).map((svg) => ({
          kind: 'live', width: px(svg.getBoundingClientRect().width), labelPx: minFont(svg) }))
          .concat([...node.querySelectorAll('img.dreamloop-figure')].filter(flowchart).map((img) => ({
            kind: 'stored', width: px(img.getBoundingClientRect().width),
            // the flowchart's smallest label is 11 of its 700 units
            labelPx: img.naturalWidth ? px(11 * img.getBoundingClientRect().width / img.naturalWidth) : null }))),
        statics: [...node.querySelectorAll('.dreamloop-static')].map((el) => ({
          title: norm((el.querySelector('b') || {}).textContent),
          labels: [...el.querySelectorAll('img')].map(imgLabel).filter((v) => v !== null),
          width: px(el.getBoundingClientRect().width),
          scrollWidth: px(el.scrollWidth),
          height: px(el.getBoundingClientRect().height),
          images: el.querySelectorAll('img').length,
          loaded: [...el.querySelectorAll('img')].filter((i) => i.complete && i.naturalWidth > 0).length,
          svg: el.querySelectorAll('svg').length })),
        notebookWidth: px((node.closest('.jp-Notebook') || node).getBoundingClientRect().width),
        inspectors: [...node.querySelectorAll('.dreamloop-inspector')].map((el) => ({
          height: px(el.getBoundingClientRect().height),
          width: px(el.getBoundingClientRect().width),
          scrollWidth: px(el.scrollWidth),
          cellWidth: px(node.getBoundingClientRect().width),
          panes: [...el.querySelectorAll('.widget-html')].map((h) => px(h.getBoundingClientRect().height)) })),
      };
    },
    // the outputs of every code cell as the page shows them (before a run: the stored ones)
    outputTexts() {
      const p = panel();
      return p.content.widgets.map((cell, index) => cell.model.type !== 'code' ? null : {
        index,
        static: cell.node.querySelectorAll('.dreamloop-static').length,
        widgetErrors: [...cell.node.querySelectorAll('.jp-OutputArea-output')]
          .filter((o) => /Error displaying widget|Loading widget/.test(o.textContent)).length,
        text: norm([...cell.node.querySelectorAll('.jp-OutputArea-output')].map((o) => o.textContent).join(' ')).slice(0, 400),
      }).filter(Boolean);
    },
    // record what the live views' "streaming…" part showed while the cells ran (distinct texts, capped);
    // markers: that label in each language the kit speaks
    watchStreaming(markers) {
      const record = window.__dlStream = { frames: 0, samples: [] };
      const seen = new Set();
      const look = () => {
        for (const el of document.querySelectorAll('.dreamloop-live .widget-html-content')) {
          const t = norm(el.textContent);
          if (!markers.some((m) => t.includes(m)) || seen.has(t)) continue;
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
    widgets = _dreamloop_widget_instances()
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
# finding things, waiting, screenshots



def in_every_language(text: str) -> list[str]:
    """A widget label as the kit shows it in each language (English, then the catalogues' translations).

    Read from the kit itself (``dreamloop.language``), so a chapter of any edition is waited for by its own words.
    """
    from dreamloop.language import LANGUAGES, catalogue

    return [text] + [catalogue(code)[text] for code in LANGUAGES if code != "en"]


def says_checkpoint(header: str, index: int) -> bool:
    """Whether a State inspector's header names checkpoint ``index``, in any language the kit has.

    Built from the inspector's own catalogue key (``dreamloop/widgets/inspector.py``), never a copy of its
    words, so a reworded header cannot leave a chapter's check waiting for words it no longer says
    (tests/test_widgets_api.py holds this against a real header).
    """
    key = "checkpoint {index} (numbered 0 to {last})"
    return any(text.split("{last}")[0].format(index=index) in header for text in in_every_language(key))


def find_notebook(number: str) -> Path:
    """``notebooks/NN_*.ipynb`` for chapter ``number`` ("03", or "zh/03" for another edition's folder)."""
    folder, _, nn = number.rpartition("/")
    hits = sorted((REPO / "notebooks" / folder).glob(f"{nn}_*.ipynb"))
    if not hits:
        fail(f"chapter {number} exists", f"no notebook matches notebooks/{folder + '/' if folder else ''}{nn}_*.ipynb")
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


WIDGET_INSTANCES = r'''
def _dreamloop_widget_instances():
    """Every live widget in the kernel, by model id (ipywidgets 8 keeps them in _instances, 7 in Widget.widgets)."""
    try:
        from ipywidgets.widgets.widget import _instances
    except ImportError:
        import ipywidgets
        return ipywidgets.Widget.widgets
    return _instances
'''
"""Defined in the kernel before every probe or question (``Chapter.execute``): what a probe reads widgets from."""


def kernel_probe(page: Any, budget: Budget) -> dict[str, Any]:
    result = page.evaluate(KERNEL_EXECUTE, [WIDGET_INSTANCES + PROBE_PY, int(budget.ms(15))])
    for line in result["out"].splitlines():
        if line.startswith("@@DL@@"):
            return json.loads(line[len("@@DL@@"):])
    raise RuntimeError(f"the kernel probe printed no result; stderr: {result['err'][-800:]}")




class Chapter:
    """One chapter open in the page: what a chapter module's ``check(ch)`` works with.

    ``page`` (Playwright), ``server``, ``notebook`` (the source path), ``rel`` (its path in the lab root),
    ``out`` (screenshots), ``budget``, ``report``, ``number`` ("03").
    """

    def __init__(self, page: Any, server: "LabServer", rel: str, notebook: Path, out: Path, budget: Budget,
                 report: Report, number: str) -> None:
        self.page, self.server, self.rel, self.notebook = page, server, rel, notebook
        self.out, self.budget, self.report, self.number = out, budget, report, number
        self.layout = "default"  # LAYOUTS: JupyterLab's own (the file browser open) or "wide"

    def probe(self) -> dict[str, Any]:
        """The kernel's widgets as data (``PROBE_PY``): live views and inspectors with what they show."""
        return kernel_probe(self.page, self.budget)

    def ask(self, code: str, marker: str, what: str) -> dict[str, Any]:
        """Run ``code`` in the kernel; the JSON it printed on a line after ``marker`` (a failed check, naming
        ``what``, if it printed none)."""
        result = self.execute(code)
        for line in result["out"].splitlines():
            if line.startswith(marker):
                return json.loads(line[len(marker):])
        fail("the kernel answers", f"{what} printed nothing; stderr: {result['err'][-600:]}")
        return {}

    def execute(self, code: str) -> dict[str, str]:
        """Run ``code`` in the chapter's kernel (not a cell; ``_dreamloop_widget_instances()`` is defined for it);
        ``{"out": stdout, "err": stderr}``."""
        return self.page.evaluate(KERNEL_EXECUTE, [WIDGET_INSTANCES + code, int(self.budget.ms(15))])


LAYOUTS = {
    "default": "() => { const app = window.jupyterapp; app.shell.expandLeft && app.shell.expandLeft(); "
               "return app.commands.execute('filebrowser:activate').catch(() => null); }",
    "wide": "() => window.jupyterapp.shell.collapseLeft && window.jupyterapp.shell.collapseLeft()",
}
"""JupyterLab's own layout (the file browser open beside the notebook, as a learner opens it) and the wide one
(the file browser closed). Sizes are measured at both, in a 1,280 px window."""


def set_layout(ch: "Chapter", name: str) -> float:
    """Put the page in layout ``name``; return the notebook's width in CSS px once it has settled."""
    ch.page.evaluate(LAYOUTS[name])
    width, last = 0.0, -1.0
    for _ in range(20):  # the panels animate: wait until the notebook's width holds still
        ch.page.wait_for_timeout(150)
        width = ch.page.evaluate("() => { const n = document.querySelector('.jp-NotebookPanel .jp-Notebook'); "
                                 "return n ? n.getBoundingClientRect().width : 0; }")
        if abs(width - last) < 0.5:
            break
        last = width
    ch.layout = name
    return round(width)


def open_and_run(ch: Chapter, run_timeout: float) -> None:
    """Open the chapter in JupyterLab, wait for its kernel, run every cell; fail on any error output."""
    page, server, rel, notebook, budget, report = ch.page, ch.server, ch.rel, ch.notebook, ch.budget, ch.report
    code_cells = sum(c.get("cell_type") == "code" for c in json.loads(notebook.read_text())["cells"])

    with report.check("JupyterLab loads"):
        page.goto(f"{server.base}/lab/tree/{rel}?token={server.token}&reset", timeout=budget.ms(60),
                  wait_until="domcontentloaded")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell", timeout=budget.ms(60))
        page.evaluate(JS_HELPERS)
        page.evaluate("(markers) => window.__dl.watchStreaming(markers)", in_every_language("streaming…"))

    with report.check(f"chapter {ch.number} opens"):
        opened = time.monotonic()
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=budget.ms(60))  # slow when loaded
        shown = time.monotonic() - opened
        page.wait_for_function(
            """(rel) => { const p = window.__dl.panel();
                          return p && p.context && p.context.path === rel && p.sessionContext; }""",
            arg=rel, timeout=budget.ms(45))
        page.evaluate("""(ms) => Promise.race([window.__dl.panel().context.ready,
                                                new Promise((r) => setTimeout(r, ms))])""", int(budget.ms(45)))

        def kernel_ready() -> Any:
            status = page.evaluate("() => window.__dl.cellStatus()")
            if status.get("dialog"):  # "Select Kernel": accept the preselected kernel
                with contextlib.suppress(Exception):
                    page.locator(".jp-Dialog .jp-mod-accept").click(timeout=2000)
            return status.get("kernel") == "idle"

        if not wait_until(kernel_ready, 90, budget):
            status = page.evaluate("() => window.__dl.cellStatus()")
            fail(f"chapter {ch.number} opens", f"the kernel never became idle (status {status.get('kernel')!r}, "
                                     f"dialog {status.get('dialog')!r})")
        shell_cells = page.evaluate("() => window.__dl.panel().content.model.cells.length")
        report.note(f"{shell_cells} cells ({code_cells} code) shown after {shown:.1f} s, "
                    f"kernel idle after {time.monotonic() - opened:.1f} s")
        # JupyterLab's own layout first: the file browser open beside the notebook, as a learner opens it
        report.note(f"notebook {set_layout(ch, 'default')} px wide with the file browser open")

    check_stored_outputs(ch)  # before the run replaces them

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



# ---------------------------------------------------------------------------------------------------------
# checks every chapter gets


def _cells(notebook: Path) -> list[dict[str, Any]]:
    return json.loads(notebook.read_text())["cells"]


def check_stored_outputs(ch: Chapter) -> None:
    """Before a run, every stored widget output shows its static HTML (not "Error displaying widget")."""
    page, report = ch.page, ch.report
    widgets = [i for i, c in enumerate(_cells(ch.notebook)) if c.get("cell_type") == "code" and any(
        "application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in c.get("outputs", []))]
    with report.check("stored widget outputs readable before a run"):
        if not widgets:
            report.note("no widget outputs stored")
            return

        def shown() -> Any:
            cells = {c["index"]: c for c in page.evaluate("() => window.__dl.outputTexts()")}
            ok = [i for i in widgets if cells.get(i, {}).get("static")]
            missing = [i for i in widgets if i not in ok]
            if missing:  # JupyterLab draws the cells in view: bring the next one there
                page.evaluate("(i) => { const p = window.__dl.panel(); p.content.scrollToItem && "
                              "p.content.scrollToItem(i, 'start'); }", missing[0])
            return (ok, cells) if not missing else None

        found = wait_until(shown, 30, ch.budget)
        if not found:
            cells = {c["index"]: c for c in page.evaluate("() => window.__dl.outputTexts()")}
            bad = [i for i in widgets if not cells.get(i, {}).get("static")]
            fail("stored widget outputs readable before a run",
                 f"cell(s) {[i + 1 for i in bad]} store a widget but the page shows no static HTML for it: "
                 f"{[cells.get(i, {}).get('text', '')[:160] for i in bad]}")
        ok, cells = found
        errors = [i + 1 for i in ok if cells[i]["widgetErrors"]]
        if errors:
            fail("stored widget outputs readable before a run", f"cell(s) {errors} show 'Error displaying widget'")
    check_snapshots_draw(ch, widgets)
    with report.check("stored widget outputs readable before a run"):
        with contextlib.suppress(Exception):  # what a reader of the unrun notebook sees
            first = page.locator(f".jp-Notebook .jp-Cell >> nth={ok[0]}").locator(".dreamloop-static").first
            shoot(page, first.element_handle(timeout=ch.budget.ms(3)), ch.out / f"stored-{ch.number.replace('/', '-')}.png",
                  ch.budget)
        report.note(f"{len(ok)} widget output(s) shown as static HTML, e.g. {cells[ok[0]]['text'][:60]!r}")


def _stored_figures(cell: dict[str, Any]) -> int:
    """How many pictures a code cell's stored text/html holds (each an ``<img class="dreamloop-figure">``)."""
    html = "".join("".join(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", []))
    return html.count('class="dreamloop-figure"')


def measure(ch: Chapter, index: int) -> dict[str, Any]:
    """Scroll cell ``index`` into view (JupyterLab draws what is in view) and measure its pictures."""
    ch.page.evaluate("(i) => { const p = window.__dl.panel(); p.content.activeCellIndex = i; "
                     "p.content.scrollToItem && p.content.scrollToItem(i, 'start'); }", index)
    ch.page.wait_for_timeout(400)
    return ch.page.evaluate("(i) => window.__dl.figures(i)", index) or {}


def check_snapshots_draw(ch: Chapter, widgets: list[int]) -> None:
    """A fresh clone's notebook is untrusted: its stored outputs are sanitised, and inline <svg> is dropped.
    Every stored snapshot must hold no <svg>, and each of its pictures (images) must load and draw, with its
    labels at least 11 px and nothing cut off at the side, in JupyterLab's own layout (the file browser open)
    and in the wide one."""
    cells = _cells(ch.notebook)
    with ch.report.check("stored snapshots draw in the untrusted notebook"):
        inline = [i + 1 for i, c in enumerate(cells) for o in c.get("outputs", [])
                  if "<svg" in "".join(o.get("data", {}).get("text/html", ""))]
        if inline:
            fail("stored snapshots draw in the untrusted notebook",
                 f"cell(s) {inline} store inline <svg> in text/html: JupyterLab's sanitiser drops it in an "
                 "untrusted notebook")
        notes = []
        for layout in ("default", "wide"):
            width = set_layout(ch, layout)
            drawn, heights, labels, problems = 0, [], [], []
            for index in widgets:
                want = _stored_figures(cells[index])
                got = measure(ch, index)
                if got.get("trusted"):
                    fail("stored snapshots draw in the untrusted notebook",
                         f"cell {index + 1} is trusted: the check must open the notebooks as a fresh clone has them")
                statics = got.get("statics", [])
                images = sum(s["images"] for s in statics)
                loaded = sum(s["loaded"] for s in statics)
                if images < want or loaded < want:
                    fail("stored snapshots draw in the untrusted notebook",
                         f"cell {index + 1} stores {want} picture(s); the page shows {images}, {loaded} drawn")
                drawn += loaded
                heights += [f"{s['title']} {s['height']:.0f}px" for s in statics]
                if layout == "default":
                    with contextlib.suppress(Exception):  # each snapshot as a fresh clone shows it, for a person
                        shots = ch.page.locator(f".jp-Notebook .jp-Cell >> nth={index}").locator(".dreamloop-static")
                        for k in range(min(shots.count(), 2)):
                            name = (f"untrusted-{ch.number.replace('/', '-')}-cell{index + 1}"
                                    f"{'-' + str(k) if k else ''}.png")
                            shoot(ch.page, shots.nth(k).element_handle(timeout=ch.budget.ms(3)), ch.out / name,
                                  ch.budget)
                for snapshot in statics:
                    labels += snapshot.get("labels", [])
                    small = [v for v in snapshot.get("labels", []) if v < 11]
                    if small:
                        problems.append(f"cell {index + 1}'s stored {snapshot['title'] or 'snapshot'} draws labels "
                                        f"at {min(small)} px")
                    if snapshot.get("scrollWidth", 0) > snapshot.get("width", 0) + 2:
                        problems.append(f"cell {index + 1}'s stored {snapshot['title'] or 'snapshot'} is "
                                        f"{snapshot['scrollWidth']:.0f} px wide in {snapshot['width']:.0f} px")
            if problems:
                fail("stored snapshots draw in the untrusted notebook",
                     f"at the {layout} layout (notebook {width} px): " + "; ".join(problems[:6]))
            notes.append(f"{layout} layout, notebook {width} px: {drawn} picture(s) drawn, smallest label "
                         f"{min(labels) if labels else '-'} px")
        ch.report.note(f"untrusted; {'; '.join(notes)}; snapshots {', '.join(heights[:8])}")


def check_sizes(ch: Chapter) -> None:
    """After the run: every flowchart's and Mermaid figure's labels are at least 11 px, no figure is taller than
    1,000 px, and a State inspector (slider, header, one capped pane) stays under 1,200 px and inside its cell
    (what it moves stays next to the slider, its header is not cut off at the side). Measured in JupyterLab's
    own layout (the file browser open, a 1,280 px window: the notebook about 830 px wide) and in the wide one;
    every chapter of both editions is held to it (issues 25, 35). Leaves the page in the wide layout."""
    cells = _cells(ch.notebook)
    figures = [i for i, c in enumerate(cells) if "```mermaid" in "".join(c.get("source", ""))]
    widgets = [i for i, c in enumerate(cells) if c.get("cell_type") == "code" and any(
        "application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in c.get("outputs", []))]
    with ch.report.check("figures readable, panes capped"):
        notes, problems = [], []
        for layout in ("default", "wide"):
            width = set_layout(ch, layout)
            smallest: list[float] = []
            for index in figures + widgets:
                got = measure(ch, index)
                where = f"cell {index + 1} ({layout} layout, notebook {width} px)"
                for m in got.get("mermaid", []):
                    if m["labelPx"] is not None:
                        smallest.append(m["labelPx"])
                    if m["labelPx"] is not None and m["labelPx"] < 11:
                        problems.append(f"the figure in {where} draws its labels at {m['labelPx']} px")
                    if m["height"] > 1000:
                        problems.append(f"the figure in {where} is {m['height']:.0f} px tall")
                for f in got.get("flowcharts", []):
                    if f["kind"] != "live":
                        continue
                    if f["labelPx"] is not None:
                        smallest.append(f["labelPx"])
                    if f["labelPx"] is not None and f["labelPx"] < 11:
                        problems.append(f"the live view's flowchart in {where} draws labels at {f['labelPx']} px")
                for ins in got.get("inspectors", []):
                    if ins["height"] > 1200:
                        problems.append(f"the State inspector in {where} is {ins['height']:.0f} px tall")
                    if ins.get("scrollWidth", 0) > ins.get("width", 0) + 2 or \
                            ins.get("width", 0) > ins.get("cellWidth", 1e9) + 2:
                        problems.append(f"the State inspector in {where} spills sideways "
                                        f"({ins['scrollWidth']:.0f} px in {ins['width']:.0f} px)")
            notes.append(f"{layout} layout, notebook {width} px: smallest label "
                         f"{min(smallest) if smallest else '-'} px")
        if problems:
            fail("figures readable, panes capped", "; ".join(problems[:6]))
        ch.report.note("; ".join(notes))


def check_markdown(ch: Chapter) -> None:
    """Every markdown cell rendered as meant: no accidental lists, no stray math, images and figures drawn."""
    page, report = ch.page, ch.report
    sources = {i: "".join(c.get("source", "")) for i, c in enumerate(_cells(ch.notebook))
               if c.get("cell_type") == "markdown"}
    with report.check("markdown renders as meant"):
        # a cell renders when it is in view (JupyterLab renders lazily): visit each one first
        for index in sources:
            page.evaluate("(i) => { const p = window.__dl.panel(); p.content.activeCellIndex = i; "
                          "p.content.scrollToItem && p.content.scrollToItem(i); }", index)
        wait_until(lambda: all(c["rendered"] for c in page.evaluate("() => window.__dl.markdownCells()")),
                   10, ch.budget)
        cells = page.evaluate("() => window.__dl.markdownCells()")
        problems = []
        for cell in cells:
            source, where = sources.get(cell["index"], ""), f"markdown cell {cell['index'] + 1}"
            if not source:
                continue
            if not cell["rendered"]:
                problems.append(f"{where} did not render")
                continue
            for nested in cell["nestedLists"]:  # a list meant to nest starts at 1; a wrapped "05) ..." does not
                if nested["tag"] == "ol" and nested["start"] not in (None, "1"):
                    problems.append(f"{where}: a wrapped line became a nested numbered list "
                                    f"(start={nested['start']}): {nested['text']!r}; reword so no line starts "
                                    "with a number and a dot or parenthesis")
            if cell["math"] and "$" not in source.replace("`$`", ""):
                problems.append(f"{where}: rendered math the source does not mean")
            elif cell["math"]:
                problems.append(f"{where}: a $ became math: {cell['text'][:100]!r}")
            for image in cell["images"]:
                if not image["ok"]:
                    problems.append(f"{where}: image {image['src']!r} did not load")
            if any(m["error"] for m in cell["mermaid"]):
                problems.append(f"{where}: Mermaid reported an error")
            if cell["pipes"]:
                problems.append(f"{where}: a table did not render: {cell['pipes'][0][:80]!r}")
            for marker in ("**", "```", "]("):
                if marker in cell["text"]:
                    problems.append(f"{where}: markdown left unrendered ({marker!r}): {cell['text'][:100]!r}")
        if problems:
            fail("markdown renders as meant", "; ".join(problems[:6]))
        figures = sum(len(c.get("mermaid", [])) for c in cells)
        report.note(f"{len(cells)} markdown cells; {figures} Mermaid figure(s), "
                    f"{sum(len(c.get('images', [])) for c in cells)} image(s)")


def check_verdicts(ch: Chapter) -> None:
    """Every exercise check cell shows one ✅/❌ verdict after the run, in the chapter's edition's language.

    A Chinese chapter (``zh/NN``) ran ``ex.language("zh")``: its verdicts hold Chinese and no English "Hint:".
    """
    page, report = ch.page, ch.report
    chinese = ch.number.startswith("zh/")
    name = "check cells show one verdict" + (" in Chinese" if chinese else "")
    with report.check(name):
        indices = [i for i, c in enumerate(_cells(ch.notebook))
                   if c.get("cell_type") == "code" and "ex.check_" in "".join(c.get("source", ""))]
        if not indices:
            fail(name, "the chapter has no exercise check cell")
        texts = page.evaluate("""(indices) => indices.map((i) => window.__dl.norm(
            (window.__dl.panel().content.widgets[i].node.querySelector('.jp-OutputArea') || {}).textContent))""",
                              indices)
        for index, text in zip(indices, texts):
            marks = text.count("✅") + text.count("❌")
            if text[:1] not in ("✅", "❌") or marks != 1:
                fail(name, f"cell {index + 1} shows {text[:160]!r}: expected one ✅/❌ verdict line")
            if chinese and (not re.search(r"[\u4e00-\u9fff]", text) or "Hint:" in text):
                fail(name, f"cell {index + 1} shows {text[:160]!r}: expected the verdict in Chinese")
        report.note(f"{len(indices)} check cells, e.g. {texts[0][:50]!r}")


# ---------------------------------------------------------------------------------------------------------
# Stop, as a person presses it


def cell_index(ch: Chapter, marker: str) -> int:
    """The index of the code cell whose source contains ``marker`` (the first one)."""
    for i, cell in enumerate(_cells(ch.notebook)):
        if cell.get("cell_type") == "code" and marker in "".join(cell.get("source", "")):
            return i
    fail(f"chapter {ch.number} has the cell", f"no code cell contains {marker!r}")
    return -1


def run_cell(ch: Chapter, index: int) -> None:
    """Run one cell the way a person does (select it, Run), without waiting for it to finish."""
    ch.page.evaluate("""(i) => { const p = window.__dl.panel(); p.content.activeCellIndex = i;
                                 window.jupyterapp.commands.execute('notebook:run-cell'); }""", index)


def cell_idle(ch: Chapter, index: int) -> bool:
    status = ch.page.evaluate("() => window.__dl.cellStatus()")
    cell = next((c for c in status["cells"] if c["index"] == index), None)
    return status["kernel"] == "idle" and cell is not None and isinstance(cell["count"], int)


STOP_CLOCK = r"""
() => {
  const stop = window.__dlStop = { down: null, end: null };
  document.addEventListener('mousedown', (e) => {
    if (stop.down === null && e.target.closest('.dreamloop-stop')) stop.down = performance.now();
  }, true);
  const seen = () => {
    const v = VIEW;
    if (stop.down !== null && stop.end === null && v && /reason=\s*aborted_/.test(window.__dl.norm(v.textContent)))
      stop.end = performance.now();
  };
  new MutationObserver(seen).observe(document.body, { subtree: true, childList: true, characterData: true });
}
"""
"""Records ``window.__dlStop = {down, end}``: the mousedown on Stop and the first change showing a Terminal."""


def press_stop(ch: Chapter, marker: str, *, when: str, expect: str, check: str) -> dict[str, Any]:
    """Re-run the cell with ``marker`` as a person watching (no ``DREAMLOOP_AUTO_ANSWER``, so paced), wait
    until its live view shows ``when`` ("streaming" or "tools"), click Stop, and measure the time from the
    click to the Terminal shown in the page. Fails unless the run ends ``expect``. Returns
    ``{"latency": s, "reason": ..., "waited": s}``.
    """
    page, report, budget = ch.page, ch.report, ch.budget
    index = cell_index(ch, marker)
    with report.check(check):
        said = ch.execute("import os; os.environ.pop('DREAMLOOP_AUTO_ANSWER', None); "
                          "from dreamloop.widgets import person_watching; print(person_watching())")
        if said["out"].strip() != "True":
            fail(check, f"could not make the kernel a person's (person_watching() said {said!r})")
        try:
            run_cell(ch, index)
            started = time.monotonic()
            view = f"window.__dl.panel().content.widgets[{index}].node.querySelector('.dreamloop-live')"
            ready = in_every_language({"streaming": "streaming…", "tools": "running…"}[when])
            page.wait_for_function(
                f"""() => {{ const v = {view}; if (!v) return false;
                             const b = v.querySelector('.dreamloop-stop');
                             return b && !b.disabled && {json.dumps(ready)}.some((t) => v.textContent.includes(t)); }}""",
                timeout=budget.ms(20), polling=50)
            waited = time.monotonic() - started
            button = page.locator(f".jp-Notebook .jp-Cell >> nth={index}").locator(".dreamloop-stop")
            button.scroll_into_view_if_needed(timeout=budget.ms(5))
            # the page's own clock: from the mousedown on Stop to the first DOM change that shows the Terminal
            page.evaluate(STOP_CLOCK.replace("VIEW", view))
            button.click(timeout=budget.ms(5))
            page.wait_for_function("() => window.__dlStop.end !== null", timeout=budget.ms(10), polling=50)
            stop = page.evaluate("() => window.__dlStop")
            latency = (stop["end"] - stop["down"]) / 1000.0
            text = page.evaluate(f"() => window.__dl.norm(({view}).textContent)")
            reason = re.search(r"reason=\s*(\w+)", text)
            if not reason or reason.group(1) != expect:
                fail(check, f"Stop during {when} ended {reason.group(1) if reason else '?'}, expected {expect}: "
                            f"{text[:300]!r}")
            if not wait_until(lambda: cell_idle(ch, index), 15, budget):
                fail(check, "the cell did not finish after Stop")
        finally:
            ch.execute("import os; os.environ['DREAMLOOP_AUTO_ANSWER'] = '1'")
        report.note(f"{when} seen after {waited:.1f} s; click → Terminal {expect} shown in {latency:.2f} s")
        if latency > 0.5:
            fail(check, f"the Stop click took {latency:.2f} s to show the Terminal (more than 0.5 s)")
    return {"latency": latency, "reason": expect, "waited": waited}
