"""Operator power over HTTP (client SDK, raw routes) and from the CLI, against another process's store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent_core import ApprovalExpired, GrantNotAllowed, GrantNotFound, ToolArgsInvalid, fingerprint
from tests.apps.operator import build_runtime
from tests.helpers import ExecLog
from warden_client import SyncWardenClient, WardenClient

ROOT = Path(__file__).resolve().parent.parent
READY = "Warden server listening on "


def env_for(db: Path, log: ExecLog) -> dict[str, str]:
    return dict(os.environ, WARDEN_TEST_DB=str(db), WARDEN_TEST_EXEC=log.path, PYTHONPATH=str(ROOT))


@pytest.fixture
def setup(tmp_path) -> tuple[Path, ExecLog]:
    return tmp_path / "w.db", ExecLog(tmp_path / "exec.db")


@pytest.fixture
def server(setup) -> Iterator[str]:
    db, log = setup
    proc = subprocess.Popen(
        [sys.executable, "-m", "warden_server", "--app", "tests.apps.operator:runtime", "--port", "0"],
        cwd=ROOT,
        env=env_for(db, log),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    url = ""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(READY):
            url = line[len(READY) :].strip()
            break
    try:
        assert url, "the server did not start"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_edit_deadline_and_grants_over_http(server, setup):
    _, log = setup
    async with WardenClient(server) as client:
        agent = client.agent("mail")
        s = await agent.stream("send ana@example.com", thread_id="t-1")
        chunks = [c async for c in s.full_stream]
        approval = chunks[-1]
        assert approval.type == "tool-call-approval"
        assert approval.payload.expires_at is None  # no deadline: none on the wire either
        with pytest.raises(ToolArgsInvalid):
            await agent.approve_tool_call(run_id=s.run_id, args={"priority": "high"})
        res = await agent.approve_tool_call_generate(
            run_id=s.run_id,
            args={"to": "bob@example.org", "priority": "3"},
            fingerprint=fingerprint("send_email", {"to": "ana@example.com"}),
        )
        assert json.loads(res.text)["args"] == {"to": "bob@example.org", "subject": "hello", "priority": 3}
        assert log.rows() == [("send_email", {"to": "bob@example.org", "subject": "hello", "priority": 3})]
        # deadlines: expiresAt listed, expired refused, swept by the server route
        s2 = await agent.stream("send ana@example.com", thread_id="t-2", approval_timeout=0.2)
        chunks2 = [c async for c in s2.full_stream]
        listed = await client.list_suspended_runs()
        assert listed.runs[0].tool_calls[0].expires_at is not None and listed.runs[0].expires_at is not None
        # the approval chunk, decoded from the server's stream, carries the listed deadline
        assert chunks2[-1].type == "tool-call-approval"
        assert chunks2[-1].payload.expires_at == listed.runs[0].tool_calls[0].expires_at
        import asyncio

        await asyncio.sleep(0.3)
        with pytest.raises(ApprovalExpired):
            await agent.approve_tool_call(run_id=s2.run_id, tool_call_id="c0")
        assert await client.sweep() in (0, 1)  # the server's periodic sweep may have been first
        assert (await client.list_suspended_runs()).total == 0
        with pytest.raises(ApprovalExpired):
            await agent.approve_tool_call(run_id=s2.run_id, tool_call_id="c0")
        # grants
        g = await client.grant("send_email", scope="thread", scope_id="t-3", args_match={"to": "ana@example.com"})
        assert [x.id for x in await client.list_grants()] == [g.id]
        s3 = await agent.stream("send ana@example.com", thread_id="t-3")
        [result] = [c async for c in s3.full_stream if c.type == "tool-result"]
        assert result.payload.grant_id == g.id
        with pytest.raises(GrantNotAllowed):
            await client.grant("wipe", scope="agent", agent_id="mail")
        await client.revoke_grant(g.id)
        with pytest.raises(GrantNotFound):
            await client.revoke_grant(g.id)
    with SyncWardenClient(server) as sync:
        assert sync.list_grants() == []
        forever = sync.grant("send_email", scope="agent", agent_id="mail", expires_in=None)
        assert forever.expires_at is None
    r = httpx.post(server + "/api/grants", json={"toolName": "send_email", "scope": "nope"})
    assert r.status_code == 422


async def test_the_console_remote_backend_edits_grants_and_revokes(server, setup):
    """The console's ``RemoteBackend`` (tui/backend.py) against the server: edited args, grants."""
    from tui.backend import GrantSpec, PendingCall, RemoteBackend

    _, log = setup
    backend = await RemoteBackend.connect(server)
    try:
        assert backend.grants_allowed("send_email") and not backend.grants_allowed("wipe")  # allowGrants: false
        s = await backend.start_run("mail", "send ana@example.com", thread_id="t-9")
        call = PendingCall.from_chunk([c async for c in s.full_stream][-1])
        with pytest.raises(ToolArgsInvalid):
            await backend.approve(call.run_id, call.tool_call_id, call.fingerprint, args={"to": 5})
        assert (await backend.list_pending()).total == 1  # still pending, unchanged
        spec = GrantSpec(scope="thread", scope_id="t-9", args_match={"to": "ana@example.com"}, expires_in=900)
        grant = await backend.grant("send_email", spec)
        assert grant.describe() == spec.describe("send_email")
        assert spec.describe("send_email") == "allow send_email with to=ana@example.com in thread t-9 for 15 minutes"
        edited = await backend.approve(call.run_id, call.tool_call_id, call.fingerprint, args={"to": "bob@example.org"})
        [c async for c in edited.full_stream]
        assert log.rows() == [("send_email", {"to": "bob@example.org", "subject": "hello", "priority": 1})]
        assert [g.id for g in await backend.list_grants()] == [grant.id]
        await backend.revoke_grant(grant.id)
        assert await backend.list_grants() == []
    finally:
        await backend.aclose()


def warden(setup, *args: str) -> subprocess.CompletedProcess:
    db, log = setup
    cmd = [sys.executable, "-m", "warden_cli", *args, "--app", "tests.apps.operator:runtime"]
    return subprocess.run(cmd, cwd=ROOT, env=env_for(db, log), capture_output=True, text=True, timeout=120)


async def test_cli_approve_with_args_sweep_and_grants(setup):
    db, log = setup
    async with build_runtime(str(db), log.path) as rt:
        agent = rt.get_agent("mail")
        s = await agent.stream("send ana@example.com")
        await s.wait()
        s2 = await agent.stream("send ana@example.com", approval_timeout=0.05)
        await s2.wait()
    bad = warden(setup, "runs", "approve", s.run_id, "--args", '{"priority": "x"}')
    assert bad.returncode == 1 and "AGENT_TOOL_ARGS_INVALID" in bad.stderr
    out = warden(setup, "runs", "approve", s.run_id, "--args", '{"to": "bob@example.org"}')
    assert out.returncode == 0, out.stderr
    assert "bob@example.org" in out.stdout and "status: finished" in out.stdout
    listed = warden(setup, "runs", "list")
    assert "overdue" in listed.stdout, listed.stdout
    swept = warden(setup, "runs", "sweep")
    assert swept.returncode == 0 and "expired 1 approval" in swept.stdout
    late = warden(setup, "runs", "approve", s2.run_id, "--tool-call", "c0")
    assert late.returncode == 1 and "AGENT_APPROVAL_EXPIRED" in late.stderr
    made = warden(
        setup,
        "grants",
        "create",
        "send_email",
        "--scope",
        "thread",
        "--id",
        "t-42",
        "--match",
        '{"to": "ana@example.com"}',
    )
    assert made.returncode == 0, made.stderr
    assert "allow send_email with to=ana@example.com in thread t-42 for 1 hour" in made.stdout
    grant_id = made.stdout.split()[0]
    listed = warden(setup, "grants", "list", "--json")
    assert [g["id"] for g in json.loads(listed.stdout)] == [grant_id]
    assert warden(setup, "grants", "revoke", grant_id).returncode == 0
    gone = warden(setup, "grants", "revoke", grant_id)
    assert gone.returncode == 1 and "AGENT_GRANT_NOT_FOUND" in gone.stderr
    refused = warden(setup, "grants", "create", "wipe", "--scope", "agent", "--agent", "mail")
    assert refused.returncode == 1 and "AGENT_GRANT_NOT_ALLOWED" in refused.stderr
    assert log.rows() == [("send_email", {"to": "bob@example.org", "subject": "hello", "priority": 1})]
