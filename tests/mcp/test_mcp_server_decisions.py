"""Decisions through the HTTP API on the MCP proxy's runs: ``warden serve`` on the same SQLite file.

The server does not host the agent ``mcp:files-upstream`` (the proxy does), so it records the decision
(handover) and answers ``finishReason: "handover"``; the proxy applies it and the MCP client gets the
upstream's result (approve) or a tool error with the reason (decline). Three real processes: the
proxy (with the upstream under it), the server, and this test's SDK clients.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from mcp import Client

from agent_core.errors import WardenError
from storage import open_store
from tests.mcp.helpers import (
    AGENT,
    GUARD_SECONDS,
    make_overdue,
    pending,
    read_log,
    stdio_proxy,
    text_of,
    warden_serve,
)
from warden_client import WardenClient


async def test_approve_and_decline_over_http_reach_the_mcp_client(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    with warden_serve(db) as url:
        async with Client(stdio_proxy(db, log)) as mcp, WardenClient(url) as warden:
            agent = warden.agent(AGENT)
            # approve, with the fingerprint shown by the server's listing
            call = asyncio.create_task(mcp.call_tool("delete_file", {"path": "a.txt"}))
            row = await pending(db)
            listed = await agent.list_suspended_runs()
            assert [r.run_id for r in listed.runs] == [row.run.run_id]
            assert (await warden.list_suspended_runs(agent_id=AGENT)).total == 1
            waiting = listed.runs[0].tool_calls[0]
            assert (waiting.tool_name, waiting.args) == ("delete_file", {"path": "a.txt"})
            shown = await warden.get_suspended_run(row.run.run_id)
            assert shown.agent_id == AGENT
            stream = await agent.approve_tool_call(run_id=row.run.run_id, fingerprint=waiting.fingerprint)
            await stream.wait()
            assert (stream.status, stream.finish_reason) == ("finished", "handover")
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert not result.is_error and result.structured_content == {"result": "deleted a.txt"}
            assert read_log(log) == ["deleted a.txt"]

            # decline (the generate route), with a reason the MCP client sees
            call = asyncio.create_task(mcp.call_tool("write_note", {"text": "hi"}))
            second = await pending(db)
            declined = await agent.decline_tool_call_generate(run_id=second.run.run_id, reason="not on Fridays")
            assert declined.finish_reason == "handover"
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert result.is_error and "declined" in text_of(result) and "not on Fridays" in text_of(result)
            assert read_log(log) == ["deleted a.txt"]
            # the run ended in the proxy: deciding again is refused, nothing runs
            with pytest.raises(WardenError):
                await agent.approve_tool_call_generate(run_id=second.run.run_id)
    store = open_store(db)
    try:
        audit = await store.audit_log()
        assert [(a.run_id, a.decision, a.reason) for a in audit] == [
            (row.run.run_id, "approved", None),
            (second.run.run_id, "declined", "not on Fridays"),
        ]
        assert (await store.list_suspended())[1] == 0
    finally:
        await store.aclose()


async def test_a_wrong_agent_id_or_a_run_without_handover_is_404_and_records_nothing(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    with warden_serve(db) as url:
        async with Client(stdio_proxy(db, log)) as mcp:
            call = asyncio.create_task(mcp.call_tool("delete_file", {"path": "b.txt"}))
            row = await pending(db)
            async with httpx.AsyncClient(base_url=url) as http:
                # the run exists, but not under this (unhosted) agent id
                wrong = await http.post(
                    "/api/agents/mcp%3Aother/approve-tool-call-generate", json={"runId": row.run.run_id}
                )
                assert wrong.status_code == 404
                listing = await http.get("/api/agents/mcp%3Aother/suspended-runs")
                assert listing.status_code == 404
                assert (await http.get("/api/suspended-runs", params={"agentId": "mcp:other"})).status_code == 404
            assert not call.done()
            store = open_store(db)
            try:  # nothing was recorded: the call still waits
                assert await store.audit_log(row.run.run_id) == []
                assert (await store.list_suspended(agent_id=AGENT))[1] == 1
            finally:
                await store.aclose()
            async with WardenClient(url) as warden:
                await warden.agent(AGENT).decline_tool_call_generate(run_id=row.run.run_id)
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert result.is_error and "declined" in text_of(result)
    assert read_log(log) == []


async def test_edit_grant_and_sweep_over_http_on_a_local_proxys_calls(tmp_path: Path) -> None:
    """The server does not host the agent, yet validates edits on the schema the proxy stored with the
    run, accepts a grant for the proxied tool, and its sweep expires an overdue proxied call."""
    db, log = tmp_path / "w.db", tmp_path / "log"
    with warden_serve(db) as url:
        async with Client(stdio_proxy(db, log, "--approval-timeout", "600")) as mcp, WardenClient(url) as warden:
            agent = warden.agent(AGENT)
            # edited arguments: invalid → typed error, nothing recorded; valid → the upstream runs them
            call = asyncio.create_task(mcp.call_tool("write_note", {"text": "hi"}))
            row = await pending(db)
            with pytest.raises(WardenError) as invalid:
                await agent.approve_tool_call_generate(run_id=row.run.run_id, args={"text": 3})
            assert invalid.value.code == "AGENT_TOOL_ARGS_INVALID"
            assert not call.done() and (await pending(db)).calls[0].args == {"text": "hi"}
            done = await agent.approve_tool_call_generate(run_id=row.run.run_id, args={"text": "edited", "count": 3})
            assert done.finish_reason == "handover"
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert result.structured_content == {"written": "edited", "count": 3}
            assert read_log(log) == ["note edited x3"]

            # a grant through the API while a call of that tool waits; the next call is covered
            call = asyncio.create_task(mcp.call_tool("delete_file", {"path": "a.txt"}))
            waiting = await pending(db)
            grant = await warden.grant("delete_file", scope="agent", agent_id=AGENT, args_match={"path": "z.txt"})
            covered = await asyncio.wait_for(mcp.call_tool("delete_file", {"path": "z.txt"}), GUARD_SECONDS)
            assert covered.structured_content == {"result": "deleted z.txt"}

            # the server's sweep (POST /api/sweep here; it also runs every 10 s) expires the waiting call
            make_overdue(db, waiting.run.run_id)
            await warden.sweep()  # 1, unless the periodic sweep got there first: the audit tells (once)
            assert await warden.sweep() == 0
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert result.is_error and "expired" in text_of(result)
    assert read_log(log) == ["note edited x3", "deleted z.txt"]
    store = open_store(db)
    try:
        audit = [(a.tool_name, a.decision, (a.detail or {}).get("grant_id")) for a in await store.audit_log()]
        assert audit == [
            ("write_note", "edited", None),
            ("delete_file", "granted", grant.id),
            ("delete_file", "expired", None),
        ]
    finally:
        await store.aclose()
