"""Where SqliteStore's share of an approval cycle goes: its transactions, WAL frames and statements.

The warm cycle of ``bench/approval_cycle.py`` on SqliteStore (``synchronous=NORMAL``, the inline
path). Three parts:

1. **One cycle, statement by statement**, averaged over N cycles: each store transaction (a
   ``BEGIN IMMEDIATE`` … ``COMMIT`` script, or one statement in autocommit), its statements with
   the microseconds each spends inside ``sqlite3``, and the WAL frames (pages) it appended, read
   from the ``-shm`` file's header (``mxFrame``), so no system call tracer is needed.
2. **The cycle's p50** on SqliteStore and on InMemoryStore (the same cycle without a database) in
   turns, and the time inside ``sqlite3`` per cycle: what the database costs a cycle.
3. **What each index costs** (``--what-if``): the cycle's p50 on scratch files whose schema lacks
   one listing index or the ``run_counts`` triggers, in turns with the schema as it is. Such a file
   is not a Warden database (the listings, counts and sweeps the index serves read everything
   instead); the figures say what an index costs each approval, for deciding whether a listing
   can spare it.

Usage: python bench/sqlite_floor.py [cycles] [--what-if]
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import struct
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from approval_cycle import build_agent, cycle

from agent_core import Runtime
from storage import InMemoryStore, SqliteStore

#: offset of ``mxFrame`` (the last valid WAL frame) in the WAL-index header at the start of ``-shm``
#: (SQLite's ``WalIndexHdr``: iVersion, unused, iChange, isInit, bigEndCksum, szPage, mxFrame).
_MX_FRAME = 16

#: schema pieces the what-if runs drop, one at a time and all together (each: a label, its DDL).
WHAT_IF: list[tuple[str, str]] = [
    ("without audit_by_agent (audit by agent)", "DROP INDEX audit_by_agent"),
    ("without audit_by_call (a call's entries)", "DROP INDEX audit_by_call"),
    ("without runs_leased (expired-lease sweep)", "DROP INDEX runs_leased"),
    ("without runs_by_status (the pending list)", "DROP INDEX runs_by_status"),
    ("without pending_calls_open (tool/kind filters)", "DROP INDEX pending_calls_open"),
    ("without run_counts triggers (header counts)", "DROP TRIGGER runs_count_insert; DROP TRIGGER runs_count_update"),
]


class _Timed:
    """The inline connection's cursor, each statement timed and recorded in order."""

    def __init__(self, cur: sqlite3.Cursor, log: list[tuple[str, float, int]], shm: int) -> None:
        self._cur, self._log, self._shm = cur, log, shm

    def _frames(self) -> int:
        return int(struct.unpack("=I", os.pread(self._shm, 4, _MX_FRAME))[0])

    def _record(self, sql: str, run: Any) -> Any:
        before = self._frames()
        t0 = time.perf_counter()
        out = run()
        elapsed = time.perf_counter() - t0
        after = self._frames()
        self._log.append((" ".join(sql.split()), elapsed, after - before if after >= before else after))
        return out

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._record(sql, lambda: self._cur.execute(sql, params))

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        return self._record(sql, lambda: self._cur.executemany(sql, rows))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


def _transactions(log: list[tuple[str, float, int]]) -> list[list[tuple[str, float, int]]]:
    """The statements of one cycle grouped as SQLite ran them: a script or one autocommit statement."""
    groups: list[list[tuple[str, float, int]]] = []
    open_tx: list[tuple[str, float, int]] | None = None
    for entry in log:
        if entry[0] == "BEGIN IMMEDIATE":
            open_tx = [entry]
        elif open_tx is not None:
            open_tx.append(entry)
            if entry[0] == "COMMIT":
                groups.append(open_tx)
                open_tx = None
        else:
            groups.append([entry])
    return groups


async def breakdown(path: Path, cycles: int) -> None:
    """Part 1: one cycle's transactions and statements, averaged over ``cycles`` warm cycles."""
    store = SqliteStore(path)
    agent = build_agent()
    async with Runtime(agents={"bench": agent}, storage=store):
        for _ in range(200):
            await cycle(agent)
        assert store._inline is not None, "the inline path is off: nothing to break down"
        shm = os.open(f"{path}-shm", os.O_RDONLY)
        log: list[tuple[str, float, int]] = []
        plain = store._inline.cur
        store._inline.cur = _Timed(plain, log, shm)  # type: ignore[assignment]
        shapes: list[list[list[tuple[str, float, int]]]] = []
        try:
            for _ in range(cycles):
                log.clear()
                await cycle(agent)
                shapes.append(_transactions(log))
        finally:
            store._inline.cur = plain
            os.close(shm)
    first = shapes[0]
    same = [s for s in shapes if [[e[0] for e in g] for g in s] == [[e[0] for e in g] for g in first]]
    print(f"one warm cycle, statement by statement (mean of {len(same)} cycles of the same shape):")
    total_us = total_frames = statements = 0.0
    for i, group in enumerate(first):
        kind = "script" if group[0][0] == "BEGIN IMMEDIATE" else "autocommit"
        us = [sum(s[i][j][1] for s in same) / len(same) * 1e6 for j in range(len(group))]
        frames = [statistics.median(s[i][j][2] for s in same) for j in range(len(group))]
        print(f"  transaction {i + 1} ({kind}): {sum(us):6.1f} us, {sum(frames):.0f} WAL frames")
        for (sql, _, _), t, f in zip(group, us, frames, strict=True):
            print(f"      {t:6.1f} us {f:3.0f} fr  {sql[:70]}")
        total_us += sum(us)
        total_frames += sum(frames)
        statements += len(group)
    writes = sum(
        1 for i in range(len(first)) if any(statistics.median(s[i][j][2] for s in same) for j in range(len(first[i])))
    )
    print(
        f"  per cycle: {len(first)} transactions ({writes} writing), {statements:.0f} statements, "
        f"{total_frames:.0f} WAL frames, {total_us:.1f} us inside sqlite3"
    )


async def _p50(store: Any, cycles: int, ddl: str | None = None, path: Path | None = None) -> float:
    agent = build_agent()
    async with Runtime(agents={"bench": agent}, storage=store):
        await cycle(agent)  # opens the store: the schema exists from here
        if ddl and path is not None:
            db = sqlite3.connect(path, isolation_level=None)
            db.executescript(ddl)
            db.close()
        for _ in range(200):
            await cycle(agent)
        samples = []
        for _ in range(cycles):
            t0 = time.perf_counter()
            await cycle(agent)
            samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


async def compare(tmp: Path, cycles: int, rounds: int, what_if: bool) -> None:
    """Parts 2 and 3: p50s in turns, ``rounds`` times; medians (range) printed."""
    rows: dict[str, list[float]] = defaultdict(list)
    configs: list[tuple[str, str | None]] = [("SqliteStore NORMAL, the schema as it is", None)]
    if what_if:
        configs += [*WHAT_IF, ("without all of the above", "; ".join(d for _, d in WHAT_IF))]
    for r in range(rounds):
        rows["InMemoryStore (no database)"].append(await _p50(InMemoryStore(), cycles))
        for i, (label, ddl) in enumerate(configs):
            path = tmp / f"r{r}c{i}.db"
            rows[label].append(await _p50(SqliteStore(path), cycles, ddl, path))
    base = statistics.median(rows[configs[0][0]])
    print(f"\ncycle p50, {cycles} warm cycles, {rounds} rounds in turns: median (min-max) ms")
    for label, values in rows.items():
        mid = statistics.median(values)
        change = f"{(mid - base) / base * 100:+5.1f} %" if label != "InMemoryStore (no database)" else ""
        print(f"  {label:<50} {mid:6.3f} ({min(values):.3f}-{max(values):.3f}) {change}")


async def main(cycles: int, what_if: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await breakdown(Path(tmp) / "breakdown.db", min(cycles, 500))
        await compare(Path(tmp), cycles, rounds=3, what_if=what_if)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    asyncio.run(main(int(args[0]) if args else 1000, "--what-if" in sys.argv))
