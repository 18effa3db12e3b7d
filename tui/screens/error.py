"""A modal showing an error from a worker (one pattern for every backend call)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Button, Static

from tui import keymap
from tui.screens.base import WardenModal
from tui.untrusted import safe_text


class ErrorModal(WardenModal[None]):
    BINDINGS = keymap.ERROR
    AUTO_FOCUS = "#ok"

    def __init__(self, title: str, message: str, code: str | None = None) -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.message = message
        self.code = code

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="error"):
            yield Static(safe_text(self.title_text, "bold red", multiline=False), id="dialog-title")
            if self.code:
                yield Static(Text(self.code, style="dim"), id="error-code")
            yield Static(safe_text(self.message), id="error-message")
            yield Button("OK", id="ok", variant="primary")

    def action_close(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)
