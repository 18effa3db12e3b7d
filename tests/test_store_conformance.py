"""One conformance suite: every storage behaviour, on InMemoryStore, SqliteStore and PostgresStore.

Each PostgreSQL test gets a fresh database of its own (tests/pg.py), dropped afterwards.
Backend-specific checks (SQLite's query plans, WAL, the inline path) stay in tests/test_storage.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from storage import (
    InMemoryStore,
    PostgresStore,
    StorageError,
    Store,
    StoreClosed,
    StoreEvent,
    WardenError,
    open_store,
    subscribe,
)
from storage.audit import verify as verify_chain
from storage.records import AuditRow, Decision, PendingCallRow, RunRow
from storage.sql_common import SCHEMA_VERSION
from tests.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent
KINDS = ["memory", "sqlite", "postgres"]


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


def call_row(i: int, cid="c", kind="approval", at=None) -> PendingCallRow:
    return PendingCallRow(
        run_id=f"run-{i:06d}",
        tool_call_id=cid,
        tool_name="t",
        kind=kind,
        args={"i": i},
        fingerprint="sha256:x",
        created_at=at if at is not None else 1000.0 + i,
    )


def approve(call, run) -> Decision:
    return Decision("approved", actor="op")


class Backend:
    """Opens stores of one kind on one database: ``open()`` again gives another connection to the same data."""

    def __init__(self, kind: str, location: str) -> None:
        self.kind, self.location = kind, location
        self._memory: InMemoryStore | None = None
        self.opened: list[Store] = []

    def open(self) -> Store:
        if self.kind == "memory":
            if self._memory is None:
                self._memory = InMemoryStore()
            return self._memory
        store = open_store(self.location)
        self.opened.append(store)
        return store


async def _backend(kind: str, tmp_path: Path) -> AsyncIterator[Backend]:
    if kind == "postgres":
        async with fresh_database() as dsn:
            b = Backend("postgres", dsn)
            yield b
            for s in b.opened:
                await s.aclose()
        return
    b = Backend(kind, "memory:" if kind == "memory" else str(tmp_path / "w.db"))
    yield b
    for s in b.opened:
        await s.aclose()


@pytest.fixture(params=KINDS)
async def backend(request, tmp_path) -> AsyncIterator[Backend]:
    async for b in _backend(request.param, tmp_path):
        yield b


@pytest.fixture(params=["sqlite", "postgres"])
async def shared_backend(request, tmp_path) -> AsyncIterator[Backend]:
    """The stores several OS processes can share."""
    async for b in _backend(request.param, tmp_path):
        yield b


@pytest.fixture
async def store(backend) -> AsyncIterator[Store]:
    s = backend.open()
    yield s
    await s.aclose()


# -- listing ---------------------------------------------------------------------------------------


async def test_listing_filters_pages_and_counts(store):
    for i in range(25):
        await store.save_suspended(
            run_row(i, agent="a" if i % 2 else "b", thread=f"t{i % 3}", resource="u1"),
            [call_row(i), call_row(i, "d", "suspend")],
        )
    rows, total = await store.list_suspended(per_page=10)
    assert total == 25 and [r.run.run_id for r in rows] == [f"run-{i:06d}" for i in range(24, 14, -1)]
    assert [c.tool_call_id for c in rows[0].calls] == ["c", "d"]
    assert rows[0].run.snapshot in ("", "{}")
    rows, total = await store.list_suspended(page=2, per_page=10)
    assert total == 25 and len(rows) == 5
    rows, total = await store.list_suspended(agent_id="a", thread_id="t1")
    assert total == len([i for i in range(25) if i % 2 and i % 3 == 1])
    assert all(r.run.agent_id == "a" and r.run.thread_id == "t1" for r in rows)
    _, total = await store.list_suspended(agent_id="a")
    assert total == 12
    _, total = await store.list_suspended(resource_id="nobody")
    assert total == 0


async def test_find_ids_matches_an_exact_prefix_of_run_and_call_ids(store):
    ids = ["abc123-x", "abc124-y", "ABC125-z", "abd000", "ab%_\\q", "ab"]
    for n, rid in enumerate(ids):
        run = RunRow(rid, "a", None, None, "suspended", "{}", suspended_at=1000.0 + n)
        call = PendingCallRow(rid, "call_9f1", "t", "approval", {}, "sha256:x", created_at=1000.0)
        other = PendingCallRow(rid, "call_9f2", "t", "approval", {}, "sha256:x", created_at=1000.0)
        await store.save_suspended(run, [call, other])
    assert await store.find_ids("abc12") == ["abc123-x", "abc124-y"]  # case-sensitive: not ABC125-z
    assert await store.find_ids("abc12", limit=1) == ["abc123-x"]
    assert await store.find_ids("abc123-x") == ["abc123-x"]
    assert await store.find_ids("ab%") == ["ab%_\\q"]  # wildcards are plain characters
    assert await store.find_ids("ab_") == []
    assert await store.find_ids("ab") == sorted(i for i in ids if i.startswith("ab"))
    assert await store.find_ids("zzz") == []
    assert await store.find_ids("call_9f", run_id="abd000") == ["call_9f1", "call_9f2"]
    assert await store.find_ids("call_9f2", run_id="abd000") == ["call_9f2"]
    assert await store.find_ids("call_9f", run_id="nope") == []
    assert await store.find_ids("\U0010ffff") == []
    # a finished run (its rows gone) is still named by its decisions in the audit trail
    await store.append_audit(AuditRow("abc129-done", "c", "a", "t", "approved", "sha256:x", None, 1000.0))
    assert await store.find_ids("abc12") == ["abc123-x", "abc124-y", "abc129-done"]


async def test_postgres_find_ids_is_exact_under_a_collation_that_is_not_code_point_order():
    """ICU en-US sorts "ab-z" after "ab." (punctuation is ignored at first): the prefix range
    is then compared in "C", not in the database's order."""
    import asyncpg

    from tests.pg import ADMIN_DSN, dsn_for

    name = "warden_test_icu_" + __import__("uuid").uuid4().hex[:8]
    admin = await asyncpg.connect(ADMIN_DSN)
    await admin.execute(f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'")
    try:
        store = PostgresStore(dsn_for(name))
        ids = ["ab-z", "ab.", "ab-1", "AB-2", "ab"]
        for n, rid in enumerate(ids):
            await store.save_suspended(RunRow(rid, "a", None, None, "suspended", "{}", suspended_at=1000.0 + n), [])
        assert await store.find_ids("ab-") == ["ab-1", "ab-z"]
        assert store._code_point_order is False  # the "C" comparison was the one used
        assert await store.find_ids("ab") == ["ab", "ab-1", "ab-z", "ab."]
        await store.aclose()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_listing_totals_follow_runs_that_leave_and_come_back(store):
    for i in range(3):
        await store.save_suspended(run_row(i), [call_row(i)])
    claimed = await store.claim("run-000000", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    assert claimed.run is not None
    assert (await store.list_suspended())[1] == 2 and (await store.list_suspended(agent_id="a"))[1] == 2
    await store.save_suspended(run_row(0), [call_row(0, "c2")], owner="o", applied=["c"])
    rows, total = await store.list_suspended(agent_id="a")
    assert total == 3 and [c.tool_call_id for r in rows if r.run.run_id == "run-000000" for c in r.calls] == ["c2"]
    await store.finish_run("run-000001", None)
    await store.fail_run("run-000002", None, "{}", "boom")
    assert (await store.list_suspended())[1] == 1
    failed = await store.get_run("run-000002")
    assert failed.status == "failed" and failed.error == "boom"


async def test_thread_call_ids_are_the_ids_stored_in_the_threads_live_runs(store):
    """Every stored call of the thread's runs, suspended or being applied; not other threads', not failed runs'."""
    await store.save_suspended(run_row(0, thread="t1"), [call_row(0, "a"), call_row(0, "b", "suspend")])
    await store.save_suspended(run_row(1, thread="t1"), [call_row(1, "c")])
    await store.save_suspended(run_row(2, thread="t2"), [call_row(2, "d")])
    await store.save_suspended(run_row(3), [call_row(3, "e")])
    await store.save_suspended(run_row(4, thread="t1"), [call_row(4, "f")])
    assert await store.thread_call_ids("t1") == {"a", "b", "c", "f"}
    assert await store.thread_call_ids("t2") == {"d"}
    assert await store.thread_call_ids("nobody") == set()
    # a decision being applied (lease live, the run not listed): its call's id is still taken
    claimed = await store.claim("run-000001", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    assert claimed.run is not None
    assert await store.thread_call_ids("t1") == {"a", "b", "c", "f"}
    await store.fail_run("run-000004", None, "{}", "boom")  # a failed run is never listed: its ids are free
    assert await store.thread_call_ids("t1") == {"a", "b", "c"}
    assert await store.finish_run("run-000001", "o")
    assert await store.thread_call_ids("t1") == {"a", "b"}
    rows, _ = await store.list_suspended(thread_id="t1")
    assert {c.tool_call_id for r in rows for c in r.calls} == {"a", "b"}


async def test_listing_filters_by_query_tool_kind_and_sorts_in_the_store(store):
    """The picker's work-queue filters: text over agent/thread/tool/arguments, exact tool and kind, sorts."""
    people = ["ana", "bob", "cy"]
    for i in range(12):
        agent = "mailer" if i % 2 else "billing"
        call = PendingCallRow(
            run_id=f"run-{i:06d}",
            tool_call_id="c",
            tool_name="send_email" if i % 3 else "refund",
            kind="approval" if i % 4 else "suspend",
            args={"to": people[i % 3], "note": "50%_off" if i == 7 else "x"},
            fingerprint="sha256:x",
            created_at=1000.0 + i,
        )
        await store.save_suspended(run_row(i, agent=agent, thread=f"th-{i % 5}"), [call])
    ids = lambda rows: [int(r.run.run_id[4:]) for r in rows]  # noqa: E731
    rows, total = await store.list_suspended(query="ANA")
    assert ids(rows) == [9, 6, 3, 0] and total == 4  # arguments, case-insensitive, newest first
    rows, total = await store.list_suspended(query="bob mailer")  # every term must match somewhere
    assert ids(rows) == [7, 1] and total == 2
    rows, total = await store.list_suspended(query="th-2")  # thread
    assert ids(rows) == [7, 2] and total == 2
    rows, _ = await store.list_suspended(query="refund")  # tool name
    assert ids(rows) == [9, 6, 3, 0]
    rows, _ = await store.list_suspended(query="50%_")  # LIKE wildcards are literal
    assert ids(rows) == [7]
    assert (await store.list_suspended(query="5_%"))[1] == 0
    rows, total = await store.list_suspended(tool_name="refund", kind="approval")
    assert ids(rows) == [9, 6, 3] and total == 3
    rows, total = await store.list_suspended(kind="input", per_page=2, page=1)
    assert ids(rows) == [0] and total == 3  # 8, 4 on page 0
    rows, _ = await store.list_suspended(sort="agent", per_page=3)
    assert [r.run.agent_id for r in rows] == ["billing"] * 3 and ids(rows) == [10, 8, 6]
    rows, _ = await store.list_suspended(sort="tool", per_page=5)
    assert ids(rows) == [9, 6, 3, 0, 11]  # refund (newest first), then send_email
    counts = await store.count_suspended_by_kind()
    assert counts == {"approval": 9, "input": 3}
    assert await store.count_suspended_by_kind(agent_id="mailer", query="bob") == {"approval": 2, "input": 0}
    assert await store.count_suspended_by_kind(tool_name="nope") == {"approval": 0, "input": 0}
    with pytest.raises(StorageError):
        await store.list_suspended(sort="size")  # type: ignore[arg-type]


async def test_listing_tool_and_kind_filters_narrow_the_calls_of_a_run(store):
    await store.save_suspended(
        run_row(1),
        [
            call_row(1, "a"),
            PendingCallRow("run-000001", "b", "ask", "suspend", args={}, fingerprint="f", created_at=1.0, seq=1),
        ],
    )
    [row], total = await store.list_suspended(kind="input")
    assert total == 1 and [c.tool_call_id for c in row.calls] == ["b"]
    [row], _ = await store.list_suspended(tool_name="t")
    assert [c.tool_call_id for c in row.calls] == ["a"]
    [row], _ = await store.list_suspended(query="ask")  # the text query keeps every call of the run
    assert [c.tool_call_id for c in row.calls] == ["b", "a"]
    assert await store.count_suspended_by_kind() == {"approval": 1, "input": 1}
    claimed = await store.claim("run-000001", "b", kinds=("suspend",), decide=approve, owner="o", lease_seconds=60)
    assert claimed.run is not None  # decided and leased: no longer counted
    assert await store.count_suspended_by_kind() == {"approval": 0, "input": 0}


# -- decisions -------------------------------------------------------------------------------------


async def test_claim_is_compare_and_set_and_audited(store):
    await store.save_suspended(run_row(1), [call_row(1)])
    seen = []

    def decide(call, run):
        seen.append((call.tool_call_id, run.agent_id))
        return Decision("approved", actor="op")

    first = await store.claim("run-000001", "c", kinds=("approval",), decide=decide, owner="o1", lease_seconds=60)
    assert first.outcome == "ok" and first.run is not None and seen == [("c", "a")]
    assert first.run.status == "running"
    second = await store.claim("run-000001", "c", kinds=("approval",), decide=decide, owner="o2", lease_seconds=60)
    assert second.outcome == "not_pending" and second.audited and len(seen) == 1
    audit = await store.audit_log("run-000001")
    assert [(a.tool_call_id, a.decision, a.actor, a.agent_id) for a in audit] == [("c", "approved", "op", "a")]
    assert [a.tool_call_id for a in await store.audit_log(tool_call_id="c")] == ["c"]
    await store.finish_run("run-000001", "o1")
    assert await store.get_run("run-000001") is None and await store.get_calls("run-000001") == []
    gone = await store.claim("run-000001", "c", kinds=("approval",), decide=decide, owner="o3", lease_seconds=60)
    assert gone.outcome == "no_run" and gone.audited
    assert len(await store.audit_log("run-000001")) == 1, "the audit log outlives the run"


async def test_claim_without_an_id_takes_the_latest_pending_call_of_the_kind(store):
    await store.save_suspended(
        run_row(1), [call_row(1, "old", at=1.0), call_row(1, "new", at=2.0), call_row(1, "ask", "suspend", at=3.0)]
    )
    got = await store.claim("run-000001", None, kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    assert got.outcome == "ok" and got.call.tool_call_id == "new"
    # the lease is held by "o": a second decision is recorded but not applied by its caller
    other = await store.claim("run-000001", None, kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
    assert other.outcome == "ok" and other.call.tool_call_id == "old" and other.run is None
    none_left = await store.claim("run-000001", None, kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
    assert none_left.outcome == "no_call_of_kind" and none_left.other_kinds
    missing = await store.claim("run-000001", "zzz", kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
    assert missing.outcome == "no_call" and not missing.audited
    assert (
        await store.claim("nope", None, kinds=("approval",), decide=approve, owner="p", lease_seconds=1)
    ).outcome == ("no_run")


async def test_a_failing_decision_rolls_back(store):
    await store.save_suspended(run_row(1), [call_row(1)])

    def refuse(call, run):
        raise WardenError("no", code="X")

    with pytest.raises(WardenError):
        await store.claim("run-000001", None, kinds=("approval",), decide=refuse, owner="o", lease_seconds=60)
    assert (await store.get_calls("run-000001"))[0].status == "pending"
    assert await store.audit_log() == []
    assert (await store.get_run("run-000001")).status == "suspended"


async def test_many_concurrent_claims_have_one_winner(backend):
    first = backend.open()
    await first.save_suspended(run_row(1), [call_row(1)])
    # several connections (the same store object for the in-memory one), all deciding at once
    stores = [first] + [backend.open() for _ in range(3)]
    attempts = [
        s.claim("run-000001", "c", kinds=("approval",), decide=approve, owner=f"o{i}", lease_seconds=60)
        for i in range(5)
        for s in stores
    ]
    results = await asyncio.gather(*attempts)
    assert sorted(r.outcome for r in results).count("ok") == 1
    assert {r.outcome for r in results} == {"ok", "not_pending"}
    assert len(await first.audit_log()) == 1


async def test_two_processes_deciding_on_one_database_have_one_winner(shared_backend):
    backend = shared_backend
    store = backend.open()
    for i in range(10):
        await store.save_suspended(run_row(i), [call_row(i)])
    code = textwrap.dedent("""
        import asyncio, json, sys
        from storage import open_store
        from storage.records import Decision
        async def main():
            s = open_store(sys.argv[1])
            await s.setup()
            print("ready", flush=True)
            sys.stdin.readline()
            won = []
            for i in range(10):
                r = await s.claim(f"run-{i:06d}", "c", kinds=("approval",),
                                  decide=lambda c, r: Decision("approved", actor=sys.argv[2]),
                                  owner=sys.argv[2], lease_seconds=60)
                won.append(r.outcome)
            await s.aclose()
            print(json.dumps(won))
        asyncio.run(main())
    """)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, backend.location, name],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("p1", "p2")
    ]
    for p in procs:  # both connected before either decides
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        outs.append(json.loads(out))
    for i in range(10):
        assert sorted([outs[0][i], outs[1][i]]) == ["not_pending", "ok"], (i, outs)
    audit = await store.audit_log()
    assert len(audit) == 10 and {a.actor for a in audit} <= {"p1", "p2"}
    assert verify_chain(audit).ok, "two processes deciding keep one hash chain"


# -- leases ----------------------------------------------------------------------------------------


async def test_save_with_the_lease_applies_and_without_it_refuses(store):
    await store.save_suspended(run_row(1), [call_row(1, "x"), call_row(1, "y")])
    got = await store.claim("run-000001", "x", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    assert got.run is not None and got.run.version == 1
    with pytest.raises(StorageError):
        await store.save_suspended(run_row(1), [], owner="intruder", applied=["x"])
    # y decided by someone else meanwhile: left as it is
    await store.claim("run-000001", "y", kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
    await store.save_suspended(run_row(1), [call_row(1, "z")], owner="o", applied=["x"])
    run = await store.get_run("run-000001")
    assert run.status == "suspended" and run.version == 2
    assert {(c.tool_call_id, c.status) for c in await store.get_calls("run-000001")} == {
        ("y", "approved"),
        ("z", "pending"),
    }
    with pytest.raises(StorageError):
        await store.save_suspended(run_row(1), [])  # a fresh insert of a stored run


async def test_leases_are_exclusive_renewable_and_expire(store):
    await store.save_suspended(run_row(1), [call_row(1)])
    held = await store.acquire_lease("run-000001", "o", 0.3)
    assert held is not None and held.status == "running"
    assert await store.acquire_lease("run-000001", "p", 0.3) is None
    assert await store.renew_lease("run-000001", "o", 0.3)
    assert not await store.renew_lease("run-000001", "p", 0.3)
    assert (await store.list_suspended())[1] == 0, "a run being applied is not listed"
    await asyncio.sleep(0.4)
    rows, total = await store.list_suspended()
    assert total == 1 and rows[0].run.run_id == "run-000001", "an expired lease lists the run again"
    assert await store.acquire_lease("run-000001", "p", 60) is not None


async def test_release_gives_the_run_back_and_withdraws_an_unapplied_decision(store):
    await store.save_suspended(run_row(1), [call_row(1)])
    got = await store.claim("run-000001", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    assert got.run is not None
    await store.release("run-000001", "o", reset_call="c")
    rows, total = await store.list_suspended()
    assert total == 1 and [c.status for c in rows[0].calls] == ["pending"]
    assert [a.decision for a in await store.audit_log("run-000001")] == ["approved", "withdrawn"]
    again = await store.claim("run-000001", "c", kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
    assert again.outcome == "ok" and again.run is not None


async def test_an_expired_call_stays_expired_when_its_lease_runs_out_or_is_released(store):
    await store.save_suspended(run_row(1), [call_row(1)])
    got = await store.claim(
        "run-000001", "c", kinds=("approval",), decide=lambda c, r: Decision("expired"), owner="o", lease_seconds=0.05
    )
    assert got.outcome == "ok"
    await store.release("run-000001", "o", reset_call="c")  # an interrupted expiry is not withdrawn
    await asyncio.sleep(0.1)  # and no lease or decided_until keeps it: it is final, not returned to pending
    assert await store.settle("run-000001") == 0
    assert (await store.list_suspended())[1] == 0
    assert [c.status for c in await store.get_calls("run-000001")] == ["expired"]
    # left for the host's recover() to apply (it looks at runs left running under no live lease)
    assert [r.run_id for r in await store.list_expired()] == ["run-000001"]
    again = await store.claim("run-000001", "c", kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
    assert again.outcome == "not_pending"
    assert [a.decision for a in await store.audit_log("run-000001")] == ["expired"]


# -- memory, lifecycle, errors ---------------------------------------------------------------------


async def test_memory_messages_round_trip(store):
    await store.append_messages("t", "u", [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    await store.append_messages("t", "u", [{"role": "user", "content": "again"}])
    await store.append_messages("t", "u", [])
    assert [m["content"] for m in await store.load_messages("t")] == ["hi", "yo", "again"]
    assert [m["content"] for m in await store.load_messages("t", limit=2)] == ["yo", "again"]
    assert await store.load_messages("other") == []


async def test_unicode_round_trips_and_lone_surrogates_are_typed_errors(store):
    from storage import UnstorableText

    row = call_row(1)
    row.args = {"text": "héllo \u202e \U0001f600 \x00"}
    await store.save_suspended(run_row(1), [row])
    assert (await store.get_calls("run-000001"))[0].args == row.args
    if isinstance(store, InMemoryStore):
        return  # holds Python strings as they are
    with pytest.raises(UnstorableText):
        await store.get_run("\ud800")
    with pytest.raises(UnstorableText):
        await store.list_suspended(thread_id="\udfff")


async def test_closed_store_raises_a_typed_error(store):
    await store.list_suspended()
    await store.aclose()
    with pytest.raises(StoreClosed):
        await store.list_suspended()


# -- live updates ----------------------------------------------------------------------------------


async def _next(events, want: Callable[[StoreEvent], bool], timeout: float = 5.0) -> StoreEvent:
    async def scan():
        async for event in events:
            if want(event):
                return event
        raise AssertionError("the subscription ended")

    return await asyncio.wait_for(scan(), timeout)


async def test_subscription_reports_suspensions_decisions_and_ends(backend):
    store = backend.open()
    await store.setup()
    events = subscribe(store, interval=0.02)
    assert (await _next(events, lambda e: True)).type == "subscribed"
    writer = backend.open()
    await writer.save_suspended(run_row(1), [call_row(1)])
    suspended = await _next(events, lambda e: e.type == "suspended")
    assert (suspended.run_id, suspended.agent_id) == ("run-000001", "a")
    await writer.claim("run-000001", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    decided = await _next(events, lambda e: e.type == "decided")
    assert (decided.run_id, decided.tool_call_id) == ("run-000001", "c")
    await writer.finish_run("run-000001", "o")
    await events.aclose()


# -- PostgreSQL specifics: schema, errors, notifications across processes ---------------------------


async def test_postgres_schema_is_versioned_and_a_newer_one_is_refused():
    import asyncpg

    from storage import SchemaTooNew

    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        await store.setup()
        await store.aclose()
        conn = await asyncpg.connect(dsn)
        assert [r[0] for r in await conn.fetch("SELECT version FROM warden_schema ORDER BY version")] == list(
            range(1, SCHEMA_VERSION + 1)
        )
        await conn.execute("INSERT INTO warden_schema VALUES (99)")
        await conn.close()
        newer = PostgresStore(dsn)
        with pytest.raises(SchemaTooNew) as err:
            await newer.setup()
        assert "99" in err.value.message and err.value.code == "STORAGE_SCHEMA_TOO_NEW"
        await newer.aclose()


async def test_postgres_schema_4_gains_the_picker_indexes_and_keeps_its_pending_runs():
    import asyncpg

    from storage.postgres import _MIGRATIONS

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn)
        await conn.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in (1, 2, 3, 4):
            await conn.execute(_MIGRATIONS[version])
            await conn.execute("INSERT INTO warden_schema (version) VALUES ($1)", version)
        await conn.execute(
            "INSERT INTO runs (run_id, agent_id, status, snapshot, created_at, suspended_at, updated_at) "
            "VALUES ('r1', 'mailer', 'suspended', '{}', 1, 1, 1)"
        )
        await conn.execute(
            "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
            "agent_path, seq, created_at) VALUES ('r1', 'c1', 'send_email', 'approval', 'pending', 'fp', "
            "'{\"to\":\"ana\"}', '[]', 0, 1)"
        )
        store = PostgresStore(dsn)
        try:
            rows, total = await store.list_suspended(tool_name="send_email", query="ANA")
            assert total == 1 and rows[0].calls[0].tool_call_id == "c1"
        finally:
            await store.aclose()
        assert await conn.fetchval("SELECT MAX(version) FROM warden_schema") == SCHEMA_VERSION
        names = {r[0] for r in await conn.fetch("SELECT indexname FROM pg_indexes WHERE tablename = 'pending_calls'")}
        assert "pending_calls_open" in names and not {"pending_calls_by_tool", "pending_calls_by_kind"} & names
        await conn.close()


async def test_postgres_first_starts_at_once_migrate_once():
    async with fresh_database() as dsn:
        stores = [PostgresStore(dsn) for _ in range(4)]
        await asyncio.gather(*(s.setup() for s in stores))
        for s in stores:
            await s.aclose()


@pytest.mark.parametrize(
    ("dsn", "code"),
    [
        ("postgresql://postgres@127.0.0.1:1/postgres", "STORAGE_UNAVAILABLE"),
        ("postgresql://no_such_role_w@127.0.0.1:5432/postgres", "STORAGE_AUTH_FAILED"),
        ("postgresql://postgres:secret@127.0.0.1:5432/no_such_db_w", "STORAGE_UNAVAILABLE"),
    ],
)
async def test_postgres_connection_failures_are_typed_one_line_errors(dsn, code):
    store = PostgresStore(dsn, connect_timeout=2)
    with pytest.raises(StorageError) as info:
        await store.list_suspended()
    assert info.value.code == code and "\n" not in info.value.message
    assert "secret" not in info.value.message and "secret" not in store.name
    with pytest.raises(StorageError):  # the same again, not a hang
        await store.get_run("x")
    await store.aclose()


async def test_postgres_corrupt_call_row_is_isolated_in_the_listing():
    import asyncpg

    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        for i in range(3):
            await store.save_suspended(run_row(i), [call_row(i)])
        conn = await asyncpg.connect(dsn)
        await conn.execute("UPDATE pending_calls SET args = '{not json' WHERE run_id = 'run-000001'")
        await conn.close()
        rows, total = await store.list_suspended()
        assert total == 3
        assert [(r.run.run_id, r.error is not None) for r in rows] == [
            ("run-000002", False),
            ("run-000001", True),
            ("run-000000", False),
        ]
        assert "args" in rows[1].error
        await store.aclose()


async def test_postgres_a_decision_in_another_process_is_seen_within_100_ms():
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        for i in range(5):
            await store.save_suspended(run_row(i), [call_row(i)])
        code = textwrap.dedent("""
            import asyncio, sys, time
            from storage import PostgresStore
            from storage.records import Decision
            async def main():
                s = PostgresStore(sys.argv[1])
                await s.setup()
                print("ready", flush=True)
                for i in range(5):
                    sys.stdin.readline()
                    print(time.time(), flush=True)
                    await s.claim(f"run-{i:06d}", "c", kinds=("approval",), decide=lambda c, r: Decision("approved"),
                                  owner="other", lease_seconds=60)
                await s.aclose()
            asyncio.run(main())
        """)
        proc = subprocess.Popen(
            [sys.executable, "-c", code, dsn], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        events = subscribe(store)
        try:
            assert (await _next(events, lambda e: True)).type == "subscribed"  # the LISTEN is in place
            assert (await asyncio.to_thread(proc.stdout.readline)).strip() == "ready"
            lags = []
            for i in range(5):
                proc.stdin.write("go\n")
                proc.stdin.flush()
                sent = float(await asyncio.to_thread(proc.stdout.readline))
                event = await _next(events, lambda e: e.type == "decided")
                lags.append(time.time() - sent)
                assert event.run_id == f"run-{i:06d}"
            assert sorted(lags)[2] < 0.1 and max(lags) < 0.5, lags  # median under 100 ms (a shared CI machine)
        finally:
            await events.aclose()
            proc.communicate(timeout=30)
            await store.aclose()


async def test_postgres_commit_durability_is_chosen_as_sqlite_s():
    async with fresh_database() as dsn:
        for store, want in (
            (PostgresStore(dsn), "off"),
            (PostgresStore(dsn, synchronous_commit="on"), "on"),
            (PostgresStore(dsn + "?synchronous_commit=on"), "on"),
        ):
            pool = await store._connection_pool()
            async with pool.acquire() as conn:
                assert await conn.fetchval("SHOW synchronous_commit") == want
            await store.aclose()


async def test_postgres_an_unclosed_store_does_not_keep_the_process_alive():
    async with fresh_database() as dsn:
        code = textwrap.dedent("""
            import asyncio, sys
            from storage import PostgresStore
            async def main():
                s = PostgresStore(sys.argv[1])
                await s.setup()
                await s.list_suspended()
            asyncio.run(main())
            print("exited")
        """)
        out = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-c", code, dsn], cwd=ROOT, capture_output=True, text=True, timeout=30
        )
        assert out.returncode == 0 and out.stdout.strip() == "exited", out.stderr
        assert "Traceback" not in out.stderr


# -- the audit trail ---------------------------------------------------------------------------------


def audit_entry(i: int, *, agent="a", actor="op", decision="approved", at=None) -> AuditRow:
    return AuditRow(
        run_id=f"run-{i:06d}",
        tool_call_id="c",
        agent_id=agent,
        tool_name="t",
        decision=decision,
        fingerprint="sha256:x",
        reason=None,
        decided_at=at if at is not None else 1000.0 + i,
        actor=actor,
    )


async def test_audit_entries_are_chained_filtered_and_paged(backend):
    store = backend.open()
    sealed = await store.append_audit([audit_entry(1), audit_entry(2, agent="b", actor="ann")])
    assert [e.seq for e in sealed] == [1, 2] and sealed[1].prev_hash == sealed[0].hash
    edited = audit_entry(3, decision="edited")
    edited.args, edited.grant_id, edited.reason = {"path": "/tmp/ä"}, "grant-1", "too wide"
    await store.append_audit([edited])
    await store.save_suspended(run_row(4), [call_row(4)])
    await store.claim("run-000004", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
    log = await store.audit_log()
    assert [e.seq for e in log] == [1, 2, 3, 4] and verify_chain(log).ok
    assert log[2].args == {"path": "/tmp/ä"} and log[2].grant_id == "grant-1" and log[2].reason == "too wide"
    assert log[3].prev_hash == log[2].hash and log[3].actor == "op"
    assert [e.seq for e in await store.audit_log(agent_id="b")] == [2]
    assert [e.seq for e in await store.audit_log(actor="op")] == [1, 3, 4]
    assert [e.seq for e in await store.audit_log(since=1003.0)] == [3, 4]
    assert [e.seq for e in await store.audit_log(decision="edited")] == [3]
    assert [e.seq for e in await store.audit_log(after=1, limit=2)] == [2, 3]
    assert [e.seq for e in await store.audit_log("run-000004")] == [4]


async def test_audit_verify_names_the_first_changed_entry():
    rows = [
        audit_entry(1),
        audit_entry(2),
        audit_entry(3),
    ]
    store = InMemoryStore()
    log = await store.append_audit(rows)
    assert verify_chain(log).ok and verify_chain(log).checked == 3
    log[1].actor = "mallory"
    report = verify_chain(log)
    assert not report.ok and report.broken_seq == 2 and "changed" in (report.problem or "")
    assert verify_chain([log[0], log[2]]).broken_seq == 3, "a removed entry breaks the chain"


async def test_audit_hash_covers_detail_and_one_entry_appends_alone(backend):
    store = backend.open()
    granted = audit_entry(1, decision="granted")
    granted.grant_id = "grant-1"
    [sealed] = await store.append_audit(granted)
    assert sealed.seq == 1 and sealed.detail == {"grant_id": "grant-1"}
    [stored] = await store.audit_log()
    assert stored.detail == {"grant_id": "grant-1"} and verify_chain([stored]).ok
    stored.detail = {"grant_id": "grant-2"}
    assert not verify_chain([stored]).ok, "the hash covers detail"


async def test_concurrent_appends_from_two_processes_keep_one_chain(shared_backend):
    store = shared_backend.open()
    await store.setup()
    code = textwrap.dedent("""
        import asyncio, sys
        from storage import open_store
        from storage.records import AuditRow
        async def main():
            s = open_store(sys.argv[1])
            await s.setup()
            print("ready", flush=True)
            sys.stdin.readline()
            for i in range(25):
                await s.append_audit([AuditRow(f"r{i}", "c", "a", "t", "approved", "fp", None, float(i), sys.argv[2])])
            await s.aclose()
        asyncio.run(main())
    """)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, shared_backend.location, name],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("p1", "p2")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    log = await store.audit_log()
    assert [e.seq for e in log] == list(range(1, 51))
    assert verify_chain(log).ok


async def test_a_claim_returning_a_lapsed_decision_chains_two_entries_with_any_text(store):
    """Claims append their entries to the one chain (PostgreSQL hashes them server-side from the same JSON)."""
    await store.append_audit(audit_entry(9))
    await store.save_suspended(run_row(1), [call_row(1)])
    odd = 'é "quoted" \\ \x01 \u2028 ✓'

    def edit(call, run) -> Decision:
        return Decision("approved", reason=odd, actor=odd, edited_args={"p": odd}, detail={"edited_args": {"p": odd}})

    first = await store.claim("run-000001", "c", kinds=("approval",), decide=edit, owner="o", lease_seconds=0.2)
    assert first.outcome == "ok" and first.run is not None
    await asyncio.sleep(0.3)  # the lease lapses before the tool started: the decision reads as pending again
    again = await store.claim("run-000001", "c", kinds=("approval",), decide=edit, owner="p", lease_seconds=60)
    assert again.outcome == "ok" and again.run is not None and again.run.lease_owner == "p"
    await store.append_audit(audit_entry(10))
    log = await store.audit_log()
    assert [e.decision for e in log] == ["approved", "edited", "returned-to-pending", "edited", "approved"]
    assert [e.seq for e in log] == [1, 2, 3, 4, 5] and verify_chain(log).ok
    assert log[3].reason == odd and log[3].actor == odd and log[3].detail == {"edited_args": {"p": odd}}


async def test_postgres_schema_4_upgrades_to_5_and_claims_continue_its_chain():
    import asyncpg

    from storage import postgres

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn)
        await conn.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in range(1, 5):  # a database a Warden of schema 4 left behind
            await conn.execute(postgres._MIGRATIONS[version])
            await conn.execute("INSERT INTO warden_schema VALUES ($1)", version)
        await conn.close()
        store = PostgresStore(dsn)
        try:
            await store.append_audit(audit_entry(1))
            await store.save_suspended(run_row(2), [call_row(2)])
            got = await store.claim("run-000002", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60)
            assert got.outcome == "ok"
            log = await store.audit_log()
            assert [e.seq for e in log] == [1, 2] and verify_chain(log).ok and log[1].prev_hash == log[0].hash
        finally:
            await store.aclose()
        conn = await asyncpg.connect(dsn)
        assert [r[0] for r in await conn.fetch("SELECT version FROM warden_schema ORDER BY version")] == list(
            range(1, SCHEMA_VERSION + 1)
        )
        await conn.close()


async def test_postgres_a_claim_overtaken_between_its_read_and_its_write_reads_again():
    """Another process decides the call while this claim's caller validates: nothing of the loser is written."""
    import threading

    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        await store.save_suspended(run_row(1), [call_row(1)])
        seen: list[str] = []
        other: list = []

        def decide_elsewhere() -> None:
            async def go():
                rival = PostgresStore(dsn)
                try:
                    return await rival.claim(
                        "run-000001", "c", kinds=("approval",), decide=approve, owner="p", lease_seconds=60
                    )
                finally:
                    await rival.aclose()

            other.append(asyncio.run(go()))

        def late(call, run) -> Decision:
            seen.append(call.status)
            if len(seen) == 1:  # this claim has read the call; another process decides it now
                t = threading.Thread(target=decide_elsewhere)
                t.start()
                t.join()
            return Decision("declined", actor="late")

        try:
            got = await store.claim("run-000001", "c", kinds=("approval",), decide=late, owner="o", lease_seconds=60)
            assert other[0].outcome == "ok" and other[0].run.lease_owner == "p"
            assert got.outcome == "not_pending" and got.call.status == "approved"
            assert seen == ["pending"], "the second read found the call decided: nothing left to decide"
            log = await store.audit_log()
            assert [(e.decision, e.actor) for e in log] == [("approved", "op")] and verify_chain(log).ok
            assert (await store.get_run("run-000001")).lease_owner == "p"
        finally:
            await store.aclose()


async def test_postgres_a_claim_on_rows_this_store_inserted_still_compares_and_sets():
    """A claim of a run this store inserted decides on the rows it wrote (no read); when another
    process moved the run since, the compare-and-set fails and the claim answers from the rows as they are."""
    async with fresh_database() as dsn:
        store, rival = PostgresStore(dsn), PostgresStore(dsn)
        try:
            # decided elsewhere: "already decided", one audit entry
            await store.save_suspended(run_row(1), [call_row(1)])
            seen: list[str] = []

            def decide(call, run) -> Decision:
                seen.append(call.status)
                return Decision("declined", actor="late")

            assert (
                await rival.claim("run-000001", "c", kinds=("approval",), decide=approve, owner="p", lease_seconds=60)
            ).outcome == "ok"
            got = await store.claim("run-000001", "c", kinds=("approval",), decide=decide, owner="o", lease_seconds=60)
            assert got.outcome == "not_pending" and got.call.status == "approved" and got.audited
            assert seen == ["pending"], "decided once on the rows written, which the compare-and-set refused"
            assert [(e.decision, e.actor) for e in await store.audit_log()] == [("approved", "op")]

            # suspended again elsewhere with a new call: the claim decides the call that waits now
            await store.save_suspended(run_row(2), [call_row(2, "c")])
            taken = await rival.claim(
                "run-000002", "c", kinds=("approval",), decide=approve, owner="p", lease_seconds=60
            )
            assert taken.outcome == "ok"
            await rival.save_suspended(taken.run, [call_row(2, "d", at=5000.0)], owner="p", applied=["c"])
            got = await store.claim(
                "run-000002", None, kinds=("approval",), decide=approve, owner="o", lease_seconds=60
            )
            assert got.outcome == "ok" and got.call.tool_call_id == "d" and got.run.version == 2

            # a refusal on stale rows is not the answer: the run ended elsewhere
            await store.save_suspended(run_row(3), [call_row(3)])
            taken = await rival.claim(
                "run-000003", "c", kinds=("approval",), decide=approve, owner="p", lease_seconds=60
            )
            await rival.finish_run("run-000003", "p")

            def refuse(call, run) -> Decision:
                raise WardenError("refused on what it read", code="X")

            got = await store.claim("run-000003", "c", kinds=("approval",), decide=refuse, owner="o", lease_seconds=60)
            assert got.outcome == "no_run" and got.audited
            log = await store.audit_log()
            assert [(e.run_id, e.tool_call_id) for e in log] == [
                ("run-000001", "c"),
                ("run-000002", "c"),
                ("run-000002", "d"),
                ("run-000003", "c"),
            ]
            assert verify_chain(log).ok
        finally:
            await store.aclose()
            await rival.aclose()


async def test_postgres_the_rows_a_store_remembers_are_bounded(monkeypatch):
    from storage import postgres

    def sized(i: int, chars: int) -> RunRow:
        row = run_row(i)
        row.snapshot = json.dumps({"x": "y" * chars})
        return row

    monkeypatch.setattr(postgres, "_REMEMBERED", 2)
    async with fresh_database() as dsn:
        store = PostgresStore(dsn)
        try:
            for i in range(1, 4):
                await store.save_suspended(run_row(i), [call_row(i)])
            assert list(store._inserted) == ["run-000002", "run-000003"], "the oldest is forgotten first"
            monkeypatch.setattr(postgres, "_REMEMBERED", 100)
            monkeypatch.setattr(postgres, "_REMEMBERED_CHARS", 4000)
            for i in range(4, 9):
                await store.save_suspended(sized(i, 900), [call_row(i)])
            assert list(store._inserted) == ["run-000005", "run-000006", "run-000007", "run-000008"]
            assert store._inserted_chars <= 4000
            await store.save_suspended(sized(9, 1500), [call_row(9)])
            assert "run-000009" not in store._inserted, "too large to remember: its claim reads it"
            for i in range(1, 10):  # remembered or not, each is decided once
                got = await store.claim(
                    f"run-{i:06d}", "c", kinds=("approval",), decide=approve, owner="o", lease_seconds=60
                )
                assert got.outcome == "ok"
            assert store._inserted == {} and store._inserted_chars == 0
        finally:
            await store.aclose()


async def test_recovery_settling_runs_while_others_of_the_agent_are_claimed(backend):
    """Issue 43's deadlock, at full speed: one connection settles lapsed runs while another claims other
    runs of the same agent, all at once. Every call ends once where it should, with one audit chain."""
    one, two = backend.open(), backend.open()
    for i in range(12):
        await one.save_suspended(run_row(i), [call_row(i)])
    for i in range(6):  # decided by a process that died: lapsed once the lease runs out
        got = await one.claim(
            run_row(i).run_id, "c", kinds=("approval",), decide=approve, owner="dead", lease_seconds=0.01
        )
        assert got.run is not None
    await asyncio.sleep(0.05)
    settled = [one.settle(run_row(i).run_id) for i in range(6)]
    claimed = [
        two.claim(run_row(i).run_id, "c", kinds=("approval",), decide=approve, owner="live", lease_seconds=60)
        for i in range(6, 12)
    ]
    results = await asyncio.gather(*settled, *claimed)
    assert results[:6] == [1] * 6 and all(r.outcome == "ok" and r.run is not None for r in results[6:])
    rows, total = await one.list_suspended(per_page=50)
    assert total == 6 and sorted(r.run.run_id for r in rows) == [run_row(i).run_id for i in range(6)]
    assert all(c.status == "pending" for r in rows for c in r.calls)
    audit = await one.audit_log()
    assert sorted(a.decision for a in audit) == ["approved"] * 12 + ["returned-to-pending"] * 6
    assert verify_chain(audit).ok
