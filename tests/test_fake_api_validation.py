"""The fake API rejects what the real API rejects, with the real wording, and accepts the valid twin.

Each case is a request that breaks one rule and its valid twin (the same
request with the one thing fixed). Requests go through ``httpx2`` on the fake
API's own transport, so the test sees the exact status, headers and JSON body.
"""

from __future__ import annotations

import copy
import json

import anthropic
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreamloop.fake_api import FakeMessagesAPI, sign_thinking, validate_request
from dreamloop.scripts import reply, text

TOOLS = [{"name": "read_file", "description": "Read a file", "input_schema": {"type": "object", "properties": {}}}]


def body(*messages, **fields):
    return {"model": "claude-scripted-1", "max_tokens": 1024, "messages": list(messages)} | fields


def user(*content):
    return {"role": "user", "content": list(content) if len(content) != 1 or not isinstance(content[0], str) else content[0]}


def assistant(*content):
    return {"role": "assistant", "content": list(content)}


def use(tool_id, name="read_file"):
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"path": "a.py"}}


def result(tool_id, content="ok"):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def think(thinking_text, signature=None):
    return {"type": "thinking", "thinking": thinking_text, "signature": signature or sign_thinking(thinking_text)}


# (id, broken request, its valid twin, the API's message)
CASES = [
    (
        "tool_use without result",
        body(user("go"), assistant(text("Reading"), use("T1"), use("T2")), user("continue")),
        body(user("go"), assistant(text("Reading"), use("T1"), use("T2")), user(result("T1"), result("T2"), text("continue"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: T1, T2. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ),
    (
        "one of two results missing",
        body(user("go"), assistant(use("T1"), use("T2")), user(result("T2"))),
        body(user("go"), assistant(use("T1"), use("T2")), user(result("T1"), result("T2"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: T1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ),
    (
        "tool_use as the last message",
        body(user("go"), assistant(use("T1"))),
        body(user("go"), assistant(use("T1")), user(result("T1"))),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: T1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ),
    (
        "result with unknown tool_use_id (after merging)",
        body(user("go"), user(result("T1"))),
        body(user("go"), assistant(use("T1")), user(result("T1"))),
        "messages.0.content.1: unexpected `tool_use_id` found in `tool_result` blocks: T1. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    (
        "extra result for a call that was not made",
        body(user("go"), assistant(use("T1")), user(result("T1"), result("T9"))),
        body(user("go"), assistant(use("T1")), user(result("T1"))),
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: T9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    (
        "results not first",
        body(user("go"), assistant(use("T1")), user(text("here you go"), result("T1"))),
        body(user("go"), assistant(use("T1")), user(result("T1"), text("here you go"))),
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
    ),
    (
        "results split by text",
        body(user("go"), assistant(use("T1"), use("T2")), user(result("T1"), text("and"), result("T2"))),
        body(user("go"), assistant(use("T1"), use("T2")), user(result("T1"), result("T2"), text("and"))),
        "messages.2: Did not find 2 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
    ),
    (
        "empty text block",
        body(user("go"), assistant(text(""), use("T1")), user(result("T1"))),
        body(user("go"), assistant(use("T1")), user(result("T1"))),
        "messages: text content blocks must be non-empty",
    ),
    (
        "whitespace-only text block",
        body(user(text("  \n"))),
        body(user(text("hi"))),
        "messages: text content blocks must contain non-whitespace text",
    ),
    (
        "empty message content",
        body(user("go"), assistant(), user("again")),
        body(user("go"), assistant()),  # an empty final assistant message (prefill) is allowed
        "messages.1: all messages must have non-empty content except for the optional final assistant message",
    ),
    (
        "empty string content",
        body({"role": "user", "content": ""}),
        body({"role": "user", "content": "hi"}),
        "messages.0: all messages must have non-empty content except for the optional final assistant message",
    ),
    (
        "first message from the assistant",
        body(assistant(text("Hello")), user("hi")),
        body(user("hi"), assistant(text("Hello")), user("hi")),
        'messages: first message must use the "user" role',
    ),
    (
        "no messages",
        body(),
        body(user("hi")),
        "messages: at least one message is required",
    ),
    (
        "max_tokens missing",
        {"model": "claude-scripted-1", "messages": [user("hi")]},
        {"model": "claude-scripted-1", "messages": [user("hi")], "max_tokens": 16},
        "max_tokens: Field required",
    ),
    (
        "invalid tool name",
        body(user("hi"), tools=[{**TOOLS[0], "name": "read file"}]),
        body(user("hi"), tools=TOOLS),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    ),
    (
        "tool schema not an object",
        body(user("hi"), tools=[{**TOOLS[0], "input_schema": {"type": "array"}}]),
        body(user("hi"), tools=TOOLS),
        "tools.0.custom.input_schema.type: Input should be 'object'",
    ),
    (
        "duplicate tool names",
        body(user("hi"), tools=TOOLS + TOOLS),
        body(user("hi"), tools=TOOLS),
        "tools: Tool names must be unique.",
    ),
    (
        "issued thinking block edited",
        body(user("go"), assistant({**think("Plan: read a.py"), "thinking": "Plan: read b.py"}, text("Reading")), user("ok")),
        body(user("go"), assistant(think("Plan: read a.py"), text("Reading")), user("ok")),
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    (
        "thinking block without signature",
        body(user("go"), assistant({"type": "thinking", "thinking": "Plan"}, text("Reading")), user("ok")),
        body(user("go"), assistant(think("Plan", signature="EqEECkYICxgCKkAo-recorded-elsewhere"), text("Reading")), user("ok")),
        "messages.1.content.0.thinking.signature: Field required",
    ),
    (
        "thinking budget too small",
        body(user("hi"), max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 512}),
        body(user("hi"), max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 1024}),
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
    ),
    (
        "max_tokens not above the thinking budget",
        body(user("hi"), max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 2048}),
        body(user("hi"), max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048}),
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
    ),
    (
        "thinking with forced tool use",
        body(user("hi"), max_tokens=4096, tools=TOOLS, tool_choice={"type": "any"},
             thinking={"type": "enabled", "budget_tokens": 1024}),
        body(user("hi"), max_tokens=4096, tools=TOOLS, tool_choice={"type": "auto"},
             thinking={"type": "enabled", "budget_tokens": 1024}),
        "Thinking may not be enabled when tool_choice forces tool use.",
    ),
    (
        "prefill ending in whitespace",
        body(user("hi"), assistant(text("The answer is "))),
        body(user("hi"), assistant(text("The answer is"))),
        "messages: final assistant content cannot end with trailing whitespace",
    ),
    (
        "two results for one call (issue 9: abort after the results were delivered)",
        body(user("go"), assistant(use("T1")), user(result("T1"), result("T1"), text("go on"))),
        body(user("go"), assistant(use("T1")), user(result("T1"), text("go on"))),
        "messages.2.content.1: each tool_use must have a single result. "
        "Found multiple `tool_result` blocks with id: T1",
    ),
    (
        "F12: error result with empty string content",
        body(user("go"), assistant(use("T1")), user({**result("T1", ""), "is_error": True})),
        body(user("go"), assistant(use("T1")), user({**result("T1", "Exit code: 1"), "is_error": True})),
        "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true",
    ),
    (
        "F12: error result with an empty list",
        body(user("go"), assistant(use("T1")), user({**result("T1", []), "is_error": True})),
        body(user("go"), assistant(use("T1")), user({**result("T1", [text("failed")]), "is_error": True})),
        "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true",
    ),
    (
        "F12: error result without content",
        body(user("go"), assistant(use("T1")), user({"type": "tool_result", "tool_use_id": "T1", "is_error": True})),
        body(user("go"), assistant(use("T1")), user({"type": "tool_result", "tool_use_id": "T1"})),
        "messages.2.content.0.tool_result: content cannot be empty if `is_error` is true",
    ),
    (
        "F12: empty text block inside a result",
        body(user("go"), assistant(use("T1")), user({**result("T1", [text("")]), "is_error": True})),
        body(user("go"), assistant(use("T1")), user({**result("T1", [text("no output")]), "is_error": True})),
        "messages: text content blocks must be non-empty",
    ),
    (
        "whitespace-only text block inside a result",
        body(user("go"), assistant(use("T1")), user(result("T1", [text(" \n")]))),
        body(user("go"), assistant(use("T1")), user(result("T1", [text("ok")]))),
        "messages: text content blocks must contain non-whitespace text",
    ),
    (
        "text that is not a string",
        body(user({"type": "text", "text": 5})),
        body(user({"type": "text", "text": "5"})),
        "messages.0.content.0.text.text: Input should be a valid string",
    ),
    (
        "block type that is a list",
        body(user({"type": ["text"], "text": "hi"})),
        body(user({"type": "text", "text": "hi"})),
        "messages.0.content.0.type: Input should be a valid string",
    ),
    (
        "numeric tool_use id",
        body(user("go"), assistant({**use("T1"), "id": 7}), user(result("T1"))),
        body(user("go"), assistant(use("T1")), user(result("T1"))),
        "messages.1.content.0.tool_use.id: Input should be a valid string",
    ),
    (
        "tool_use input that is not an object",
        body(user("go"), assistant({**use("T1"), "input": "{\"path\": "}), user(result("T1"))),
        body(user("go"), assistant({**use("T1"), "input": {}}), user(result("T1"))),
        "messages.1.content.0.tool_use.input: Input should be a valid dictionary",
    ),
    (
        "is_error that is not a boolean",
        body(user("go"), assistant(use("T1")), user({**result("T1"), "is_error": "yes"})),
        body(user("go"), assistant(use("T1")), user({**result("T1"), "is_error": True})),
        "messages.2.content.0.tool_result.is_error: Input should be a valid boolean",
    ),
    (
        "model that is not a string",
        body(user("hi"), model=3),
        body(user("hi"), model="claude-scripted-1"),
        "model: Input should be a valid string",
    ),
    (
        "empty system text block",
        body(user("hi"), system=[text("")]),
        body(user("hi"), system=[text("Be brief.")]),
        "system: text content blocks must be non-empty",
    ),
]


@pytest.fixture
def api():
    return FakeMessagesAPI(lambda request, index: reply("ok"))


async def post(api, payload, path="/v1/messages"):
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(api.handler), base_url="http://fake.invalid") as http:
        return await http.post(path, json=payload)


@pytest.mark.parametrize("broken, twin, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_rule_rejects_with_api_wording(api, broken, twin, message):
    response = await post(api, broken)
    assert response.status_code == 400
    assert response.headers["x-should-retry"] == "false"
    assert response.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": response.headers["request-id"],
    }
    assert api.consumed == 0  # a rejected request takes no script item

    ok = await post(api, twin)
    assert ok.status_code == 200, ok.json()
    assert ok.json()["content"] == [{"type": "text", "text": "ok"}]


def test_cases_are_twins():
    """Each twin differs from its broken request (guards against copy-paste cases)."""
    for name, broken, twin, _ in CASES:
        assert broken != twin, name


def test_consecutive_same_role_messages_are_merged_not_rejected():
    assert validate_request(body(user("Hi"), user("Validation feedback: please return text."))) is None
    assert validate_request(body(user("go"), assistant(text("Reading")), assistant(use("T1")), user(result("T1")))) is None


def test_foreign_signatures_are_accepted_and_issued_ones_verified():
    foreign = body(user("go"), assistant(think("Plan", signature="EqEECkYICxgCKkAo3UA4WwDbB8ihhpyk"), text("x")), user("ok"))
    assert validate_request(foreign) is None
    edited = copy.deepcopy(body(user("go"), assistant(think("Plan"), text("x")), user("ok")))
    edited["messages"][1]["content"][0]["signature"] = sign_thinking("Plan")[:-4] + "AAA="
    assert validate_request(edited).message == "messages.1.content.0: Invalid `signature` in `thinking` block"


def test_unknown_fields_and_block_types_are_tolerated():
    request = body(
        user(text("hi"), {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}),
        tools=[{**TOOLS[0], "cache_control": {"type": "ephemeral"}}, {"type": "bash_20250124", "name": "bash"}],
        metadata={"user_id": "u1"},
        temperature=0.2,
        some_future_field={"x": 1},
    )
    assert validate_request(request) is None


async def test_count_tokens_validates_without_max_tokens(api):
    ok = await post(api, {"model": "m", "messages": [user("hi")]}, path="/v1/messages/count_tokens")
    assert ok.status_code == 200 and ok.json()["input_tokens"] > 0
    bad = await post(api, {"model": "m", "messages": [user("go"), user(result("T1"))]}, path="/v1/messages/count_tokens")
    assert bad.status_code == 400
    assert bad.json()["error"]["message"].startswith("messages.0.content.1: unexpected `tool_use_id`")


async def test_broken_loop_gets_400_fixes_it_and_the_script_continues():
    api = FakeMessagesAPI([reply("first"), reply("second")])
    client = api.client()
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(**body(user("go"), user(result("T1"))))
    assert caught.value.type == "invalid_request_error"
    assert caught.value.request_id == "req_fake_0001"
    assert len(api.requests) == 1  # the SDK does not retry a 400
    fixed = await client.messages.create(**body(user("go")))
    assert fixed.content[0].text == "first"
    assert [r.script_index for r in api.requests] == [None, 0]


async def test_unknown_route_and_bad_json(api):
    missing = await post(api, {}, path="/v1/complete")
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found_error"
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(api.handler), base_url="http://fake.invalid") as http:
        broken = await http.post("/v1/messages", content=b"{not json")
    assert broken.status_code == 400 and broken.json()["error"]["type"] == "invalid_request_error"


# ---------------------------------------------------------------------------
# Every malformed body gets an answer (issue 9): a 400 in the API's words, never an exception

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", " ", "T1", "text", "tool_use", "user"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "text", "id", "name", "input", "tool_use_id", "content", "is_error", "role",
                         "signature", "thinking", "source"]), inner, max_size=4),
    max_leaves=12,
)
VALID = body(user("go"), assistant(think("Plan"), text("Reading"), use("T1")), user(result("T1"), text("more")),
             system="Be brief.", tools=TOOLS)


def _paths(value, prefix=()):
    yield prefix
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from _paths(child, prefix + (key,))


@st.composite
def mutated_bodies(draw):
    """A valid request with one place in it replaced by arbitrary JSON."""
    request = copy.deepcopy(VALID)
    path = draw(st.sampled_from(list(_paths(request))[1:]))
    *parents, last = path
    target = request
    for key in parents:
        target = target[key]
    target[last] = draw(JSON)
    return request


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated_bodies())
def test_every_malformed_body_gets_an_answer(request_body):
    problem = validate_request(request_body)  # never raises
    api = FakeMessagesAPI([reply("ok")])
    answer = api.respond("POST", "/v1/messages", {}, json.dumps(request_body).encode())
    assert answer.status == (400 if problem else 200), (problem, answer.body[:300])
    if problem:
        assert json.loads(answer.body)["error"] == {"type": "invalid_request_error", "message": problem.message}


def test_an_oversized_body_is_413():
    api = FakeMessagesAPI([reply("ok")], max_body_bytes=1000)
    answer = api.respond("POST", "/v1/messages", {}, json.dumps(body(user("x" * 2000))).encode())
    assert answer.status == 413
    assert json.loads(answer.body)["error"] == {
        "type": "request_too_large", "message": "Request exceeds the maximum allowed number of bytes."}
    assert api.consumed == 0
