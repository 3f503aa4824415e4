"""The offline API on a loopback socket: ``serve()`` and ``dreamloop serve-fake``.

Any HTTP client (curl, another SDK, a browser tool) can talk to the fake API
here; it answers exactly what the in-process transport answers (the same
``Reply``s), streaming SSE with chunked transfer encoding and real pacing. It
binds 127.0.0.1 only: it is a teaching fake, never a network service.
A dropped connection (the ``disconnect`` fault) ends a chunked body without
its last chunk, so clients see an incomplete read, as with a real drop.
This module knows nothing about validation or rendering.
"""

from __future__ import annotations

import argparse
import importlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlsplit

import yaml

from dreamloop.scripts import Script, Turn, reply

from .api import TOO_LARGE_MESSAGE, FakeMessagesAPI
from .recorded import load_recorded
from .replies import Reply, error_reply

__all__ = ["FakeServer", "default_policy", "load_script", "serve", "serve_fake_main"]

_LOOPBACK_NAMES = {"127.0.0.1", "localhost"}


class FakeServer:
    """A running loopback fake API. ``url`` (use it as ``base_url`` / ``ANTHROPIC_BASE_URL``),
    ``port``, ``api`` (its ``FakeMessagesAPI``: ``.requests``…), ``close()``; a context manager."""

    def __init__(self, httpd: ThreadingHTTPServer, thread: threading.Thread, api: FakeMessagesAPI) -> None:
        self._httpd = httpd
        self._thread = thread
        self.api = api
        self.host, self.port = httpd.server_address[:2]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        """Stop serving, close the socket and wait for the server thread (idempotent)."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> "FakeServer":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FakeServer(url={self.url!r})"


def serve(script: Script | FakeMessagesAPI, host: str = "127.0.0.1", port: int = 0, *,
          model: str = "claude-scripted-1") -> FakeServer:
    """Start the fake API on ``127.0.0.1:port`` (0: a free port) in a background thread.

    ``script`` is a script (list or policy) or a ready ``FakeMessagesAPI``.
    Raises ``ValueError`` for any host other than 127.0.0.1 / localhost.
    """
    if host not in _LOOPBACK_NAMES:
        raise ValueError(f"serve-fake binds the loopback interface only (127.0.0.1), not {host!r}")
    api = script if isinstance(script, FakeMessagesAPI) else FakeMessagesAPI(script, model=model)
    handler = type("FakeAPIRequestHandler", (_Handler,), {"api": api})
    httpd = _Server(("127.0.0.1", port), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              name=f"dreamloop-fake-api:{httpd.server_port}", daemon=True)
    thread.start()
    return FakeServer(httpd, thread, api)


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the listen backlog (the default, 5, drops bursts of concurrent clients)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    api: FakeMessagesAPI

    def log_message(self, format: str, *args: Any) -> None:  # quiet: requests are in api.requests
        pass

    def _handle(self) -> None:
        answer = self._refusal()
        if answer is None:
            length = int(self.headers.get("content-length") or 0)
            content = self.rfile.read(length) if length else b""
            answer = self.api.respond(self.command, urlsplit(self.path).path, dict(self.headers.items()), content)
        try:
            self._send(answer)
        except (BrokenPipeError, ConnectionResetError):  # the client went away mid-stream
            self.close_connection = True

    def _refusal(self) -> Reply | None:
        """A 400 / 413 for a body that cannot or must not be read (then the connection closes)."""
        raw = (self.headers.get("content-length") or "0").strip()
        if not raw.isdigit():
            self.close_connection = True
            return error_reply(400, f"Invalid Content-Length header: {raw!r}", "req_fake_unread")
        if int(raw) > self.api.max_body_bytes:
            self.close_connection = True
            return error_reply(413, TOO_LARGE_MESSAGE, "req_fake_unread")
        return None

    do_POST = do_GET = do_PUT = do_DELETE = do_PATCH = _handle

    def _send(self, answer: Reply) -> None:
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        if answer.frames is None:
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for delay, data in answer.frames:
            if delay:
                time.sleep(delay)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        if answer.drop_connection:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # no terminating chunk: an incomplete body
            return
        self.wfile.write(b"0\r\n\r\n")


# ---------------------------------------------------------------------------
# Scripts from files, and the command line


def default_policy(body: dict[str, Any], index: int) -> Turn:
    """The policy ``serve-fake`` uses without ``--script``: it answers every request with an honest echo."""
    last = body["messages"][-1]
    content = last["content"]
    said = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    return reply(f"(dreamloop offline fake API, no script loaded) You said: {said.strip() or '(no text)'}")


def load_script(spec: str) -> Script:
    """A script from ``spec``: a JSON/YAML file holding a list of turns, or ``module:function`` (a policy).

    Each list item is a ``Turn`` as a mapping (its fields), or
    ``{"recorded": "path"}`` for the recorded responses in a fixture file
    (relative to the script file). Raises ``ValueError`` for a bad spec.
    """
    path = Path(spec)
    if path.is_file():
        return _turns_from_file(path)
    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        target = getattr(importlib.import_module(module_name), attribute)
        if callable(target):
            return target
        return [Turn.model_validate(t) if isinstance(t, dict) else t for t in target]
    raise ValueError(f"--script must be a JSON/YAML file or module:function, got {spec!r}")


def _turns_from_file(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if isinstance(data, dict) and "turns" in data:
        data = data["turns"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of turns")
    script: list[Any] = []
    for item in data:
        if isinstance(item, dict) and "recorded" in item:
            script.extend(load_recorded(path.parent / item["recorded"]))
        else:
            script.append(Turn.model_validate(item))
    return script


def serve_fake_main(argv: Sequence[str] | None = None, *, stop: threading.Event | None = None) -> int:
    """``dreamloop serve-fake --port N [--script FILE | module:function] [--model NAME]``: serve until Ctrl-C.

    Prints the URL first (``... listening on http://127.0.0.1:N``). ``stop``: an
    event that also ends serving (for tests and embedding). Returns the exit code.
    """
    parser = argparse.ArgumentParser(prog="dreamloop serve-fake", description="Serve the offline Messages API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port; default 8765)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback only: 127.0.0.1 or localhost")
    parser.add_argument("--script", help="JSON/YAML list of turns, or module:function for a policy")
    parser.add_argument("--model", default="claude-scripted-1", help="model name reported in responses")
    args = parser.parse_args(argv)
    script = load_script(args.script) if args.script else default_policy
    server = serve(script, args.host, args.port, model=args.model)
    print(f"dreamloop fake Messages API listening on {server.url}", flush=True)
    print(f"  ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY=offline-not-a-key", flush=True)
    try:
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
