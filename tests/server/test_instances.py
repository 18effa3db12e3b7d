"""Several server processes on one SQLite file, and a server restart between suspension and approval."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx

from tests.server.helpers import TOKEN, auth, error_of, first, parse_sse, raw, sse_post, types
from tests.server.procs import REPO, ServerProc
from warden_client import WardenClient

A = "/api/agents/ops"


async def test_suspended_through_a_listed_and_approved_through_b(servers):
    a, b = servers.start("a"), servers.start("b")
    async with WardenClient(a.url, token=TOKEN) as ca, WardenClient(b.url, token=TOKEN) as cb:
        s = await ca.agent("ops").stream("delete shared-1", thread_id="t-ab")
        await s.consume()
        assert s.status == "suspended"
        listed = await cb.agent("ops").list_suspended_runs(thread_id="t-ab")
        assert [r.run_id for r in listed.runs] == [s.run_id]
        done = await cb.agent("ops").approve_tool_call(run_id=s.run_id, tool_call_id=s.suspend_payload.tool_call_id)
        assert await done.text() == 'done: {"deleted": "shared-1"}'
        assert (await ca.agent("ops").list_suspended_runs()).total == 0
    rows = servers.executions()
    assert len(rows) == 1
    assert rows[0][3] == b.proc.pid  # executed by instance B, once


async def _race(a_url: str, b_url: str, route: str, body: dict) -> list[httpx.Response]:
    async with httpx.AsyncClient(headers=auth(), timeout=60) as http:
        return list(
            await asyncio.gather(
                http.post(f"{a_url}{A}/{route}", json=body),
                http.post(f"{b_url}{A}/{route}", json=body),
            )
        )


async def test_concurrent_approvals_of_one_call_through_two_instances(servers):
    a, b = servers.start("a"), servers.start("b")
    rounds = 8
    with raw(a.url) as c:
        pending = []
        for i in range(rounds):
            _r, chunks = sse_post(c, f"{A}/stream", {"messages": f"delete race{i}", "threadId": f"tr{i}"})
            p = first(chunks, "tool-call-approval")
            pending.append((p["runId"], p["payload"]["toolCallId"]))
    winners = {a.url: 0, b.url: 0}
    for i, (run_id, call_id) in enumerate(pending):
        route = "approve-tool-call" if i % 2 == 0 else "approve-tool-call-generate"
        ra, rb = await _race(a.url, b.url, route, {"runId": run_id, "toolCallId": call_id})
        statuses = sorted([ra.status_code, rb.status_code])
        assert statuses == [200, 409], (ra.text, rb.text)
        loser = ra if ra.status_code == 409 else rb
        assert error_of(loser)["code"] == "AGENT_TOOL_CALL_ALREADY_DECIDED"
        winner = ra if ra.status_code == 200 else rb
        winners[a.url if winner is ra else b.url] += 1
        if route == "approve-tool-call":
            assert "tool-result" in types(parse_sse(winner.text))
        else:
            assert winner.json()["toolResults"][0]["result"] == {"deleted": f"race{i}"}
    rows = servers.executions()
    assert sorted(r[2] for r in rows) == sorted(f'{{"id": "race{i}"}}' for i in range(rounds))  # each once
    with raw(b.url) as c:
        assert c.get(f"{A}/suspended-runs").json()["total"] == 0


async def test_concurrent_approve_and_decline_through_two_instances(servers):
    a, b = servers.start("a"), servers.start("b")
    with raw(a.url) as c:
        _r, chunks = sse_post(c, f"{A}/stream", {"messages": "delete ad"})
        p = first(chunks, "tool-call-approval")
    body = {"runId": p["runId"], "toolCallId": p["payload"]["toolCallId"]}
    async with httpx.AsyncClient(headers=auth(), timeout=60) as http:
        ra, rb = await asyncio.gather(
            http.post(f"{a.url}{A}/approve-tool-call-generate", json=body),
            http.post(f"{b.url}{A}/decline-tool-call-generate", json=body),
        )
    assert sorted([ra.status_code, rb.status_code]) == [200, 409]
    executed = len(servers.executions())
    assert executed == (1 if ra.status_code == 200 else 0)


async def test_restart_between_suspension_and_approval(servers):
    first_server = servers.start("before")
    async with WardenClient(first_server.url, token=TOKEN) as client:
        s = await client.agent("ops").stream("delete survivor", thread_id="t-restart")
        await s.consume()
        g = await client.agent("ops").generate("ask still there?", thread_id="t-restart")
    first_server.crash()  # kill -9: no shutdown code runs
    second = servers.start("after")
    async with WardenClient(second.url, token=TOKEN) as client:
        ops = client.agent("ops")
        listed = await ops.list_suspended_runs(thread_id="t-restart")
        assert {r.run_id for r in listed.runs} == {s.run_id, g.run_id}
        done = await ops.approve_tool_call(run_id=s.run_id, tool_call_id=s.suspend_payload.tool_call_id)
        assert await done.text() == 'done: {"deleted": "survivor"}'
        resumed = await ops.resume_generate({"answer": "yes"}, run_id=g.run_id)
        assert resumed.text == 'done: {"answer": "yes"}'
        assert (await ops.list_suspended_runs()).total == 0
    rows = servers.executions()
    assert sorted(r[0] for r in rows) == ["ask-user", "delete-record"]
    assert all(r[3] == second.proc.pid for r in rows)


def _serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "warden_server", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def test_no_token_means_loopback_only(servers):

    proc = ServerProc(servers.db, servers.counter_db, servers.tmp_path, "probe")
    env = proc.env()
    for host in ["0.0.0.0", "::", "192.0.2.10", "example.org"]:
        r = _serve("--app", "tests.server.warden_test_app:runtime", "--host", host, "--port", "0", env=env)
        assert r.returncode == 2, (host, r.stdout, r.stderr)
        assert "refusing to listen" in r.stderr and "WARDEN_API_TOKEN" in r.stderr
    r = _serve("--app", "nope_module:runtime", "--port", "0", env=env)
    assert r.returncode == 2 and "cannot import" in r.stderr
    r = _serve("--app", ":runtime", "--port", "0", env=env)
    assert r.returncode == 2 and "module:attribute" in r.stderr
    r = _serve("--app", "tests.server.warden_test_app:TOOLS", "--port", "0", env=env)
    assert r.returncode == 2 and "not an agent_core.Runtime" in r.stderr

    # without a token on loopback it serves, says so, and needs no Authorization header
    open_server = servers.start("open", token=None)
    assert "authentication is OFF" in open_server.log()
    with raw(open_server.url, token=None) as c:
        assert c.get("/api/agents").status_code == 200


def test_token_from_environment(servers):

    class EnvTokenServer(ServerProc):
        def env(self) -> dict[str, str]:
            e = super().env()
            e["WARDEN_API_TOKEN"] = "from-env-token"
            return e

    s = EnvTokenServer(servers.db, servers.counter_db, servers.tmp_path, "envtok", token=None)
    servers.servers.append(s)
    s.start()
    with raw(s.url, token=None) as c:
        assert c.get("/api/agents").status_code == 401
    with raw(s.url, token="from-env-token") as c:
        assert c.get("/api/agents").status_code == 200
