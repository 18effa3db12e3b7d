"""Leases: a long tool keeps its run, a dead holder's run is taken over after expiry."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from agent_core import Agent, InvalidRequest, Runtime, create_tool
from storage import InMemoryStore, SqliteStore
from storage.records import Decision
from tests.helpers import IdIn, calls_then, echo_results, recording_tool


async def test_a_tool_longer_than_the_lease_keeps_its_run(tmp_path):
    async def slow(inp, ctx):
        await asyncio.sleep(0.5)  # several lease periods
        return "done"

    tool = create_tool(id="slow", input_schema=IdIn, execute=slow, require_approval=True)
    agent = Agent(
        id="a",
        model=calls_then([("slow", {"id": "1"}, "x"), ("slow", {"id": "2"}, "y")], echo_results()),
        tools={"slow": tool},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db"), lease_seconds=0.15):
        out = await agent.generate("go")
        first = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
        await asyncio.sleep(0.3)  # past the first lease: the heartbeat must have renewed it
        second = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="y")
        await first.wait()
        await second.wait()
        assert first.error is None and second.error is None, (first.error, second.error)
        assert {first.status, second.status} == {"suspended", "finished"}


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_two_leases_held_at_once_are_both_renewed(tmp_path, store):
    """One renewal timer serves every lease this process holds: two decisions applied at the same
    time, each with a tool several lease periods long, both keep their runs."""

    async def slow(inp, ctx):
        await asyncio.sleep(0.5)  # several lease periods
        return "done"

    tool = create_tool(id="slow", input_schema=IdIn, execute=slow, require_approval=True)
    agent = Agent(id="a", model=calls_then([("slow", {"id": "1"}, "x")], echo_results()), tools={"slow": tool})
    storage = InMemoryStore() if store == "memory" else SqliteStore(tmp_path / "w.db")
    async with Runtime(agents={"a": agent}, storage=storage, lease_seconds=0.15):
        first, second = await agent.generate("one"), await agent.generate("two")
        applied = [
            await agent.approve_tool_call(run_id=first.run_id),
            await agent.approve_tool_call(run_id=second.run_id),
        ]
        await asyncio.gather(*(s.wait() for s in applied))
        assert [(s.status, s.error) for s in applied] == [("finished", None), ("finished", None)]


async def test_a_dead_lease_holder_is_taken_over_after_expiry(tmp_path):
    log: list = []
    agent = Agent(
        id="a",
        model=calls_then([("d", {"id": "1"}, "x"), ("d", {"id": "2"}, "y")], echo_results()),
        tools={"d": recording_tool(log)},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db"), lease_seconds=0.2) as rt:
        out = await agent.generate("go")
        # A process that decided x, took the lease, and died before applying it.
        dead = await rt.store.claim(
            out.run_id,
            "x",
            kinds=("approval",),
            decide=lambda c, r: Decision("approved"),
            owner="dead",
            lease_seconds=0.2,
        )
        assert dead.run is not None
        stream = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="y")
        await asyncio.wait_for(stream.wait(), 10)
        assert stream.status == "suspended" and log == ["2"], stream.error
        calls = {c.tool_call_id: c.status for c in await rt.store.get_calls(out.run_id)}
        assert calls == {"x": "approved"}, "the dead holder's decision stays recorded, not re-executed"


async def test_a_run_whose_holder_died_is_listed_again_after_expiry(tmp_path):
    log: list = []
    agent = Agent(
        id="a",
        model=calls_then([("d", {"id": "1"}, "x"), ("d", {"id": "2"}, "y")], echo_results()),
        tools={"d": recording_tool(log)},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db"), lease_seconds=0.2) as rt:
        out = await agent.generate("go")
        await rt.store.claim(
            out.run_id,
            "x",
            kinds=("approval",),
            decide=lambda c, r: Decision("approved"),
            owner="dead",
            lease_seconds=0.2,
        )
        assert (await agent.list_suspended_runs()).total == 0, "leased: being applied"
        await asyncio.sleep(0.3)
        listed = await agent.list_suspended_runs()
        # the dead holder never started x's tool: x reads as pending again (same kind), y as it was
        assert listed.total == 1 and [c.tool_call_id for c in listed.runs[0].tool_calls] == ["x", "y"]
        assert [c.kind for c in listed.runs[0].tool_calls] == ["approval", "approval"]


async def test_request_context_must_be_storable():
    agent = Agent(id="a", model=calls_then([], echo_results()))
    with pytest.raises(InvalidRequest):
        await agent.stream("x", request_context={"conn": object()})
    out = await agent.generate("x", request_context={"user": "u1", "n": 2})
    assert out.finish_reason == "stop"


async def test_a_decision_is_never_applied_twice(tmp_path):
    log: list = []
    agent = Agent(
        id="a",
        model=calls_then([("d", {"id": "1"}, "x"), ("d", {"id": "2"}, "y")], echo_results()),
        tools={"d": recording_tool(log)},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")):
        out = await agent.generate("go")
        first = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
        await first.wait()
        assert first.status == "suspended" and log == ["1"]
        # A stale row: x is pending again in the table although the snapshot has applied it.
        with sqlite3.connect(tmp_path / "w.db") as db:
            db.execute(
                "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, "
                "args, agent_path, seq, created_at) "
                "VALUES (?, 'x', 'd', 'approval', 'pending', 'f', '{}', '[]', 0, 0)",
                (out.run_id,),
            )
        again = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
        await again.wait()
        assert again.status == "failed" and "already applied" in again.error and log == ["1"]
        listed = await agent.list_suspended_runs()
        assert listed.total == 1, "the run is released, not left leased"
        done = await agent.approve_tool_call_generate(run_id=out.run_id, tool_call_id="y")
        assert done.finish_reason == "stop" and log == ["1", "2"]
