"""Every key goes where the operator meant, at every transition (issue 23), driven with Pilot.

The keys of each test arrive in one burst (``tests.console.keys.burst``): no pause between
them, as from a fast typist or ``tmux send-keys``. What was sent is what the backend was
asked to start (``RecordingBackend``); what remains is the prompt's text.
"""

from __future__ import annotations

import threading

from tests.console.conftest import FakeClock, demo_runtime, log_text, released, showing, suspend_runs, wait_for
from tests.console.keys import RecordingBackend, burst, keys_of
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings
from tui.deferred_backend import DeferredBackend
from tui.screens.approval import ApprovalModal
from tui.screens.picker import PendingPicker

SIZE = (120, 36)


def guarded(**kw: object) -> ConsoleSettings:
    """The console's real guard (open guard, quiet, burst) on a clock the test moves."""
    base: dict[str, object] = dict(
        approval_guard=0.8,
        typing_quiet=1.0,
        burst_gap=0.5,
        picker_refresh=0,
        pending_refresh=0,
        status_refresh=0,
        cursor_blink=False,
        # no picker opened by the start-up check over the runs a test starts (unless it asks)
        open_picker=False,
    )
    base.update(kw)
    return ConsoleSettings(**base)  # type: ignore[arg-type]


def recording(db_path, **kw: object) -> tuple[WardenApp, RecordingBackend]:
    """The console on the demo runtime, recording what it is asked to send."""
    backend = RecordingBackend(demo_runtime(db_path), store_label=str(db_path))
    return WardenApp(backend, guarded(**kw)), backend


def prompt_focused(app: WardenApp) -> bool:
    return app.focused is not None and app.focused.id == "prompt"


async def test_keys_typed_right_after_enter_go_to_the_next_message(db_path):
    """The issue's first case: ``delete record abc-771`` enter ``hello`` at once. Before, the
    enter acted after ``hello`` had reached the prompt: ``abc-771hello`` was sent."""
    app, backend = recording(db_path, clock=FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        burst(app, keys_of("delete record abc-771\nhello"))
        await wait_for(pilot, lambda: backend.sent and app.run_screen.pending.calls, "the run's gated call")
        await pilot.pause(0.05)
        assert backend.sent == [("ops", "delete record abc-771")]
        assert app.run_screen.prompt_text == "hello"
        (call,) = app.run_screen.pending.calls.values()
        assert call.args == {"record_id": "abc-771"}
        assert app.decisions == 0


async def test_two_messages_in_one_burst_are_two_runs(db_path):
    app, backend = recording(db_path, clock=FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        burst(app, keys_of("hello there\nhow are you\nand"))
        await wait_for(pilot, lambda: len(backend.sent) == 2 and app.streams_done == 2, "two runs")
        assert [p for _, p in backend.sent] == ["hello there", "how are you"]
        assert app.run_screen.prompt_text == "and"


async def test_enter_pressed_while_the_agents_load_sends_once_they_are_loaded(db_path):
    """The issue's second case: typed and sent while the selector says "loading agents…".
    Before, the enter was dropped and nothing said so."""
    gate = threading.Event()
    inner: list[RecordingBackend] = []

    def load() -> RecordingBackend:
        gate.wait()
        inner.append(RecordingBackend(demo_runtime(db_path), store_label=str(db_path)))
        return inner[0]

    backend = DeferredBackend(load)
    app = WardenApp(backend, guarded(clock=FakeClock()))
    async with app.run_test(size=SIZE) as pilot, released(gate):
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        assert app.run_screen.agent_id is None  # still loading
        burst(app, keys_of("delete record abc-777\nand"))
        await wait_for(pilot, lambda: "sent once the agents are loaded" in log_text(app), "said it waits")
        assert app.run_screen.prompt_text == "and"
        assert "you › delete record abc-777" in log_text(app)
        assert "queued" in app.run_screen.status.run_state
        gate.set()
        await wait_for(pilot, lambda: inner and inner[0].sent, "sent once loaded")
        assert inner[0].sent == [("ops", "delete record abc-777")]
        await wait_for(pilot, lambda: app.run_screen.pending.calls, "its gated call")
        (call,) = app.run_screen.pending.calls.values()
        assert call.args == {"record_id": "abc-777"}
        assert app.run_screen.prompt_text == "and"
        assert app.decisions == 0


async def test_keys_typed_before_the_console_is_ready_are_replayed_in_order(db_path):
    """Keys that reach the app before its first screen has the focus (a terminal typing into
    a console still starting) are kept and replayed, enter included."""
    backend = RecordingBackend(demo_runtime(db_path), store_label=str(db_path))

    class Early(WardenApp):
        def on_mount(self) -> None:
            burst(self, keys_of("delete record abc-778\nnext"))  # before the first frame
            super().on_mount()

    app = Early(backend, guarded(clock=FakeClock()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: backend.sent and app.run_screen.pending.calls, "sent")
        assert backend.sent == [("ops", "delete record abc-778")]
        await wait_for(pilot, lambda: app.run_screen.prompt_text == "next", "the rest in the prompt")


async def test_an_enter_typed_before_the_terminal_was_raw_still_sends(db_path):
    """Typed while ``warden`` was starting, before its terminal was raw: the line discipline
    turned the enter into a newline, which the console reads as ``ctrl+j`` (readline's enter)."""
    backend = RecordingBackend(demo_runtime(db_path), store_label=str(db_path))

    class Early(WardenApp):
        def on_mount(self) -> None:
            burst(self, [*"abc", "ctrl+j", *"d"])
            super().on_mount()

    app = Early(backend, guarded(clock=FakeClock()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: backend.sent and app.run_screen.prompt_text == "d", "sent, the rest kept")
        assert backend.sent == [("ops", "abc")]


async def test_enter_as_the_pickers_first_row_appears_opens_that_run(db_path):
    """The issue's third case: the console opens on the picker (pending runs in the file) and
    the operator presses enter as its first row appears. Before, the open guard bounced the
    enter: the picker closed without opening the run, its conversation was not replayed."""
    (run_id,) = await suspend_runs(db_path, [("ops", "delete record abc-779")])
    backend = LocalBackend(demo_runtime(db_path), store_label=str(db_path))
    page = await backend.list_pending(page=0, per_page=50, with_counts=True)
    clock = FakeClock()
    app = WardenApp(backend, guarded(clock=clock, open_picker=True), first_page=page)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.calls, "first row")
        burst(app, ["enter"])
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "the run's dialog")
        assert app.screen.call.run_id == run_id
        assert f"stored conversation of run {run_id}" in log_text(app)
        assert app.decisions == 0


async def test_enter_on_the_picker_while_the_runtime_loads_opens_the_run_when_it_can(db_path):
    """A picker listed from the file alone: enter on its first row says the run opens once the
    runtime has loaded, then opens it (never a silent wait)."""
    from tui.store_peek import SqlitePeek

    (run_id,) = await suspend_runs(db_path, [("ops", "delete record abc-780")])
    gate = threading.Event()

    def load() -> LocalBackend:
        gate.wait()
        return LocalBackend(demo_runtime(db_path), store_label=str(db_path))

    peek = SqlitePeek(str(db_path))
    page = peek.list_pending(page=0, per_page=50, with_counts=True)
    backend = DeferredBackend(load, peek=peek.list_pending)
    app = WardenApp(backend, guarded(clock=FakeClock(), open_picker=True), first_page=page)
    async with app.run_test(size=SIZE) as pilot, released(gate):
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.calls, "first row")
        burst(app, ["enter"])
        await wait_for(pilot, lambda: "once the runtime has loaded" in log_text(app), "said it waits")
        gate.set()
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "the run's dialog")
        assert app.screen.call.run_id == run_id


async def test_esc_on_a_dialog_then_typing_goes_to_the_prompt(db_path):
    """``esc`` closes the dialog before the next key is read: ``no thanks`` typed at once is
    the prompt's (before, the ``n`` could reach the dialog ahead of the esc and decline)."""
    clock = FakeClock()
    app, backend = recording(db_path, clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        burst(app, keys_of("delete record abc-781\n"))
        await wait_for(pilot, lambda: app.run_screen.waiting, "the call waits in the banner")
        clock.advance(5)  # a pause: the dialog opens, and a key may act on it after the guard
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog after the pause")
        clock.advance(2)
        burst(app, ["escape", *keys_of("no thanks")])
        await wait_for(pilot, lambda: app.run_screen.prompt_text == "no thanks", "typed into the prompt")
        assert app.screen is app.run_screen and app.decisions == 0
        assert len(app.run_screen.pending.calls) == 1  # still pending
        burst(app, ["enter"])
        await wait_for(pilot, lambda: len(backend.sent) == 2, "the next message sent")
        assert [p for _, p in backend.sent] == ["delete record abc-781", "no thanks"]
        assert app.decisions == 0


async def test_a_dialog_opening_while_typing_takes_none_of_the_keys(db_path):
    """The call's dialog is pushed between two keys of a burst, before it is shown: the keys
    around it are the prompt's, the enter sends them, nothing is decided."""
    clock = FakeClock()
    app, backend = recording(db_path, clock=clock)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        burst(app, keys_of("delete record abc-782\n"))
        await wait_for(pilot, lambda: app.run_screen.pending.calls, "gated call")
        (call,) = app.run_screen.pending.calls.values()
        burst(app, keys_of("yes n"))
        app.call_later(app.open_dialog, call, deliberate=True)  # between two keys of the burst
        burst(app, keys_of("o way\n"))
        await wait_for(pilot, lambda: len(backend.sent) == 2, "the second message sent")
        await pilot.pause(0.05)
        assert [p for _, p in backend.sent] == ["delete record abc-782", "yes no way"]
        assert app.run_screen.prompt_text == "" and app.decisions == 0
        assert call.key in app.run_screen.pending.calls


async def _reopened_while_typing(app, pilot, record: str):
    """Guard off: a gated call's dialog closed with ``esc``, then opened again as ``abc`` is typed;
    the keys read before the dialog is mounted go to the prompt. Returns the call."""
    await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
    burst(app, keys_of(f"delete record {record}\n"))
    await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog (no guard)")
    burst(app, ["escape"])
    await wait_for(pilot, lambda: app.screen is app.run_screen, "closed")
    (call,) = app.run_screen.pending.calls.values()
    app.call_later(app.open_dialog, call, deliberate=True)
    burst(app, keys_of("abc"))  # read before the dialog is mounted (then: typing it does not bind)
    await wait_for(pilot, lambda: app.run_screen.prompt_text == "abc", "the keys in the prompt, none lost")
    return call


async def test_the_same_with_the_guard_off_keys_before_the_dialog_is_shown_are_the_prompts(db_path):
    app, _ = recording(db_path, approval_guard=0, typing_quiet=0, burst_gap=0, clock=FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        call = await _reopened_while_typing(app, pilot, "abc-783")
        assert app.decisions == 0 and call.key in app.run_screen.pending.calls


async def test_keys_after_ctrl_o_wait_for_the_picker_then_move_and_open(db_path):
    """A screen opened by a key takes the keys typed after that key, once it is ready: ``ctrl+o``
    ``j`` ``enter`` at once opens the second row's run (held while the picker lists its page)."""
    await suspend_runs(db_path, [("ops", "delete record abc-784"), ("ops", "delete record abc-785")])
    app, backend = recording(db_path, clock=FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        burst(app, ["ctrl+o", "j", "enter"])
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "the second row's dialog")
        assert app.screen.call.args == {"record_id": "abc-784"}  # newest first: abc-785, then abc-784
        assert backend.sent == [] and app.run_screen.prompt_text == ""


async def test_the_waiting_dialog_timer_leaves_a_closing_run_screen_alone(db_path):
    """As the app closes, Textual takes the run screen's widgets down while the app's timers
    still tick: the timer that opens a waiting call's dialog finds no panel and does nothing
    (it raised ``NoMatches`` at the end of the test above on a loaded CI machine)."""
    app, _ = recording(db_path, approval_guard=0, typing_quiet=0, burst_gap=0, clock=FakeClock())
    async with app.run_test(size=SIZE) as pilot:
        call = await _reopened_while_typing(app, pilot, "abc-786")  # the dialog goes back to the banner
        assert [c.key for c in app.dialogs.waiting] == [call.key]
        # What Textual's shutdown does before the app's timers stop: the widgets go first.
        await app.run_screen.query_one("#prompt").remove()
        await app.run_screen.pending.remove()
        assert app.open_waiting_dialog() is False
        assert app.open_waiting_dialog(deliberate=True) is False
