"""Instructions per approval cycle, counted by valgrind (callgrind): a figure the machine's load
does not move, for comparing two trees on a busy 2-core VM where wall-clock p50s vary by 1.5-2x.

Each row runs the same warm cycle as ``bench/approval_cycle.py`` twice under callgrind, with N
and 2N measured cycles after the same warm-up, and prints (I(2N) - I(N)) / N: start-up, imports
and warm-up cancel out. Rows: InMemoryStore, SqliteStore (NORMAL), PostgresStore (this process only,
a scratch database on ``$WARDEN_TEST_PG``'s server) and the peer (pydantic-ai's
durable deferred-tool cycle, ``bench/peer_cycle.py``), with the peer/SQLite ratio. Instructions
are not time (a system call or a cache miss costs more than its count) but a change that lowers
them lowers the CPU the cycle needs; wall time is ``approval_cycle.py``'s, run in turns.

Usage: python bench/cycle_instructions.py [N] [--rows memory,sqlite,postgres,peer]   (needs valgrind)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _child(row: str, warm: int, cycles: int) -> None:
    """Run in the child process, under valgrind."""
    sys.path.insert(0, str(HERE))
    from approval_cycle import build_agent, cycle

    from agent_core import Runtime
    from storage import InMemoryStore, PostgresStore, SqliteStore

    async def main() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            if row == "peer":
                from peer_cycle import build_peer

                peer = build_peer(Path(tmp) / "peer.db")
                for _ in range(warm + cycles):
                    await peer()
                return
            if row == "postgres":
                store: Any = PostgresStore(os.environ["WARDEN_BENCH_PG_DSN"])
            else:
                store = InMemoryStore() if row == "memory" else SqliteStore(Path(tmp) / "bench.db")
            agent = build_agent()
            async with Runtime(agents={"bench": agent}, storage=store):
                for _ in range(warm + cycles):
                    await cycle(agent)

    asyncio.run(main())


async def _scratch_db(drop: str | None = None) -> str:
    """A new database on the benchmark's PostgreSQL server (its DSN), or ``drop`` dropped."""
    import asyncpg
    from approval_cycle import PG_ADMIN

    admin = await asyncpg.connect(PG_ADMIN, timeout=5)
    try:
        name = drop or "warden_bench_" + uuid.uuid4().hex[:8]
        sql = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)' if drop else f'CREATE DATABASE "{name}"'
        await admin.execute(sql)
        return PG_ADMIN.rsplit("/", 1)[0] + "/" + name
    finally:
        await admin.close()


def _count(row: str, warm: int, cycles: int) -> int:
    if row != "postgres":
        return _count_in(row, warm, cycles, {})
    sys.path.insert(0, str(HERE))
    dsn = asyncio.run(_scratch_db())
    try:
        return _count_in(row, warm, cycles, {"WARDEN_BENCH_PG_DSN": dsn})
    finally:
        asyncio.run(_scratch_db(drop=dsn.rsplit("/", 1)[1]))


def _count_in(row: str, warm: int, cycles: int, extra_env: dict[str, str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            __file__,
            "--child",
            row,
            str(warm),
            str(cycles),
        ]
        env = dict(os.environ, PYTHONHASHSEED="0", **extra_env)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        match = re.search(r"^summary: (\d+)", out.read_text(), re.M)
        if not match:
            raise RuntimeError("callgrind wrote no summary line")
        return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cycles", nargs="?", type=int, default=100)
    parser.add_argument("--rows", default="memory,sqlite,peer")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        row, warm, cycles = args.child
        _child(row, int(warm), int(cycles))
        return
    if shutil.which("valgrind") is None:
        sys.exit("cycle_instructions: valgrind is not installed (apt-get install valgrind)")
    n, warm = args.cycles, 50
    print(f"instructions per approval cycle (callgrind; {n} and {2 * n} cycles after {warm} warm-up)")
    per: dict[str, float] = {}
    for row in args.rows.split(","):
        one, two = _count(row, warm, n), _count(row, warm, 2 * n)
        per[row] = (two - one) / n
        print(f"  {row:<8} {per[row] / 1e6:8.3f} M instructions/cycle", flush=True)
    if "peer" in per and "sqlite" in per:
        print(f"  ratio peer/sqlite {per['peer'] / per['sqlite']:5.1f}x")


if __name__ == "__main__":
    main()
