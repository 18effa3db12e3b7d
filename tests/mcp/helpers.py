"""Shared by the MCP tests: the test upstream, the ``warden`` executable, waiting for a pending call."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from storage import open_store

UPSTREAM = str(Path(__file__).with_name("upstream_server.py"))
WARDEN = str(Path(sys.executable).with_name("warden"))
AGENT = "mcp:files-upstream"
#: a safety net for waits on other processes (not an assertion about speed)
GUARD_SECONDS = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def read_log(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def wait_for_port(port: int) -> None:
    deadline = time.monotonic() + GUARD_SECONDS
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


async def pending(db: Path, timeout: float = GUARD_SECONDS) -> Any:
    """The first pending run of the proxy's agent, as listed by a fresh store (another reader)."""
    store = open_store(db)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows, _ = await store.list_suspended(agent_id=AGENT)
            if rows:
                return rows[0]
            await asyncio.sleep(0.1)
    finally:
        await store.aclose()
    raise AssertionError("no pending MCP call appeared in the store")


async def warden(*args: str) -> str:
    proc = await asyncio.create_subprocess_exec(WARDEN, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, (out, err)
    return out.decode()


def stdio_proxy(db: Path, log: Path, *extra: str) -> StdioServerParameters:
    """``warden mcp-proxy --db DB [extra] -- python upstream_server.py LOG`` as the SDK client starts it."""
    return StdioServerParameters(
        command=WARDEN, args=["mcp-proxy", "--db", str(db), *extra, "--", sys.executable, UPSTREAM, str(log)]
    )


@contextlib.contextmanager
def http_proxy(*args: str) -> Iterator[str]:
    """``warden mcp-proxy ARGS --port N`` in a subprocess; yields its MCP URL."""
    port = free_port()
    proc = subprocess.Popen(
        [WARDEN, "mcp-proxy", *args, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@contextlib.contextmanager
def warden_serve(db: Path, *extra: str) -> Iterator[str]:
    """``warden serve --db DB --port 0`` in a subprocess (the demo agents: not the proxy's); yields its URL."""
    from warden_server.cli import READY_PREFIX

    proc = subprocess.Popen(
        [WARDEN, "serve", "--db", str(db), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:
            if line.startswith(READY_PREFIX):
                url = line[len(READY_PREFIX) :].strip()
                break
        assert url, "warden serve did not start"
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def make_overdue(db: Path, run_id: str) -> None:
    """Move the deadline of the run's waiting calls into the past, as the clock would (no sleeping)."""
    import sqlite3

    with sqlite3.connect(db, timeout=30) as conn:
        conn.execute(
            "UPDATE pending_calls SET expires_at = ? WHERE run_id = ? AND status = 'pending'", (time.time() - 1, run_id)
        )
