"""The console against a remote Warden server: ``RemoteBackend`` (tui/backend.py) over the client SDK.

Backend-level tests check the ``ConsoleBackend`` protocol against a real server process; Pilot
tests drive the real Textual console with a ``RemoteBackend``: a live stream, the approval
dialog, a decision sent to the server, and the relaunch picker fed by the server's listing.
"""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from agent_core import AlreadyDecided, ResumeDataInvalid
from tests.console.conftest import log_text, showing, type_prompt, wait_for
from tests.server.helpers import TOKEN
from tui.app import WardenApp
from tui.backend import ConsoleBackend, PendingCall, RemoteBackend
from tui.console_settings import ConsoleSettings
from tui.screens.approval import ApprovalModal
from tui.screens.picker import PendingPicker
from warden_client import WardenClient

SIZE = (120, 40)


async def _drain(stream) -> list:
    return [c async for c in stream.full_stream]


async def test_remote_backend_filters_and_counts_through_the_servers_store(server):
    """The picker's query (``PendingQuery``) reaches the server's store as query parameters."""
    from tui.backend import PendingQuery

    backend = await RemoteBackend.connect(server.url, TOKEN)
    try:
        runs = {}
        for prompt in ("delete mail-ana", "delete mail-bob", "ask colour?"):
            chunks = await _drain(await backend.start_run("ops", prompt, thread_id=f"t-{prompt[-3:]}"))
            runs[prompt] = PendingCall.from_chunk(chunks[-1]).run_id
        page = await backend.list_pending(query=PendingQuery(text="ANA"), with_counts=True)
        assert [r.run_id for r in page.runs] == [runs["delete mail-ana"]]
        assert page.counts == {"approval": 1, "input": 0}
        page = await backend.list_pending(query=PendingQuery(kind="input"))
        assert [r.run_id for r in page.runs] == [runs["ask colour?"]] and page.counts is None
        page = await backend.list_pending(query=PendingQuery(tool_name="delete_tool", sort="tool"), with_counts=True)
        assert [r.run_id for r in page.runs] == [runs["delete mail-bob"], runs["delete mail-ana"]]
        assert page.counts == {"approval": 2, "input": 0}
    finally:
        await backend.aclose()


async def test_remote_backend_speaks_the_console_protocol(server, servers):
    backend = await RemoteBackend.connect(server.url, TOKEN)
    try:
        assert isinstance(backend, ConsoleBackend)
        assert backend.store_label == server.url
        assert [a.id for a in backend.list_agents()] == ["ops", "other", "guarded", "boss"]
        assert backend.list_agents()[0].name == "Ops" and backend.list_agents()[0].model_id == "function"

        s = await backend.start_run("ops", "delete rb1", thread_id="t-rb")
        chunks = await _drain(s)
        call = PendingCall.from_chunk(chunks[-1])
        assert call.kind == "approval" and call.args == {"id": "rb1"} and call.fingerprint

        page = await backend.list_pending(per_page=10)
        assert page.total == 1 and page.runs[0].agent_id == "ops" and page.runs[0].calls[0] == call
        assert (await backend.list_pending(agent_id="other")).total == 0
        run = await backend.get_run(call.run_id)
        assert run.thread_id == "t-rb" and run.calls[0].tool_call_id == call.tool_call_id

        done = await _drain(await backend.approve(call.run_id, call.tool_call_id, call.fingerprint))
        assert done[-1].type == "finish"
        with pytest.raises(AlreadyDecided):
            await backend.approve(call.run_id, call.tool_call_id, None)

        a = await _drain(await backend.start_run("ops", "ask colour?"))
        ask = PendingCall.from_chunk(a[-1])
        assert ask.kind == "input" and ask.resume_schema["required"] == ["answer"]
        with pytest.raises(ResumeDataInvalid):
            await backend.resume(ask.run_id, ask.tool_call_id, {"answer": 1})
        resumed = await _drain(await backend.resume(ask.run_id, ask.tool_call_id, {"answer": "red"}))
        assert any(c.type == "tool-result" for c in resumed)

        d = await _drain(await backend.start_run("ops", "delete rb2"))
        no = PendingCall.from_chunk(d[-1])
        declined = await _drain(await backend.decline(no.run_id, no.tool_call_id, "no"))
        assert any(c.type == "tool-output-denied" for c in declined)
        assert (await backend.list_pending()).total == 0
    finally:
        await backend.aclose()
    assert sorted(e[0] for e in servers.executions()) == ["ask-user", "delete-record"]


async def test_remote_backend_finds_the_agent_of_a_run_it_never_listed(server, servers):
    async with WardenClient(server.url, token=TOKEN) as other_ui:
        s = await other_ui.agent("other").stream("delete elsewhere")
        await s.consume()
    backend = await RemoteBackend.connect(server.url, TOKEN)
    try:
        call_id = s.suspend_payload.tool_call_id
        done = await _drain(await backend.approve(s.run_id, call_id, s.suspend_payload.fingerprint))
        assert done[-1].type == "finish"
    finally:
        await backend.aclose()
    assert len(servers.executions()) == 1


async def test_connect_refuses_a_bad_token(server):
    from warden_client import Unauthorized

    with pytest.raises(Unauthorized):
        await RemoteBackend.connect(server.url, "wrong")
    with pytest.raises(Unauthorized):
        RemoteBackend.open(server.url, None)


async def test_console_approves_on_a_remote_server(server, servers):
    # built as the CLI builds it, before the console's loop uses it
    app = WardenApp(
        RemoteBackend.open(server.url, TOKEN),
        ConsoleSettings(approval_guard=0, picker_refresh=0.1, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=SIZE) as pilot:
        await type_prompt(pilot, "delete remote-1")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "approval dialog")
        modal = app.screen
        assert modal.call.tool_name == "delete_tool" and modal.call.args == {"id": "remote-1"}
        await pilot.press("y")
        await wait_for(pilot, lambda: 'done: {"deleted": "remote-1"}' in log_text(app), "model answer after approval")
    assert [e[2] for e in servers.executions()] == ['{"id": "remote-1"}']
    async with WardenClient(server.url, token=TOKEN) as c:
        assert (await c.list_suspended_runs()).total == 0


async def test_console_relaunch_lists_runs_suspended_through_another_instance(servers):
    a, b = servers.start("a"), servers.start("b")
    async with WardenClient(a.url, token=TOKEN) as c:
        s = await c.agent("ops").stream("delete via-a")
        await s.consume()
    # no periodic picker refresh: the run is listed once, at start-up
    app = WardenApp(
        await RemoteBackend.connect(b.url, TOKEN),
        ConsoleSettings(approval_guard=0, picker_refresh=3600, status_refresh=0, cursor_blink=False),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: showing(app, PendingPicker) and app.screen.loads >= 1, "picker")
        picker = app.screen
        assert list(picker.calls) == [f"{s.run_id}:{s.suspend_payload.tool_call_id}"]
        table = picker.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1 and app.focused is table, "row focused")
        await pilot.press("enter")
        await wait_for(pilot, lambda: showing(app, ApprovalModal), "dialog of the stored run")
        assert app.screen.call.args == {"id": "via-a"}
        await pilot.press("y")
        await wait_for(pilot, lambda: 'done: {"deleted": "via-a"}' in log_text(app), "resumed run")
    rows = servers.executions()
    assert [r[2] for r in rows] == ['{"id": "via-a"}'] and rows[0][3] == b.proc.pid
