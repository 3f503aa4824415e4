"""Each request's output limit: the rule Claude Code 2.1.332 was seen to follow (``dreamloop.output_limit``,
``QueryParams(observed_output_limits=True)``, on in ``dreamloop run``) and the offline API's model information,
which agrees with it. The recorded figures are checked against the conformance file too, so the table and the
observation cannot drift apart."""

from __future__ import annotations

import re

import pytest

import dreamloop as dl
from dreamloop import scripts as S
from dreamloop.compare.anatomy import conformance_file
from dreamloop.compare.conformance import load_expectations
from dreamloop.compare.sides import expectations_name
from dreamloop.output_limit import NON_STREAMING_OUTPUT_CAP, OBSERVED_OUTPUT_LIMITS, observed_output_limit
from dreamloop.query import QueryParams, query
from dreamloop.presets import observed_recovery


@pytest.mark.parametrize("model, streaming, known, limit", [
    ("claude-opus-5-5", True, None, 128_000),
    ("claude-opus-5-5", False, None, 64_000),
    ("claude-sonnet-4-5", True, 64_000, 32_000),  # the rule wins over the model's information
    ("claude-sonnet-4-5", False, None, 32_000),  # under the cap: kept
    ("claude-haiku-4-5", True, None, 32_000),
    ("my-model", True, 8192, 8192),  # not observed: its information decides
    ("my-model", False, 100_000, NON_STREAMING_OUTPUT_CAP),
    ("my-model", True, None, None),
    (None, True, None, None),
])
def test_the_rule_by_model_and_attempt(model, streaming, known, limit):
    assert observed_output_limit(model, streaming=streaming, model_limit=known) == limit


def _limits(lines: list[str]) -> list[tuple[str, int]]:
    """``(role, max_tokens)`` of each request line of a recorded outcome, streamed ones marked ``+stream``."""
    found = []
    for line in lines:
        match = re.match(r"\d+\S* (stream|no-stream) max_tokens=(\d+) (\S+)", line)
        if match:
            found.append((f"{match[3]}{'+stream' if match[1] == 'stream' else ''}", int(match[2])))
    return found


def test_the_table_is_what_the_recording_shows():
    """Claude Code 2.1.332's side of the scenarios the table cites, as recorded."""
    scenarios = load_expectations(conformance_file(expectations_name()))["scenarios"]
    assert _limits(scenarios["output_limit_fallback"]["claude_code"]) == [("main+stream", 128_000)] * 3 + [
        ("fallback+stream", 32_000)]
    assert _limits(scenarios["output_limit_streaming_fallback"]["claude_code"]) == [("main+stream", 128_000),
                                                                                    ("main", 64_000)]
    assert _limits(scenarios["stream_error_before_block"]["claude_code"]) == [("main+stream", 32_000),
                                                                              ("main", 32_000)]
    assert _limits(scenarios["http_529_fallback"]["claude_code"])[-1] == ("fallback+stream", 32_000)
    assert OBSERVED_OUTPUT_LIMITS == {"claude-opus-5-5": 128_000, "claude-sonnet-4-5": 32_000,
                                      "claude-haiku-4-5": 32_000}
    for name, row in scenarios.items():  # every request Claude Code sent, in every scenario
        assert {limit for _, limit in _limits(row["claude_code"])} <= {128_000, 64_000, 32_000}, name


async def test_the_offline_models_information_agrees_with_the_rule():
    for name, limit in OBSERVED_OUTPUT_LIMITS.items():
        assert await dl.offline([], model=name).max_output_tokens() == limit
    assert await dl.offline([]).max_output_tokens() == 64_000  # claude-scripted-1: dreamloop's choice
    assert await dl.offline([], model="claude-sonnet-4-5", output_limits={}).max_output_tokens() == 64_000


def _broken_then_answer():
    blocks = [dl.text("Let me look at the configuration before I change anything.")]
    return [S.Turn(content=blocks, fault=S.Fault(kind="stream_error", after_events=4,
                                                 error_type="overloaded_error")), dl.reply("value is 1.")]


async def _sent(model, **params) -> list[tuple[bool, int]]:
    run = query(QueryParams(messages="what is value?", model=model, max_tokens=None,
                            recovery=observed_recovery(), **params))
    async for _ in run:
        pass
    assert run.terminal.reason == "completed"
    return [(bool(r.body.get("stream")), r.body["max_tokens"]) for r in model.api.requests
            if r.path.endswith("/v1/messages")]


@pytest.mark.parametrize("on, sent", [
    (True, [(True, 32_000), (False, 32_000)]),   # the rule: 32,000 whatever the information says
    (False, [(True, 64_000), (False, 64_000)]),  # the model's information alone (the real API says 64,000)
])
async def test_the_switch_decides_against_a_models_information(on, sent):
    model = dl.offline(_broken_then_answer(), model="claude-sonnet-4-5", output_limits={"claude-sonnet-4-5": 64_000})
    assert await _sent(model, observed_output_limits=on) == sent


async def test_the_retry_without_streaming_is_capped():
    assert await _sent(dl.offline(_broken_then_answer(), model="claude-opus-5-5"), observed_output_limits=True) == [
        (True, 128_000), (False, 64_000)]


def test_dreamloop_run_follows_the_rule_and_its_flag_turns_it_off(tmp_path, capsys, monkeypatch):
    from dreamloop.cli import main
    from dreamloop.demo import copy_sample_project
    from dreamloop.fake_api import serve

    workspace = copy_sample_project(tmp_path / "sample")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")
    for flags, limit in (([], 128_000), (["--no-observed-output-limits"], 1000)):
        with serve([dl.reply("value is 1.")], model="claude-opus-5-5") as server:
            server.api.output_limits["claude-opus-5-5"] = 1000  # what this endpoint's information says
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            assert main(["run", "hi", "--live", "--json", "--model", "claude-opus-5-5", "--workspace",
                         str(workspace), *flags]) == 0
            sent = [r.body["max_tokens"] for r in server.api.requests if r.path.endswith("/v1/messages")]
        capsys.readouterr()
        assert sent == [limit]
