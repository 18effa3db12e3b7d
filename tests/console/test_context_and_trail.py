"""Context beside the decision, the form's focus and decline, the decision trail, the first launch."""

from __future__ import annotations

import asyncio

from textual.widgets import Input, Static

from agent_core import Runtime
from storage import SqliteStore
from tests.console.conftest import demo_app, log_text, showing, suspend_runs, type_prompt, wait_for
from tests.console.fakes import NOW, FakeBackend, approval_call, input_call
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.help import HelpScreen
from tui.screens.picker import PendingPicker
from tui.screens.resume_form import ResumeFormModal
from warden_demo.agents import build_demo_agents
from warden_demo.model import DemoModel

SIZE = (120, 36)


def fake_app(backend: FakeBackend) -> WardenApp:
    return WardenApp(
        backend,
        ConsoleSettings(approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )


async def test_dialog_shows_request_model_text_step_and_wait():
    app = fake_app(FakeBackend())
    async with app.run_test(size=SIZE) as pilot:
        app.open_dialog(approval_call())
        await wait_for(pilot, lambda: showing(app, ApprovalModal) and app.screen.context_loaded, "context")
        screen = app.screen
        title = str(screen.query_one("#dialog-title", Static).render())
        context = str(screen.query_one("#context", Static).render())
        assert "call 1 of 2 in this step" in title and "waiting 2m" in title
        assert "Please delete record abc-123" in context
        assert "I will delete record abc-123 after you approve it." in context
        assert "Delete a record by ID (cannot be undone)" in context
        assert "thread-ops-1" in context and "customer-42" in context
        assert "lookup_order (done)" in str(screen.query_one("#step-calls", Static).render())


async def test_a_relaunched_console_shows_the_stored_request_of_a_reopened_run(db_path):
    await suspend_runs(db_path, [("supervisor", "find user 12345")])
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PendingPicker) and app.screen.calls, "picker")
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog of the reopened run")
        text = log_text(app)
        assert "stored conversation of run" in text
        assert "you › find user 12345" in text  # the user's request
        assert "I will ask data_agent to find user 12345." in text  # the model's text before the call
        assert "[supervisor > data-agent] asked: find user 12345" in text  # the sub-agent, under its path
        await wait_for(pilot, lambda: app.screen.context_loaded, "context in the dialog")
        assert "find user 12345" in str(app.screen.query_one("#context", Static).render())


async def test_the_form_focuses_its_first_field_with_a_helpful_placeholder():
    app = fake_app(FakeBackend())
    async with app.run_test(size=SIZE) as pilot:
        app.open_dialog(input_call())
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "form")
        city = app.screen.query_one("#field-city", Input)
        await wait_for(pilot, lambda: app.focused is city, "first field focused")
        assert city.placeholder == "City to get the weather for"


async def test_the_form_can_decline_the_call_with_a_reason():
    backend = FakeBackend()
    app = fake_app(backend)
    async with app.run_test(size=SIZE) as pilot:
        app.open_dialog(input_call())
        await wait_for(pilot, lambda: showing(app, ResumeFormModal), "form")
        form = app.screen
        await pilot.press("ctrl+d")
        await wait_for(pilot, lambda: form.declining and app.focused is form.query_one("#reason"), "decline mode")
        await pilot.press("escape")  # back to the form, not closed
        await wait_for(pilot, lambda: not form.declining, "back to the form")
        assert app.screen is form
        await pilot.press("ctrl+d", *"no city", "enter")
        await wait_for(pilot, lambda: ("decline", ("run-0002", "call_0_0", "no city")) in backend.calls, "declined")


async def test_decline_mode_esc_goes_back_and_the_trail_names_the_actor(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete record abc-125")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog")
        modal = app.screen
        await pilot.press("n")
        await wait_for(pilot, lambda: modal.declining, "decline mode")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not modal.declining, "back to the choice")
        assert app.screen is modal
        await pilot.press("n", *"wrong id", "enter")
        await wait_for(pilot, lambda: "operator declined" in log_text(app), "declined")
        assert f"declined by {app.actor_label}: delete_record — wrong id" in log_text(app)


async def test_a_call_decided_elsewhere_says_what_and_by_whom(db_path):
    (run_id,) = await suspend_runs(db_path, [("ops", "delete record abc-123")])
    app = demo_app(db_path, open_picker=False, pending_refresh=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.run_screen.pending.calls, "listed from the store")
        agents = build_demo_agents(db_path, model=DemoModel(delay=0))
        async with Runtime(agents=agents, storage=SqliteStore(db_path), actor="bob") as runtime:  # another console
            stream = await runtime.decline_tool_call(run_id=run_id, reason="not today")
            await stream.text()
        await wait_for(pilot, lambda: "declined by bob elsewhere" in log_text(app), "trail of the other decision")
        assert "not today" in log_text(app)


async def test_first_launch_explains_itself_and_question_mark_opens_help(db_path):
    app = demo_app(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "Warden approval console" in log_text(app), "welcome")
        text = log_text(app)
        assert "try › delete record abc-123" in text
        assert "ctrl+t switches agents" in text and "ctrl+o" in text
        app.run_screen.query_one("#pending").focus()
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help on ?")


async def test_question_mark_in_the_prompt_is_typed():
    app = fake_app(FakeBackend())
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "")
        await pilot.press("w", "h", "y", "question_mark")
        await asyncio.sleep(0)
        await pilot.pause()
        assert app.run_screen.prompt_text == "why?"
        assert not isinstance(app.screen, HelpScreen)
