"""The loopback server: real sockets on 127.0.0.1, a plain HTTP client and the SDK, same bytes as in-process."""

from __future__ import annotations

import json
import textwrap
import threading
import time
import urllib.error
import urllib.request

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
