"""Where an approval cycle's time goes: cProfile over warm cycles of ``bench/approval_cycle.py``.

Usage: python bench/profile_cycle.py [memory|sqlite|thread|postgres] [cycles] [--sort tottime|cumulative] [--top N]
       python bench/profile_cycle.py [store] [cycles] --tree   (pyinstrument's call tree: a sampling
       profiler, so the shares of each stage are not inflated by Python-heavy code)

Prints the top functions (microseconds per cycle, so figures compare across runs of
different lengths) and the per-cycle count of calls of each. cProfile inflates
Python-heavy code several times over; read the ranking and the call counts, and take
timings from ``bench/approval_cycle.py``.
"""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from approval_cycle import PG_ADMIN, build_agent, cycle

from agent_core import Runtime
from storage import InMemoryStore, PostgresStore, SqliteStore

TREE = "--tree" in sys.argv


async def profiled(store, cycles: int, thread_id: str | None) -> Any:
    agent = build_agent()
    prof: Any
    if TREE:
        from pyinstrument import Profiler

        prof = Profiler(interval=0.0001, async_mode="disabled")
        start, stop = prof.start, prof.stop
    else:
        prof = cProfile.Profile()
        start, stop = prof.enable, prof.disable
    async with Runtime(agents={"bench": agent}, storage=store):
        for _ in range(200):  # warm-up
            await cycle(agent, thread_id)
        start()
        for _ in range(cycles):
            await cycle(agent, thread_id)
        stop()
    return prof


async def run(kind: str, cycles: int) -> Any:
    if kind == "memory":
        return await profiled(InMemoryStore(), cycles, None)
    if kind in ("sqlite", "thread"):
        with tempfile.TemporaryDirectory() as tmp:
            return await profiled(SqliteStore(Path(tmp) / "p.db"), cycles, "t1" if kind == "thread" else None)
    import asyncpg

    name = "warden_prof_" + uuid.uuid4().hex[:8]
    admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        return await profiled(PostgresStore(PG_ADMIN.rsplit("/", 1)[0] + "/" + name), cycles, None)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def report(prof: cProfile.Profile, cycles: int, sort: str, top: int) -> None:
    stats = pstats.Stats(prof)
    entries = []
    for (file, line, fn), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{os.path.relpath(file) if file.startswith('/') else file}:{line}({fn})"
        entries.append((tt if sort == "tottime" else ct, tt, ct, nc, where))
    entries.sort(reverse=True)
    total = sum(e[1] for e in entries)
    print(f"total profiled {total / cycles * 1e6:.0f} us/cycle (cProfile-inflated); sorted by {sort}")
    print(f"{'tottime us':>11} {'cumul us':>10} {'calls':>7}  function")
    for _key, tt, ct, nc, where in entries[:top]:
        print(f"{tt / cycles * 1e6:11.1f} {ct / cycles * 1e6:10.1f} {nc / cycles:7.1f}  {where}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    kind = args[0] if args else "memory"
    n = int(args[1]) if len(args) > 1 else 2000
    sort = sys.argv[sys.argv.index("--sort") + 1] if "--sort" in sys.argv else "tottime"
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 40
    if sort in args:
        args.remove(sort)
    profile = asyncio.run(run(kind, n))
    if TREE:
        print(profile.output_text(unicode=False, color=False, show_all=False, short_mode=False))
    else:
        report(profile, n, sort, top)
