"""The context pipeline: phase 2 of the loop, seven stages from light to heavy (chapter 06).

Before every request the loop trims what it sends, trying the least lossy step
first: the conversation-loop text's seven steps (its 压缩管线), light to heavy. The
texts name the stages, not functions; the modules' names are dreamloop's. Each stage is a plain
function over loop messages in its own module; ``ContextOptions`` switches them
on one by one (``QueryParams(context=ContextOptions(...))``, all off by
default); ``prepare_context()`` runs them in order:

    options.py        ContextOptions, the stages' settings, thresholds from the window
    budget.py         1 tool-result budget: an oversized result → a file + a preview
    snip.py           2 snip: old long contents trimmed, with a marker
    microcompact.py   3 microcompact: old tool results cleared, in batches (never the last two turns')
    collapse.py       4 context collapse: runs of low-information calls folded; staged, then committed
    system_prompt.py  5 system-prompt assembly (byte-stable) and the cache breakpoints
    autocompact.py    6 autocompact: the model summarises the head; the compact boundary
    blocking.py       7 blocking limit: over it, nothing is sent (Terminal ``blocking_limit``)
    pipeline.py       ContextPipeline / prepare_context(): the order, the notices, the per-turn record
    records.py        StageResult, the notices' shape, ContextRecord (the trace's ``context``)

Every stage that changes something yields one ``SystemMessage`` whose
``subtype`` is its name (``tool_result_budget``, ``snip``, ``microcompact``,
``context_collapse``; ``compact_boundary`` for a compaction, also
``autocompact_failed`` and ``blocking_limit``) and whose ``metadata`` holds
``stage``, ``tokens_before``, ``tokens_after`` and ``replaced`` (new message
uuid → the uuids it stands for). The package knows nothing about streaming
the model or running tools.
"""

from .autocompact import (
    COMPACT_SYSTEM_PROMPT,
    SUMMARY_PREFIX,
    Compaction,
    CompactTrigger,
    PreCompact,
    PreCompactResult,
    compact_conversation,
    compaction_cut,
    is_compaction_request,
    is_person_request,
    latest_request,
    latest_request_index,
    messages_after_compact_boundary,
)
from .blocking import is_at_blocking_limit
from .budget import apply_tool_result_budget
from .collapse import CollapseDrain, Fold, commit_folds, drain_collapses, find_folds, staged_collapses
from .microcompact import CLEARED, clearable_tool_results, microcompact_messages
from .options import (
    STAGES,
    Autocompact,
    BlockingLimit,
    ContextCollapse,
    ContextOptions,
    Microcompact,
    Snip,
    SystemPromptAssembly,
    Thresholds,
    ToolResultBudget,
    stages_over,
)
from .pipeline import ContextPipeline, PreparedContext, prepare_context
from .records import ContextRecord, StageResult
from .snip import snip_messages
from .system_prompt import add_cache_breakpoints, append_system_context, user_context_text

__all__ = [
    "CLEARED",
    "COMPACT_SYSTEM_PROMPT",
    "STAGES",
    "SUMMARY_PREFIX",
    "Autocompact",
    "BlockingLimit",
    "CollapseDrain",
    "Compaction",
    "CompactTrigger",
    "ContextCollapse",
    "ContextOptions",
    "ContextPipeline",
    "ContextRecord",
    "Fold",
    "Microcompact",
    "PreCompact",
    "PreCompactResult",
    "PreparedContext",
    "Snip",
    "StageResult",
    "SystemPromptAssembly",
    "Thresholds",
    "ToolResultBudget",
    "add_cache_breakpoints",
    "append_system_context",
    "apply_tool_result_budget",
    "clearable_tool_results",
    "commit_folds",
    "compact_conversation",
    "compaction_cut",
    "drain_collapses",
    "find_folds",
    "is_at_blocking_limit",
    "is_compaction_request",
    "is_person_request",
    "latest_request",
    "latest_request_index",
    "messages_after_compact_boundary",
    "microcompact_messages",
    "prepare_context",
    "snip_messages",
    "staged_collapses",
    "stages_over",
    "user_context_text",
]
