"""The approval dialog: what is about to run, exactly, and a deliberate decision."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Input, Static

from tui import keymap
from tui.backend import PendingCall
from tui.screens.base import WardenModal
from tui.untrusted import json_text, safe_text, scan, summarize


@dataclass(frozen=True)
class ApprovalDecision:
    action: Literal["approve", "decline", "leave"]
    call: PendingCall
    fingerprint: str | None = None
    reason: str | None = None


def _field(label: str, value: Text) -> Text:
    return Text.assemble(Text(f"{label:<12}", style="bold"), value)


class ApprovalModal(WardenModal[ApprovalDecision]):
    """``y`` approves with the fingerprint shown, ``n`` declines (then a reason), ``esc`` leaves it pending.

    Deny has the initial focus, and keys/buttons are ignored for ``guard_seconds`` after the
    dialog opens, so typeahead meant for the prompt cannot approve anything.
    """

    BINDINGS = keymap.APPROVAL
    AUTO_FOCUS = "#deny"

    def __init__(
        self, call: PendingCall, *, guard_seconds: float = 0.3, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.call = call
        self.guard_seconds = guard_seconds
        self.clock = clock
        self.opened_at = clock()
        self.findings = scan({"tool": call.tool_name, "args": call.args, "agent_path": list(call.agent_path)})
        self.declining = False
        #: The call was decided elsewhere: this dialog closes (now, or when it is on top again).
        self.stale = False

    def compose(self) -> ComposeResult:
        call = self.call
        with Vertical(id="dialog", classes="approval"):
            yield Static(Text("Approval needed", style="bold"), id="dialog-title")
            path = Text(" > ".join(call.agent_path) or "—")
            yield Static(_field("Agent path", safe_text(path.plain, multiline=False)), id="agent-path")
            yield Static(_field("Tool", safe_text(call.tool_name, "bold yellow", multiline=False)), id="tool-name")
            yield Static(_field("Run", Text(f"{call.run_id}  call {call.tool_call_id}")), id="run-id")
            if self.findings:
                yield Static(Text("⚠ " + summarize(self.findings), style="bold red"), id="hidden-warning")
            with VerticalScroll(id="args-scroll"):
                yield Static(json_text(call.args), id="args")
            yield Static(_field("Fingerprint", Text(call.fingerprint or "—", style="green")), id="fingerprint")
            yield Input(
                placeholder="Reason for declining (optional) — enter to decline, esc to cancel",
                id="reason",
                classes="hidden",
            )
            with Horizontal(id="buttons"):
                yield Button(Content("Deny  [n]"), id="deny", variant="error")
                yield Button(Content("Approve  [y]"), id="approve", variant="success")
        yield Footer()

    def on_mount(self) -> None:
        self.apply_cursor_blink()
        self.opened_at = self.clock()

    def close_as_decided_elsewhere(self) -> bool:
        """Close without deciding (as ``esc``): another process decided the call. True the first time."""
        if self.stale:
            return False
        self.stale = True
        if self.is_active:
            self.dismiss(ApprovalDecision("leave", self.call))
        return True

    def on_screen_resume(self) -> None:
        if self.stale:  # it was under another screen (help, an error) when the call went away
            self.dismiss(ApprovalDecision("leave", self.call))

    @property
    def guarded(self) -> bool:
        return self.clock() - self.opened_at < self.guard_seconds

    def action_approve(self) -> None:
        if self.guarded or self.declining or self.stale:
            return
        self.dismiss(ApprovalDecision("approve", self.call, fingerprint=self.call.fingerprint))

    def action_decline(self) -> None:
        if self.guarded or self.declining or self.stale:
            return
        self.declining = True
        reason = self.query_one("#reason", Input)
        reason.remove_class("hidden")
        self.query_one("#deny", Button).label = Content("Decline  [enter]")
        self.query_one("#approve", Button).disabled = True
        reason.focus()

    def action_leave(self) -> None:
        self.dismiss(ApprovalDecision("leave", self.call))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.declining:
            self.dismiss(ApprovalDecision("decline", self.call, reason=event.value.strip() or None))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "approve":
            self.action_approve()
        elif self.declining:
            self.dismiss(
                ApprovalDecision("decline", self.call, reason=self.query_one("#reason", Input).value.strip() or None)
            )
        else:
            self.action_decline()
