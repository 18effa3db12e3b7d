"""Run the console in a real terminal (a pty, set up by the test) on a hostile agent, then quit.

The agent's model sends terminal escapes, markup and bidi overrides in tool arguments and text.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal

HOSTILE = {
    "title": "\x1b]0;PWNED\x07",
    "clear": "\x1b[2J",
    "click": "[@click=app.quit]x[/]",
    "var": "[$accent]x",
    "rlo": "\u202e",
}


class In(BaseModel):
    title: str
    clear: str
    click: str
    var: str
    rlo: str


def model(messages, info):
    if messages[-1].role == "tool":
        return "after \x1b]0;PWNED2\x07 \x1b[2J \u202e done"
    return ModelResponse(text="text \x1b]0;PWNED3\x07 ", tool_calls=[ToolCall("danger\x1b[5m", HOSTILE, id="c1")])


async def danger(input, ctx):
    return {"echo": input.title}


def main() -> None:
    tool = create_tool(id="danger", input_schema=In, execute=danger, require_approval=True)
    agent = Agent(id="evil", name="Evil", model=FunctionModel(model), tools={"danger\x1b[5m": tool})
    db = Path(tempfile.mkdtemp()) / "w.db"
    app = WardenApp(
        LocalBackend(Runtime(agents={"evil": agent}, storage=SqliteStore(db))),
        ConsoleSettings(approval_guard=0, picker_refresh=0, status_refresh=0),
    )

    async def auto_pilot(pilot):
        while not (app.focused is not None and app.focused.id == "prompt"):
            await pilot.pause(0.01)
        await pilot.press(*"go", "enter")
        while not isinstance(app.screen, ApprovalModal):
            await pilot.pause(0.01)
        await pilot.pause(0.3)
        await pilot.press("y")
        while app.streams_done < 2:
            await pilot.pause(0.01)
        app.run_screen.log_view.flush()
        await pilot.pause(0.3)
        Path(os.environ["WARDEN_TTY_MARKER"]).write_text("STILL-RUNNING" if app.is_running else "QUIT")
        app.exit()

    app.run(auto_pilot=auto_pilot)


if __name__ == "__main__":
    main()
