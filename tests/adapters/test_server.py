"""Hosted framework agents behind ``warden serve``: the client SDK streams, lists and decides their calls
over HTTP like a Warden agent's (a real server process on loopback, the store a SQLite file)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from agent_core import EditNotSupported, fingerprint
from tests.adapters.conftest import ROOT, exec_log
from warden_client import WardenClient

READY = "Warden server listening on "


@pytest.fixture(params=["pai_app", "oai_app"])
def server(request, app_env) -> Iterator[tuple[str, str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "warden_server", "--app", f"tests.adapters.{request.param}:build", "--port", "0"],
        cwd=ROOT,
        env={**os.environ, **app_env, "PYTHONPATH": str(ROOT)},
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
        yield url, request.param
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_a_framework_agent_over_http(server, app_env):
    url, app = server
    async with WardenClient(url) as client:
        agents = await client.list_agents()
        assert "records" in agents
        agent = client.agent("records")
        stream = await agent.stream("delete abc-123", thread_id="t1")
        chunks = [c async for c in stream.full_stream]
        approval = chunks[-1]
        assert approval.type == "tool-call-approval"
        assert approval.payload.fingerprint == fingerprint("delete_record", {"record_id": "abc-123"})
        listed = await client.list_suspended_runs()
        assert [c.tool_call_id for r in listed.runs for c in r.tool_calls] == [approval.payload.tool_call_id]
        if app == "oai_app":
            with pytest.raises(EditNotSupported):
                await agent.approve_tool_call(run_id=stream.run_id, args={"record_id": "other"})
        result = await agent.approve_tool_call_generate(run_id=stream.run_id, fingerprint=approval.payload.fingerprint)
        assert result.text == "deleted abc-123"
        assert (await client.list_suspended_runs()).total == 0
    assert [t for t, _ in exec_log(app_env).rows()] == ["delete_record", "model"]
