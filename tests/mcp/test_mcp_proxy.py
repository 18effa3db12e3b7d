"""MCP: ``mcp_tools`` in an Agent, and ``warden mcp-proxy`` in front of a real upstream MCP server.

The upstream (tests/mcp/upstream_server.py) is the SDK's MCPServer run as a subprocess (stdio, or
streamable HTTP on a loopback port); the SDK's own ``Client`` talks to the proxy, which runs as
``warden mcp-proxy`` in a subprocess. Decisions come from other processes (``warden runs ...``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from agent_core import Agent, Runtime, mcp_tools
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import open_store
from tests.mcp.helpers import (
    AGENT,
    UPSTREAM,
    WARDEN,
    free_port,
    pending,
    read_log,
    stdio_proxy,
    text_of,
    warden,
)


async def test_proxy_lists_upstream_tools_and_read_only_passes_ungated(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"list_files", "delete_file", "write_note", "fail"}
        assert tools["list_files"].annotations.read_only_hint is True
        result = await asyncio.wait_for(client.call_tool("list_files", {"prefix": "a"}), 20)
        assert result.structured_content == {"result": ["a.txt"]}
        failed = await asyncio.wait_for(client.call_tool("fail", {"message": "boom"}), 20)
        assert failed.is_error and "boom" in text_of(failed)
    store = open_store(db)
    assert (await store.list_suspended())[1] == 0
    assert await store.audit_log() == []
    await store.aclose()


async def test_proxy_gated_call_approved_from_the_cli(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        call = asyncio.create_task(client.call_tool("delete_file", {"path": "a.txt"}))
        row = await pending(db)
        assert not call.done() and read_log(log) == []
        waiting = row.calls[0]
        assert waiting.tool_name == "delete_file" and waiting.args == {"path": "a.txt"}
        assert waiting.agent_path == [AGENT]
        shown = await warden("runs", "show", row.run.run_id, "--db", str(db))
        assert "delete_file" in shown and AGENT in shown
        await warden("runs", "approve", row.run.run_id, "--db", str(db), "--fingerprint", waiting.fingerprint)
        result = await asyncio.wait_for(call, 20)
    assert not result.is_error
    assert result.structured_content == {"result": "deleted a.txt"}
    assert read_log(log) == ["deleted a.txt"]
    store = open_store(db)
    audit = await store.audit_log(row.run.run_id)
    assert [a.decision for a in audit] == ["approved"]
    assert await store.get_run(row.run.run_id) is None  # the run ended in the proxy
    await store.aclose()


async def test_proxy_gated_call_declined(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        call = asyncio.create_task(client.call_tool("write_note", {"text": "hi"}))
        row = await pending(db)
        await warden("runs", "decline", row.run.run_id, "--db", str(db), "--reason", "not today")
        result = await asyncio.wait_for(call, 20)
    assert result.is_error
    assert "declined" in text_of(result) and "not today" in text_of(result)
    assert read_log(log) == []


async def test_proxy_invalid_arguments_never_reach_the_store(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        result = await asyncio.wait_for(client.call_tool("write_note", {"count": "many"}), 20)
    assert result.is_error and "input schema" in text_of(result)
    store = open_store(db)
    assert (await store.list_suspended())[1] == 0
    await store.aclose()


async def test_proxy_client_cancellation_withdraws_the_call(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    async with Client(stdio_proxy(db, log)) as client:
        call = asyncio.create_task(client.call_tool("delete_file", {"path": "b.txt"}))
        row = await pending(db)
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call
        store = open_store(db)
        try:
            deadline = time.monotonic() + 20
            audit: list[Any] = []
            while time.monotonic() < deadline:
                audit = await store.audit_log(row.run.run_id)
                if audit and await store.get_run(row.run.run_id) is None:
                    break
                await asyncio.sleep(0.1)
            assert [(a.decision, a.reason) for a in audit] == [("declined", "cancelled by the MCP client")]
            assert (await store.list_suspended())[1] == 0
        finally:
            await store.aclose()
    assert read_log(log) == []


async def test_proxy_over_streamable_http_both_sides(tmp_path: Path, http_upstream: Any) -> None:
    url, log = http_upstream
    db, port = tmp_path / "w.db", free_port()
    proxy = subprocess.Popen(
        [WARDEN, "mcp-proxy", "--db", str(db), "--upstream", url, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            await asyncio.sleep(0.1)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert (await client.call_tool("list_files", {})).structured_content == {
                "result": ["a.txt", "b.txt", "notes.md"]
            }
            call = asyncio.create_task(client.call_tool("write_note", {"text": "via http", "count": 2}))
            row = await pending(db)
            # a runtime that does not host the proxy's agent records the decision; the proxy applies it
            async with Runtime(storage=open_store(db), actor="alice") as other:
                stream = await other.approve_tool_call(run_id=row.run.run_id)
                await stream.wait()
            result = await asyncio.wait_for(call, 20)
        assert result.structured_content == {"written": "via http", "count": 2}
        assert read_log(log) == ["note via http x2"]
        store = open_store(db)
        assert [(a.decision, a.actor) for a in await store.audit_log(row.run.run_id)] == [("approved", "alice")]
        await store.aclose()
    finally:
        proxy.terminate()
        proxy.wait(10)


async def test_mcp_tools_in_an_agent_run_with_approval(tmp_path: Path) -> None:
    log = tmp_path / "log"

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(
                tool_calls=[
                    ToolCall(id="c1", name="list_files", args={}),
                    ToolCall(id="c2", name="delete_file", args={"path": "notes.md"}),
                ]
            )
        return ModelResponse(text="done: " + " | ".join(m.content for m in messages if m.role == "tool"))

    async with mcp_tools([sys.executable, UPSTREAM, str(log)], require_approval={"list_*": False}) as tools:
        assert tools.gated("delete_file") and tools.gated("write_note") and not tools.gated("list_files")
        agent = Agent(id="files", model=FunctionModel(model), tools=tools)
        async with Runtime({"files": agent}, open_store(tmp_path / "w.db")) as runtime:
            stream = await agent.stream("clean up")
            await stream.wait()
            assert stream.status == "suspended" and read_log(log) == []
            listed = await runtime.list_suspended_runs()
            assert [c.tool_name for c in listed.runs[0].tool_calls] == ["delete_file"]
            approved = await runtime.approve_tool_call(run_id=stream.run_id)
            text = await approved.text()
            assert approved.status == "finished"
    assert read_log(log) == ["deleted notes.md"]
    assert "deleted notes.md" in text and "a.txt" in text


async def test_mcp_tool_error_and_invalid_args_are_tool_errors(tmp_path: Path) -> None:
    async with mcp_tools([sys.executable, UPSTREAM], require_approval=False) as tools:

        def model(messages: list[Any], info: Any) -> ModelResponse:
            if messages[-1].role == "user":
                return ModelResponse(
                    tool_calls=[
                        ToolCall(id="c1", name="fail", args={"message": "boom"}),
                        ToolCall(id="c2", name="write_note", args={"count": 1}),
                    ]
                )
            return ModelResponse(text="ok")

        agent = Agent(id="files", model=FunctionModel(model), tools=tools)
        async with Runtime({"files": agent}):
            stream = await agent.stream("go")
            chunks = [c async for c in stream.full_stream]
    errors = {c.payload.tool_call_id: c.payload.error for c in chunks if c.type == "tool-error"}
    assert "boom" in errors["c1"]
    assert "text" in errors["c2"] and "required" in errors["c2"]


async def test_restarted_proxy_declines_the_calls_its_dead_predecessor_left(tmp_path: Path) -> None:
    db, log = tmp_path / "w.db", tmp_path / "log"
    params = stdio_proxy(db, log)
    proc = await asyncio.create_subprocess_exec(
        params.command, *params.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    # a hand-made MCP session on the proxy's stdio, so the test can kill the proxy mid-call
    assert proc.stdin is not None and proc.stdout is not None
    for message in (
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "delete_file", "arguments": {"path": "x"}},
        },
    ):
        proc.stdin.write((json.dumps(message) + "\n").encode())
    await proc.stdin.drain()
    row = await pending(db)
    proc.kill()
    await proc.wait()
    async with Client(stdio_proxy(db, log)) as client:  # the restarted proxy
        await client.list_tools()
    store = open_store(db)
    audit = await store.audit_log(row.run.run_id)
    assert [a.decision for a in audit] == ["declined"] and "stopped" in (audit[0].reason or "")
    assert (await store.list_suspended())[1] == 0
    await store.aclose()
    assert read_log(log) == []


async def test_runs_without_handover_still_need_their_agent(tmp_path: Path) -> None:
    from agent_core import AgentNotFound, tool

    @tool(require_approval=True)
    def wipe(path: str) -> str:
        """Wipe."""
        return path

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(id="w1", name="wipe", args={"path": "/"})])
        return ModelResponse(text="ok")

    agent = Agent(id="plain", model=FunctionModel(model), tools=[wipe])
    async with Runtime({"plain": agent}, open_store(tmp_path / "w.db")):
        stream = await agent.stream("go")
        await stream.wait()
    async with Runtime(storage=open_store(tmp_path / "w.db")) as other:
        with pytest.raises(AgentNotFound):
            await other.approve_tool_call(run_id=stream.run_id)
        assert (await other.list_suspended_runs()).total == 1  # nothing was recorded
