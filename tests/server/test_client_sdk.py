"""The client SDK (async and sync) against a real server process: same method names, same models."""

from __future__ import annotations

import asyncio
import signal

import pytest

from agent_core import (
    AgentNotFound,
    AlreadyDecided,
    FingerprintMismatch,
    GenerateResult,
    ResumeDataInvalid,
    SnapshotNotFound,
    SuspendedRunList,
    WardenError,
    WrongDecisionKind,
)
from agent_core.chunks import Chunk, ToolCallApprovalPayload, ToolCallSuspendedPayload
from tests.server.helpers import TOKEN
from warden_client import InvalidRequest, SyncWardenClient, Unauthorized, WardenClient

AGENT_METHODS = [
    "stream",
    "generate",
    "approve_tool_call",
    "decline_tool_call",
    "approve_tool_call_generate",
    "decline_tool_call_generate",
    "resume_stream",
    "resume_generate",
    "list_suspended_runs",
    "send_tool_approval",
]


def test_same_method_names_as_agent():
    from agent_core import Agent
    from warden_client import RemoteAgent, SyncRemoteAgent

    for name in AGENT_METHODS:
        assert hasattr(Agent, name)
        assert hasattr(RemoteAgent, name) and hasattr(SyncRemoteAgent, name), name


async def test_stream_approve_with_async_client(server, servers):
    async with WardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")
        stream = await ops.stream("delete c1", thread_id="tc", resource_id="uc")
        assert stream.run_id  # from the response header, before the first chunk is read
        chunks = [c async for c in stream.full_stream]
        assert all(isinstance(c, Chunk) for c in chunks)
        assert [c.type for c in chunks][-1] == "tool-call-approval"
        assert stream.status == "suspended" and stream.finish_reason == "suspended"
        payload = stream.suspend_payload
        assert isinstance(payload, ToolCallApprovalPayload) and payload.args == {"id": "c1"}
        # both full_stream and text_stream can be read again
        assert [c.type for c in [c async for c in stream.full_stream]] == [c.type for c in chunks]
        assert [t async for t in stream.text_stream] == []

        runs = await ops.list_suspended_runs(thread_id="tc")
        assert isinstance(runs, SuspendedRunList) and runs.total == 1
        run = runs.runs[0]
        assert run.run_id == stream.run_id and run.agent_id == "ops" and run.resource_id == "uc"
        assert run.tool_calls[0].tool_call_id == payload.tool_call_id
        assert run.tool_calls[0].fingerprint == payload.fingerprint

        done = await ops.approve_tool_call(
            run_id=stream.run_id, tool_call_id=payload.tool_call_id, fingerprint=payload.fingerprint
        )
        assert done.run_id == stream.run_id
        assert await done.text() == 'done: {"deleted": "c1"}'
        assert done.status == "finished" and done.finish_reason == "stop"
        result = next(c for c in await done.chunks() if c.type == "tool-result")
        assert result.payload.result == {"deleted": "c1"}
        assert (await ops.list_suspended_runs()).total == 0
        assert len(servers.executions()) == 1

        with pytest.raises(AlreadyDecided) as e:
            await ops.approve_tool_call(run_id=stream.run_id, tool_call_id=payload.tool_call_id)
        assert e.value.code == "AGENT_TOOL_CALL_ALREADY_DECIDED" and e.value.status_code == 409


async def test_errors_map_to_the_runtime_classes(server, servers):
    async with WardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")
        with pytest.raises(AgentNotFound):
            await client.agent("nobody").stream("hi")
        with pytest.raises(SnapshotNotFound) as e:
            await ops.approve_tool_call(run_id="missing", tool_call_id="x")
        assert e.value.code == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
        s = await ops.stream("delete e1")
        await s.consume()
        call = s.suspend_payload.tool_call_id
        with pytest.raises(FingerprintMismatch):
            await ops.approve_tool_call(run_id=s.run_id, tool_call_id=call, fingerprint="sha256:nope")
        with pytest.raises(SnapshotNotFound):
            await client.agent("other").approve_tool_call(run_id=s.run_id, tool_call_id=call)
        with pytest.raises(WrongDecisionKind):
            await ops.resume_stream({"answer": "x"}, run_id=s.run_id, tool_call_id=call)
        with pytest.raises(InvalidRequest) as bad:
            await ops.stream([{"role": "wizard", "content": "x"}])
        assert isinstance(bad.value, WardenError) and bad.value.status_code == 422

        a = await ops.stream("ask q?")
        await a.consume()
        assert isinstance(a.suspend_payload, ToolCallSuspendedPayload)
        with pytest.raises(ResumeDataInvalid) as inv:
            await ops.resume_stream({"answer": 3}, run_id=a.run_id)
        assert inv.value.errors and inv.value.errors[0]["loc"] == ["answer"]
        assert (await ops.list_suspended_runs()).total == 2
        assert servers.executions() == []

    async with WardenClient(server.url, token="bad") as bad_client:
        with pytest.raises(Unauthorized):
            await bad_client.agent("ops").list_suspended_runs()
    async with WardenClient(server.url) as anon:
        with pytest.raises(Unauthorized):
            await anon.list_agents()
        assert (await anon.health())["status"] == "ok"


async def test_generate_decline_resume_and_send_with_async_client(server, servers):
    async with WardenClient(server.url + "/api", token=TOKEN) as client:  # a base URL ending in /api works too
        ops = client.agent("ops")
        assert set(await client.list_agents()) == {"ops", "other", "guarded", "boss"}
        g = await ops.generate("delete g1")
        assert isinstance(g, GenerateResult) and g.finish_reason == "suspended"
        assert isinstance(g.suspend_payload, ToolCallApprovalPayload)
        ok = await ops.approve_tool_call_generate(run_id=g.run_id, tool_call_id=g.suspend_payload.tool_call_id)
        assert ok.finish_reason == "stop" and ok.tool_results[0].result == {"deleted": "g1"}
        assert ok.text == 'done: {"deleted": "g1"}' and ok.usage.total_tokens >= 0

        g2 = await ops.generate("delete g2")
        no = await ops.decline_tool_call_generate(run_id=g2.run_id, reason="keep it")
        assert no.finish_reason == "stop" and "keep it" in no.text

        s = await ops.stream("delete g3")
        await s.consume()
        d = await ops.decline_tool_call(run_id=s.run_id)
        types = [c.type async for c in d.full_stream]
        assert "tool-output-denied" in types and d.status == "finished"

        a = await ops.generate("ask name?")
        assert isinstance(a.suspend_payload, ToolCallSuspendedPayload)
        assert a.suspend_payload.suspend_payload == {"question": "name?"}
        r = await ops.resume_generate({"answer": "Ada"}, run_id=a.run_id)
        assert r.text == 'done: {"answer": "Ada"}'

        a2 = await ops.stream("ask age?", thread_id="t-resume")
        await a2.consume()
        rs = await ops.resume_stream({"answer": "42"}, run_id=a2.run_id)
        assert [t async for t in rs.text_stream] == ['done: {"answer": "42"}']

        await (await ops.stream("delete g4", thread_id="t-send")).consume()
        sent = await ops.send_tool_approval(thread_id="t-send", approved=True)
        assert sent.status == "finished" and any(c.type == "tool-result" for c in [c async for c in sent.full_stream])
        assert sorted(e[2] for e in servers.executions("delete-record")) == ['{"id": "g1"}', '{"id": "g4"}']
        assert (await ops.list_suspended_runs()).total == 0


async def test_dropping_the_connection_does_not_drop_the_decision(servers):
    """The client goes away right after the server accepted an approval: the run still completes."""
    server = servers.start("drop")
    async with WardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")
        s = await ops.stream("delete dropped")
        await s.consume()
        d = await ops.approve_tool_call(run_id=s.run_id)
        await d.aclose()  # before reading a single chunk
        with pytest.raises(AlreadyDecided):
            await ops.approve_tool_call(run_id=s.run_id, tool_call_id=s.suspend_payload.tool_call_id)
    # graceful stop (SIGTERM) waits for accepted runs; uvicorn re-raises the signal once it has shut down
    assert server.stop() in (0, -signal.SIGTERM)
    assert "Traceback" not in server.log()
    assert [e[2] for e in servers.executions()] == ['{"id": "dropped"}']
    restarted = servers.start("drop-again")
    async with WardenClient(restarted.url, token=TOKEN) as client:
        assert (await client.agent("ops").list_suspended_runs()).total == 0


def test_sync_client(server, servers):
    with SyncWardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")
        s = ops.stream("delete sync1", require_tool_approval=True)
        assert s.run_id
        assert [c.type for c in s.full_stream][-1] == "tool-call-approval"
        assert s.status == "suspended"
        listed = ops.list_suspended_runs()
        assert listed.total == 1 and listed.runs[0].run_id == s.run_id
        d = ops.approve_tool_call(run_id=s.run_id, tool_call_id=s.suspend_payload.tool_call_id)
        assert d.text() == 'done: {"deleted": "sync1"}' and d.status == "finished"
        with pytest.raises(AlreadyDecided):
            ops.approve_tool_call(run_id=s.run_id, tool_call_id=s.suspend_payload.tool_call_id)

        g = ops.generate("ask colour?")
        assert ops.resume_generate({"answer": "red"}, run_id=g.run_id).text == 'done: {"answer": "red"}'
        g2 = ops.generate("delete sync2")
        assert ops.decline_tool_call_generate(run_id=g2.run_id).finish_reason == "stop"
        g3 = ops.generate("delete sync3")
        assert ops.approve_tool_call_generate(run_id=g3.run_id).tool_results[0].result == {"deleted": "sync3"}
        s4 = ops.stream("delete sync4")
        s4.consume()
        assert "tool-output-denied" in [c.type for c in ops.decline_tool_call(run_id=s4.run_id).full_stream]
        s5 = ops.stream("ask q?", thread_id="ts5")
        s5.consume()
        assert ops.resume_stream({"answer": "a"}, run_id=s5.run_id).status is None  # not read yet
        s6 = ops.stream("delete sync6", thread_id="ts6")
        s6.consume()
        assert ops.send_tool_approval(thread_id="ts6", approved=False).status == "finished"
        assert set(client.list_agents()) == {"ops", "other", "guarded", "boss"} and client.health()["status"] == "ok"
        with pytest.raises(SnapshotNotFound):
            ops.resume_generate({"answer": "x"}, run_id="nope")
    with SyncWardenClient(server.url) as anon, pytest.raises(Unauthorized):
        anon.agent("ops").stream("hi")
    assert sorted(e[2] for e in servers.executions("delete-record")) == ['{"id": "sync1"}', '{"id": "sync3"}']


async def test_many_concurrent_streams_through_one_client(server, servers):
    async with WardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")

        async def one(i: int) -> str:
            s = await ops.stream(f"delete many{i}", thread_id=f"tm{i}")
            await s.consume()
            d = await ops.approve_tool_call(run_id=s.run_id)
            return await d.text()

        texts = await asyncio.gather(*(one(i) for i in range(20)))
        assert texts == [f'done: {{"deleted": "many{i}"}}' for i in range(20)]
    assert len(servers.executions()) == 20


async def test_streams_read_to_done_reuse_one_connection(server):
    async with WardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")
        for i in range(3):
            s = await ops.stream(f"delete reuse{i}")
            await s.consume()
            await (await ops.approve_tool_call(run_id=s.run_id)).consume()
        pool = client.http._transport._pool  # httpcore's pool: one kept-alive connection, not six closed ones
        assert len(pool.connections) == 1
    with SyncWardenClient(server.url, token=TOKEN) as sync_client:
        for _ in range(3):
            sync_client.agent("ops").stream("hello").consume()
        assert len(sync_client.http._transport._pool.connections) == 1


async def test_failed_run_status_through_the_client(server):
    async with WardenClient(server.url, token=TOKEN) as client:
        s = await client.agent("ops").stream("boom")
        chunks = await s.consume()
        assert chunks[-1].type == "error" and s.status == "failed" and s.finish_reason == "error"
        g = await client.agent("ops").generate("boom")
        assert g.finish_reason == "error" and g.status == "failed" and "model exploded" in g.error


async def test_runtime_level_listing_and_get(server):
    """Warden extensions for consoles: every agent's pending runs, and one run by id."""
    async with WardenClient(server.url, token=TOKEN) as client:
        a = await client.agent("ops").stream("delete x1", thread_id="tl")
        await a.consume()
        b = await client.agent("other").stream("ask why?", thread_id="tl")
        await b.consume()
        everyone = await client.list_suspended_runs()
        assert everyone.total == 2 and {r.agent_id for r in everyone.runs} == {"ops", "other"}
        only_other = await client.list_suspended_runs(agent_id="other")
        assert [r.run_id for r in only_other.runs] == [b.run_id]
        assert (await client.list_suspended_runs(thread_id="tl", per_page=1)).total == 2
        run = await client.get_suspended_run(a.run_id)
        assert run.agent_id == "ops" and run.tool_calls[0].kind == "approval"
        assert run.tool_calls[0].fingerprint == a.suspend_payload.fingerprint
        with pytest.raises(SnapshotNotFound):
            await client.get_suspended_run("no/such run")
        with pytest.raises(AgentNotFound):
            await client.list_suspended_runs(agent_id="nobody")
        await (await client.agent("ops").approve_tool_call(run_id=a.run_id)).consume()
        with pytest.raises(SnapshotNotFound):
            await client.get_suspended_run(a.run_id)
    with SyncWardenClient(server.url, token=TOKEN) as sync_client:
        assert sync_client.list_suspended_runs().total == 1
        assert sync_client.get_suspended_run(b.run_id).tool_calls[0].suspend_payload == {"question": "why?"}


async def test_remote_stream_has_the_agent_stream_surface(server):
    async with WardenClient(server.url, token=TOKEN) as client:
        ops = client.agent("ops")
        s = await ops.stream("delete p1")
        res = await s.result()
        assert isinstance(res, GenerateResult) and res.finish_reason == "suspended" and res.status == "suspended"
        assert isinstance(res.suspend_payload, ToolCallApprovalPayload) and res.run_id == s.run_id
        d = await (await ops.approve_tool_call(run_id=s.run_id)).wait()
        res = await d.result()
        assert res.finish_reason == "stop" and res.tool_results[0].result == {"deleted": "p1"}
        assert res.text == 'done: {"deleted": "p1"}' and d.error is None and d.usage.total_tokens >= 0
        assert [c.type for c in await d.chunks()] == [c.type for c in d.received]
        f = await ops.stream("boom")
        assert (await f.result()).finish_reason == "error" and "model exploded" in f.error
    with SyncWardenClient(server.url, token=TOKEN) as sc:
        s = sc.agent("ops").stream("delete p2")
        assert s.result().finish_reason == "suspended"
        assert sc.agent("ops").approve_tool_call(run_id=s.run_id).wait().status == "finished"
