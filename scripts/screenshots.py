"""Regenerate ``screenshots/*.svg`` (and ``*.png`` when rsvg-convert or cairosvg is available),
and the browser UI's ``screenshots/browser-*.png``.

    .venv/bin/python scripts/screenshots.py            # all of them
    .venv/bin/python scripts/screenshots.py --browser  # only the browser UI's

Every console picture is the real console on the built-in demo agents and a fresh
SQLite file, driven with Textual's Pilot. The browser pictures are a real
``warden serve`` on the demo agents, in headless Chromium (Debian's, through
Playwright: ``make chromium``) at a phone's viewport.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "screenshots"

from textual.widgets import Input  # noqa: E402

from tui.app import WardenApp  # noqa: E402
from tui.backend import LocalBackend  # noqa: E402
from tui.console_settings import ConsoleSettings  # noqa: E402
from tui.screens.approval import ApprovalModal  # noqa: E402
from tui.screens.help import HelpScreen  # noqa: E402
from tui.screens.picker import PendingPicker  # noqa: E402
from tui.screens.resume_form import ResumeFormModal  # noqa: E402
from warden_demo.agents import build_demo_runtime  # noqa: E402
from warden_demo.model import DemoModel  # noqa: E402

SIZE = (120, 36)


async def until(pilot, predicate: Callable[[], object]) -> None:
    for _ in range(3000):
        if predicate():
            return
        await pilot.pause(0.01)
    raise RuntimeError("screenshot scenario stalled")


def hostile_runtime(db: Path):
    """An agent whose model sends terminal escapes, markup and bidi overrides as tool arguments."""
    from pydantic import BaseModel

    from agent_core import Agent, Runtime, create_tool
    from agent_core.models import FunctionModel, ModelResponse, ToolCall
    from storage import SqliteStore

    class EmailInput(BaseModel):
        to: str
        subject: str
        body: str

    def model(messages, info):
        args = {
            "to": "ceo@example.com\u202emoc.live",
            "subject": "\x1b]0;PWNED\x07",
            "body": "[@click=app.quit]x[/] [$accent]x \u200b",
        }
        return ModelResponse(text="Sending it now.", tool_calls=[ToolCall("send_email", args, id="call_0_0")])

    async def send(input, ctx):
        return {"sent": True}

    tool = create_tool(id="send-email", input_schema=EmailInput, execute=send, require_approval=True)
    agent = Agent(id="ops", name="Ops agent", model=FunctionModel(model), tools={"send_email": tool})
    return Runtime(agents={"ops": agent}, storage=SqliteStore(db))


async def shoot(
    name: str,
    db: Path,
    scenario: Callable[[WardenApp, object], Awaitable[None]],
    delay: float = 0.0,
    size: tuple[int, int] = SIZE,
    runtime=None,
) -> Path:
    runtime = runtime or build_demo_runtime(db, model=DemoModel(delay=delay))
    app = WardenApp(
        LocalBackend(runtime, store_label="~/.local/share/warden/warden.db"),
        ConsoleSettings(approval_guard=0, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.focused is not None)
        await scenario(app, pilot)
        await pilot.pause(0.1)
        svg = app.export_screenshot(title=f"warden — {name.replace('-', ' ')}")
    path = OUT / f"{name}.svg"
    path.write_text(svg)
    return path


async def type_prompt(app, pilot, text: str) -> None:
    app.run_screen.query_one("#prompt", Input).focus()
    await pilot.press(*text, "enter")


async def run_finished(app, pilot):
    await type_prompt(app, pilot, "refund order ord-7 for 40")
    await until(pilot, lambda: app.streams_done >= 1)
    await type_prompt(app, pilot, "delete record abc-123")
    await until(pilot, lambda: isinstance(app.screen, ApprovalModal))
    await pilot.press("y")
    await until(pilot, lambda: app.streams_done >= 3)
    app.run_screen.log_view.flush()


async def mid_stream(app, pilot):
    await type_prompt(app, pilot, "hello")
    await until(pilot, lambda: app.run_screen.chunks_seen >= 20)
    app.run_screen.log_view.flush()


async def approval(app, pilot):
    await type_prompt(app, pilot, "send an email to ana@example.com saying the invoice is attached")
    await until(pilot, lambda: isinstance(app.screen, ApprovalModal) and app.screen.context_loaded)


async def typing_banner(app, pilot):
    """A call arrives while the operator types: announced in the banner, the dialog waits."""
    app.guard.quiet = 3600.0  # the operator "keeps typing" for the picture
    await type_prompt(app, pilot, "delete record abc-125")
    await pilot.press(*"please check the status of my ord")
    await until(pilot, lambda: app.run_screen.waiting)
    app.run_screen.log_view.flush()


async def reopened(app, pilot):
    """A relaunched console: the stored conversation is replayed before the dialog opens."""
    await until(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.loads >= 1)
    table = app.screen.table
    for row in range(table.row_count):
        call = app.screen.focused_call
        if call is not None and call.tool_name == "find_user":
            break
        table.move_cursor(row=row + 1)
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ApprovalModal) and app.screen.context_loaded)
    app.run_screen.log_view.flush()


async def hostile(app, pilot):
    await type_prompt(app, pilot, "email the CEO")
    await until(pilot, lambda: isinstance(app.screen, ApprovalModal))


async def form_error(app, pilot):
    await type_prompt(app, pilot, "what's the weather")
    await until(pilot, lambda: isinstance(app.screen, ResumeFormModal))
    await pilot.press("ctrl+s")
    await until(pilot, lambda: "required" in str(app.screen.query_one("#error-city").render()).lower())


async def picker(app, pilot):
    await until(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.loads >= 1)


async def help_screen(app, pilot):
    await pilot.press("f1")
    await until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def seed(db: Path) -> None:
    async with build_demo_runtime(db, model=DemoModel(delay=0)) as runtime:
        for agent, prompt in [
            ("ops", "delete record abc-125"),
            ("ops", "refund order ord-1042 for 250"),
            ("ops", "what's the weather"),
            ("supervisor", "find user 12345"),
        ]:
            stream = await runtime.get_agent(agent).stream(prompt, thread_id=f"thread-{agent}")
            await stream.text()


def to_png(svg: Path) -> Path | None:
    png = svg.with_suffix(".png")
    # rsvg collapses leading non-breaking spaces of <text> runs unless told to preserve them
    fixed = svg.read_text().replace("<svg ", '<svg xml:space="preserve" ', 1)
    if shutil.which("rsvg-convert"):
        subprocess.run(["rsvg-convert", "--zoom", "1.0", "-o", str(png)], input=fixed.encode(), check=True)
        return png
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        return None
    cairosvg.svg2png(bytestring=fixed.encode(), write_to=str(png))
    return png


PHONE = {"width": 390, "height": 844}


def browser_shots() -> list[Path]:
    """The queue and a call's page of ``/ui/``, signed in as an approver, at 390x844."""
    import httpx
    from playwright.sync_api import sync_playwright

    from tests.browser.site import CHROMIUM, CHROMIUM_ARGS, free_port
    from warden_server.tokens import add_token

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        secret = add_token(t / "tokens.json", "ana", "approver")
        port = free_port()
        env = {**os.environ, "WARDEN_DEMO_DELAY": "0", "PYTHONPATH": str(ROOT)}
        args = ["--db", str(t / "ui.db"), "--port", str(port), "--tokens-file", str(t / "tokens.json")]
        server = subprocess.Popen(  # `warden serve` without --app: the demo agents on --db
            [str(Path(sys.executable).with_name("warden")), "serve", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split()[-1]
            api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}, timeout=60)
            runs = []
            for prompt in (
                "delete record abc-123",
                "send an email to ana@example.com saying the invoice is late",
                "delete record ord-77",
            ):
                r = api.post("/api/agents/ops/generate", json={"messages": prompt})
                runs.append(r.json())
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport=PHONE, device_scale_factor=2)
                page.goto(url + "/ui/signin")
                page.fill("#token", secret)
                page.click("button[type=submit]")
                page.wait_for_url(url + "/ui/")
                page.screenshot(path=str(OUT / "browser-queue.png"))
                first = runs[0]
                page.goto(f"{url}/ui/call?run={first['runId']}&call={first['suspendPayload']['toolCallId']}")
                page.screenshot(path=str(OUT / "browser-call.png"), full_page=True)
                browser.close()
        finally:
            server.terminate()
            server.wait()
    return [OUT / "browser-queue.png", OUT / "browser-call.png"]


async def main() -> None:
    OUT.mkdir(exist_ok=True)

    os.environ.setdefault("WARDEN_DEMO_DELAY", "0")
    shots = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        shots.append(await shoot("run-screen", t / "a.db", run_finished))
        shots.append(await shoot("run-screen-mid-stream", t / "b.db", mid_stream, delay=0.05))
        shots.append(await shoot("approval-modal", t / "c.db", approval))
        shots.append(await shoot("approval-modal-80x24", t / "c2.db", approval, size=(80, 24)))
        shots.append(await shoot("typing-banner", t / "c3.db", typing_banner))
        shots.append(
            await shoot("approval-modal-hostile-args", t / "d.db", hostile, runtime=hostile_runtime(t / "d.db"))
        )
        shots.append(await shoot("suspend-form-error", t / "e.db", form_error, size=(120, 40)))
        await seed(t / "f.db")
        shots.append(await shoot("relaunch-picker", t / "f.db", picker))
        shots.append(await shoot("reopened-run", t / "f.db", reopened, size=(140, 40)))
        shots.append(await shoot("help", t / "g.db", help_screen, size=(120, 44)))
    for svg in shots:
        png = to_png(svg)
        print(svg.relative_to(ROOT), "+ png" if png else "(no PNG renderer: apt-get install librsvg2-bin)")


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    if "--browser" not in sys.argv[1:]:
        asyncio.run(main())
    for shot in browser_shots():  # Playwright's sync API, outside the console's event loop
        print(shot.relative_to(ROOT))
