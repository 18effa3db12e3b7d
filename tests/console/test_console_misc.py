"""Bindings, help, command palette, error modal, hostile text end to end, and the chunk log."""

from __future__ import annotations

import inspect

from rich.text import Text
from textual.binding import Binding
from textual.command import CommandList, CommandPalette
from textual.widgets import Static

import tui.screens.approval
import tui.screens.error
import tui.screens.help
import tui.screens.picker
import tui.screens.resume_form
import tui.screens.run
from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.console.conftest import demo_app, log_text, showing, suspend_runs, type_prompt, wait_for
from tests.console.fakes import NOW, FakeBackend
from tui import keymap
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.components.chunk_log import ChunkLog
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.error import ErrorModal
from tui.screens.help import HelpScreen
from tui.screens.picker import PendingPicker

HOSTILE = {"title": "\x1b]0;PWNED\x07", "click": "[@click=app.quit]x[/]", "var": "[$accent]x", "rlo": "\u202e"}


def all_binding_owners():
    modules = [
        tui.screens.approval,
        tui.screens.error,
        tui.screens.help,
        tui.screens.picker,
        tui.screens.resume_form,
        tui.screens.run,
    ]
    owners = [WardenApp]
    for module in modules:
        owners += [
            c
            for _, c in inspect.getmembers(module, inspect.isclass)
            if c.__module__ == module.__name__ and hasattr(c, "BINDINGS")
        ]
    return owners


def test_every_binding_has_an_id_and_a_description():
    seen = []
    for owner in all_binding_owners():
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding), (owner, binding)
            assert binding.id and binding.description, (owner.__name__, binding)
            seen.append(binding.id)
    for _, bindings in keymap.SECTIONS:
        for binding in bindings:
            assert binding.id and binding.description
    assert len(seen) == len(set(seen)) or all(s in {b.id for _, bs in keymap.SECTIONS for b in bs} for s in seen)
    assert {"approval.approve", "approval.decline", "approval.leave", "picker.approve", "app.help"} <= set(seen)


async def test_help_screen_lists_every_binding_id():
    app = WardenApp(
        FakeBackend(), ConsoleSettings(now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False)
    )
    async with app.run_test(size=(140, 170)) as pilot:  # tall enough for every section
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        text = app.export_screenshot()
        text = text.replace("&#160;", " ")
        for _, bindings in keymap.SECTIONS:
            for binding in bindings:
                assert binding.id in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), "help closed")


async def test_command_palette_opens_pending_runs(db_path):
    await suspend_runs(db_path, [("ops", "delete record abc-123")])
    app = demo_app(db_path, open_picker=False)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_for(pilot, lambda: app.run_screen.status.pending == 1, "pending count in the status bar")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"New run", "Open pending runs", "Approve focused call", "Decline focused call"} <= set(titles)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "palette")
        await pilot.press(*"open pending")
        commands = app.screen.query_one(CommandList)
        await wait_for(
            pilot,
            lambda: (
                commands.option_count >= 1
                and "Open pending runs" in str(commands.get_option_at_index(0).prompt)
                and commands.highlighted == 0
            ),
            "matching command listed",
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker), "picker from the palette")


async def test_a_stale_decision_shows_an_error_modal(db_path):
    [run_id] = await suspend_runs(db_path, [("ops", "delete record abc-123")])
    app = demo_app(db_path)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.calls, "picker")
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog")
        # meanwhile another console approves it
        from tests.console.conftest import demo_runtime

        async with demo_runtime(db_path) as other:
            stream = await other.approve_tool_call(run_id=run_id, tool_call_id="call_0_0")
            await stream.text()
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorModal), "error modal")
        assert app.screen.code == "AGENT_TOOL_CALL_ALREADY_DECIDED"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, ErrorModal), "error dismissed")
        await wait_for(pilot, lambda: not app.run_screen.pending.calls, "stale call dropped from the panel")


async def test_hostile_args_are_shown_as_escapes_and_never_reach_the_terminal(tmp_path):
    def model(messages, info):
        if messages[-1].role == "tool":
            return "done \x1b[2J\u202e [@click=app.quit]x[/]"
        return ModelResponse(text="[bold]hi[/] \x1b]0;PWNED\x07", tool_calls=[ToolCall("danger", HOSTILE, id="c1")])

    async def danger(input, ctx):
        return {"ok": "\x1b[31mred"}

    tool = create_tool(id="danger", description="d", execute=danger, require_approval=True)
    from pydantic import BaseModel

    class DangerInput(BaseModel):
        title: str
        click: str
        var: str
        rlo: str

    tool = create_tool(id="danger", description="d", input_schema=DangerInput, execute=danger, require_approval=True)
    agent = Agent(id="evil", name="Evil", model=FunctionModel(model), tools={"danger": tool})
    runtime = Runtime(agents={"evil": agent}, storage=SqliteStore(tmp_path / "w.db"))
    app = WardenApp(
        LocalBackend(runtime), ConsoleSettings(approval_guard=0, picker_refresh=0, status_refresh=0, cursor_blink=False)
    )
    async with app.run_test(size=(110, 40)) as pilot:
        await type_prompt(pilot, "go")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog")
        modal = app.screen
        warning = str(modal.query_one("#hidden-warning", Static).render())
        assert "\\u202e" in warning and "\\x1b" in warning
        args_text = str(modal.query_one("#args", Static).render())
        assert "[@click=app.quit]x[/]" in args_text and "[$accent]x" in args_text and "\\u202e" in args_text
        screenshot = app.export_screenshot()
        assert "PWNED" in screenshot  # shown...
        assert "\x1b]0;" not in screenshot and "\u202e" not in screenshot and "\x07" not in screenshot  # ...inert
        await pilot.press("y")
        await wait_for(pilot, lambda: "done" in log_text(app), "finished")
        assert app.is_running  # the [@click=app.quit] text did not quit the app
        text = log_text(app)
        assert "\\x1b[2J" in text and "\\u202e" in text and "[bold]hi[/]" in text
        assert "\x1b" not in text and "\u202e" not in text


async def test_chunk_log_batches_writes_and_bounds_lines():
    from textual.app import App

    class LogApp(App):
        def compose(self):
            yield ChunkLog(max_lines=50, flush_interval=10)  # flushed by hand below

    app = LogApp()
    async with app.run_test(size=(60, 20)) as pilot:
        log = app.query_one(ChunkLog)
        await pilot.pause()
        for i in range(1000):
            log.append_text(f"w{i} ")
        assert log.line_count == 0 and log.flushes == 0  # buffered, nothing rendered yet
        log.flush()
        assert log.flushes == 1
        assert log.line_count <= 50
        assert log.plain.endswith("w999 ")
        for i in range(200):
            log.write_entry(Text(f"entry {i}"))
        log.flush()
        assert log.line_count == 50 and log.plain_lines()[-1] == "entry 199"
        log.write_entry("[@click=app.quit]x[/] \x1b[2J")
        log.flush()
        assert log.plain_lines()[-1] == "[@click=app.quit]x[/] \\x1b[2J"


async def test_two_gated_calls_of_one_step_get_one_dialog_each(tmp_path):
    from pydantic import BaseModel

    class Input(BaseModel):
        record_id: str

    def model(messages, info):
        if messages[-1].role == "tool":
            results = [m.content for m in messages if m.role == "tool"]
            return f"results: {' | '.join(results)}"
        return ModelResponse(
            tool_calls=[
                ToolCall("delete", {"record_id": "a"}, id="c1"),
                ToolCall("delete", {"record_id": "b"}, id="c2"),
            ]
        )

    async def delete(input, ctx):
        return {"deleted": input.record_id}

    tool = create_tool(id="delete", input_schema=Input, execute=delete, require_approval=True)
    agent = Agent(id="multi", name="Multi", model=FunctionModel(model), tools={"delete": tool})
    runtime = Runtime(agents={"multi": agent}, storage=SqliteStore(tmp_path / "w.db"))
    app = WardenApp(
        LocalBackend(runtime), ConsoleSettings(approval_guard=0, picker_refresh=0, status_refresh=0, cursor_blink=False)
    )
    async with app.run_test(size=(110, 40)) as pilot:
        await type_prompt(pilot, "go")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "first dialog")
        assert app.screen.call.tool_call_id == "c1"
        await wait_for(pilot, lambda: len(app.run_screen.pending.calls) == 2, "both calls listed")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: showing(app, ApprovalModal) and app.screen.call.tool_call_id == "c2", "second dialog"
        )
        await pilot.press("n")
        await pilot.press(*"not b", "enter")
        await wait_for(pilot, lambda: "results:" in log_text(app), "model called once both are decided")
        text = log_text(app)
        assert 'results: {"deleted": "a"} | "not b"' in text  # tool results in the model's call order
        assert not app.run_screen.pending.calls


def test_hostile_text_never_reaches_a_real_terminal(tmp_path):
    """The console runs in a pty (real driver); every byte it writes is checked."""
    import os
    import pty
    import re
    import select
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    master, slave = pty.openpty()
    marker = tmp_path / "marker"
    env = {**os.environ, "TERM": "xterm-256color", "WARDEN_TTY_MARKER": str(marker)}
    # Textual draws on stderr; all three streams are the pty, as in a real terminal.
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.console.hostile_tty_app"],
        cwd=root,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    out = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            raise AssertionError("console did not finish")
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(master)
    assert proc.returncode == 0, out[-2000:].decode(errors="replace")
    assert marker.read_text() == "STILL-RUNNING"  # [@click=app.quit] did not quit it
    assert b"PWNED" in out  # the text was drawn...
    own = re.sub(rb"\x1b\]22;[a-z-]*\x07", b"", bytes(out))  # Textual's own OSC 22 (pointer shape)
    assert b"\x1b]" not in own and b"\x07" not in own  # ...and no agent text became an OSC (title) sequence
    assert "\u202e".encode() not in out
    assert out.count(b"\x1b[2J") <= 2  # only Textual's own screen clears (start/exit), none from the agent
    assert b"\x1b[5m" not in out  # no blink from the tool name
