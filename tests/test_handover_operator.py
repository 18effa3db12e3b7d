"""Deadlines, grants and edited arguments on runs hosted by another process (handover, an MCP proxy's).

Two ``Runtime``s on one SQLite file: the host has the agent (it applies decisions); the other does
not (the CLI, the console, a server): it sweeps, grants and records edits from what the run stored.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.errors import ApprovalExpired, GrantNotAllowed, InvalidRequest, ToolArgsInvalid
from agent_core.handover import HANDOVER_KEY, HANDOVER_TOOLS_KEY, declare_tools
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import open_store
from tests.mcp.helpers import make_overdue


class PathIn(BaseModel):
    path: str


def _call_then_done(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
    """Each user message asks for ``delete_file(a.txt)`` once (call id ``c1``); then the model is done."""
    if messages[-1].role == "user":
        return ModelResponse(tool_calls=[ToolCall(id="c1", name="delete_file", args={"path": "a.txt"})])
    return ModelResponse(text="done")


def _host(db: Path, ran: list[str], *, allow_grants: bool = True, lease: float = 30.0) -> tuple[Agent, Runtime]:
    async def delete(inp: PathIn, ctx: Any) -> str:
        ran.append(inp.path)
        return f"deleted {inp.path}"

    tool = create_tool(
        id="delete_file",
        description="Delete a file",
        input_schema=PathIn,
        execute=delete,
        require_approval=True,
        allow_grants=allow_grants,
    )
    agent = Agent(
        id="mcp:files",
        name="files",
        model=FunctionModel(_call_then_done),
        tools={"delete_file": tool},
    )
    return agent, Runtime({agent.id: agent}, open_store(db), lease_seconds=lease)


def _context(agent: Agent) -> dict[str, Any]:
    return {HANDOVER_KEY: True, HANDOVER_TOOLS_KEY: declare_tools(agent.tools)}


async def _pending(agent: Agent, **kw: Any) -> str:
    stream = await agent.stream("go", request_context=_context(agent), **kw)
    await stream.wait()
    assert stream.status == "suspended"
    return stream.run_id


async def test_a_sweep_elsewhere_records_the_expiry_once_and_the_host_applies_it(tmp_path: Path) -> None:
    db, ran = tmp_path / "w.db", []
    agent, host = _host(db, ran)
    async with host, Runtime({}, open_store(db)) as other:
        run_id = await _pending(agent, approval_timeout=600)
        assert await other.sweep() == 0  # not due yet
        make_overdue(db, run_id)
        assert await other.sweep() == 1  # recorded for the host
        assert await other.sweep() == 0
        # the recorder's handover lease runs out before the host looks: the call stays expired
        run = await host.store.get_run(run_id)
        assert run is not None and (run.lease_owner or "").startswith("handover:")
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE runs SET lease_until = 0 WHERE run_id = ?", (run_id,))
        assert (await other.list_suspended_runs()).total == 0
        assert await other.sweep() == 0
        with pytest.raises(ApprovalExpired):
            await other.approve_tool_call(run_id=run_id, tool_call_id="c1")
        with pytest.raises(ApprovalExpired):
            await host.approve_tool_call(run_id=run_id, tool_call_id="c1")
        applied = await host.adopt(agent, run_id=run_id, tool_call_id="c1")
        assert applied is not None
        chunks = [c async for c in applied.full_stream]
        expired = [c for c in chunks if c.type == "tool-call-expired"]
        assert [c.payload.tool_call_id for c in expired] == ["c1"]
        assert applied.status == "finished" and ran == []
        audit = await host.store.audit_log(run_id)
        assert [a.decision for a in audit] == ["expired"]


async def test_an_expiry_its_recorder_left_unapplied_is_applied_by_the_hosts_recovery(tmp_path: Path) -> None:
    db, ran = tmp_path / "w.db", []
    agent, host = _host(db, ran)
    async with host, Runtime({}, open_store(db)) as other:
        run_id = await _pending(agent, approval_timeout=600)
        make_overdue(db, run_id)
        assert await other.sweep() == 1
        with sqlite3.connect(db) as conn:  # nobody adopted it before the handover lease ran out
            conn.execute("UPDATE runs SET lease_until = 0 WHERE run_id = ?", (run_id,))
        assert await other.recover() == 0  # not its agent
        assert await host.recover() == 1
        assert await host.store.get_run(run_id) is None and ran == []
        assert [a.decision for a in await host.store.audit_log(run_id)] == ["expired"]


async def test_grants_for_a_tool_a_handover_run_declares(tmp_path: Path) -> None:
    db, ran = tmp_path / "w.db", []
    agent, host = _host(db, ran)
    async with host, Runtime({}, open_store(db)) as other:
        with pytest.raises(InvalidRequest):  # nothing declares it yet
            await other.grant("delete_file", scope="agent", agent_id=agent.id)
        await _pending(agent)
        with pytest.raises(InvalidRequest):  # a truly unknown tool
            await other.grant("format_disk", scope="agent", agent_id=agent.id)
        with pytest.raises(InvalidRequest):  # another agent's scope
            await other.grant("delete_file", scope="agent", agent_id="mcp:other")
        grant = await other.grant("delete_file", scope="agent", agent_id=agent.id, args_match={"path": "a.txt"})
        stream = await agent.stream("again", request_context=_context(agent))
        chunks = [c async for c in stream.full_stream]
        assert stream.status == "finished" and ran == ["a.txt"]
        assert any(c.type == "tool-result" for c in chunks)
        audit = await host.store.audit_log(stream.run_id)
        assert [(a.decision, (a.detail or {}).get("grant_id")) for a in audit] == [("granted", grant.id)]


async def test_no_grant_for_a_declared_tool_with_allow_grants_false(tmp_path: Path) -> None:
    db, ran = tmp_path / "w.db", []
    agent, host = _host(db, ran, allow_grants=False)
    async with host, Runtime({}, open_store(db)) as other:
        await _pending(agent)
        with pytest.raises(GrantNotAllowed):
            await other.grant("delete_file", scope="agent", agent_id=agent.id)
        assert await other.list_grants() == []


async def test_edited_args_recorded_elsewhere_are_validated_on_the_declared_schema(tmp_path: Path) -> None:
    db, ran = tmp_path / "w.db", []
    agent, host = _host(db, ran)
    async with host, Runtime({}, open_store(db)) as other:
        run_id = await _pending(agent)
        with pytest.raises(ToolArgsInvalid):
            await other.approve_tool_call(run_id=run_id, args={"path": 5})
        listed = (await other.list_suspended_runs()).runs[0].tool_calls[0]
        assert (listed.args, await host.store.audit_log(run_id)) == ({"path": "a.txt"}, [])
        await (await other.approve_tool_call(run_id=run_id, args={"path": "b.txt"})).wait()
        applied = await host.adopt(agent, run_id=run_id, tool_call_id="c1")
        assert applied is not None
        await applied.wait()
        assert ran == ["b.txt"]
        audit = await host.store.audit_log(run_id)
        assert [(a.decision, a.args) for a in audit] == [("edited", {"path": "b.txt"})]
