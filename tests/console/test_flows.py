"""The console against the real runtime on a real SQLite file, driven with Pilot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from textual.widgets import DataTable, Input, Static

from tests.console.conftest import (
    FakeClock,
    demo_app,
    demo_runtime,
    log_text,
    showing,
    suspend_runs,
    type_prompt,
    wait_for,
)
from tui.screens.approval import ApprovalModal
from tui.screens.picker import PendingPicker
from tui.screens.resume_form import ResumeFormModal
from warden_demo.records import list_records, records_path

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 40)


async def pending_total(db_path: Path) -> int:
    async with demo_runtime(db_path) as runtime:
        return (await runtime.list_suspended_runs()).total


async def test_approve_flow_runs_the_tool(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete record abc-123")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        modal = app.screen
        assert modal.call.tool_name == "delete_record" and modal.call.args == {"record_id": "abc-123"}
        assert app.focused is modal.query_one("#args-scroll")  # not a button: a typed space or enter presses nothing
        shown_fp = str(modal.query_one("#fingerprint", Static).render())
        assert modal.call.fingerprint and modal.call.fingerprint in shown_fp
        await pilot.press("y")
        await wait_for(pilot, lambda: "Done: delete_record returned deleted=True" in log_text(app), "tool result")
        assert not app.run_screen.pending.calls
        assert log_text(app).count("→ call delete_record") == 1, "the resumed stream's repeated call is shown once"
    assert "abc-123" not in list_records(records_path(db_path))
    assert await pending_total(db_path) == 0


async def test_decline_with_reason_reaches_the_model(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "send an email to x@y.z saying hello")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        await pilot.press("n")
        reason = app.screen.query_one("#reason", Input)
        await wait_for(pilot, lambda: app.focused is reason, "reason input focused")
        await pilot.press(*"wrong recipient", "enter")
        await wait_for(pilot, lambda: "operator declined" in log_text(app), "model answer after decline")
        text = log_text(app)
        assert "declined send_email: wrong recipient" in text  # the tool-output-denied chunk
        assert "the operator declined. Reason: wrong recipient" in text  # the model saw the reason
    assert await pending_total(db_path) == 0


async def test_keys_right_after_the_dialog_opens_go_back_to_the_prompt(db_path):
    clock = FakeClock()
    app = demo_app(db_path, approval_guard=0.3, clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete record abc-125")
        # Typing just happened: the call is announced, its dialog waits for a pause.
        await wait_for(pilot, lambda: app.run_screen.waiting, "call announced in the banner")
        assert not isinstance(app.screen, ApprovalModal)
        clock.advance(1.1)
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog opens once typing paused")
        await pilot.press("y", "n")  # typeahead within the guard interval: bounced to the prompt
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal), "dialog back to the banner")
        assert app.decisions == 0 and app.run_screen.prompt_text == "yn"
        assert app.run_screen.waiting  # still announced, still pending
        clock.advance(2)
        await pilot.pause(0.3)
        assert not isinstance(app.screen, ApprovalModal)  # held: the prompt holds text
        await pilot.press("f2")  # deliberate
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog on f2")
        clock.advance(0.6)  # past the guard and not part of a burst (f2 was 0.6 s ago)
        await pilot.press("y")
        await wait_for(pilot, lambda: "deleted=True" in log_text(app), "approved after the guard")
        assert app.run_screen.prompt_text == "yn"


async def test_form_shows_validation_error_then_submits(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "what's the weather")
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "input form")
        form = app.screen
        assert "Which city" in str(form.query_one("#question", Static).render())
        assert [f.name for f in form.fields] == ["city", "units"]
        await pilot.press("ctrl+s")  # city is empty
        error = form.query_one("#error-city", Static)
        await wait_for(pilot, lambda: "required" in str(error.render()).lower(), "inline error on city")
        assert app.screen is form  # still pending, still open
        city = form.query_one("#field-city", Input)
        city.focus()
        await wait_for(pilot, lambda: app.focused is city, "city focused")
        await pilot.press(*"Paris")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "get_weather returned city=Paris" in log_text(app), "resumed tool result")
        assert not isinstance(app.screen, ResumeFormModal)
    assert await pending_total(db_path) == 0


async def test_relaunch_resumes_a_run_suspended_by_an_earlier_app(db_path):
    first = demo_app(db_path)
    async with first.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete record def-200")
        await wait_for(pilot, lambda: showing(first, ApprovalModal), "approval dialog")
        await pilot.press("escape")  # leave it pending and quit
        await wait_for(pilot, lambda: not isinstance(first.screen, ApprovalModal), "dialog closed")
    assert "def-200" in list_records(records_path(db_path))

    second = demo_app(db_path)
    async with second.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: isinstance(second.screen, PendingPicker) and second.screen.loads >= 1, "picker on relaunch"
        )
        picker = second.screen
        assert len(picker.calls) == 1 and picker.query_one(DataTable).row_count == 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(second, ApprovalModal), "dialog of the stored run")
        assert second.screen.call.args == {"record_id": "def-200"}
        await pilot.press("y")
        await wait_for(pilot, lambda: "deleted=True, record_id=def-200" in log_text(second), "resumed run")
    assert "def-200" not in list_records(records_path(db_path))
    assert await pending_total(db_path) == 0


async def test_decision_by_another_process_disappears_from_the_picker(db_path):
    run_a, run_b = await suspend_runs(db_path, [("ops", "delete record abc-124"), ("ops", "refund order o-9 for 500")])
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "picker")
        picker = app.screen
        await wait_for(pilot, lambda: set(picker.calls) == {f"{run_a}:call_0_0", f"{run_b}:call_0_0"}, "two rows")
        env = {**os.environ, "WARDEN_DEMO_DELAY": "0"}
        result = subprocess.run(
            [sys.executable, "-m", "warden_cli", "runs", "approve", run_a, "--db", str(db_path)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert "status: finished" in result.stdout
        await wait_for(pilot, lambda: set(picker.calls) == {f"{run_b}:call_0_0"}, "row of run A gone")
        assert picker.query_one(DataTable).row_count == 1


async def test_decide_from_the_picker_with_y_and_n(db_path):
    await suspend_runs(db_path, [("ops", "delete record abc-123"), ("supervisor", "find user 12345")])
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "picker")
        picker = app.screen
        await wait_for(pilot, lambda: len(picker.calls) == 2, "two rows")
        first = picker.focused_call
        await pilot.press("n")  # asks for a reason, like the dialog
        await wait_for(pilot, lambda: showing(app, ApprovalModal) and app.screen.declining, "decline mode")
        await pilot.press(*"dup", "enter")
        await wait_for(pilot, lambda: first.key not in picker.calls, "declined row gone")
        second = picker.focused_call
        assert second is not None and second.run_id != first.run_id
        await pilot.press("y")
        await wait_for(pilot, lambda: not picker.calls, "approved row gone")
        await wait_for(pilot, lambda: app.streams_done >= 2, "both streams consumed")
        text = log_text(app)
        assert "operator declined" in text and "dup" in text
    assert await pending_total(db_path) == 0


async def test_supervisor_sub_agent_approval_shows_the_agent_path(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        app.run_screen.query_one("#agent-picker").value = "supervisor"
        await type_prompt(pilot, "find user 12345")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        assert app.screen.call.agent_path == ("supervisor", "data-agent")
        assert "supervisor › data-agent" in str(app.screen.query_one("#context", Static).render())
        await pilot.press("y")
        await wait_for(pilot, lambda: "Ada Lovelace" in log_text(app), "sub-agent result reached the supervisor")


async def test_refund_policy_gates_only_large_amounts(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "refund order ord-1 for 50")
        await wait_for(pilot, lambda: "status=issued" in log_text(app), "small refund ran without approval")
        assert not isinstance(app.screen, ApprovalModal)
        await type_prompt(pilot, "refund order ord-1042 for 250")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "large refund needs approval")
        assert app.screen.call.args == {"order_id": "ord-1042", "amount": 250}


async def test_picker_pages_through_many_pending_runs(db_path):
    """1,000 pending runs: the picker holds one page of rows and pages with the indexed query."""
    import dataclasses

    [run_id] = await suspend_runs(db_path, [("ops", "delete record abc-123")])
    async with demo_runtime(db_path) as runtime:
        store = runtime.store
        run = await store.get_run(run_id)
        calls = await store.get_calls(run_id)
        for i in range(999):
            rid = f"copy-{i:04d}"
            await store.save_suspended(
                dataclasses.replace(run, run_id=rid, suspended_at=run.suspended_at - 1 - i),
                [dataclasses.replace(c, run_id=rid) for c in calls],
            )
    app = demo_app(db_path, per_page=50, picker_refresh=0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.loads >= 1, "picker")
        picker = app.screen
        assert picker.total == 1000 and len(picker.calls) == 50
        assert picker.query_one(DataTable).row_count == 50
        assert f"{run_id}:call_0_0" in picker.calls  # newest first
        for _ in range(19):
            loads = picker.loads
            await pilot.press("right_square_bracket")
            await wait_for(pilot, lambda loads=loads: picker.loads > loads, "next page")
        assert picker.page == 19 and "copy-0998:call_0_0" in picker.calls  # the oldest
        assert "page 20 of 20" in str(picker.query_one("#picker-status").render())
        loads = picker.loads
        await pilot.press("right_square_bracket")  # already on the last page: nothing to load
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: picker.loads > loads, "previous page")
        assert picker.page == 18
