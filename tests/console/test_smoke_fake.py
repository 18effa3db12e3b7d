"""Screens driven with the scripted backend (fast; no storage)."""

from __future__ import annotations

from tests.console.fakes import NOW, FakeBackend, sample_pending
from tui.app import WardenApp
from tui.screens.approval import ApprovalModal


def make_app(backend, **kw):
    return WardenApp(backend, approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0,
                     cursor_blink=False, **kw)


async def test_prompt_stream_and_approve_with_fake():
    backend = FakeBackend()
    app = make_app(backend)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"delete record abc-123", "enter")
        for _ in range(50):
            await pilot.pause(0.02)
            if isinstance(app.screen, ApprovalModal):
                break
        assert isinstance(app.screen, ApprovalModal)
        await pilot.press("y")
        await pilot.pause(0.1)
        assert ("approve", ("run-0001", "call_0_0", (app.screen_stack[0].pending.calls and None) or
                            "sha256:3f1c9a0b7e2d4c6a8b1e0f9d7c5a3b2e1d0c9b8a7f6e5d4c3b2a1908f7e6d5c4")) in backend.calls


async def test_picker_opens_when_pending():
    backend = FakeBackend(sample_pending())
    app = make_app(backend)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.2)
        assert type(app.screen).__name__ == "PendingPicker"
        assert app.screen.query_one("#pending-table").row_count == 4
