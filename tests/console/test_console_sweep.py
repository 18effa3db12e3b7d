"""The console sweeps deadlines of its store: an overdue call of a run hosted elsewhere (an MCP
proxy's, handover) is expired from the console, recorded once for the host, which applies it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.console.conftest import demo_runtime, wait_for
from tests.mcp.helpers import make_overdue
from tests.test_handover_operator import _host, _pending
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings


def _decisions(db: Path, run_id: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT decision FROM audit_log WHERE run_id = ? ORDER BY seq", (run_id,))]


async def test_the_console_expires_an_overdue_call_of_a_run_it_does_not_host(tmp_path: Path) -> None:
    db, ran = tmp_path / "w.db", []
    agent, host = _host(db, ran)
    async with host:
        run_id = await _pending(agent, approval_timeout=600)
        make_overdue(db, run_id)
        backend = LocalBackend(demo_runtime(db), store_label=str(db))  # the demo agents, not mcp:files
        app = WardenApp(
            backend, ConsoleSettings(approval_guard=0, pending_refresh=0, status_refresh=0, open_picker=False)
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: _decisions(db, run_id) == ["expired"], "the console's sweep")
        applied = await host.adopt(agent, run_id=run_id, tool_call_id="c1")
        assert applied is not None
        await applied.wait()
    assert ran == [] and _decisions(db, run_id) == ["expired"]
