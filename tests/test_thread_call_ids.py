"""Tool-call ids are unique across the runs of a thread, so deciding by thread and id is never ambiguous.

The model here gives every call the id ``c1``, as a model without memory of the
thread (or the demo model before) would; the runs share a real SQLite store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_core import Agent, Memory, Runtime
from storage import PostgresStore, SqliteStore, Store
from tests.helpers import calls_then, echo_results, recording_tool
from tests.pg import fresh_database
from warden_demo.agents import build_demo_runtime
from warden_demo.model import DemoModel


def _agent(log: list, memory: Memory | None = None) -> Agent:
    return Agent(
        id="a",
        model=calls_then([("d", {"id": "x"}, "c1")], echo_results()),
        tools={"d": recording_tool(log)},
        memory=memory,
    )


async def _pending_ids(runtime: Runtime, thread_id: str) -> dict[str, str]:
    runs = (await runtime.list_suspended_runs(thread_id=thread_id)).runs
    return {c.tool_call_id: r.run_id for r in runs for c in r.tool_calls}


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    if request.param == "postgres":
        async with fresh_database() as dsn:
            yield PostgresStore(dsn)
    else:
        yield SqliteStore(tmp_path / "w.db")


async def test_a_repeated_model_id_is_replaced_while_the_thread_has_it_pending(store):
    log: list = []
    agent = _agent(log)
    runtime = Runtime(agents={"a": agent}, storage=store)
    async with runtime:
        first = await agent.generate("go", thread_id="t1")
        second = await agent.generate("go again", thread_id="t1")
        other = await agent.generate("elsewhere", thread_id="t2")
        assert first.suspend_payload.tool_call_id == "c1"  # the model's id, kept while unique
        replaced = second.suspend_payload.tool_call_id
        assert replaced != "c1" and replaced.startswith("call_")
        assert other.suspend_payload.tool_call_id == "c1"  # another thread: the model's id again
        pending = await _pending_ids(runtime, "t1")
        assert pending == {"c1": first.run_id, replaced: second.run_id}
        # each id names one call of the thread: the decision reaches that run only
        s = await agent.send_tool_approval(thread_id="t1", approved=False, tool_call_id="c1")
        await s.wait()
        assert s.run_id == first.run_id and s.status == "finished" and log == []
        s = await agent.send_tool_approval(thread_id="t1", approved=True, tool_call_id=replaced)
        await s.wait()
        assert s.run_id == second.run_id and log == ["x"]
        assert await _pending_ids(runtime, "t1") == {}


async def test_a_thread_with_memory_never_repeats_an_id_of_its_history(tmp_path):
    log: list = []
    agent = _agent(log, Memory())
    runtime = Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db"))
    async with runtime:
        first = await agent.generate("go", thread_id="t1")
        s = await agent.approve_tool_call(run_id=first.run_id, tool_call_id="c1")
        await s.wait()
        second = await agent.generate("go again", thread_id="t1")  # c1 is in the thread's history now
        assert second.suspend_payload.tool_call_id != "c1"


async def test_the_demo_agents_give_each_run_of_a_thread_its_own_ids(tmp_path):
    runtime = build_demo_runtime(tmp_path / "demo.db", model=DemoModel(delay=0))
    async with runtime:
        ops = runtime.get_agent("ops")
        ids = []
        for record in ("abc-123", "xyz-9"):
            stream = await ops.stream(f"delete record {record}", thread_id="studio-thread")
            await stream.wait()
            assert stream.status == "suspended"
            ids.append(stream.suspend_payload.tool_call_id)
            approved = await ops.approve_tool_call(run_id=stream.run_id, tool_call_id=ids[-1])
            await approved.wait()
            assert approved.status == "finished"  # decided: no longer pending, yet the next id differs
        assert ids[0] != ids[1]
