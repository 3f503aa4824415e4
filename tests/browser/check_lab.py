"""See the chapters as a learner sees them: JupyterLab in a real (headless) Chromium, checked automatically.

    make browser-test                                  # installs chromium / playwright when missing, then runs this
    .venv/bin/python tests/browser/check_lab.py [--chapter 03 ...] [--out build/browser]

What it does, all on 127.0.0.1 and nothing else (every other request the page makes is aborted):

1. copies ``notebooks/`` (and ``images/``, and the Claude Code session files chapter 10b opens) to a temp
   root, so the checkout is never written to;
2. starts ``jupyter lab`` there on a free port (own config/data/settings dirs, ``DREAMLOOP_AUTO_ANSWER=1``);
3. for each chapter (default: every chapter with a module in ``chapters/``), opens it in Debian's Chromium
   through Playwright (``executable_path``; never ``playwright install``), runs every cell
   (``notebook:run-all-cells`` through ``window.jupyterapp``), checks that the stored widget outputs read as
   static HTML before the run, that no cell stored an error output and that the markdown renders as meant,
   then runs the chapter's own checks (``chapters/chNN.py``: ``check(ch)``) and shuts its kernel down;
4. saves the screenshots the chapter modules take under ``--out`` (default ``build/browser``).

What the page must show is asked of the kernel, not hard-coded. A failure names the check, says what was
expected, dumps the page's console errors and the server log tail, and saves ``failure.png``. Each chapter
has a budget (default 85 s) and the server is always stopped (the API's shutdown, then its process group,
then any kernel left, by pid), and the browser too: also when the budget runs out, on Ctrl-C or on SIGTERM.

A chapter module: ``chapters/chNN.py`` with ``check(ch: lab.Chapter)`` (and optionally ``SCREENSHOTS``, the
file names it saves). ``lab.py`` holds the machinery (server, page helpers, probe, waits, screenshots).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import (  # noqa: E402
    CHROMIUM_FLAGS,
    LOOPBACK,
    REPO,
    Budget,
    Chapter,
    CheckFailed,
    LabServer,
    Report,
    check_markdown,
    check_sizes,
    find_chromium,
    find_notebook,
    open_and_run,
    sweep_children,
)

CHAPTERS = Path(__file__).resolve().parent / "chapters"


def known_chapters() -> list[str]:
    """Every chapter with checks: ``chapters/chNN.py`` → "NN" (``chapters/zh_chNN.py`` → "zh/NN"; a chapter
    split off another has a letter: ``ch08b.py`` → "08b")."""
    found = []
    for path in sorted(p for p in CHAPTERS.glob("*ch[0-9][0-9]*.py") if re.fullmatch(r"(zh_)?ch\d\d[a-z]?", p.stem)):
        edition, _, nn = path.stem.rpartition("ch")
        found.append(f"{edition.rstrip('_')}/{nn}" if edition else nn)
    return found


def chapter_module(number: str) -> Any:
    edition, _, nn = number.rpartition("/")
    return importlib.import_module(f"chapters.{edition + '_' if edition else ''}ch{nn}")


def run(args: argparse.Namespace, budgets: list[Budget], report: Report, server_box: list[LabServer]) -> None:
    from playwright.sync_api import sync_playwright

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    modules = {number: chapter_module(number) for number in args.chapters}
    for stale in {"failure.png", *(name for m in modules.values() for name in getattr(m, "SCREENSHOTS", ()))}:
        (out / stale).unlink(missing_ok=True)
    budget = budgets[0]

    notebooks = {}
    for number in args.chapters:
        with report.check(f"chapter {number} exists"):
            notebooks[number] = find_notebook(number)
            report.note(str(notebooks[number].relative_to(REPO)))

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
    shutil.copytree(REPO / "notebooks", lab_root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc"))
    if (REPO / "images").is_dir():
        shutil.copytree(REPO / "images", lab_root / "images")  # notebooks may show ../images/*.svg
    sessions = Path("tests") / "fixtures" / "claude-code-sessions"  # chapter 10b opens these real session files
    if (REPO / sessions).is_dir():
        shutil.copytree(REPO / sessions, lab_root / sessions)

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
            for i, number in enumerate(args.chapters):
                budget = budgets[i]
                budget.start()
                report.budget = budget
                print(f"chapter {number}:", flush=True)
                page = context.new_page()
                page.on("console", lambda m: console.append(f"console.{m.type}: {m.text}")
                        if m.type in ("error", "warning") else None)
                page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
                page.on("crash", lambda _p: console.append("the page crashed"))
                notebook = notebooks[number]
                ch = Chapter(page, server, str(notebook.relative_to(REPO)), notebook, out, budget, report, number)
                try:
                    open_and_run(ch, args.run_timeout)
                    check_markdown(ch)
                    check_sizes(ch)
                    modules[number].check(ch)
                except CheckFailed:
                    with contextlib.suppress(Exception):  # the page as it was when the check failed
                        page.screenshot(path=str(out / "failure.png"), timeout=3000)
                        report.failure_png = out / "failure.png"
                    raise
                with contextlib.suppress(Exception):  # one kernel at a time: stop this chapter's
                    page.evaluate("() => window.__dl.panel().sessionContext.shutdown()")
                    page.close()
        finally:
            with contextlib.suppress(Exception):
                browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapter", dest="chapters", action="append",
                        help=f"a chapter to check (repeatable; default: every one with checks: "
                             f"{', '.join(known_chapters())})")
    parser.add_argument("--out", default=str(REPO / "build" / "browser"), help="screenshots go here")
    parser.add_argument("--budget", type=float, default=85.0, help="seconds per chapter (default %(default)s)")
    parser.add_argument("--run-timeout", type=float, default=60.0, help="seconds for run-all-cells")
    args = parser.parse_args(argv)
    args.chapters = args.chapters or known_chapters()
    unknown = sorted(set(args.chapters) - set(known_chapters()))
    if unknown:
        parser.error(f"no checks for chapter(s) {', '.join(unknown)} (known: {', '.join(known_chapters())})")

    budgets = [Budget(args.budget) for _ in args.chapters]
    report = Report(budgets[0])
    servers: list[LabServer] = []
    total = args.budget * len(args.chapters)
    print(f"browser check: JupyterLab in headless Chromium, chapters {', '.join(args.chapters)}, "
          f"budget {args.budget:.0f} s each", flush=True)
    started = time.monotonic()

    def emergency_stop(code: int, message: str) -> None:
        """Stop everything this process started (server, kernel, browser) and exit at once."""
        print(f"\n{message}", file=sys.stderr, flush=True)
        for server in servers:
            server.stop()
            shutil.rmtree(server.root, ignore_errors=True)
        sweep_children()
        os._exit(code)

    def watchdog() -> None:  # the last resort if something hangs outside a bounded wait
        emergency_stop(3, f"FAILED [{report.current}]: the whole check went over its budget of {total:.0f} s "
                          "(+4 s grace); stopped the server and the browser")

    timer = threading.Timer(total + 4, watchdog)
    timer.daemon = True
    timer.start()
    # Playwright's sync API does not unwind cleanly from an exception raised in a signal handler: clean up here
    signal.signal(signal.SIGTERM, lambda *_: emergency_stop(143, f"terminated during [{report.current}]"))
    signal.signal(signal.SIGINT, lambda *_: emergency_stop(130, f"interrupted during [{report.current}]"))
    code = 0
    try:
        run(args, budgets, report, servers)
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
        print(f"all checks passed in {time.monotonic() - started:.1f} s; screenshots in {args.out}")
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
