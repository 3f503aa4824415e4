"""The offline API on a loopback socket: ``serve()`` and ``dreamloop serve-fake``.

Any HTTP client (curl, another SDK, a browser tool) can talk to the fake API
here; it answers exactly what the in-process transport answers (the same
``Reply``s), streaming SSE with chunked transfer encoding and real pacing. It
binds 127.0.0.1 only, on a free port unless told one: it is a teaching fake,
never a network service, and two learners on one machine never collide.
Scripts come from a JSON/YAML file or a ``module:function`` (``load_script``,
strict: an unknown key is an error); ``serve-fake`` says what is wrong with
one, or with a taken port, as a usage error. A dropped connection (the ``disconnect`` fault) ends a chunked body without
its last chunk, so clients see an incomplete read, as with a real drop.
This module knows nothing about validation or rendering.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlsplit

import yaml
from pydantic import ValidationError

from dreamloop.jsonl import MAX_DEPTH, depth, loads, read_text
from dreamloop.scripts import Fault, Script, Turn, reply

from .api import OFFLINE_API_KEY, TOO_LARGE_MESSAGE, FakeMessagesAPI
from .recorded import RawTurn, load_recorded
from .replies import Reply, error_reply

__all__ = ["SCRIPT_FORMAT", "FakeServer", "add_serve_fake_arguments", "default_policy", "load_script", "run_serve_fake",
           "serve", "serve_fake_main"]

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
    """Start the fake API on ``127.0.0.1:port`` (0, the default: a free port) in a background thread.

    ``script`` is a script (list or policy) or a ready ``FakeMessagesAPI``.
    Raises ``ValueError`` for any host other than 127.0.0.1 / localhost, and
    ``OSError`` saying so when ``port`` is taken (``errno.EADDRINUSE``).
    """
    if host not in _LOOPBACK_NAMES:
        raise ValueError(f"serve-fake binds the loopback interface only (127.0.0.1), not {host!r}")
    api = script if isinstance(script, FakeMessagesAPI) else FakeMessagesAPI(script, model=model)
    handler = type("FakeAPIRequestHandler", (_Handler,), {"api": api})
    try:
        httpd = _Server(("127.0.0.1", port), handler)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise OSError(error.errno, f"port {port} on 127.0.0.1 is already in use (another serve-fake, or "
                                       "another program); leave --port out (port=0) for a free one") from None
        if error.errno == errno.EACCES:
            raise OSError(error.errno, f"port {port} needs privileges to bind; use a port above 1023, or "
                                       "leave --port out (port=0) for a free one") from None
        raise
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              name=f"dreamloop-fake-api:{httpd.server_port}", daemon=True)
    thread.start()
    return FakeServer(httpd, thread, api)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
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
# Scripts from files and modules, and the command line


def default_policy(body: dict[str, Any], index: int) -> Turn:
    """The policy ``serve-fake`` uses without ``--script``: it answers every request with an honest echo."""
    last = body["messages"][-1]
    content = last["content"]
    said = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    return reply(f"(dreamloop offline fake API, no script loaded) You said: {said.strip() or '(no text)'}")


SCRIPT_FORMAT = """\
A script file is a JSON or YAML list of turns, one per model request, in order
(or a mapping whose only key is `turns`). Each turn is a mapping of Turn's
fields: content (API content blocks), stop_reason, usage, chunk_size,
tokens_per_second, fault, model; or {recorded: FILE}, the recorded responses
in a fixture file (relative to the script file). An unknown key is an error.
Example (turns.yaml):

  - content:
      - {type: text, text: "I'll read config.py."}
      - {type: tool_use, name: Read, input: {file_path: config.py}}
  - content: [{type: text, text: "value is 1."}]
  - fault: {kind: http_error, status: 529}
"""
"""The script file format, as ``dreamloop serve-fake --help`` and the README show it."""


def load_script(spec: str) -> Script:
    """A script from ``spec``: a JSON/YAML file holding a list of turns, or ``module:function`` (a policy).

    The file format is ``SCRIPT_FORMAT``. ``module:name`` imports ``module``
    (from the current directory first, then the installed packages) and takes
    ``name``: a policy ``(body, index) -> Turn`` or a list of turns. Raises
    ``FileNotFoundError`` (a file that is not there) or ``ValueError`` (anything
    else that is wrong with the spec or the turns), each with a message for a
    person that names the file or module, the turn (counted from 1) and the key.
    An exception raised by the module's own code while it is imported is
    re-raised as it is (a bug in the learner's policy keeps its traceback).
    """
    path = Path(spec)
    if path.is_file():
        return _turns_from_file(path)
    module_name, colon, attribute = spec.partition(":")
    if colon and attribute.isidentifier() and all(part.isidentifier() for part in module_name.split(".")):
        return _script_from_module(module_name, attribute, spec)
    if path.is_dir():
        raise ValueError(f"script {spec!r} is a directory; give a JSON/YAML file of turns")
    if path.suffix.lower() in _FILE_SUFFIXES or "/" in spec or os.sep in spec:
        raise FileNotFoundError(f"script {spec!r}: no such file (looked from {Path.cwd()})")
    raise ValueError(f"script {spec!r} is neither a file nor module:function; give a JSON/YAML file of turns "
                     "or a policy as module:function (e.g. mypolicy:policy for mypolicy.py here)")


_FILE_SUFFIXES = {".json", ".yaml", ".yml"}


def _script_from_module(module_name: str, attribute: str, spec: str) -> Script:
    here = str(Path.cwd())
    added = here not in sys.path
    if added:
        sys.path.insert(0, here)  # like `python -m`: a policy file next to you is importable
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise ValueError(f"script {spec!r}: no module named {missing!r} (looked in {here} and the "
                             "installed packages)") from None
        raise  # the module itself imports something missing: its own bug, with its traceback
    finally:
        if added:
            sys.path.remove(here)
    if not hasattr(module, attribute):
        offered = sorted(name for name, value in vars(module).items()
                         if not name.startswith("_") and (callable(value) or isinstance(value, list))
                         and getattr(value, "__module__", module.__name__) == module.__name__)
        raise ValueError(f"script {spec!r}: module {module_name!r} has no {attribute!r}"
                         + (f"; it has {', '.join(offered)}" if offered else ""))
    target = getattr(module, attribute)
    if callable(target):
        return target
    if isinstance(target, (list, tuple)):
        return _turns(list(target), where=spec, base=Path(getattr(module, "__file__", None) or here).parent)
    raise ValueError(f"script {spec!r} is a {type(target).__name__}; expected a policy function "
                     "(body, index) -> Turn, or a list of turns")


def _turns_from_file(path: Path) -> list[Any]:
    text = read_text(path)
    try:
        data = loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
        if depth(data) > MAX_DEPTH:
            raise json.JSONDecodeError(f"nested too deeply (more than {MAX_DEPTH} levels)", text, 0)
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply (more than {MAX_DEPTH} levels)") from None
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise ValueError(f"{path}: not valid {kind}: {_one_line(str(error))}") from None
    if isinstance(data, dict):
        if set(data) != {"turns"}:
            raise ValueError(f"{path}: a mapping at the top must have exactly one key, `turns` "
                             f"(found {', '.join(map(str, data)) or 'none'}); or make the file a list of turns")
        data = data["turns"]
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of turns, found {type(data).__name__}")
    return _turns(data, where=str(path), base=path.parent)


def _turns(items: list[Any], *, where: str, base: Path) -> list[Any]:
    """Validated script items; errors name the turn from 1 and the key."""
    if not items:
        raise ValueError(f"{where}: holds no turns; an empty script can answer no request")
    script: list[Any] = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, (Turn, RawTurn)):
            script.append(item)
        elif isinstance(item, dict) and "recorded" in item:
            if set(item) != {"recorded"}:
                extra = ", ".join(sorted(map(str, set(item) - {"recorded"})))
                raise ValueError(f"{where}, turn {number}: unknown key(s) beside `recorded`: {extra}")
            recorded = base / str(item["recorded"])
            if not recorded.is_file():
                raise FileNotFoundError(f"{where}, turn {number}: recorded file {recorded} does not exist")
            script.extend(load_recorded(recorded))
        elif isinstance(item, dict):
            try:
                script.append(Turn.model_validate(item))
            except ValidationError as error:
                raise ValueError(f"{where}, turn {number}: {_turn_errors(error)}") from None
        else:
            raise ValueError(f"{where}, turn {number}: expected a mapping of Turn fields, found "
                             f"{type(item).__name__} {item!r:.60}")
    return script


def _turn_errors(error: ValidationError) -> str:
    """pydantic's errors as one line, with the keys a turn (or a fault) may have when a key is unknown."""
    parts = []
    for problem in error.errors():
        loc = ".".join(map(str, problem["loc"]))
        if problem["type"] == "extra_forbidden":
            model = Fault if problem["loc"][:1] == ("fault",) else Turn
            parts.append(f"{loc}: unknown key (a {model.__name__.lower()} has: {', '.join(model.model_fields)})")
        else:
            parts.append(f"{loc}: {problem['msg']}" if loc else problem["msg"])
    return "; ".join(parts)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _port(text: str) -> int:
    """argparse type for ``--port``: 0 (a free port) or 1-65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535 (0: a free one), got {port}")
    return port


def add_serve_fake_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``serve-fake`` (shared by ``dreamloop serve-fake`` and ``serve_fake_main``)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = SCRIPT_FORMAT
    parser.add_argument("--port", type=_port, default=0, metavar="N",
                        help="port on 127.0.0.1 (default: a free one, printed at start; an explicit port that "
                             "is taken is an error)")
    parser.add_argument("--host", default="127.0.0.1", help="loopback only: 127.0.0.1 or localhost")
    parser.add_argument("--script", metavar="FILE | module:function",
                        help="a JSON/YAML list of turns (format below), or a policy function "
                             "(body, index) -> Turn as module:function (default: an echo policy)")
    parser.add_argument("--model", default="claude-scripted-1", metavar="NAME",
                        help="model name reported in responses (default: claude-scripted-1)")
    return parser


def serve_fake_main(argv: Sequence[str] | None = None, *, stop: threading.Event | None = None) -> int:
    """``dreamloop serve-fake [--port N] [--script FILE | module:function] [--model NAME]``: serve until Ctrl-C.

    ``stop``: an event that also ends serving (for tests and embedding).
    Returns the exit code; a bad ``--script`` or a taken port is a usage error
    (``SystemExit(2)`` with the reason on stderr), nothing served.
    """
    parser = add_serve_fake_arguments(argparse.ArgumentParser(
        prog="dreamloop serve-fake", description="Serve the offline Messages API on 127.0.0.1."))
    return run_serve_fake(parser.parse_args(argv), parser, stop=stop)


def run_serve_fake(args: argparse.Namespace, parser: argparse.ArgumentParser, *,
                   stop: threading.Event | None = None) -> int:
    """Load the script and bind the port (a problem: ``parser.error``, exit 2), print where it listens, serve.

    Prints the URL first (``... listening on http://127.0.0.1:N``), then the
    ``ANTHROPIC_BASE_URL`` to use and what it serves.
    """
    try:
        script = load_script(args.script) if args.script else default_policy
        server = serve(script, args.host, args.port, model=args.model)
    except (ValueError, OSError) as error:
        parser.error(error.strerror if isinstance(error, OSError) and error.strerror else str(error))
    serves = (f"{args.script} ({len(script)} turns)" if isinstance(script, list) else
              f"{args.script} (a policy)" if args.script else "an echo policy (no --script)")
    chosen = " (a free port; --port N asks for one)" if args.port == 0 else ""
    print(f"dreamloop fake Messages API listening on {server.url}", flush=True)
    print(f"  port {server.port}{chosen}; serving {serves}", flush=True)
    print(f"  use it: ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY={OFFLINE_API_KEY}", flush=True)
    print("  Ctrl-C stops it", flush=True)
    try:
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
