"""AskPrompt: the notebook's answer to a permission ``Ask``, with Allow and Deny buttons.

Owns the ``ask`` callback of ``QueryParams(ask=...)`` (``async ask(tool,
input, reason) -> Allow | Deny``): it shows the question, waits on a Future
that the buttons resolve (hopping onto the event loop with
``call_soon_threadsafe``), and under the notebook targets (nobody clicks)
answers itself and says so. It knows nothing about which calls need asking:
that is ``tools/permissions.py``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, Literal

import ipywidgets as W

from ..language import tr, tr_formatted
from ..tools.permissions import ASK_REASONS, Allow, Deny
from .html import badge, esc, pane, pretty_json
from .kernel import warn_if_old_kernel
from .static import StaticHTML

__all__ = ["AUTO_ANSWER_ENV", "AskPrompt"]

AUTO_ANSWER_ENV = "DREAMLOOP_AUTO_ANSWER"
"""Set to ``1``, ``allow`` or ``deny`` (the notebook targets do) to make every prompt answer itself."""

Answer = Literal["allow", "deny"]


class AskPrompt(StaticHTML, W.VBox):
    """Allow / Deny buttons that answer the loop's permission questions: ``QueryParams(ask=prompt)``.

    The prompt is the callback itself: ``await prompt(tool, input, reason)``
    shows the question (tool name, input as JSON, reason), enables
    ``allow_button`` / ``deny_button`` and returns ``Allow()`` or ``Deny(reason)``
    when one is clicked. Run the loop awaited at the top level of the cell
    (ipykernel >= 7.4), so clicks are handled while the cell runs.

    Answering itself (nobody clicks under nbval/CI): only when the
    environment variable ``DREAMLOOP_AUTO_ANSWER`` is set (the notebook
    targets of the Makefile set it). Its value ``allow`` or ``deny`` answers
    so; any other non-empty value (``1``) takes the prompt's scripted answer
    ``auto`` (``"allow"`` or ``"deny"``; None: allow). Without the variable,
    in JupyterLab, a person clicks.

    An automatic answer is shown in the widget (``auto-answered: allow``).
    ``timeout`` (seconds, None: wait for ever) turns silence into
    ``Deny("no answer within N s")``. ``answers`` lists ``(tool name,
    "allow" | "deny")`` in order, for printing.
    """

    def __init__(self, auto: Answer | None = None, *, timeout: float | None = None) -> None:
        if auto not in (None, "allow", "deny"):
            raise ValueError(f"auto must be 'allow', 'deny' or None, not {auto!r}")
        warn_if_old_kernel()
        self.auto = auto
        self.timeout = timeout
        self.answers: list[tuple[str, str]] = []
        self.question = W.HTML(pane(f'<span class="dl-dim">{esc(tr("No question yet."))}</span>'))
        self.allow_button = W.Button(description=tr("Allow"), button_style="success", icon="check", disabled=True)
        self.deny_button = W.Button(description=tr("Deny"), button_style="danger", icon="times", disabled=True)
        self.allow_button.add_class("dreamloop-allow")
        self.deny_button.add_class("dreamloop-deny")
        self.status = W.HTML()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: asyncio.Future[str] | None = None
        self.allow_button.on_click(lambda _b: self._clicked("allow"))
        self.deny_button.on_click(lambda _b: self._clicked("deny"))
        super().__init__(children=[self.question, W.HBox([self.allow_button, self.deny_button, self.status])])
        self.add_class("dreamloop-ask")

    @property
    def auto_answer(self) -> Answer | None:
        """The answer given without asking (the environment, then ``auto``), or None: a person decides."""
        value = os.environ.get(AUTO_ANSWER_ENV, "").strip().lower()
        if not value or value in ("0", "false", "no"):
            return None
        if value in ("allow", "deny"):
            return value  # type: ignore[return-value]
        return self.auto or "allow"

    async def __call__(self, tool: Any, input: dict[str, Any], reason: str) -> Allow | Deny:
        """Ask about one call (the ``AskUser`` shape); returns ``Allow()`` or ``Deny(reason)``."""
        name = getattr(tool, "name", str(tool))
        self.question.value = _question_html(name, input, reason)
        auto = self.auto_answer
        if auto is not None:
            return self._answered(name, auto, tr("auto-answered: {answer}", answer=auto), auto=True)
        self._loop = asyncio.get_running_loop()
        self._pending = self._loop.create_future()
        self.allow_button.disabled = self.deny_button.disabled = False
        self.status.value = _status(tr("waiting for your answer…"), "system")
        try:
            if self.timeout is None:
                choice = await self._pending
            else:
                choice = await asyncio.wait_for(self._pending, self.timeout)
        except TimeoutError:
            return self._answered(name, "deny", tr("no answer within {seconds:g} s: denied", seconds=self.timeout),
                                  why=f"no answer within {self.timeout:g} s")
        except asyncio.CancelledError:
            self.status.value = _status(tr("cancelled (the run was stopped)"), "thinking")
            raise
        finally:
            self._pending = None
            self.allow_button.disabled = self.deny_button.disabled = True
        return self._answered(name, choice, tr("allowed") if choice == "allow" else tr("denied"))

    def __repr__(self) -> str:
        return "AskPrompt()"

    def static_html(self) -> str:
        """The last question, its answer, and every answer so far."""
        answered = "".join(f"<li>{esc(name)}: {esc(choice)}</li>" for name, choice in self.answers)
        answers = (f'<div style="font-size:12px">{esc(tr("answers:"))} <ul style="margin:0">{answered}</ul></div>'
                   if answered else "")
        return self.question.value + self.status.value + answers

    # -- parts --------------------------------------------------------------

    def _clicked(self, choice: str) -> None:
        # A click may arrive on another thread (ipykernel 7.0–7.3 subshells): resolve on the loop.
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._decide, choice)

    def _decide(self, choice: str) -> None:
        if self._pending is not None and not self._pending.done():
            self._pending.set_result(choice)

    def _answered(self, name: str, choice: str, label: str, *, auto: bool = False,
                  why: str | None = None) -> Allow | Deny:
        self.answers.append((name, choice))
        self.status.value = _status(label, "assistant" if choice == "allow" else "error")
        self.refresh_static()
        if choice == "allow":
            return Allow()
        if why is None:
            why = "the auto-answer was deny" if auto else "the person clicked Deny"
        return Deny(f"Permission to use {name} was denied ({why}).")


def _question_html(name: str, input: dict[str, Any], reason: str) -> str:
    question = esc(tr("Allow {tool}?", tool="\0")).replace("\0", f'<b class="dl-mono">{esc(name)}</b>')
    return pane(f'<div class="dl-m dl-m-system">{badge(tr("permission"), "system", filled=True)}'
                f'{question} <span class="dl-dim">{esc(tr_formatted(reason, ASK_REASONS.values()))}</span>'
                f'<pre class="dl-pre">{esc(pretty_json(input))}</pre></div>')


def _status(text: str, kind: str) -> str:
    return pane(f'<span class="dl-c-{kind}" style="padding-left:8px">{esc(text)}</span>')
