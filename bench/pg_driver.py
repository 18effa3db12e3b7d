"""Which PostgreSQL driver: one decision transaction (lock run, read call, CAS, audit, lease), asyncpg vs psycopg 3.

Usage: python bench/pg_driver.py [DSN]   (default postgresql://postgres@127.0.0.1:5432/postgres)
Creates and drops a scratch database of its own.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid

import asyncpg
import psycopg

BASE = sys.argv[1] if len(sys.argv) > 1 else "postgresql://postgres@127.0.0.1:5432/postgres"
N = 2000
DDL = """
CREATE TABLE runs (run_id TEXT PRIMARY KEY, agent_id TEXT, status TEXT, lease_owner TEXT, lease_until DOUBLE PRECISION);
CREATE TABLE calls (run_id TEXT, id TEXT, status TEXT, PRIMARY KEY (run_id, id));
CREATE TABLE audit (id BIGSERIAL PRIMARY KEY, run_id TEXT, id2 TEXT, decision TEXT, at DOUBLE PRECISION);
"""


CAS = "UPDATE calls SET status = 'approved' WHERE run_id = {0} AND id = 'c' AND status = 'pending'"
AUDIT = "INSERT INTO audit (run_id, id2, decision, at) VALUES ({0}, 'c', 'approved', {1})"
LEASE = "UPDATE runs SET lease_owner = 'o', lease_until = {0}, status = 'running' WHERE run_id = {1}"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] * 1000


async def bench_asyncpg(dsn: str) -> list[float]:
    conn = await asyncpg.connect(dsn)
    out = []
    for i in range(N):
        rid = f"a{i}"
        await conn.execute("INSERT INTO runs VALUES ($1, 'a', 'suspended', NULL, NULL)", rid)
        await conn.execute("INSERT INTO calls VALUES ($1, 'c', 'pending')", rid)
        t = time.perf_counter()
        async with conn.transaction():
            await conn.fetchrow("SELECT * FROM runs WHERE run_id = $1 FOR UPDATE", rid)
            await conn.fetchrow("SELECT * FROM calls WHERE run_id = $1 AND id = 'c'", rid)
            await conn.execute(CAS.format("$1"), rid)
            await conn.execute(AUDIT.format("$1", "$2"), rid, time.time())
            await conn.execute(LEASE.format("$1", "$2"), time.time() + 30, rid)
        out.append(time.perf_counter() - t)
    await conn.close()
    return out


async def bench_psycopg(dsn: str) -> list[float]:
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True, prepare_threshold=0)
    out = []
    for i in range(N):
        rid = f"p{i}"
        await conn.execute("INSERT INTO runs VALUES (%s, 'a', 'suspended', NULL, NULL)", (rid,))
        await conn.execute("INSERT INTO calls VALUES (%s, 'c', 'pending')", (rid,))
        t = time.perf_counter()
        async with conn.transaction():
            await (await conn.execute("SELECT * FROM runs WHERE run_id = %s FOR UPDATE", (rid,))).fetchone()
            await (await conn.execute("SELECT * FROM calls WHERE run_id = %s AND id = 'c'", (rid,))).fetchone()
            await conn.execute(CAS.format("%s"), (rid,))
            await conn.execute(AUDIT.format("%s", "%s"), (rid, time.time()))
            await conn.execute(LEASE.format("%s", "%s"), (time.time() + 30, rid))
        out.append(time.perf_counter() - t)
    await conn.close()
    return out


async def main() -> None:
    name = "warden_bench_" + uuid.uuid4().hex[:8]
    admin = await asyncpg.connect(BASE)
    await admin.execute(f'CREATE DATABASE "{name}"')
    dsn = BASE.rsplit("/", 1)[0] + "/" + name
    try:
        c = await asyncpg.connect(dsn)
        await c.execute(DDL)
        await c.close()
        for label, fn in (("asyncpg", bench_asyncpg), ("psycopg", bench_psycopg), ("asyncpg", bench_asyncpg)):
            xs = await fn(dsn)
            xs = xs[200:]
            mean = statistics.mean(xs) * 1000
            print(f"{label:8} decision tx: p50 {pct(xs, 0.5):.3f} ms  p99 {pct(xs, 0.99):.3f} ms  mean {mean:.3f} ms")
            c = await asyncpg.connect(dsn)
            await c.execute("TRUNCATE runs, calls, audit")
            await c.close()
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()


if __name__ == "__main__":
    asyncio.run(main())
