"""Screens driven with the scripted backend (no storage): wiring of dialogs to backend calls."""

from __future__ import annotations

from tests.console.conftest import showing, type_prompt, wait_for
from tests.console.fakes import FP, NOW, FakeBackend, sample_pending
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.picker import PendingPicker


def make_app(backend, **kw):
    return WardenApp(
        backend,
        ConsoleSettings(
            approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False, **kw
        ),
    )


async def test_approve_sends_the_fingerprint_that_was_shown():
    backend = FakeBackend()
    app = make_app(backend)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_prompt(pilot, "delete record abc-123")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        assert app.screen.call.fingerprint == FP
        await pilot.press("y")
        await wait_for(pilot, lambda: any(c[0] == "approve" for c in backend.calls), "approve call")
        assert ("approve", ("run-0001", "call_0_0", FP)) in backend.calls


async def test_escape_leaves_the_call_pending():
    backend = FakeBackend()
    app = make_app(backend)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_prompt(pilot, "delete record abc-123")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal), "dialog closed")
        assert [c[0] for c in backend.calls if c[0] != "context"] == ["start"]
        assert list(app.run_screen.pending.calls) == ["run-0001:call_0_0"]
        await pilot.press("f2")  # reopen from the pending panel
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog reopened")


async def test_picker_lists_every_pending_call_and_pages():
    backend = FakeBackend(sample_pending())
    app = make_app(backend, per_page=3)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "picker")
        picker = app.screen
        await wait_for(pilot, lambda: len(picker.calls) == 3, "first page")
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: len(picker.calls) == 1 and picker.page == 1, "second page")
        assert "page 2 of 2" in str(picker.query_one("#picker-status").render())
