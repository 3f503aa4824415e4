"""Run Claude Code 2.1.332 on one synchronous ``Agent`` call offline, and keep what it wrote, scrubbed (issue 34).

    .venv/bin/python tests/conformance/make_sidechain_fixture.py /work/main/.claude-code/node_modules/.bin/claude

A probe, not a library scenario (``dreamloop compare``'s ``sub_agent_call`` compares the requests): the same
harness (``compare.sides.run_claude_code``: a fresh HOME, the offline API, the scripted model, the run's files
kept in a temporary folder), one script: the parent calls ``Agent`` (``run_in_background: false``) with a prompt
holding ``CHILDTASK``, the child (told apart by that marker, ``scripts.by_prompt``) reads ``config.py`` and
answers, the parent answers. What 2.1.332 wrote: the session file ``<session>.jsonl`` and, beside it, the folder
``<session>/subagents/`` holding ``agent-<agentId>.jsonl`` (every record ``isSidechain: true`` with that
``agentId`` and the parent's ``sessionId``) and ``agent-<agentId>.meta.json`` (``toolUseId`` names the parent's
call). Both go into ``tests/fixtures/claude-code-sessions/`` as ``12_…_scrubbed.jsonl`` and the folder
``12_…_scrubbed/subagents/``, through ``scrub.scrub_records`` and, beyond it: the records of the requests as
sent (``api-request*``, ``tools-used``: large, and shapes the comparison records already) are left out, and the
text of the ``Agent`` call's result (2.1.332 wraps the child's answer in a hand-back note of its own) is a
placeholder of the same length, there and in ``toolUseResult.content``. The run folder's path is ``/tmp/runs``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scrub import placeholder, scrub_records  # noqa: E402

from dreamloop import scripts as S  # noqa: E402
from dreamloop.compare.scenarios import Scenario  # noqa: E402
from dreamloop.compare.sides import run_claude_code  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-sessions"
STEM = "12_dreamloop-compare-probe_agent_foreground_v{version}_scrubbed"
_DROPPED = ("api-request", "api-request-blob", "api-request-shape", "tools-used")


def _script(workspace: str) -> S.Policy:
    main = [S.reply(S.tool_use("Agent", {"description": "read config", "prompt": "CHILDTASK: read config.py and "
                                         "say its first line", "subagent_type": "general-purpose",
                                         "run_in_background": False})),
            S.reply("The child says the file is frozen.")]
    child = [S.reply(S.tool_use("Read", {"file_path": workspace + "/config.py"})), S.reply("The first line is FROZEN.")]
    return S.by_prompt(main, {"CHILDTASK": child})


PROBE = Scenario("agent_foreground_probe", "one Agent call, run_in_background false", "ask a sub-agent what "
                 "config.py says", _script)


def _scrub(records: list[dict], folder: str, agent_calls: set[str]) -> list[dict]:
    records = [r for r in records if r.get("type") not in _DROPPED]
    out = scrub_records(records, replace={folder: "/tmp/runs", folder.replace("/", "-").replace("_", "-"): "-tmp-runs"})
    for record in out:
        content = (record.get("message") or {}).get("content") if record.get("type") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") in agent_calls:
                block["content"] = [{**b, "text": placeholder(b["text"])} if b.get("type") == "text" else b
                                    for b in block.get("content") or []]
                result = record.get("toolUseResult")
                if isinstance(result, dict) and isinstance(result.get("content"), list):
                    result["content"] = [{**b, "text": placeholder(b["text"])} if b.get("type") == "text" else b
                                         for b in result["content"]]
    return out


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    print(f"{path.relative_to(OUT)}: {len(records)} records, {path.stat().st_size:,} bytes")


def main(claude: str) -> None:
    with tempfile.TemporaryDirectory() as keep:
        side, _ = run_claude_code(PROBE, claude, keep=Path(keep))
        print(f"{side.version}: {len(side.requests)} requests, ending {side.ending.reason}")
        project = next((Path(keep) / PROBE.name / "claude-code" / "home" / ".claude" / "projects").glob("*"))
        [session] = sorted(project.glob("*.jsonl"))
        agents = sorted((project / session.stem / "subagents").glob("agent-*.jsonl"))
        metas = {a: json.loads(a.with_suffix(".meta.json").read_text(encoding="utf-8")) for a in agents}
        calls = {str(m.get("toolUseId")) for m in metas.values()}
        folder = str(Path(keep).resolve())
        records = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines() if line.strip()]
        version = next((r["version"] for r in records if r.get("version")), "unknown")
        stem = STEM.format(version=version)
        _write(OUT / f"{stem}.jsonl", _scrub(records, folder, calls))
        for agent, meta in metas.items():
            lines = [json.loads(line) for line in agent.read_text(encoding="utf-8").splitlines() if line.strip()]
            _write(OUT / stem / "subagents" / agent.name, _scrub(lines, folder, calls))
            target = OUT / stem / "subagents" / agent.with_suffix(".meta.json").name
            target.write_text(json.dumps(meta, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
