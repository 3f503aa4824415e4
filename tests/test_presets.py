"""The two loops by name: the texts' loop and Claude Code 2.1.332 as observed (``dreamloop/presets.py``).

``dreamloop run`` builds its params from the observed preset and changes only what a flag names; the two
presets differ in the fields the design note lists, and on a script that tells them apart they end
differently, each as its evidence says.
"""

from __future__ import annotations

import pytest

import dreamloop as dl
from dreamloop import cli
from dreamloop.demo import copy_sample_project
from dreamloop.presets import OBSERVED_LOOP, TEXTS_LOOP, observed_fields, observed_recovery, texts_fields


@pytest.fixture
def sample(tmp_path):
    return copy_sample_project(tmp_path / "sample")


def prepared(*argv: str) -> dl.QueryParams:
    args = cli._parser().parse_args(["run", "change value to 2", *argv])
    params, *_ = cli._prepare_run(args)
    return params


def preset_values(params: dl.QueryParams) -> dict:
    """The preset's fields as ``params`` holds them, comparable (the hooks by their entries)."""
    out = {}
    for name in observed_fields():
        value = getattr(params, name)
        out[name] = value.entries if isinstance(value, dl.Hooks) else value
    return out


def expected(**changes) -> dict:
    fields = {**observed_fields(), **changes}
    return {name: value.entries if isinstance(value, dl.Hooks) else value for name, value in fields.items()}


def test_the_names_a_learner_says():
    assert TEXTS_LOOP == "the texts' loop" and OBSERVED_LOOP == "Claude Code 2.1.332 as observed"


def test_dreamloop_run_is_the_observed_preset(sample):
    assert preset_values(prepared("--workspace", str(sample))) == expected()


@pytest.mark.parametrize("flags, changes", [
    (["--no-streaming-tools"], {"streaming_tool_execution": False}),
    (["--sibling-rule"], {"sibling_rule": True}),
    (["--results-in-call-order"], {"results_as_finished": False}),
    (["--no-hooks"], {"hooks": None}),
    (["--no-context"], {"context": None}),
    (["--no-stage", "snip"], {"context": dl.ContextOptions.all_on(snip=None)}),
    (["--context-window", "50000"], {"context": dl.ContextOptions.all_on(context_window=50_000)}),
    (["--no-recovery"], {"recovery": None}),
    (["--recovery-branch", "max_output_tokens_escalate"],
     {"recovery": observed_recovery(max_output_tokens_escalate=True)}),
    (["--no-recovery-branch", "streaming_fallback"], {"recovery": observed_recovery(streaming_fallback=False)}),
    (["--max-tokens-exhausted", "completed"], {"recovery": observed_recovery(max_tokens_exhausted="completed")}),
    (["--malformed-tool-use-retries", "0"], {"recovery": observed_recovery(malformed_tool_use_retries=0)}),
    (["--max-tokens", "1000"], {"max_tokens": 1000}),
    (["--token-budget", "5000"], {"token_budget": dl.recovery.TokenBudget(total=5000)}),
    (["--append-system-prompt", "Answer in French."],
     {"system_prompt": observed_fields()["system_prompt"] + "\n\nAnswer in French."}),
    (["--no-environment"], {"environment": False}),
    (["--no-memory-files"], {"memory_files": False}),
    (["--changed-files"], {"changed_files": True}),
    (["--no-file-state"], {"file_state": None}),
    (["--no-background-tasks"], {"background_tasks": False}),
])
def test_a_flag_changes_only_what_it_names(sample, flags, changes):
    assert preset_values(prepared("--workspace", str(sample), *flags)) == expected(**changes)


def test_tool_use_summaries_flag_turns_the_switch_on(sample):
    params = prepared("--workspace", str(sample), "--tool-use-summaries")
    assert params.tool_use_summaries is not None
    assert {k: v for k, v in preset_values(params).items() if k != "tool_use_summaries"} == \
        {k: v for k, v in expected().items() if k != "tool_use_summaries"}


def test_the_help_states_the_presets_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    seen = observed_recovery()
    assert f"default {seen.malformed_tool_use_retries}, as Claude Code 2.1.332" in said
    assert f"default: {seen.max_tokens_exhausted}, as Claude Code 2.1.332" in said


def test_the_presets_differ_where_the_design_note_says():
    """docs/design.md lists these rows; a new difference is a decision written there too."""
    texts, seen = texts_fields(), observed_fields()
    assert sorted(texts) == sorted(seen)
    differ = {name for name in seen if name != "hooks" and texts[name] != seen[name]}
    assert differ == {"recovery", "max_tokens", "observed_output_limits", "system_prompt", "changed_files",
                      "tool_use_summaries", "file_state", "sub_agents"}
    assert texts["sub_agents"] is None and seen["sub_agents"].background_by_default
    recovery = {name for name in type(seen["recovery"]).model_fields
                if getattr(texts["recovery"], name) != getattr(seen["recovery"], name)}
    assert recovery == {"max_output_tokens_escalate", "max_tokens_exhausted", "malformed_tool_use_retries"}


def run_to_end(params: dl.QueryParams) -> tuple[str, int]:
    async def go():
        run = dl.query(params)
        async for _ in run:
            pass
        requests = [r for r in params.model.api.requests if r.path.endswith("/v1/messages")]
        return run.terminal.reason, len(requests)

    import asyncio

    return asyncio.run(go())


@pytest.mark.parametrize("script, texts, observed", [
    # always cut at max_tokens: the texts escalate, resume 3 times, end completed; Claude Code 2.1.332 resumed 3
    # times without escalating and ended api_error (max_tokens_always)
    ([dl.reply("more and more", stop_reason="max_tokens")] * 6, ("completed", 5), ("api_error", 4)),
    # stop_reason tool_use without a block: nothing to follow up; Claude Code 2.1.332 asked twice more
    # (tool_use_without_block)
    ([dl.Turn(content=[dl.text("Let me look.")], stop_reason="tool_use")] * 3,
     ("completed", 1), ("malformed_tool_use_exhausted", 3)),
])
def test_the_two_loops_end_differently_on_a_script_that_tells_them_apart(tmp_path, script, texts, observed):
    assert run_to_end(dl.texts_loop(messages="go", model=dl.offline(list(script)), workspace=tmp_path)) == texts
    assert run_to_end(dl.observed_loop(messages="go", model=dl.offline(list(script)), workspace=tmp_path)) == observed


def test_a_field_given_overrides_the_preset(tmp_path):
    params = dl.observed_loop(messages="go", model=dl.offline([dl.reply("ok")]), workspace=tmp_path,
                              recovery=None, max_tokens=2000)
    assert params.recovery is None and params.max_tokens == 2000 and params.streaming_tool_execution

