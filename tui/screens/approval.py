"""The approval dialog: what is about to run, exactly, the context to judge it, and a deliberate decision.

Layout (fits 80x24 and up): the context lines, the arguments (the only part
that scrolls, with a cue when more is below), the fingerprint, the reason
field when declining, and the buttons: these are always visible.

Keys: ``y`` approves, ``n`` declines (then a reason, ``enter`` confirms, ``esc``
goes back to the choice), ``e`` edits the arguments then approves with them
(``tui.screens.edit_args``), ``g`` opens the grant choice ("always allow", then
approve: ``tui.screens.grant_choice``), ``esc`` leaves the call pending. A call
with a deadline shows its time left (a warning under a minute). No key acts while
the operator is typing: ``tui.typing_guard`` (applied by the app) sends a
burst of keys, or a key right after the dialog opened, back to the prompt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Input, Static

from tui import keymap
from tui.backend import GrantSpec, PendingCall
from tui.deadlines import time_left_text
from tui.formatting import format_age
from tui.screens.base import WardenModal
from tui.untrusted import escape_unsafe, json_text, safe_text, scan, summarize

if TYPE_CHECKING:  # pydantic models: the dialog (and the picker's preview) opens without importing them
    from agent_core.decision_context import CallContext, RunContextView

#: Attempts to read the context of a call whose snapshot is still being written (live streams).
CONTEXT_ATTEMPTS = 10


@dataclass(frozen=True)
class ApprovalDecision:
    action: Literal["approve", "decline", "leave"]
    call: PendingCall
    fingerprint: str | None = None
    reason: str | None = None
    #: the call was already approved from a sub-screen (edit, grant): the stream to consume.
    stream: Any = None
    #: the edited arguments it was approved with (``e``).
    args: dict[str, Any] | None = None
    #: the rule in words of the grant created with it (``g``).
    grant_rule: str | None = None


def _field(label: str, value: Text) -> Text:
    return Text.assemble(Text(f"{label:<12}", style="bold"), value)


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def context_lines(call: PendingCall, ctx: CallContext | None, now: datetime | None = None) -> Text:
    """Tool (and its description), agent path/thread/resource, the request and the model's text."""
    out = Text(end="")
    tool = safe_text(call.tool_name, "bold yellow", multiline=False)
    if ctx is not None and ctx.tool_description:
        tool.append("  ")
        tool.append_text(safe_text(_one_line(ctx.tool_description, 200), "dim", multiline=False))
    out.append_text(_field("Tool", tool))
    where = safe_text(" › ".join(call.agent_path) or "—", multiline=False)
    if ctx is not None:
        for label, value in (("thread", ctx.thread_id), ("resource", ctx.resource_id)):
            if value:
                where.append(f" · {label} ", style="dim")
                where.append_text(safe_text(value, multiline=False))
    out.append("\n")
    out.append_text(_field("Agent", where))
    if ctx is None:
        return out
    if ctx.request:
        out.append("\n")
        out.append_text(_field("Request", safe_text(_one_line(ctx.request), "italic", multiline=False)))
    if ctx.delegated_prompt:
        out.append("\n")
        out.append_text(_field("Delegated", safe_text(_one_line(ctx.delegated_prompt), multiline=False)))
    if ctx.model_text.strip():
        out.append("\n")
        out.append_text(_field("Model said", safe_text(_one_line(ctx.model_text), multiline=False)))
    if ctx.policy_line:  # the rule text comes from the policy file, still shown as plain text
        out.append("\n")
        out.append_text(_field("Policy", safe_text(_one_line(ctx.policy_line, 200), "yellow", multiline=False)))
    if ctx.quorum_line:  # four eyes: the votes so far (actor names are untrusted text too)
        out.append("\n")
        out.append_text(_field("Approvals", safe_text(_one_line(ctx.quorum_line, 200), "bold", multiline=False)))
    return out


def title_text(ctx: CallContext | None, now: datetime | None) -> Text:
    title = Text("Approval needed", style="bold")
    if ctx is not None:
        if ctx.of > 1:
            title.append(f" · call {ctx.position} of {ctx.of} in this step", style="bold yellow")
        if ctx.pending_since and now is not None:
            title.append(f" · waiting {format_age(now.timestamp() - ctx.pending_since)}", style="dim")
    return title


def step_line(ctx: CallContext | None) -> Text | None:
    """The other calls of the step and where they stand."""
    if ctx is None or ctx.of < 2:
        return None
    out = Text("Also        ", style="bold")
    others = [(i, c) for i, c in enumerate(ctx.step_calls, 1) if c.tool_call_id != ctx.tool_call_id]
    for n, (i, c) in enumerate(others):
        if n:
            out.append(" · ", style="dim")
        out.append(f"{i}. ")
        out.append_text(safe_text(c.tool_name, "bold", multiline=False))
        out.append(f" ({c.state})", style="dim")
    return out


class ApprovalModal(WardenModal[ApprovalDecision]):
    """``y`` approves with the fingerprint shown, ``n`` declines (then a reason), ``esc`` leaves it pending.

    No button takes the keyboard focus (space or enter typed for the prompt press nothing), and
    keys/buttons are ignored for ``guard_seconds`` after the dialog opens; the app bounces bursts
    of typing, and typing keys the dialog does not bind, back to the prompt.
    """

    BINDINGS = keymap.APPROVAL
    #: The arguments have the focus (arrows and pgdn scroll them); buttons answer the mouse and the
    #: keyboard decides with y / n only, so a space or an enter typed for the prompt never presses a
    #: button (the app bounces them to the prompt).
    AUTO_FOCUS = "#args-scroll"

    def __init__(
        self,
        call: PendingCall,
        *,
        guard_seconds: float = 0.3,
        clock: Callable[[], float] = time.monotonic,
        declining: bool = False,
        actor: str | None = None,
        context: CallContext | None = None,
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.call = call
        self.guard_seconds = guard_seconds
        self.clock = clock
        self.opened_at = clock()
        self.actor = actor
        self.findings = scan({"tool": call.tool_name, "args": call.args, "agent_path": list(call.agent_path)})
        self.declining = False
        self._start_declining = declining
        #: The call was decided elsewhere: this dialog closes (now, or when it is on top again).
        self.stale = False
        #: A key of a burst of typing closed this dialog (``tui.typing_guard``).
        self.bounced = False
        self.context: CallContext | None = context
        self.context_loaded = context is not None

    def compose(self) -> ComposeResult:
        call = self.call
        now = self._now()
        with Vertical(id="dialog", classes="approval"):
            yield Static(title_text(self.context, now), id="dialog-title")
            left = time_left_text(call.expires_at, now) if now is not None else None
            yield Static(
                _field("Expires", left) if left is not None else "",
                id="deadline",
                classes="" if left is not None else "hidden",
            )
            yield Static(context_lines(call, self.context, now), id="context")
            if self.findings:
                yield Static(Text("⚠ " + summarize(self.findings), style="bold red"), id="hidden-warning")
            with VerticalScroll(id="args-scroll") as scroll:
                scroll.border_title = "Arguments"
                yield Static(json_text(call.args), id="args")
            yield Static(step_line(self.context) or "", id="step-calls", classes="" if self.context else "hidden")
            run = Text(call.run_id, style="dim")
            run.append("  call ", style="dim")
            run.append_text(safe_text(call.tool_call_id, "dim", multiline=False))
            yield Static(_field("Run", run), id="run-id")
            yield Static(_field("Fingerprint", Text(call.fingerprint or "—", style="green")), id="fingerprint")
            reason = Input(
                placeholder="Reason for declining (optional, the model sees it)", id="reason", classes="hidden"
            )
            reason.can_focus = False  # until declining
            yield reason
            yield Static(
                Text("enter: decline with this reason · esc: back to the choice", style="dim"),
                id="reason-help",
                classes="hidden",
            )
            with Horizontal(id="buttons"):
                yield Button(Content("Leave pending  [esc]"), id="leave", compact=True)
                yield Button(Content("Deny  [n]"), id="deny", variant="error", compact=True)
                yield Button(Content("Edit [e]"), id="edit", compact=True)
                yield Button(Content("Grant… [g]"), id="grant", compact=True)
                yield Button(Content("Approve  [y]"), id="approve", variant="success", compact=True)
        yield Footer()

    def _now(self) -> datetime | None:
        try:
            return self.warden_app.now()
        except Exception:  # not mounted in a WardenApp
            return None

    def on_mount(self) -> None:
        self.apply_cursor_blink()
        self.opened_at = self.clock()
        for button in self.query(Button):
            button.can_focus = False
        found = self.query("#args-scroll")
        if not found:  # taken down before its mount was handled: the app is closing
            return
        scroll = found.first(VerticalScroll)
        self.watch(scroll, "scroll_y", lambda _: self._update_more_cue(), init=False)
        self.call_after_refresh(self._fit)
        if self._start_declining:
            self._enter_decline_mode()
        if self.context is None:
            self.load_context()
        if self.call.expires_at is not None:
            self.set_interval(1.0, self.update_deadline, name="deadline")

    def update_deadline(self) -> None:
        """The time left, every second (a warning style under a minute)."""
        now = self._now()
        if not self.is_attached or now is None or self.call.expires_at is None:
            return
        left = time_left_text(self.call.expires_at, now)
        if left is not None:
            self.query_one("#deadline", Static).update(_field("Expires", left))

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Give the arguments what the terminal leaves after everything that must stay visible."""
        if not self.is_attached or not self.query("#args"):
            return
        self.fit_scroll("#dialog", "#args-scroll", self.query_one("#args", Static).outer_size.height)
        self.call_after_refresh(self._update_more_cue)

    def _update_more_cue(self) -> None:
        found = self.query("#args-scroll")
        if not self.is_attached or not found:  # closed meanwhile (a bounced key, a decision)
            return
        scroll = found.first(VerticalScroll)
        below = int(scroll.max_scroll_y - scroll.scroll_y)
        scroll.border_subtitle = f"▼ {below} more line(s) · pgdn/pgup" if below > 0 else ""

    @work(exclusive=True, group="approval-context", exit_on_error=False)
    async def load_context(self) -> None:
        """Read the call's context from the stored run (the snapshot may lag a live stream a moment)."""
        import asyncio

        for attempt in range(CONTEXT_ATTEMPTS):
            try:
                ctx: RunContextView = await self.backend.run_context(self.call.run_id)
            except Exception:  # a context is a help, never a reason to fail the dialog
                return
            found = ctx.calls.get(self.call.tool_call_id)
            if found is not None:
                self.set_context(found)
                return
            await asyncio.sleep(0.05 * (attempt + 1))

    def set_context(self, ctx: CallContext) -> None:
        if not self.is_attached:
            return
        self.context = ctx
        self.context_loaded = True
        now = self._now()
        self.query_one("#dialog-title", Static).update(title_text(ctx, now))
        self.query_one("#context", Static).update(context_lines(self.call, ctx, now))
        step = step_line(ctx)
        widget = self.query_one("#step-calls", Static)
        widget.update(step or "")
        widget.set_class(step is None, "hidden")
        self.call_after_refresh(self._fit)

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
        self._enter_decline_mode()

    # -- edit, then approve (e) / always allow (g) ------------------------------------------------
    def action_edit_args(self) -> None:
        if self.guarded or self.declining or self.stale:
            return
        from tui.screens.edit_args import EditArgsModal

        edited: dict[str, dict[str, Any]] = {}

        async def submit(args: dict[str, Any]) -> Any:
            stream = await self.backend.approve(
                self.call.run_id, self.call.tool_call_id, self.call.fingerprint, args=args
            )
            edited["args"] = args
            return stream

        def closed(stream: Any) -> None:
            if stream is not None and not self.stale:
                self.dismiss(ApprovalDecision("approve", self.call, stream=stream, args=edited.get("args")))

        self.app.push_screen(
            EditArgsModal(self.call, submit, clock=self.clock, guard_seconds=self.guard_seconds), closed
        )

    def action_grant(self) -> None:
        if self.guarded or self.declining or self.stale:
            return
        if not self.backend.grants_allowed(self.call.tool_name):
            tool = escape_unsafe(self.call.tool_name, multiline=False)  # untrusted, and not markup
            self.notify(
                f"{tool} was created with allow_grants=False: grants are not allowed for this "
                "tool; decide this call with y or n.",
                title="No grants for this tool",
                severity="warning",
                markup=False,
            )
            return
        from tui.screens.grant_choice import GrantChoiceModal, Scopes

        ctx = self.context
        scopes = Scopes(
            run_id=self.call.run_id,
            thread_id=ctx.thread_id if ctx is not None else None,
            resource_id=ctx.resource_id if ctx is not None else None,
            agent_id=self.call.agent_path[0] if self.call.agent_path else None,
        )
        chosen: dict[str, str] = {}

        async def submit(spec: GrantSpec) -> Any:
            call = self.call
            grant = await self.backend.grant(call.tool_name, spec)
            try:
                stream = await self.backend.approve(call.run_id, call.tool_call_id, call.fingerprint)
            except BaseException:
                await self.backend.revoke_grant(grant.id)  # both or neither: the call could not be approved
                raise
            chosen["rule"] = spec.describe(call.tool_name)
            return stream

        def closed(stream: Any) -> None:
            if stream is not None and not self.stale:
                self.dismiss(ApprovalDecision("approve", self.call, stream=stream, grant_rule=chosen.get("rule")))

        self.app.push_screen(
            GrantChoiceModal(
                self.call,
                scopes,
                submit,
                clock=self.clock,
                guard_seconds=self.guard_seconds,
                command_argument=self.backend.command_argument(self.call.tool_name),
            ),
            closed,
        )

    def _enter_decline_mode(self) -> None:
        self.declining = True
        reason = self.query_one("#reason", Input)
        reason.can_focus = True
        reason.remove_class("hidden")
        self.query_one("#reason-help").remove_class("hidden")
        self.query_one("#deny", Button).label = Content("Decline  [enter]")
        self.query_one("#deny", Button).refresh(layout=True)
        self.query_one("#leave", Button).label = Content("Back  [esc]")
        self.query_one("#approve", Button).disabled = True
        for button_id in ("#edit", "#grant"):  # room for the reason's buttons at 80 columns
            self.query_one(button_id, Button).add_class("hidden")
        self.refresh_bindings()
        self.call_after_refresh(self._fit)
        reason.focus()

    def _leave_decline_mode(self) -> None:
        self.declining = False
        reason = self.query_one("#reason", Input)
        reason.add_class("hidden")
        reason.can_focus = False
        self.query_one("#reason-help").add_class("hidden")
        self.query_one("#deny", Button).label = Content("Deny  [n]")
        self.query_one("#leave", Button).label = Content("Leave pending  [esc]")
        self.query_one("#approve", Button).disabled = False
        for button_id in ("#edit", "#grant"):
            self.query_one(button_id, Button).remove_class("hidden")
        self.refresh_bindings()
        self.call_after_refresh(self._fit)
        self.query_one("#args-scroll").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While declining the footer shows what enter and esc do; otherwise y / n / esc."""
        if action in ("confirm_decline", "back"):
            return self.declining
        if action in ("approve", "decline", "leave", "edit_args", "grant"):
            return not self.declining
        return True

    def action_leave(self) -> None:
        self.dismiss(ApprovalDecision("leave", self.call))

    def action_back(self) -> None:
        if self.declining:
            self._leave_decline_mode()

    def action_confirm_decline(self) -> None:
        if self.declining and not self.stale:
            self._decline_now()

    def action_scroll_args(self, pages: int) -> None:
        scroll = self.query_one("#args-scroll", VerticalScroll)
        scroll.scroll_relative(y=pages * max(1, scroll.size.height - 1), animate=False)

    def _decline_now(self) -> None:
        reason = self.query_one("#reason", Input).value.strip() or None
        self.dismiss(ApprovalDecision("decline", self.call, reason=reason))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.declining and not self.stale:
            self._decline_now()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "approve":
            self.action_approve()
        elif event.button.id == "edit":
            self.action_edit_args()
        elif event.button.id == "grant":
            self.action_grant()
        elif event.button.id == "leave":
            self.action_leave()
        elif self.declining:
            if not self.stale:
                self._decline_now()
        else:
            self.action_decline()
