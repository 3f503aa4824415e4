"""The offline demo: a sample project to work on and a rule-based agent that works on it.

``copy_sample_project()`` makes a workspace; ``demo_policy`` is the fake API's
policy that plays the model (its docstring states the tasks it understands).
``dreamloop demo`` puts the two together through the real loop and tools.
"""

from dreamloop.demo.policy import MAX_TOOL_CALLS, FixFailingTest, SetValue, Task, demo_policy, parse_task
from dreamloop.demo.workspace import copy_sample_project, sample_project_path

__all__ = [
    "MAX_TOOL_CALLS",
    "FixFailingTest",
    "SetValue",
    "Task",
    "copy_sample_project",
    "demo_policy",
    "parse_task",
    "sample_project_path",
]
