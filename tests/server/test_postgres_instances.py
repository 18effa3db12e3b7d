"""Several ``warden serve`` instances on one PostgreSQL database; live updates over ``GET /api/events``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.pg import fresh_database
from tests.server.helpers import TOKEN, auth
from tests.server.procs import ServerFactory
from warden_client import WardenClient


@pytest.fixture
async def pg_dsn() -> AsyncIterator[str]:
    async with fresh_database() as dsn:
        yield dsn


@pytest.fixture
def pg_servers(tmp_path: Path, pg_dsn: str) -> Iterator[ServerFactory]:
    f = ServerFactory(tmp_path)
    f.db = pg_dsn  # type: ignore[assignment]  # WARDEN_TEST_DB: the test app opens it with open_store
    yield f
    f.stop_all()


async def sse_events(http: httpx.AsyncClient, url: str, out: asyncio.Queue) -> None:
    async with http.stream("GET", f"{url}/api/events", headers=auth()) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        kind = None
        async for line in resp.aiter_lines():
            if line.startswith("event: "):
                kind = line[len("event: ") :]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
                assert data["type"] == kind
                await out.put(data)


async def next_event(queue: asyncio.Queue, want, timeout: float = 10.0) -> dict:
    async def scan() -> dict:
        while True:
            event = await queue.get()
            if want(event):
                return event

    return await asyncio.wait_for(scan(), timeout)


async def test_two_instances_share_runs_and_every_console_hears_of_decisions(pg_servers):
    a, b = pg_servers.start("a"), pg_servers.start("b")
    heard_a: asyncio.Queue = asyncio.Queue()
    heard_b: asyncio.Queue = asyncio.Queue()
    async with httpx.AsyncClient(timeout=None) as http:
        listeners = [
            asyncio.ensure_future(sse_events(http, a.url, heard_a)),
            asyncio.ensure_future(sse_events(http, b.url, heard_b)),
        ]
        try:
            for q in (heard_a, heard_b):
                assert (await next_event(q, lambda e: True))["type"] == "subscribed"
            async with WardenClient(a.url, token=TOKEN) as ca, WardenClient(b.url, token=TOKEN) as cb:
                s = await ca.agent("ops").stream("delete pg-1", thread_id="t-pg")
                await s.consume()
                assert s.status == "suspended"
                for q in (heard_a, heard_b):
                    got = await next_event(q, lambda e: e["type"] == "suspended")
                    assert got["runId"] == s.run_id and got["agentId"] == "ops"
                listed = await cb.agent("ops").list_suspended_runs(thread_id="t-pg")
                assert [r.run_id for r in listed.runs] == [s.run_id]
                call_id = s.suspend_payload.tool_call_id
                done = await cb.agent("ops").approve_tool_call(run_id=s.run_id, tool_call_id=call_id)
                assert await done.text() == 'done: {"deleted": "pg-1"}'
                for q in (heard_a, heard_b):  # decided through B: A's console hears it too
                    got = await next_event(q, lambda e: e["type"] == "decided")
                    assert (got["runId"], got["toolCallId"], got["decision"]) == (s.run_id, call_id, "approved")
                    assert (await next_event(q, lambda e: e["type"] == "ended"))["runId"] == s.run_id
                assert (await ca.agent("ops").list_suspended_runs()).total == 0
        finally:
            for t in listeners:
                t.cancel()
            await asyncio.gather(*listeners, return_exceptions=True)
    rows = pg_servers.executions()
    assert len(rows) == 1 and rows[0][3] == b.proc.pid  # executed by instance B, once


async def test_events_on_sqlite_are_polled_behind_the_same_route(servers):
    a = servers.start("a")
    heard: asyncio.Queue = asyncio.Queue()
    async with httpx.AsyncClient(timeout=None) as http:
        listener = asyncio.ensure_future(sse_events(http, a.url, heard))
        try:
            assert (await next_event(heard, lambda e: True))["type"] == "subscribed"
            async with WardenClient(a.url, token=TOKEN) as ca:
                s = await ca.agent("ops").stream("delete sq-1")
                await s.consume()
                assert (await next_event(heard, lambda e: e["type"] == "suspended"))["runId"] == s.run_id
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)


# -- behind a reverse proxy --------------------------------------------------------------------------


@pytest.fixture
def nginx(tmp_path: Path, pg_servers: ServerFactory) -> Iterator[tuple[str, list]]:
    """nginx on loopback in front of two instances (round robin), as ``bench/server_load.py`` runs it;
    .ci/run installs nginx."""
    from bench._nginx import NginxUnavailable, start

    a, b = pg_servers.start("a"), pg_servers.start("b")
    try:
        proc, url = start([a.url, b.url], tmp_path)
    except NginxUnavailable as error:
        pytest.fail(str(error))
    try:
        yield url, [a, b]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_behind_nginx_a_run_suspended_through_the_proxy_is_approved_through_it_once(nginx, pg_servers):
    url, instances = nginx
    heard: asyncio.Queue = asyncio.Queue()
    async with httpx.AsyncClient(timeout=None) as http:
        listener = asyncio.ensure_future(sse_events(http, url, heard))
        try:
            assert (await next_event(heard, lambda e: True))["type"] == "subscribed"
            async with WardenClient(url, token=TOKEN) as client:
                runs = []
                for i in range(4):  # round robin: both instances suspend runs
                    s = await client.agent("ops").stream(f"delete px-{i}", thread_id="t-px")
                    await s.consume()
                    assert s.status == "suspended"
                    runs.append(s)
                listed = await client.agent("ops").list_suspended_runs(thread_id="t-px")
                assert sorted(r.run_id for r in listed.runs) == sorted(s.run_id for s in runs)
                for i, s in enumerate(runs):
                    call_id = s.suspend_payload.tool_call_id
                    done = await client.agent("ops").approve_tool_call(run_id=s.run_id, tool_call_id=call_id)
                    assert await done.text() == f'done: {{"deleted": "px-{i}"}}'
                    got = await next_event(heard, lambda e, s=s: e["type"] == "decided" and e["runId"] == s.run_id)
                    assert got["decision"] == "approved"
                assert (await client.agent("ops").list_suspended_runs()).total == 0
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)
    rows = pg_servers.executions()
    assert sorted(json.loads(r[2])["id"] for r in rows) == [f"px-{i}" for i in range(4)], "each executed once"
    assert {r[3] for r in rows} == {p.proc.pid for p in instances}, "both instances served decisions"
