"""Edit, then approve: the call's arguments in a JSON editor, checked before anything changes.

Opened from the approval dialog (``e``). ``ctrl+s`` parses the JSON (an error
says where it is wrong) and hands the object to ``submit``, which approves the
call with it; the runtime validates it against the tool's ``input_schema``
first (``ToolArgsInvalid``), and its message is shown inline: the call stays
pending, unchanged. ``esc`` goes back to the dialog. ``ctrl+s`` is no typing
key, and is ignored for a moment after the editor opens (``guard_seconds``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Footer, Static, TextArea

from tui import keymap
from tui.screens.submit_once import SubmitOnceModal
from tui.untrusted import find_unsafe, safe_text

Submit = Callable[[dict[str, Any]], Awaitable[Any]]


def editable_json(args: dict[str, Any]) -> str:
    """Pretty JSON of ``args`` for the editor; hidden characters (bidi, zero-width, controls) are
    written as JSON ``\\uXXXX`` escapes, so the operator sees them and the value is unchanged."""
    text = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    out = []
    for ch in text:
        if find_unsafe(ch) and ch not in "\n\t":
            code = ord(ch)
            if code > 0xFFFF:  # a surrogate pair, as JSON writes it
                code -= 0x10000
                out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
            else:
                out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def parse_args(text: str) -> tuple[dict[str, Any] | None, str]:
    """The edited object, or None and why not (shown inline)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
    if not isinstance(value, dict):
        return None, "the arguments must be a JSON object ({ ... })"
    return value, ""


class EditArgsModal(SubmitOnceModal):
    """Dismisses with what ``submit`` returned (the approved stream) or ``None`` (back, nothing changed)."""

    BINDINGS = keymap.EDIT_ARGS
    AUTO_FOCUS = "#args-editor"

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="edit-args"):
            title = Text("Edit the arguments of ", style="bold")
            title.append_text(safe_text(self.call.tool_name, "bold yellow", multiline=False))
            yield Static(title, id="dialog-title")
            yield Static(
                Text(
                    "The tool runs with these arguments once approved. They are checked against its input "
                    "schema first; the model is told what you changed.",
                    style="dim",
                ),
                id="edit-help",
            )
            editor = TextArea(editable_json(self.call.args), id="args-editor", soft_wrap=True, tab_behavior="indent")
            editor.border_title = "Arguments (JSON)"
            yield editor
            yield Static("", id="edit-error", classes="field-error")
            with Horizontal(id="buttons"):
                yield Button(Content("Back  [esc]"), id="back", compact=True)
                yield Button(Content("Approve with these  [ctrl+s]"), id="submit", variant="success", compact=True)
        yield Footer()

    def on_mount(self) -> None:
        self.opened_at = self.clock()
        for button in self.query(Button):
            button.can_focus = False  # ctrl+s decides; a typed space or enter only edits
        self.apply_cursor_blink()

    @property
    def editor(self) -> TextArea:
        return self.query_one("#args-editor", TextArea)

    def show_error(self, message: str) -> None:
        self.query_one("#edit-error", Static).update(safe_text("✗ " + message, "bold red") if message else "")

    def action_submit(self) -> None:
        if not self.may_submit():
            return
        args, problem = parse_args(self.editor.text)
        if args is None:
            self.show_error(problem)
            return
        if args == self.call.args:
            self.show_error("the arguments are unchanged: esc, then y approves the call as presented")
            return
        self.submitting = True
        self.show_error("")
        self._submit(args)

    @work(exclusive=True, group="edit-args")
    async def _submit(self, args: dict[str, Any]) -> None:
        await self.send(args)
