"""``GET /api/runs/{runId}/context`` and ``RemoteBackend.run_context``: the same context as the local backend."""

from __future__ import annotations

import httpx

from tests.console.conftest import demo_runtime, suspend_runs
from tui.backend import LocalBackend, RemoteBackend
from warden_client import WardenClient
from warden_server.app import create_app


async def test_remote_context_equals_local_context(db_path):
    (run_id,) = await suspend_runs(db_path, [("supervisor", "find user 12345")])
    runtime = demo_runtime(db_path)
    async with runtime:
        app = create_app(runtime, manage_runtime=False)
        client = WardenClient("http://warden.test", transport=httpx.ASGITransport(app=app))
        remote = RemoteBackend(client)
        try:
            got = await remote.run_context(run_id)
        finally:
            await client.aclose()
        local = await LocalBackend(runtime).run_context(run_id)
        assert got == local
        (ctx,) = [c for c in got.calls.values() if c.tool_name == "find_user"]
        assert ctx.request == "find user 12345"
        assert ctx.agent_path == ["supervisor", "data-agent"]
        assert ctx.tool_description == "Find a user by id"
        assert [e.role for e in got.transcript][:2] == ["user", "assistant"]

        declined = await runtime.decline_tool_call(run_id=run_id, reason="no")
        await declined.text()
        client = WardenClient("http://warden.test", transport=httpx.ASGITransport(app=app))
        try:
            after = await RemoteBackend(client).run_context(run_id)
        finally:
            await client.aclose()
        decision = after.decision_of(ctx.tool_call_id)
        assert decision is not None and decision.decision == "declined" and decision.reason == "no"
