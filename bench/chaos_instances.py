"""Chaos across instances: two ``warden serve`` processes on one PostgreSQL database, one killed with
SIGKILL every 0.1-0.8 s and restarted, while workers start runs on one and approve them through the other.

The agent is ``bench/chaos_app.py`` (``--app bench.chaos_app:build``): one gated tool that writes each
execution to an fsynced SQLite log before it returns, and a model that logs the run's final step. A
scratch database is created on ``--pg`` (default ``$WARDEN_TEST_PG`` or the local server) and dropped
afterwards (``--keep`` keeps it and the logs). Each worker, in a loop: starts a run on instance A
(``POST .../stream``, read until its ``tool-call-approval``), then approves it through instance B
(``POST .../approve-tool-call``, read to ``[DONE]``). A request refused because its instance is down
waits for the restart and is sent again; an approval whose stream was cut (its instance killed) is left
to recovery, as an operator would find it in the queue.

Once the kills stop, both instances up, the leases expired: recovery (``POST /api/recover``) and a few
rounds over the queue, approving what waits for approval and declining what was interrupted (never an
explicit re-execution), as ``bench/chaos.py`` does. What it prints:

* deadlocks: PostgreSQL's count for the database (``pg_stat_database``), and server log lines that say so;
* 5xx: answers of 500 or more, by what they said;
* untrue streams: approve streams that ended ``failed`` (an error chunk, not a cut) while their run was not
  left failed;
* doubles: a call whose tool ran more than once (must be 0: recovery here never re-approves);
* lost: runs announced as waiting that neither finished nor remain; stuck: runs left in the store
  (not failed) after recovery; failed: runs that ended with an error.

``--code DIR`` serves another checkout's code (``git worktree add DIR main``; copy this ``chaos_app.py``
into it), to compare. ``--json`` prints the figures as one JSON line last
(``tests/test_chaos_instances.py`` runs a few kills).
Bounded: ``--kills`` (default 300) and ``--max-seconds`` (default 1200). Loopback only.

``--soak SECONDS``: no kills; the same workers for that long, and every 30 s a line: approvals, each
server's RSS and open files, the database's size and dead rows (PostgreSQL) or the WAL file (``--sqlite``:
both instances on one SQLite file), what must stay bounded over hours.

    python bench/chaos_instances.py --kills 300
    python bench/chaos_instances.py --kills 5 --workers 2 --json
    python bench/chaos_instances.py --soak 600 --pg postgresql://postgres@127.0.0.1:55432/postgres
    python bench/chaos_instances.py --soak 600 --sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chaos import _env  # noqa: E402

READY = "Warden server listening on "
ADMIN = os.environ.get("WARDEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
AGENT = "chaos"


class Down(Exception):
    """The instance did not answer (killed, or not restarted yet): nothing was sent, or it was cut."""


class Instance:
    """One ``warden serve`` process, restarted on a new port after each kill."""

    def __init__(self, name: str, env: dict[str, str], log: Path) -> None:
        self.name, self.env, self.log = name, env, log
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.up = asyncio.Event()
        self.kills = 0
        self.starts = 0
        #: loop time of the last approve request sent to it (kills "within 30 ms of an approve")
        self.last_approve = 0.0
        self._drain: asyncio.Task[None] | None = None

    async def start(self) -> None:
        warden = str(Path(sys.executable).parent / "warden")
        args = [warden, "serve", "--app", "bench.chaos_app:build", "--host", "127.0.0.1", "--port", "0"]
        with self.log.open("ab") as err:
            self.proc = await asyncio.create_subprocess_exec(
                *args, cwd=self.env["CHAOS_CODE"], env=self.env, stdout=asyncio.subprocess.PIPE, stderr=err
            )
        assert self.proc.stdout is not None
        while True:
            line = (await asyncio.wait_for(self.proc.stdout.readline(), 60)).decode()
            if not line:
                raise SystemExit(f"{self.name} did not start: see {self.log}")
            if line.startswith(READY):
                self.url = line[len(READY) :].strip()
                break
        self._drain = asyncio.ensure_future(self._read_rest(self.proc.stdout))
        self.starts += 1
        self.up.set()

    @staticmethod
    async def _read_rest(out: asyncio.StreamReader) -> None:
        while await out.readline():
            pass

    async def kill(self) -> None:
        self.up.clear()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
            await self.proc.wait()
        self.kills += 1

    async def stop(self) -> None:
        self.up.clear()
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


class Chaos:
    def __init__(self, opts: argparse.Namespace, dsn: str, work: Path) -> None:
        self.opts, self.dsn, self.work = opts, dsn, work
        env = _env(dsn, work / "exec.db", opts.lease)  # type: ignore[arg-type]  # a URL or a path
        code = (opts.code or ROOT).resolve()
        env["PYTHONPATH"] = os.pathsep.join([str(code), env["PYTHONPATH"]])
        env["CHAOS_CODE"] = str(code)
        self.a = Instance("A", env, work / "a.log")
        self.b = Instance("B", env, work / "b.log")
        self.stop = asyncio.Event()
        self.counts: Counter[str] = Counter()
        self.errors_5xx: Counter[str] = Counter()
        #: runs announced as waiting (their suspension is durable before its chunk is sent)
        self.announced: set[str] = set()
        #: approve streams that ended with an error chunk: (run id, code, message)
        self.failed_streams: list[tuple[str, str, str]] = []
        self.near_kills = 0
        self.samples: list[dict[str, Any]] = []
        self.began = time.time()
        #: ``--sqlite``: the file both instances share (else the PostgreSQL database ``dsn``)
        self.sqlite: Path | None = None

    # -- HTTP ------------------------------------------------------------------------------------
    async def sse(self, client: httpx.AsyncClient, inst: Instance, route: str, body: dict[str, Any]) -> Any:
        """The chunks of one SSE answer read to ``[DONE]`` (``(status, chunks, done)``), or ``Down``."""
        await inst.up.wait()
        try:
            async with client.stream("POST", inst.url + route, json=body) as resp:
                if resp.status_code != 200:
                    return resp.status_code, (await resp.aread()).decode(errors="replace"), True
                chunks: list[dict[str, Any]] = []
                async for line in resp.aiter_lines():
                    if line.startswith("data: "):
                        data = line[6:]
                        if data == "[DONE]":
                            return 200, chunks, True
                        chunks.append(json.loads(data))
                return 200, chunks, False
        except (httpx.TransportError, OSError) as exc:
            raise Down(str(exc)) from exc

    async def json(self, client: httpx.AsyncClient, inst: Instance, method: str, route: str, **kw: Any) -> Any:
        for _ in range(200):
            await inst.up.wait()
            try:
                resp = await client.request(method, inst.url + route, **kw)
            except (httpx.TransportError, OSError):
                await asyncio.sleep(0.05)
                continue
            self._count_status(resp.status_code, resp.text)
            return resp
        raise SystemExit(f"{inst.name} stayed down")

    def _count_status(self, status: int, text: str) -> None:
        if status >= 500:
            self.counts["5xx"] += 1
            self.errors_5xx[text[:160]] += 1

    # -- the workers -------------------------------------------------------------------------------
    async def worker(self, w: int) -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as client:
            while not self.stop.is_set():
                started = await self.start_run(client)
                if started is None:
                    continue
                run_id, call_id = started
                await self.approve(client, run_id, call_id)

    async def start_run(self, client: httpx.AsyncClient) -> tuple[str, str] | None:
        try:
            status, chunks, done = await self.sse(client, self.a, f"/api/agents/{AGENT}/stream", {"messages": "act"})
        except Down:
            self.counts["start cut"] += 1
            return None
        if status != 200:
            self._count_status(status, chunks)
            self.counts[f"start {status}"] += 1
            return None
        for c in chunks:
            if c.get("type") == "tool-call-approval":
                self.announced.add(c["runId"])
                self.counts["runs"] += 1
                return c["runId"], c["payload"]["toolCallId"]
        self.counts["start cut" if not done else "start without approval"] += 1
        return None

    async def approve(self, client: httpx.AsyncClient, run_id: str, call_id: str) -> None:
        body = {"runId": run_id, "toolCallId": call_id}
        for _ in range(50):
            self.b.last_approve = asyncio.get_running_loop().time()
            try:
                status, chunks, done = await self.sse(client, self.b, f"/api/agents/{AGENT}/approve-tool-call", body)
            except Down:
                self.counts["approve cut"] += 1
                return  # decided or not: recovery and the operators' queue take it from here
            if status >= 500:
                self._count_status(status, chunks)
                await asyncio.sleep(0.05)
                continue  # the decision is safe to take again: an operator would retry
            if status != 200:
                self.counts[f"approve {status}"] += 1
                return
            if not done:
                self.counts["approve cut"] += 1
                return
            self.counts["approved"] += 1
            errors = [c for c in chunks if c.get("type") == "error"]
            finished = any(c.get("type") == "finish" for c in chunks)
            if errors:
                p = errors[-1].get("payload", {})
                self.failed_streams.append((run_id, p.get("code") or "", p.get("error") or ""))
            elif finished:
                self.counts["approve finished"] += 1
            return

    # -- the killer ----------------------------------------------------------------------------------
    async def soak(self) -> None:
        """No kills: the workers run for ``--soak`` seconds; every 30 s a line of what grows or should not."""
        began = time.time()
        print("   s  approvals  RSS A/B MB   fds A/B   db MB  dead rows  WAL MB", flush=True)
        while time.time() - began < self.opts.soak:
            await asyncio.sleep(min(30.0, max(0.0, self.opts.soak - (time.time() - began))))
            row = await self.sample()
            self.samples.append(row)
            print(
                f"{row['s']:>4.0f} {row['approvals']:>10} {row['rss_a']:>6.1f}/{row['rss_b']:<6.1f} "
                f"{row['fds_a']:>4}/{row['fds_b']:<4} {row['db_mb']:>7.1f} {row['dead']:>10} {row['wal_mb']:>7.1f}",
                flush=True,
            )
        self.stop.set()

    async def sample(self) -> dict[str, Any]:
        def proc(inst: Instance, what: str) -> float:
            pid = inst.proc.pid if inst.proc is not None else 0
            try:
                if what == "fds":
                    return len(os.listdir(f"/proc/{pid}/fd"))
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
            except OSError:
                pass
            return 0

        if self.sqlite is not None:
            db_mb = self.sqlite.stat().st_size / 1e6
            wal = Path(str(self.sqlite) + "-wal")
            wal_mb, dead = (wal.stat().st_size / 1e6 if wal.exists() else 0.0), 0
        else:
            conn = await asyncpg.connect(self.dsn)
            try:
                db_mb = int(await conn.fetchval("SELECT pg_database_size(current_database())")) / 1e6
                dead = int(await conn.fetchval("SELECT COALESCE(SUM(n_dead_tup), 0) FROM pg_stat_user_tables"))
            finally:
                await conn.close()
            wal_mb = 0.0
        return {
            "s": time.time() - self.began,
            "approvals": self.counts["approve finished"],
            "rss_a": proc(self.a, "rss"),
            "rss_b": proc(self.b, "rss"),
            "fds_a": int(proc(self.a, "fds")),
            "fds_b": int(proc(self.b, "fds")),
            "db_mb": db_mb,
            "dead": dead,
            "wal_mb": wal_mb,
        }

    async def killer(self) -> None:
        rng = random.Random(self.opts.seed)
        loop = asyncio.get_running_loop()
        kills = 0
        started = time.time()
        while kills < self.opts.kills and time.time() - started < self.opts.max_seconds:
            await asyncio.sleep(rng.uniform(0.1, 0.8))
            victim = rng.choice([self.a, self.b])
            if loop.time() - victim.last_approve < 0.03:
                self.near_kills += 1
            await victim.kill()
            kills += 1
            await victim.start()
            if kills % 25 == 0:
                print(f"  {kills} kills, {self.counts['runs']} runs, {time.time() - started:.0f} s", flush=True)
        self.stop.set()

    # -- recovery and the count ------------------------------------------------------------------------
    async def recover(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as client:
            for _ in range(8):
                await asyncio.sleep(self.opts.lease + 0.3)
                resp = await self.json(client, self.b, "POST", "/api/recover")
                counts["recover calls"] += 1
                if resp.status_code != 200:
                    counts[f"recover {resp.status_code}"] += 1
                listing = (await self.json(client, self.b, "GET", "/api/suspended-runs?perPage=1000")).json()
                if not listing.get("runs"):
                    break
                for run in listing["runs"]:
                    for call in run["toolCalls"]:
                        body = {"runId": run["runId"], "toolCallId": call["toolCallId"]}
                        if call.get("kind") == "interrupted":
                            route, what = "decline-tool-call", "declined interrupted"
                            body["reason"] = "chaos recovery: not re-running"
                        else:
                            route, what = "approve-tool-call", "approved"
                        status, chunks, _ = await self.sse(client, self.b, f"/api/agents/{AGENT}/{route}", body)
                        if status >= 500:
                            self._count_status(status, chunks)
                        counts[what if status == 200 else f"{what} {status}"] += 1
        return counts

    async def figures(self, recovery: Counter[str], deadlocks: int) -> dict[str, Any]:
        with sqlite3.connect(self.work / "exec.db", timeout=60) as con:
            executions = Counter((r[0], r[1]) for r in con.execute("SELECT run_id, call_id FROM executions"))
            finished = {r[0] for r in con.execute("SELECT run_id FROM finished")}
        if self.sqlite is not None:
            with sqlite3.connect(self.sqlite, timeout=60) as db:
                remaining = dict(db.execute("SELECT run_id, status FROM runs").fetchall())
        else:
            conn = await asyncpg.connect(self.dsn)
            try:
                remaining = {r[0]: r[1] for r in await conn.fetch("SELECT run_id, status FROM runs")}
            finally:
                await conn.close()
        logged = sum(p.read_text(errors="replace").count("deadlock detected") for p in (self.a.log, self.b.log))
        untrue = [f for f in self.failed_streams if remaining.get(f[0]) != "failed"]
        known = self.announced | set(remaining)
        return {
            "kills": self.a.kills + self.b.kills,
            "kills_near_approve": self.near_kills,
            "runs": len(known),
            "approve_streams": self.counts["approved"],
            "approve_cut": self.counts["approve cut"],
            "executions": sum(executions.values()),
            "deadlocks": deadlocks,
            "deadlocks_logged": logged,
            "5xx": self.counts["5xx"],
            "5xx_said": dict(self.errors_5xx),
            "failed_streams": len(self.failed_streams),
            "untrue_failed_streams": len(untrue),
            "untrue_said": sorted({f"{c}: {m[:120]}" for _, c, m in untrue}),
            "doubles": sum(1 for n in executions.values() if n > 1),
            "lost": len([r for r in known if r not in finished and r not in remaining]),
            "stuck": sum(1 for s in remaining.values() if s != "failed"),
            "failed_runs": sum(1 for s in remaining.values() if s == "failed"),
            "recovery": dict(recovery),
            "other": {k: v for k, v in self.counts.items() if k not in ("5xx", "runs", "approved")},
            "samples": self.samples,
        }


async def _deadlocks(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"))
    finally:
        await conn.close()


async def run(opts: argparse.Namespace) -> dict[str, Any]:
    name = "warden_chaos_" + uuid.uuid4().hex[:10]
    work = opts.keep or Path(tempfile.mkdtemp(prefix="warden-chaos-instances-"))
    work.mkdir(parents=True, exist_ok=True)
    if opts.sqlite:
        dsn = str(work / "chaos.db")
    else:
        admin = await asyncpg.connect(opts.pg)
        await admin.execute(f'CREATE DATABASE "{name}"')
        await admin.close()
        dsn = opts.pg.rsplit("/", 1)[0] + "/" + name
    chaos = Chaos(opts, dsn, work)
    chaos.sqlite = work / "chaos.db" if opts.sqlite else None
    began = time.time()
    try:
        await chaos.a.start()
        await chaos.b.start()
        workers = [asyncio.ensure_future(chaos.worker(w)) for w in range(opts.workers)]
        await (chaos.soak() if opts.soak else chaos.killer())
        await asyncio.gather(*workers)
        recovery = await chaos.recover()
        await chaos.a.stop()
        await chaos.b.stop()  # the backends end with the servers and flush their statistics
        await asyncio.sleep(1.0)
        out = await chaos.figures(recovery, 0 if opts.sqlite else await _deadlocks(dsn))
        out["seconds"] = round(time.time() - began, 1)
        out["files"] = str(work)
        return out
    finally:
        await chaos.a.stop()
        await chaos.b.stop()
        if opts.keep is None and not opts.sqlite:
            admin = await asyncpg.connect(opts.pg)
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=300)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--max-seconds", type=float, default=1200.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--pg", default=ADMIN, help="an admin DSN: a scratch database is made on its server")
    parser.add_argument("--keep", type=Path, default=None, help="keep the database and the logs (this folder)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line last")
    parser.add_argument("--soak", type=float, default=0.0, help="no kills: run this many seconds, sampled every 30 s")
    parser.add_argument("--sqlite", action="store_true", help="both instances on one SQLite file instead")
    parser.add_argument(
        "--code",
        type=Path,
        default=None,
        help="serve the Warden code of another checkout (with this bench/chaos_app.py)",
    )
    opts = parser.parse_args()
    out = asyncio.run(run(opts))
    print(
        f"kills {out['kills']} ({out['kills_near_approve']} within 30 ms of an approve)  runs {out['runs']}  "
        f"approve streams {out['approve_streams']} (+{out['approve_cut']} cut)  executions {out['executions']}"
    )
    print(f"deadlocks {out['deadlocks']} (logged {out['deadlocks_logged']})  5xx {out['5xx']}  {out['5xx_said']}")
    print(f"failed streams {out['failed_streams']}, untrue {out['untrue_failed_streams']}  {out['untrue_said']}")
    print(f"doubles {out['doubles']}  lost {out['lost']}  stuck {out['stuck']}  failed runs {out['failed_runs']}")
    print(f"recovery {out['recovery']}  other {out['other']}")
    print(f"took {out['seconds']} s; files in {out['files']}")
    if opts.json:
        print(json.dumps(out))


if __name__ == "__main__":
    main()
