"""The one lock order (``storage.sql_store.LOCK_ORDER``) on PostgreSQL: transactions that take the audit
chain's advisory lock and row locks, run two at a time on two pools, never deadlock.

Each case forces the interleaving that deadlocked before (issue 43): a test connection holds the audit
chain's advisory lock, the first transaction is started and left waiting on a lock, then the second; the
test connection lets go and both must succeed, with PostgreSQL's deadlock counter unchanged (a deadlock
retried by the store would still count there) and the audit chain intact.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg
import pytest

from storage import PostgresStore
from storage.audit import verify as verify_chain
from storage.postgres import _AUDIT_LOCK
from storage.records import AuditRow, Decision, PendingCallRow, RunRow
from tests.pg import fresh_database

Op = Callable[[PostgresStore], Awaitable[Any]]


def _run(rid: str, agent: str = "a") -> RunRow:
    return RunRow(rid, agent, None, None, "suspended", "{}", suspended_at=1000.0)


def _call(rid: str, cid: str = "c") -> PendingCallRow:
    return PendingCallRow(rid, cid, "t", "approval", {"x": 1}, "sha256:x", created_at=1000.0)


def _approve(call: PendingCallRow, run: RunRow) -> Decision:
    return Decision("approved", actor="op")


def _expire(call: PendingCallRow, run: RunRow) -> Decision:
    return Decision("expired", actor="warden-sweep")


async def _waiting(conn: asyncpg.Connection, n: int, pids: set[int]) -> None:
    """Return once ``n`` of the stores' backends wait on a lock (bounded: the test fails, it never hangs)."""
    for _ in range(2000):
        rows = await conn.fetch(
            "SELECT DISTINCT pid FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid() AND pid = ANY($1::int[])",
            list(pids),
        )
        if len(rows) >= n:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"expected {n} transactions waiting on a lock")


async def _backends(conn: asyncpg.Connection) -> set[int]:
    rows = await conn.fetch(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    return {r[0] for r in rows}


async def _deadlocks(conn: asyncpg.Connection) -> int:
    await conn.execute("SELECT pg_stat_clear_snapshot()")
    return int(await conn.fetchval("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"))


async def _settled_deadlocks(conn: asyncpg.Connection, stores: list[PostgresStore]) -> int:
    """The database's deadlock count once the stores' backends have ended (they flush their counts on exit)."""
    for s in stores:
        await s.aclose()
    for _ in range(1000):
        if not await _backends(conn):
            break
        await asyncio.sleep(0.01)
    return await _deadlocks(conn)


class Scene:
    """Two stores (two pools) on one fresh database, and a test connection that can hold the audit lock."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.one, self.two = PostgresStore(dsn), PostgresStore(dsn)
        self.conn: asyncpg.Connection | None = None

    async def race(self, first: Op, second: Op) -> list[Any]:
        """``first`` left waiting behind the held audit lock, then ``second``; both let go at once."""
        assert self.conn is not None
        await self.one.setup()
        await self.two.setup()
        tx = self.conn.transaction()
        await tx.start()
        await self.conn.execute("SELECT pg_advisory_xact_lock($1)", _AUDIT_LOCK)
        pids = await _backends(self.conn)
        a = asyncio.ensure_future(first(self.one))
        await _waiting(self.conn, 1, pids)
        pids = await _backends(self.conn)
        b = asyncio.ensure_future(second(self.two))
        await _waiting(self.conn, 2, pids)
        await tx.commit()
        return list(await asyncio.gather(a, b, return_exceptions=True))


@pytest.fixture
async def scene() -> AsyncIterator[Scene]:
    async with fresh_database() as dsn:
        s = Scene(dsn)
        s.conn = await asyncpg.connect(dsn)
        try:
            yield s
        finally:
            await s.conn.close()
            await s.one.aclose()
            await s.two.aclose()


async def _lapsed_run(store: PostgresStore, rid: str) -> None:
    """A run whose decider died: approved under a lease that has run out, its tool never started."""
    await store.save_suspended(_run(rid), [_call(rid)])
    got = await store.claim(rid, "c", kinds=("approval",), decide=_approve, owner="dead", lease_seconds=0.01)
    assert got.outcome == "ok" and got.run is not None
    await asyncio.sleep(0.05)


def _claim(rid: str, cid: str = "c", decide: Any = _approve, owner: str = "live") -> Op:
    async def op(store: PostgresStore) -> Any:
        return await store.claim(rid, cid, kinds=("approval",), decide=decide, owner=owner, lease_seconds=60)

    return op


async def _expect_no_deadlock(scene: Scene, results: list[Any]) -> None:
    failures = [r for r in results if isinstance(r, BaseException)]
    details = [f"{r}: {getattr(r.__cause__, 'detail', '')}" for r in failures]
    for d in details:
        print("PostgreSQL said:", d)
    assert not failures, details
    assert verify_chain(await scene.one.audit_log()).ok


async def _none_counted(scene: Scene) -> None:
    """PostgreSQL counted no deadlock in the database (one retried by the store would count too)."""
    assert getattr(scene.one, "transactions_retried", 0) == getattr(scene.two, "transactions_retried", 0) == 0
    assert scene.conn is not None
    assert await _settled_deadlocks(scene.conn, [scene.one, scene.two]) == 0


async def test_recovery_settling_a_run_and_a_claim_on_another_run_of_its_agent(scene):
    """The issue's deadlock: ``settle`` took the audit lock then waited on the agent's ``run_counts`` row
    (its GIVE_BACK), which a concurrent ``warden_claim`` held (its trigger) while it waited on the audit lock."""
    await _lapsed_run(scene.one, "r-settled")
    await scene.one.save_suspended(_run("r-claimed"), [_call("r-claimed")])
    settled, claimed = await scene.race(lambda s: s.settle("r-settled"), _claim("r-claimed"))
    await _expect_no_deadlock(scene, [settled, claimed])
    assert settled == 1 and claimed.outcome == "ok" and claimed.run is not None
    assert [c.status for c in await scene.one.get_calls("r-settled")] == ["pending"]
    assert (await scene.one.get_run("r-settled")).status == "suspended"
    assert [a.decision for a in await scene.one.audit_log("r-settled")] == ["approved", "returned-to-pending"]
    _, total = await scene.one.list_suspended()
    assert total == 1  # r-settled listed again, r-claimed taken: the counter kept by triggers agrees
    await _none_counted(scene)


async def test_a_claim_and_recovery_settling_another_run_of_its_agent(scene):
    """The same two transactions, the claim first."""
    await _lapsed_run(scene.one, "r-settled")
    await scene.one.save_suspended(_run("r-claimed"), [_call("r-claimed")])
    claimed, settled = await scene.race(_claim("r-claimed"), lambda s: s.settle("r-settled"))
    await _expect_no_deadlock(scene, [settled, claimed])
    assert settled == 1 and claimed.outcome == "ok"
    await _none_counted(scene)


async def test_a_withdrawn_decision_and_a_claim_on_another_run_of_its_agent(scene):
    """``release(reset_call=...)`` (a decision given back) writes an audit entry and gives its run back."""
    await scene.one.save_suspended(_run("r-released"), [_call("r-released")])
    got = await scene.one.claim("r-released", "c", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
    assert got.run is not None
    await scene.one.save_suspended(_run("r-claimed"), [_call("r-claimed")])
    released, claimed = await scene.race(lambda s: s.release("r-released", "o", reset_call="c"), _claim("r-claimed"))
    await _expect_no_deadlock(scene, [released, claimed])
    assert claimed.outcome == "ok"
    assert (await scene.one.get_run("r-released")).status == "suspended"
    assert [a.decision for a in await scene.one.audit_log("r-released")] == ["approved", "withdrawn"]
    await _none_counted(scene)


async def test_a_withdrawn_decision_and_a_claim_on_another_call_of_its_run(scene):
    """Two calls of one run: the holder gives one decision back while another operator decides the other."""
    await scene.one.save_suspended(_run("r"), [_call("r", "c1"), _call("r", "c2")])
    got = await scene.one.claim("r", "c1", kinds=("approval",), decide=_approve, owner="o", lease_seconds=60)
    assert got.run is not None
    released, claimed = await scene.race(lambda s: s.release("r", "o", reset_call="c1"), _claim("r", "c2"))
    await _expect_no_deadlock(scene, [released, claimed])
    assert claimed.outcome == "ok"
    assert sorted(a.decision for a in await scene.one.audit_log("r")) == ["approved", "approved", "withdrawn"]
    await _none_counted(scene)


async def test_the_sweep_expiring_a_call_and_recovery_settling_another_run(scene):
    """The deadline sweep's expiry is a claim (``warden_claim``) too."""
    await _lapsed_run(scene.one, "r-settled")
    await scene.one.save_suspended(_run("r-swept"), [_call("r-swept")])
    settled, swept = await scene.race(lambda s: s.settle("r-settled"), _claim("r-swept", decide=_expire))
    await _expect_no_deadlock(scene, [settled, swept])
    assert settled == 1 and swept.outcome == "ok"
    await _none_counted(scene)


async def test_a_vote_and_a_claim_and_recovery(scene):
    """A four-eyes vote is an audit entry alone; it waits behind the others and chains after them."""
    await _lapsed_run(scene.one, "r-settled")
    vote = AuditRow("r-voted", "c", "a", "t", "voted", "sha256:x", None, 1000.0, actor="alice")
    settled, voted = await scene.race(lambda s: s.settle("r-settled"), lambda s: s.append_audit(vote))
    await _expect_no_deadlock(scene, [settled, voted])
    assert settled == 1 and [e.decision for e in voted] == ["voted"]
    await _none_counted(scene)


async def test_a_transaction_the_server_rolls_back_in_a_deadlock_is_run_again_and_audited_once(scene):
    """Where a deadlock can still happen (here with a connection outside Warden that locks against the order),
    the store runs the rolled-back transaction again instead of failing: one decision, one audit entry."""
    assert scene.conn is not None
    await scene.one.save_suspended(_run("r"), [_call("r")])
    tx = scene.conn.transaction()
    await tx.start()
    await scene.conn.execute("SET LOCAL deadlock_timeout = '60s'")  # the store's backend is the one to notice
    await scene.conn.execute("UPDATE run_counts SET suspended = suspended WHERE agent_id = 'a'")
    pids = await _backends(scene.conn)
    claimed = asyncio.ensure_future(_claim("r")(scene.one))
    await _waiting(scene.conn, 1, pids)  # warden_claim: the run's row taken, waiting on the agent's count
    await scene.conn.execute("SELECT 1 FROM runs WHERE run_id = 'r' FOR UPDATE")  # a cycle: the server breaks it
    await tx.rollback()
    result = await claimed
    assert result.outcome == "ok" and result.run is not None
    assert scene.one.transactions_retried == 1
    assert [a.decision for a in await scene.one.audit_log("r")] == ["approved"]
    assert verify_chain(await scene.one.audit_log()).ok
    assert (await scene.one.list_suspended())[1] == 0
    assert await _settled_deadlocks(scene.conn, [scene.one, scene.two]) == 1
