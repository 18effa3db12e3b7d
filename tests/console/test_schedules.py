"""The console's background schedules (``tui.components.schedules``), in a real Textual app."""

from __future__ import annotations

from textual.app import App

from tests.console.conftest import demo_app, wait_for
from tests.console.fakes import FakeBackend
from tui.app import WardenApp
from tui.components.schedules import Schedules
from tui.console_settings import ConsoleSettings


class Counting:
    """A ``Maintenance`` that counts its runs; the sweep reports an expired call once."""

    def __init__(self) -> None:
        self.recovered = 0
        self.swept = 0

    async def recover(self) -> int:
        self.recovered += 1
        return 0

    async def sweep(self) -> int:
        self.swept += 1
        return 1 if self.swept == 1 else 0


async def test_recovery_and_sweep_run_at_start_then_on_their_interval_and_on_demand():
    maintenance = Counting()
    expired: list[int] = []
    app: App[None] = App()
    async with app.run_test() as pilot:
        schedules = Schedules(app, maintenance, on_expired=lambda: expired.append(1), every=0.05)
        schedules.start()
        schedules.start()  # once only
        await wait_for(pilot, lambda: maintenance.recovered >= 3 and maintenance.swept >= 3, "three rounds")
        assert expired == [1]  # only the sweep that expired something asks for a new read
        before = maintenance.swept
        await schedules.sweep_now().wait()
        assert maintenance.swept > before


async def test_the_console_schedules_a_local_store_and_not_a_servers(db_path):
    app = demo_app(db_path)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.schedules is not None and app.schedules.started, "scheduled")
        assert app.schedules.maintenance is app.backend.runtime
    remote_like = WardenApp(FakeBackend(), ConsoleSettings(picker_refresh=0, status_refresh=0, cursor_blink=False))
    async with remote_like.run_test() as pilot:
        await pilot.pause()
        assert remote_like.schedules is None and remote_like.run_sweep() is None
