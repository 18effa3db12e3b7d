"""While a proxied call waits: MCP progress notifications, and the approval deadline (fail-closed).

The proxy is ``warden mcp-proxy`` in a subprocess in front of the test upstream; the SDK's ``Client``
calls it over stdio and over streamable HTTP.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import Client

from storage import open_store
from tests.mcp.helpers import AGENT, GUARD_SECONDS, http_proxy, pending, read_log, stdio_proxy, text_of, warden


class Progress:
    """An SDK progress callback that remembers what it was told."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str | None]] = []
        self.first = asyncio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, message))
        self.first.set()


async def _progress_then_approve(client: Client, db: Path) -> tuple[Any, Progress]:
    progress = Progress()
    call = asyncio.create_task(client.call_tool("delete_file", {"path": "a.txt"}, progress_callback=progress))
    row = await pending(db)
    await asyncio.wait_for(progress.first.wait(), GUARD_SECONDS)  # told before any decision
    assert not call.done()
    await warden("runs", "approve", row.run.run_id, "--db", str(db))
    return await asyncio.wait_for(call, GUARD_SECONDS), progress


async def test_progress_notifications_while_waiting_over_stdio(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        result, progress = await _progress_then_approve(client, db)
    assert result.structured_content == {"result": "deleted a.txt"}
    assert progress.seen[0][1] == "waiting for approval in Warden"
    assert read_log(log) == ["deleted a.txt"]


async def test_progress_notifications_while_waiting_over_http(tmp_path: Path, http_upstream: Any) -> None:
    url, log = http_upstream
    db = tmp_path / "w.db"
    with http_proxy("--db", str(db), "--upstream", url) as proxy_url:
        async with Client(proxy_url) as client:
            result, progress = await _progress_then_approve(client, db)
    assert result.structured_content == {"result": "deleted a.txt"}
    assert progress.seen and all(m == "waiting for approval in Warden" for _, m in progress.seen)
    assert read_log(log) == ["deleted a.txt"]


async def test_deadline_expires_the_call_fail_closed(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log, "--approval-timeout", "1")) as client:
        call = asyncio.create_task(client.call_tool("delete_file", {"path": "a.txt"}))
        row = await pending(db)
        assert row.calls[0].expires_at is not None  # the deadline is stored with the call
        result = await asyncio.wait_for(call, GUARD_SECONDS)  # the proxy sweeps its own overdue call
    assert result.is_error
    text = text_of(result)
    assert "expired" in text and "declined" not in text
    assert read_log(log) == []  # the upstream tool never ran
    store = open_store(db)
    try:
        audit = await store.audit_log(row.run.run_id)
        assert [(a.decision, a.agent_id) for a in audit] == [("expired", AGENT)]
        assert (await store.list_suspended())[1] == 0
    finally:
        await store.aclose()
