"""Fixtures for console tests: the demo runtime on a real SQLite file, and Pilot helpers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings
from warden_demo.agents import build_demo_runtime
from warden_demo.model import DemoModel


@asynccontextmanager
async def released(gate: threading.Event) -> AsyncIterator[threading.Event]:
    """A runtime loader held on ``gate`` (``gate.wait()``, no timeout) until the test opens it:
    the test waits on a condition, not on a time. (A 10 s timeout ran out on a loaded machine
    and let the runtime in before the test had looked at the console without it.) Entered after
    ``app.run_test()``, so the gate is open again before the app's exit awaits the loader,
    whatever the test did."""
    try:
        yield gate
    finally:
        gate.set()


class FakeClock:
    """An injectable monotonic clock the tests move by hand (no sleeping on real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "warden.db"


def demo_runtime(db_path: Path):
    return build_demo_runtime(db_path, model=DemoModel(delay=0))


def demo_app(db_path: Path, **kw) -> WardenApp:
    # The panel does not poll unless a test asks (pending_refresh=...): the flows stay deterministic.
    options = dict(approval_guard=0, picker_refresh=0.1, pending_refresh=0, status_refresh=0, cursor_blink=False)
    options.update(kw)
    return WardenApp(LocalBackend(demo_runtime(db_path), store_label=str(db_path)), ConsoleSettings(**options))


async def wait_for(pilot, predicate: Callable[[], object], what: str, limit: int = 1500) -> None:
    """Let the app run until ``predicate()`` holds (a condition, not a timing assertion)."""
    for _ in range(limit):
        if predicate():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"never happened: {what}")


def showing(app, screen_type) -> bool:
    """The top screen is a ``screen_type`` and is composed (its widgets can be queried)."""
    screen = app.screen
    composed = bool(screen.query("#buttons, DataTable, #bindings"))
    return isinstance(screen, screen_type) and screen.is_mounted and composed


async def type_prompt(pilot, text: str) -> None:
    """Type into the prompt once it has the focus (keys sent before that would go nowhere)."""
    app = pilot.app
    await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "prompt", "prompt focused")
    await pilot.press(*text, "enter")


async def suspend_runs(db_path: Path, prompts: list[tuple[str, str]]) -> list[str]:
    """Start runs on the demo runtime (in this process) and return their run ids; they stay pending."""
    runtime = demo_runtime(db_path)
    ids = []
    async with runtime:
        for agent_id, prompt in prompts:
            stream = await runtime.get_agent(agent_id).stream(prompt)
            await stream.text()
            assert stream.status == "suspended", (prompt, stream.status)
            ids.append(stream.run_id)
    return ids


def log_text(app: WardenApp) -> str:
    log = app.run_screen.log_view
    log.flush()
    return log.plain


__all__ = [
    "FakeClock",
    "asyncio",
    "demo_app",
    "demo_runtime",
    "log_text",
    "showing",
    "suspend_runs",
    "type_prompt",
    "wait_for",
]
