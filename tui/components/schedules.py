"""The console's background schedules: crash recovery and the deadline sweep of a local store.

A console over a local store is one of the processes that keep it healthy (``Runtime.recover``:
calls whose process died; ``Runtime.sweep``: approvals past their deadline, expired fail-closed);
a server does both for its own store, so a console over one has no ``Maintenance``. Each runs in a
worker of its own group (never two at once), at start and every ``every`` seconds; ``sweep_now``
also runs on demand (a listed call just passed its deadline).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from textual.app import App
from textual.worker import Worker

#: Seconds between two runs of each schedule.
EVERY = 10.0


class Maintenance(Protocol):
    """What a local runtime offers the console's schedules (``agent_core.Runtime`` has both)."""

    async def recover(self) -> Any: ...

    async def sweep(self) -> Any: ...


class Schedules:
    """Recovery and sweep of ``maintenance`` in ``app``'s workers; ``on_expired`` after a sweep that
    expired calls (the app reads the store again: their dialogs close, they leave the lists)."""

    def __init__(
        self, app: App[Any], maintenance: Maintenance, *, on_expired: Callable[[], None], every: float = EVERY
    ) -> None:
        self.app = app
        self.maintenance = maintenance
        self.on_expired = on_expired
        self.every = every
        self.started = False

    def start(self) -> None:
        """At start, then every ``every`` seconds (once: a second call does nothing)."""
        if self.started:
            return
        self.started = True
        self.recover_now()
        self.app.set_interval(self.every, self.recover_now, name="recover")
        self.sweep_now()
        self.app.set_interval(self.every, self.sweep_now, name="sweep")

    def recover_now(self) -> Worker[Any]:
        return self.app.run_worker(self.maintenance.recover, group="recover", exclusive=True, exit_on_error=False)

    def sweep_now(self) -> Worker[None]:
        """Expire overdue approvals now (fail-closed: expired, never declined)."""

        async def go() -> None:
            if await self.maintenance.sweep():
                self.on_expired()

        return self.app.run_worker(go, group="sweep", exclusive=True, exit_on_error=False)
