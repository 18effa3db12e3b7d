"""Load benchmark of the HTTP server: approvals per second with N concurrent clients, p50/p99 latency.

Bounded and loopback only: it starts its own server process(es) on 127.0.0.1 (``python -m
warden_server --port 0``, what ``warden serve`` runs), suspends ``--runs`` runs (a gated tool, a
``FunctionModel``), then ``--clients`` concurrent clients approve them all through HTTP with the
client SDK (``approve_tool_call``, the SSE stream read to ``[DONE]``: the tool runs, the run
finishes, its snapshot is deleted). Server CPU is user+system time of the server processes
(``/proc/<pid>/stat``), per approval.

SQLite (default): a temporary file; ``--instances 2`` spreads the clients over two processes on it.
PostgreSQL (``--db postgresql://user@host:port/any``): a scratch database is created on that server
and dropped afterwards; the instances run behind nginx on loopback (round robin, as
``tests/server/test_postgres_instances.py``) and the clients talk to the proxy only. The CPU of the
database's backends and of nginx is reported too. ``--instances 1,2`` measures each count in turn
(a fresh database each).

    python bench/server_load.py --clients 16 --runs 1000
    python bench/server_load.py --db postgresql://postgres@127.0.0.1:5432/postgres --instances 1,2 --runs 400
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "bench"))

import _nginx  # noqa: E402

from warden_client import WardenClient  # noqa: E402

READY = "Warden server listening on "
MAX_RUNS = 20_000
MAX_CLIENTS = 256


def start_server(db: Path | str, token: str, sync: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, WARDEN_BENCH_DB=str(db), WARDEN_BENCH_SYNC=sync)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "bench"), str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "warden_server",
            "--app",
            "server_load_app:runtime",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--token",
            token,
            "--log-level",
            "error",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(READY):
            url = line[len(READY) :].strip()
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
            return proc, url
    proc.wait()
    raise SystemExit(f"server did not start (exit {proc.returncode})")


def cpu_seconds(pids: list[int]) -> float | None:
    """User+system CPU time of the server processes (Linux /proc), a figure the machine's load barely moves."""
    total = 0.0
    try:
        for pid in pids:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return total


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


async def bench(
    urls: list[str],
    token: str,
    runs: int,
    clients: int,
    pids: list[int],
    other_pids: dict[str, list[int]],
    backends: Callable[[], Awaitable[list[int]]] | None = None,
) -> dict[str, float | None]:
    conns = [WardenClient(u, token=token) for u in urls]
    try:
        # 1. suspend the runs (concurrently, also through HTTP)
        sem = asyncio.Semaphore(clients)
        pending: list[tuple[int, str, str]] = []

        async def suspend(i: int) -> None:
            async with sem:
                agent = conns[i % len(conns)].agent("bench")
                s = await agent.stream(f"rec-{i}")
                await s.consume()
                assert s.status == "suspended", s.status
                pending.append((i, s.run_id, s.suspend_payload.tool_call_id))

        t0 = time.perf_counter()
        await asyncio.gather(*(suspend(i) for i in range(runs)))
        suspend_s = time.perf_counter() - t0
        listed = await conns[-1].agent("bench").list_suspended_runs(per_page=1)
        assert listed.total == runs, listed.total

        # 2. approve them all with N concurrent clients
        queue: asyncio.Queue[tuple[int, str, str]] = asyncio.Queue()
        for item in pending:
            queue.put_nowait(item)
        latencies: list[float] = []

        async def worker(w: int) -> None:
            agent = conns[w % len(conns)].agent("bench")
            while True:
                try:
                    i, run_id, call_id = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                start = time.perf_counter()
                stream = await agent.approve_tool_call(run_id=run_id, tool_call_id=call_id)
                await stream.consume()
                latencies.append(time.perf_counter() - start)
                assert stream.status == "finished", (i, stream.status)

        groups = {"server": pids, **other_pids}
        if backends is not None:
            groups["postgres"] = await backends()
        cpu0 = {k: {pid: cpu_seconds([pid]) for pid in v} for k, v in groups.items()}
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(clients)))
        approve_s = time.perf_counter() - t0
        if backends is not None:  # pools grow under load: backends started meanwhile count from zero
            groups["postgres"] = sorted(set(groups["postgres"]) | set(await backends()))
        per: dict[str, float | None] = {}
        for k, group in groups.items():
            total: float | None = 0.0
            for pid in group:
                now, before = cpu_seconds([pid]), cpu0[k].get(pid, 0.0)
                total = None if total is None or now is None or before is None else total + now - before
            per[k] = None if total is None else total / runs * 1000
        left = await conns[0].agent("bench").list_suspended_runs(per_page=1)
        assert left.total == 0, left.total
        return {
            "suspend_per_s": runs / suspend_s,
            "approvals_per_s": runs / approve_s,
            "p50_ms": statistics.median(latencies) * 1000,
            "p99_ms": pct(latencies, 99) * 1000,
            "max_ms": max(latencies) * 1000,
            "server_cpu_ms": per["server"],
            **{f"{k}_cpu_ms": v for k, v in per.items() if k != "server"},
        }
    finally:
        for c in conns:
            await c.aclose()


def postgres_backends(dsn: str) -> Callable[[], Awaitable[list[int]]]:
    """The server processes (backends) of the benchmark's database (same machine: their /proc is readable)."""

    async def go() -> list[int]:
        import asyncpg

        conn = await asyncpg.connect(dsn)
        try:
            rows = await conn.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return [r[0] for r in rows]
        finally:
            await conn.close()

    return go


def scratch_database(admin_dsn: str, create: bool, name: str) -> str:
    import asyncpg

    async def go() -> None:
        conn = await asyncpg.connect(admin_dsn, timeout=5)
        try:
            if create:
                await conn.execute(f'CREATE DATABASE "{name}"')
            else:
                await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()

    asyncio.run(go())
    return admin_dsn.rsplit("/", 1)[0].split("?")[0] + "/" + name


def run_once(a: argparse.Namespace, instances: int, token: str) -> dict[str, float | None]:
    postgres = a.db is not None and a.db.startswith(("postgresql://", "postgres://"))
    with tempfile.TemporaryDirectory(prefix="warden-bench-") as tmp:
        name = "warden_bench_" + secrets.token_hex(4)
        db: Path | str = scratch_database(a.db, True, name) if postgres else Path(tmp) / "bench.db"
        procs: list[subprocess.Popen[str]] = []
        proxy: subprocess.Popen[str] | None = None
        try:
            started = [start_server(db, token, a.synchronous) for _ in range(instances)]
            procs = [p for p, _ in started]
            urls = [u for _, u in started]
            other: dict[str, list[int]] = {}
            if postgres:
                try:
                    proxy, url = _nginx.start(urls, Path(tmp))
                except _nginx.NginxUnavailable as error:
                    raise SystemExit(str(error)) from None
                urls = [url]
                other["nginx"] = [proxy.pid, *_children(proxy.pid)]
            backends = postgres_backends(str(db)) if postgres else None
            return asyncio.run(bench(urls, token, a.runs, a.clients, [p.pid for p in procs], other, backends))
        finally:
            if proxy is not None:
                proxy.terminate()
                proxy.wait()
            for proc in procs:
                proc.terminate()
                proc.wait()
            if postgres:
                scratch_database(a.db, False, name)


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=16, help=f"concurrent clients (1..{MAX_CLIENTS})")
    p.add_argument("--runs", type=int, default=1000, help=f"approvals to make (1..{MAX_RUNS})")
    p.add_argument(
        "--instances", default="1", help="server processes on the one store: 1, 2, ... or a list measured in turn (1,2)"
    )
    p.add_argument("--db", default=None, help="postgresql://... (a scratch database on that server); default SQLite")
    p.add_argument("--synchronous", default="NORMAL", choices=["NORMAL", "FULL"], help="SQLite durability")
    a = p.parse_args()
    try:
        counts = [int(x) for x in a.instances.split(",")]
    except ValueError:
        raise SystemExit("--instances must be a number or a list like 1,2") from None
    if not (1 <= a.clients <= MAX_CLIENTS and 1 <= a.runs <= MAX_RUNS) or not all(1 <= n <= 8 for n in counts):
        raise SystemExit(f"--clients must be 1..{MAX_CLIENTS}, --runs 1..{MAX_RUNS} and --instances 1..8")
    postgres = a.db is not None
    if postgres and not a.db.startswith(("postgresql://", "postgres://")):
        raise SystemExit("--db must be a postgresql:// URL (SQLite is the default)")
    token = secrets.token_urlsafe(24)
    store = "PostgreSQL behind nginx on loopback" if postgres else f"SQLite synchronous={a.synchronous}"
    print(f"server_load: {a.runs} approvals, {a.clients} concurrent clients, {store}, loopback HTTP + SSE, client SDK")
    for n in counts:
        r = run_once(a, n, token)
        print(f"  {n} instance(s):")
        print(f"    suspend (stream -> durable snapshot): {r['suspend_per_s']:8.1f} runs/s")
        print("    approve (approve-tool-call -> tool -> finish, SSE read to [DONE]):")
        print(f"      throughput {r['approvals_per_s']:8.1f} approvals/s")
        print(f"      latency    p50 {r['p50_ms']:.2f} ms   p99 {r['p99_ms']:.2f} ms   max {r['max_ms']:.2f} ms")
        if r["server_cpu_ms"] is not None:
            print(f"      server CPU {r['server_cpu_ms']:.2f} ms per approval (all server processes, user+system)")
        for k in ("postgres", "nginx"):
            if r.get(f"{k}_cpu_ms") is not None:
                print(f"      {k} CPU {r[f'{k}_cpu_ms']:.2f} ms per approval")
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (all processes share them)")


if __name__ == "__main__":
    main()
