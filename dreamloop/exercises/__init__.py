"""The chapters' exercise checks: each compares a learner's answer with the package, the answer key.

Every ``check_*`` prints "✅ <what passed>" or "❌ <what is wrong>" plus a
"Hint:" line, returns True or False, and never raises: a wrong answer, a
wrong type, an exception in the learner's code (``NotImplementedError`` from
an unfinished stub included) and a hang all end as a ❌ that says what to fix.
Checks are plain calls, also for ``async def`` answers: code that needs the
model runs against the offline API on a fresh event loop in a worker thread
(a notebook's own loop is already running). Each chapter's checks live in their own module (``ch00`` ... ``ch04``);
the shared checking helpers in ``_checking``. This package knows nothing about
notebooks or widgets.

    import dreamloop.exercises as ex
    ex.check_four_steps(my_agent_loop)     # chapter 01
"""

from .ch00 import check_hello_script, check_setup, check_tool_script
from .ch01 import check_find_tool_uses, check_four_steps
from .ch02 import check_answer_tool_uses, check_close_dangling
from .ch03 import check_last_answer, check_max_turns, check_next_state
from .ch04 import check_can_use_tool, check_partition, check_tool_definition
from .ch05 import check_interrupt_results, check_ordering_rule, check_run_together

__all__ = [
    "check_answer_tool_uses",
    "check_can_use_tool",
    "check_close_dangling",
    "check_find_tool_uses",
    "check_four_steps",
    "check_hello_script",
    "check_interrupt_results",
    "check_last_answer",
    "check_max_turns",
    "check_next_state",
    "check_ordering_rule",
    "check_partition",
    "check_run_together",
    "check_setup",
    "check_tool_definition",
    "check_tool_script",
]
