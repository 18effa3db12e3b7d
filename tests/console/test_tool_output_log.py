"""The console log shows a tool's progress (tool-output chunks) under its running call."""

from __future__ import annotations

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.console.conftest import log_text, type_prompt, wait_for
from tui.app import WardenApp
from tui.backend import LocalBackend
from tui.console_settings import ConsoleSettings


class JobIn(BaseModel):
    name: str


async def test_progress_lines_appear_under_the_running_call(tmp_path):
    def model(messages, info):
        if messages[-1].role == "tool":
            return "all done"
        return ModelResponse(tool_calls=[ToolCall("import_data", {"name": "users"}, id="c1")])

    async def import_data(inp: JobIn, ctx):
        for pct in (25, 75):
            await ctx.writer.write({"percent": pct, "stage": "\x1b[2Jcopying"})
        return {"imported": inp.name}

    tool = create_tool(id="import-data", input_schema=JobIn, execute=import_data)
    agent = Agent(id="etl", name="ETL", model=FunctionModel(model), tools={"import_data": tool})
    runtime = Runtime(agents={"etl": agent}, storage=SqliteStore(tmp_path / "w.db"))
    app = WardenApp(
        LocalBackend(runtime), ConsoleSettings(approval_guard=0, picker_refresh=0, status_refresh=0, cursor_blink=False)
    )
    async with app.run_test(size=(110, 30)) as pilot:
        await type_prompt(pilot, "go")
        await wait_for(pilot, lambda: "all done" in log_text(app), "finished")
        lines = app.run_screen.log_view.plain_lines()
    call = next(i for i, line in enumerate(lines) if line.startswith("→ call import_data"))
    progress = [i for i, line in enumerate(lines) if line.startswith("    ⋯ import_data")]
    result = next(i for i, line in enumerate(lines) if line.startswith("✓ import_data"))
    assert len(progress) == 2 and call < progress[0] < progress[1] < result
    assert '"percent":25' in lines[progress[0]].replace(" ", "") and "\\u001b[2J" in lines[progress[0]]
    assert "\x1b" not in "".join(lines)
