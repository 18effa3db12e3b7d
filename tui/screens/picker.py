"""Pending runs in the store, as a work queue: filter, sort, preview, decide, next.

Every filter and sort is the store's query (``PendingQuery``), one page at a time, so
it stays as quick with 100,000 pending runs as with ten. Refreshed on an interval so
that decisions taken by another process or console disappear. The cursor moves by
rows; after a decision it stays where it was, which is now the next call.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static

from tui import keymap
from tui.backend import PendingCall, PendingPage, PendingQuery
from tui.components.queue import KINDS, SORTS, QueueTable, agent_path, args_summary, parse_filter, with_qualifier
from tui.deadlines import format_left, seconds_left, urgent
from tui.formatting import format_age
from tui.messages import DecideCall
from tui.screens.base import WardenScreen
from tui.untrusted import json_text, safe_text, to_json

#: Seconds of quiet in the filter line before the store is asked (typing is not a query per key).
FILTER_DEBOUNCE = 0.12
#: Seconds the cursor rests on a row before its context is read for the preview.
PREVIEW_DEBOUNCE = 0.08
#: Contexts kept for the preview (by run id).
PREVIEW_CACHE = 64


def age_cell(waited: str, expires_at: datetime | None, now: datetime) -> Text:
    """How long the call has waited and, with a deadline, how long it has left (bold red when urgent):
    the queue shows which calls run out first without opening them."""
    cell = Text(waited)
    left = seconds_left(expires_at, now)
    if left is not None:
        cell.append(f" ⏳{format_left(left)}" if left > 0 else " ⏳now", style="bold red" if urgent(left) else "dim")
    return cell


class PendingPicker(WardenScreen[PendingCall | None]):
    """Dismisses with the call to open, or ``None``."""

    BINDINGS = keymap.PICKER
    AUTO_FOCUS = "#pending-table"

    def __init__(
        self,
        *,
        per_page: int = 50,
        refresh_interval: float = 2.0,
        now: Callable[[], datetime] | None = None,
        filter_debounce: float = FILTER_DEBOUNCE,
        first_page: PendingPage | None = None,
    ) -> None:
        super().__init__()
        #: page 0 with its counts, read by whoever opened the picker: shown without a second query.
        self._first_page = first_page
        self.per_page = per_page
        self.refresh_interval = refresh_interval
        self.now = now or (lambda: datetime.now(UTC))
        self.filter_debounce = filter_debounce
        #: 0-based; shown from 1.
        self.page = 0
        self.total = 0
        self.counts: dict[str, int] = {"approval": 0, "input": 0}
        self.query_state = PendingQuery()
        #: The query of the page on show: ``query_state`` once the store has answered it (a filter
        #: typed slower than the debounce is several queries; waiting on ``loads`` alone can see an
        #: earlier one's page).
        self.shown_query: PendingQuery | None = None
        self.filter_line = ""
        self.calls: dict[str, PendingCall] = {}
        #: agent id of each listed call's run (for the row's agent column and ``a``).
        self.agents: dict[str, str] = {}
        self.threads: dict[str, str | None] = {}
        #: Calls decided from this list whose decision is in flight: not listed again meanwhile.
        self.deciding: set[str] = set()
        self.loads = 0
        self.opened_at = 0.0
        self.preview_key: str | None = None
        #: The preview shows the stored context of ``preview_key`` (not only the listed call).
        self.preview_loaded = False
        self._contexts: OrderedDict[str, Any] = OrderedDict()
        self._filter_timer: Timer | None = None
        self._preview_timer: Timer | None = None
        #: Another page, filter or sort: the cursor starts at the first row.
        self._to_top = False
        #: A key of a burst of typing closed the picker (``tui.typing_guard``).
        self.bounced = False
        #: Opened by a key (``ctrl+o``), or as the console's first screen (set by the app): its keys
        #: that decide nothing act as soon as it is ready (``WardenApp._picker_may_act``).
        self.opened_by_key = False
        self.first_screen = False

    def compose(self) -> ComposeResult:
        yield Static(Text("Pending runs", style="bold"), id="picker-title")
        yield Input(
            placeholder="filter: words, agent:… tool:… thread:… kind:approval|input (enter: list, esc: back)",
            id="picker-filter",
            classes="hidden",
        )
        table: QueueTable = QueueTable(id="pending-table", cursor_type="row", zebra_stripes=True)
        # what and how urgent first: at 80 columns tool, kind, age and arguments stay in view
        table.add_columns("Tool", "Kind", "Age", "Arguments", "Agent", "Thread", "Run")
        yield table
        with VerticalScroll(id="picker-preview"):
            yield Static("", id="picker-preview-text")
        yield Static("", id="picker-status")
        yield Footer()

    def on_mount(self) -> None:
        self.opened_at = self.warden_app.clock()
        if self._first_page is not None:
            self.shown_query = self.query_state
            self.show_page(self._first_page)
            self._first_page = None
        else:
            self.reload()
        if self.refresh_interval > 0:
            self.set_interval(self.refresh_interval, self.reload, name="picker-refresh")

    @property
    def keys_ready(self) -> bool:
        """Keys wait for the first page (``tui.key_order``): an enter typed as the rows appear opens
        the first row, it is not lost on an empty table."""
        return self.loads > 0

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#pending-table", DataTable)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#picker-filter", Input)

    # -- loading -----------------------------------------------------------------------------
    @work(exclusive=True, group="picker-load")
    async def reload(self) -> None:
        backend = self.backend
        query = self.query_state
        page = await backend.list_pending(page=self.page, per_page=self.per_page, query=query, with_counts=True)
        if not page.runs and self.page > 0 and page.total:
            self.page = max(0, (page.total - 1) // self.per_page)
            page = await backend.list_pending(page=self.page, per_page=self.per_page, query=query, with_counts=True)
        if not self.is_attached or not self.query("#pending-table"):
            return  # the picker closed (or the console is quitting) while the store answered
        if query != self.query_state:
            # A key changed the filter or the sort while the store answered: this page is stale,
            # and the reload that key started shows the right one.
            return
        self.shown_query = query
        self.show_page(page)

    def show_page(self, page: PendingPage) -> None:
        table = self.table
        selected, row = self._cursor()
        now = self.now()
        self.total = page.total
        if page.counts is not None:
            self.counts = dict(page.counts)
        self.calls, self.agents, self.threads = {}, {}, {}
        table.clear()
        for run in page.runs:
            waited = format_age((now - run.suspended_at).total_seconds())
            for call in run.calls:
                if call.key in self.deciding:
                    continue
                self.calls[call.key] = call
                self.agents[call.key] = run.agent_id
                self.threads[call.key] = run.thread_id
                age = age_cell(waited, call.expires_at, now)
                table.add_row(*self._cells(call, run.agent_id, run.thread_id, age), key=call.key)
        if self._to_top:
            self._to_top = False
            if table.row_count:
                table.move_cursor(row=0, animate=False)
        elif selected is not None and selected in self.calls:
            table.move_cursor(row=table.get_row_index(selected), animate=False)
        elif table.row_count:
            # The call under the cursor left (decided here or elsewhere): the row that took its
            # place, the next call, gets the cursor, not the first row.
            table.move_cursor(row=min(row, table.row_count - 1), animate=False)
        self._show_header()
        if not self.loads:  # shown and ready now: the guard of ``y``/``n`` counts from here
            self.opened_at = self.warden_app.clock()
        self.loads += 1
        self._schedule_preview()

    def _cells(self, call: PendingCall, agent_id: str, thread_id: str | None, age: Text) -> tuple[Any, ...]:
        kind = Text("approval", style="yellow") if call.kind == "approval" else Text("input", style="cyan")
        return (
            safe_text(call.tool_name[:28], "bold", multiline=False),
            kind,
            age,
            args_summary(call.args, 26),
            agent_path(call, agent_id, 24),
            safe_text((thread_id or "—")[:12], multiline=False),
            safe_text(call.run_id[:8], "dim", multiline=False),
        )

    def _cursor(self) -> tuple[str | None, int]:
        """The key and index of the row under the cursor (None, 0 when the table is empty)."""
        table = self.table
        if not table.row_count:
            return None, 0
        row = table.cursor_row
        try:
            return table.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value, row
        except Exception:  # the table changed under the cursor
            return None, row

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    def _show_header(self) -> None:
        q = self.query_state
        title = Text("Pending runs", style="bold")
        title.append(f"  {self.counts.get('approval', 0)} approval(s)", style="yellow")
        title.append(f" · {self.counts.get('input', 0)} input(s)", style="cyan")
        title.append(f" · sort: {q.sort}", style="dim")
        if self.filter_line:
            title.append(" · filter: ", style="dim")
            title.append_text(safe_text(self.filter_line, "bold", multiline=False))
        self.query_one("#picker-title", Static).update(title)
        status = (
            f"page {self.page + 1} of {self.pages} · {self.total} run(s) · "
            "/ filter · s sort · i kind · a agent · t tool · enter open · y approve · n decline · [ ] page"
        )
        self.query_one("#picker-status", Static).update(Text(status, style="dim"))

    # -- the preview -------------------------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._schedule_preview()

    def _schedule_preview(self) -> None:
        if self._preview_timer is not None:
            self._preview_timer.stop()
        call = self.focused_call
        if call is None:
            self.preview_key = None
            self.query_one("#picker-preview-text", Static).update(Text("nothing pending here", style="dim"))
            return
        self._render_preview(call, self._contexts.get(call.run_id))
        if call.run_id not in self._contexts:
            self._preview_timer = self.set_timer(PREVIEW_DEBOUNCE, self._load_preview)

    @work(exclusive=True, group="picker-preview", exit_on_error=False)
    async def _load_preview(self) -> None:
        call = self.focused_call
        if call is None:
            return
        try:
            ctx = await self.backend.run_context(call.run_id)
        except Exception:  # the preview is a help: the call can be decided without it
            return
        self._contexts[call.run_id] = ctx
        while len(self._contexts) > PREVIEW_CACHE:
            self._contexts.popitem(last=False)
        focused = self.focused_call
        if self.is_attached and focused is not None and focused.run_id == call.run_id:
            self._render_preview(focused, ctx)

    def _render_preview(self, call: PendingCall, run_ctx: Any) -> None:
        from tui.screens.approval import context_lines  # the dialog's own lines: one look everywhere

        ctx = run_ctx.calls.get(call.tool_call_id) if run_ctx is not None else None
        out = context_lines(call, ctx)
        out.append("\n")
        out.append(f"{'Arguments':<12}", style="bold")
        flat = to_json(call.args, indent=None)
        # one line when it fits, else indented (the pane scrolls); both escape what is unsafe
        out.append_text(safe_text(flat, multiline=False) if len(flat) <= 90 else json_text(call.args))
        if call.fingerprint:
            out.append("\n")
            out.append(f"{'Fingerprint':<12}", style="bold")
            out.append(call.fingerprint, style="dim")
        self.preview_key = call.key
        self.preview_loaded = ctx is not None
        self.query_one("#picker-preview-text", Static).update(out)

    # -- filters and sort --------------------------------------------------------------------
    def action_filter(self) -> None:
        box = self.filter_input
        box.remove_class("hidden")
        box.focus()

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        if self.filter_debounce > 0:
            self._filter_timer = self.set_timer(self.filter_debounce, lambda: self.set_filter(event.value))
        else:
            self.set_filter(event.value)

    @on(Input.Submitted, "#picker-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self.set_filter(event.value)
        self.table.focus()

    def set_filter(self, line: str) -> None:
        """Apply a filter line (see ``parse_filter``): first page, store query."""
        query = parse_filter(line, self.query_state)
        self.filter_line = line.strip()
        if query != self.query_state:
            self.query_state = query
            self.page = 0
            self._to_top = True
            self.reload()
        else:
            self._show_header()
        box = self.filter_input
        if box.value != line:
            box.value = line
        box.set_class(not self.filter_line and not box.has_focus, "hidden")

    def _toggle(self, key: str, value: str | None) -> None:
        current = {
            "agent": self.query_state.agent_id,
            "tool": self.query_state.tool_name,
            "kind": self.query_state.kind,
        }[key]
        self.set_filter(with_qualifier(self.filter_line, key, None if value == current else value))

    def action_cycle_sort(self) -> None:
        q = self.query_state
        nxt = SORTS[(SORTS.index(q.sort) + 1) % len(SORTS)]
        self.query_state = PendingQuery(q.text, q.agent_id, q.thread_id, q.tool_name, q.kind, nxt)  # type: ignore[arg-type]
        self.page = 0
        self._to_top = True
        self.reload()

    def action_cycle_kind(self) -> None:
        nxt = KINDS[(KINDS.index(self.query_state.kind) + 1) % len(KINDS)]
        self.set_filter(with_qualifier(self.filter_line, "kind", nxt))

    def action_filter_agent(self) -> None:
        call = self.focused_call
        self._toggle("agent", self.agents.get(call.key) if call is not None else None)

    def action_filter_tool(self) -> None:
        call = self.focused_call
        self._toggle("tool", call.tool_name if call is not None else None)

    # -- rows and decisions --------------------------------------------------------------------
    @property
    def focused_call(self) -> PendingCall | None:
        key, _ = self._cursor()
        return self.calls.get(key or "")

    def action_open(self) -> None:
        call = self.focused_call
        # ``is_current``: a row selected by a key the table read before the picker was dismissed
        # (an enter typed with others as the console starts) arrives after; it opens nothing more.
        if call is not None and self.is_current:
            self.dismiss(call)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    @property
    def guarded(self) -> bool:
        """``y``/``n`` are ignored right after the picker opens (typeahead must not decide)."""
        app = self.warden_app
        return app.clock() - self.opened_at < app.approval_guard

    def _take(self, approve: bool) -> None:
        if self.guarded:
            return
        call = self.focused_call
        if call is None:
            return
        if call.kind == "approval" and approve:
            # Taken off the list now: the cursor is on the next call at once, and a second ``y``
            # decides that one (never the same call twice, never the first row by surprise).
            self.deciding.add(call.key)
            _, row = self._cursor()
            self.table.remove_row(call.key)
            self.calls.pop(call.key, None)
            if self.table.row_count:
                self.table.move_cursor(row=min(row, self.table.row_count - 1), animate=False)
            self._schedule_preview()
        self.post_message(DecideCall(call, approve=approve))

    def decision_done(self, call: PendingCall) -> None:
        """The app is done with a decision taken here (applied, or failed): list the store's truth."""
        self.deciding.discard(call.key)
        self.reload()

    def action_row_down(self) -> None:
        self.table.action_cursor_down()

    def action_row_up(self) -> None:
        self.table.action_cursor_up()

    def action_first_row(self) -> None:
        self.query_one(QueueTable).action_first_row()

    def action_last_row(self) -> None:
        self.query_one(QueueTable).action_last_row()

    def action_approve(self) -> None:
        self._take(True)

    def action_decline(self) -> None:
        self._take(False)

    def action_refresh(self) -> None:
        self.reload()

    def action_next_page(self) -> None:
        if (self.page + 1) * self.per_page < self.total:
            self.page += 1
            self._to_top = True
            self.reload()

    def action_previous_page(self) -> None:
        if self.page > 0:
            self.page -= 1
            self._to_top = True
            self.reload()

    def action_close(self) -> None:
        box = self.filter_input
        if box.has_focus:  # esc in the filter line: back to the rows, the filter stays
            box.set_class(not self.filter_line, "hidden")
            self.table.focus()
            return
        self.dismiss(None)
