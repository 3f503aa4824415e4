"""The two loops the book runs, each by dreamloop's name for it, one a learner can say: "the texts' loop" (both
texts) and "Claude Code 2.1.332 as observed" (the ``dreamloop compare`` scenarios, ``one_tool`` the simplest).

There is one loop (``query.py``) with switches; a preset is a set of switch values with a name. ``texts_loop()``
turns on every branch both texts name, in the form they give it (``texts_fields()`` names the text of each);
``observed_loop()`` turns on every branch as the ``dreamloop compare`` scenarios saw Claude Code 2.1.332 run it
where one shows it (``observed_fields()`` names the scenario of each, ``one_tool`` the simplest), and is what
``dreamloop run`` runs (``cli.py`` builds its ``QueryParams`` from it and changes only what a flag names). This
module is the one place those values live; it knows nothing of argparse, notebooks or widgets.

    params = dl.observed_loop(messages="what is value?", model=dl.offline(script), workspace=folder)
    params = dl.texts_loop(messages="what is value?", model=dl.offline(script), workspace=folder)

``dl.QueryParams(...)`` with its own defaults is the loop of both texts with every branch off (dreamloop's design):
the chapters start there and switch branches on one by one, each in the form both texts give it
(``recovery=dl.RecoveryOptions()``).
"""

from __future__ import annotations

from typing import Any

from .context.environment import run_system_prompt
from .context.options import ContextOptions
from .hooks import Hooks
from .language import N_
from .query import QueryParams
from .recovery import RecoveryOptions
from .subagents import SubAgents
from .tools.file_state import FileState

__all__ = ["OBSERVED_LOOP", "TEXTS_LOOP", "observed_fields", "observed_loop", "observed_recovery", "texts_fields",
           "texts_loop"]

TEXTS_LOOP = N_("the texts' loop")
"""The name of the loop both texts describe (``texts_loop()``; ``tr(TEXTS_LOOP)`` in the learner's
language)."""

OBSERVED_LOOP = N_("Claude Code 2.1.332 as observed")
"""The name of the loop as ``dreamloop compare`` saw Claude Code 2.1.332 run it (``observed_loop()``,
``dreamloop run``; ``one_tool`` the simplest scenario, the recording's labelled differences aside)."""


def observed_recovery(**changes: Any) -> RecoveryOptions:
    """The recovery branches as Claude Code 2.1.332 ran them in the ``dreamloop compare`` scenarios: a
    ``max_tokens`` cut is resumed at once, without raising the limit first (``max_tokens_once``); cuts that
    outlast the three resumes end ``api_error`` (``max_tokens_always``); a response whose ``stop_reason`` says
    ``tool_use`` without the block is asked again twice, then the run ends ``malformed_tool_use_exhausted``
    (``tool_use_without_block``); a stream that breaks part-way is asked again (``stream_error_inside_tool_use``).
    Every other branch as in ``RecoveryOptions()``. ``changes`` override fields
    (``observed_recovery(max_output_tokens_escalate=True)``)."""
    return RecoveryOptions(**{"max_output_tokens_escalate": False, "max_tokens_exhausted": "api_error",
                              "malformed_tool_use_retries": 2, **changes})


def observed_fields() -> dict[str, Any]:
    """The ``QueryParams`` fields of Claude Code 2.1.332 as observed, as ``dreamloop run`` uses them when no flag
    changes one (dreamloop's name for the preset); each with its evidence:

    * ``streaming_tool_execution``: on (the conversation-loop text's branch; no scenario shows when Claude Code
      2.1.332 starts a call, but it kept and answered a Bash call whose connection dropped in the text after it,
      ``disconnect_after_bash_ran``, as dreamloop's executor does with a call it started).
    * ``results_as_finished``: on, the results of parallel calls in the order they finished, as Claude Code
      2.1.332 sent them in ``results_in_finishing_order``.
    * ``sibling_rule``: off: a failing Bash call cancelled nothing (``bash_fails_parallel``,
      ``bash_fails_serial``).
    * ``context``: every stage on and prompt caching, thresholds from the model's window (dreamloop's choice
      of figures; ``one_tool`` shows ``cache_control`` on the newest message).
    * ``hooks``: on, with no hook (a workspace's own settings never run unasked: dreamloop's choice).
    * ``recovery``: ``observed_recovery()``.
    * ``max_tokens``: None and ``observed_output_limits`` on: each model's output limit as Claude Code 2.1.332
      sent it (128,000 to ``claude-opus-5-5``, 32,000 to ``claude-sonnet-4-5`` and ``claude-haiku-4-5``, at most
      64,000 on a request sent again without streaming: ``output_limit_fallback``, ``one_tool``,
      ``http_529_fallback``, ``output_limit_streaming_fallback``); a model no scenario ran keeps its information's
      limit (dreamloop's choice).
    * ``system_prompt``: dreamloop's own words (``context.environment.IDENTITY``); ``environment`` and
      ``memory_files`` on (Claude Code 2.1.332 opened the first message with eight context reminders in
      ``one_tool``, nine with a CLAUDE.md in ``memory_file``; dreamloop sends its own words).
    * ``file_state``: on: Write and Edit refuse an existing file the model never read (Claude Code 2.1.332 in
      ``write_without_read``, ``edit_without_read``), a Write one changed on disk since it was read
      (``write_after_change``); a new file may be written (``write_new_file``); an Edit of a changed file whose
      old text still matches is applied (``edit_after_change``), and a Write after it is refused
      (``edit_after_change_then_write``).
    * ``changed_files``: off (Claude Code 2.1.332 sent no file-change notice within the run in
      ``files_changed_between_turns``); ``tool_use_summaries`` off (dreamloop's choice: live, each is one more
      request); no ``fallback_model`` and no ``token_budget`` (each needs a value: ``--fallback-model``,
      ``--token-budget``).
    * ``background_tasks``: on (the ``Bash`` tool of the requests Claude Code 2.1.332 sent in
      ``prompt_too_long_after_tools`` takes ``run_in_background``); ``TaskOutput`` and ``TaskStop`` are not among
      ``dreamloop run``'s tools, as none of those requests offered them (dreamloop's choice). A command that ends
      before the next request is told of inside that request's last tool_result, one that ends later in a message of
      its own once the run has waited for it (Claude Code 2.1.332 in ``background_command_ends_before_next_request``,
      ``background_command_ends_later``).
    * ``sub_agents``: on, ``SubAgents(background_by_default=True)``: the ``Agent`` tool is offered (Claude Code
      2.1.332 offered it, ``sub_agent_call``), and a call without ``run_in_background``
      runs its child in the background, its answer arriving as a notification (as 2.1.332 ran it in
      ``sub_agent_call`` and ``two_sub_agents``). The child's tools are dreamloop's (its parent's but ``Agent``:
      2.1.332's child was offered 8 tools, ``Agent`` among them, against its parent's 12, ``sub_agent_call``).
    """
    return {
        "streaming_tool_execution": True,
        "results_as_finished": True,
        "sibling_rule": False,
        "context": ContextOptions.all_on(),
        "hooks": Hooks(),
        "recovery": observed_recovery(),
        "max_tokens": None,
        "observed_output_limits": True,
        "system_prompt": run_system_prompt(),
        "environment": True,
        "memory_files": True,
        "file_state": FileState(),
        "changed_files": False,
        "tool_use_summaries": None,
        "fallback_model": None,
        "token_budget": None,
        "background_tasks": True,
        "sub_agents": SubAgents(background_by_default=True),
    }


def texts_fields() -> dict[str, Any]:
    """The ``QueryParams`` fields of the texts' loop: every branch both texts name, on, in their form (each field
    with the text it comes from; how each is built is dreamloop's design):

    * ``streaming_tool_execution``: on (the conversation-loop text's streaming tool execution; the four-step-loop
      text names its executor ``StreamingToolExecutor``).
    * ``results_as_finished``: on: calls that may run in parallel give their results in the order they finish
      (the four-step-loop text).
    * ``sibling_rule``: off (neither text names it).
    * ``context``: every stage on and prompt caching (the conversation-loop text's pipeline, light to heavy).
    * ``hooks``: on, with no hook (the conversation-loop text's stop hooks).
    * ``recovery``: ``RecoveryOptions()``: escalate before resuming, then ``completed`` when the resumes run out
      (the conversation-loop text; the ending, dreamloop's choice after the four-step-loop text, whose completion
      path follows the recoverable errors); a ``tool_use`` stop without a block ends ``completed`` with a warning
      (dreamloop's choice after the four-step-loop text: ``needsFollowUp`` comes from the blocks).
    * ``max_tokens``: 4096 (``QueryParams``' default, dreamloop's choice: the texts give no figure), and
      ``observed_output_limits`` off.
    * ``system_prompt``: none (the texts give no words); ``environment`` and ``memory_files`` on (the
      conversation-loop text's system-prompt assembly and memory files).
    * ``changed_files`` and ``tool_use_summaries`` on (the conversation-loop text's phase 5: file-change notices;
      a summary made after each batch); ``file_state`` off (neither text names it); no ``fallback_model`` and no
      ``token_budget`` (each needs a value).
    * ``background_tasks``: on (the conversation-loop text's attachments carry task notifications).
    * ``sub_agents``: off (neither text names a sub-agent).
    """
    return {
        "streaming_tool_execution": True,
        "results_as_finished": True,
        "sibling_rule": False,
        "context": ContextOptions.all_on(),
        "hooks": Hooks(),
        "recovery": RecoveryOptions(),
        "max_tokens": 4096,
        "observed_output_limits": False,
        "system_prompt": None,
        "environment": True,
        "memory_files": True,
        "file_state": None,
        "changed_files": True,
        "tool_use_summaries": True,
        "fallback_model": None,
        "token_budget": None,
        "background_tasks": True,
        "sub_agents": None,
    }


def observed_loop(**fields: Any) -> QueryParams:
    """``QueryParams`` for Claude Code 2.1.332 as observed (``observed_fields()``; dreamloop's name), what
    ``dreamloop run`` runs; ``fields`` give the run (``messages``, ``model``, ``workspace``, ``tools``...) and
    override any preset value.

    The context pipeline writes oversized tool results to a file, so give ``workspace`` (a ``ValueError``
    says so otherwise)."""
    return QueryParams(**{**observed_fields(), **fields})


def texts_loop(**fields: Any) -> QueryParams:
    """``QueryParams`` for the texts' loop (``texts_fields()``; dreamloop's name); ``fields`` as for
    ``observed_loop``."""
    return QueryParams(**{**texts_fields(), **fields})
