"""F3: the audit trail screen (new screen, wired with one action in the app)."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from tests.console.conftest import demo_app, demo_runtime, showing, suspend_runs, wait_for
from tui.screens.audit import AuditScreen


async def test_f3_shows_who_decided_newest_first(tmp_path):
    db = tmp_path / "w.db"
    first, second = await suspend_runs(
        db, [("ops", "send an email to a@b.c saying hi"), ("ops", "send an email to d@e.f saying yo")]
    )
    runtime = demo_runtime(db)
    async with runtime:
        await (await runtime.decline_tool_call(run_id=first, reason="not 7", actor="ann")).text()
        await (await runtime.decline_tool_call(run_id=second, actor="bob")).text()
    app = demo_app(db, open_picker=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: showing(app, AuditScreen), "audit screen")
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 2, "two entries")
        rows = [table.get_row_at(i) for i in range(2)]
        assert [r[1] for r in rows] == ["bob", "ann"] and str(rows[1][2]) == "declined" and rows[1][6] == "not 7"
        assert "2 entries" in str(app.screen.query_one("#audit-status", Static).render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, AuditScreen), "closed")
