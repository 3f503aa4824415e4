"""The loopback server: real sockets on 127.0.0.1, a plain HTTP client and the SDK, same bytes as in-process."""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import anthropic
import httpx2
import pytest

from dreamloop.errors import IncompleteStreamError
from dreamloop.fake_api import load_script, serve, serve_fake_main
from dreamloop.fake_api.sse import parse_frames
from dreamloop.model import AnthropicModel
from dreamloop.scripts import disconnect, reply, tool_use

REQUEST = {"model": "claude-scripted-1", "max_tokens": 256, "messages": [{"role": "user", "content": "read a.py"}]}


def post(url, payload):
    request = urllib.request.Request(url + "/v1/messages", data=json.dumps(payload).encode(),
                                     headers={"content-type": "application/json", "x-api-key": "offline"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


@pytest.fixture
def server():
    handle = serve([reply("Hello over a socket."), reply("Reading.", tool_use("read_file", {"path": "a.py"})),
                    reply("third")])
    try:
        yield handle
    finally:
        handle.close()


def test_plain_http_client_non_streaming_and_streaming(server):
    assert server.url == f"http://127.0.0.1:{server.port}" and server.port > 0
    status, headers, text = post(server.url, REQUEST)
    assert status == 200 and headers["request-id"] == "req_fake_0001"
    assert json.loads(text)["content"] == [{"type": "text", "text": "Hello over a socket."}]

    status, headers, text = post(server.url, {**REQUEST, "stream": True})
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert all(frame.startswith("event: ") for frame in text.strip().split("\n\n"))
    events = parse_frames(text)
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"] == ["tool_use"]

    status, headers, text = post(server.url, {**REQUEST, "messages": []})
    assert status == 400 and headers["x-should-retry"] == "false"
    assert json.loads(text)["error"]["message"] == "messages: at least one message is required"
    assert [r.status for r in server.api.requests] == [200, 200, 400]
    assert server.api.requests[0].headers["x-api-key"] == "<redacted>"


async def test_sdk_streams_from_the_server(server):
    client = anthropic.AsyncAnthropic(api_key="offline-not-a-key", base_url=server.url, max_retries=0)
    model = AnthropicModel(client, "claude-scripted-1")
    first = [item async for item in model.stream(**{k: v for k, v in REQUEST.items() if k != "model"})][-1]
    assert first.content[0].text == "Hello over a socket."
    async with client.messages.stream(**REQUEST) as stream:
        second = await stream.get_final_message()
    assert second.content[1].input == {"path": "a.py"} and second.stop_reason == "tool_use"
    await client.close()


async def test_dropped_connection_over_a_socket_is_incomplete():
    with serve([disconnect("Half of this arrives before the connection drops.", after_events=5)]) as handle:
        client = anthropic.AsyncAnthropic(api_key="offline-not-a-key", base_url=handle.url, max_retries=0)
        model = AnthropicModel(client, "claude-scripted-1")
        with pytest.raises(IncompleteStreamError) as caught:
            [item async for item in model.stream(messages=REQUEST["messages"], max_tokens=256)]
        assert isinstance(caught.value.__cause__, httpx2.TransportError)
        await client.close()


def test_only_loopback():
    with pytest.raises(ValueError, match="loopback"):
        serve([reply("x")], host="0.0.0.0")


def test_load_script_from_yaml_and_module(tmp_path):
    script_file = tmp_path / "turns.yaml"
    script_file.write_text(textwrap.dedent("""\
        - content: [{type: text, text: "from yaml"}]
        - recorded: recorded.sse
    """))
    (tmp_path / "recorded.sse").write_text(
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_r","type":"message","role":"assistant",'
        '"model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
        '"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    script = load_script(str(script_file))
    assert script[0].content == [{"type": "text", "text": "from yaml"}] and script[1].sse.startswith("event:")
    assert load_script("dreamloop.fake_api.server:default_policy").__name__ == "default_policy"


def test_serve_fake_command_line(tmp_path, capsys):
    script_file = tmp_path / "turns.json"
    script_file.write_text(json.dumps([{"content": [{"type": "text", "text": "from the command line"}]}]))
    stop = threading.Event()
    exit_codes = []
    runner = threading.Thread(target=lambda: exit_codes.append(
        serve_fake_main(["--port", "0", "--script", str(script_file)], stop=stop)))
    runner.start()
    try:
        output = ""
        deadline = time.monotonic() + 5
        while "listening on" not in output and time.monotonic() < deadline:
            time.sleep(0.01)
            output += capsys.readouterr().out
        url = output.splitlines()[0].rsplit(" ", 1)[-1]
        assert url.startswith("http://127.0.0.1:")
        status, _, text = post(url, REQUEST)
        assert status == 200 and json.loads(text)["content"][0]["text"] == "from the command line"
    finally:
        stop.set()
        runner.join(timeout=5)
    assert exit_codes == [0]


def _raw_request(url, head: bytes) -> bytes:
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port), timeout=5) as sock:
        sock.sendall(head)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_an_unreadable_or_oversized_body_gets_an_answer(server):
    """Issue 9: `Content-Length: abc` is a 400, a body over the limit a 413; neither drops the connection."""
    bad = _raw_request(server.url, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}")
    assert bad.startswith(b"HTTP/1.1 400") and b"Invalid Content-Length header: 'abc'" in bad
    huge = _raw_request(server.url, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n")
    assert huge.startswith(b"HTTP/1.1 413") and b"request_too_large" in huge
    assert server.api.consumed == 0


def test_two_hundred_concurrent_clients_are_all_answered():
    """Issue 9: the listen backlog holds a burst (it lost 8 of 200 to connection resets before)."""
    from concurrent.futures import ThreadPoolExecutor

    with serve(lambda body, index: reply("ok")) as handle:
        barrier = threading.Barrier(50)

        def one(_):
            try:
                barrier.wait(timeout=5)
            except threading.BrokenBarrierError:
                pass
            return post(handle.url, REQUEST)[0]

        with ThreadPoolExecutor(max_workers=50) as pool:
            statuses = list(pool.map(one, range(200)))
    assert statuses == [200] * 200


# ---------------------------------------------------------------------------
# serve-fake as a person meets it: a free port by default, clear errors, strict script files


def start_serve_fake(argv, capsys):
    """Run ``serve_fake_main(argv)`` in a thread; return (url, printed lines, stop)."""
    stop = threading.Event()
    runner = threading.Thread(target=serve_fake_main, args=(argv,), kwargs={"stop": stop})
    runner.start()
    output = ""
    deadline = time.monotonic() + 10
    while "Ctrl-C" not in output and time.monotonic() < deadline and runner.is_alive():
        time.sleep(0.01)
        output += capsys.readouterr().out

    def close():
        stop.set()
        runner.join(timeout=5)

    return output.splitlines()[0].rsplit(" ", 1)[-1], output.splitlines(), close


def test_default_port_is_a_free_one_and_two_learners_get_two(capsys):
    first_url, first_lines, close_first = start_serve_fake([], capsys)
    second_url, _, close_second = start_serve_fake([], capsys)
    try:
        assert first_url != second_url
        port = first_url.rsplit(":", 1)[1]
        assert f"port {port} (a free port" in first_lines[1]
        assert f"ANTHROPIC_BASE_URL={first_url} " in first_lines[2]
        for url in (first_url, second_url):
            status, _, text = post(url, REQUEST)
            assert status == 200 and "You said: read a.py" in text
    finally:
        close_first()
        close_second()


def test_an_explicit_port_that_is_taken_is_a_clear_usage_error(capsys):
    with serve([reply("x")]) as taken:
        with pytest.raises(SystemExit) as exited:
            serve_fake_main(["--port", str(taken.port)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"port {taken.port} on 127.0.0.1 is already in use" in err and "Traceback" not in err
    with pytest.raises(OSError, match="already in use"):
        with serve([reply("x")]) as again:
            serve([reply("y")], port=again.port)


@pytest.mark.parametrize("argv", [["--port", "70000"], ["--port", "-1"], ["--port", "http"]])
def test_a_port_out_of_range_is_a_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        serve_fake_main(argv)
    assert exited.value.code == 2 and "--port" in capsys.readouterr().err


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.mark.parametrize("content, message", [
    ("- content: [{type: text, text: hi}]\n  stop_reasn: end_turn\n",
     r"turn 1: stop_reasn: unknown key \(a turn has: content, stop_reason,"),
    ("- content: [{type: text, text: hi}]\n- fault: {kind: http_error, statuss: 529}\n",
     r"turn 2: fault.statuss: unknown key \(a fault has: kind, status,"),
    ("turns: [{content: []}]\nmodel: x\n", r"exactly one key, `turns` \(found turns, model\)"),
    ("- recorded: a.sse\n  chunk_size: 3\n", r"turn 1: unknown key\(s\) beside `recorded`: chunk_size"),
    ("- recorded: missing.sse\n", r"turn 1: recorded file .*missing.sse does not exist"),
    ("- content: [{type: text, text: hi}]\n- just a string\n", r"turn 2: expected a mapping of Turn fields"),
    ("- content: [unclosed\n", r"not valid YAML"),
    ("[]\n", r"holds no turns"),
    ("{content: []}\n", r"exactly one key, `turns` \(found content\)"),
])
def test_script_files_reject_what_they_cannot_serve(tmp_path, content, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        load_script(write(tmp_path, "turns.yaml", content))


def test_a_json_script_is_checked_the_same_way(tmp_path):
    path = tmp_path / "turns.json"
    path.write_text(json.dumps([{"content": [{"type": "text", "text": "ok"}]}, {"conent": []}]))
    with pytest.raises(ValueError, match=r"turns.json, turn 2: conent: unknown key"):
        load_script(str(path))
    path.write_text("[{]")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_script(str(path))


def test_turns_reject_unknown_fields_in_python_too():
    with pytest.raises(Exception, match="stop_reasn"):
        reply("hi", stop_reasn="end_turn")


@pytest.mark.parametrize("spec, error, message", [
    ("turns.yaml", FileNotFoundError, r"script 'turns.yaml': no such file"),
    ("scripts/turns.json", FileNotFoundError, r"no such file"),
    ("no_such_policy_module:policy", ValueError, r"no module named 'no_such_policy_module'"),
    ("mypolicy:polcy", ValueError, r"module 'mypolicy' has no 'polcy'; it has TURNS, policy"),
    ("mypolicy:NUMBER", ValueError, r"'mypolicy:NUMBER' is a int; expected a policy function"),
    ("just-a-word", ValueError, r"neither a file nor module:function"),
    (".", ValueError, r"is a directory"),
])
def test_script_specs_fail_with_a_message_not_a_traceback(tmp_path, monkeypatch, spec, error, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mypolicy.py").write_text(
        "import dreamloop as dl\nNUMBER = 3\nTURNS = [dl.reply('from a list')]\n"
        "def policy(body, index):\n    return dl.reply(f'request {index}')\n")
    monkeypatch.delitem(sys.modules, "mypolicy", raising=False)
    with pytest.raises(error, match=message):
        load_script(spec)


def test_a_policy_next_to_you_loads_and_its_own_import_bug_keeps_its_traceback(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mypolicy2.py").write_text(
        "import dreamloop as dl\nTURNS = [dl.reply('one'), {'content': [{'type': 'text', 'text': 'two'}]}]\n"
        "def policy(body, index):\n    return dl.reply(f'request {index}')\n")
    (tmp_path / "brokenpolicy.py").write_text("import module_the_learner_forgot_to_install\n")
    for name in ("mypolicy2", "brokenpolicy"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert callable(load_script("mypolicy2:policy"))
    assert [t.content[0]["text"] for t in load_script("mypolicy2:TURNS")] == ["one", "two"]
    assert str(tmp_path) not in sys.path  # the current directory was on the path only for the import
    with pytest.raises(ModuleNotFoundError, match="module_the_learner_forgot_to_install"):
        load_script("brokenpolicy:policy")


def test_bad_scripts_are_usage_errors_on_the_command_line(tmp_path, capsys):
    bad = write(tmp_path, "turns.yaml", "- content: []\n  stop_reasn: x\n")
    for argv in (["--script", bad], ["--script", str(tmp_path / "missing.yaml")]):
        with pytest.raises(SystemExit) as exited:
            serve_fake_main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and "error: " in err and "Traceback" not in err


def test_the_readme_script_example_loads(tmp_path):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("# turns.yaml: dreamloop serve-fake --script turns.yaml\n", 1)[1].split("```", 1)[0]
    script = load_script(write(tmp_path, "turns.yaml", block))
    assert [t.content[-1].get("name") for t in script[:1]] == ["Read"]
    assert script[2].fault.kind == "http_error" and len(script) == 3


def test_the_request_log_keeps_every_request_and_the_latest_bodies():
    """Each body repeats the whole history, so offline() keeps the latest OFFLINE_KEEP_BODIES of them (every
    request stays listed, in order); a server keeps every body (`dreamloop compare` reads them all)."""
    from dreamloop.fake_api import FakeMessagesAPI
    from dreamloop.fake_api.api import OFFLINE_KEEP_BODIES
    from dreamloop.model import offline

    api = FakeMessagesAPI([], keep_bodies=2)
    client = api.sync_client()
    for n in range(4):
        client.messages.count_tokens(model="claude-scripted-1", messages=[{"role": "user", "content": f"hi {n}"}])
    assert [r.index for r in api.requests] == [0, 1, 2, 3]
    assert [r.body_dropped for r in api.requests] == [True, True, False, False]
    assert [r.body and r.body["messages"][0]["content"] for r in api.requests] == [None, None, "hi 2", "hi 3"]
    assert offline([]).api.keep_bodies == OFFLINE_KEEP_BODIES
    assert offline([], keep_bodies=None).api.keep_bodies is None
    with serve([reply("one"), reply("two")] * 20) as server:
        for _ in range(OFFLINE_KEEP_BODIES + 3):
            post(server.url, REQUEST)
        assert server.api.keep_bodies is None
        assert all(r.body == REQUEST for r in server.api.requests) and len(server.api.requests) == OFFLINE_KEEP_BODIES + 3
