"""ContextOptions: which context stages run, the context window, and each stage's threshold.

``QueryParams(context=ContextOptions(...))`` switches the pipeline on, one
stage at a time (each field None = that stage is off). Thresholds are input
tokens of the whole request (system, tools and messages); left as None, each
is a fraction of the window, and the window itself defaults to the model's
own (``max_input_tokens`` from the Models API). The fractions (0.835, 0.885) are
dreamloop's defaults, first derived from figures in Claude Code's source, which
nothing here shows: neither text gives a figure, and with its model reporting
990,000 input tokens Claude Code 2.1.332 neither compacted nor refused
(``usage_past_the_window``). This module only describes; the stages live beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "FRACTIONS",
    "STAGES",
    "Autocompact",
    "BlockingLimit",
    "ContextCollapse",
    "ContextOptions",
    "Microcompact",
    "Snip",
    "SystemPromptAssembly",
    "Thresholds",
    "ToolResultBudget",
    "stages_over",
]

STAGES = ("tool_result_budget", "snip", "microcompact", "context_collapse", "system_prompt", "autocompact",
          "blocking_limit")
"""The seven stages, light to heavy, in the order phase 2 runs them (also ``ContextOptions``' field names)."""

FRACTIONS = {
    "tool_result": 0.025,
    "snip": 0.5,
    "microcompact": 0.6,
    "microcompact_savings": 0.05,
    "collapse_stage": 0.6,
    "context_collapse": 0.7,
    "autocompact": 0.835,
    "blocking_limit": 0.885,
}
"""Default thresholds as fractions of the context window (a stage's own setting wins)."""


class _Stage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolResultBudget(_Stage):
    """Stage 1, tool-result budget: a result larger than ``max_result_tokens``
    is written to ``directory`` and replaced by its first ``preview_chars`` characters and the file's path.

    ``directory`` None: ``<workspace>/.dreamloop/tool-results`` (inside the
    workspace, so the Read tool can read the file back). It acts on results
    before they are ever sent, so it never breaks the cached prefix.
    """

    max_result_tokens: int | None = Field(default=None, ge=1)
    preview_chars: int = Field(default=2000, ge=0)
    directory: Path | None = None


class Snip(_Stage):
    """Stage 2, snip: over ``threshold``, text and tool results longer than
    ``max_chars`` in messages older than the newest ``keep_recent`` keep their first ``keep_chars``
    characters and a marker saying how much was cut."""

    threshold: int | None = Field(default=None, ge=0)
    keep_recent: int = Field(default=6, ge=2)
    max_chars: int = Field(default=2000, ge=100)
    keep_chars: int = Field(default=400, ge=0)

    @model_validator(mode="after")
    def _keeps_less_than_it_cuts(self) -> "Snip":
        if self.keep_chars + 100 > self.max_chars:
            raise ValueError("snip.keep_chars must be at least 100 characters below max_chars")
        return self


class Microcompact(_Stage):
    """Stage 3, microcompact: over ``threshold``, the content of old tool
    results is cleared, in one batch worth at least ``min_savings`` tokens. The results in the newest
    ``keep_recent`` tool-result messages stay, and always those of the current and previous turn."""

    threshold: int | None = Field(default=None, ge=0)
    keep_recent: int = Field(default=3, ge=0)
    min_savings: int | None = Field(default=None, ge=0)


class ContextCollapse(_Stage):
    """Stage 4, context collapse: over ``stage_threshold``, runs of at least
    ``min_pairs`` low-information tool calls (short results, little text) older than the newest
    ``keep_recent`` messages are staged as folds (a run is cut every ``max_pairs`` pairs, so an unbroken
    run of calls that goes on turn after turn is still folded as it ages); over ``threshold`` the oldest staged folds are committed
    (each run becomes one compact user message) until the context is back under ``stage_threshold``
    (a margin, so commits, which break the cached prefix, come in batches)."""

    stage_threshold: int | None = Field(default=None, ge=0)
    threshold: int | None = Field(default=None, ge=0)
    keep_recent: int = Field(default=6, ge=2)
    min_pairs: int = Field(default=2, ge=1)
    max_pairs: int = Field(default=10, ge=1)
    max_result_tokens: int = Field(default=150, ge=1)
    max_text_chars: int = Field(default=300, ge=0)

    @model_validator(mode="after")
    def _pairs_in_order(self) -> "ContextCollapse":
        if self.max_pairs < self.min_pairs:
            raise ValueError(f"max_pairs ({self.max_pairs}) is below min_pairs ({self.min_pairs}): nothing would fold")
        return self


class SystemPromptAssembly(_Stage):
    """Stage 5, system-prompt assembly: ``system_context`` appended to the system prompt as one more
    block, ``user_context`` sent as a first user message
    (``prependUserContext``); both byte-identical on every request, so the prefix stays cached."""

    system_context: dict[str, str] = Field(default_factory=dict)
    user_context: dict[str, str] = Field(default_factory=dict)


class Autocompact(_Stage):
    """Stage 6, autocompact: over ``threshold``, the model summarises the
    history before the newest ``keep_recent`` messages (the cut moved to a tool_use/tool_result pair
    boundary), with at most ``max_summary_tokens`` of output. After ``max_failures`` compactions in a row
    that fail or leave the context over the threshold, it stops for the run."""

    threshold: int | None = Field(default=None, ge=0)
    keep_recent: int = Field(default=4, ge=0)
    max_summary_tokens: int = Field(default=2048, ge=1)
    max_failures: int = Field(default=3, ge=1)
    custom_instructions: str | None = None


class BlockingLimit(_Stage):
    """Stage 7, blocking limit: over ``limit`` no request is sent and the run
    ends with Terminal ``blocking_limit``."""

    limit: int | None = Field(default=None, ge=1)


_STAGE_TYPES = {"tool_result_budget": ToolResultBudget, "snip": Snip, "microcompact": Microcompact,
                "context_collapse": ContextCollapse, "system_prompt": SystemPromptAssembly,
                "autocompact": Autocompact, "blocking_limit": BlockingLimit}


class ContextOptions(BaseModel):
    """The context pipeline's switches (``QueryParams.context``); every stage off unless given.

    A stage is switched on with its settings or with ``True`` (its defaults):
    ``ContextOptions(microcompact=True, autocompact=Autocompact(keep_recent=6))``.

    * ``context_window``: tokens; None = the model's own (``await model.context_window()``).
    * the seven stages, in pipeline order: ``tool_result_budget``, ``snip``,
      ``microcompact``, ``context_collapse``, ``system_prompt``, ``autocompact``,
      ``blocking_limit`` (see each class).
    * ``prompt_caching``: mark ``cache_control`` breakpoints on the last system
      block and the last message block of every request.
    * ``count_tokens``: ``"estimate"`` (``dreamloop.tokens``, incremental) or
      ``"api"`` (ask ``/v1/messages/count_tokens`` before the heavy stages decide).
    * ``keep_latest_request``: after any compaction (autocompact, the reactive one), the person's newest
      request, when it was summarised, is kept word for word right after the summary
      (``autocompact.latest_request``), and snip leaves that message whole so the kept text is the person's;
      False: only the summary's paraphrase of it remains, and snip trims it as any old text. On by default;
      dreamloop's choice (neither text says what becomes of the person's last words).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    context_window: int | None = Field(default=None, ge=1)
    tool_result_budget: ToolResultBudget | None = None
    snip: Snip | None = None
    microcompact: Microcompact | None = None
    context_collapse: ContextCollapse | None = None
    system_prompt: SystemPromptAssembly | None = None
    autocompact: Autocompact | None = None
    blocking_limit: BlockingLimit | None = None
    prompt_caching: bool = False
    count_tokens: Literal["estimate", "api"] = "estimate"
    keep_latest_request: bool = True

    @field_validator(*STAGES, mode="before")
    @classmethod
    def _true_means_defaults(cls, value: Any, info: Any) -> Any:
        if value is True:
            return _STAGE_TYPES[info.field_name]()
        if value is False:
            return None
        return value

    @classmethod
    def all_on(cls, **overrides: Any) -> "ContextOptions":
        """Every stage on with its defaults, and prompt caching (what ``dreamloop run`` uses)."""
        return cls(**{**{name: True for name in STAGES}, "prompt_caching": True, **overrides})

    def stages_on(self) -> list[str]:
        """The names of the stages switched on, in pipeline order."""
        return [name for name in STAGES if getattr(self, name) is not None]

    def thresholds(self, window: int) -> "Thresholds":
        """Every threshold in tokens for a ``window``-token context (a stage's own setting, else its fraction)."""
        def pick(value: int | None, fraction: str) -> int:
            return value if value is not None else int(window * FRACTIONS[fraction])

        budget, snip, micro = self.tool_result_budget, self.snip, self.microcompact
        collapse, compact, blocking = self.context_collapse, self.autocompact, self.blocking_limit
        return Thresholds(
            window=window,
            tool_result=pick(budget.max_result_tokens, "tool_result") if budget else None,
            snip=pick(snip.threshold, "snip") if snip else None,
            microcompact=pick(micro.threshold, "microcompact") if micro else None,
            microcompact_savings=pick(micro.min_savings, "microcompact_savings") if micro else None,
            collapse_stage=pick(collapse.stage_threshold, "collapse_stage") if collapse else None,
            context_collapse=pick(collapse.threshold, "context_collapse") if collapse else None,
            autocompact=pick(compact.threshold, "autocompact") if compact else None,
            blocking_limit=pick(blocking.limit, "blocking_limit") if blocking else None,
        )


@dataclass(frozen=True)
class Thresholds:
    """A run's resolved thresholds in tokens (None: that stage is off).

    ``tool_result`` is per result; ``microcompact_savings`` the smallest batch
    worth clearing; the others compare with the whole request's input tokens.
    """

    window: int
    tool_result: int | None = None
    snip: int | None = None
    microcompact: int | None = None
    microcompact_savings: int | None = None
    collapse_stage: int | None = None
    context_collapse: int | None = None
    autocompact: int | None = None
    blocking_limit: int | None = None

    def lines(self) -> dict[str, int]:
        """The thresholds a context meter draws: stage name → tokens, lowest first, then the window."""
        named = {"snip": self.snip, "microcompact": self.microcompact, "context_collapse": self.context_collapse,
                 "autocompact": self.autocompact, "blocking_limit": self.blocking_limit}
        shown = sorted(((v, k) for k, v in named.items() if v is not None))
        return {**{k: v for v, k in shown}, "window": self.window}


def stages_over(tokens: int, thresholds: Thresholds) -> list[str]:
    """The threshold-triggered stages whose threshold ``tokens`` exceeds, lightest first.

    A pure decision: ``stages_over(3000, ContextOptions(snip=True).thresholds(4000)) == ["snip"]``.
    Which of them then *change* something depends on the history (is there
    anything old and long to snip, a batch worth clearing, a fold staged?).
    """
    order = [("snip", thresholds.snip), ("microcompact", thresholds.microcompact),
             ("context_collapse", thresholds.context_collapse), ("autocompact", thresholds.autocompact),
             ("blocking_limit", thresholds.blocking_limit)]
    return [name for name, limit in order if limit is not None and tokens > limit]
