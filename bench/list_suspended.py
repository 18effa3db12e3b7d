"""``list_suspended_runs`` with many suspended runs stored: by thread, and the first page of all.

Prints p50 in ms at 1k, 10k and 100k runs; the listing must stay flat (indexed).
Usage: python bench/list_suspended.py [max_runs]
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from _common import percentiles

from agent_core import Agent, Runtime
from agent_core.models import FunctionModel
from storage import SqliteStore
from storage.records import PendingCallRow, RunRow


async def fill(store: SqliteStore, start: int, stop: int) -> None:
    batch = 2000
    for base in range(start, stop, batch):
        end = min(stop, base + batch)

        def insert(db, lo=base, hi=end):
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT INTO runs (run_id, agent_id, thread_id, resource_id, status, snapshot, version, created_at, "
                "suspended_at, updated_at) VALUES (?, 'ops', ?, ?, 'suspended', '{}', 1, ?, ?, ?)",
                [
                    (f"run-{i:07d}", f"thread-{i % 5000}", f"user-{i % 700}", 1e9 + i, 1e9 + i, 1e9 + i)
                    for i in range(lo, hi)
                ],
            )
            rows = [
                PendingCallRow(
                    run_id=f"run-{i:07d}",
                    tool_call_id="c1",
                    tool_name="delete_record",
                    kind="approval",
                    args={"id": f"rec-{i}"},
                    fingerprint="sha256:" + "0" * 64,
                    agent_path=["ops"],
                    created_at=1e9 + i,
                )
                for i in range(lo, hi)
            ]
            from storage import sql_common
            from storage.rows import call_params

            db.executemany(sql_common.sqlite_text(sql_common.INSERT_CALL), [call_params(r) for r in rows])
            db.execute("COMMIT")

        await store.setup()  # the schema, then the rows on a connection of this benchmark's own
        db = sqlite3.connect(store.path, isolation_level=None)
        try:
            insert(db)
        finally:
            db.close()


async def measure(runtime: Runtime, repeat: int = 300) -> tuple[float, float]:
    for i in range(30):  # warm-up: page cache, statement cache
        await runtime.list_suspended_runs(agent_id="ops", thread_id=f"thread-{i}")
        await runtime.list_suspended_runs(per_page=50)
    by_thread, first_page = [], []
    for i in range(repeat):
        t0 = time.perf_counter()
        res = await runtime.list_suspended_runs(agent_id="ops", thread_id=f"thread-{i % 50}")
        by_thread.append(time.perf_counter() - t0)
        assert res.runs
        t0 = time.perf_counter()
        res = await runtime.list_suspended_runs(per_page=50)
        first_page.append(time.perf_counter() - t0)
        assert len(res.runs) == 50
    return percentiles(by_thread)[0], percentiles(first_page)[0]


async def main(max_runs: int) -> None:
    _ = RunRow  # the rows are written directly, in bulk, to fill quickly
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "list.db")
        agent = Agent(id="ops", model=FunctionModel(lambda m, i: "ok"))
        async with Runtime(agents={"ops": agent}, storage=store) as runtime:
            stored = 0
            print("list_suspended_runs p50 (ms), SqliteStore")
            for size in (1_000, 10_000, 100_000):
                if size > max_runs:
                    break
                await fill(store, stored, size)
                stored = size
                thread_ms, page_ms = await measure(runtime)
                print(f"  {size:>7} runs   by thread {thread_ms:6.3f} ms   first page of all {page_ms:6.3f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))
