"""The offline Anthropic Messages API: faithful enough that a broken loop fails as it would live.

``FakeMessagesAPI(script)`` serves ``POST /v1/messages`` (streaming SSE and
JSON) and ``/v1/messages/count_tokens`` to the official ``anthropic`` SDK
through ``httpx2.MockTransport`` (``api.client()``), or to any HTTP client
through a loopback server (``serve(script)``, ``dreamloop serve-fake``).
Requests are validated with the real API's 400 wording; replies come from a
script of ``Turn``s (``dreamloop.scripts``) or recorded ``RawTurn``s.

    api.py         FakeMessagesAPI: ids, script order, request log, transports
    validation.py  the API's request rules and messages
    replies.py     Turn / RawTurn → Reply (status, headers, JSON or paced SSE), faults
    sse.py         Message ⇄ stream events, frame encoding
    signatures.py  thinking-block signatures (issued and verified)
    cache.py       prompt caching: cache_control breakpoints, cache reads and writes in usage
    recorded.py    RawTurn and the recorded-fixture loaders
    cassette.py    cassette(path): a recorded run replayed response by response
    server.py      loopback server and ``serve-fake``

The package knows nothing about the agent loop that calls it.
"""

from .api import DEFAULT_CONTEXT_WINDOW, OFFLINE_API_KEY, OFFLINE_BASE_URL, FakeMessagesAPI, ReceivedRequest
from .cache import CacheUsage, PromptCache
from .cassette import Cassette, RequestDifference, cassette
from .recorded import RawTurn, RecordedInteraction, load_cassette, load_recorded, recorded_turn
from .server import FakeServer, load_script, serve, serve_fake_main
from .signatures import sign_thinking
from .validation import InvalidRequest, merge_consecutive, validate_request

__all__ = [
    "CacheUsage",
    "DEFAULT_CONTEXT_WINDOW",
    "Cassette",
    "OFFLINE_API_KEY",
    "OFFLINE_BASE_URL",
    "FakeMessagesAPI",
    "FakeServer",
    "InvalidRequest",
    "PromptCache",
    "RawTurn",
    "ReceivedRequest",
    "RecordedInteraction",
    "RequestDifference",
    "cassette",
    "load_cassette",
    "load_recorded",
    "load_script",
    "merge_consecutive",
    "recorded_turn",
    "serve",
    "serve_fake_main",
    "sign_thinking",
    "validate_request",
]
