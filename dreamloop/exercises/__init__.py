"""The chapters' exercise checks: each compares a learner's answer with the package, the answer key.

Every ``check_*`` prints "✅ <what passed>" or "❌ <what is wrong>" plus a
"Hint:" line, returns a ``Verdict`` (truthy when passed; it displays as
nothing, so a check cell shows only the printed line), and never raises: a
wrong answer, a wrong type, an exception in the learner's code and a hang all
end as a ❌. Hints are a ladder: the untouched exercise (``None``, or the
stub's ``NotImplementedError``) is told what to do, a wrong answer the idea
it missed, never the answer's code (that is in ``notebooks/solutions/``).
Each check is held against at least three plausible wrong answers in
``tests/test_exercises.py``.
Checks are plain calls, also for ``async def`` answers: code that needs the
model runs against the offline API on a fresh event loop in a worker thread
(a notebook's own loop is already running). Each chapter's checks live in their own module (``ch00`` ...
``ch12``; a letter-suffixed chapter's are its chapter's: 03b's and 03c's in ``ch03``, 07b's in ``ch07``, 08b's in ``ch08``, 10b's in ``ch10``);
the shared checking helpers in ``_checking``. This package knows nothing about
notebooks or widgets.

    import dreamloop.exercises as ex
    ex.check_four_steps(my_agent_loop)     # chapter 01
    ex.language("zh")                      # from here on, ✅/❌ lines, hints and widget labels in Chinese

Every text a check prints is English by default; ``language("zh")`` (``dreamloop.language``) switches it,
and the widgets' labels with it, to the Chinese catalogue in ``dreamloop/zh/``.
"""

from ..language import language
from .ch00 import check_hello_script, check_setup, check_tool_script
from .ch01 import check_find_tool_uses, check_four_steps
from .ch02 import check_answer_tool_uses, check_close_dangling
from .ch03 import check_last_answer, check_max_turns, check_memory_files, check_next_attachments, check_next_state
from .ch04 import check_can_use_tool, check_partition, check_tool_definition
from .ch05 import check_interrupt_results, check_ordering_rule, check_run_together
from .ch06 import check_clearable, check_first_stage, check_safe_cut
from .ch07 import check_no_recursive_rm, check_settings_hook, check_tests_stop_hook
from .ch08 import check_budget_continue, check_cut_recovery, check_withdrawn
from .ch09 import check_switches_by, check_trigger, check_where_decided
from .ch10 import check_interrupted, check_model_calls, check_resume_answers
from .ch11 import check_predict, check_reminders_added
from .ch12 import check_notified_at, check_whose

__all__ = [
    "check_answer_tool_uses",
    "check_budget_continue",
    "check_can_use_tool",
    "check_clearable",
    "check_close_dangling",
    "check_cut_recovery",
    "check_find_tool_uses",
    "check_first_stage",
    "check_four_steps",
    "check_hello_script",
    "check_interrupt_results",
    "check_interrupted",
    "check_last_answer",
    "check_max_turns",
    "check_memory_files",
    "check_model_calls",
    "check_next_attachments",
    "check_next_state",
    "check_notified_at",
    "check_no_recursive_rm",
    "check_ordering_rule",
    "check_partition",
    "check_predict",
    "check_run_together",
    "check_reminders_added",
    "check_resume_answers",
    "check_safe_cut",
    "check_settings_hook",
    "check_setup",
    "check_switches_by",
    "check_tests_stop_hook",
    "check_tool_definition",
    "check_tool_script",
    "check_trigger",
    "check_where_decided",
    "check_whose",
    "check_withdrawn",
    "language",
]
