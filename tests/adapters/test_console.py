"""The console with the demo's framework agents (what ``make demo`` shows): a Textual Pilot picks each
one, sends a prompt, and approves the framework's gated call in the approval dialog."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from tests.console.conftest import log_text, showing, type_prompt, wait_for
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from warden_demo.agents import build_demo_runtime
from warden_demo.records import list_records, records_path

SIZE = (120, 40)


@pytest.mark.parametrize("key", ["pydantic_ai_records", "openai_agents_records", "langgraph_records"])
async def test_the_console_approves_a_framework_agent_s_call(tmp_path, key):
    db = tmp_path / "warden.db"
    runtime = build_demo_runtime(db, frameworks=True)
    app = WardenApp(
        LocalBackend(runtime, store_label=str(db)),
        ConsoleSettings(approval_guard=0, picker_refresh=0.1, pending_refresh=0, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.run_screen.query("#agent-picker"), "agent picker")
        app.run_screen.query_one("#agent-picker").value = key
        await type_prompt(pilot, "delete record abc-124")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        assert app.screen.call.tool_name == "delete_record"
        assert app.screen.call.agent_path == (runtime.get_agent(key).id,)
        assert "abc-124" in str(app.screen.query_one("#args", Static).render())
        await pilot.press("y")
        await wait_for(pilot, lambda: "Done." in log_text(app), "the framework finished the run")
    assert "abc-124" not in list_records(records_path(db))
