"""SVG snapshots of the main screens (pytest-textual-snapshot; sync tests by design).

The scripted backend gives fixed run ids, fingerprints and times, the clock is
frozen and the cursor does not blink, so the SVGs are identical run after run.
Update them with ``pytest tests/console/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from tests.console.conftest import showing, wait_for
from tests.console.fakes import NOW, FakeBackend, approval_call, input_call, sample_pending
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.help import HelpScreen
from tui.screens.picker import PendingPicker
from tui.screens.resume_form import ResumeFormModal

SIZE = (110, 34)
HOSTILE_ARGS = {
    "title": "\x1b]0;PWNED\x07",
    "click": "[@click=app.quit]x[/]",
    "var": "[$accent]x",
    "rlo": "\u202e",
}


def make_app(backend: FakeBackend) -> WardenApp:
    return WardenApp(
        backend,
        ConsoleSettings(approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )


def test_run_screen_mid_stream(snap_compare):
    backend = FakeBackend(hold_after=14)

    async def run_before(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "prompt", "prompt focused")
        await pilot.press(*"delete record abc-123", "enter")
        await wait_for(pilot, lambda: app.run_screen.chunks_seen == 14, "stream held mid-way")
        app.run_screen.log_view.flush()

    assert snap_compare(make_app(backend), terminal_size=SIZE, run_before=run_before)


def _open(call, *keys: str):
    async def run_before(pilot):
        app = pilot.app
        app.open_dialog(call)
        await wait_for(pilot, lambda: showing(app, ApprovalModal | ResumeFormModal), "dialog")
        if isinstance(app.screen, ApprovalModal):
            await wait_for(pilot, lambda: app.screen.context_loaded, "context")
        if keys:
            await pilot.press(*keys)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    return run_before


LONG_ARGS = {f"field_{i:02d}": f"value number {i}" for i in range(48)}  # 50 lines of pretty JSON
SIZES = {"80x24": (80, 24), "140x40": (140, 40)}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case", ["short", "long", "declining"])
def test_approval_dialog_fits(snap_compare, size, case):
    """Buttons, fingerprint and the reason field stay visible; only the arguments scroll."""
    args = LONG_ARGS if case == "long" else None
    keys = ("n", *"duplicate") if case == "declining" else ()
    run_before = _open(approval_call(args=args), *keys)
    assert snap_compare(make_app(FakeBackend()), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_input_form_fits(snap_compare, size):
    assert snap_compare(make_app(FakeBackend()), terminal_size=SIZES[size], run_before=_open(input_call()))


def test_approval_modal(snap_compare):
    assert snap_compare(make_app(FakeBackend()), terminal_size=SIZE, run_before=_open(approval_call()))


def test_approval_modal_with_hostile_args(snap_compare):
    call = approval_call(args=HOSTILE_ARGS, tool="delete_record\u202e")
    assert snap_compare(make_app(FakeBackend()), terminal_size=SIZE, run_before=_open(call))


def test_suspend_form_with_an_error(snap_compare):
    async def run_before(pilot):
        app = pilot.app
        app.open_dialog(input_call())
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "form")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "required" in str(app.screen.query_one("#error-city").render()), "error")

    assert snap_compare(make_app(FakeBackend()), terminal_size=(110, 40), run_before=run_before)


def test_relaunch_picker_with_several_runs(snap_compare):
    async def run_before(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.loads >= 1, "picker")
        await wait_for(pilot, lambda: app.screen.preview_loaded, "the preview shows the call's context")

    assert snap_compare(make_app(FakeBackend(sample_pending())), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare):
    async def run_before(pilot):
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), "help")

    assert snap_compare(make_app(FakeBackend()), terminal_size=(110, 44), run_before=run_before)


def _sub_screen(call, key: str, screen_type, then=None):
    async def run_before(pilot):
        app = pilot.app
        app.open_dialog(call)
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog")
        await wait_for(pilot, lambda: app.screen.context_loaded, "context")
        await pilot.press(key)
        await wait_for(pilot, lambda: showing(app, screen_type), key)
        if then is not None:
            await then(pilot)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    return run_before


def deadline_call():
    call = approval_call(tool="send_email", args={"to": "ana@example.com", "subject": "Invoice 42", "body": "Hi Ana"})
    return replace(call, expires_at=NOW + timedelta(seconds=45))


def test_approval_dialog_with_time_left_80x24(snap_compare):
    """A deadline under a minute: the time left, in the warning style, above the context."""
    assert snap_compare(make_app(FakeBackend()), terminal_size=(80, 24), run_before=_open(deadline_call()))


def test_edit_args_view_80x24(snap_compare):
    from textual.widgets import TextArea

    from tui.screens.edit_args import EditArgsModal

    async def invalid_edit(pilot):
        pilot.app.screen.query_one(TextArea).text = '{\n  "to": "bob@example.org",\n  "subject": \n}'
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: "not valid JSON" in str(pilot.app.screen.query_one("#edit-error").render()), "err"
        )

    run_before = _sub_screen(deadline_call(), "e", EditArgsModal, invalid_edit)
    assert snap_compare(make_app(FakeBackend()), terminal_size=(80, 24), run_before=run_before)


def test_grant_choice_80x24(snap_compare):
    from tui.screens.grant_choice import GrantChoiceModal

    run_before = _sub_screen(deadline_call(), "g", GrantChoiceModal)
    assert snap_compare(make_app(FakeBackend()), terminal_size=(80, 24), run_before=run_before)
