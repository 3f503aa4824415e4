"""``make hub-test``: a real JupyterHub on loopback, three learners running chapter 03 at once through it.

    build/hub/venv/bin/python tests/hub/check_hub.py --proxy build/hub/node_modules/.bin/configurable-http-proxy

What an instructor's hub is, on 127.0.0.1 only: JupyterHub with the dummy
login, single-user servers started as local processes
(``SimpleLocalProcessSpawner``: no system accounts needed), the
``configurable-http-proxy`` from npm in front, the idle culler as a hub service
and the servers' own idle-kernel culling (``HUB_CONFIG``, the README's
settings). Three users log in with the login form, get an API token, start
their servers, upload chapter 03 and run it cell by cell in a kernel of their
server, all at once, over the kernel websocket through the proxy. Each run's
outputs are compared with the stored ones (as nbval judges). Then everything
is stopped, and the check fails if any process the hub started is still alive.
Exit status 0 when all three runs match and nothing is left. Not part of
``make test``: it needs JupyterHub and node.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import nbformat
import psutil
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from dreamloop.scratch import scratch_dir

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("dreamloop_notebook_build", REPO / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

USERS = ("ada", "grace", "linus")
PASSWORD = "room-test"
CHAPTER = REPO / "notebooks" / "03_query_loop.ipynb"
CELL_TIMEOUT_S = 300

HUB_CONFIG = '''\
# JupyterHub for a room, on loopback (written by tests/hub/check_hub.py; the README shows the same settings)
import pathlib
import sys
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:{public_port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{state}/jupyterhub_cookie_secret"
c.ConfigurableHTTPProxy.pid_file = "{state}/proxy.pid"

c.JupyterHub.authenticator_class = "dummy"          # any user name, one shared password
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"               # SimpleLocalProcessSpawner: local processes, no system users
c.SimpleLocalProcessSpawner.home_dir_template = "{state}/home/{{username}}"
c.Spawner.cmd = [str(pathlib.Path(sys.executable).with_name("jupyterhub-singleuser"))]
c.Spawner.args = {args!r}
c.Spawner.environment = {environment!r}
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300

# Memory per open kernel is what limits a room: stop idle kernels, then idle servers.
c.JupyterHub.services = [{{"name": "jupyterhub-idle-culler",
                           "command": [sys.executable, "-m", "jupyterhub_idle_culler", "--timeout=3600"]}}]
c.JupyterHub.load_roles = [{{"name": "jupyterhub-idle-culler-role",
                             "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
                             "services": ["jupyterhub-idle-culler"]}}]
'''

SERVER_ARGS = ["--MappingKernelManager.cull_idle_timeout=1200", "--MappingKernelManager.cull_interval=60",
               "--MappingKernelManager.cull_connected=True"]
"""The single-user servers' own kernel culling: a kernel idle 20 minutes is stopped, even with a tab open."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive(process: psutil.Process) -> bool:
    """Still running (a psutil.Process checks its start time, so a reused pid is not mistaken for it)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class Hub:
    """A JupyterHub process (and everything it starts) in a session of its own, in ``state``."""

    def __init__(self, proxy: Path, state: Path) -> None:
        self.state = state
        self.url = f"http://127.0.0.1:{free_port()}"
        config = HUB_CONFIG.format(
            public_port=self.url.rsplit(":", 1)[1], hub_port=free_port(), proxy_api_port=free_port(),
            proxy=str(proxy.resolve()), state=state, password=PASSWORD,
            args=SERVER_ARGS + (["--allow-root"] if os.getuid() == 0 else []),
            environment={**build.NB_ENV, "TMPDIR": os.environ.get("TMPDIR", "/tmp")})
        (state / "jupyterhub_config.py").write_text(config)
        for user in USERS:
            (state / "home" / user).mkdir(parents=True)
        self.log = (state / "jupyterhub.log").open("w")
        self.seen: dict[int, psutil.Process] = {}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(state / "jupyterhub_config.py")],
            cwd=state, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    async def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"jupyterhub exited with {self.process.returncode}; see {self.log.name}")
                try:
                    if (await client.get(f"{self.url}/hub/api/")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.5)
        raise TimeoutError(f"jupyterhub did not answer on {self.url} in {timeout:.0f} s; see {self.log.name}")

    def processes(self) -> list[psutil.Process]:
        """The hub and every live process it started (the proxy, the culler, servers and their kernels).

        Each is remembered (``seen``), so a process whose parent died, and
        that left the tree, is still found by ``stop()``."""
        try:
            root = psutil.Process(self.process.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            tree = []
        for process in tree:
            try:
                self.seen.setdefault(process.pid, process)
            except psutil.Error:
                continue
        return [p for p in self.seen.values() if _alive(p)]

    def stop(self) -> list[str]:
        """Stop the hub (SIGTERM: it stops what it started); return what was still alive and had to be killed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        deadline = time.monotonic() + 30
        while [p for p in self.seen.values() if _alive(p)] and time.monotonic() < deadline:
            time.sleep(0.5)
        left = []
        for process in [p for p in self.seen.values() if _alive(p)]:
            try:
                left.append(f"{process.pid} {' '.join(process.cmdline())[:120]}")
                process.kill()
            except psutil.Error:
                continue
        self.log.close()
        return left


async def learner(hub: Hub, user: str, stored: nbformat.NotebookNode) -> dict[str, Any]:
    """One learner: log in, start a server, run the chapter in a kernel of it, stop the server."""
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=hub.url, timeout=60, follow_redirects=False) as web:
        await web.get("/hub/login")
        login = await web.post("/hub/login", data={"username": user, "password": PASSWORD,
                                                    "_xsrf": web.cookies.get("_xsrf", "")})
        if login.status_code != 302:
            raise RuntimeError(f"{user}: the login form answered {login.status_code}")
        made = await web.post(f"/hub/api/users/{user}/tokens", json={"note": "room test", "expires_in": 3600},
                              headers={"X-XSRFToken": web.cookies.get("_xsrf", "")})
        made.raise_for_status()
        token = made.json()["token"]
    headers = {"Authorization": f"token {token}"}
    async with httpx.AsyncClient(base_url=hub.url, headers=headers, timeout=60) as api:
        spawn = await api.post(f"/hub/api/users/{user}/server")
        if spawn.status_code not in (201, 202):
            raise RuntimeError(f"{user}: starting the server answered {spawn.status_code}: {spawn.text[:200]}")
        while not (await api.get(f"/hub/api/users/{user}")).json()["servers"].get("", {}).get("ready"):
            await asyncio.sleep(0.5)
        spawned = time.monotonic()
        base = f"/user/{user}/api"
        put = await api.put(f"{base}/contents/{CHAPTER.name}",
                            json={"type": "notebook", "format": "json", "content": stored})
        put.raise_for_status()
        session = await api.post(f"{base}/sessions", json={"path": CHAPTER.name, "type": "notebook",
                                                          "name": CHAPTER.name, "kernel": {"name": "python3"}})
        session.raise_for_status()
        kernel_id, session_id = session.json()["kernel"]["id"], session.json()["id"]
        channels = f"{hub.url.replace('http', 'ws', 1)}/user/{user}/api/kernels/{kernel_id}/channels"
        fresh, errors = await run_cells(channels, user, headers, stored)
        ran = time.monotonic()
        (await api.delete(f"{base}/sessions/{session_id}")).raise_for_status()
        stop = await api.delete(f"/hub/api/users/{user}/server")
        if stop.status_code not in (202, 204):
            raise RuntimeError(f"{user}: stopping the server answered {stop.status_code}")
    return {"user": user, "spawn_s": spawned - started, "run_s": ran - spawned, "errors": errors,
            "differences": build.output_differences(stored, fresh)}


async def run_cells(channels: str, user: str, headers: dict[str, str],
                    stored: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    """Execute every code cell over the kernel websocket ``channels`` (``ws://.../api/kernels/ID/channels``) as
    ``user``; the notebook with fresh outputs, and unexpected errors (the first one stops the run)."""
    session, errors = uuid.uuid4().hex, []
    url = f"{channels}?session_id={session}"
    socket_ = await websocket_connect(HTTPRequest(url, headers=headers), max_message_size=256 * 2**20)
    fresh = nbformat.from_dict(json.loads(json.dumps(stored)))
    try:
        for number, cell in enumerate((c for c in fresh.cells if c.cell_type == "code"), start=1):
            msg_id = uuid.uuid4().hex
            await socket_.write_message(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "session": session, "username": user,
                           "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": cell.source, "silent": False, "store_history": True, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            cell.outputs = await collect_outputs(socket_, msg_id)
            failed = [o for o in cell.outputs if o.output_type == "error"]
            if failed and "raises-exception" not in cell.metadata.get("tags", []):
                errors.append(f"code cell {number}: {failed[0].ename}: {failed[0].evalue}")
                break
    finally:
        socket_.close()
    return fresh, errors


async def collect_outputs(socket_: Any, msg_id: str) -> list[nbformat.NotebookNode]:
    """A cell's outputs as nbclient stores them, until the kernel is idle again (display updates applied)."""
    outputs: list[nbformat.NotebookNode] = []
    displays: dict[str, list[int]] = {}
    clear_pending = False
    deadline = time.monotonic() + CELL_TIMEOUT_S
    while True:
        raw = await asyncio.wait_for(socket_.read_message(), timeout=max(1.0, deadline - time.monotonic()))
        if raw is None:
            raise RuntimeError("the kernel websocket closed")
        msg = json.loads(raw)
        if msg.get("channel") != "iopub" or msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return outputs
        if kind == "clear_output":
            if content.get("wait"):
                clear_pending = True
            else:
                outputs.clear()
                displays.clear()
            continue
        if kind == "update_display_data":
            for index in displays.get(content.get("transient", {}).get("display_id", ""), []):
                outputs[index]["data"], outputs[index]["metadata"] = content["data"], content["metadata"]
            continue
        if kind not in ("stream", "display_data", "execute_result", "error"):
            continue
        if clear_pending:
            outputs.clear()
            displays.clear()
            clear_pending = False
        if kind == "stream" and outputs and outputs[-1].output_type == "stream" \
                and outputs[-1].name == content["name"]:
            outputs[-1].text += content["text"]  # coalesced, as the build stores it
            continue
        output = nbformat.v4.output_from_msg(msg)
        display_id = content.get("transient", {}).get("display_id")
        if display_id:
            displays.setdefault(display_id, []).append(len(outputs))
        outputs.append(output)


def kind_of(process: psutil.Process) -> str:
    """What a process the hub started is: hub, proxy, culler, server (single-user), kernel, or a short-lived
    node helper that JupyterLab runs when a server starts (``yarn config``, ``npm prefix``)."""
    line = " ".join(process.cmdline())
    for kind, marker in (("kernel", "ipykernel"), ("server", "jupyterhub-singleuser"), ("culler", "idle_culler"),
                         ("proxy", "configurable-http-proxy"), ("hub", "jupyterhub"), ("lab's node helper", "yarn"),
                         ("lab's node helper", "npm")):
        if marker in line:
            return kind
    return "other"


async def sample_memory(hub: Hub, peaks: dict[int, tuple[str, float]]) -> None:
    """Peak resident memory of each process the hub started, every 0.5 s."""
    while True:
        for process in hub.processes():
            try:
                mb = process.memory_info().rss / 2**20
                kind = kind_of(process)  # again each time: a child shows its parent's command line until exec
            except psutil.Error:
                continue
            peaks[process.pid] = (kind, max(mb, peaks.get(process.pid, ("", 0.0))[1]))
        await asyncio.sleep(0.5)


async def room(hub: Hub, peaks: dict[int, tuple[str, float]]) -> list[dict[str, Any] | BaseException]:
    await hub.wait_ready()
    sampling = asyncio.create_task(sample_memory(hub, peaks))
    stored = nbformat.read(CHAPTER, as_version=4)
    try:
        return await asyncio.gather(*(learner(hub, user, stored) for user in USERS), return_exceptions=True)
    finally:
        sampling.cancel()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proxy", type=Path, required=True, help="the configurable-http-proxy executable (npm)")
    args = parser.parse_args(argv)
    if not os.access(args.proxy, os.X_OK):
        parser.error(f"--proxy {args.proxy} is not an executable (npm install configurable-http-proxy)")
    state = scratch_dir("hub-")
    print(f"hub-test: JupyterHub on 127.0.0.1, dummy login, local process spawner, proxy {args.proxy.name}; "
          f"{len(USERS)} users run {CHAPTER.name} at once; state in {state}", flush=True)
    started = time.monotonic()
    hub = Hub(args.proxy, state)
    peaks: dict[int, tuple[str, float]] = {}
    try:
        results = asyncio.run(room(hub, peaks))
    finally:
        hub.processes()
        seen = len(hub.seen)
        left = hub.stop()
    ok = True
    for result in results:
        if isinstance(result, BaseException):
            ok = False
            print(f"  FAILED: {type(result).__name__}: {result}")
            continue
        good = not result["errors"] and not result["differences"]
        ok &= good
        print(f"  {result['user']:<6} server ready in {result['spawn_s']:5.1f} s, chapter ran in {result['run_s']:5.1f} s"
              f" | {'outputs match the stored ones' if good else 'PROBLEM'}")
        for line in result["errors"] + result["differences"][:5]:
            print(f"         {line}")
    by_kind: dict[str, list[float]] = {}
    for kind, mb in peaks.values():
        by_kind.setdefault(kind, []).append(mb)
    print("peak memory (MB): " + ", ".join(f"{kind} {' + '.join(f'{mb:.0f}' for mb in sorted(mbs))}"
                                           for kind, mbs in sorted(by_kind.items())))
    print(f"stopped the hub and everything it started ({seen} processes over the test); "
          + (f"LEFT RUNNING and killed: {left}" if left else "none left running"))
    kept = REPO / "build" / "hub" / "jupyterhub.log"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text((state / "jupyterhub.log").read_text(errors="replace"))
    print(f"hub-test {'passed' if ok and not left else 'FAILED'} in {time.monotonic() - started:.0f} s; "
          f"the hub's log: {kept.relative_to(REPO)}")
    return 0 if ok and not left else 1


if __name__ == "__main__":
    sys.exit(main())
