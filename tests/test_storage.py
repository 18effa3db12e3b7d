"""SQLite specifics: schema file, query plans, WAL, the inline path, lifecycle.

Behaviour every store shares is in tests/test_store_conformance.py (memory, SQLite, PostgreSQL).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agent_core import Agent, CorruptSnapshot, Runtime, SnapshotNotFound
from storage import SchemaTooNew, SqliteStore, StoreUnavailable
from storage.records import PendingCallRow, RunRow
from storage.sql_common import SCHEMA_VERSION
from tests.helpers import calls_then, echo_results, recording_tool

ROOT = Path(__file__).resolve().parent.parent


def run_row(i: int, *, agent="a", thread=None, resource=None, at=None) -> RunRow:
    return RunRow(
        run_id=f"run-{i:06d}",
        agent_id=agent,
        thread_id=thread,
        resource_id=resource,
        status="suspended",
        snapshot="{}",
        suspended_at=at if at is not None else 1000.0 + i,
    )


def call_row(i: int, cid="c", kind="approval") -> PendingCallRow:
    return PendingCallRow(
        run_id=f"run-{i:06d}",
        tool_call_id=cid,
        tool_name="t",
        kind=kind,
        args={"i": i},
        fingerprint="sha256:x",
        created_at=1000.0 + i,
    )


async def test_sqlite_schema_is_versioned_and_a_newer_one_is_refused(tmp_path):
    path = tmp_path / "w.db"
    s = SqliteStore(path)
    await s.setup()
    await s.aclose()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM warden_schema").fetchall() == [
            (v,) for v in range(1, SCHEMA_VERSION + 1)
        ]
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.execute("INSERT INTO warden_schema VALUES (99)")
    with pytest.raises(SchemaTooNew) as err:
        await SqliteStore(path).setup()
    assert "99" in str(err.value)


async def test_an_sqlite_too_old_for_the_stores_sql_is_a_typed_error_before_any_file_is_made(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 34, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.34.1")
    path = tmp_path / "w.db"
    with pytest.raises(StoreUnavailable) as err:
        await SqliteStore(path).setup()
    assert "3.35.0 or newer" in err.value.message and "3.34.1" in err.value.message
    assert err.value.code == "STORAGE_UNAVAILABLE" and not path.exists()


async def test_sqlite_schema_3_audit_entries_upgrade_to_the_chain_unsealed(tmp_path):
    """A database at schema 3 (operator: ``detail``) gains the hash chain as version 4; old entries stay readable."""
    from storage.audit import verify as verify_chain
    from storage.records import AuditRow
    from storage.sqlite import _MIGRATIONS, _statements

    path = tmp_path / "w.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in (1, 2, 3):
            for statement in _statements(_MIGRATIONS[version]):
                db.execute(statement)
            db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
        db.execute(
            "INSERT INTO audit_log (run_id, tool_call_id, agent_id, tool_name, decision, fingerprint, reason, "
            "actor, decided_at, detail) VALUES ('r', 'c', 'a', 't', 'approved', 'fp', NULL, 'ann', 1.0, ?)",
            ('{"grant_id":"grant_1"}',),
        )
    s = SqliteStore(path)
    await s.setup()
    try:
        [old] = await s.audit_log()
        assert (old.seq, old.hash, old.grant_id, old.actor) == (1, None, "grant_1", "ann")
        [new] = await s.append_audit(AuditRow("r", "c2", "a", "t", "declined", "fp", None, 2.0, "bob"))
        assert new.seq == 2 and new.prev_hash is None and new.hash is not None
        report = verify_chain(await s.audit_log())
        assert report.ok and (report.checked, report.unsealed) == (1, 1)
    finally:
        await s.aclose()


def test_listing_queries_use_indexes_not_scans(tmp_path):
    path = tmp_path / "w.db"
    import asyncio

    asyncio.run(SqliteStore(path).setup())
    with sqlite3.connect(path) as db:
        for where in (
            "status = 'suspended'",
            "status = 'suspended' AND thread_id = 't'",
            "status = 'suspended' AND agent_id = 'a'",
            "status = 'suspended' AND resource_id = 'r'",
        ):
            plan = " ".join(
                r[-1]
                for r in db.execute(
                    f"EXPLAIN QUERY PLAN SELECT run_id FROM runs WHERE {where} ORDER BY suspended_at DESC LIMIT 50"
                )
            )
            assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
            assert "SCAN runs" not in plan.replace("USING", "") or "INDEX" in plan


async def test_sqlite_schema_6_gains_the_thread_index_and_keeps_its_rows(tmp_path):
    from storage.sqlite import _MIGRATIONS, _statements

    path = tmp_path / "w.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in range(1, 7):
            for statement in _statements(_MIGRATIONS[version]):
                db.execute(statement)
            db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
        db.execute(
            "INSERT INTO runs (run_id, agent_id, thread_id, status, snapshot, created_at, suspended_at, updated_at) "
            "VALUES ('r1', 'a', 't1', 'suspended', '{}', 1, 1, 1)"
        )
        db.execute(
            "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
            "agent_path, seq, created_at) VALUES ('r1', 'c1', 'd', 'approval', 'pending', 'fp', '{}', '[]', 0, 1)"
        )
    s = SqliteStore(path)
    try:
        assert await s.thread_call_ids("t1") == {"c1"}
    finally:
        await s.aclose()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT MAX(version) FROM warden_schema").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs_in_thread'").fetchone() == (1,)


def test_a_threads_call_ids_are_read_by_index(tmp_path):
    """``thread_call_ids`` (every advance of a run in a thread) seeks ``runs_in_thread``, then the calls' key."""
    import asyncio

    from storage.sql_common import THREAD_CALL_IDS, sqlite_text

    path = tmp_path / "w.db"
    asyncio.run(SqliteStore(path).setup())
    with sqlite3.connect(path) as db:
        plan = " | ".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN " + sqlite_text(THREAD_CALL_IDS), ("t",)))
    assert "USING INDEX runs_in_thread (thread_id=?)" in plan, plan
    assert "SCAN" not in plan, plan


async def test_corrupt_snapshot_is_a_typed_error_and_listing_survives(tmp_path):
    path = tmp_path / "w.db"
    log: list = []
    agent = Agent(id="a", model=calls_then([("d", {"id": "1"}, "c")], echo_results()), tools={"d": recording_tool(log)})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path)) as runtime:
        first = await agent.generate("x")
        second = await agent.generate("y")
        with sqlite3.connect(path) as db:
            db.execute("UPDATE runs SET snapshot = '{not json' WHERE run_id = ?", (first.run_id,))
        listed = await runtime.list_suspended_runs()
        assert listed.total == 2
        with pytest.raises(CorruptSnapshot) as err:
            await agent.approve_tool_call(run_id=first.run_id)
        assert first.run_id in str(err.value) and str(path) in str(err.value)
        calls = await runtime.store.get_calls(first.run_id)
        assert calls[0].status == "pending", "a corrupt snapshot changes nothing"
        ok = await agent.approve_tool_call_generate(run_id=second.run_id)
        assert ok.finish_reason == "stop" and log == ["1"]


async def test_snapshot_is_durable_before_the_approval_chunk_and_deleted_at_the_end(tmp_path):
    path = tmp_path / "w.db"
    agent = Agent(id="a", model=calls_then([("d", {"id": "1"}, "c")], echo_results()), tools={"d": recording_tool([])})
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path)) as runtime:
        stream = await agent.stream("x")
        async for chunk in stream.full_stream:
            if chunk.type == "tool-call-approval":
                with sqlite3.connect(path) as db:  # another connection sees it already
                    assert db.execute("SELECT status FROM runs WHERE run_id = ?", (stream.run_id,)).fetchone() == (
                        "suspended",
                    )
        done = await agent.approve_tool_call(run_id=stream.run_id)
        await done.wait()
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)
            assert db.execute("SELECT COUNT(*) FROM pending_calls").fetchone() == (0,)
            assert db.execute("SELECT COUNT(*) FROM audit_log").fetchone() == (1,)
        with pytest.raises(SnapshotNotFound):
            await runtime.get_suspended_run(stream.run_id)


async def test_a_run_that_never_suspends_writes_no_snapshot(tmp_path):
    path = tmp_path / "w.db"
    agent = Agent(
        id="a",
        model=calls_then([("d", {"id": "1"}, "c")], echo_results()),
        tools={"d": recording_tool([], require_approval=False)},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(path)):
        assert (await agent.generate("x")).finish_reason == "stop"
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


def test_an_unclosed_store_does_not_keep_the_process_alive(tmp_path):
    code = textwrap.dedent(f"""
        import asyncio
        from storage import SqliteStore
        async def main():
            s = SqliteStore({str(tmp_path / "w.db")!r})
            await s.setup()
            await s.list_suspended()
        asyncio.run(main())
        print("exited")
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == "exited", out.stderr
    assert "Traceback" not in out.stderr


async def test_a_held_write_lock_is_waited_for_off_the_event_loop(tmp_path):
    import asyncio
    import threading

    path = tmp_path / "w.db"
    store = SqliteStore(path)
    await store.setup()
    assert store._inline_db is not None, "NORMAL runs short transactions inline"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    released = threading.Event()

    def release_later():
        time.sleep(0.3)
        other.execute("COMMIT")
        released.set()

    threading.Thread(target=release_later, daemon=True).start()
    ticks = 0

    async def ticker():
        nonlocal ticks
        while not released.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    tick_task = asyncio.ensure_future(ticker())
    await store.save_suspended(run_row(1), [call_row(1)])
    await tick_task
    assert released.is_set() and ticks >= 10, "the loop kept running while the store waited for the lock"
    assert (await store.get_run("run-000001")).status == "suspended"
    await store.aclose()
    other.close()


async def test_the_wal_starts_over_under_a_steady_stream_of_inline_writes(tmp_path, monkeypatch):
    """Passive checkpoints beside continuous inline commits never let SQLite rewind the WAL (it grew
    by every commit's pages); past ``WAL_RESTART_FRAMES`` a checkpoint holds the writes back once."""
    import asyncio
    import os

    import storage.sqlite

    monkeypatch.setattr(storage.sqlite, "WAL_RESTART_FRAMES", 512)
    path = tmp_path / "w.db"
    store = SqliteStore(path)
    sizes = []
    try:
        for i in range(6000):
            run = run_row(i)
            run.snapshot = "x" * 1500
            await store.save_suspended(run, [call_row(i)])
            await store.finish_run(run.run_id, None)
            await asyncio.sleep(0)  # an event loop that turns, as a server's does
            if i % 1000 == 999:
                sizes.append(os.path.getsize(str(path) + "-wal"))
        assert await store.get_run("run-005999") is None
    finally:
        await store.aclose()
    # 12,000 commits of several pages each: over 100 MB of WAL if it never started over
    assert max(sizes) < 32 * 2**20, sizes
    assert sizes[-1] <= sizes[2], sizes  # bounded, not growing


async def test_the_wal_file_is_cut_back_once_a_burst_is_checkpointed(tmp_path, monkeypatch):
    """A burst of large commits grows the WAL file far past its usual size; once SQLite starts the WAL
    over, ``journal_size_limit`` cuts the file back (without it the file kept its largest size for good)."""
    import asyncio
    import os

    import storage.sqlite

    monkeypatch.setattr(storage.sqlite, "JOURNAL_SIZE_LIMIT", 2 * 2**20)
    monkeypatch.setattr(storage.sqlite, "WAL_RESTART_FRAMES", 256)
    path = tmp_path / "w.db"
    wal = str(path) + "-wal"
    store = SqliteStore(path)
    try:
        for i in range(12):  # ~12 MB in a dozen commits: no checkpoint among them (one every 256 commits)
            run = run_row(i)
            run.snapshot = "x" * 2**20
            await store.save_suspended(run, [call_row(i)])
        burst = os.path.getsize(wal)
        assert burst > 10 * 2**20
        for i in range(12):
            await store.finish_run(run_row(i).run_id, None)
        for i in range(100, 1300):  # small commits: checkpoints, the WAL started over, its file cut
            await store.save_suspended(run_row(i), [call_row(i)])
            await store.finish_run(run_row(i).run_id, None)
            await asyncio.sleep(0)
        after = os.path.getsize(wal)
    finally:
        await store.aclose()
    # cut back to the limit, then grown again by the small commits since the last restart alone
    assert after < 4 * 2**20 and burst > 3 * after, (burst, after)


async def test_full_synchronous_never_runs_inline(tmp_path):
    store = SqliteStore(tmp_path / "w.db", synchronous="FULL")
    await store.setup()
    assert store._inline_db is None
    with sqlite3.connect(tmp_path / "w.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    await store.aclose()


def test_hash_template_cuts_the_exact_canonical_json_entry_hash_covers():
    """PostgreSQL splices prev_hash and seq into these bytes and hashes them: they must be entry_hash's input."""
    import hashlib
    import json

    from storage.audit import entry_hash, hash_template
    from storage.records import AuditRow

    for reason, actor, detail, prev in [
        (None, None, None, None),
        ('é "q" \\ \x01 \u2028', "ann", {"z": [1.5, None], "a": {"ü": True}}, "sha256:" + "ab" * 32),
        ("", "", {}, "sha256:00"),
    ]:
        row = AuditRow("r", "c", "agent", "tool", "approved", "sha256:x", reason, 1764559131.123456, actor, detail)
        row.seq, row.prev_hash = 42, prev
        pre, mid, post = hash_template(row)
        spliced = pre + json.dumps(prev).encode() + mid + b"42" + post
        assert "sha256:" + hashlib.sha256(spliced).hexdigest() == entry_hash(row)


async def test_sqlite_schema_4_gains_the_picker_indexes_and_keeps_its_pending_runs(tmp_path):
    """A database at schema 4 migrates on (version 5's picker indexes, one since version 8); its runs stay listed."""
    from storage.sqlite import _MIGRATIONS, _statements

    path = tmp_path / "w.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in (1, 2, 3, 4):
            for statement in _statements(_MIGRATIONS[version]):
                db.execute(statement)
            db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
        db.execute(
            "INSERT INTO runs (run_id, agent_id, status, snapshot, created_at, suspended_at, updated_at) "
            "VALUES ('r1', 'mailer', 'suspended', '{}', 1, 1, 1)"
        )
        db.execute(
            "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
            "agent_path, seq, created_at) VALUES ('r1', 'c1', 'send_email', 'approval', 'pending', 'fp', "
            "'{\"to\":\"ana\"}', '[]', 0, 1)"
        )
    s = SqliteStore(path)
    try:
        rows, total = await s.list_suspended(tool_name="send_email", query="ana")
        assert total == 1 and rows[0].calls[0].tool_call_id == "c1"
        assert await s.count_suspended_by_kind() == {"approval": 1, "input": 0}
    finally:
        await s.aclose()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT MAX(version) FROM warden_schema").fetchone()[0] == SCHEMA_VERSION
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "pending_calls_open" in names and not {"pending_calls_by_tool", "pending_calls_by_kind"} & names
        for cond in ("c.tool_name = 'send_email'", "c.kind IN ('suspend')"):
            plan = " ".join(
                r[-1]
                for r in db.execute(
                    "EXPLAIN QUERY PLAN SELECT run_id FROM runs WHERE status = 'suspended' AND EXISTS "
                    f"(SELECT 1 FROM pending_calls c WHERE c.run_id = runs.run_id AND c.status = 'pending' AND {cond})"
                )
            )
            assert "USING" in plan and "SCAN c" not in plan, plan


async def test_sqlite_schema_7_keys_the_audit_by_seq_and_its_chain_still_verifies(tmp_path):
    """Version 8 rebuilds ``audit_log`` keyed by ``seq`` (and merges the picker's indexes): every
    entry keeps its bytes, the old chain verifies, new entries link to it, rows stay listed."""
    from storage.audit import verify as verify_chain
    from storage.records import AuditRow
    from storage.sqlite import _MIGRATIONS, _statements

    path = tmp_path / "w.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in range(1, 4):
            for statement in _statements(_MIGRATIONS[version]):
                db.execute(statement)
            db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
        db.execute(  # written before the chain: unsealed
            "INSERT INTO audit_log (run_id, tool_call_id, agent_id, tool_name, decision, fingerprint, reason, "
            "actor, decided_at) VALUES ('r0', 'c0', 'a', 't', 'declined', 'fp', NULL, 'ann', 1.0)"
        )
        for version in range(4, 8):
            for statement in _statements(_MIGRATIONS[version]):
                db.execute(statement)
            db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
        db.execute(
            "INSERT INTO runs (run_id, agent_id, status, snapshot, created_at, suspended_at, updated_at) "
            "VALUES ('r1', 'mailer', 'suspended', '{}', 1, 1, 1)"
        )
        db.execute(
            "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
            "agent_path, seq, created_at) VALUES ('r1', 'c1', 'send_email', 'suspend', 'pending', 'fp', '{}', "
            "'[]', 0, 1)"
        )
    from storage.audit import seal, to_db
    from storage.sql_common import INSERT_AUDIT, sqlite_text

    sealed = seal(
        [
            AuditRow("r1", "c1", "mailer", "send_email", "approved", "fp", "ok", 2.5, "bob", {"grant_id": "g"}),
            AuditRow("r1", "c2", "mailer", "send_email", "declined", "fp", "é", 3.0),
        ],
        1,
        None,
    )
    with sqlite3.connect(path) as db:  # sealed entries as version 7 stored them (an id beside seq)
        db.executemany(sqlite_text(INSERT_AUDIT), [to_db(r) for r in sealed])
        before = db.execute(
            "SELECT seq, run_id, decided_at, detail, prev_hash, hash FROM audit_log ORDER BY seq"
        ).fetchall()
    assert [r[0] for r in before] == [1, 2, 3]
    s = SqliteStore(path)
    try:
        log = await s.audit_log()
        assert [(e.seq, e.hash) for e in log] == [(1, None), (2, sealed[0].hash), (3, sealed[1].hash)]
        report = verify_chain(log)
        assert report.ok and (report.checked, report.unsealed) == (2, 1)
        [new] = await s.append_audit(AuditRow("r1", "c3", "mailer", "t", "approved", "fp", None, 4.0))
        assert (new.seq, new.prev_hash) == (4, sealed[1].hash)
        assert verify_chain(await s.audit_log()).ok
        assert [e.seq for e in await s.audit_log(agent_id="mailer", after=2)] == [3, 4]
        rows, total = await s.list_suspended(tool_name="send_email", kind="input")
        assert total == 1 and rows[0].calls[0].tool_call_id == "c1"
        assert await s.count_suspended_by_kind() == {"approval": 0, "input": 1}
        assert await s.count_suspended_by_kind(tool_name="other") == {"approval": 0, "input": 0}
    finally:
        await s.aclose()
    with sqlite3.connect(path) as db:
        after = db.execute(
            "SELECT seq, run_id, decided_at, detail, prev_hash, hash FROM audit_log WHERE seq <= 3"
        ).fetchall()
        assert after == before
        assert db.execute("SELECT MAX(version) FROM warden_schema").fetchone()[0] == SCHEMA_VERSION
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"pending_calls_open", "audit_by_call", "audit_by_agent"} <= names
        assert not {"pending_calls_by_tool", "pending_calls_by_kind", "audit_by_seq"} & names
        assert db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'runs_calls_delete'"
        ).fetchone()
        cols = [r[1] for r in db.execute("PRAGMA table_info(audit_log)")]
        assert cols[0] == "seq" and "id" not in cols
        plan = " ".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN SELECT hash FROM audit_log WHERE seq = 2"))
        assert "INTEGER PRIMARY KEY" in plan, plan


def test_overdue_calls_and_the_headers_counts_are_read_by_index(tmp_path):
    """The deadline sweep reads ``pending_calls_overdue`` (not every pending approval, sorted); the
    counts by kind seek a tool in ``pending_calls_open`` and need no sort to group."""
    import asyncio

    from storage.listing import SuspendedFilter, count_sql
    from storage.sql_common import LIST_OVERDUE, mark, sqlite_text

    path = tmp_path / "w.db"
    asyncio.run(SqliteStore(path).setup())
    with sqlite3.connect(path) as db:

        def plan(sql: str, params: list) -> str:
            return " | ".join(r[-1] for r in db.execute("EXPLAIN QUERY PLAN " + sqlite_text(sql), params))

        overdue = plan(LIST_OVERDUE, [1.0, 10])
        assert "pending_calls_overdue" in overdue and "TEMP B-TREE" not in overdue, overdue
        params: list = []
        by_tool = plan(count_sql(SuspendedFilter(tool_name="t"), mark, params), params)
        assert "pending_calls_open (tool_name=?)" in by_tool and "TEMP B-TREE" not in by_tool, by_tool
        params = []
        every = plan(count_sql(SuspendedFilter(), mark, params), params)
        assert "COVERING INDEX pending_calls_open" in every or "INDEX pending_calls_open" in every, every
        assert "TEMP B-TREE" not in every, every


async def test_postgres_schema_7_merges_the_picker_indexes_and_keeps_its_rows() -> None:
    """PostgreSQL's version 8: the pending-only indexes by tool and by kind become ``pending_calls_open``;
    a call stored at version 7 stays listed and counted."""
    import asyncpg

    from storage import PostgresStore
    from storage.postgres import _MIGRATIONS
    from tests.pg import fresh_database

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
            for version in range(1, 8):
                await conn.execute(_MIGRATIONS[version])
                await conn.execute("INSERT INTO warden_schema (version) VALUES ($1)", version)
            await conn.execute(
                "INSERT INTO runs (run_id, agent_id, status, snapshot, created_at, suspended_at, updated_at) "
                "VALUES ('r1', 'mailer', 'suspended', '{}', 1, 1, 1)"
            )
            await conn.execute(
                "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
                "agent_path, seq, created_at) VALUES ('r1', 'c1', 'send_email', 'suspend', 'pending', 'fp', '{}', "
                "'[]', 0, 1)"
            )
        finally:
            await conn.close()
        store = PostgresStore(dsn)
        try:
            rows, total = await store.list_suspended(tool_name="send_email", kind="input")
            assert total == 1 and rows[0].calls[0].tool_call_id == "c1"
            assert await store.count_suspended_by_kind(tool_name="send_email") == {"approval": 0, "input": 1}
        finally:
            await store.aclose()
        conn = await asyncpg.connect(dsn)
        try:
            names = {
                r[0] for r in await conn.fetch("SELECT indexname FROM pg_indexes WHERE tablename = 'pending_calls'")
            }
            assert "pending_calls_open" in names and not {"pending_calls_by_tool", "pending_calls_by_kind"} & names
            assert await conn.fetchval("SELECT MAX(version) FROM warden_schema") == SCHEMA_VERSION
        finally:
            await conn.close()


async def _approve(store: SqliteStore, call_id: str):
    from storage.records import Decision

    return await store.claim(
        "run-000001",
        call_id,
        kinds=("approval",),
        decide=lambda call, run: Decision("approved"),
        owner="me",
        lease_seconds=60,
    )


async def test_one_statement_writes_run_in_autocommit_and_a_finished_runs_calls_go_with_it(tmp_path):
    """The started mark, a lease renewal and ``finish_run`` are each one statement, without
    BEGIN/COMMIT; the finish's lease check is in its DELETE, and the run's calls go with the run."""
    path = tmp_path / "w.db"
    store = SqliteStore(path)
    try:
        await store.save_suspended(run_row(1), [call_row(1, "c1"), call_row(1, "c2")])
        claimed = await _approve(store, "c1")
        assert claimed.outcome == "ok" and claimed.run is not None
        traced: list[str] = []
        assert store._inline_db is not None
        store._inline_db.set_trace_callback(traced.append)
        assert await store.mark_started("run-000001", "c1", "me")
        assert await store.renew_lease("run-000001", "me", 30)
        assert not await store.finish_run("run-000001", "someone else")  # not the holder: nothing deleted
        assert len(await store.get_calls("run-000001")) == 2
        assert await store.finish_run("run-000001", "me")
        store._inline_db.set_trace_callback(None)
        assert not [s for s in traced if s.split()[0].upper() in ("BEGIN", "COMMIT")], traced
        assert await store.get_run("run-000001") is None and await store.get_calls("run-000001") == []
        assert await store.finish_run("run-000001", "me"), "a run already gone is finished"
    finally:
        await store.aclose()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM pending_calls").fetchone() == (0,)


async def test_a_one_statement_write_waits_for_a_held_write_lock(tmp_path):
    """An autocommit write that finds the lock held (SQLITE_BUSY inline) is run again on the worker."""
    import threading

    path = tmp_path / "w.db"
    store = SqliteStore(path)
    try:
        await store.save_suspended(run_row(1), [call_row(1)])
        assert (await _approve(store, "c")).outcome == "ok"
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        threading.Timer(0.2, lambda: other.execute("COMMIT")).start()
        assert await store.mark_started("run-000001", "c", "me")
        assert await store.finish_run("run-000001", "me")
        assert await store.get_run("run-000001") is None
        other.close()
    finally:
        await store.aclose()


async def test_a_moved_snapshot_is_run_again_not_reported(tmp_path, monkeypatch):
    """SQLITE_BUSY_SNAPSHOT (a write begun on a snapshot another connection wrote past) changed
    nothing: inline, the script goes to the worker; there, it runs again instead of failing."""
    import storage.sqlite

    store = SqliteStore(tmp_path / "w.db")
    try:
        await store.save_suspended(run_row(1), [call_row(1)])
        real = storage.sqlite._Db.execute
        moved = [2]  # once inline, once on the worker

        def move(sql: str) -> None:
            if sql.startswith("UPDATE pending_calls SET started_at") and moved[0]:
                moved[0] -= 1
                exc = sqlite3.OperationalError("database is locked")
                exc.sqlite_errorcode = 517  # SQLITE_BUSY_SNAPSHOT
                raise exc

        async def execute(self, sql, *args):  # the worker's scripts
            move(sql)
            return await real(self, sql, *args)

        class Cursor:  # the inline path runs a one-statement write on the cursor itself
            def __init__(self, cur):
                self.cur = cur

            def execute(self, sql, args=()):
                move(sql)
                return self.cur.execute(sql, args)

            def __getattr__(self, name):
                return getattr(self.cur, name)

        monkeypatch.setattr(storage.sqlite._Db, "execute", execute)
        assert store._inline is not None
        store._inline.cur = Cursor(store._inline.cur)
        assert (await _approve(store, "c")).outcome == "ok"
        assert await store.mark_started("run-000001", "c", "me")
        assert moved == [0]
        [call] = await store.get_calls("run-000001")
        assert call.started_at is not None
    finally:
        await store.aclose()


def test_a_chain_sealed_before_keeps_its_hashes():
    """The hash written in one expression is the same bytes as before: two entries sealed by the
    earlier serializer (hashes recorded from it) seal to the same hashes and verify."""
    from storage.audit import seal, verify
    from storage.records import AuditRow

    rows = [
        AuditRow("run-1", "c1", "ops", "delete", "approved", "sha256:" + "ab" * 32, None, 1764547200.123456, "ann"),
        AuditRow(
            "run-1",
            "c2",
            "ops",
            "send",
            "edited",
            "sha256:" + "cd" * 32,
            "é ok",
            1764547201.5,
            None,
            {"edited_args": {"to": "bob", "n": [1, 2.5, None]}, "grant_id": "g-1"},
        ),
    ]
    first, second = seal(rows, 41, "sha256:" + "00" * 32)
    assert first.hash == "sha256:74b0bf3b10d7872a64c48791bb56ae438e9742c4f277d6373caeba34986a9a3a"
    assert second.prev_hash == first.hash
    assert second.hash == "sha256:39dfc3a2154879d7d1c9bbf75ec898300f936a81290ffbd7722673321e52b59d"
    assert rows[0].hash is None, "seal leaves the caller's rows as they were"
    head = AuditRow("run-0", "c0", "ops", "t", "approved", "fp", None, 1.0)
    [head] = seal([head], 0, None)
    chain = seal([head], 0, None) + seal(rows, 1, head.hash)
    assert verify(chain).ok


def test_none_binds_as_null_through_the_stores_adapter_and_an_applications_own_adapter_stays():
    """``storage.sqlite`` adapts ``None`` by a C call that returns it (no AttributeErrors raised
    per NULL): it still binds as NULL; an adapter the application registered first is kept."""
    import storage.sqlite

    key = (type(None), sqlite3.PrepareProtocol)
    assert sqlite3.adapters[key](None) is None
    with sqlite3.connect(":memory:") as db:
        assert db.execute("SELECT ?1 IS NULL, typeof(?1)", (None,)).fetchone() == (1, "null")
    mine = sqlite3.adapters.pop(key)
    try:
        sqlite3.register_adapter(type(None), lambda _: "mine")
        storage.sqlite._adapt_none()  # as the module does when imported
        with sqlite3.connect(":memory:") as db:
            assert db.execute("SELECT ?1", (None,)).fetchone() == ("mine",)
    finally:
        sqlite3.adapters[key] = mine
