"""The input form of a suspended tool, generated from its ``resume_schema`` (JSON Schema).

Fields: string, integer, number (Input), boolean (Switch), enum (Select), with
defaults, descriptions and required marks. The runtime validates the data
before it resumes anything; its per-field errors are shown inline under each
field and the call stays pending until a submission is accepted.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Footer, Input, Select, Static, Switch

from agent_core.errors import WardenError

# The schema-to-form rules are shared with the browser UI.
from agent_core.resume_fields import MISSING as _MISSING
from agent_core.resume_fields import FormField, coerce, errors_by_field, fields_from_schema, placeholder_of
from tui import keymap
from tui.backend import PendingCall
from tui.screens.base import WardenModal
from tui.untrusted import json_text, safe_text, scan, summarize


def question_of(payload: Any) -> Text:
    """The tool's question: a ``question``/``message``/``prompt`` string, else the payload as JSON."""
    if isinstance(payload, dict):
        for key in ("question", "message", "prompt", "reason"):
            if isinstance(payload.get(key), str):
                return safe_text(payload[key], "bold")
    if isinstance(payload, str):
        return safe_text(payload, "bold")
    if payload is None:
        return Text("The tool needs more data.", style="bold")
    return json_text(payload)


Submit = Callable[[dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class FormDecline:
    """The operator declined the call from its form (the tool gets no data; the model gets the reason)."""

    reason: str | None = None


class ResumeFormModal(WardenModal[Any]):
    """Dismisses with what ``submit`` returned (the resumed stream) or ``None`` (left pending)."""

    BINDINGS = keymap.RESUME_FORM

    def __init__(self, call: PendingCall, submit: Submit, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(classes="dialog-screen")
        self.clock = clock
        self.opened_at = clock()
        #: A key of a burst of typing closed this form (``tui.typing_guard``).
        self.bounced = False
        self.declining = False
        self.call = call
        self.submit = submit
        self.fields = fields_from_schema(call.resume_schema)
        #: A submission of this form is in flight, or was accepted: the call is ours, not stale.
        self.submitting = False
        self.submitted = False
        #: The call was decided elsewhere: this form closes (now, or when it is on top again).
        self.stale = False

    def compose(self) -> ComposeResult:
        call = self.call
        with Vertical(id="dialog", classes="resume-form"):
            title = Text("Input needed: ", style="bold")
            title.append_text(safe_text(call.tool_name, "bold magenta", multiline=False))
            if len(call.agent_path) > 1:
                title.append(f"  ({' > '.join(call.agent_path)})", style="dim")
            yield Static(title, id="dialog-title")
            yield Static(question_of(call.suspend_payload), id="question")
            findings = scan({"tool": call.tool_name, "args": call.args, "question": call.suspend_payload})
            if findings:
                yield Static(Text("⚠ " + summarize(findings), style="bold red"), id="hidden-warning")
            with VerticalScroll(id="form-fields"):
                for f in self.fields:
                    label = safe_text(f.title, "bold", multiline=False)
                    if f.required:
                        label.append(" *", style="bold red")
                    yield Static(label, classes="field-label")
                    if f.description:
                        yield Static(safe_text(f.description, "dim"), classes="field-description")
                    yield self._widget_for(f)
                    yield Static("", id=f"error-{f.name}", classes="field-error")
            yield Static("", id="form-error", classes="field-error")
            yield Input(placeholder="Reason for declining (optional, the model sees it)", id="reason", classes="hidden")
            yield Static(
                Text("enter: decline the call with this reason · esc: back to the form", style="dim"),
                id="reason-help",
                classes="hidden",
            )
            with Horizontal(id="buttons"):
                yield Button(Content("Leave pending  [esc]"), id="leave", compact=True)
                yield Button(Content("Decline call  [ctrl+d]"), id="decline", variant="error", compact=True)
                yield Button(Content("Submit  [ctrl+s]"), id="submit", variant="primary", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.apply_cursor_blink()
        self.opened_at = self.clock()
        for button in self.query(Button):
            button.can_focus = False  # ctrl+s / ctrl+d / esc decide; a typed space never presses one
        if self.fields:  # the first field has the focus: the operator types the answer at once
            self.query_one(f"#field-{self.fields[0].name}").focus()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The fields scroll; the question, errors, reason and buttons stay visible (80x24 and up)."""
        if self.is_attached and self.query("#form-fields"):
            scroll = self.query_one("#form-fields", VerticalScroll)
            self.fit_scroll("#dialog", "#form-fields", scroll.virtual_size.height)

    def close_as_decided_elsewhere(self) -> bool:
        """Close without submitting (as ``esc``): another process resumed the call, or its run ended.

        False while this form's own submission is in flight or accepted (the call left the store
        because of it), or when already closing."""
        if self.stale or self.submitting or self.submitted:
            return False
        self.stale = True
        if self.is_active:
            self.dismiss(None)
        return True

    def on_screen_resume(self) -> None:
        if self.stale:
            self.dismiss(None)

    def _widget_for(self, f: FormField):
        wid = f"field-{f.name}"
        default = None if f.default is _MISSING else f.default
        if f.kind == "boolean":
            return Switch(value=bool(default), id=wid)
        if f.kind == "enum":
            options = [(safe_text(str(c), multiline=False), c) for c in f.choices]
            value = default if default in f.choices else (f.choices[0] if f.required and f.choices else Select.NULL)
            return Select(options, value=value, allow_blank=not f.required, id=wid)
        input_type: Literal["integer", "number", "text"] = (
            "integer" if f.kind == "integer" else "number" if f.kind == "number" else "text"
        )
        return Input(
            value="" if default is None else str(default),
            type=input_type,
            id=wid,
            placeholder=placeholder_of(f),
            select_on_focus=False,
        )

    def collect(self) -> dict[str, Any]:
        """The data to send: empty inputs are omitted (defaults apply, or the runtime says it is required)."""
        data: dict[str, Any] = {}
        for f in self.fields:
            widget = self.query_one(f"#field-{f.name}")
            if isinstance(widget, Switch):
                data[f.name] = widget.value
            elif isinstance(widget, Select):
                if widget.value is not Select.NULL:
                    data[f.name] = widget.value
            elif isinstance(widget, Input):
                raw = widget.value
                if raw.strip() == "":
                    continue
                data[f.name] = coerce(f, raw)
        return data

    def show_errors(self, per_field: dict[str, str], general: str = "") -> None:
        known = {f.name for f in self.fields}
        for f in self.fields:
            self.query_one(f"#error-{f.name}", Static).update(
                safe_text("✗ " + per_field[f.name], "red") if f.name in per_field else ""
            )
        extra = [f"{k}: {v}" for k, v in per_field.items() if k not in known]
        message = "; ".join([general, *extra]).strip("; ")
        self.query_one("#form-error", Static).update(safe_text("✗ " + message, "bold red") if message else "")
        self.call_after_refresh(self._fit)

    def action_submit(self) -> None:
        if self.stale or self.submitting or self.submitted:
            return
        self.submitting = True
        self._submit(self.collect())

    @work(exclusive=True, group="resume-form")
    async def _submit(self, data: dict[str, Any]) -> None:
        self.query_one("#submit", Button).disabled = True
        try:
            result = await self.submit(data)
            self.submitted = True
        except WardenError as error:
            per_field, general = errors_by_field(error)
            if not per_field and not general:
                general = f"{error.code}: {error.message}"
            self.show_errors(per_field, general if per_field else f"{error.code}: {general}")
            return
        finally:
            self.submitting = False
            self.query_one("#submit", Button).disabled = False
        self.dismiss(result)

    def action_leave(self) -> None:
        if self.declining:
            self._set_declining(False)
            return
        self.dismiss(None)

    def action_decline(self) -> None:
        if not (self.stale or self.submitting or self.submitted):
            self._set_declining(True)

    def _set_declining(self, on: bool) -> None:
        self.declining = on
        for wid in ("#reason", "#reason-help"):
            self.query_one(wid).set_class(not on, "hidden")
        self.query_one("#submit", Button).disabled = on
        self.query_one("#leave", Button).label = Content("Back  [esc]" if on else "Leave pending  [esc]")
        self.query_one("#decline", Button).label = Content("Decline  [enter]" if on else "Decline call  [ctrl+d]")
        self.refresh_bindings()
        self.call_after_refresh(self._fit)
        if on:
            self.query_one("#reason", Input).focus()
        elif self.fields:
            self.query_one(f"#field-{self.fields[0].name}").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While declining the footer says what enter and esc do."""
        if action in ("confirm_decline", "back"):
            return self.declining
        if action in ("submit", "leave", "decline"):
            return not self.declining
        return True

    def action_back(self) -> None:
        self.action_leave()

    def action_confirm_decline(self) -> None:
        if self.declining and not self.stale:
            reason = self.query_one("#reason", Input).value.strip() or None
            self.dismiss(FormDecline(reason))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.declining:
            self.action_confirm_decline()
        else:
            self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "submit":
            self.action_submit()
        elif event.button.id == "decline":
            if self.declining:
                self.action_confirm_decline()
            else:
                self.action_decline()
        else:
            self.action_leave()
