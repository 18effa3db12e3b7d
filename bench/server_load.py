"""Load benchmark of the HTTP server: approvals per second with N concurrent clients, p50/p99 latency.

Bounded and loopback only: it starts its own server process(es) on 127.0.0.1 (``python -m
server --port 0``) over a temporary SQLite file, suspends ``--runs`` runs (a gated tool, a
``FunctionModel``), then ``--clients`` concurrent clients approve them all through HTTP with the
client SDK (``approve_tool_call``, the SSE stream read to ``[DONE]``: the tool runs, the run
finishes, its snapshot is deleted). ``--instances 2`` spreads the clients over two server
processes sharing the SQLite file.

    python bench/server_load.py --clients 16 --runs 1000
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from warden_client import WardenClient  # noqa: E402

READY = "Warden server listening on "
MAX_RUNS = 20_000
MAX_CLIENTS = 256


def start_server(db: Path, token: str, sync: str) -> tuple[subprocess.Popen[str], str]:
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


async def bench(urls: list[str], token: str, runs: int, clients: int, pids: list[int]) -> dict[str, float | None]:
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

        cpu0 = cpu_seconds(pids)
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(clients)))
        approve_s = time.perf_counter() - t0
        cpu1 = cpu_seconds(pids)
        server_cpu_ms = (cpu1 - cpu0) / runs * 1000 if cpu0 is not None and cpu1 is not None else None
        left = await conns[0].agent("bench").list_suspended_runs(per_page=1)
        assert left.total == 0, left.total
        return {
            "suspend_per_s": runs / suspend_s,
            "approvals_per_s": runs / approve_s,
            "p50_ms": statistics.median(latencies) * 1000,
            "p99_ms": pct(latencies, 99) * 1000,
            "max_ms": max(latencies) * 1000,
            "server_cpu_ms": server_cpu_ms,
        }
    finally:
        for c in conns:
            await c.aclose()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=16, help=f"concurrent clients (1..{MAX_CLIENTS})")
    p.add_argument("--runs", type=int, default=1000, help=f"approvals to make (1..{MAX_RUNS})")
    p.add_argument("--instances", type=int, default=1, choices=[1, 2], help="server processes on the one store")
    p.add_argument("--synchronous", default="NORMAL", choices=["NORMAL", "FULL"], help="SQLite durability")
    a = p.parse_args()
    if not (1 <= a.clients <= MAX_CLIENTS and 1 <= a.runs <= MAX_RUNS):
        raise SystemExit(f"--clients must be 1..{MAX_CLIENTS} and --runs 1..{MAX_RUNS}")
    token = secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="warden-bench-") as tmp:
        db = Path(tmp) / "bench.db"
        procs = [start_server(db, token, a.synchronous) for _ in range(a.instances)]
        try:
            r = asyncio.run(bench([u for _, u in procs], token, a.runs, a.clients, [p.pid for p, _ in procs]))
        finally:
            for proc, _ in procs:
                proc.terminate()
                proc.wait()
    print(
        f"server_load: {a.runs} approvals, {a.clients} concurrent clients, {a.instances} instance(s), "
        f"SQLite synchronous={a.synchronous}, loopback HTTP + SSE, client SDK"
    )
    print(f"  suspend (stream -> durable snapshot): {r['suspend_per_s']:8.1f} runs/s")
    print("  approve (approve-tool-call -> tool -> finish, SSE read to [DONE]):")
    print(f"    throughput {r['approvals_per_s']:8.1f} approvals/s")
    print(f"    latency    p50 {r['p50_ms']:.2f} ms   p99 {r['p99_ms']:.2f} ms   max {r['max_ms']:.2f} ms")
    if r["server_cpu_ms"] is not None:
        print(f"    server CPU {r['server_cpu_ms']:.2f} ms per approval (all server processes, user+system)")
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (client and server share them)")


if __name__ == "__main__":
    main()
