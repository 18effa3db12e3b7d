"""Warm framework overhead of one full approval cycle, with a FunctionModel.

stream -> gated call -> durable snapshot -> approve -> tool runs -> finish.
Prints p50/p99 in ms for SQLite (synchronous=NORMAL, the default), SQLite
(synchronous=FULL) and InMemoryStore. Usage: python bench/approval_cycle.py [cycles]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from _common import percentiles
from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import InMemoryStore, SqliteStore


class IdIn(BaseModel):
    id: str


def build_agent() -> Agent:
    async def delete(inp: IdIn, ctx) -> dict:
        return {"deleted": True}

    def model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="delete", args={"id": "abc-123"}, id="c1")])
        return ModelResponse(text="done")

    tool = create_tool(id="delete", input_schema=IdIn, execute=delete, require_approval=True)
    return Agent(id="bench", model=FunctionModel(model), tools={"delete": tool})


def build_supervisor() -> Agent:
    """Two levels: the supervisor delegates to a sub-agent whose tool needs approval."""
    worker = build_agent()

    def model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="agent-worker", args={"prompt": "delete abc-123"}, id="s1")])
        return ModelResponse(text="supervised: done")

    return Agent(id="bench", model=FunctionModel(model), agents={"worker": worker})


async def cycle(agent: Agent) -> None:
    stream = await agent.stream("delete abc-123")
    await stream.wait()
    assert stream.status == "suspended", stream.error
    approved = await agent.approve_tool_call(run_id=stream.run_id)
    await approved.wait()
    assert approved.status == "finished", approved.error


async def measure(store, cycles: int, agent: Agent | None = None) -> tuple[float, float]:
    agent = agent or build_agent()
    async with Runtime(agents={"bench": agent}, storage=store):
        for _ in range(min(200, cycles)):  # warm-up
            await cycle(agent)
        samples = []
        for _ in range(cycles):
            t0 = time.perf_counter()
            await cycle(agent)
            samples.append(time.perf_counter() - t0)
    return percentiles(samples)


async def main(cycles: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            ("SqliteStore synchronous=NORMAL (default)", SqliteStore(Path(tmp) / "normal.db")),
            ("SqliteStore synchronous=FULL", SqliteStore(Path(tmp) / "full.db", synchronous="FULL")),
            ("InMemoryStore", InMemoryStore()),
        ]
        print(f"approval cycle, {cycles} warm cycles each (stream -> approval -> approve -> tool -> finish)")
        for label, store in rows:
            p50, p99 = await measure(store, cycles)
            print(f"  {label:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        p50, p99 = await measure(SqliteStore(Path(tmp) / "sup.db"), cycles, build_supervisor())
        print(f"  {'two-level supervisor, SqliteStore NORMAL':<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
