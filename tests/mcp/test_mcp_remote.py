"""``warden mcp-proxy --server URL --token T``: gated calls wait on a Warden server, not in a local store.

Real processes: ``warden serve`` on a SQLite file, the proxy (with the test upstream under it) talking
to it over HTTP, the SDK's MCP client on the proxy's stdio. Decisions through the server's HTTP API.
The proxy has no store of its own: what the test reads from the SQLite file the server wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from agent_core.errors import InvalidRequest, SnapshotNotFound
from storage import open_store
from storage.records import GrantRow
from tests.mcp.helpers import AGENT, GUARD_SECONDS, UPSTREAM, WARDEN, pending, read_log, text_of, warden_serve
from warden_client import WardenClient

TOKEN = "mcp-remote-test-token-0123456789"


def remote_proxy(url: str, log: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=WARDEN,
        args=["mcp-proxy", "--server", url, "--token", TOKEN, *extra, "--", sys.executable, UPSTREAM, str(log)],
    )


async def _audit(db: Path, run_id: str, count: int = 1) -> list[Any]:
    """The run's audit entries once ``count`` are there and the run ended (the server applies decisions)."""
    store = open_store(db)
    try:
        deadline = time.monotonic() + GUARD_SECONDS
        while time.monotonic() < deadline:
            audit = await store.audit_log(run_id)
            if len(audit) >= count and await store.get_run(run_id) is None:
                return audit
            await asyncio.sleep(0.1)
        raise AssertionError(f"run {run_id} did not end")
    finally:
        await store.aclose()


async def test_approve_and_decline_through_the_server(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    with warden_serve(db, "--token", TOKEN) as url:
        async with Client(remote_proxy(url, log)) as mcp, WardenClient(url, TOKEN) as warden:
            assert (await mcp.call_tool("list_files", {})).structured_content is not None  # ungated: not stored
            agent = warden.agent(AGENT)
            progress: list[str | None] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append(message)

            call = asyncio.create_task(
                mcp.call_tool("write_note", {"text": "remote", "count": 3}, progress_callback=on_progress)
            )
            row = await pending(db)
            waiting = (await agent.list_suspended_runs()).runs[0].tool_calls[0]
            assert (waiting.tool_name, waiting.args) == ("write_note", {"text": "remote", "count": 3})
            assert waiting.fingerprint == row.calls[0].fingerprint and read_log(log) == []
            # approve with edited arguments: validated by the server against the tool's JSON Schema
            stream = await agent.approve_tool_call(
                run_id=row.run.run_id, fingerprint=waiting.fingerprint, args={"text": "edited", "count": 1}
            )
            await stream.wait()
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert not result.is_error and result.structured_content == {"written": "edited", "count": 1}
            assert read_log(log) == ["note edited x1"]
            assert progress and progress[0] == "waiting for approval in Warden"
            audit = await _audit(db, row.run.run_id)
            assert [(a.decision, a.actor) for a in audit] == [("edited", "api-token")]  # the token's name
            assert audit[0].detail["edited_args"] == {"text": "edited", "count": 1}

            call = asyncio.create_task(mcp.call_tool("delete_file", {"path": "a.txt"}))
            second = await pending(db)
            await (await agent.decline_tool_call(run_id=second.run.run_id, reason="keep it")).wait()
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert result.is_error and "declined" in text_of(result) and "keep it" in text_of(result)
            assert [a.decision for a in await _audit(db, second.run.run_id)] == ["declined"]
    assert read_log(log) == ["note edited x1"]


async def test_deadline_cancellation_and_grant_through_the_server(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    with warden_serve(db, "--token", TOKEN) as url:
        async with Client(remote_proxy(url, log, "--approval-timeout", "1")) as mcp:
            # nobody decides: the server expires it, fail-closed
            result = await asyncio.wait_for(mcp.call_tool("delete_file", {"path": "a.txt"}), GUARD_SECONDS)
            assert result.is_error and "expired" in text_of(result) and "declined" not in text_of(result)
            store = open_store(db)
            try:
                assert [a.decision for a in await store.audit_log()] == ["expired"]
            finally:
                await store.aclose()

            # the MCP client cancels: withdrawn, audited
            call = asyncio.create_task(mcp.call_tool("delete_file", {"path": "b.txt"}))
            row = await pending(db)
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            audit = await _audit(db, row.run.run_id)
            assert [(a.decision, a.reason) for a in audit] == [("declined", "cancelled by the MCP client")]

            # a standing grant on the proxy's agent: the call runs without waiting
            store = open_store(db)
            try:
                await store.add_grant(
                    GrantRow(id="grant_mcp", tool_name="delete_file", scope="agent", agent_id=AGENT, created_at=1.0)
                )
            finally:
                await store.aclose()
            result = await asyncio.wait_for(mcp.call_tool("delete_file", {"path": "c.txt"}), GUARD_SECONDS)
            assert not result.is_error and result.structured_content == {"result": "deleted c.txt"}
    assert read_log(log) == ["deleted c.txt"]
    store = open_store(db)
    try:
        decisions = [a.decision for a in await store.audit_log()]
        assert decisions[:2] == ["expired", "declined"] and len(decisions) == 3  # the grant's entry
        assert (await store.list_suspended())[1] == 0
    finally:
        await store.aclose()


async def test_external_call_routes_refuse_bad_requests_and_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    tool = {"name": "delete_file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
    with warden_serve(db, "--token", TOKEN) as url:
        async with WardenClient(url, TOKEN) as warden:
            with pytest.raises(InvalidRequest):  # not an mcp:<name> agent id
                await warden.register_mcp_call("ops", tool, {"path": "x"})
            with pytest.raises(InvalidRequest):  # a tool schema that is no JSON Schema
                await warden.register_mcp_call(AGENT, {"name": "t", "inputSchema": {"type": 12}}, {})
            bad = await warden.register_mcp_call(AGENT, tool, {"path": 3})  # fails the schema: never pending
            assert bad["status"] == "error" and "input schema" in bad["error"]
            state = await warden.register_mcp_call(AGENT, tool, {"path": "x"})
            assert state["status"] == "pending" and state["fingerprint"]
            with pytest.raises(SnapshotNotFound):  # another secret: not this caller's call
                await warden.poll_mcp_call(state["toolCallId"], "not-the-secret")
            with pytest.raises(InvalidRequest):  # no result before a decision
                await warden.complete_mcp_call(state["toolCallId"], state["secret"], {"content": []})
            assert (await warden.poll_mcp_call(state["toolCallId"], state["secret"]))["status"] == "pending"
            withdrawn = await warden.withdraw_mcp_call(state["toolCallId"], state["secret"])
            assert withdrawn["status"] == "declined" and withdrawn["reason"] == "cancelled by the MCP client"
    store = open_store(db)
    try:
        assert [a.decision for a in await store.audit_log()] == ["declined"]
        assert (await store.list_suspended())[1] == 0
    finally:
        await store.aclose()


async def test_cli_edits_and_grants_on_the_servers_store_reach_the_remote_proxy(tmp_path: Path) -> None:
    """``warden runs approve --args`` and ``warden grants create`` in a third process, on the server's
    SQLite file: validated on the tool's schema stored with the run, adopted and applied by the server."""
    from tests.mcp.helpers import warden

    db, log = tmp_path / "w.db", tmp_path / "log"
    with warden_serve(db, "--token", TOKEN) as url:
        async with Client(remote_proxy(url, log)) as mcp:
            call = asyncio.create_task(mcp.call_tool("write_note", {"text": "remote"}))
            row = await pending(db)
            proc = await asyncio.create_subprocess_exec(
                WARDEN,
                "runs",
                "approve",
                row.run.run_id,
                "--db",
                str(db),
                "--args",
                '{"count": 2}',
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            _, err = await proc.communicate()
            assert proc.returncode == 1 and b"AGENT_TOOL_ARGS_INVALID" in err  # "text" is required
            assert not call.done() and (await pending(db)).calls[0].args == {"text": "remote"}
            await warden("grants", "create", "write_note", "--scope", "agent", "--agent", AGENT, "--db", str(db))
            await warden("runs", "approve", row.run.run_id, "--db", str(db), "--args", '{"text": "cli", "count": 2}')
            result = await asyncio.wait_for(call, GUARD_SECONDS)
            assert not result.is_error and result.structured_content == {"written": "cli", "count": 2}
            granted = await asyncio.wait_for(mcp.call_tool("write_note", {"text": "granted"}), GUARD_SECONDS)
            assert granted.structured_content == {"written": "granted", "count": 1}
    assert read_log(log) == ["note cli x2", "note granted x1"]
    audit = await _audit(db, row.run.run_id)
    assert [(a.decision, a.args) for a in audit] == [("edited", {"text": "cli", "count": 2})]
