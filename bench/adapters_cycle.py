"""One approval cycle of an agent of another framework, alone and hosted in Warden.

Alone: the framework's own stop and resume (pydantic-ai ``DeferredToolRequests`` ->
``DeferredToolResults``; OpenAI Agents ``interruptions`` -> ``RunState.approve`` -> ``Runner.run``;
LangGraph interrupt -> ``Command(resume=...)`` on its SQLite checkpointer), state kept in memory.
Hosted: ``stream`` -> gated call -> durable SQLite snapshot -> ``approve_tool_call`` -> the tool runs
-> finish, with the demo's agents (``warden_demo/frameworks.py``, each framework's own test model).
Prints p50/p99 in ms of each, and the difference (what Warden adds: store, audit, serialising the
framework's state). Usage: python bench/adapters_cycle.py [cycles]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import percentiles

from warden_demo.agents import build_demo_runtime

PROMPT = "delete record abc-124"


async def timed(cycle: Callable[[], Awaitable[None]], cycles: int) -> tuple[float, float]:
    for _ in range(min(20, cycles)):  # warm-up
        await cycle()
    samples = []
    for _ in range(cycles):
        t0 = time.perf_counter()
        await cycle()
        samples.append(time.perf_counter() - t0)
    return percentiles(samples)


def alone(key: str, agent: Any) -> Callable[[], Awaitable[None]]:
    """The framework's own approval cycle, without Warden."""
    framework = agent.framework
    if key == "pydantic_ai_records":
        from pydantic_ai import DeferredToolRequests, DeferredToolResults

        pai = framework.agent

        async def cycle() -> None:
            first = await pai.run(PROMPT, output_type=[str, DeferredToolRequests])
            approvals = {c.tool_call_id: True for c in first.output.approvals}
            await pai.run(
                message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals=approvals)
            )

        return cycle
    if key == "openai_agents_records":
        from agents import Runner

        async def cycle() -> None:
            first = await Runner.run(framework.agent, PROMPT, run_config=framework.run_config)
            state = first.to_state()
            for item in first.interruptions:
                state.approve(item)
            await Runner.run(framework.agent, state, run_config=framework.run_config)

        return cycle
    from langgraph.types import Command

    graph = framework.graph
    counter = iter(range(10**9))

    async def cycle() -> None:
        config = {"configurable": {"thread_id": f"bench-{next(counter)}"}}
        await asyncio.to_thread(graph.invoke, {"messages": [{"role": "user", "content": PROMPT}]}, config)
        await asyncio.to_thread(graph.invoke, Command(resume={"decisions": [{"type": "approve"}]}), config)

    return cycle


def hosted(agent: Any) -> Callable[[], Awaitable[None]]:
    async def cycle() -> None:
        stream = await agent.stream(PROMPT)
        await stream.wait()
        assert stream.status == "suspended", stream.status
        done = await agent.approve_tool_call(run_id=stream.run_id)
        await done.wait()
        assert done.status == "finished", done.status

    return cycle


async def main(cycles: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with build_demo_runtime(Path(tmp) / "bench.db", frameworks=True) as runtime:
            for key, agent in runtime.agents.items():
                if not hasattr(agent, "framework"):
                    continue
                a50, a99 = await timed(alone(key, agent), cycles)
                h50, h99 = await timed(hosted(agent), cycles)
                print(
                    f"  {key:24} alone p50 {a50:7.2f} ms p99 {a99:7.2f} ms | in Warden (SQLite) p50 {h50:7.2f} ms "
                    f"p99 {h99:7.2f} ms | added p50 {h50 - a50:6.2f} ms"
                )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
