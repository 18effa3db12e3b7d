"""``GET /api/events`` from the client SDK (async and blocking), reconnection, and a prompt graceful stop.

Real ``warden serve`` processes on loopback (``procs.py``), SQLite (polled events) and PostgreSQL
(LISTEN/NOTIFY). A stop is prompt when the process exits within ``STOP_GUARD_SECONDS``, far below
the 30 s uvicorn would otherwise wait for the open event stream (a bound, not a speed figure).
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from storage import StoreEvent
from tests.pg import fresh_database
from tests.server.helpers import TOKEN, auth
from tests.server.procs import ServerFactory
from warden_client import SyncWardenClient, WardenClient

STOP_GUARD_SECONDS = 10
#: uvicorn ends a graceful stop by re-raising the signal it caught (so the exit status says SIGTERM).
GRACEFUL = (0, -signal.SIGTERM)


@pytest.fixture(params=["sqlite", "postgres"])
async def any_db(request, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "postgres":
        async with fresh_database() as dsn:
            yield dsn
    else:
        yield str(tmp_path / "warden.db")


@pytest.fixture
def db_servers(tmp_path: Path, any_db: str) -> Iterator[ServerFactory]:
    f = ServerFactory(tmp_path)
    f.db = any_db  # type: ignore[assignment]  # WARDEN_TEST_DB: the test app opens it with open_store
    yield f
    f.stop_all()


async def next_of(events: AsyncIterator[StoreEvent], want, timeout: float = 20.0) -> StoreEvent:
    async def scan() -> StoreEvent:
        async for event in events:
            if want(event):
                return event
        raise AssertionError("the event stream ended")

    return await asyncio.wait_for(scan(), timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_sdk_events_are_typed_and_survive_a_server_restart(db_servers):
    port = free_port()
    a = db_servers.start("a", extra_args=("--port", str(port)))
    async with WardenClient(a.url, token=TOKEN) as client, WardenClient(a.url, token=TOKEN) as actor:
        events = client.events(retry_seconds=0.2)
        try:
            first = await next_of(events, lambda e: True)
            assert first == StoreEvent("subscribed")
            s = await actor.agent("ops").stream("delete ev-1")
            await s.consume()
            got = await next_of(events, lambda e: e.type == "suspended")
            assert (got.run_id, got.agent_id) == (s.run_id, "ops")
            call_id = s.suspend_payload.tool_call_id
            await (await actor.agent("ops").approve_tool_call(run_id=s.run_id, tool_call_id=call_id)).consume()
            decided = await next_of(events, lambda e: e.type in ("decided", "ended"))
            assert decided.run_id == s.run_id

            # The server stops (its stream ends at once) and comes back on the same port: the
            # iterator reconnects by itself and says so with a new "subscribed".
            assert a.proc is not None
            a.proc.send_signal(signal.SIGTERM)
            assert a.proc.wait(timeout=STOP_GUARD_SECONDS) in GRACEFUL, a.log()
            b = db_servers.start("b", extra_args=("--port", str(port)))
            assert b.url == a.url
            assert (await next_of(events, lambda e: e.type == "subscribed")) == StoreEvent("subscribed")
            s2 = await actor.agent("ops").stream("delete ev-2")
            await s2.consume()
            assert (await next_of(events, lambda e: e.type == "suspended")).run_id == s2.run_id
        finally:
            await events.aclose()  # type: ignore[attr-defined]


async def test_sdk_events_raise_what_no_retry_fixes(servers):
    a = servers.start("a")
    async with WardenClient(a.url, token="wrong-token-0123456789") as client:
        with pytest.raises(Exception) as err:
            await anext(client.events())
        assert getattr(err.value, "status_code", None) == 401 and err.value.code == "UNAUTHORIZED"


def test_blocking_client_yields_events_too(servers):
    a = servers.start("a")
    with SyncWardenClient(a.url, token=TOKEN) as client, SyncWardenClient(a.url, token=TOKEN) as actor:
        events = client.events(reconnect=False)
        assert next(events) == StoreEvent("subscribed")
        s = actor.agent("ops").stream("delete ev-sync")
        s.consume()
        got = next(e for e in events if e.type == "suspended")
        assert (got.run_id, got.agent_id) == (s.run_id, "ops")
        events.close()


def test_sigterm_ends_open_event_streams_and_the_server_exits_promptly(db_servers):
    a = db_servers.start("a")
    with httpx.Client(timeout=httpx.Timeout(60.0)) as http:
        with http.stream("GET", f"{a.url}/api/events", headers=auth()) as resp:
            lines = resp.iter_lines()
            assert next(lines) == "event: subscribed"
            assert a.proc is not None
            a.proc.send_signal(signal.SIGTERM)
            rest = list(lines)  # ends when the server ends the stream, not when the client gives up
            assert all(line == "" or line.startswith(("data:", ":")) for line in rest), rest
    assert a.proc.wait(timeout=STOP_GUARD_SECONDS) in GRACEFUL, a.log()
