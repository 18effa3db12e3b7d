"""The run screen's pending panel follows the store: decisions taken by another process
(the headless CLI, a second ``Runtime`` on the same SQLite file) and runs suspended elsewhere
show up without a key press. Every wait is on a condition (``wait_for``), never a sleep."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from agent_core.chunks import make_chunk
from tests.console.conftest import demo_app, demo_runtime, showing, suspend_runs, wait_for
from tests.console.fakes import FakeBackend
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.error import ErrorModal
from tui.screens.resume_form import ResumeFormModal

ROOT = Path(__file__).resolve().parents[2]
SIZE = (120, 40)
POLL = 0.05


async def run_python(*args: str) -> str:
    """Run ``python *args`` in another process (without blocking the console's loop)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        cwd=ROOT,
        env={**os.environ, "WARDEN_DEMO_DELAY": "0"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return out.decode()


def prompt_focused(app) -> bool:
    return app.focused is not None and app.focused.id == "prompt"


def notified(app, text: str) -> bool:
    return any(text in n.message for n in app._notifications)


async def test_call_approved_by_another_process_leaves_the_panel_and_the_count(db_path):
    run_a, run_b = await suspend_runs(db_path, [("ops", "delete record abc-124"), ("ops", "refund order o-9 for 500")])
    app = demo_app(db_path, pending_refresh=POLL, open_picker=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        panel = screen.pending
        key_a, key_b = f"{run_a}:call_0_0", f"{run_b}:call_0_0"
        await wait_for(pilot, lambda: set(panel.calls) == {key_a, key_b}, "both stored calls in the panel")
        await wait_for(pilot, lambda: screen.status.pending == 2, "count of 2")
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        panel.highlighted = panel.get_option_index(key_b)  # the operator looks at B, listed after A

        out = await run_python("-m", "warden_cli", "runs", "approve", run_a, "--db", str(db_path))
        assert "status: finished" in out

        await wait_for(pilot, lambda: set(panel.calls) == {key_b}, "A gone from the panel")
        await wait_for(pilot, lambda: screen.status.pending == 1, "count of 1")
        assert panel.option_count == 1
        assert panel.focused_call is not None and panel.focused_call.key == key_b  # the highlight stayed on B
        assert prompt_focused(app)  # the poll did not move the focus
        assert app.screen is screen and app.decisions == 0  # no dialog, nothing decided here


async def test_open_approval_dialog_closes_when_its_call_is_decided_elsewhere(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "delete record abc-123")])
    app = demo_app(db_path, pending_refresh=POLL, open_picker=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.run_screen.pending
        await wait_for(pilot, lambda: panel.calls, "stored call in the panel")
        await pilot.press("f2")  # decide the highlighted call
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        async with demo_runtime(db_path) as other:  # a second Runtime on the same file
            stream = await other.approve_tool_call(run_id=run_id, tool_call_id="call_0_0")
            await stream.text()
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal), "dialog closed")
        await wait_for(pilot, lambda: notified(app, "was decided elsewhere"), "notification")
        note = next(n for n in app._notifications if "decided elsewhere" in n.message)
        assert "delete_record" in note.message and run_id[:8] in note.message and note.severity == "warning"
        assert not panel.calls and app.run_screen.status.pending == 0
        await pilot.press("y")  # a late key reaches nothing: no error modal, no decision
        await pilot.pause()
        assert not isinstance(app.screen, ErrorModal) and app.decisions == 0


async def test_open_resume_form_closes_when_another_process_resumes_the_call(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "what's the weather")])
    app = demo_app(db_path, pending_refresh=POLL, open_picker=False)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.run_screen.pending
        await wait_for(pilot, lambda: panel.calls, "stored call in the panel")
        await pilot.press("f2")
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "input form")
        await run_python(
            "-m", "warden_cli", "runs", "resume", run_id, "--data", '{"city": "Paris"}', "--db", str(db_path)
        )
        await wait_for(pilot, lambda: not isinstance(app.screen, ResumeFormModal), "form closed")
        await wait_for(pilot, lambda: notified(app, "get_weather"), "notification")
        assert not panel.calls and app.decisions == 0


async def test_run_suspended_by_another_process_appears_without_stealing_focus(db_path):
    app = demo_app(db_path, pending_refresh=POLL, open_picker=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        await wait_for(pilot, lambda: screen.polls >= 1, "first poll of an empty store")
        await wait_for(pilot, lambda: prompt_focused(app), "prompt focused")
        assert not screen.pending.calls and screen.status.pending == 0
        script = (
            "import asyncio, sys\n"
            "from tests.console.conftest import suspend_runs\n"
            "from pathlib import Path\n"
            "print(asyncio.run(suspend_runs(Path(sys.argv[1]), [('ops', 'delete record def-201')]))[0])\n"
        )
        run_id = (await run_python("-c", script, str(db_path))).strip()
        key = f"{run_id}:call_0_0"
        await wait_for(pilot, lambda: key in screen.pending.calls, "the new run's call in the panel")
        await wait_for(pilot, lambda: screen.status.pending == 1, "count of 1")
        assert screen.pending.calls[key].tool_name == "delete_record"
        assert app.screen is screen and prompt_focused(app)  # listed, no dialog pushed at the operator
        await pilot.press(*"hi")
        assert screen.query_one("#prompt").value == "hi"  # keys still go to the prompt


class LiveBackend(FakeBackend):
    """The stream stops right after its approval chunk, and the store lists nothing yet."""

    async def start_run(self, agent_id, prompt, **kw):
        stream = await super().start_run(agent_id, prompt, **kw)
        stream.chunks.append(make_chunk("text-delta", stream.run_id, text="."))
        stream.hold_after = len(stream.chunks) - 1
        return stream


async def test_polls_leave_the_calls_of_a_live_stream_alone():
    app = WardenApp(
        LiveBackend(),
        ConsoleSettings(approval_guard=0, picker_refresh=0, status_refresh=0, pending_refresh=0.02, cursor_blink=False),
    )
    async with app.run_test(size=SIZE) as pilot:
        # (no typing here: Pilot waits for an idle CPU after each key, and this polls every 20 ms)
        app.start_run("ops", "delete record abc-123")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog of the live call")
        polls = app.run_screen.polls
        await wait_for(pilot, lambda: app.run_screen.polls >= polls + 5, "several polls of a store without it")
        assert isinstance(app.screen, ApprovalModal)  # not closed as "decided elsewhere"
        assert list(app.run_screen.pending.calls) == ["run-0001:call_0_0"]
        assert not notified(app, "decided elsewhere")


async def test_a_poll_answered_after_the_screen_closed_is_dropped(db_path):
    from tui.screens.run import RunScreen

    await suspend_runs(db_path, [("ops", "delete record abc-123")])
    app = demo_app(db_path, open_picker=False)
    async with app.run_test(size=SIZE) as pilot:
        other = RunScreen(app.backend.list_agents(), "x", pending_refresh=0)
        await app.push_screen(other)
        entered, gate = asyncio.Event(), asyncio.Event()
        original = app.backend.list_pending

        async def slow_list(**kw):
            entered.set()
            await gate.wait()
            return await original(**kw)

        app.backend.list_pending = slow_list
        other.poll_pending()
        await wait_for(pilot, entered.is_set, "poll waiting on the store")
        await app.pop_screen()
        await wait_for(pilot, lambda: not other.is_attached, "screen closed")
        gate.set()
        await wait_for(pilot, lambda: not other._polling, "poll over")
        assert other.polls == 0  # nothing applied to the closed screen (worker cancelled, or the guard)
        assert app.is_running and not isinstance(app.screen, ErrorModal)


class FlakyBackend(FakeBackend):
    """A store that becomes unreachable when the test says so."""

    def __init__(self) -> None:
        from tests.console.fakes import sample_pending

        super().__init__(sample_pending())
        self.down = False
        self.failed = 0
        self.count_reads = 0  # the app's start-up check reads the first page with its counts

    async def list_pending(self, **kw):
        if self.down:
            self.failed += 1
            raise ConnectionError("store unreachable")
        page = await super().list_pending(**kw)
        self.count_reads += bool(kw.get("with_counts"))
        return page


async def test_an_unreachable_store_keeps_the_panel_and_the_console_running():
    backend = FlakyBackend()
    app = WardenApp(
        backend,
        ConsoleSettings(
            approval_guard=0,
            picker_refresh=0,
            status_refresh=0,
            pending_refresh=POLL,
            open_picker=False,
            cursor_blink=False,
        ),
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = app.run_screen
        await wait_for(pilot, lambda: len(screen.pending.calls) == 4 and screen.polls >= 2, "listed")
        await wait_for(pilot, lambda: backend.count_reads >= 1, "start-up check done")
        backend.down = True
        await wait_for(pilot, lambda: backend.failed >= 3, "polls failed")
        assert len(screen.pending.calls) == 4 and screen.status.pending == 4
        assert app.screen is screen and app.is_running  # no error modal every tick
