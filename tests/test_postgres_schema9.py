"""PostgreSQL schema version 9 (docs/postgres.md): a database of version 7 with rows upgrades and keeps
working, the claim's compare-and-set undoes its lease when the call moved, ``run_counts`` follows status."""

from __future__ import annotations

import asyncpg
import pytest

from storage import PostgresStore
from storage import sql_common as q
from storage.audit import seal, to_db
from storage.audit import verify as verify_chain
from storage.errors import StoreClosed
from storage.records import AuditRow, Decision, PendingCallRow, RunRow
from storage.sql_common import SCHEMA_VERSION
from tests.pg import fresh_database


def _run(i: int) -> RunRow:
    return RunRow(run_id=f"run-{i}", agent_id="a", thread_id=None, resource_id=None, status="suspended", snapshot="{}")


def _call(i: int) -> PendingCallRow:
    return PendingCallRow(
        run_id=f"run-{i}",
        tool_call_id="c",
        tool_name="t",
        kind="approval",
        args={"i": i},
        fingerprint="sha256:x",
        created_at=1000.0 + i,
    )


def _approve(call, run) -> Decision:
    return Decision("approved", actor="op")


async def test_a_schema_7_database_with_rows_upgrades_and_its_chain_and_counts_continue() -> None:
    from storage.postgres import _MIGRATIONS

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
            for version in range(1, 8):  # what a Warden of schema 7 left behind
                await conn.execute(_MIGRATIONS[version])
                await conn.execute("INSERT INTO warden_schema (version) VALUES ($1)", version)
            await conn.execute(
                "INSERT INTO runs (run_id, agent_id, status, snapshot, created_at, suspended_at, updated_at) "
                "VALUES ('run-1', 'a', 'suspended', '{}', 1, 1, 1)"
            )
            await conn.execute(
                "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
                "agent_path, seq, created_at) VALUES ('run-1', 'c', 't', 'approval', 'pending', 'sha256:x', "
                "'{\"i\":1}', '[]', 0, 1)"
            )
            old = AuditRow("run-0", "c", "a", "t", "approved", "sha256:x", None, 1.0, actor="op")
            await conn.execute(q.INSERT_AUDIT, *to_db(seal([old], 0, None)[0]))
            store = PostgresStore(dsn)
            try:
                assert (await store.list_suspended())[1] == 1
                got = await store.claim("run-1", "c", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
                assert got.outcome == "ok" and got.run is not None and got.run.lease_owner == "o"
                assert (await store.list_suspended())[1] == 0
                log = await store.audit_log()
                assert [e.seq for e in log] == [1, 2] and verify_chain(log).ok and log[1].prev_hash == log[0].hash
                assert await store.checkpoint("run-1", "o", '{"step":2}', ["c"])
                assert await store.finish_run("run-1", "o")
            finally:
                await store.aclose()
            assert await conn.fetchval("SELECT MAX(version) FROM warden_schema") == SCHEMA_VERSION
            columns = {
                r[0]
                for r in await conn.fetch(
                    "SELECT attname FROM pg_attribute WHERE attrelid = 'audit_log'::regclass "
                    "AND attnum > 0 AND NOT attisdropped"
                )
            }
            assert "id" not in columns and "seq" in columns
            assert await conn.fetchval("SELECT suspended FROM run_counts WHERE agent_id = 'a'") == 0
        finally:
            await conn.close()


async def test_a_claim_whose_call_moved_after_the_runs_check_takes_no_lease_and_reads_again() -> None:
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        try:
            await store.save_suspended(_run(1), [_call(1)])
            conn = await asyncpg.connect(dsn)
            try:
                # the run as read (unchanged), the call as it was not: a stale status
                args = ["run-1", "c", "suspended", 1, None, None, "approved", None, 0.0, "approved", 0.0, "op"]
                args += [None, None, "a", "t", "sha256:x", 2000.0, "approved", None, "op", None, b"{", b",", b"}"]
                with pytest.raises(asyncpg.PostgresError) as err:
                    await conn.fetchval(
                        f"SELECT warden_claim1({', '.join(f'${i}' for i in range(1, 28))})", *args, "o", 9e9
                    )
                assert err.value.sqlstate == "WDN01"
                row = await conn.fetchrow("SELECT status, lease_owner FROM runs WHERE run_id = 'run-1'")
                assert tuple(row) == ("suspended", None)  # the lease the function took is undone
                assert await conn.fetchval("SELECT count(*) FROM audit_log") == 0
            finally:
                await conn.close()
            got = await store.claim("run-1", "c", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
            assert got.outcome == "ok"
        finally:
            await store.aclose()


async def test_run_counts_follow_status_through_saves_checkpoints_and_failures() -> None:
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        try:
            for i in (1, 2):
                await store.save_suspended(_run(i), [_call(i)])
            assert (await store.list_suspended())[1] == 2
            got = await store.claim("run-1", "c", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
            assert got.outcome == "ok"
            assert await store.checkpoint("run-1", "o", "{}", ["c"])
            assert (await store.list_suspended())[1] == 1
            await store.save_suspended(_run(1), [_call(1)], owner="o")
            assert (await store.list_suspended())[1] == 2
            assert await store.fail_run("run-2", None, "{}", "boom")
            assert (await store.list_suspended())[1] == 1
        finally:
            await store.aclose()


@pytest.mark.parametrize("direct", [True, False])
async def test_the_cycle_runs_on_prepared_statements_bound_directly_or_through_asyncpgs_public_methods(
    direct: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from storage.postgres import _Conn

    monkeypatch.setattr(_Conn, "direct", direct)
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        try:
            await store.save_suspended(_run(1), [_call(1)])
            got = await store.claim("run-1", "c", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
            assert got.outcome == "ok"
            assert await store.mark_started("run-1", "c", "o")
            assert not await store.mark_started("run-1", "c", "someone-else")
            assert await store.checkpoint("run-1", "o", "{}", ["c"])
            assert not await store.checkpoint("run-1", "someone-else", "{}", [])
            assert await store.list_grants(0.0, tool_name="t") == []
            assert not await store.finish_run("run-1", "someone-else")
            assert await store.finish_run("run-1", "o")
            assert await store.finish_run("run-1", "o")  # gone: nothing left to finish
            assert _Conn.direct is direct
        finally:
            await store.aclose()


async def test_a_closed_connection_is_a_typed_error_and_keeps_the_direct_binding() -> None:
    from storage.postgres import _Conn

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn, connection_class=_Conn)
        assert await conn.value("SELECT 1") == 1
        conn.terminate()
        with pytest.raises(asyncpg.InterfaceError, match="closed"):
            await conn.value("SELECT 1")
        assert _Conn.direct  # a closed connection says nothing about asyncpg's protocol
        store = PostgresStore(dsn)
        try:
            await store.save_suspended(_run(1), [_call(1)])
            pool = await store._connection_pool()
            for idle in list(pool._idle):
                idle.terminate()
            assert await store.list_grants(0.0, tool_name="t") == []  # a new connection in the freed slot
        finally:
            await store.aclose()


@pytest.mark.parametrize("direct", [True, False])
async def test_a_statement_whose_table_changed_after_it_was_prepared_is_prepared_again(
    direct: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from storage.postgres import _Conn

    monkeypatch.setattr(_Conn, "direct", direct)
    again = _Conn._prepared_again
    retried: list[str] = []

    async def counted(self: _Conn, sql: str, *args: object) -> list[object]:
        retried.append(sql)
        return await again(self, sql, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(_Conn, "_prepared_again", counted)
    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn, connection_class=_Conn)
        other = await asyncpg.connect(dsn)
        try:
            await conn.execute("CREATE TABLE t (a INTEGER)")
            assert await conn.value("SELECT * FROM t") is None  # prepared on this connection
            await other.execute("ALTER TABLE t ADD COLUMN b INTEGER; INSERT INTO t VALUES (1, 2)")
            assert await conn.value("SELECT * FROM t") == 1  # its result type changed: prepared again
            assert await conn.rows("SELECT * FROM t") == [(1, 2)]
            await other.execute("ALTER TABLE t DROP COLUMN b")
            assert await conn.rows("SELECT * FROM t") == [(1,)]
            assert await conn.value("SELECT * FROM t") == 1
            assert len(retried) == 2  # the value after the column was added, the rows after it was dropped
            assert _Conn.direct is direct
        finally:
            await other.close()
            await conn.close()


async def test_a_one_statement_call_on_a_prepared_statement_fails_with_the_stores_typed_errors() -> None:
    from storage.errors import UnstorableText

    async with fresh_database() as dsn:
        store = PostgresStore(dsn, max_size=1)
        try:
            await store.save_suspended(_run(1), [_call(1)])
            assert not await store.mark_started("run-1", "c", "o")  # prepared now: the next calls bind it
            with pytest.raises(UnstorableText):
                await store.mark_started("run-\ud800", "c", "o")  # refused in this process
            with pytest.raises(UnstorableText):
                await store.mark_started("run-\x00", "c", "o")  # refused by the server
            assert not await store.checkpoint("run-1", "o", "{}", [])
            got = await store.claim("run-1", "c", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
            assert got.outcome == "ok"
            assert await store.mark_started("run-1", "c", "o")  # the connection is usable after the errors
            assert await store.finish_run("run-1", "o")
        finally:
            await store.aclose()
        with pytest.raises(StoreClosed):
            await store.mark_started("run-1", "c", "o")


async def test_a_run_saved_twice_and_the_grant_lookup_on_prepared_statements() -> None:
    from storage.errors import StorageError
    from storage.records import GrantRow

    async with fresh_database() as dsn:
        store = PostgresStore(dsn, max_size=1)
        try:
            await store.save_suspended(_run(1), [_call(1)])
            for _ in range(2):  # the second time on the statement prepared by the first
                with pytest.raises(StorageError, match="run 'run-1' already stored"):
                    await store.save_suspended(_run(1), [_call(1)])
            assert await store.list_grants(0.0, tool_name="t") == []
            await store.add_grant(GrantRow(id="g", tool_name="t", scope="agent", agent_id="a", created_at=1.0))
            assert [g.id for g in await store.list_grants(0.0, tool_name="t")] == ["g"]
            assert await store.list_grants(0.0, tool_name="u") == []
            await store.save_suspended(_run(2), [_call(2)])  # the connection is usable after the refusals
            assert (await store.list_suspended())[1] == 2
        finally:
            await store.aclose()


async def test_a_checkpoint_removes_exactly_the_applied_calls_none_one_or_several() -> None:
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        try:
            calls = [
                PendingCallRow(
                    run_id="run-1", tool_call_id=f"c{i}", tool_name="t", kind="approval", args={}, fingerprint="f"
                )
                for i in range(4)
            ]
            await store.save_suspended(_run(1), calls)
            got = await store.claim("run-1", "c0", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
            assert got.outcome == "ok"
            pool = await store._connection_pool()

            async def left() -> list[str]:
                async with pool.acquire() as conn:
                    rows = await conn.fetch("SELECT tool_call_id FROM pending_calls ORDER BY tool_call_id")
                return [r[0] for r in rows]

            assert await store.checkpoint("run-1", "o", "{}", [])
            assert await left() == ["c0", "c1", "c2", "c3"]
            assert await store.checkpoint("run-1", "o", "{}", ["c1"])
            assert await left() == ["c0", "c2", "c3"]
            assert not await store.checkpoint("run-1", "someone-else", "{}", ["c0"])
            assert await left() == ["c0", "c2", "c3"]
            assert await store.checkpoint("run-1", "o", "{}", ["c0", "c3"])
            assert await left() == ["c2"]
        finally:
            await store.aclose()
