"""No decision by accident: typing never approves or declines, and no typed character is lost.

The issue's scenario: the operator sends ``delete record abc-125`` and keeps
typing ``please check the status of my orders`` at about 10 keys/s while the
gated call arrives. Before, the dialog opened mid-sentence, took the focus, and
the ``y`` of "my" approved the delete.
"""

from __future__ import annotations

import itertools

from tests.console.conftest import FakeClock, demo_app, log_text, showing, type_prompt, wait_for
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.typing_guard import TypingGuard
from warden_demo.agents import build_demo_runtime
from warden_demo.model import DemoModel

SIZE = (120, 36)
SENTENCE = "please check the status of my orders, yes now"


async def _pending(db_path) -> int:
    runtime = build_demo_runtime(db_path, model=DemoModel(delay=0))
    async with runtime:
        return (await runtime.list_suspended_runs()).total


def test_guard_rules():
    clock = FakeClock()
    guard = TypingGuard(clock, quiet=1.0, open_guard=0.8, burst_gap=0.5)
    assert not guard.typing()
    guard.key_pressed()
    assert guard.typing()
    clock.advance(1.0)
    assert not guard.typing()
    opened = clock()
    clock.advance(0.3)
    guard.key_pressed()
    assert not guard.may_act(opened)  # within the open guard
    clock.advance(0.9)
    guard.key_pressed()
    assert guard.may_act(opened)  # a deliberate key: a pause before it, dialog open long enough
    clock.advance(0.1)
    guard.key_pressed()
    assert not guard.may_act(opened)  # part of a burst


async def test_typing_at_10_keys_a_second_while_a_call_arrives_decides_nothing(db_path):
    """Simulated clock: 80-120 ms per key; the gated call arrives mid-sentence."""
    clock = FakeClock()
    app = demo_app(db_path, approval_guard=0.8, typing_quiet=1.0, burst_gap=0.5, clock=clock)
    gaps = itertools.cycle([0.08, 0.1, 0.12])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "prompt", "prompt focused")
        half = len(SENTENCE) // 2
        for ch in SENTENCE[:half]:
            clock.advance(next(gaps))
            await pilot.press(ch)
        app.start_run("ops", "delete record abc-125")  # the gated call arrives now, mid-sentence
        await wait_for(pilot, lambda: app.run_screen.waiting, "call announced")
        for ch in SENTENCE[half:]:
            clock.advance(next(gaps))
            await pilot.press(ch)
            await pilot.pause()
            assert not isinstance(app.screen, ApprovalModal), "a dialog took the focus mid-sentence"
        assert app.run_screen.prompt_text == SENTENCE
        assert app.decisions == 0
        assert "deleted" not in log_text(app)
        assert "waits for your approval" in str(app.run_screen.query_one("#waiting-banner").render())

        # Typing paused: the dialog opens. Typing resumes at once: the keys bounce back to the prompt.
        clock.advance(1.1)
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog after the pause")
        for ch in " ny":
            clock.advance(next(gaps))
            await pilot.press(ch)
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal), "dialog back to the banner")
        await pilot.pause(0.1)
        assert app.run_screen.prompt_text == SENTENCE + " ny"
        assert app.decisions == 0
    assert await _pending(db_path) == 1


async def test_real_pauses_the_issue_scenario(db_path):
    """Real time: 100 ms per key after sending the request; the demo model answers in 0.3 s."""
    from tui.app import WardenApp
    from tui.backend import LocalBackend

    runtime = build_demo_runtime(db_path, model=DemoModel(delay=0.3))
    app = WardenApp(
        LocalBackend(runtime),
        ConsoleSettings(picker_refresh=0, pending_refresh=0, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete record abc-125")
        for ch in "please check the status of my orders":
            await pilot.press(ch)
            await pilot.pause(0.1)
            assert not isinstance(app.screen, ApprovalModal)
        assert app.run_screen.prompt_text == "please check the status of my orders"
        await wait_for(pilot, lambda: app.run_screen.waiting or isinstance(app.screen, ApprovalModal), "call")
        assert app.decisions == 0
        assert "deleted" not in log_text(app)
    assert await _pending(db_path) == 1


async def test_typing_resumed_long_after_the_dialog_opened_is_not_lost(db_path):
    """A space (or any key the dialog does not bind) after a long pause: back to the prompt, not a button."""
    clock = FakeClock()
    app = demo_app(db_path, approval_guard=0.8, typing_quiet=1.0, burst_gap=0.5, clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete record abc-125")
        await pilot.press(*"check my")
        await wait_for(pilot, lambda: app.run_screen.waiting, "announced")
        clock.advance(1.1)
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog after the pause")
        clock.advance(5)  # the operator looks away, then goes on typing
        for ch in [" ", "o", "r", "d"]:
            await pilot.press("space" if ch == " " else ch)
            clock.advance(0.1)
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal), "dialog back to the banner")
        await pilot.pause(0.1)
        assert app.run_screen.prompt_text == "check my ord"
        assert app.decisions == 0
    assert await _pending(db_path) == 1
