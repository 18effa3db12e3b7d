"""A proxied call is expired, granted and edited from other processes, like any other call.

Real processes: ``warden mcp-proxy`` (stdio, the upstream under it) driven by the SDK's ``Client``,
and ``warden runs sweep`` / ``warden grants create`` / ``warden runs approve --args`` on the same
SQLite file. None of them hosts the agent ``mcp:files-upstream``: they record (expiry, edit) or
store (grant) what the proxy then applies; the schema they validate edits on is the one the proxy
stored with the run.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from mcp import Client

from storage import open_store
from tests.mcp.helpers import (
    AGENT,
    GUARD_SECONDS,
    WARDEN,
    make_overdue,
    pending,
    read_log,
    stdio_proxy,
    text_of,
    warden,
)
from warden_mcp.proxy import EXPIRED_TEXT


async def warden_fails(*args: str) -> str:
    """Run ``warden ARGS``, which must fail with exit code 1 (a typed error); its stderr."""
    proc = await asyncio.create_subprocess_exec(WARDEN, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 1, (out, err)
    return err.decode()


async def test_a_sweep_in_another_process_expires_the_proxied_call(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    # a deadline far away: the proxy never expires the call itself; the clock is moved in the store
    async with Client(stdio_proxy(db, log, "--approval-timeout", "600")) as client:
        call = asyncio.create_task(client.call_tool("delete_file", {"path": "a.txt"}))
        row = await pending(db)
        assert "expired 0 approvals" in await warden("runs", "sweep", "--db", str(db))
        make_overdue(db, row.run.run_id)
        assert "expired 1 approval" in await warden("runs", "sweep", "--db", str(db))
        result = await asyncio.wait_for(call, GUARD_SECONDS)
        assert result.is_error and text_of(result) == EXPIRED_TEXT
        # late decisions are refused: the call stays expired
        call_id = row.calls[0].tool_call_id
        error = await warden_fails("runs", "approve", row.run.run_id, "--tool-call", call_id, "--db", str(db))
        assert "AGENT_APPROVAL_EXPIRED" in error
        assert "expired 0 approvals" in await warden("runs", "sweep", "--db", str(db))
    assert read_log(log) == []  # the upstream tool never ran
    store = open_store(db)
    try:
        audit = await store.audit_log(row.run.run_id)
        assert [(a.decision, a.agent_id, a.actor) for a in audit] == [("expired", AGENT, "warden-sweep")]
        assert await store.get_run(row.run.run_id) is None  # the proxy applied it: the run ended
        assert (await store.list_suspended())[1] == 0
    finally:
        await store.aclose()


async def test_a_grant_created_from_the_cli_covers_the_next_proxied_call(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        first = asyncio.create_task(client.call_tool("delete_file", {"path": "a.txt"}))
        row = await pending(db)
        error = await warden_fails(
            "grants", "create", "format_disk", "--scope", "agent", "--agent", AGENT, "--db", str(db)
        )
        assert "INVALID_REQUEST" in error and "format_disk" in error
        created = await warden(
            "grants",
            "create",
            "delete_file",
            "--scope",
            "agent",
            "--agent",
            AGENT,
            "--match",
            '{"path": "b.txt"}',
            "--db",
            str(db),
        )
        grant_id = created.split()[0]
        assert grant_id.startswith("grant_") and "delete_file" in created
        # the grant decides no call already pending; a covered call runs at once, nobody decides it
        second = await asyncio.wait_for(client.call_tool("delete_file", {"path": "b.txt"}), GUARD_SECONDS)
        assert not second.is_error and second.structured_content == {"result": "deleted b.txt"}
        assert read_log(log) == ["deleted b.txt"] and not first.done()
        await warden("runs", "decline", row.run.run_id, "--db", str(db))
        assert (await asyncio.wait_for(first, GUARD_SECONDS)).is_error
    assert read_log(log) == ["deleted b.txt"]
    store = open_store(db)
    try:
        granted = [a for a in await store.audit_log() if a.decision == "granted"]
        assert [(a.agent_id, a.tool_name, (a.detail or {}).get("grant_id")) for a in granted] == [
            (AGENT, "delete_file", grant_id)
        ]
    finally:
        await store.aclose()


async def test_edited_args_from_the_cli_reach_the_upstream(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        call = asyncio.create_task(client.call_tool("write_note", {"text": "hi"}))
        row = await pending(db)
        run_id, waiting = row.run.run_id, row.calls[0]
        # invalid against the upstream's JSON Schema: a typed error, the call unchanged
        error = await warden_fails(
            "runs", "approve", run_id, "--db", str(db), "--args", '{"text": "hi", "count": "many"}'
        )
        assert "AGENT_TOOL_ARGS_INVALID" in error
        again = await pending(db)
        assert (again.calls[0].status, again.calls[0].args) == ("pending", {"text": "hi"})
        assert not call.done()
        await warden(
            "runs",
            "approve",
            run_id,
            "--db",
            str(db),
            "--fingerprint",
            waiting.fingerprint,
            "--args",
            '{"text": "bye", "count": 2}',
        )
        result = await asyncio.wait_for(call, GUARD_SECONDS)
    assert not result.is_error and result.structured_content == {"written": "bye", "count": 2}
    assert read_log(log) == ["note bye x2"]
    store = open_store(db)
    try:
        audit = await store.audit_log(run_id)
        assert [(a.decision, a.args) for a in audit] == [("edited", {"text": "bye", "count": 2})]
        assert audit[0].detail is not None and audit[0].detail["args"] == {"text": "hi"}
    finally:
        await store.aclose()
