"""What a store's tables hold and take on disk (``warden store stats``), and whether PostgreSQL's autovacuum
cleans them (the warning a PostgreSQL store logs when it opens).

Warden's write pattern leaves dead rows behind in PostgreSQL: every approval inserts a run and its call,
updates both (the claim, the started mark, checkpoints) and deletes them when the run ends, so ``runs``
and ``pending_calls`` hold a handful of live rows and, until vacuumed, every dead version of every run
(issue 43: 184 MB for 23 live runs with autovacuum off). SQLite reuses freed pages itself; its free
pages and its WAL file are what it reports. Each reader opens a connection of its own, read only.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

#: Warden's tables (the schema's; ``warden_schema`` aside).
TABLES = ("runs", "pending_calls", "run_counts", "audit_log", "grants", "threads", "messages")
#: what ``autovacuum_enabled`` (a table's storage parameter) is set to when it switches autovacuum off
_OFF = {"false", "off", "no", "0", "f", "n"}


@dataclass
class TableStats:
    name: str
    rows: int
    #: bytes the table takes with its indexes (PostgreSQL: and TOAST)
    bytes: int
    #: PostgreSQL: dead row versions not vacuumed yet (None in SQLite)
    dead_rows: int | None = None
    #: PostgreSQL: when autovacuum last ran on it (epoch seconds), and whether it may
    last_autovacuum: float | None = None
    autovacuum: bool | None = None


@dataclass
class StoreStats:
    store: str
    tables: list[TableStats]
    #: the database's bytes on disk (SQLite: the main file; PostgreSQL: ``pg_database_size``)
    bytes: int
    #: SQLite: free pages (bytes) in the file and the WAL file's size
    free_bytes: int | None = None
    wal_bytes: int | None = None
    #: PostgreSQL: the server's ``autovacuum`` setting (and ``track_counts``, which it needs)
    autovacuum: bool | None = None
    warning: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def sqlite_stats(path: str | os.PathLike[str]) -> StoreStats:
    """Rows and bytes per table (``dbstat``), free pages and the WAL of a SQLite file, read only."""
    path = os.fspath(path)
    uri = "file:" + os.path.abspath(path) + "?mode=ro"
    db = sqlite3.connect(uri, uri=True)
    try:
        present = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        by_object: dict[str, int] = {}
        try:
            for name, size in db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name"):
                by_object[name] = int(size)
        except sqlite3.OperationalError:  # a SQLite built without dbstat: sizes unknown (0)
            pass
        owner = {r[0]: r[1] for r in db.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'")}
        tables = []
        for t in TABLES:
            if t not in present:
                continue
            size = by_object.get(t, 0) + sum(v for k, v in by_object.items() if owner.get(k) == t)
            rows = db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]
            tables.append(TableStats(t, int(rows), size))
        free = db.execute("PRAGMA freelist_count").fetchone()[0] * page_size
    finally:
        db.close()
    wal = path + "-wal"
    return StoreStats(
        store=path,
        tables=tables,
        bytes=os.path.getsize(path),
        free_bytes=int(free),
        wal_bytes=os.path.getsize(wal) if os.path.exists(wal) else 0,
    )


#: PostgreSQL's view of Warden's tables: rows, dead rows, sizes, autovacuum; and the server's settings.
PG_TABLES = """
    SELECT c.relname, COALESCE(s.n_live_tup, 0), COALESCE(s.n_dead_tup, 0), pg_total_relation_size(c.oid),
           EXTRACT(EPOCH FROM GREATEST(s.last_autovacuum, s.last_vacuum)), c.reloptions
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
    WHERE c.relkind = 'r' AND n.nspname = current_schema() AND c.relname = ANY($1::text[])
    ORDER BY c.relname
"""
PG_SETTINGS = (
    "SELECT current_setting('autovacuum'), current_setting('track_counts'), pg_database_size(current_database())"
)


def table_autovacuum(reloptions: list[str] | None) -> bool:
    """Whether a table's storage parameters leave autovacuum on for it."""
    for option in reloptions or ():
        key, _, value = option.partition("=")
        if key.strip().lower() == "autovacuum_enabled" and value.strip().lower() in _OFF:
            return False
    return True


def vacuum_warning(autovacuum: str, track_counts: str, off_tables: list[str]) -> str | None:
    """The warning to log when PostgreSQL's autovacuum will not clean Warden's tables (None when it will)."""
    if autovacuum != "on" or track_counts != "on":
        what = "autovacuum is off" if autovacuum != "on" else "track_counts is off (autovacuum needs it)"
        where = "on this server"
    elif off_tables:
        what, where = "autovacuum is off", "for " + ", ".join(off_tables)
    else:
        return None
    return (
        f"{what} {where}: every approval leaves dead rows in Warden's tables that nothing removes, so the "
        "database grows for good (a few KB per approval); turn it on, or VACUUM the tables yourself "
        "(docs/postgres.md, 'Vacuum'); `warden store stats` shows the dead rows"
    )


async def postgres_stats(dsn: str) -> StoreStats:
    """Rows, dead rows, sizes and autovacuum of Warden's tables in a PostgreSQL database, on a connection of its own."""
    import asyncpg  # only when a PostgreSQL store is asked about

    from storage.postgres import redact

    conn = await asyncpg.connect(dsn, timeout=10)
    try:
        rows = await conn.fetch(PG_TABLES, list(TABLES))
        autovacuum, track_counts, size = await conn.fetchrow(PG_SETTINGS)
    finally:
        await conn.close()
    tables = [
        TableStats(r[0], int(r[1]), int(r[3]), int(r[2]), None if r[4] is None else float(r[4]), table_autovacuum(r[5]))
        for r in rows
    ]
    off = [t.name for t in tables if not t.autovacuum]
    return StoreStats(
        store=redact(dsn),
        tables=tables,
        bytes=int(size),
        autovacuum=autovacuum == "on" and track_counts == "on",
        warning=vacuum_warning(autovacuum, track_counts, off),
    )
