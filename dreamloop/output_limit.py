"""Each request's output limit (``max_tokens``): the one place it is computed (``request_output_limit``), and the
figures Claude Code 2.1.332 sent (``output_limit_fallback``, ``output_limit_streaming_fallback``): a function of the
model and the attempt.

``observed_output_limit(model, streaming=...)`` is the rule ``QueryParams(observed_output_limits=True)`` follows
when ``max_tokens`` is None (``dreamloop run``'s default; ``--no-observed-output-limits`` turns it off, and then
each model's limit comes from its information, ``GET /v1/models/{id}``). Every figure here was observed by a
``dreamloop compare`` scenario; a model none of them ran is not guessed at: its information decides. The offline
API's model information gives the same figures (``fake_api``), so a run offline and the rule agree. The loop asks
``request_output_limit`` before each request, and recovery's escalation ``escalated_output_limit``; this module
knows nothing about requests, streams or the loop.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Mapping

__all__ = ["DEFAULT_MAX_TOKENS", "NON_STREAMING_OUTPUT_CAP", "OBSERVED_OUTPUT_LIMITS", "escalated_output_limit",
           "observed_output_limit", "request_output_limit"]

DEFAULT_MAX_TOKENS = 4096
"""Tokens: a request's limit when neither ``QueryParams.max_tokens`` nor the model's information gives one
(dreamloop's choice, ``QueryParams.max_tokens``' default too: the texts give no figure)."""

OBSERVED_OUTPUT_LIMITS: Mapping[str, int] = {
    "claude-opus-5-5": 128_000,
    "claude-sonnet-4-5": 32_000,
    "claude-haiku-4-5": 32_000,
}
"""Tokens, by model name, that Claude Code 2.1.332 sent as ``max_tokens`` on a streamed request: 128,000 to
``claude-opus-5-5`` (``opus_probe``, ``output_limit_fallback``, ``output_limit_streaming_fallback``), 32,000 to
``claude-sonnet-4-5`` as the main model (``one_tool`` and every scenario with the default model) and as the
fallback model (``output_limit_fallback``), 32,000 to ``claude-haiku-4-5`` as the fallback model
(``http_529_fallback``)."""

NON_STREAMING_OUTPUT_CAP = 64_000
"""Tokens: the most Claude Code 2.1.332 asked for on the request it sent again without streaming after a broken
stream: 64,000 where the streamed request had asked for 128,000 (``output_limit_streaming_fallback``), the same
32,000 where it had asked for 32,000 (``stream_error_before_block``)."""


def observed_output_limit(model: str | None, *, streaming: bool = True, model_limit: int | None = None
                          ) -> int | None:
    """The ``max_tokens`` (tokens) of a request to ``model``, as Claude Code 2.1.332 sent it (``OBSERVED_OUTPUT_LIMITS``,
    ``NON_STREAMING_OUTPUT_CAP``: ``output_limit_fallback``, ``output_limit_streaming_fallback``).

    ``streaming``: False for the request sent again without streaming after a broken stream (the
    streaming fallback), capped at ``NON_STREAMING_OUTPUT_CAP``. ``model_limit``: the model's own limit from
    its information, used for a name ``OBSERVED_OUTPUT_LIMITS`` does not hold (dreamloop's choice: what was
    not observed is not guessed). None when neither knows.

        observed_output_limit("claude-opus-5-5")                   # 128000
        observed_output_limit("claude-opus-5-5", streaming=False)  # 64000
        observed_output_limit("claude-sonnet-4-5", streaming=False)  # 32000
        observed_output_limit("my-model", model_limit=8192)        # 8192
    """
    limit = OBSERVED_OUTPUT_LIMITS.get(model or "", model_limit)
    if limit is None:
        return None
    return limit if streaming else min(limit, NON_STREAMING_OUTPUT_CAP)


async def request_output_limit(*, override: int | None, max_tokens: int | None, model: str | None,
                               model_limit: Callable[[], Awaitable[int | None]] | None, observed: bool,
                               streaming: bool, non_streaming_cap: int | None) -> int:
    """The ``max_tokens`` (tokens) of one request, the one place the loop's is computed.

    ``override``: the escalated limit a recovery set (``State.max_output_tokens_override``), first; else
    ``max_tokens`` (``QueryParams.max_tokens``); else (None) the model's own: ``model_limit()`` (its
    information, ``AnthropicModel.max_output_tokens``, asked only then), or with ``observed``
    (``QueryParams.observed_output_limits``) ``observed_output_limit(model, streaming=...)``;
    ``DEFAULT_MAX_TOKENS`` if neither knows. A request sent again without streaming (``streaming`` False)
    is capped at ``non_streaming_cap`` (``RecoveryOptions.streaming_fallback_max_tokens``; None: no cap).
    """
    limit = override or max_tokens
    if limit is None:
        known = await model_limit() if model_limit is not None else None
        if observed:
            known = observed_output_limit(model, streaming=streaming, model_limit=known)
        limit = known or DEFAULT_MAX_TOKENS
    if not streaming and non_streaming_cap is not None:
        limit = min(limit, non_streaming_cap)
    return limit


def escalated_output_limit(wanted: int, model_limit: int | None) -> int:
    """The limit a ``max_output_tokens_escalate`` asks for (tokens): ``wanted``
    (``RecoveryOptions.escalated_max_tokens``), never more than the model's own ``model_limit`` (None: unknown)."""
    return min(wanted, model_limit or wanted)
