"""Write the scrubbed Claude Code 2.1.332 session fixtures from kept ``dreamloop compare`` runs.

    .venv/bin/dreamloop compare max_tokens_always prompt_too_long_after_tools hook_stop_exit_2_once \\
        --keep /tmp/runs
    .venv/bin/python tests/conformance/make_fixtures.py /tmp/runs

Each kept run's session file (``<scenario>/claude-code/home/.claude/projects/*/*.jsonl``) goes through
``scrub.scrub_records`` (beside this script; Anthropic's text out, shapes and lengths kept, hashes
and digests recomputed) into ``tests/fixtures/claude-code-sessions/`` as
``NN_dreamloop-compare_<scenario>_v<version>_scrubbed.jsonl``; the run folder's path is replaced by
``/tmp/runs``. ``tests/test_claude_code.py`` reads them in ``make test``; the unscrubbed files never
enter the repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scrub import scrub_records  # noqa: E402

SCENARIOS = {"09": "max_tokens_always", "10": "prompt_too_long_after_tools", "11": "hook_stop_exit_2_once"}
OUT = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code-sessions"


def main(runs: Path) -> None:
    for number, scenario in SCENARIOS.items():
        found = sorted((runs / scenario / "claude-code" / "home" / ".claude" / "projects").glob("*/*.jsonl"))
        if not found:
            raise SystemExit(f"no session file kept for {scenario} under {runs}")
        lines = found[0].read_text(encoding="utf-8").splitlines()
        folder = str(runs.resolve())
        records = scrub_records([json.loads(line) for line in lines if line.strip()],
                                replace={folder: "/tmp/runs", folder.replace("/", "-").replace("_", "-"): "-tmp-runs"})
        version = next((r["version"] for r in records if r.get("version")), "unknown")
        text = "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
        path = OUT / f"{number}_dreamloop-compare_{scenario}_v{version}_scrubbed.jsonl"
        path.write_text(text, encoding="utf-8")
        print(f"{path.name}: {len(records)} records, {len(text):,} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/conformance/runs"))
