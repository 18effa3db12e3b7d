"""Operator power in the console (issue 12), on the real runtime and a real SQLite file, with Pilot:
edit then approve, the grant choice, the grants screen, the sweep, and the time left."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static, TextArea

from tests.console.conftest import demo_app, demo_runtime, log_text, showing, type_prompt, wait_for
from tui.screens.approval import ApprovalModal
from tui.screens.edit_args import EditArgsModal, editable_json, parse_args
from tui.screens.grant_choice import GrantChoiceModal
from tui.screens.grants import GrantsScreen
from warden_demo.records import list_records, records_path

SIZE = (120, 40)
EMAIL = "send an email to ana@example.com saying hello"


def notified(app, text: str) -> bool:
    return any(text in n.message or text in (n.title or "") for n in app._notifications)


async def pending_total(db_path: Path) -> int:
    async with demo_runtime(db_path) as runtime:
        return (await runtime.list_suspended_runs()).total


async def audit_decisions(db_path: Path) -> list[str]:
    async with demo_runtime(db_path) as runtime:
        return [e.decision for e in (await runtime.audit_log()).entries]


async def open_editor(pilot, prompt: str) -> EditArgsModal:
    app = pilot.app
    await type_prompt(pilot, prompt)
    await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
    await wait_for(pilot, lambda: app.screen.context_loaded, "context")
    await pilot.press("e")
    await wait_for(pilot, lambda: showing(app, EditArgsModal), "argument editor")
    return app.screen


# -- edit, then approve ------------------------------------------------------------------------------
async def test_edited_args_are_what_the_tool_runs_with(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, "delete record abc-123")
        area = editor.query_one(TextArea)
        assert parse_args(area.text) == ({"record_id": "abc-123"}, "")  # prefilled with the call's args
        area.text = '{"record_id": "abc-124"}'
        await pilot.press("ctrl+s")
        ran = '✓ delete_record → {"deleted": true, "record_id": "abc-124"}'
        await wait_for(pilot, lambda: ran in log_text(app), "tool ran, edited")
        assert not app.screen_stack[1:], "editor and dialog closed"
        text = log_text(app)
        assert 'approved with edited args by root: delete_record — {"record_id": "abc-124"}' in text.replace(
            app.actor_label, "root"
        )
        assert "The operator changed the arguments" in text  # the model was told
        assert not app.run_screen.pending.calls
    records = list_records(records_path(db_path))
    assert "abc-124" not in records and "abc-123" in records  # the edit ran, not the original
    assert "edited" in await audit_decisions(db_path)


@pytest.mark.parametrize("blink", [False, True])
async def test_the_editor_blinks_only_if_the_console_does(db_path, blink):
    """``cursor_blink=False`` (snapshots) holds in the argument editor too: a blinking cursor is
    hidden half of each second, and a snapshot taken on a loaded machine caught it hidden."""
    app = demo_app(db_path, cursor_blink=blink)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, "delete record abc-126")
        assert editor.query_one(TextArea).cursor_blink is blink


async def test_invalid_edits_show_inline_and_the_call_stays_pending(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(pilot, "delete record abc-125")
        area = editor.query_one(TextArea)
        error = editor.query_one("#edit-error", Static)
        area.text = '{"record_id": '
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "not valid JSON" in str(error.render()), "JSON error inline")
        area.text = '{"id": "abc-125"}'  # valid JSON, fails the tool's input schema (record_id required)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "AGENT_TOOL_ARGS_INVALID" in str(error.render()), "schema error inline")
        assert "record_id" in str(error.render())
        assert app.screen is editor and app.decisions == 0
        await pilot.press("escape")  # back to the dialog: the call is still there to decide
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "back to the dialog")
        assert len(app.run_screen.pending.calls) == 1
    assert "abc-125" in list_records(records_path(db_path))
    assert await pending_total(db_path) == 1
    assert "edited" not in await audit_decisions(db_path)


def test_the_editor_shows_hidden_characters_as_json_escapes():
    text = editable_json({"to": "a\u202eb\u200bc", "emoji": "\U000e0041"})
    assert "\\u202e" in text and "\\u200b" in text and "\\udb40\\udc41" in text
    assert parse_args(text)[0] == {"to": "a\u202eb\u200bc", "emoji": "\U000e0041"}  # same value back
    assert parse_args("[1]")[1].startswith("the arguments must be a JSON object")


# -- grants -----------------------------------------------------------------------------------------
async def test_grant_choice_creates_the_grant_approves_and_covers_the_next_call(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, EMAIL)
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        await wait_for(pilot, lambda: app.screen.context_loaded, "context")
        await pilot.press("g")
        await wait_for(pilot, lambda: showing(app, GrantChoiceModal), "grant choice")
        choice = app.screen
        rule = choice.query_one("#grant-rule", Static)
        assert "allow send_email with to=ana@example.com" in str(rule.render())
        assert "in run" in str(rule.render()) and "for 1 hour" in str(rule.render())
        # every run of the agent, only this recipient (subject and body not pinned), for 15 minutes
        await pilot.click("#scope-agent")
        await pilot.click("#duration-0")
        for i, name in enumerate(choice.call.args):
            if name != "to":
                await pilot.click(f"#pin-{i}")
        expected = "allow send_email with to=ana@example.com for every run of agent ops for 15 minutes"
        await wait_for(pilot, lambda: expected in str(rule.render()), "the rule in words follows the choice")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "sent=True" in log_text(app), "this call approved and run")
        assert "approved and granted by" in log_text(app) and expected in log_text(app)
        [grant] = await app.backend.runtime.list_grants()
        assert (grant.scope, grant.agent_id, grant.args_match) == ("agent", "ops", {"to": "ana@example.com"})
        assert 14 * 60 < (grant.expires_at - datetime.now(UTC)).total_seconds() <= 15 * 60
        # a second identical call runs without a dialog: the grant approved it
        before = app.streams_done
        await type_prompt(pilot, EMAIL)
        await wait_for(pilot, lambda: app.streams_done > before, "second run finished")
        assert not isinstance(app.screen, ApprovalModal) and log_text(app).count("sent=True") == 2
        assert not app.run_screen.pending.calls
    assert (await audit_decisions(db_path)).count("granted") == 1


async def test_the_grant_key_says_when_a_tool_allows_no_grants(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        app.backend.runtime.get_agent("ops").tools["send_email"].allow_grants = False
        await type_prompt(pilot, EMAIL)
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        await pilot.press("g")
        await wait_for(pilot, lambda: notified(app, "grants are not allowed for this tool"), "refusal shown")
        assert isinstance(app.screen, ApprovalModal) and await app.backend.runtime.list_grants() == []


async def test_grants_screen_lists_and_revokes_with_a_confirmation(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        runtime = app.backend.runtime
        kept = await runtime.grant("send_email", scope="thread", scope_id="t-42", args_match={"to": "ana@example.com"})
        gone = await runtime.grant("delete_record", scope="agent", agent_id="ops", expires_in=None, actor="alice")
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, GrantsScreen) and app.screen.loaded, "grants screen")
        screen = app.screen
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[0] == "allow send_email with to=ana@example.com in thread t-42 for 1 hour"
        assert "never" in str(table.get_row_at(1)[2]) and str(table.get_row_at(1)[1]) == "alice"
        table.move_cursor(row=1)
        await pilot.press("d")
        status = screen.query_one("#grants-status", Static)
        assert "Revoke allow delete_record" in str(status.render())
        await pilot.press("n")  # keep it
        assert len(await runtime.list_grants()) == 2
        await pilot.press("d", "y")
        await wait_for(pilot, lambda: screen.loaded and table.row_count == 1, "revoked")
        assert [g.id for g in await runtime.list_grants()] == [kept.id]
        assert gone.id not in [g.id for g in screen.grants]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, GrantsScreen), "closed")
        # the command palette has it too
        [command] = [c for c in app.get_system_commands(app.screen) if c.title == "Grants"]
        app.call_later(command.callback)
        await wait_for(pilot, lambda: isinstance(app.screen, GrantsScreen), "grants from the palette")


# -- deadlines ----------------------------------------------------------------------------------------
async def test_the_console_sweep_expires_an_overdue_call_and_closes_its_dialog(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        app.backend.runtime.get_agent("ops").tools["delete_record"].approval_timeout = 0.05
        await type_prompt(pilot, "delete record def-201")
        # the call is announced with its (already past) deadline; the console's sweep expires it
        await wait_for(pilot, lambda: notified(app, "(expired, not declined)"), "dialog closed as expired")
        assert not isinstance(app.screen, ApprovalModal)
        assert not notified(app, "decided elsewhere")
        await wait_for(pilot, lambda: "expired (no decision before its deadline; not run)" in log_text(app), "logged")
        assert "declined" not in log_text(app)
        await wait_for(pilot, lambda: not app.run_screen.pending.calls, "left the list")
    assert "def-201" in list_records(records_path(db_path))  # fail-closed: the tool never ran
    assert await pending_total(db_path) == 0
    assert "expired" in await audit_decisions(db_path)


async def test_time_left_and_the_warning_under_a_minute(db_path):
    wall = [datetime.now(UTC)]
    app = demo_app(db_path, now=lambda: wall[0])
    bells: list[int] = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        app.backend.runtime.get_agent("ops").tools["delete_record"].approval_timeout = 600
        await type_prompt(pilot, "delete record abc-123")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        modal = app.screen
        deadline = modal.query_one("#deadline", Static)
        expires_at = modal.call.expires_at
        assert expires_at is not None and "left" in str(deadline.render())
        panel = app.run_screen.pending
        app.run_screen.tick_deadlines()
        assert "left" in str(panel.get_option_at_index(0).prompt)
        bells.clear()
        wall[0] = expires_at - timedelta(seconds=30)
        app.run_screen.tick_deadlines()
        modal.update_deadline()
        assert "30s left" in str(deadline.render())
        assert any("red" in str(span.style) for span in deadline.render().spans)  # the warning style
        assert "delete_record expires in 30s: decide now" in log_text(app) and bells == [1]
        app.run_screen.tick_deadlines()
        assert log_text(app).count("expires in") == 1 and bells == [1]  # warned once
        await pilot.press("escape")


async def test_deciding_after_the_deadline_says_expired_not_an_error(db_path):
    app = demo_app(db_path)

    async def no_sweep() -> int:  # another process is slow to sweep: the operator decides too late
        return 0

    async with app.run_test(size=SIZE) as pilot:
        runtime = app.backend.runtime
        runtime.sweep = no_sweep
        runtime.get_agent("ops").tools["delete_record"].approval_timeout = 0.2
        await type_prompt(pilot, "delete record abc-125")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        expires_at = app.screen.call.expires_at
        await wait_for(pilot, lambda: datetime.now(UTC) > expires_at + timedelta(seconds=0.05), "deadline passed")
        await pilot.press("y")
        await wait_for(pilot, lambda: notified(app, "(expired, not declined)"), "expired message")
        assert not app.run_screen.pending.calls and app.decisions == 0
        assert type(app.screen).__name__ == "RunScreen"  # a message, no error modal
    assert "abc-125" in list_records(records_path(db_path))


def test_the_expired_chunk_is_logged_as_expired():
    from agent_core.chunks import make_chunk
    from tui.components.render import render_chunk

    chunk = make_chunk(
        "tool-call-expired",
        "r1",
        tool_call_id="c0",
        tool_name="send_email",
        args={"to": "ana@example.com"},
        expired_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    line = render_chunk(chunk)
    assert line is not None and line.plain == "⌛ expired (no decision before its deadline; not run): send_email"


def test_a_result_approved_by_a_grant_says_which_grant():
    """A call no one was asked about says which grant let it run (the grants screen revokes it)."""
    from agent_core.chunks import make_chunk
    from tui.components.render import render_chunk

    def line(**extra: object) -> str:
        chunk = make_chunk(
            "tool-result", "r1", tool_call_id="c0", tool_name="send_email", result={"sent": True}, **extra
        )
        rendered = render_chunk(chunk)
        assert rendered is not None
        return rendered.plain

    assert line(grant_id="g-5f1e2d3c4b5a").endswith("(approved by grant g-5f1e2d)")
    assert "grant" not in line()
