"""The pending picker as a work queue (issue 14), driven with Pilot.

Filters run as the store's query: the big test lists 10,000+ pending runs from a real
SQLite file (bulk-inserted through SQLite itself, so the test stays quick).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

from textual.widgets import Input, Static

from storage import SqliteStore
from tests.console.conftest import demo_app, log_text, showing, suspend_runs, wait_for
from tests.console.fakes import NOW, FakeBackend, sample_pending
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.error import ErrorModal
from tui.screens.picker import PendingPicker
from tui.screens.resume_form import ResumeFormModal

SIZE = (120, 40)
BULK = 10_500


def fake_app(backend: FakeBackend | None = None) -> WardenApp:
    return WardenApp(
        backend or FakeBackend(sample_pending()),
        ConsoleSettings(approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )


async def open_picker(pilot) -> PendingPicker:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.loads >= 1, "picker")
    return app.screen


async def bulk_pending(path: Path, n: int) -> None:
    """``n`` suspended runs, one call each: agents ``mailer``/``billing``, tools ``send_email``/``refund``
    (every 7th is an input call ``ask_user``), arguments naming a person. Run ``i`` is newer than ``i-1``."""
    await _setup(path)
    people = ["ana", "bob", "cy", "dee", "eve"]
    runs, calls = [], []
    for i in range(n):
        rid = f"bulk-{i:06d}"
        agent = "mailer" if i % 2 else "billing"
        kind, tool = ("suspend", "ask_user") if i % 7 == 0 else ("approval", "send_email" if i % 2 else "refund")
        runs.append((rid, agent, f"th-{i % 50}", "suspended", "{}", 1000.0 + i, 1000.0 + i, 1000.0 + i))
        args = {"to": f"{people[i % 5]}{i}@example.com", "n": i}
        calls.append((rid, "call_0_0", tool, kind, "pending", "sha256:x", json.dumps(args), '["x"]', 0, 1000.0 + i))
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO runs (run_id, agent_id, thread_id, status, snapshot, created_at, suspended_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            runs,
        )
        db.executemany(
            "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
            "agent_path, seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            calls,
        )


async def _setup(path: Path) -> None:
    store = SqliteStore(path)
    await store.setup()
    await store.aclose()


async def type_filter(pilot, picker: PendingPicker, text: str) -> None:
    """Type a filter line and wait until the page of exactly that filter is shown. On a loaded
    machine the keys come slower than the debounce, and each prefix typed is a query of its own:
    a page shown (``loads``) may be an earlier prefix's while the last one is in flight."""
    loads = picker.loads
    await pilot.press("slash")
    await wait_for(pilot, lambda: picker.filter_input.has_focus, "filter focused")
    box = picker.filter_input
    box.value = ""
    await pilot.press(*text)

    def shown() -> bool:
        return picker.filter_line == text and picker.loads > loads and picker.shown_query == picker.query_state

    await wait_for(pilot, shown, f"filtered by {text!r}")


async def test_filter_over_ten_thousand_pending_runs_is_the_stores_query(db_path):
    await bulk_pending(db_path, BULK)
    app = demo_app(db_path, picker_refresh=0)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        assert picker.total == BULK and len(picker.calls) == 50
        assert picker.counts == {"approval": BULK - len(range(0, BULK, 7)), "input": len(range(0, BULK, 7))}
        assert "page 1 of 210" in str(picker.query_one("#picker-status", Static).render())
        assert next(iter(picker.calls)).startswith(f"bulk-{BULK - 1:06d}")  # newest first
        # incremental: every keystroke narrows (after a short quiet time), the store answers
        await type_filter(pilot, picker, "ANA105")  # case-insensitive, over the arguments
        expected = [i for i in range(BULK) if i % 5 == 0 and str(i).startswith("105")]
        assert len(expected) >= 3 and picker.total == len(expected) and picker.page == 0
        assert list(picker.calls) == [f"bulk-{i:06d}:call_0_0" for i in sorted(expected, reverse=True)]
        # exact filters by agent, tool, thread and kind, with words
        await type_filter(pilot, picker, "agent:mailer tool:send_email thread:th-3 dee")
        expected = [i for i in range(BULK) if i % 2 and i % 7 and i % 50 == 3]
        assert picker.total == len(expected) > 50 and picker.counts["input"] == 0
        assert set(picker.calls) == {f"bulk-{i:06d}:call_0_0" for i in sorted(expected, reverse=True)[:50]}
        header = str(picker.query_one("#picker-title", Static).render())
        assert "filter: agent:mailer tool:send_email thread:th-3 dee" in header
        await type_filter(pilot, picker, "kind:input")
        assert picker.total == len(range(0, BULK, 7)) and all(c.kind == "input" for c in picker.calls.values())
        assert picker.counts["input"] == picker.total
        # enter goes back to the rows, esc from the rows closes; the filter stays while the picker is open
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.focused is picker.table, "rows focused")
        assert picker.filter_line == "kind:input"


async def test_rows_move_by_row_with_j_k_g_G_home_end():
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        table = picker.table
        assert table.row_count == 4 and table.cursor_coordinate == (0, 0)
        for key, row in (("end", 3), ("home", 0), ("j", 1), ("down", 2), ("k", 1), ("G", 3), ("g", 0)):
            await pilot.press(key)
            await wait_for(pilot, lambda row=row: table.cursor_row == row, f"{key} -> row {row}")
            assert table.cursor_column == 0, key  # never across columns


async def test_columns_show_arguments_and_agent_path_and_the_preview_the_context():
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        table = picker.table
        cells = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert cells[1][:3] == ["issue_refund", "approval", "5m"] and cells[1][4] == "ops"
        assert cells[1][3] == "order_id=ord-1042, amount…"  # sanitised, cut to its column
        assert cells[3][4] == "supervisor › data-agent"
        await wait_for(pilot, lambda: picker.preview_loaded, "context read")
        preview = str(picker.query_one("#picker-preview-text", Static).render())
        assert "Please delete record abc-123" in preview  # the request
        assert "I will delete record abc-123" in preview  # the model's text
        assert '{"record_id": "abc-123"}' in preview  # the arguments
        await pilot.press("j")
        await wait_for(
            pilot, lambda: "order_id" in str(picker.query_one("#picker-preview-text", Static).render()), "preview moves"
        )


async def test_hostile_arguments_are_one_sanitised_truncated_cell():
    from tests.console.fakes import approval_call
    from tui.backend import PendingRun

    args = {"title": "[bold]x[/]\x1b]0;PWNED\x07\nline2", "body": "z" * 200}
    run = PendingRun("run-evil", "ops", None, None, NOW, (approval_call("run-evil", args),))
    app = fake_app(FakeBackend([run]))
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        cell = picker.table.get_row_at(0)[3]
        assert "\x1b" not in cell.plain and "\n" not in cell.plain and "\x07" not in cell.plain
        assert cell.plain.endswith("…") and len(cell.plain) <= 26
        assert "[bold]" in cell.plain  # shown as text, never as markup


async def test_after_a_decision_the_cursor_is_on_the_next_call_and_y_y_decides_two(db_path):
    prompts = [("ops", f"delete record rec-{i}") for i in range(4)]
    ids = await suspend_runs(db_path, prompts)  # newest is ids[-1]: listed first
    app = demo_app(db_path, picker_refresh=0)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await wait_for(pilot, lambda: len(picker.calls) == 4, "four rows")
        await pilot.press("j")  # row 1: ids[2]
        await wait_for(pilot, lambda: picker.focused_call.run_id == ids[2], "on the second row")
        await pilot.press("y")
        await wait_for(pilot, lambda: picker.focused_call.run_id == ids[1], "cursor on the next call")
        assert picker.table.cursor_row == 1
        await pilot.press("y")  # the next call, not the newest one and not the same one twice
        await wait_for(pilot, lambda: app.decisions == 2 and app.streams_done >= 2, "two decisions applied")
        await wait_for(pilot, lambda: set(c.run_id for c in picker.calls.values()) == {ids[3], ids[0]}, "two left")
        assert picker.table.cursor_row == 1 and picker.focused_call.run_id == ids[0]
        assert not any(isinstance(s, ErrorModal) for s in app.screen_stack)
        assert log_text(app).count("approved") >= 2


async def test_y_on_an_input_row_opens_its_form_and_n_asks_for_a_reason():
    backend = FakeBackend(sample_pending())
    app = fake_app(backend)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        await pilot.press("j", "j")  # get_weather, an input call
        await wait_for(pilot, lambda: picker.focused_call.kind == "input", "input row")
        await pilot.press("y", "y")
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "resume form")
        assert not any(isinstance(s, ErrorModal) for s in app.screen_stack)
        assert not [c for c in backend.calls if c[0] == "approve"]  # no approval attempted
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "back to the picker")
        await pilot.press("n")
        await wait_for(pilot, lambda: showing(app, ResumeFormModal) and app.screen.declining, "declining")
        assert app.focused is app.screen.query_one("#reason", Input)
        await pilot.press("escape", "escape")
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "back again")
        await pilot.press("k", "k", "n")  # an approval: its dialog, ready for a reason
        await wait_for(pilot, lambda: showing(app, ApprovalModal) and app.screen.declining, "decline reason")


async def test_the_same_error_twice_shows_one_dialog():
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_picker(pilot)
        app._show_error("Could not approve x", "boom", "SOME_CODE")
        app._show_error("Could not approve x", "boom", "SOME_CODE")
        await pilot.pause()
        assert sum(isinstance(s, ErrorModal) for s in app.screen_stack) == 1
        app._show_error("Could not approve y", "boom", "SOME_CODE")
        await pilot.pause()
        assert sum(isinstance(s, ErrorModal) for s in app.screen_stack) == 2


async def test_sort_cycles_age_agent_tool_and_kind_and_row_filters_toggle(db_path):
    await bulk_pending(db_path, 60)
    app = demo_app(db_path, picker_refresh=0)
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)

        async def press(key: str) -> None:
            loads = picker.loads
            await pilot.press(key)
            await wait_for(pilot, lambda: picker.loads > loads, f"reloaded after {key}")

        def runs() -> list[int]:
            return [int(k[5:11]) for k in picker.calls]

        assert runs()[:3] == [59, 58, 57]
        await press("s")
        assert picker.query_state.sort == "agent" and "sort: agent" in str(picker.query_one("#picker-title").render())
        assert runs()[:2] == [58, 56]  # billing (even runs) first, newest first within
        await press("s")
        assert picker.query_state.sort == "tool" and runs()[:2] == [56, 49]  # ask_user first
        await press("s")
        assert picker.query_state.sort == "age" and runs()[:2] == [59, 58]
        await press("i")
        assert picker.query_state.kind == "approval" and picker.total == 60 - len(range(0, 60, 7))
        await press("i")
        assert picker.query_state.kind == "input" and picker.total == len(range(0, 60, 7))
        await press("i")
        assert picker.query_state.kind is None
        await pilot.press("g")
        await wait_for(pilot, lambda: picker.focused_call.run_id == "bulk-000059", "first row")
        await press("a")  # the highlighted call's agent (run 59: mailer)
        assert picker.query_state.agent_id == "mailer" and picker.filter_line == "agent:mailer"
        assert {k[:11] for k in picker.calls} == {f"bulk-{i:06d}" for i in range(1, 60, 2)}
        await press("t")
        assert picker.query_state.tool_name == "send_email"
        await press("a")  # again: every agent
        assert picker.query_state.agent_id is None and picker.filter_line == "tool:send_email"


async def test_the_side_panel_lists_newest_first():
    from tests.console.fakes import approval_call

    app = fake_app(FakeBackend())
    async with app.run_test(size=SIZE) as pilot:
        panel = app.run_screen.pending
        for i in range(3):
            panel.add_call(approval_call(f"run-{i}"))
        await pilot.pause()
        order = [panel.get_option_at_index(i).id for i in range(panel.option_count)]
        assert order == ["run-2:call_0_0", "run-1:call_0_0", "run-0:call_0_0"]
        assert panel.focused_call.run_id == "run-0"  # a new arrival never moves the highlight


async def test_age_column_shows_time_left_and_warns_when_a_deadline_is_near():
    """The queue shows which calls run out first: time left beside the age, bold red under a minute."""
    from datetime import timedelta

    from tests.console.fakes import approval_call
    from tui.backend import PendingRun

    soon = replace(approval_call("run-soon"), expires_at=NOW + timedelta(seconds=30))
    later = replace(approval_call("run-late"), expires_at=NOW + timedelta(hours=1))
    none = approval_call("run-none")
    runs = [PendingRun(c.run_id, "ops", None, None, NOW - timedelta(minutes=2), (c,)) for c in (soon, later, none)]
    app = fake_app(FakeBackend(runs))
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        cells = {picker.table.get_row_at(i)[6].plain: picker.table.get_row_at(i)[2] for i in range(3)}
        assert cells["run-soon"].plain == "2m ⏳30s"
        assert any("red" in str(span.style) for span in cells["run-soon"].spans)
        assert cells["run-late"].plain == "2m ⏳1h 00m"
        assert not any("red" in str(span.style) for span in cells["run-late"].spans)
        assert cells["run-none"].plain == "2m"


async def test_a_row_selected_after_the_picker_closed_opens_nothing_more():
    """An enter typed with other keys as the console starts: the picker is dismissed with its row,
    and the table's own ``RowSelected`` for the same key arrives after. It must not dismiss the
    picker a second time (that popped the run screen: ``ScreenStackError``, the console gone)."""
    app = fake_app()
    async with app.run_test(size=SIZE) as pilot:
        picker = await open_picker(pilot)
        table = picker.table
        picker.action_open()
        picker.post_message(table.RowSelected(table, table.cursor_row, table.coordinate_to_cell_key((0, 0)).row_key))
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalModal), "the first row's dialog")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ApprovalModal)
