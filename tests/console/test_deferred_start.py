"""The console's first frame does not wait for the runtime (``DeferredBackend``), driven with Pilot."""

from __future__ import annotations

import threading

from textual.widgets import Select

from tests.console.conftest import demo_runtime, log_text, released, showing, suspend_runs, type_prompt, wait_for
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings
from tui.deferred_backend import DeferredBackend
from tui.screens.approval import ApprovalModal
from tui.screens.error import ErrorModal
from tui.screens.picker import PendingPicker
from tui.store_peek import SqlitePeek

SIZE = (120, 40)


def options(**kw):
    base = dict(approval_guard=0, picker_refresh=0, pending_refresh=0, status_refresh=0, cursor_blink=False)
    base.update(kw)
    return base


async def test_the_runtime_loads_after_the_first_frame_then_agents_and_pending_runs_appear(db_path):
    await suspend_runs(db_path, [("ops", "delete record abc-123")])
    gate = threading.Event()
    loaded_in: list[str] = []

    def load():
        gate.wait()  # held until the first frame is up: nothing of the console waits for it
        loaded_in.append(threading.current_thread().name)
        return LocalBackend(demo_runtime(db_path), store_label=str(db_path))

    backend = DeferredBackend(load)
    app = WardenApp(backend, ConsoleSettings(**options()))
    async with app.run_test(size=SIZE) as pilot, released(gate):
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "prompt", "prompt focused")
        screen = app.run_screen
        assert backend.loaded is None and screen.agents == [] and screen.agent_id is None
        # no selector to choose from yet: its place is kept, and it says why
        assert not screen.query("#agent-picker") and "loading agents" in str(
            screen.query_one("#agent-loading").render()
        )
        gate.set()
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.calls, "picker")
        assert loaded_in and loaded_in[0] != threading.main_thread().name  # off the event loop
        assert [a.id for a in screen.agents] == ["ops", "supervisor"] and screen.agent_id == "ops"
        assert not screen.query("#agent-loading") and screen.query_one("#agent-picker", Select).value == "ops"
        assert screen.status.model  # the selected agent's model, as with a runtime loaded before the first frame
        assert str(db_path) in screen.status.store
        assert "delete record abc-123" in log_text(app)  # the welcome and its examples, once loaded
        await pilot.press("escape")
        await type_prompt(pilot, "delete record abc-124")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog from the loaded runtime")


async def test_a_runtime_that_fails_to_load_is_one_error_dialog(db_path):
    def load():
        raise RuntimeError("no such app")

    app = WardenApp(DeferredBackend(load), ConsoleSettings(**options()))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorModal), "error dialog")
        assert "no such app" in app.screen.message


async def test_a_sqlite_store_lists_its_pending_runs_before_the_runtime_is_loaded(db_path):
    """The picker opens on the file's first page (``SqlitePeek``) while the runtime has not
    loaded; a decision taken there waits for the runtime, then applies."""
    await suspend_runs(db_path, [("ops", "delete record abc-123"), ("ops", "delete record abc-124")])
    expected = await LocalBackend(demo_runtime(db_path)).list_pending(with_counts=True)
    gate = threading.Event()

    def load():
        gate.wait()
        return LocalBackend(demo_runtime(db_path), store_label=str(db_path))

    backend = DeferredBackend(load, peek=SqlitePeek(str(db_path)).list_pending)
    app = WardenApp(backend, ConsoleSettings(**options()))
    async with app.run_test(size=SIZE) as pilot, released(gate):
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.calls, "picker")
        picker = app.screen
        assert backend.loaded is None  # listed from the file alone
        # the same page as the runtime's listing: calls, kinds, counts
        assert list(picker.calls.values()) == [c for r in expected.runs for c in r.calls]
        assert picker.total == 2 and picker.counts == expected.counts == {"approval": 2, "input": 0}
        assert app.run_screen.status.pending == 2
        await pilot.press("y")  # approves the first row: waits for the runtime
        gate.set()
        await wait_for(pilot, lambda: app.decisions == 1 and picker.total == 1, "decision applied, listed again")
        assert backend.loaded is not None
        remaining = await backend.list_pending()
        assert [r.run_id for r in remaining.runs] == [r.run_id for r in expected.runs][1:]


async def test_warden_on_a_file_with_pending_runs_opens_on_the_picker(db_path, tmp_path):
    """``warden --db F``: the first page is read before the app starts (``any_pending`` first,
    with sqlite3 alone), the picker is the first screen, and the runtime loads after it."""
    from tui.console_start import _first_page, console_backend
    from warden_demo.runtime_choice import Settings

    assert _first_page(Settings(db=tmp_path / "none.db")) is None  # no file: the console opens as usual
    assert not SqlitePeek(str(tmp_path / "none.db")).any_pending()
    await suspend_runs(db_path, [("ops", "delete record abc-123"), ("ops", "delete record abc-124")])
    settings = Settings(db=db_path)
    assert SqlitePeek(str(db_path)).any_pending()
    page = _first_page(settings)
    assert page is not None and page.total == 2 and page.counts == {"approval": 2, "input": 0}
    backend = console_backend(settings)
    assert isinstance(backend, DeferredBackend)
    app = WardenApp(backend, ConsoleSettings(**options(pending_refresh=60)), first_page=page)  # no poll during the test
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.loads, "picker")
        assert app.screen.loads == 1 and [c.tool_call_id for c in app.screen.calls.values()] == [
            c.tool_call_id for r in page.runs for c in r.calls
        ]
        await wait_for(pilot, lambda: backend.loaded is not None, "runtime loaded after the picker")
        # the same page filled the panel and the count: the store was not read again for them
        assert app.run_screen.status.pending == 2 and len(app.run_screen.pending.calls) == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.run_screen, "run screen")
        assert [a.id for a in app.run_screen.agents] == ["ops", "supervisor"]


async def test_the_status_bar_names_the_file_from_the_first_frame(db_path):
    """The label the loaded runtime gives is known before it loads: the bar does not change under the operator."""
    from tui.console_start import console_backend
    from warden_demo.runtime_choice import Settings

    backend = console_backend(Settings(db=db_path))
    assert isinstance(backend, DeferredBackend) and backend.loaded is None
    app = WardenApp(backend, ConsoleSettings(**options(pending_refresh=60)))
    async with app.run_test(size=SIZE) as pilot:
        assert app.run_screen.status.store == str(db_path)
        await wait_for(pilot, lambda: backend.loaded is not None, "runtime loaded")
        assert backend.store_label == str(db_path) and app.run_screen.status.store == str(db_path)
        await wait_for(pilot, lambda: app.run_screen.agent_id == "ops", "the agent selector, mounted with the agents")


def test_the_bare_console_reads_its_own_options_and_leaves_the_rest_to_the_full_cli():
    from warden_cli.main import _console_options

    assert _console_options([]) == {}
    assert _console_options(["--db", "w.db", "--model=openai:gpt-4o"]) == {"db": "w.db", "model": "openai:gpt-4o"}
    assert _console_options(["--app", "mod:make", "--db="]) == {"app": "mod:make", "db": ""}
    for argv in (["--db"], ["--db", "--app"], ["--db", "a", "--db", "b"], ["--help"], ["runs", "list"], ["--dbx", "a"]):
        assert _console_options(argv) is None, argv


def test_the_console_pauses_the_collector_only_until_its_first_frame(db_path, monkeypatch):
    """``warden``: the collector is off during start-up and back on once the first frame is up."""
    import gc

    from tui import console_start
    from warden_demo.runtime_choice import Settings

    seen: dict[str, bool] = {}
    run = WardenApp.run

    def run_headless(self: WardenApp) -> None:
        seen["off before the app runs"] = not gc.isenabled()

        async def pilot(p) -> None:  # type: ignore[no-untyped-def]
            await wait_for(p, lambda: gc.isenabled(), "collector back on")
            seen["first frame painted"] = self.screen.is_mounted and self.focused is not None
            self.exit()

        run(self, headless=True, auto_pilot=pilot)

    monkeypatch.setattr(WardenApp, "run", run_headless)
    try:
        console_start.open_console(Settings(db=db_path))
    finally:
        gc.enable()
        gc.unfreeze()
    assert seen == {"off before the app runs": True, "first frame painted": True}


async def test_the_other_screens_stylesheet_is_read_after_the_first_frame_or_before_their_first_push(db_path):
    """``screens.tcss`` is not parsed for the first frame; a dialog or the picker never opens unstyled."""
    from tui.app import SCREENS_CSS

    def loaded(app: WardenApp) -> bool:
        return app.stylesheet.has_source(str(SCREENS_CSS), "")

    at_first_frame: list[bool] = []
    app = WardenApp(LocalBackend(demo_runtime(db_path)), on_first_frame=lambda: at_first_frame.append(loaded(app)))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: loaded(app), "screens.tcss read once the first frame is up")
        assert at_first_frame == [False]

    # a picker opened before the first frame (pending runs at start) is styled by it
    await suspend_runs(db_path, [("ops", "delete record abc-123")])
    backend = LocalBackend(demo_runtime(db_path))
    page = await backend.list_pending(page=0, per_page=50, with_counts=True)
    app = WardenApp(backend, ConsoleSettings(**options()), first_page=page)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "picker")
        assert loaded(app)
        assert app.screen.query_one("#picker-preview").styles.height.value == 9  # a screens.tcss rule
