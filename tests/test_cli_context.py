"""`dreamloop run` is the production loop: the context pipeline is on, every stage, unless turned off."""

from __future__ import annotations

import json

from dreamloop.cli import main
from dreamloop.context import STAGES
from dreamloop.demo import copy_sample_project
from dreamloop.trace import Trace


def run_json(capsys, tmp_path, *flags):
    workspace = copy_sample_project(tmp_path / "sample")
    trace = tmp_path / "trace.jsonl"
    status = main(["run", "change value to 2", "--workspace", str(workspace), "--json", "--trace", str(trace),
                   "--permission-mode", "accept-edits", *flags])
    return status, json.loads(capsys.readouterr().out), Trace.load(trace), workspace


def test_run_turns_every_stage_on_with_thresholds_from_the_models_window(capsys, tmp_path):
    status, result, trace, workspace = run_json(capsys, tmp_path)
    assert status == 0 and result["terminal"]["reason"] == "completed"
    context = result["switches"]["context"]
    assert all(context[stage] is not None for stage in STAGES) and context["prompt_caching"] is True
    assert context["system_prompt"] == {"system_context": {}, "user_context": {}}
    assert trace.switches == result["switches"]
    record = trace.checkpoints[0].context
    assert record["window"] == 200_000 and record["thresholds"]["autocompact"] == 167_000
    assert record["thresholds"]["blocking_limit"] == 177_000
    assert "value = 2" in (workspace / "config.py").read_text()


def test_run_turns_the_pipeline_or_one_stage_off(capsys, tmp_path):
    status, result, trace, _ = run_json(capsys, tmp_path / "a", "--no-context")
    assert status == 0 and result["switches"]["context"] is False and trace.checkpoints[0].context is None
    status, result, _, _ = run_json(capsys, tmp_path / "b", "--no-stage", "snip", "--no-stage", "autocompact")
    context = result["switches"]["context"]
    assert status == 0 and context["snip"] is None and context["autocompact"] is None
    assert context["microcompact"] is not None


def test_a_window_too_small_stops_before_sending(capsys, tmp_path):
    status, result, trace, _ = run_json(capsys, tmp_path, "--context-window", "400",
                                        "--no-recovery-branch", "reactive_compact_retry")
    assert status == 8 and result["terminal"]["reason"] == "blocking_limit"  # EXIT_CODES["blocking_limit"]
    assert trace.checkpoints[-1].context["window"] == 400
    notice = [m for m in result["transcript"] if m["type"] == "system"][-1]
    assert notice["subtype"] == "blocking_limit" and "no request was sent" in notice["content"]
