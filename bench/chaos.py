"""Chaos: kill -9 the deciding process at random moments around approvals, then recover and count.

Each iteration suspends a run of ``bench/chaos_app.py`` in one SQLite file and
kills (SIGKILL) a process while it approves, in one of four ways, in turn:

* ``inproc``: a process starts a run and approves it itself;
* ``warm``: a process with its runtime open approves a run another process suspended;
* ``cli``: ``warden runs approve RUN --app bench.chaos_app:build``;
* ``two``: a run with two gated calls, each approved by its own warm process; one of them is killed.

Then, once the leases have expired, a fresh process recovers: it calls
``runtime.recover()`` where it exists, approves every call still waiting for
approval and declines every interrupted one (never an explicit re-execution),
a few rounds. What it prints:

* double executions: a call whose tool ran more than once (must be 0: only an
  explicit re-approval or ``idempotent=True`` may run a tool again, and the
  recovery here never re-approves);
* stuck runs: runs still in the store after recovery (listed without an
  actionable call, or not listed at all);
* lost runs: runs that were stored at some point and neither finished nor remain;
* failed runs: runs that ended with an error (kept, listed as failed).

Bounded: ``--iterations`` (default 200) and ``--max-seconds`` (default 900).
Usage: ``python bench/chaos.py [--iterations N] [--lease S] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODES = ("inproc", "warm", "cli", "two")


# -- child processes ----------------------------------------------------------------------
async def _child(mode: str, run_id: str | None, call_id: str | None) -> None:
    from bench.chaos_app import build

    runtime = build()
    async with runtime:
        agent = runtime.get_agent("chaos")
        await runtime.list_suspended_runs(per_page=1)  # warm: store open, schema read
        print("ready", flush=True)
        sys.stdin.readline()
        if mode == "inproc":
            stream = await agent.stream("act")
            await stream.wait()
            _record_created(stream.run_id)
            print(f"run {stream.run_id}", flush=True)
            run_id = stream.run_id
        stream = await agent.approve_tool_call(run_id=run_id or "", tool_call_id=call_id)
        await stream.wait()
        print(f"done {stream.status}", flush=True)


def _record_created(run_id: str) -> None:
    db = sqlite3.connect(os.environ["CHAOS_EXEC"], timeout=60, isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS created (run_id TEXT)")
    db.execute("INSERT INTO created VALUES (?)", (run_id,))
    db.close()


async def _recover(rounds: int, lease: float) -> dict[str, int]:
    from bench.chaos_app import build

    runtime = build()
    counts: Counter[str] = Counter()
    async with runtime:
        agent = runtime.get_agent("chaos")
        for _ in range(rounds):
            recover = getattr(runtime, "recover", None)
            if recover is not None:
                counts["recovered"] += int(await recover() or 0)
            listing = await runtime.list_suspended_runs(per_page=10_000)
            if not listing.runs:
                break
            for run in listing.runs:
                for call in run.tool_calls:
                    try:
                        if call.kind == "approval":
                            await (
                                await agent.approve_tool_call(run_id=run.run_id, tool_call_id=call.tool_call_id)
                            ).wait()
                            counts["approved"] += 1
                        else:  # interrupted (or input): never re-run here
                            reason = "chaos recovery: not re-running"
                            stream = await agent.decline_tool_call(
                                run_id=run.run_id, tool_call_id=call.tool_call_id, reason=reason
                            )
                            await stream.wait()
                            counts[f"declined {call.kind}"] += 1
                    except Exception as exc:  # decided meanwhile, or not actionable: counted, then looked at again
                        counts[f"error {type(exc).__name__}"] += 1
            await asyncio.sleep(lease + 0.2)
    return dict(counts)


# -- the driver -----------------------------------------------------------------------------
def _env(db: Path, exec_path: Path, lease: float, calls: int = 1) -> dict[str, str]:
    env = dict(os.environ)
    env.update(CHAOS_DB=str(db), CHAOS_EXEC=str(exec_path), CHAOS_LEASE=str(lease), CHAOS_CALLS=str(calls))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT
    )


def _wait_ready(proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    assert proc.stdout is not None
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()
        if line.strip() == "ready" or not line:
            return


def _kill_after(procs: list[subprocess.Popen[str]], delay: float, victim: int) -> None:
    time.sleep(delay)
    try:
        procs[victim].send_signal(signal.SIGKILL)
    except ProcessLookupError:
        pass
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()


async def _suspend(db: Path, exec_path: Path, lease: float, calls: int) -> tuple[str, list[str]]:
    os.environ.update(_env(db, exec_path, lease, calls))
    from bench.chaos_app import build

    async with build() as runtime:
        stream = await runtime.get_agent("chaos").stream("act")
        await stream.wait()
        run = await runtime.get_suspended_run(stream.run_id)
    _record_created(stream.run_id)
    return stream.run_id, [c.tool_call_id for c in run.tool_calls]


def _all_runs(db: Path) -> set[str]:
    with sqlite3.connect(db, timeout=60) as con:
        return {r[0] for r in con.execute("SELECT run_id FROM runs")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--max-seconds", type=float, default=900.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", type=Path, default=None, help="keep the database and logs in this folder")
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    work = opts.keep or Path(tempfile.mkdtemp(prefix="warden-chaos-"))
    work.mkdir(parents=True, exist_ok=True)
    db, exec_path = work / "chaos.db", work / "exec.db"
    py = sys.executable
    warden = str(Path(sys.executable).parent / "warden")
    started = time.time()
    kills = 0
    by_mode: Counter[str] = Counter()
    seen: set[str] = set()
    i = 0
    for i in range(opts.iterations):
        if time.time() - started > opts.max_seconds:
            break
        mode = MODES[i % len(MODES)]
        by_mode[mode] += 1
        env = _env(db, exec_path, opts.lease, 2 if mode == "two" else 1)
        child = [py, str(Path(__file__).resolve()), "child", mode]
        if mode == "inproc":
            procs = [_spawn(child, env)]
            _wait_ready(procs[0])
            procs[0].stdin.write("go\n")  # type: ignore[union-attr]
            procs[0].stdin.flush()  # type: ignore[union-attr]
            _kill_after(procs, rng.uniform(0, 0.03), 0)
        else:
            run_id, call_ids = asyncio.run(_suspend(db, exec_path, opts.lease, 2 if mode == "two" else 1))
            seen.add(run_id)
            if mode == "cli":
                args = [warden, "runs", "approve", run_id, "--app", "bench.chaos_app:build"]
                procs = [_spawn(args, env)]
                _kill_after(procs, rng.uniform(0.2, 1.0), 0)
            else:
                procs = [_spawn([*child, run_id, cid], env) for cid in call_ids]
                for p in procs:
                    _wait_ready(p)
                for p in procs:
                    p.stdin.write("go\n")  # type: ignore[union-attr]
                    p.stdin.flush()  # type: ignore[union-attr]
                _kill_after(procs, rng.uniform(0, 0.03), rng.randrange(len(procs)))
        kills += 1
        seen |= _all_runs(db)
        if (i + 1) % 20 == 0:
            print(f"  {i + 1} iterations, {time.time() - started:.0f} s", flush=True)

    time.sleep(opts.lease + 0.5)
    seen |= _all_runs(db)
    out = subprocess.run(
        [py, str(Path(__file__).resolve()), "recover", str(opts.lease)],
        env=_env(db, exec_path, opts.lease),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    recovery = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {"failed": out.stderr[-500:]}

    with sqlite3.connect(exec_path, timeout=60) as con:
        executions = Counter((r[0], r[1]) for r in con.execute("SELECT run_id, call_id FROM executions"))
        finished = {r[0] for r in con.execute("SELECT run_id FROM finished")}
        created = {r[0] for r in con.execute("SELECT run_id FROM created")}
    with sqlite3.connect(db, timeout=60) as con:
        remaining = dict(con.execute("SELECT run_id, status FROM runs").fetchall())
    seen |= created
    doubles = sum(1 for n in executions.values() if n > 1)
    failed = sum(1 for s in remaining.values() if s == "failed")
    stuck = sum(1 for s in remaining.values() if s != "failed")
    lost = len([r for r in seen if r not in finished and r not in remaining])
    print(f"iterations {i + 1}  kills {kills}  modes {dict(by_mode)}  lease {opts.lease} s")
    print(f"runs {len(seen)}  finished {len(finished & seen)}  executions {sum(executions.values())}")
    print(f"recovery {recovery}")
    print(f"double executions {doubles}  stuck runs {stuck}  lost runs {lost}  failed runs {failed}")
    print(f"took {time.time() - started:.0f} s; files in {work}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        asyncio.run(_child(sys.argv[2], *(sys.argv[3:5] or [None, None])))
    elif len(sys.argv) > 1 and sys.argv[1] == "recover":
        print(json.dumps(asyncio.run(_recover(rounds=5, lease=float(sys.argv[2])))))
    else:
        main()
