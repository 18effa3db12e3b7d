"""The audit trail in the console: who decided what, newest first (F3)."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tui import keymap
from tui.screens.base import WardenModal

#: decisions shown in a warning colour.
_ALERT = {"declined": "yellow", "withdrawn": "yellow", "notification-failed": "bold red", "expired": "yellow"}


def audit_rows(entries: list[Any]) -> list[tuple[Any, ...]]:
    """Table rows, newest first: time, actor, decision, tool, run, call, reason."""
    rows = []
    for e in reversed(entries):
        when = e.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
        decision = Text(e.decision, style=_ALERT.get(e.decision, ""))
        rows.append((when, e.actor or "-", decision, e.tool_name, e.run_id[:12], e.tool_call_id[:14], e.reason or ""))
    return rows


class AuditScreen(WardenModal[None]):
    BINDINGS = keymap.AUDIT

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="help"):
            yield Static(Text("Audit trail (newest first)", style="bold"), id="dialog-title")
            yield DataTable(id="audit-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="audit-status")
            yield Static(Text("r refresh · esc close · warden audit verify checks the hash chain", style="dim"))

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("time (UTC)", "actor", "decision", "tool", "run", "call", "reason")
        self.load()

    @work(exclusive=True)
    async def load(self) -> None:
        status = self.query_one("#audit-status", Static)
        try:
            entries = await self.backend.audit()
        except Exception as error:  # a store or server error: shown, never crashes the console
            status.update(Text(f"cannot read the audit trail: {error}", style="red"))
            return
        table = self.query_one(DataTable)
        table.clear()
        for row in audit_rows(entries):
            table.add_row(*row)
        failed = sum(1 for e in entries if e.decision == "notification-failed")
        note = f"{len(entries)} entries" + (f" · {failed} failed notification(s)" if failed else "")
        status.update(Text(note, style="red" if failed else "dim"))

    def action_refresh(self) -> None:
        self.load()

    def action_close(self) -> None:
        self.dismiss(None)
