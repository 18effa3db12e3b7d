"""The grant choice for a shell tool offers each command's prefix ("always allow `git status`")
instead of pinning the whole line (a real Textual app, Pilot; a snapshot at 80x24)."""

from __future__ import annotations

from textual.widgets import Checkbox, Static

from tests.console.conftest import showing, wait_for
from tests.console.fakes import FakeBackend, approval_call
from tui.app import WardenApp
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.grant_choice import GrantChoiceModal, command_prefixes

LINE = "git status --short && ls -la | grep -c py"


def shell_backend() -> FakeBackend:
    backend = FakeBackend()
    backend.shell_tools = {"bash": "command"}  # type: ignore[attr-defined]
    return backend


def make_app(backend: FakeBackend) -> WardenApp:
    from tests.console.fakes import NOW

    return WardenApp(
        backend,
        ConsoleSettings(approval_guard=0, now=lambda: NOW, picker_refresh=0, status_refresh=0, cursor_blink=False),
    )


def bash_call(line: str = LINE):
    return approval_call(tool="bash", args={"command": line, "timeout": 30})


async def _open_choice(pilot, call) -> GrantChoiceModal:
    app = pilot.app
    app.open_dialog(call)
    await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog")
    await wait_for(pilot, lambda: app.screen.context_loaded, "context")
    await pilot.press("g")
    await wait_for(pilot, lambda: showing(app, GrantChoiceModal), "grant choice")
    return app.screen


def test_the_prefixes_offered_for_a_line() -> None:
    assert command_prefixes(LINE) == ([("git", "status"), ("ls",), ("grep",)], None)
    assert command_prefixes("timeout 10 git status; git status")[0] == [("timeout",), ("git", "status")]
    prefixes, why = command_prefixes("ls > out.txt")
    assert prefixes == [] and "output redirection" in (why or "")


async def test_the_choice_grants_command_prefixes_not_the_text() -> None:
    backend = shell_backend()
    app = make_app(backend)
    async with app.run_test(size=(80, 24)) as pilot:
        choice = await _open_choice(pilot, bash_call())
        title = str(choice.query_one("#dialog-title", Static).render())
        assert "Always allow `git status` and `ls` and `grep` in bash" in title
        rule = choice.query_one("#grant-rule", Static)
        assert "allow bash whose command runs only `git status …` or `ls …` or `grep …` with timeout=30" in str(
            rule.render()
        )
        assert [c.value for c in choice.query("#grant-commands Checkbox").results(Checkbox)] == [True, True, True]
        choice.query_one("#cmd-2", Checkbox).toggle()  # no `grep`
        await wait_for(pilot, lambda: "or `grep" not in str(rule.render()), "the rule follows the choice")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(c[0] == "grant" for c in backend.calls), "grant created")
        [(tool, spec)] = [c[1] for c in backend.calls if c[0] == "grant"]
        assert tool == "bash" and spec.args_match == {"timeout": 30}
        assert spec.command_match == {"argument": "command", "prefixes": [["git", "status"], ["ls"]]}


async def test_a_line_with_an_unseen_command_offers_no_prefix() -> None:
    backend = shell_backend()
    app = make_app(backend)
    async with app.run_test(size=(80, 24)) as pilot:
        choice = await _open_choice(pilot, bash_call("git status > out.txt"))
        assert "No command prefix can be granted" in str(choice.query_one("#grant-commands Static", Static).render())
        assert choice.spec().command_match is None
        assert choice.spec().args_match == {"command": "git status > out.txt", "timeout": 30}  # the exact text


async def test_without_a_policy_table_the_choice_pins_arguments_as_before() -> None:
    app = make_app(FakeBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        choice = await _open_choice(pilot, bash_call())
        assert not choice.query("#grant-commands")
        assert choice.spec().command_match is None and choice.spec().args_match == {"command": LINE, "timeout": 30}


def test_grant_choice_for_a_shell_line_80x24(snap_compare) -> None:
    async def run_before(pilot):
        await _open_choice(pilot, bash_call())
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(make_app(shell_backend()), terminal_size=(80, 24), run_before=run_before)
