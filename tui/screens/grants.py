"""The live grants (F4): each rule in words, who created it, when it expires; revoke with a confirmation.

``d`` (or delete) asks "revoke …?" for the highlighted grant; ``y`` revokes it,
``n`` keeps it. Calls a grant already approved stay approved.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Static

from agent_core.errors import WardenError
from agent_core.views import describe_grant
from tui import keymap
from tui.deadlines import format_left
from tui.screens.base import WardenModal
from tui.untrusted import safe_text


def grant_rule(grant: Any, now: datetime) -> str:
    """``Grant.describe()`` against the console's clock (frozen in snapshots)."""
    left = None if grant.expires_at is None else (grant.expires_at - now).total_seconds()
    return describe_grant(
        grant.tool_name,
        grant.scope,
        grant.scope_id,
        grant.agent_id,
        grant.args_match,
        left,
        command_match=getattr(grant, "command_match", None),
    )


def grant_rows(grants: list[Any], now: datetime) -> list[tuple[Any, ...]]:
    """Table rows: rule in words, created by, expires (UTC, and time left), id."""
    rows = []
    for g in grants:
        if g.expires_at is None:
            expires = Text("never (until revoked)", style="yellow")
        else:
            when = g.expires_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
            expires = Text(f"{when} (in {format_left((g.expires_at - now).total_seconds())})")
        rows.append(
            (
                safe_text(grant_rule(g, now), multiline=False),
                safe_text(g.created_by or "-", multiline=False),
                expires,
                Text(g.id, style="dim"),
            )
        )
    return rows


class GrantsScreen(WardenModal[None]):
    BINDINGS = keymap.GRANTS

    def __init__(self) -> None:
        super().__init__(classes="dialog-screen")
        self.grants: list[Any] = []
        #: the grant the operator was asked about (``d``); ``y`` revokes it.
        self.confirming: Any = None
        self.loaded = False

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="help"):
            yield Static(Text("Live grants (always-allow rules)", style="bold"), id="dialog-title")
            yield DataTable(id="grants-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="grants-detail")
            yield Static("", id="grants-status")
            yield Static(Text("d revoke · r refresh · esc close · warden grants list|revoke", style="dim"))
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("rule", "created by", "expires (UTC)", "id")
        self.load()

    def _now(self) -> datetime:
        try:
            return self.warden_app.now()
        except Exception:  # not in a WardenApp
            return datetime.now(UTC)

    @work(exclusive=True, group="grants")
    async def load(self) -> None:
        status = self.query_one("#grants-status", Static)
        try:
            grants = await self.backend.list_grants()
        except Exception as error:  # a store or server error: shown, never crashes the console
            status.update(safe_text(f"cannot read the grants: {error}", "red"))
            return
        self.grants = list(grants)
        table = self.query_one(DataTable)
        table.clear()
        for g, row in zip(self.grants, grant_rows(self.grants, self._now()), strict=True):
            table.add_row(*row, key=g.id)
        status.update(Text(f"{len(self.grants)} live grant(s)" if self.grants else "no live grants", style="dim"))
        self.show_detail()
        self.loaded = True

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def show_detail(self) -> None:
        """The highlighted grant in full, wrapped: at 80 columns the table cuts the rule short."""
        grant = self.highlighted
        detail = Text()
        if grant is not None:
            now = self._now()
            row = grant_rows([grant], now)[0]
            detail.append_text(safe_text(grant_rule(grant, now), "bold"))
            detail.append("\ncreated by ", style="dim")
            detail.append_text(row[1])
            detail.append(" · expires ", style="dim")
            detail.append_text(row[2])
            detail.append("\nid ", style="dim")
            detail.append_text(row[3])
        self.query_one("#grants-detail", Static).update(detail)

    @property
    def highlighted(self) -> Any:
        table = self.query_one(DataTable)
        if not self.grants or table.cursor_row is None or table.cursor_row >= len(self.grants):
            return None
        return self.grants[table.cursor_row]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("confirm_revoke", "cancel_revoke"):
            return self.confirming is not None
        if action == "revoke":
            return self.confirming is None
        return True

    def action_revoke(self) -> None:
        grant = self.highlighted
        if grant is None:
            return
        self.confirming = grant
        ask = Text("Revoke ", style="bold red")
        ask.append_text(safe_text(grant_rule(grant, self._now()), "bold", multiline=False))
        ask.append("?  y: revoke · n: keep", style="bold red")
        self.query_one("#grants-status", Static).update(ask)
        self.refresh_bindings()

    def action_cancel_revoke(self) -> None:
        self.confirming = None
        self.query_one("#grants-status", Static).update(Text("kept", style="dim"))
        self.refresh_bindings()

    def action_confirm_revoke(self) -> None:
        grant, self.confirming = self.confirming, None
        self.refresh_bindings()
        if grant is not None:
            self._revoke(grant)

    @work(exclusive=True, group="grants-revoke")
    async def _revoke(self, grant: Any) -> None:
        status = self.query_one("#grants-status", Static)
        try:
            await self.backend.revoke_grant(grant.id)
        except WardenError as error:
            status.update(safe_text(f"✗ {error.code}: {error.message or error}", "bold red"))
            return
        self.load()

    def action_refresh(self) -> None:
        self.load()

    def action_close(self) -> None:
        self.dismiss(None)
