"""What SQLite and PostgreSQL stores do, written once: each ``Store`` method as one transaction
script over a ``Db`` (the dialect's connection), the decisions taken by ``storage.rules``.

A dialect supplies the connection, its transactions and typed errors (``_run``), the
``Db`` adapter, and its own form of an operation only where it differs (PostgreSQL's
one-statement saves and ``warden_claim``). Scripts are ``async`` so PostgreSQL awaits
them; SQLite runs a transaction synchronously (inline on the event loop's thread, or on
aiosqlite's worker), so its adapter never suspends and ``run_sync`` drives a script
to its end in one step, without an event loop.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, Literal, NamedTuple, Protocol, TypeVar

from storage import rules
from storage import sql_common as q
from storage.audit import AuditFilter, seal, to_db
from storage.audit import from_db as audit_from_db
from storage.base import prefix_upper_bound
from storage.errors import CorruptRecord, LeaseNotHeld, SchemaTooNew, StorageError, UnstorableText
from storage.front import StoreFront
from storage.listing import SuspendedFilter, count_from_row, count_sql
from storage.records import (
    AuditRow,
    ClaimResult,
    GrantRow,
    PendingCallRow,
    RunRow,
    SuspendedRunRow,
    actionable,
    lease_live,
)
from storage.rows import call_from_row, call_params, dumps, grant_from_row, run_from_row
from storage.rules import ClaimRequest

T = TypeVar("T")
Row = Sequence[Any]

#: a claim reads again when its run moved between its read and its write (another decider won).
CLAIM_ATTEMPTS = 50

#: The one lock order of every write transaction, for PostgreSQL, where several processes lock rows
#: (SQLite's ``BEGIN IMMEDIATE`` takes its one write lock first; memory has no locks):
#:
#: 1. ``runs``: the run's row (``SELECT ... FOR UPDATE`` or any write of it). A write of its status
#:    also locks its agent's ``run_counts`` row (the trigger that keeps the listing's totals), so the
#:    run's row is written before anything else, never after a call's row or the audit lock;
#: 2. ``pending_calls``: its calls' rows;
#: 3. the audit chain's advisory lock (``append_audit``; ``warden_claim``), last: nothing is locked
#:    after it, so whoever holds it only ever waits for the server, never for another transaction.
#:
#: A transaction keeps to one run. Before issue 43, ``settle`` and ``release(reset_call=...)`` gave
#: their run back after their audit entry: holding the audit lock they waited on the ``run_counts``
#: row a concurrent ``warden_claim`` held (its trigger) while it waited on the audit lock, and
#: PostgreSQL broke the cycle by failing one of them ("deadlock detected"). ``LockOrder`` checks each
#: statement of PostgreSQL's scripts against this order; ``warden_claim`` (``storage.postgres``) keeps
#: it in PL/pgSQL, and ``tests/test_pg_lock_order.py`` races the transactions on two connections.
LOCK_ORDER = ("runs", "pending_calls", "audit chain")

_WRITTEN_TABLE = re.compile(r"\s*(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+(\w+)", re.IGNORECASE)
_LOCKED_READ = re.compile(r"\s*SELECT\b.*\bFROM\s+(\w+)\b.*\bFOR\s+UPDATE\s*$", re.IGNORECASE | re.DOTALL)
_RANKS: dict[str, int | None] = {}


def lock_rank(sql: str) -> int | None:
    """The position in ``LOCK_ORDER`` of the lock ``sql`` takes (None: a plain read, or a table outside it)."""
    rank = _RANKS.get(sql, -1)
    if rank == -1:
        m = _WRITTEN_TABLE.match(sql) or _LOCKED_READ.match(sql)
        table = m.group(1).lower() if m else None
        rank = {"runs": 0, "pending_calls": 1, "audit_log": 2}.get(table or "")
        if len(_RANKS) < 4096:  # the scripts' texts are a small set; a listing's vary with its filters
            _RANKS[sql] = rank
    return rank


class LockOrderBroken(AssertionError):
    """A script took a lock out of ``LOCK_ORDER``: a bug in Warden (raised before the statement ran)."""


class LockOrder:
    """The locks one transaction has taken, as ranks of ``LOCK_ORDER``: a lock below one held is refused."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = -1

    def take(self, rank: int | None, what: str) -> None:
        if rank is None:
            return
        if rank < self.held:
            raise LockOrderBroken(
                f"{what!r} locks {LOCK_ORDER[rank]} after {LOCK_ORDER[self.held]}: against storage.sql_store.LOCK_ORDER"
            )
        self.held = rank


#: how a script runs: ``read`` (no transaction), ``snapshot`` (reads that must agree: PostgreSQL's
#: read-only REPEATABLE READ), ``statement`` (one write statement: atomic alone in PostgreSQL),
#: ``write`` (one transaction; SQLite takes its write lock for ``statement`` too).
Mode = Literal["read", "snapshot", "statement", "write"]


class Db(Protocol):
    """One connection inside a dialect's transaction; statements in ``$n`` form (``sql_common``)."""

    #: appended to a SELECT that must lock the rows it reads ('' where the transaction is the lock)
    for_update: str
    #: whether text search is case-insensitive by ILIKE (PostgreSQL) rather than LIKE (SQLite's is)
    ilike: bool

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]: ...

    async def fetchrow(self, sql: str, *args: Any) -> Row | None: ...

    async def execute(self, sql: str, *args: Any) -> int:
        """Run one statement; the number of rows it changed."""
        ...

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    def one_of(self, n: int) -> str:
        """``IN`` over the list of ids in parameter ``n`` (pass it through ``ids``)."""
        ...

    def ids(self, values: list[str]) -> Any: ...

    async def lock_audit(self) -> None:
        """Serialise appends to the audit chain until the transaction ends."""
        ...

    async def collate(self) -> str:
        """The COLLATE clause under which text compares by code point ('' when it already does)."""
        ...

    async def write_claim(self, run: RunRow, picked: rules.Pick, plan: rules.ClaimPlan, req: ClaimRequest) -> bool:
        """Write a claim's plan, compare-and-set on the run and call as read; False when they moved."""
        ...


def unstorable(name: str, exc: UnicodeEncodeError) -> UnstorableText:
    """The typed error of text a driver could not encode (a lone surrogate): nothing was sent."""
    bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
    shown = "".join(f"\\u{ord(ch):04x}" for ch in bad)
    return UnstorableText(f"{name}: text with a lone surrogate ({shown}) cannot be stored or looked up")


class SavePlan(NamedTuple):
    """``save_suspended`` as statements: the rule written once, without I/O; each driver only runs them
    (the portable ``SqlStore._save_script``, SQLite's plain ``_save_now`` on the cursor)."""

    first: str  #: ``INSERT_RUN`` (a run stored for the first time) or ``SAVE_OWNED`` (the lease holder's save)
    params: tuple[Any, ...]
    owned: bool  #: ``SAVE_OWNED`` changes exactly one row, or the lease was lost and nothing is saved
    deleted: list[tuple[str, str]]  #: the calls whose decisions were applied (an owned save only)
    inserted: list[tuple[Any, ...]]  #: the calls now waiting (``call_params``)


def plan_save(run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]) -> SavePlan:
    now = time.time()
    if owner is None:
        created, suspended = run.created_at or now, run.suspended_at or now
        values = (run.run_id, run.agent_id, run.thread_id, run.resource_id, run.snapshot, created, suspended, now)
        return SavePlan(q.INSERT_RUN, values, False, [], [call_params(c) for c in pending])
    params = (run.snapshot, run.suspended_at or now, now, run.run_id, owner)
    deleted = [(run.run_id, cid) for cid in applied]
    return SavePlan(q.SAVE_OWNED, params, True, deleted, [call_params(c) for c in pending])


def lease_lost(name: str, run_id: str) -> LeaseNotHeld:
    """A save by a process that no longer holds the run's lease (``SavePlan.owned``)."""
    return LeaseNotHeld.on(name, run_id)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a script whose awaits all complete at once (SQLite's adapter) to its end, in one step."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("a SQLite transaction script awaited something that is not SQLite")


async def append_audit(db: Db, rows: list[AuditRow]) -> list[AuditRow]:
    """Append to the hash chain inside the caller's transaction, under the chain's lock."""
    await db.lock_audit()
    last = await db.fetchrow(q.AUDIT_HEAD)
    sealed = seal(rows, last[0] if last else 0, last[1] if last else None)
    await db.executemany(q.INSERT_AUDIT, [to_db(r) for r in sealed])
    return sealed


def decode_claim_rows(rows: Sequence[Row]) -> tuple[RunRow, list[PendingCallRow]]:
    """A run and its calls from ``CLAIM_READ``'s rows (a run without calls has one row of NULLs)."""
    n = q.N_RUN_COLS
    run = run_from_row(rows[0][:n])
    return run, [call_from_row(r[n:]) for r in rows if r[n] is not None]


async def claim(db: Db, req: ClaimRequest, written: Sequence[Row] | None = None) -> ClaimResult | None:
    """One read, the rules' pick and plan, one compare-and-set write; None when the run moved.

    ``written``: the rows as this store inserted them (PostgreSQL), decided on instead of a read;
    anything but a decision on them is None too, so the caller reads the rows as they are now.
    """
    now = time.time()
    if written is not None:
        rows: Sequence[Row] = [
            r for r in written if req.tool_call_id is None or r[q.N_RUN_COLS + 1] == req.tool_call_id
        ]
    else:
        rows = await db.fetch(q.CLAIM_READ, req.run_id, req.tool_call_id)
    if not rows:
        return None if written is not None else await _refused(db, ClaimResult("no_run"), req)
    run, calls = decode_claim_rows(rows)
    picked = rules.pick(calls, run, now, req)
    if isinstance(picked, ClaimResult):
        return None if written is not None else await _refused(db, picked, req)
    try:
        decision = req.decide(picked.current, run)
    except Exception:
        if written is None:
            raise
        return None  # perhaps refused for what is no longer so: decided again on the rows as they are
    plan = rules.plan_claim(run, picked, decision, now, req)
    return plan.result if await db.write_claim(run, picked, plan, req) else None


async def _refused(db: Db, result: ClaimResult, req: ClaimRequest) -> ClaimResult:
    if rules.asks_audit(result, req):
        result.audited = await db.fetchrow(q.AUDITED, req.run_id, req.tool_call_id) is not None
    return result


async def write_claim(db: Db, run: RunRow, picked: rules.Pick, plan: rules.ClaimPlan, req: ClaimRequest) -> bool:
    """A claim's plan as three statements (the portable form; the caller holds the write lock)."""
    stored, d = picked.stored, plan.decision
    changed = await db.execute(
        q.CLAIM_CALL,
        d.status,
        plan.decided_until,
        d.actor,
        None if d.resume_data is None else dumps(d.resume_data),
        None if d.edited_args is None else dumps(d.edited_args),
        req.run_id,
        stored.tool_call_id,
        stored.status,
        stored.started_at,
        stored.decided_until,
    )
    if changed != 1:
        return False
    await append_audit(db, plan.audit)
    if plan.lease_until is not None:
        await db.execute(q.CLAIM_LEASE, req.owner, plan.lease_until, plan.now, req.run_id)
    return True


# -- listing ----------------------------------------------------------------------------------
async def with_calls(db: Db, runs: list[RunRow], now: float, broken: dict[str, str]) -> list[SuspendedRunRow]:
    """The runs that have an actionable call now, with those calls (never a run with none)."""
    runs = [r for r in runs if r.status != "failed" and not lease_live(r, now)]
    calls: dict[str, list[PendingCallRow]] = {r.run_id: [] for r in runs}
    if runs:
        sql = f"SELECT {q.CALL_COLS} FROM pending_calls WHERE run_id {db.one_of(1)} ORDER BY created_at, seq"
        for crow in await db.fetch(sql, db.ids(list(calls))):
            try:
                calls[crow[0]].append(call_from_row(crow))
            except CorruptRecord as exc:  # listed as unreadable; the other runs are unaffected
                broken.setdefault(crow[0], exc.message)
    return [
        SuspendedRunRow(run=r, calls=open_calls, error=broken.get(r.run_id))
        for r in runs
        if (open_calls := [c for c in (actionable(c, r, now) for c in calls[r.run_id]) if c is not None])
        or r.run_id in broken
    ]


def _decode_runs(rows: Sequence[Row], broken: dict[str, str]) -> list[RunRow]:
    out: list[RunRow] = []
    for r in rows:
        try:
            out.append(run_from_row(r))
        except CorruptRecord as exc:  # listed as unreadable; the other runs are unaffected
            broken[r[0]] = exc.message
            out.append(RunRow(r[0], r[1], r[2], r[3], r[4], "", suspended_at=0.0))
    return out


async def list_suspended(db: Db, f: SuspendedFilter, page: int, per_page: int) -> tuple[list[SuspendedRunRow], int]:
    """Read only: a run whose lease expired (a process died or stalled while applying a decision)
    is listed from what its rows say now; nothing is written."""
    now = time.time()
    broken: dict[str, str] = {}
    # Runs left "running" under an expired lease: usually none (the index on lease_until finds
    # them). Their decided calls read as pending at this moment, so the call filters run here.
    exact = SuspendedFilter(f.agent_id, f.thread_id, f.resource_id)
    params: list[Any] = [now]
    extra = exact.sql(q.mark, params)
    leased = _decode_runs(await db.fetch(q.EXPIRED_LISTED + extra, *params), broken)
    expired = [
        narrowed
        for row in await with_calls(db, leased, now, broken)
        if (row.error is not None or f.run_matches(row.run, row.calls)) and (narrowed := f.narrow(row))
    ]
    params = []
    extra = f.sql(q.mark, params, ilike=db.ilike)
    if f == exact and f.thread_id is None and f.resource_id is None:
        # Counts of whole agents are kept by triggers: the total stays O(agents), not O(runs).
        row = await (
            db.fetchrow(q.SUSPENDED_TOTAL) if f.agent_id is None else db.fetchrow(q.SUSPENDED_OF_AGENT, f.agent_id)
        )
        total = int(row[0]) if row else 0
    else:
        counted = await db.fetchrow(f"SELECT COUNT(*) FROM runs WHERE status = 'suspended'{extra}", *params)
        total = int(counted[0]) if counted else 0
    total += len(expired)
    # The listing never reads snapshot JSON: everything shown is in indexed columns.
    start, stop = page * per_page, (page + 1) * per_page
    fetch_from = max(0, start - len(expired))
    n = len(params)
    rows = await db.fetch(
        f"SELECT {q.RUN_LIST_COLS} FROM runs WHERE status = 'suspended'{extra} "
        f"ORDER BY {f.order_sql()} LIMIT ${n + 1} OFFSET ${n + 2}",
        *params,
        stop - fetch_from,
        fetch_from,
    )
    suspended = [r for r in (f.narrow(x) for x in await with_calls(db, _decode_runs(rows, broken), now, broken)) if r]
    merged = f.ordered([*expired, *suspended]) if expired else suspended
    skip = start - fetch_from
    return merged[skip : skip + per_page], total


async def count_by_kind(db: Db, f: SuspendedFilter) -> dict[str, int]:
    params: list[Any] = []
    sql = count_sql(f, q.mark, params, ilike=db.ilike)
    return count_from_row(await db.fetchrow(sql, *params))


Script = Callable[..., Coroutine[Any, Any, T]]


class SqlStore(StoreFront):
    """The ``Store`` methods of both SQL dialects; a subclass supplies ``_run`` and its ``Db``."""

    name: str

    #: how a claim runs: read and write in one transaction (SQLite), or a compare-and-set (PostgreSQL)
    _claim_mode: Mode = "write"

    async def _run(self, script: Script[T], *args: Any, mode: Mode = "write") -> T:
        """Run ``script(db, *args)`` on a connection as ``mode`` says, the driver's errors typed."""
        raise NotImplementedError

    def _refuse_newer(self, current: int) -> None:
        """A database whose schema is newer than this Warden's is refused, never migrated down."""
        if current > q.SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{self.name} has schema version {current}, newer than this Warden "
                f"(knows {q.SCHEMA_VERSION}); upgrade Warden to use it"
            )

    # -- runs ---------------------------------------------------------------------------------
    async def _save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        await self._run(self._save_script, run, pending, owner, applied)

    async def _save_script(
        self, db: Db, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        plan = plan_save(run, pending, owner, applied)
        if await db.execute(plan.first, *plan.params) != 1 and plan.owned:
            raise lease_lost(self.name, run.run_id)
        if plan.deleted:
            await db.executemany(q.DELETE_CALL, plan.deleted)
        if plan.inserted:
            await db.executemany(q.INSERT_CALL, plan.inserted)

    async def _claim(self, req: ClaimRequest) -> ClaimResult:
        for _ in range(CLAIM_ATTEMPTS):
            result = await self._run(claim, req, mode=self._claim_mode)
            if result is not None:
                return result
        raise StorageError(f"{self.name}: run {req.run_id!r} kept changing while it was decided; nothing was decided")

    async def acquire_lease(
        self, run_id: str, owner: str, lease_seconds: float, *, waiting_call: str | None = None
    ) -> RunRow | None:
        async def script(db: Db) -> RunRow | None:
            now = time.time()
            row = await db.fetchrow(q.TAKE_LEASE, owner, now + lease_seconds, now, run_id)
            if row is None:
                if waiting_call is not None:
                    await db.execute(q.HOLD_DECISION, now + lease_seconds, run_id, waiting_call)
                return None
            return run_from_row(row)

        return await self._run(script)

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        return await self._run(
            _changed_one, q.RENEW_LEASE, time.time() + lease_seconds, run_id, owner, mode="statement"
        )

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        return await self._run(_changed_one, q.MARK_STARTED, time.time(), run_id, tool_call_id, owner, mode="statement")

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        async def script(db: Db) -> bool:
            if await db.execute(q.CHECKPOINT, snapshot, time.time(), run_id, owner) != 1:
                return False
            if applied:
                await db.executemany(q.DELETE_CALL, [(run_id, c) for c in applied])
            return True

        return await self._run(script)

    async def release(self, run_id: str, owner: str, *, reset_call: str | None = None) -> None:
        async def script(db: Db) -> None:
            # LOCK_ORDER: the run given back first (its row, its agent's count), then the call, the audit last.
            # Its status does not depend on the withdrawal (a call decided or pending is not "expired" either way).
            now = time.time()
            await db.execute(q.GIVE_BACK_HELD, run_id, now, owner)
            if reset_call is not None:
                withdrawn = await db.fetch(q.WITHDRAW_CALL, run_id, reset_call)
                found = await db.fetchrow(q.AGENT_OF_RUN, run_id) if withdrawn else None
                if found is not None:
                    await append_audit(db, [rules.withdrawn_entry(run_id, found[0], tuple(withdrawn[0]), now)])

        await self._run(script)

    async def list_expired(self, *, limit: int = 100) -> list[RunRow]:
        return [run_from_row(r) for r in await self._run(_fetch, q.LIST_EXPIRED, time.time(), limit, mode="read")]

    async def settle(self, run_id: str) -> int:
        async def script(db: Db) -> int:
            now = time.time()
            row = await db.fetchrow(q.SETTLE_RUN + db.for_update, run_id, now)
            if row is None:
                return 0
            # LOCK_ORDER: the run given back before its calls and the audit (the status it gets is the
            # same either way: a lapsed decision returned to pending is still not "expired").
            await db.execute(q.GIVE_BACK, run_id, now)
            returned = sorted(tuple(r) for r in await db.fetch(q.RETURN_LAPSED, run_id, now))
            if returned:
                await append_audit(db, rules.returned_entries(run_id, row[0], returned, now))
            return len(returned)

        return await self._run(script)

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        async def script(db: Db) -> bool:
            if await db.execute(q.FAIL_RUN, snapshot, error, time.time(), run_id, owner) == 1:
                return True
            return await db.fetchrow(q.RUN_EXISTS, run_id) is None

        return await self._run(script)

    async def get_run(self, run_id: str) -> RunRow | None:
        rows = await self._run(_fetch, q.RUN_BY_ID, run_id, mode="read")
        return run_from_row(rows[0]) if rows else None

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        return [call_from_row(r) for r in await self._run(_fetch, q.CALLS_OF_RUN, run_id, mode="read")]

    async def get_suspended(self, run_id: str) -> SuspendedRunRow | None:
        return await self._run(get_suspended, run_id, mode="read")

    async def find_ids(self, prefix: str, *, run_id: str | None = None, limit: int = 10) -> list[str]:
        return await self._run(find_ids, prefix, run_id, limit, mode="read")

    async def _list_suspended(self, f: SuspendedFilter, page: int, per_page: int) -> tuple[list[SuspendedRunRow], int]:
        return await self._run(list_suspended, f, page, per_page, mode="snapshot")

    async def _count_by_kind(self, f: SuspendedFilter) -> dict[str, int]:
        return await self._run(count_by_kind, f, mode="read")

    async def thread_call_ids(self, thread_id: str) -> set[str]:
        return {r[0] for r in await self._run(_fetch, q.THREAD_CALL_IDS, thread_id, mode="read")}

    # -- audit, deadlines, grants, memory -----------------------------------------------------------
    async def _audit_log(self, f: AuditFilter) -> list[AuditRow]:
        clause, params = f.sql(q.mark)
        limit = "" if f.limit is None else f" LIMIT ${len(params) + 1}"
        sql = f"SELECT {q.AUDIT_COLUMNS} FROM audit_log {clause} ORDER BY seq{limit}"
        rows = await self._run(_fetch, sql, *params, *([] if f.limit is None else [f.limit]), mode="read")
        return [audit_from_db(tuple(r)) for r in rows]

    async def _append_audit(self, rows: list[AuditRow]) -> list[AuditRow]:
        return await self._run(append_audit, rows)

    async def list_overdue(self, now: float, *, limit: int = 100) -> list[PendingCallRow]:
        return [call_from_row(r) for r in await self._run(_fetch, q.LIST_OVERDUE, now, limit, mode="read")]

    async def add_grant(self, grant: GrantRow) -> None:
        g = grant
        match = None if g.args_match is None else dumps(g.args_match)
        expires = None if g.expires_at is None else float(g.expires_at)
        commands = None if g.command_match is None else dumps(g.command_match)
        created = float(g.created_at)
        values = (g.id, g.tool_name, g.scope, g.scope_id, g.agent_id, match, expires, g.created_by, created, commands)
        await self._run(_changed_one, q.INSERT_GRANT, *values, mode="statement")

    async def list_grants(self, now: float, *, tool_name: str | None = None) -> list[GrantRow]:
        if tool_name is None:
            rows = await self._run(_fetch, q.LIVE_GRANTS + q.GRANTS_ORDER, now, mode="read")
        else:
            rows = await self._run(
                _fetch, q.LIVE_GRANTS + " AND tool_name = $2" + q.GRANTS_ORDER, now, tool_name, mode="read"
            )
        return [grant_from_row(r) for r in rows]

    async def delete_grant(self, grant_id: str) -> bool:
        return await self._run(_changed_one, q.DELETE_GRANT, grant_id, mode="statement")

    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        if limit is None:
            rows = await self._run(_fetch, q.MESSAGES, thread_id, mode="read")
        else:
            rows = await self._run(_fetch, q.LAST_MESSAGES, thread_id, limit, mode="read")
        return [json.loads(r[0]) for r in rows]

    async def append_messages(self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]) -> None:
        if not messages:
            return
        now = time.time()
        bodies = [(thread_id, resource_id, dumps(m), now) for m in messages]

        async def script(db: Db) -> None:
            await db.execute(q.TOUCH_THREAD, thread_id, resource_id, now)
            await db.executemany(q.INSERT_MESSAGE, bodies)

        await self._run(script)


async def _fetch(db: Db, sql: str, *args: Any) -> Sequence[Row]:
    return await db.fetch(sql, *args)


async def _changed_one(db: Db, sql: str, *args: Any) -> bool:
    return await db.execute(sql, *args) == 1


async def get_suspended(db: Db, run_id: str) -> SuspendedRunRow | None:
    """The run as listed: like the listing, without its snapshot (``RUN_LIST_COLS``; ``get_run`` reads it)."""
    row = await db.fetchrow(q.RUN_LISTED_BY_ID, run_id)
    if row is None:
        return None
    broken: dict[str, str] = {}
    listed = await with_calls(db, [run_from_row(row)], time.time(), broken)
    if broken:
        raise CorruptRecord(broken[run_id])
    return listed[0] if listed else None


async def find_ids(db: Db, prefix: str, run_id: str | None, limit: int) -> list[str]:
    """A range on the primary key (``prefix_upper_bound``), not LIKE: LIKE has wildcards, is
    case-insensitive in SQLite and uses no index there. Run ids come from the runs and from the
    audit trail (a finished run's rows are gone, its decisions stay): two index ranges."""
    c = await db.collate()
    bound = prefix_upper_bound(prefix)
    params: list[Any] = [prefix] if bound is None else [prefix, bound]

    def rng(col: str) -> str:
        return f"{col}{c} >= $1" + ("" if bound is None else f" AND {col}{c} < $2")

    if run_id is None:
        sql = (
            f"SELECT run_id{c} AS id FROM runs WHERE {rng('run_id')} UNION "
            f"SELECT run_id{c} FROM audit_log WHERE {rng('run_id')} ORDER BY 1 LIMIT ${len(params) + 1}"
        )
        params.append(limit)
    else:
        params += [run_id, limit]
        n = len(params)
        sql = (
            f"SELECT tool_call_id FROM pending_calls WHERE run_id = ${n - 1} AND {rng('tool_call_id')} "
            f"ORDER BY tool_call_id{c} LIMIT ${n}"
        )
    return [r[0] for r in await db.fetch(sql, *params)]
