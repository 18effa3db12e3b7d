"""The grant choice: "always allow" this tool, in a scope the operator picks and reads in words.

Opened from the approval dialog (``g``). The operator picks the scope (this
run, its thread, its resource, or every run of the agent; a scope the run
does not have is not offered), the argument values to pin (``args_match``:
only calls with these values are covered) and how long (15 minutes, 1 hour,
8 hours, or until revoked, never by default). The exact rule is shown in words
(``describe_grant``, the wording of ``Grant.describe()``) and updates with each
choice. ``ctrl+s`` creates the grant, then approves this call; ``esc`` goes
back to the dialog. Errors (``GrantNotAllowed``, ``ApprovalExpired``) show inline.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Checkbox, Footer, RadioButton, RadioSet, Static

from tui import keymap
from tui.backend import GrantSpec, PendingCall
from tui.screens.submit_once import SubmitOnceModal
from tui.untrusted import safe_text, to_json

Submit = Callable[[GrantSpec], Awaitable[Any]]

#: (label, seconds) of the duration choice; None: until revoked (an explicit choice, never the default).
DURATIONS: list[tuple[str, float | None]] = [
    ("15 minutes", 15 * 60),
    ("1 hour", 3600),
    ("8 hours", 8 * 3600),
    ("until revoked", None),
]
DEFAULT_DURATION = 1


@dataclass(frozen=True)
class Scopes:
    """The ids the call's run has: each one is a scope that can be offered."""

    run_id: str
    thread_id: str | None = None
    resource_id: str | None = None
    agent_id: str | None = None

    def offered(self) -> list[tuple[str, str]]:
        """(scope, label) for each scope this run has, narrowest first."""
        out = [("run", f"this run ({self.run_id})")]
        if self.thread_id:
            out.append(("thread", f"thread {self.thread_id}"))
        if self.resource_id:
            out.append(("resource", f"resource {self.resource_id}"))
        if self.agent_id:
            out.append(("agent", f"every run of agent {self.agent_id}"))
        return out

    def spec(
        self, scope: str, args_match: dict[str, Any] | None, expires_in: float | None
    ) -> GrantSpec:  # scope is one of offered()
        ids = {"run": self.run_id, "thread": self.thread_id, "resource": self.resource_id}
        return GrantSpec(
            scope=scope,  # type: ignore[arg-type]
            scope_id=ids.get(scope),
            agent_id=self.agent_id if scope == "agent" else None,
            args_match=args_match or None,
            expires_in=expires_in,
        )


def _pin_label(name: str, value: Any) -> Text:
    shown = value if isinstance(value, str) else to_json(value, indent=None)
    if len(shown) > 60:
        shown = shown[:59] + "…"
    label = Text("pin ")
    label.append_text(safe_text(name, "bold", multiline=False))
    label.append(" = ")
    label.append_text(safe_text(shown, multiline=False))
    return label


class GrantChoiceModal(SubmitOnceModal):
    """Dismisses with what ``submit`` returned (the approved stream) or ``None`` (back, nothing created)."""

    BINDINGS = keymap.GRANT_CHOICE
    SUBMIT_ID = "confirm"

    def __init__(
        self,
        call: PendingCall,
        scopes: Scopes,
        submit: Submit,
        *,
        clock: Callable[[], float] = time.monotonic,
        guard_seconds: float = 0.3,
    ) -> None:
        super().__init__(call, submit, clock=clock, guard_seconds=guard_seconds)
        self.scopes = scopes
        self.offered = scopes.offered()
        #: the narrowest scope that outlives the run: its thread when it has one, else the run.
        self.scope = "thread" if scopes.thread_id else "run"
        self.pinned = set(call.args)  # every argument pinned unless the operator widens the rule
        self.duration = DEFAULT_DURATION

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="grant-choice"):
            title = Text("Always allow ", style="bold")
            title.append_text(safe_text(self.call.tool_name, "bold yellow", multiline=False))
            title.append(" (a grant)", style="bold")
            yield Static(title, id="dialog-title")
            with VerticalScroll(id="grant-options"):
                with Horizontal(id="grant-columns"):
                    with RadioSet(id="grant-scope") as scopes:
                        scopes.border_title = "Scope"
                        for scope, label in self.offered:
                            yield RadioButton(
                                safe_text(label, multiline=False), value=scope == self.scope, id=f"scope-{scope}"
                            )
                    with RadioSet(id="grant-duration") as durations:
                        durations.border_title = "For"
                        for i, (label, _) in enumerate(DURATIONS):
                            yield RadioButton(label, value=i == self.duration, id=f"duration-{i}")
                with Vertical(id="grant-pins") as pins:
                    pins.border_title = "Arguments that must match"
                    if not self.call.args:
                        yield Static(Text("(the call has no arguments)", style="dim"))
                    for i, (name, value) in enumerate(self.call.args.items()):
                        yield Checkbox(_pin_label(name, value), value=True, id=f"pin-{i}", compact=True)
            yield Static(self.rule_text(), id="grant-rule")
            yield Static("", id="grant-error", classes="field-error")
            with Horizontal(id="buttons"):
                yield Button(Content("Back  [esc]"), id="back", compact=True)
                yield Button(Content("Grant and approve  [ctrl+s]"), id="confirm", variant="warning", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.opened_at = self.clock()
        for button in self.query(Button):
            button.can_focus = False  # ctrl+s decides; space and enter only toggle choices
        self.query_one("#grant-scope", RadioSet).focus()

    # -- the choice ------------------------------------------------------------------------------
    def spec(self) -> GrantSpec:
        names = list(self.call.args)
        match = {n: self.call.args[n] for n in names if n in self.pinned}
        return self.scopes.spec(self.scope, match, DURATIONS[self.duration][1])

    def rule(self) -> str:
        return self.spec().describe(self.call.tool_name)

    def rule_text(self) -> Text:
        out = Text("Rule: ", style="bold")
        out.append_text(safe_text(self.rule(), "bold yellow"))
        out.append("\nThis call is approved too. f4 lists grants and revokes them.", style="dim")
        return out

    def _update_rule(self) -> None:
        self.query_one("#grant-rule", Static).update(self.rule_text())

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        button_id = event.pressed.id or ""
        if event.radio_set.id == "grant-scope":
            self.scope = button_id.removeprefix("scope-")
        elif event.radio_set.id == "grant-duration":
            self.duration = int(button_id.removeprefix("duration-"))
        self._update_rule()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        names = list(self.call.args)
        name = names[int((event.checkbox.id or "pin-0").removeprefix("pin-"))]
        if event.value:
            self.pinned.add(name)
        else:
            self.pinned.discard(name)
        self._update_rule()

    # -- confirming ------------------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        self.query_one("#grant-error", Static).update(safe_text("✗ " + message, "bold red") if message else "")

    def action_confirm(self) -> None:
        self.action_submit()

    def action_submit(self) -> None:
        if not self.may_submit():
            return
        self.submitting = True
        self.show_error("")
        self._submit(self.spec())

    @work(exclusive=True, group="grant-choice")
    async def _submit(self, spec: GrantSpec) -> None:
        await self.send(spec)
