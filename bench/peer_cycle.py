"""The peer's figure: pydantic-ai's own deferred-tool approval cycle, kept durable as a durable peer would.

The same warm cycle ``bench/approval_cycle.py`` times for Warden, in pydantic-ai alone:
a ``FunctionModel`` that calls ``delete(id="abc-123")`` on the user's prompt and answers
"done" once the tool returned; the tool ``requires_approval``. One cycle:

1. ``agent.run(prompt, output_type=[str, DeferredToolRequests])`` stops at the gated call;
2. the message history (``all_messages_json()``) and the pending call ids are written to a
   SQLite file (WAL, ``synchronous=NORMAL``, Warden's default durability) in one commit,
   before the approval is asked for (what "snapshot first" means for a peer);
3. the approval: the row is read back, the history decoded (``ModelMessagesTypeAdapter``),
   ``DeferredToolResults(approvals={id: True})`` passed to ``agent.run(message_history=...)``;
   the tool runs, the model answers, the row is deleted (second commit).

No audit log, no lease, no compare-and-set: the peer does less than Warden, so the ratio
is conservative. ``agent.run`` (not its stream) is the cheaper way to drive pydantic-ai.
Usage: python bench/peer_cycle.py [cycles]
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _common import percentiles


def build_peer(db_path: Path) -> Callable[[], Awaitable[None]]:
    """One durable pydantic-ai approval cycle as a coroutine function (the agent and the file made once)."""
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelMessagesTypeAdapter
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        parts = last.parts if isinstance(last, ModelRequest) else []
        if any(p.part_kind == "tool-return" for p in parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("delete", {"id": "abc-123"}, tool_call_id="c1")])

    agent: Agent[None, str] = Agent(FunctionModel(model))

    @agent.tool_plain(requires_approval=True)
    def delete(id: str) -> dict[str, bool]:
        """Delete a record."""
        return {"deleted": True}

    conn = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, history TEXT, pending TEXT)")
    counter = iter(range(10**12))

    async def cycle() -> None:
        run_id = f"run-{next(counter)}"
        first = await agent.run("delete abc-123", output_type=[str, DeferredToolRequests])
        requests = first.output
        assert isinstance(requests, DeferredToolRequests), requests
        pending = [c.tool_call_id for c in requests.approvals]
        with conn:
            conn.execute(
                "INSERT INTO runs VALUES (?, ?, ?)", (run_id, first.all_messages_json().decode(), json.dumps(pending))
            )
        # ... the operator approves ...
        history, ids = conn.execute("SELECT history, pending FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        messages = ModelMessagesTypeAdapter.validate_json(history)
        done = await agent.run(
            message_history=messages,
            deferred_tool_results=DeferredToolResults(approvals=dict.fromkeys(json.loads(ids), True)),
        )
        assert done.output == "done", done.output
        with conn:
            conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))

    return cycle


async def measure_peer(cycles: int, db_path: Path) -> tuple[float, float]:
    """p50/p99 (ms) of warm durable pydantic-ai cycles."""
    cycle = build_peer(db_path)
    for _ in range(min(100, cycles)):  # warm-up
        await cycle()
    samples = []
    for _ in range(cycles):
        t0 = time.perf_counter()
        await cycle()
        samples.append(time.perf_counter() - t0)
    return percentiles(samples)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as tmp:
        p50, p99 = asyncio.run(measure_peer(n, Path(tmp) / "peer.db"))
    print(
        f"pydantic-ai deferred-tool cycle, durable SQLite (NORMAL), {n} warm cycles: p50 {p50:.3f} ms  p99 {p99:.3f} ms"
    )
