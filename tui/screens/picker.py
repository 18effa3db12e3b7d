"""Pending runs in the store: pick one to open, or decide from the list.

Paged (``per_page`` rows from an indexed query), refreshed on an interval so
that decisions taken by another process or console disappear.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Footer, Static

from tui import keymap
from tui.backend import PendingCall, PendingPage
from tui.formatting import format_age
from tui.messages import DecideCall
from tui.screens.base import WardenScreen
from tui.untrusted import safe_text


class PendingPicker(WardenScreen[PendingCall | None]):
    """Dismisses with the call to open, or ``None``."""

    BINDINGS = keymap.PICKER
    AUTO_FOCUS = "#pending-table"

    def __init__(
        self, *, per_page: int = 50, refresh_interval: float = 2.0, now: Callable[[], datetime] | None = None
    ) -> None:
        super().__init__()
        self.per_page = per_page
        self.refresh_interval = refresh_interval
        self.now = now or (lambda: datetime.now(UTC))
        self.page = 0
        self.total = 0
        self.calls: dict[str, PendingCall] = {}
        self.loads = 0
        self.opened_at = 0.0
        #: A key of a burst of typing closed the picker (``tui.typing_guard``).
        self.bounced = False

    def compose(self) -> ComposeResult:
        yield Static(Text("Pending runs", style="bold"), id="picker-title")
        table: DataTable = DataTable(id="pending-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("Agent", "Thread", "Tool", "Kind", "Age", "Fingerprint", "Run")
        yield table
        yield Static("", id="picker-status")
        yield Footer()

    def on_mount(self) -> None:
        self.opened_at = self.warden_app.clock()
        self.reload()
        if self.refresh_interval > 0:
            self.set_interval(self.refresh_interval, self.reload, name="picker-refresh")

    @property
    def table(self) -> DataTable:
        return self.query_one("#pending-table", DataTable)

    @work(exclusive=True, group="picker-load")
    async def reload(self) -> None:
        backend = self.backend
        page = await backend.list_pending(page=self.page, per_page=self.per_page)
        if not page.runs and self.page > 0 and page.total:
            self.page = max(0, (page.total - 1) // self.per_page)
            page = await backend.list_pending(page=self.page, per_page=self.per_page)
        if not self.is_attached:  # the picker closed while the store answered
            return
        self.show_page(page)

    def show_page(self, page: PendingPage) -> None:
        table = self.table
        selected = None
        if table.row_count and table.cursor_row is not None:
            try:
                selected = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
            except Exception:
                selected = None
        now = self.now()
        self.total = page.total
        self.calls = {}
        table.clear()
        for run in page.runs:
            age = format_age((now - run.suspended_at).total_seconds())
            for call in run.calls:
                self.calls[call.key] = call
                kind = Text("approval", style="yellow") if call.kind == "approval" else Text("input", style="cyan")
                fp = (call.fingerprint or "").removeprefix("sha256:")[:12] or "—"
                table.add_row(
                    safe_text(run.agent_id, multiline=False),
                    safe_text(run.thread_id or "—", multiline=False),
                    safe_text(call.tool_name, "bold", multiline=False),
                    kind,
                    age,
                    fp,
                    Text(run.run_id, style="dim"),
                    key=call.key,
                )
        if selected is not None and selected in self.calls:
            table.move_cursor(row=table.get_row_index(selected))
        pages = max(1, -(-page.total // self.per_page))
        status = (
            f"page {self.page + 1}/{pages} · {page.total} pending run(s) · "
            "enter open · y approve · n decline · [ ] page · esc close"
        )
        self.query_one("#picker-status", Static).update(Text(status, style="dim"))
        self.loads += 1

    @property
    def focused_call(self) -> PendingCall | None:
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return self.calls.get(key or "")

    def action_open(self) -> None:
        call = self.focused_call
        if call is not None:
            self.dismiss(call)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    @property
    def guarded(self) -> bool:
        """``y``/``n`` are ignored right after the picker opens (typeahead must not decide)."""
        app = self.warden_app
        return app.clock() - self.opened_at < app.approval_guard

    def action_approve(self) -> None:
        if self.guarded:
            return
        call = self.focused_call
        if call is not None:
            self.post_message(DecideCall(call, approve=True))

    def action_decline(self) -> None:
        if self.guarded:
            return
        call = self.focused_call
        if call is not None:
            self.post_message(DecideCall(call, approve=False))

    def action_refresh(self) -> None:
        self.reload()

    def action_next_page(self) -> None:
        if (self.page + 1) * self.per_page < self.total:
            self.page += 1
            self.reload()

    def action_previous_page(self) -> None:
        if self.page > 0:
            self.page -= 1
            self.reload()

    def action_close(self) -> None:
        self.dismiss(None)
