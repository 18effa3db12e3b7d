"""The grant choice: "always allow" this tool, in a scope the operator picks and reads in words.

Opened from the approval dialog (``g``). The operator picks the scope (this
run, its thread, its resource, or every run of the agent; a scope the run
does not have is not offered), the argument values to pin (``args_match``:
only calls with these values are covered) and how long (15 minutes, 1 hour,
8 hours, or until revoked, never by default). The exact rule is shown in words
(``describe_grant``, the wording of ``Grant.describe()``) and updates with each
choice. ``ctrl+s`` creates the grant, then approves this call; ``esc`` goes
back to the dialog. Errors (``GrantNotAllowed``, ``ApprovalExpired``) show inline.

For a shell tool (the policy's ``[commands].shell`` names its argument) the choice
offers each command's prefix ("always allow `git status`") instead of pinning the whole
line: the grant's ``command_match`` covers later calls made only of those commands. A
line holding a command that is never allowed unseen offers no prefix (only its exact
text can be pinned), since such a grant could never cover it.
"""

from __future__ import annotations

import shlex
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

from agent_core.policy_commands import segment_prefix
from agent_core.shell_segments import parse_shell
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
        self,
        scope: str,
        args_match: dict[str, Any] | None,
        expires_in: float | None,
        command_match: dict[str, Any] | None = None,
    ) -> GrantSpec:  # scope is one of offered()
        ids = {"run": self.run_id, "thread": self.thread_id, "resource": self.resource_id}
        return GrantSpec(
            scope=scope,  # type: ignore[arg-type]
            scope_id=ids.get(scope),
            agent_id=self.agent_id if scope == "agent" else None,
            args_match=args_match or None,
            expires_in=expires_in,
            command_match=command_match,
        )


def command_prefixes(text: Any) -> tuple[list[tuple[str, ...]], str | None]:
    """The prefixes a grant choice offers for a shell line (each command's, in order, once), or
    why none can be offered (a command in it is never allowed unseen)."""
    if not isinstance(text, str):
        return [], "the command is not a string"
    prefixes: list[tuple[str, ...]] = []
    for seg in parse_shell(text):
        if seg.unseen is not None:
            return [], seg.unseen
        prefix = segment_prefix(seg)
        if prefix and prefix not in prefixes:
            prefixes.append(prefix)
    return prefixes, None if prefixes else "the line runs no command"


def _prefix_label(prefix: tuple[str, ...]) -> Text:
    shown = shlex.join(prefix)
    if len(shown) > 60:
        shown = shown[:59] + "…"
    label = Text("always allow `")
    label.append_text(safe_text(shown, "bold", multiline=False))
    label.append("`")
    return label


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
        command_argument: str | None = None,
    ) -> None:
        super().__init__(call, submit, clock=clock, guard_seconds=guard_seconds)
        self.scopes = scopes
        self.offered = scopes.offered()
        #: the narrowest scope that outlives the run: its thread when it has one, else the run.
        self.scope = "thread" if scopes.thread_id else "run"
        self.pinned = set(call.args)  # every argument pinned unless the operator widens the rule
        self.duration = DEFAULT_DURATION
        #: a shell tool's argument holding the command line, and the commands' prefixes offered
        self.command_argument = command_argument if command_argument in call.args else None
        self.prefixes: list[tuple[str, ...]] = []
        self.no_prefix: str | None = None
        if self.command_argument is not None:
            self.prefixes, self.no_prefix = command_prefixes(call.args[self.command_argument])
            if self.prefixes:
                self.pinned.discard(self.command_argument)  # the prefixes say what may run, not the text
        self.granted = set(range(len(self.prefixes)))

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="grant-choice"):
            title = Text("Always allow ", style="bold")
            if self.prefixes:
                shown = " and ".join(f"`{shlex.join(p)}`" for p in self.prefixes)
                title.append_text(
                    safe_text(shown if len(shown) <= 60 else shown[:59] + "…", "bold yellow", multiline=False)
                )
                title.append(" in ", style="bold")
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
                if self.command_argument is not None:
                    with Vertical(id="grant-commands") as commands:
                        commands.border_title = "Commands that may run"
                        if not self.prefixes:
                            why = Text("No command prefix can be granted: ", style="dim")
                            why.append_text(safe_text(self.no_prefix or "", "dim", multiline=False))
                            yield Static(why)
                        for i, prefix in enumerate(self.prefixes):
                            yield Checkbox(_prefix_label(prefix), value=True, id=f"cmd-{i}", compact=True)
                with Vertical(id="grant-pins") as pins:
                    pins.border_title = "Arguments that must match"
                    if not self.call.args:
                        yield Static(Text("(the call has no arguments)", style="dim"))
                    for i, (name, value) in enumerate(self.call.args.items()):
                        yield Checkbox(_pin_label(name, value), value=name in self.pinned, id=f"pin-{i}", compact=True)
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
        command_match = None
        chosen = [list(p) for i, p in enumerate(self.prefixes) if i in self.granted]
        if self.command_argument is not None and chosen:
            command_match = {"argument": self.command_argument, "prefixes": chosen}
        return self.scopes.spec(self.scope, match, DURATIONS[self.duration][1], command_match)

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
        box = event.checkbox.id or "pin-0"
        if box.startswith("cmd-"):
            index = int(box.removeprefix("cmd-"))
            if event.value:
                self.granted.add(index)
            else:
                self.granted.discard(index)
            self._update_rule()
            return
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
