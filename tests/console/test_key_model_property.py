"""A property of the key model (issue 23): whatever the interleaving of typing, enter, ``f2``,
pauses and gated calls arriving, the messages sent are exactly the lines typed, in order, and
no call is decided.

Keys arrive in bursts (``tests.console.keys.burst``); the typing guard runs on a clock the test
moves: 0.1 s between two bursts, and a pause of 1.1 s (once every key typed so far has been
read) lets a waiting dialog open by itself.
Typed text uses ``y``, ``n`` and space, the dialog's and the buttons' keys, so a key that
reached a dialog would show as a decision or a lost character.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.console.conftest import FakeClock, demo_runtime, wait_for
from tests.console.keys import RecordingBackend, burst, keys_of
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings

TEXT = st.text(alphabet="abyn ", min_size=1, max_size=6)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("type"), TEXT),
        st.just(("enter", "")),
        st.just(("call", "")),
        st.just(("f2", "")),
        st.just(("pause", "")),
    ),
    min_size=1,
    max_size=14,
)


def _expected(ops: list[tuple[str, str]]) -> tuple[list[str], str]:
    """The lines the operator sent (enter on a non-blank prompt) and what is left in the prompt."""
    sent, line = [], ""
    for op, text in ops:
        if op == "type":
            line += text
        elif op == "enter" and line.strip():
            sent.append(line.strip())
            line = ""
    return sent, line


async def _scenario(ops: list[tuple[str, str]], db: Path) -> None:
    backend = RecordingBackend(demo_runtime(db), store_label=str(db))
    clock = FakeClock()
    app = WardenApp(
        backend,
        ConsoleSettings(
            approval_guard=0.8,
            typing_quiet=1.0,
            burst_gap=0.5,
            clock=clock,
            picker_refresh=0,
            pending_refresh=0,
            status_refresh=0,
            cursor_blink=False,
            bell=False,
        ),
    )
    calls = 0
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "prompt", "prompt focused")
        previous, keys = "", 0
        for op, text in ops:
            if op == "pause" and previous == "pause":
                continue  # two pauses in a row are an operator reading the dialog: keys may decide
            if op == "type":
                burst(app, keys_of(text))
                keys += len(text)
            elif op in ("enter", "f2"):
                burst(app, [op])
                keys += 1
            elif op == "call":  # a gated call arrives, from a request this console did not type
                calls += 1
                app.start_run("ops", f"delete record abc-{calls}")
            else:  # the operator stops once every key typed so far is read, for longer than the quiet
                await wait_for(pilot, lambda: app.keys_handled == keys, "keys read")  # noqa: B023
                clock.advance(1.1)
                await pilot.pause(0.05)  # the waiting dialog may open now
            clock.advance(0.1)
            previous = op
        await wait_for(pilot, lambda: app.keys_handled == keys, "every key read")
        sent, left = _expected(ops)
        typed = lambda: [p for _, p in backend.sent if not p.startswith("delete record")]  # noqa: E731
        await wait_for(pilot, lambda: len(typed()) >= len(sent) and len(backend.sent) == len(sent) + calls, "sent")
        await wait_for(pilot, lambda: app.streams_done >= len(backend.sent), "every run streamed")
        await wait_for(pilot, lambda: app.run_screen.prompt_text == left, f"{left!r} left in the prompt")
        await pilot.pause(0.05)
        assert typed() == sent
        assert app.run_screen.prompt_text == left
        assert app.decisions == 0
    runtime = demo_runtime(db)
    async with runtime:
        pending = await runtime.list_suspended_runs()
    assert pending.total == calls  # every arrived call still waits for a decision


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_sent_messages_are_exactly_the_lines_typed_and_nothing_is_decided(ops: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_scenario(ops, Path(tmp) / "warden.db"))
