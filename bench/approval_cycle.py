"""Warm framework overhead of one full approval cycle, with a FunctionModel.

stream -> gated call -> durable snapshot -> approve -> tool runs -> finish.
Prints p50/p99 in ms for SQLite (synchronous=NORMAL, the default), SQLite
(synchronous=FULL), InMemoryStore and PostgresStore (a scratch database on the
server ``$WARDEN_TEST_PG`` names, default the local one; created and dropped;
"skipped" with the reason when no server answers). The "with a policy" row enforces a
three-rule policy (CEL conditions) whose ask rule gates the call.
The peer: pydantic-ai's own deferred-tool cycle kept durable in SQLite (``bench/peer_cycle.py``),
timed in the same run, in blocks alternating with those of the SQLite NORMAL row (100 of
Warden's cycles, then 20 of the peer's), so both see the same machine; the ratio is peer p50 /
Warden p50. ``--no-peer`` skips it (the SQLite NORMAL row is then timed alone).
Usage: python bench/approval_cycle.py [cycles] [--postgres] [--no-peer]   (--postgres: the PostgreSQL rows only)

PostgreSQL: a whole cycle is six statements, one round trip each (grants, save,
claim, started mark, checkpoint, finish). The claim is one call of ``warden_claim``
because the store decides on the rows it inserted itself (a run saved by another
process, or moved since, is read first: two round trips, as before).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _common import percentiles
from pydantic import BaseModel

from agent_core import Agent, Policy, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import InMemoryStore, PostgresStore, SqliteStore

#: the policy row's rules: the gated call matches an ask rule (with a CEL condition) among three.
BENCH_POLICY = Policy.from_dict(
    {
        "rules": [
            {"id": "deletes", "tools": ["delete*"], "when": 'args.id.startsWith("abc")', "decision": "ask"},
            {"id": "prod", "tools": ["*"], "when": 'has(context.env) && context.env == "prod"', "decision": "deny"},
            {"id": "reads", "tools": ["get_*", "list_*"], "decision": "allow"},
        ]
    }
)

PG_ADMIN = os.environ.get("WARDEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


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


async def cycle(agent: Agent, thread_id: str | None = None) -> None:
    stream = await agent.stream("delete abc-123", thread_id=thread_id)
    await stream.wait()
    assert stream.status == "suspended", stream.error
    approved = await agent.approve_tool_call(run_id=stream.run_id)
    await approved.wait()
    assert approved.status == "finished", approved.error


async def granted_cycle(agent: Agent) -> None:
    """The gated call is approved by a grant: no suspension, no decision (one grant lookup + audit entry)."""
    stream = await agent.stream("delete abc-123")
    await stream.wait()
    assert stream.status == "finished", stream.error


async def measure_granted(store, cycles: int) -> tuple[float, float]:
    agent = build_agent()
    async with Runtime(agents={"bench": agent}, storage=store) as runtime:
        await runtime.grant("delete", scope="agent", agent_id="bench", args_match={"id": "abc-123"})
        for _ in range(min(200, cycles)):
            await granted_cycle(agent)
        samples = []
        for _ in range(cycles):
            t0 = time.perf_counter()
            await granted_cycle(agent)
            samples.append(time.perf_counter() - t0)
    return percentiles(samples)


async def measure(
    store,
    cycles: int,
    agent: Agent | None = None,
    cpu: dict | None = None,
    thread_id: str | None = None,
    policy: Policy | None = None,
) -> tuple[float, float]:
    """p50/p99 of warm cycles; with ``cpu`` (PostgreSQL), also CPU ms per cycle of this process and the database.
    ``thread_id``: every run in that thread (a new call's id is checked against the thread's pending calls)."""
    agent = agent or build_agent()
    async with Runtime(agents={"bench": agent}, storage=store, policy=policy):
        for _ in range(min(200, cycles)):  # warm-up
            await cycle(agent, thread_id)
        backends = await _backends(store) if cpu is not None else []
        db0, me0 = _cpu(backends), time.process_time()
        samples = []
        for _ in range(cycles):
            t0 = time.perf_counter()
            await cycle(agent, thread_id)
            samples.append(time.perf_counter() - t0)
        if cpu is not None:
            cpu["client"] = (time.process_time() - me0) / cycles * 1000
            cpu["database"] = (_cpu(backends) - db0) / cycles * 1000
    return percentiles(samples)


async def measure_with_peer(store, cycles: int, peer_db: Path) -> tuple[tuple[float, float], tuple[float, float]]:
    """The SQLite NORMAL row and the peer in alternating blocks (100 Warden cycles, then 20 of the
    peer's), so both see the same machine; the first cycles after each switch are kept, not dropped."""
    from peer_cycle import build_peer

    agent, peer = build_agent(), build_peer(peer_db)
    async with Runtime(agents={"bench": agent}, storage=store):
        for _ in range(min(200, cycles)):  # warm-up
            await cycle(agent)
        for _ in range(min(100, cycles)):
            await peer()
        ours: list[float] = []
        theirs: list[float] = []
        while len(ours) < cycles:
            for _ in range(min(100, cycles - len(ours))):
                t0 = time.perf_counter()
                await cycle(agent)
                ours.append(time.perf_counter() - t0)
            for _ in range(20):
                t0 = time.perf_counter()
                await peer()
                theirs.append(time.perf_counter() - t0)
    return percentiles(ours), percentiles(theirs)


async def _backends(store) -> list[int]:
    """The PostgreSQL server processes serving this store's pool (the database runs on this machine)."""
    pool = await store._connection_pool()
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'warden'"
        )
    return [r[0] for r in rows]


def _cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return total


async def main(cycles: int, peer: bool = True) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            ("SqliteStore synchronous=FULL", SqliteStore(Path(tmp) / "full.db", synchronous="FULL")),
            ("InMemoryStore", InMemoryStore()),
        ]
        print(f"approval cycle, {cycles} warm cycles each (stream -> approval -> approve -> tool -> finish)")
        label, store = "SqliteStore synchronous=NORMAL (default)", SqliteStore(Path(tmp) / "normal.db")
        if peer:
            (p50, p99), (q50, q99) = await measure_with_peer(store, cycles, Path(tmp) / "peer.db")
            print(f"  {label:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
            text = "peer: pydantic-ai, durable SQLite (in turns)"
            print(f"  {text:<48} p50 {q50:7.3f} ms   p99 {q99:7.3f} ms   ratio (p50) {q50 / p50:5.1f}x")
        else:
            p50, p99 = await measure(store, cycles)
            print(f"  {label:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        for label, store in rows:
            p50, p99 = await measure(store, cycles)
            print(f"  {label:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        p50, p99 = await measure(SqliteStore(Path(tmp) / "thread.db"), cycles, thread_id="t1")
        print(f"  {'in one thread, SqliteStore NORMAL':<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        p50, p99 = await measure(SqliteStore(Path(tmp) / "sup.db"), cycles, build_supervisor())
        print(f"  {'two-level supervisor, SqliteStore NORMAL':<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        p50, p99 = await measure(SqliteStore(Path(tmp) / "policy.db"), cycles, policy=BENCH_POLICY)
        print(f"  {'with a policy (3 rules, CEL), SqliteStore NORMAL':<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
        for label, store in (
            ("approved by a grant, SqliteStore NORMAL", SqliteStore(Path(tmp) / "grant.db")),
            ("approved by a grant, InMemoryStore", InMemoryStore()),
        ):
            p50, p99 = await measure_granted(store, cycles)
            print(f"  {label:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms")
    await measure_postgres(cycles)


async def measure_postgres(cycles: int) -> None:
    import asyncpg

    label = "PostgresStore"
    name = "warden_bench_" + uuid.uuid4().hex[:8]
    try:
        admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    except Exception as exc:
        print(f"  {label:<48} skipped: no server at {PG_ADMIN} ({type(exc).__name__})")
        return
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        dsn = PG_ADMIN.rsplit("/", 1)[0] + "/" + name
        for mode in ("off", "on"):
            cpu: dict[str, float] = {}
            p50, p99 = await measure(PostgresStore(dsn, synchronous_commit=mode), cycles, cpu=cpu)  # type: ignore[arg-type]
            text = f"{label} synchronous_commit={mode}" + (" (default)" if mode == "off" else "")
            print(
                f"  {text:<48} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   "
                f"CPU/cycle: this process {cpu['client']:.2f} ms, database {cpu['database']:.2f} ms"
            )
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 2000
    if "--postgres" in sys.argv:
        print(f"approval cycle, {n} warm cycles each (stream -> approval -> approve -> tool -> finish)")
        asyncio.run(measure_postgres(n))
    else:
        asyncio.run(main(n, peer="--no-peer" not in sys.argv))
