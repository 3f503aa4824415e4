"""Each request's output limit (``max_tokens``) as Claude Code 2.1.332 sent it (``output_limit_fallback``,
``output_limit_streaming_fallback``): a function of the model and the attempt.

``observed_output_limit(model, streaming=...)`` is the rule ``QueryParams(observed_output_limits=True)`` follows
when ``max_tokens`` is None (``dreamloop run``'s default; ``--no-observed-output-limits`` turns it off, and then
each model's limit comes from its information, ``GET /v1/models/{id}``). Every figure here was observed by a
``dreamloop compare`` scenario; a model none of them ran is not guessed at: its information decides. The offline
API's model information gives the same figures (``fake_api``), so a run offline and the rule agree. This module
knows nothing about requests, streams or the loop.
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["NON_STREAMING_OUTPUT_CAP", "OBSERVED_OUTPUT_LIMITS", "observed_output_limit"]

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
