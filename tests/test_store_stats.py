"""``warden store stats`` and the autovacuum warning of a PostgreSQL store (issue 43)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import asyncpg

from storage import PostgresStore, SqliteStore
from storage.records import PendingCallRow, RunRow
from storage.stats import table_autovacuum, vacuum_warning
from tests.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent
WARDEN = str(Path(sys.executable).parent / "warden")


def _stats(db: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WARDEN, "store", "stats", "--db", db, *extra], capture_output=True, text=True, timeout=60)


async def _fill(store, n: int) -> None:
    for i in range(n):
        run = RunRow(f"r{i}", "a", None, None, "suspended", "{}", suspended_at=1000.0 + i)
        await store.save_suspended(run, [PendingCallRow(f"r{i}", "c", "t", "approval", {}, "sha256:x")])
    for i in range(0, n, 2):
        await store.finish_run(f"r{i}", None)


async def test_sqlite_stats_count_rows_and_sizes_per_table(tmp_path):
    db = tmp_path / "w.db"
    store = SqliteStore(db)
    await _fill(store, 10)
    await store.aclose()
    out = _stats(str(db), "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    tables = {t["name"]: t for t in got["tables"]}
    assert tables["runs"]["rows"] == 5 and tables["pending_calls"]["rows"] == 5
    assert tables["runs"]["bytes"] > 0 and got["bytes"] == db.stat().st_size
    assert got["free_bytes"] >= 0 and got["wal_bytes"] >= 0 and got["warning"] is None
    text = _stats(str(db))
    assert text.returncode == 0 and "runs" in text.stdout and "WAL" in text.stdout


def test_stats_of_what_is_not_a_store_is_one_line(tmp_path):
    for db in ("memory:", str(tmp_path / "nope" / "w.db"), "postgresql://postgres@127.0.0.1:5432/warden_no_such_db"):
        out = _stats(db)
        assert out.returncode != 0 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr


async def test_postgres_stats_show_dead_rows_and_autovacuum_per_table(caplog):
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        await _fill(store, 10)
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("ALTER TABLE runs SET (autovacuum_enabled = false)")
            server_on = await conn.fetchval("SELECT current_setting('autovacuum') = 'on'")
        finally:
            await conn.close()
        await store.aclose()
        out = _stats(dsn, "--json")
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        tables = {t["name"]: t for t in got["tables"]}
        assert tables["runs"]["rows"] + tables["runs"]["dead_rows"] >= 5
        assert tables["runs"]["autovacuum"] is False and tables["pending_calls"]["autovacuum"] is True
        assert got["warning"] and ("runs" in got["warning"] or not server_on)
        assert _stats(dsn, "--check").returncode == 1
        # the store says so when it opens (once)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="warden.storage"):
            again = PostgresStore(dsn)
            await again.setup()
            await again.list_suspended()
            await again.aclose()
        said = [r.getMessage() for r in caplog.records if "autovacuum" in r.getMessage()]
        assert len(said) == 1 and again.vacuum_warning is not None and "docs/postgres.md" in said[0]


def test_the_warning_names_what_switched_autovacuum_off():
    assert vacuum_warning("on", "on", []) is None
    assert "for runs, pending_calls" in (vacuum_warning("on", "on", ["runs", "pending_calls"]) or "")
    assert "on this server" in (vacuum_warning("off", "on", []) or "")
    assert "track_counts" in (vacuum_warning("on", "off", []) or "")
    assert not table_autovacuum(["fillfactor=90", "autovacuum_enabled=OFF"])
    assert table_autovacuum(["autovacuum_enabled=true"]) and table_autovacuum(None)
