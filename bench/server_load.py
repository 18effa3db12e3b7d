"""Load benchmark of the HTTP server: server CPU per approval, approvals/s and p50/p99 latency with N clients.

Bounded and loopback only: it starts its own server process(es) on 127.0.0.1 (``python -m
warden_server --port 0``, what ``warden serve`` runs, uvicorn), suspends ``--runs`` runs (a gated
tool, a ``FunctionModel``), then ``--clients`` concurrent clients of the SDK approve them all.

One approval is what an operator's client does for one pending call:

1. its share of the listing: the queue is listed in pages of ``PAGE`` (``GET
   /api/agents/bench/suspended-runs?page=k&perPage=50``, ``runs / 50`` requests in all, at the start
   of the timed phase: that is how the clients learn the run ids);
2. ``GET /api/suspended-runs/{runId}``: the call it is about to approve (args, fingerprint);
3. ``POST /api/agents/bench/approve-tool-call`` with that run id, tool call id and fingerprint,
   the SSE answer read to ``[DONE]``: the decision is recorded, the tool runs, the run finishes and
   its snapshot is deleted.

Server CPU is user+system time of the server process(es) (``/proc/<pid>/stat``, all threads)
over the timed phase, divided by the approvals completed; latency is steps 2+3 per approval.
``--repeat N`` measures N times and prints each, the median and the spread; ``--compare DIR``
measures the server code of another checkout (``git worktree add DIR <commit>``) in turns with
this one (A, B, A, B, ...: the same client, the same machine, the same minutes). ``--profile FILE``
samples the (first) server process with py-spy during the timed phase and prints where its CPU
goes (``pip install py-spy``); ``--cprofile FILE`` runs cProfile in the server's event-loop thread
over the timed phase instead (``server_load_app``, by signals). A profiled run's figures are not
the benchmark's. ``--threads`` also prints the first server's CPU per approval by thread, user
and system apart (``/proc/<pid>/task``): py-spy counts aiosqlite's idle worker, blocked in its
queue, as busy; this says what each thread really spent.

SQLite (default): a temporary file; ``--instances 2`` spreads the clients over two processes on it.
PostgreSQL (``--db postgresql://user@host:port/any``): a scratch database is created on that server
and dropped afterwards; the instances run behind nginx on loopback (round robin, as
``tests/server/test_postgres_instances.py``) and the clients talk to the proxy only. The CPU of the
database's backends and of nginx is reported too. ``--instances 1,2`` measures each count in turn
(a fresh database each).

    python bench/server_load.py --clients 16 --runs 1000 --repeat 3
    python bench/server_load.py --compare ../base-server --repeat 3
    python bench/server_load.py --profile /tmp/server.txt
    python bench/server_load.py --db postgresql://postgres@127.0.0.1:5432/postgres --instances 1,2 --runs 400
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

sys.path.insert(0, str(REPO / "bench"))

import _nginx  # noqa: E402

from warden_client import WardenClient  # noqa: E402

READY = "Warden server listening on "
MAX_RUNS = 20_000
MAX_CLIENTS = 256
PAGE = 50  # the listing's page size (the SDK's and the console's default)


def start_server(
    db: Path | str, token: str, sync: str, code: Path, prefix: Sequence[str] = (), **extra_env: str
) -> tuple[subprocess.Popen[str], str]:
    """One ``warden serve`` process running the server code of the checkout ``code`` (this one by default);
    ``prefix``: a command the server runs under (``server_instructions.py``: valgrind)."""
    env = dict(os.environ, WARDEN_BENCH_DB=str(db), WARDEN_BENCH_SYNC=sync, **extra_env)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "bench"), str(code), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [
            *prefix,
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
        cwd=code,
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


def thread_cpu(pid: int) -> dict[str, tuple[float, float]]:
    """User and system CPU seconds of each thread of ``pid`` (``/proc/<pid>/task``), keyed ``loop`` (the
    main thread: the event loop) or ``<name>-<tid>``; empty where /proc cannot be read."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, tuple[float, float]] = {}
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                head, fields = f.read().rsplit(")", 1)
            name = "loop" if int(tid) == pid else f"{head.split('(', 1)[1]}-{tid}"
            parts = fields.split()
            out[name] = (int(parts[11]) / tick, int(parts[12]) / tick)
    except (OSError, ValueError, IndexError):
        return {}
    return out


def _threads_line(before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]], runs: int) -> str:
    """The first server's CPU per approval by thread over the timed phase: ``loop 1.10 (user 0.95 + sys 0.15)``."""
    rows = []
    for name, (user, sys_) in sorted(after.items(), key=lambda kv: kv[0] != "loop"):
        u0, s0 = before.get(name, (0.0, 0.0))
        du, ds = (user - u0) / runs * 1000, (sys_ - s0) / runs * 1000
        if du + ds > 0 or name == "loop":
            rows.append(f"{name} {du + ds:.2f} (user {du:.2f} + sys {ds:.2f})")
    return "      server threads, ms/approval: " + (", ".join(rows) if rows else "-")


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s)) - 1))]


class Profiler:
    """py-spy sampling one process (``record --format raw``: collapsed stacks) during the timed phase."""

    def __init__(self, pid: int, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            [
                shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy")),
                "record",
                "--pid",
                str(pid),
                "--rate",
                "250",
                "--format",
                "raw",
                "--output",
                str(out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # attached before the load starts
        if self.proc.poll() is not None:
            raise SystemExit(f"py-spy failed: {self.proc.stderr.read() if self.proc.stderr else ''}")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=60)


def report_profile(path: Path, top: int = 40) -> None:
    """Where the sampled CPU went: the share of samples each frame is on (inclusive) and at the top of (self)."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        count = int(n)
        frames = [_short(f) for f in stack.split(";")]
        frames = [f for f in frames if f]
        total += count
        for f in set(frames):
            inclusive[f] += count
        if frames:
            own[frames[-1]] += count
    if not total:
        print("  profile: no samples")
        return
    print(f"  profile: {total} samples of the server process (py-spy, idle frames excluded)")
    print("    inclusive (frame on the stack):")
    for f, n in inclusive.most_common(top):
        print(f"      {100 * n / total:5.1f}%  {f}")
    print("    self (frame at the top):")
    for f, n in own.most_common(top):
        print(f"      {100 * n / total:5.1f}%  {f}")


def _short(frame: str) -> str:
    """``func (path/to/site-packages/pkg/mod.py:12)`` -> ``func (pkg/mod.py)``."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "lib/python3", str(REPO) + "/"):
        if marker in where:
            where = where.split(marker, 1)[1]
    if where.startswith(".") and "/" in where:  # lib/python3.11/asyncio/... -> asyncio/...
        where = where.split("/", 1)[1]
    return f"{name} ({where})"


async def bench(
    urls: list[str],
    token: str,
    runs: int,
    clients: int,
    pids: list[int],
    other_pids: dict[str, list[int]],
    backends: Callable[[], Awaitable[list[int]]] | None = None,
    profile: Path | None = None,
    cprofile: Path | None = None,
    threads: bool = False,
) -> dict[str, float | None]:
    conns = [WardenClient(u, token=token) for u in urls]
    try:
        # 1. suspend the runs (concurrently, also through HTTP)
        sem = asyncio.Semaphore(clients)

        async def suspend(i: int) -> None:
            async with sem:
                agent = conns[i % len(conns)].agent("bench")
                s = await agent.stream(f"rec-{i}")
                await s.consume()
                assert s.status == "suspended", s.status

        t0 = time.perf_counter()
        await asyncio.gather(*(suspend(i) for i in range(runs)))
        suspend_s = time.perf_counter() - t0

        groups = {"server": pids, **other_pids}
        if backends is not None:
            groups["postgres"] = await backends()
        profiler = Profiler(pids[0], profile) if profile is not None else None
        if cprofile is not None:
            os.kill(pids[0], signal.SIGUSR1)  # server_load_app: cProfile (or GC timing) from here
        cpu0 = {k: {pid: cpu_seconds([pid]) for pid in v} for k, v in groups.items()}
        threads0 = thread_cpu(pids[0]) if threads else {}
        t0 = time.perf_counter()

        # 2. list the queue, page by page (how the clients learn the run ids)
        queue: asyncio.Queue[str] = asyncio.Queue()
        lister = conns[-1].agent("bench")
        page = 0
        while True:
            listed = await lister.list_suspended_runs(page=page, per_page=PAGE)
            for run in listed.runs:
                queue.put_nowait(run.run_id)
            page += 1
            if page * PAGE >= listed.total:
                break
        assert queue.qsize() == runs, (queue.qsize(), runs)

        # 3. each approval: read the pending call, approve it with its fingerprint, read the run to its end
        latencies: list[float] = []

        async def worker(w: int) -> None:
            conn = conns[w % len(conns)]
            agent = conn.agent("bench")
            while True:
                try:
                    run_id = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                start = time.perf_counter()
                call = (await conn.get_suspended_run(run_id)).tool_calls[0]
                stream = await agent.approve_tool_call(
                    run_id=run_id, tool_call_id=call.tool_call_id, fingerprint=call.fingerprint
                )
                await stream.consume()
                latencies.append(time.perf_counter() - start)
                assert stream.status == "finished", (run_id, stream.status)

        await asyncio.gather(*(worker(w) for w in range(clients)))
        approve_s = time.perf_counter() - t0
        if threads:
            print(_threads_line(threads0, thread_cpu(pids[0]), runs), flush=True)
        if backends is not None:  # pools grow under load: backends started meanwhile count from zero
            groups["postgres"] = sorted(set(groups["postgres"]) | set(await backends()))
        per: dict[str, float | None] = {}
        for k, group in groups.items():
            total: float | None = 0.0
            for pid in group:
                now, before = cpu_seconds([pid]), cpu0[k].get(pid, 0.0)
                total = None if total is None or now is None or before is None else total + now - before
            per[k] = None if total is None else total / runs * 1000
        if profiler is not None:
            profiler.stop()
        if cprofile is not None:
            os.kill(pids[0], signal.SIGUSR2)  # ... to here, written to that file
            for _ in range(100):
                if cprofile.exists():
                    break
                await asyncio.sleep(0.1)
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


def run_once(
    a: argparse.Namespace,
    instances: int,
    token: str,
    code: Path = REPO,
    profile: Path | None = None,
    cprofile: Path | None = None,
) -> dict[str, float | None]:
    postgres = a.db is not None and a.db.startswith(("postgresql://", "postgres://"))
    with tempfile.TemporaryDirectory(prefix="warden-bench-") as tmp:
        name = "warden_bench_" + secrets.token_hex(4)
        db: Path | str = scratch_database(a.db, True, name) if postgres else Path(tmp) / "bench.db"
        procs: list[subprocess.Popen[str]] = []
        proxy: subprocess.Popen[str] | None = None
        try:
            sync = "memory" if a.memory else a.synchronous
            started = [start_server(db, token, sync, code) for _ in range(instances)]
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
            return asyncio.run(
                bench(
                    urls,
                    token,
                    a.runs,
                    a.clients,
                    [p.pid for p in procs],
                    other,
                    backends,
                    profile,
                    cprofile,
                    a.threads,
                )
            )
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


def _print_run(r: dict[str, float | None], label: str) -> None:
    cpu = "" if r["server_cpu_ms"] is None else f"   server CPU {r['server_cpu_ms']:.2f} ms/approval"
    extra = "".join(
        f"   {k} CPU {r[f'{k}_cpu_ms']:.2f} ms" for k in ("postgres", "nginx") if r.get(f"{k}_cpu_ms") is not None
    )
    print(
        f"    {label:<10} {r['approvals_per_s']:7.1f} approvals/s   p50 {r['p50_ms']:6.2f} ms   "
        f"p99 {r['p99_ms']:7.2f} ms   max {r['max_ms']:7.2f} ms{cpu}{extra}   "
        f"(suspend {r['suspend_per_s']:.0f} runs/s, load {os.getloadavg()[0]:.2f})",
        flush=True,
    )


def _summary(rows: list[dict[str, float | None]], label: str) -> None:
    """Median and spread (min-max) of each figure over the repeats."""

    def col(key: str, fmt: str) -> str:
        values = [v for r in rows if (v := r.get(key)) is not None]
        if not values:
            return "-"
        return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})"

    print(
        f"    {label:<10} median (min-max) of {len(rows)}: server CPU {col('server_cpu_ms', '.2f')} ms/approval, "
        f"{col('approvals_per_s', '.0f')} approvals/s, p50 {col('p50_ms', '.1f')} ms, p99 {col('p99_ms', '.0f')} ms"
    )


def instances_given(a: argparse.Namespace) -> bool:
    return a.instances.strip() != "1"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=16, help=f"concurrent clients (1..{MAX_CLIENTS})")
    p.add_argument("--runs", type=int, default=1000, help=f"approvals to make (1..{MAX_RUNS})")
    p.add_argument(
        "--instances", default="1", help="server processes on the one store: 1, 2, ... or a list measured in turn (1,2)"
    )
    p.add_argument("--db", default=None, help="postgresql://... (a scratch database on that server); default SQLite")
    p.add_argument("--synchronous", default="NORMAL", choices=["NORMAL", "FULL"], help="SQLite durability")
    p.add_argument("--memory", action="store_true", help="InMemoryStore in the server: the HTTP layer without SQLite")
    p.add_argument("--repeat", type=int, default=1, help="measurements of each configuration (1..20)")
    p.add_argument("--compare", type=Path, default=None, help="another checkout whose server is measured in turns")
    p.add_argument("--profile", type=Path, default=None, help="py-spy the server into this file (one run)")
    p.add_argument("--cprofile", type=Path, default=None, help="cProfile the server's loop thread into this file")
    p.add_argument("--gc", type=Path, default=None, help="time the server's garbage collections into this file")
    p.add_argument(
        "--threads", action="store_true", help="also print the first server's CPU per approval by thread (user + sys)"
    )
    a = p.parse_args()
    try:
        counts = [int(x) for x in a.instances.split(",")]
    except ValueError:
        raise SystemExit("--instances must be a number or a list like 1,2") from None
    if not (1 <= a.clients <= MAX_CLIENTS and 1 <= a.runs <= MAX_RUNS) or not all(1 <= n <= 8 for n in counts):
        raise SystemExit(f"--clients must be 1..{MAX_CLIENTS}, --runs 1..{MAX_RUNS} and --instances 1..8")
    if not 1 <= a.repeat <= 20:
        raise SystemExit("--repeat must be 1..20")
    if a.compare is not None and not (a.compare / "warden_server" / "__init__.py").is_file():
        raise SystemExit(f"--compare {a.compare}: no warden_server there (give a checkout of this repository)")
    postgres = a.db is not None
    if postgres and not a.db.startswith(("postgresql://", "postgres://")):
        raise SystemExit("--db must be a postgresql:// URL (SQLite is the default)")
    token = secrets.token_urlsafe(24)
    store = "PostgreSQL behind nginx on loopback" if postgres else f"SQLite synchronous={a.synchronous}"
    if a.memory:
        if postgres or instances_given(a):
            raise SystemExit("--memory is one server process on its own InMemoryStore (no --db, no --instances)")
        store = "InMemoryStore (the server's own memory)"
    print(
        f"server_load: {a.runs} approvals, {a.clients} concurrent clients, {store}, loopback HTTP + SSE, client SDK\n"
        f"  one approval: 1/{PAGE} of a listing page + GET the pending run + POST approve-tool-call, SSE read to [DONE]"
    )
    print(f"  machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at start")
    if a.profile is not None:
        r = run_once(a, counts[0], token, profile=a.profile)
        _print_run(r, "profiled")
        report_profile(a.profile)
        return
    if a.gc is not None:
        a.gc = a.gc.resolve()
        a.gc.unlink(missing_ok=True)
        os.environ["WARDEN_BENCH_GC"] = str(a.gc)
        r = run_once(a, counts[0], token, cprofile=a.gc)
        _print_run(r, "GC timed")
        import json

        spent = json.loads(a.gc.read_text())
        total = sum(spent["seconds"])
        print(
            f"  garbage collector: {total * 1000 / a.runs:.3f} ms per approval "
            f"(collections by generation {spent['collections']}, seconds {[round(x, 3) for x in spent['seconds']]})"
        )
        return
    if a.cprofile is not None:
        a.cprofile = a.cprofile.resolve()
        a.cprofile.unlink(missing_ok=True)
        os.environ["WARDEN_BENCH_CPROFILE"] = str(a.cprofile)
        r = run_once(a, counts[0], token, cprofile=a.cprofile)
        _print_run(r, "cProfiled")
        import pstats

        stats = pstats.Stats(str(a.cprofile))
        stats.sort_stats("tottime").print_stats(35)
        stats.sort_stats("cumulative").print_stats(60)
        return
    codes = [("this", REPO)] + ([(a.compare.resolve().name, a.compare.resolve())] if a.compare is not None else [])
    if a.compare is not None:
        codes.reverse()  # the other checkout first: "before", then "after"
    for n in counts:
        print(f"  {n} instance(s):")
        rows: dict[str, list[dict[str, float | None]]] = {label: [] for label, _ in codes}
        for _ in range(a.repeat):
            for label, code in codes:
                r = run_once(a, n, token, code)
                rows[label].append(r)
                _print_run(r, label)
        if a.repeat > 1 or a.compare is not None:
            for label, _ in codes:
                _summary(rows[label], label)
    print(
        f"  machine: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end "
        "(client, servers and other users share the CPUs)"
    )


if __name__ == "__main__":
    main()
