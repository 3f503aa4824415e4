"""``dreamloop compare``, a harness of dreamloop's own: Claude Code and dreamloop on the same script, side by side.

    scenarios.py    the scenario library (a script, a prompt and flags each)
    sides.py        one scenario on one side, against its own offline API server
    shapes.py       the requests and the ending as shapes; the MATCH rule
    conformance.py  the recorded expectations for the pinned version (``CLAUDE_CODE_VERSION``), checked
    command.py      the command line: the table, --json, --list, --check, --record

Nothing here keeps Anthropic's text: a shape holds roles, kinds, counts,
statuses and ids, never a prompt, a tool description or a reminder.
"""

from .scenarios import SCENARIOS, Scenario, scenario
from .shapes import Added, Ending, RequestShape, SideRun, differences, request_shapes
from .sides import CLAUDE_CODE_VERSION, find_claude, run_claude_code, run_dreamloop

__all__ = ["Added", "CLAUDE_CODE_VERSION", "Ending", "RequestShape", "SCENARIOS", "Scenario", "SideRun",
           "differences", "find_claude", "request_shapes", "run_claude_code", "run_dreamloop", "scenario"]
