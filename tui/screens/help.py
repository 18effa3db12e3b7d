"""All key bindings, from ``tui.keymap``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from tui import keymap
from tui.screens.base import WardenModal


def bindings_table() -> Table:
    table = Table(box=None, expand=True, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("Key", no_wrap=True, style="bold cyan")
    table.add_column("Action")
    table.add_column("Id", style="dim", no_wrap=True)
    for title, bindings in keymap.SECTIONS:
        table.add_row(Text(title, style="bold underline"), "", "")
        for b in bindings:
            if not isinstance(b, Binding):
                continue
            keys = " / ".join(k.strip().replace("_square_bracket", " bracket") for k in b.key.split(","))
            table.add_row(keys, b.description + (f" — {b.tooltip}" if b.tooltip else ""), b.id or "")
        table.add_row("", "", "")
    return table


RULE = Text.assemble(
    ("How a decision is taken. ", "bold"),
    "Single keys, guarded: y approves, n declines (type a reason, enter confirms, esc goes back), "
    "esc leaves the call pending. Typing never decides: a call that arrives while you type waits in "
    "the banner and its dialog opens when you stop typing (about 1 s) or with f2; a key pressed right "
    "after a dialog opens (0.8 s) or as part of a burst of typing (keys under 0.5 s apart) closes the "
    "dialog back to the banner and goes to the prompt, and so does any typing key the dialog does not "
    "bind (buttons never take the keyboard focus). The same rule holds in the pending-runs list; "
    "declining from it, or from the command palette, asks for a reason.\n",
)


class HelpScreen(WardenModal[None]):
    BINDINGS = keymap.HELP

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="help"):
            yield Static(Text("Key bindings", style="bold"), id="dialog-title")
            with VerticalScroll():
                yield Static(RULE, id="decision-rule")
                yield Static(bindings_table(), id="bindings")
            yield Static(Text("esc / f1 / q to close · ctrl+p opens the command palette", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
