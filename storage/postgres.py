"""PostgreSQL store (asyncpg): many Warden processes and servers on one database.

A thin driver: what a store does is ``storage.sql_store`` (the decisions ``storage.rules``,
the SQL ``storage.sql_common``); this module holds the pool, typed errors, LISTEN/NOTIFY,
PostgreSQL's own schema pieces and its one-round-trip forms of the hot statements.

The same semantics as ``SqliteStore``: every public method is one transaction;
a decision locks its run row (``SELECT ... FOR UPDATE``) and moves the call
with ``UPDATE ... WHERE status = 'pending'``, so of many processes deciding at
once exactly one wins; the audit log outlives the run; listing reads indexed
columns only and takes totals from counters kept by triggers.

Live updates: triggers ``NOTIFY warden_events`` on commit (a run suspended, a
call decided, a run ended or given back); ``subscribe()`` LISTENs on a
dedicated connection. Why asyncpg rather than psycopg 3: see docs/postgres.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, Literal, NoReturn, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from asyncpg.exceptions import InvalidCachedStatementError, OutdatedSchemaCacheError
from asyncpg.prepared_stmt import PreparedStatement

from storage import rules, stats
from storage import sql_common as q
from storage.audit import hash_template
from storage.errors import (
    StorageError,
    StoreAuthFailed,
    StoreClosed,
    StoreUnavailable,
    UnstorableText,
)
from storage.events import StoreEvent
from storage.pg_pool import Pool
from storage.records import ClaimResult, GrantRow, PendingCallRow, RunRow
from storage.rows import CALL_COLS, call_params, dumps, grant_from_row
from storage.rules import ClaimRequest
from storage.sql_store import LOCK_ORDER, LockOrder, Mode, Script, SqlStore, claim, lock_rank, unstorable

T = TypeVar("T")

SCHEMA_VERSION = q.SCHEMA_VERSION
#: the channel the triggers notify on (one per database).
CHANNEL = "warden_events"
#: serialises migrations of concurrent first starts (pg_advisory_xact_lock key).
_MIGRATION_LOCK = 0x5741524445  # "WARDE"
#: serialises appends to the audit log's hash chain (pg_advisory_xact_lock key).
_AUDIT_LOCK = 0x5741554454  # "WAUDT"
#: SQLSTATE of a claim whose call moved between its read and its write (``warden_claim``, version 9).
_MOVED = "WDN01"
#: SQLSTATEs of a transaction PostgreSQL rolled back whole (deadlock detected, serialization failure):
#: nothing of it was written, so it runs again, up to ``_TX_ATTEMPTS`` times, rather than failing.
_CONFLICTS = frozenset({"40P01", "40001"})
_TX_ATTEMPTS = 6
_log = logging.getLogger("warden.storage")


def _conflict(exc: BaseException) -> bool:
    return isinstance(exc, asyncpg.PostgresError) and exc.sqlstate in _CONFLICTS


#: ``run_counts`` kept, and live updates notified, by one trigger function on ``runs``.
_RUNS_CHANGED = f"""
    CREATE FUNCTION warden_runs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'suspended'
           AND (TG_OP = 'DELETE' OR NEW.status <> 'suspended') THEN
            UPDATE run_counts SET suspended = suspended - 1 WHERE agent_id = OLD.agent_id;
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.status = 'suspended'
           AND (TG_OP = 'INSERT' OR OLD.status <> 'suspended') THEN
            INSERT INTO run_counts (agent_id, suspended) VALUES (NEW.agent_id, 1)
                ON CONFLICT (agent_id) DO UPDATE SET suspended = run_counts.suspended + 1;
        END IF;
        IF TG_OP = 'DELETE' THEN
            PERFORM pg_notify('{CHANNEL}', json_build_object('type', 'ended', 'run_id', OLD.run_id,
                'agent_id', OLD.agent_id)::text);
        ELSIF NEW.status = 'suspended' AND (TG_OP = 'INSERT' OR OLD.status <> 'suspended'
                                           OR OLD.version <> NEW.version) THEN
            PERFORM pg_notify('{CHANNEL}', json_build_object('type', 'suspended', 'run_id', NEW.run_id,
                'agent_id', NEW.agent_id)::text);
        ELSIF NEW.status = 'failed' AND OLD.status <> 'failed' THEN
            PERFORM pg_notify('{CHANNEL}', json_build_object('type', 'ended', 'run_id', NEW.run_id,
                'agent_id', NEW.agent_id)::text);
        END IF;
        RETURN NULL;
    END $$;
    CREATE TRIGGER runs_changed AFTER INSERT OR DELETE OR UPDATE OF status, version ON runs
        FOR EACH ROW EXECUTE FUNCTION warden_runs_changed();
"""
_AUDITED = f"""
    CREATE FUNCTION warden_audited() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('{CHANNEL}', json_build_object('type', 'decided', 'run_id', NEW.run_id,
            'tool_call_id', NEW.tool_call_id, 'decision', NEW.decision)::text);
        RETURN NULL;
    END $$;
    CREATE TRIGGER audit_notify AFTER INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION warden_audited();
"""
# One round trip per decision: ``warden_claim`` applies a decision read and taken in Python
# (compare-and-set on the run and the call as read, the chained audit entries, the lease).
# The entries' canonical JSON comes from Python (``storage.audit.hash_template``); only the
# chain's head (``prev_hash``, ``seq``) is spliced in here, under the chain's advisory lock.
_CLAIM_FUNCTION = f"""
    CREATE FUNCTION warden_claim(
        p_run_id TEXT, p_call_id TEXT,
        p_run_status TEXT, p_run_version INTEGER, p_lease_owner TEXT, p_lease_until DOUBLE PRECISION,
        p_call_status TEXT, p_started_at DOUBLE PRECISION, p_decided_until DOUBLE PRECISION,
        p_new_status TEXT, p_new_decided_until DOUBLE PRECISION, p_decided_by TEXT, p_resume_data TEXT,
        p_edited_args TEXT,
        p_agent_id TEXT, p_tool_name TEXT, p_fingerprint TEXT, p_now DOUBLE PRECISION,
        p_decision TEXT[], p_reason TEXT[], p_actor TEXT[], p_detail TEXT[],
        p_pre BYTEA[], p_mid BYTEA[], p_post BYTEA[],
        p_owner TEXT, p_new_lease_until DOUBLE PRECISION
    ) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
        r RECORD;
        last_seq BIGINT;
        last_hash TEXT;
        h TEXT;
    BEGIN
        SELECT status, version, lease_owner, lease_until INTO r FROM runs WHERE run_id = p_run_id FOR UPDATE;
        IF NOT FOUND OR r.status IS DISTINCT FROM p_run_status OR r.version IS DISTINCT FROM p_run_version
           OR r.lease_owner IS DISTINCT FROM p_lease_owner OR r.lease_until IS DISTINCT FROM p_lease_until THEN
            RETURN FALSE;  -- the run moved since it was read: the caller reads and decides again
        END IF;
        UPDATE pending_calls SET status = p_new_status, started_at = NULL, decided_until = p_new_decided_until,
            decided_by = p_decided_by, resume_data = p_resume_data, edited_args = p_edited_args
            WHERE run_id = p_run_id AND tool_call_id = p_call_id AND status = p_call_status
            AND started_at IS NOT DISTINCT FROM p_started_at AND decided_until = p_decided_until;
        IF NOT FOUND THEN
            RETURN FALSE;
        END IF;
        PERFORM pg_advisory_xact_lock({_AUDIT_LOCK});
        SELECT seq, hash INTO last_seq, last_hash FROM audit_log WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1;
        last_seq := COALESCE(last_seq, 0);
        FOR i IN 1 .. COALESCE(array_length(p_decision, 1), 0) LOOP
            last_seq := last_seq + 1;
            h := 'sha256:' || encode(sha256(p_pre[i] || convert_to(COALESCE(to_json(last_hash)::text, 'null'), 'UTF8')
                || p_mid[i] || convert_to(last_seq::text, 'UTF8') || p_post[i]), 'hex');
            INSERT INTO audit_log (run_id, tool_call_id, agent_id, tool_name, decision, fingerprint, reason,
                                   decided_at, actor, detail, seq, prev_hash, hash)
                VALUES (p_run_id, p_call_id, p_agent_id, p_tool_name, p_decision[i], p_fingerprint, p_reason[i],
                        p_now, p_actor[i], p_detail[i], last_seq, last_hash, h);
            last_hash := h;
        END LOOP;
        IF p_new_lease_until IS NOT NULL THEN
            UPDATE runs SET lease_owner = p_owner, lease_until = p_new_lease_until, status = 'running',
                updated_at = p_now WHERE run_id = p_run_id;
        END IF;
        RETURN TRUE;
    END $$;
"""


def _claim_function(name: str, one: bool) -> str:
    """Version 9's ``warden_claim`` (the audit entries as arrays) or ``warden_claim1`` (one entry, as
    scalars: the usual decision, no arrays to encode and unpack). The run's compare-and-set and its
    lease are one UPDATE (a SELECT ... FOR UPDATE when no lease is taken); when the call then fails
    its compare-and-set, SQLSTATE WDN01 rolls the lease back and the store reads and decides again."""
    entry = "TEXT, p_reason TEXT, p_actor TEXT, p_detail TEXT, p_pre BYTEA, p_mid BYTEA, p_post BYTEA"
    entries = "TEXT[], p_reason TEXT[], p_actor TEXT[], p_detail TEXT[], p_pre BYTEA[], p_mid BYTEA[], p_post BYTEA[]"
    i = "" if one else "[i]"
    append = f"""
            last_seq := last_seq + 1;
            h := 'sha256:' || encode(sha256(p_pre{i} || convert_to(COALESCE(to_json(last_hash)::text, 'null'), 'UTF8')
                || p_mid{i} || convert_to(last_seq::text, 'UTF8') || p_post{i}), 'hex');
            INSERT INTO audit_log (run_id, tool_call_id, agent_id, tool_name, decision, fingerprint, reason,
                                   decided_at, actor, detail, seq, prev_hash, hash)
                VALUES (p_run_id, p_call_id, p_agent_id, p_tool_name, p_decision{i}, p_fingerprint, p_reason{i},
                        p_now, p_actor{i}, p_detail{i}, last_seq, last_hash, h);
            last_hash := h;"""
    if not one:
        append = f"""
        FOR i IN 1 .. COALESCE(array_length(p_decision, 1), 0) LOOP{append}
        END LOOP;"""
    run_as_read = """run_id = p_run_id AND status = p_run_status AND version = p_run_version
            AND lease_owner IS NOT DISTINCT FROM p_lease_owner AND lease_until IS NOT DISTINCT FROM p_lease_until"""
    return f"""
    DROP FUNCTION IF EXISTS {name};
    CREATE FUNCTION {name}(
        p_run_id TEXT, p_call_id TEXT,
        p_run_status TEXT, p_run_version INTEGER, p_lease_owner TEXT, p_lease_until DOUBLE PRECISION,
        p_call_status TEXT, p_started_at DOUBLE PRECISION, p_decided_until DOUBLE PRECISION,
        p_new_status TEXT, p_new_decided_until DOUBLE PRECISION, p_decided_by TEXT, p_resume_data TEXT,
        p_edited_args TEXT,
        p_agent_id TEXT, p_tool_name TEXT, p_fingerprint TEXT, p_now DOUBLE PRECISION,
        p_decision {entry if one else entries},
        p_owner TEXT, p_new_lease_until DOUBLE PRECISION
    ) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
        last_seq BIGINT;
        last_hash TEXT;
        h TEXT;
    BEGIN
        IF p_new_lease_until IS NOT NULL THEN
            UPDATE runs SET lease_owner = p_owner, lease_until = p_new_lease_until, status = 'running',
                updated_at = p_now WHERE {run_as_read};
        ELSE
            PERFORM FROM runs WHERE {run_as_read} FOR UPDATE;
        END IF;
        IF NOT FOUND THEN
            RETURN FALSE;  -- the run moved since it was read: the caller reads and decides again
        END IF;
        UPDATE pending_calls SET status = p_new_status, started_at = NULL, decided_until = p_new_decided_until,
            decided_by = p_decided_by, resume_data = p_resume_data, edited_args = p_edited_args
            WHERE run_id = p_run_id AND tool_call_id = p_call_id AND status = p_call_status
            AND started_at IS NOT DISTINCT FROM p_started_at AND decided_until = p_decided_until;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the call moved since it was read' USING ERRCODE = '{_MOVED}';  -- the lease undone
        END IF;
        PERFORM pg_advisory_xact_lock({_AUDIT_LOCK});
        SELECT seq, hash INTO last_seq, last_hash FROM audit_log ORDER BY seq DESC LIMIT 1;
        last_seq := COALESCE(last_seq, 0);{append}
        RETURN TRUE;
    END $$;
"""


# Version 9, the approval cycle's work on the server:
# - ``run_counts`` and the notifications follow a run's status: the trigger fires on ``UPDATE OF
#   status`` only, not on every snapshot write (``checkpoint``, lease renewals). A run whose version
#   changes keeps its status only while its lease is held ("running"), where the trigger did nothing.
# - the claim functions above (the run's compare-and-set and lease in one UPDATE; ``warden_claim1``).
# - the audit log's ``id`` (a sequence and a second unique index written per entry) goes: entries are
#   ordered, chained and found by ``seq`` (numbered since version 4), now NOT NULL.
_V9 = (
    """
    DROP TRIGGER runs_changed ON runs;
    CREATE TRIGGER runs_changed AFTER INSERT OR DELETE OR UPDATE OF status ON runs
        FOR EACH ROW EXECUTE FUNCTION warden_runs_changed();
    ALTER TABLE audit_log DROP COLUMN id;
    ALTER TABLE audit_log ALTER COLUMN seq SET NOT NULL;
"""
    + _claim_function("warden_claim", one=False)
    + _claim_function("warden_claim1", one=True)
)

_MIGRATIONS: dict[int, str] = q.migrations(
    q.POSTGRES_TYPES,
    runs_triggers=_RUNS_CHANGED,
    audit_triggers=_AUDITED,
    number_audit="""
    UPDATE audit_log SET seq = s.n FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM audit_log) s
        WHERE audit_log.id = s.id;
""",
    v5=_CLAIM_FUNCTION,
    v9=_V9,
)

#: how many runs this store inserted it remembers as written (``PostgresStore._inserted``), and
#: how many characters of snapshot and arguments at most: the oldest are forgotten first.
_REMEMBERED = 1024
_REMEMBERED_CHARS = 8_000_000
_CALL_TYPES = (
    "text text text text text text text text text text integer float8 float8 float8 text text float8 text "
    "integer text text"
).split()
#: a new suspended run and its calls in one statement (``save_suspended`` without an owner).
_SAVE_NEW = (
    f"WITH run AS ({q.INSERT_RUN} RETURNING 1) "
    f"INSERT INTO pending_calls ({CALL_COLS}) SELECT * FROM unnest("
    + ", ".join(f"${i + 9}::{t}[]" for i, t in enumerate(_CALL_TYPES))
    + ") WHERE EXISTS (SELECT 1 FROM run) ON CONFLICT (run_id, tool_call_id) DO NOTHING"
)
#: the same with one call, its values as scalars (the usual case: no arrays to encode and unnest)
_SAVE_NEW_ONE = (
    _SAVE_NEW.split(" SELECT * FROM unnest(")[0]
    + " SELECT "
    + ", ".join(f"${i + 9}::{t}" for i, t in enumerate(_CALL_TYPES))
    + " WHERE EXISTS (SELECT 1 FROM run) ON CONFLICT (run_id, tool_call_id) DO NOTHING"
)
#: one statement: the owner-checked snapshot write and, only when it happened, the applied calls' removal.
_CHECKPOINT = (
    f"WITH run AS ({q.CHECKPOINT} RETURNING 1), "
    "applied AS (DELETE FROM pending_calls WHERE run_id = $3 AND tool_call_id = ANY($5::text[]) "
    "AND EXISTS (SELECT 1 FROM run)) SELECT 1 FROM run"
)
#: the same with at most one applied call as a scalar (the usual checkpoint: no array to encode; NULL: none)
_CHECKPOINT_ONE = _CHECKPOINT.replace("= ANY($5::text[])", "= $5::text")
#: one statement: the run (owner-checked when an owner is named) and its calls go together.
_FINISH = (
    "WITH run AS (DELETE FROM runs WHERE run_id = $1 "
    f"AND ($2::text IS NULL OR ({rules.holds_sql('$2', '$3')})) RETURNING run_id), "
    "calls AS (DELETE FROM pending_calls WHERE run_id = $1 AND EXISTS (SELECT 1 FROM run)) "
    "SELECT 1 FROM run"
)
#: ``mark_started`` as a value (1, or None when nothing was marked): no status text to parse.
_MARK_STARTED = q.MARK_STARTED + " RETURNING 1"
_CLAIM = f"SELECT warden_claim({', '.join(f'${i}' for i in range(1, 28))})"
_CLAIM1 = f"SELECT warden_claim1({', '.join(f'${i}' for i in range(1, 28))})"
#: the live grants of one tool (the gate's lookup, once per gated call).
_GRANTS_OF_TOOL = q.LIVE_GRANTS + " AND tool_name = $2" + q.GRANTS_ORDER


class _Conn(asyncpg.Connection):
    """A pooled connection that prepares the approval cycle's statements once (asyncpg's public
    ``prepare``) and binds and executes them on its protocol: a call skips the connection's
    statement-cache lookup and retry wrapper, and ``PreparedStatement``'s checks and lock
    (~27k of ~100k instructions a statement; the store gives a connection to one call at a time).
    Only this module's constant statements come here (a fixed, small set per connection)."""

    __slots__ = ("_hot",)

    #: whether asyncpg's protocol takes ``bind_execute`` as 0.30-0.32 do; else ``PreparedStatement``'s
    #: public methods (set False on the first call that finds it otherwise: nothing was sent then).
    direct = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hot: dict[str, PreparedStatement] = {}

    async def _prepare_hot(self, sql: str) -> PreparedStatement:
        stmt = self._hot[sql] = await self.prepare(sql)
        return stmt

    async def value(self, sql: str, *args: Any) -> Any:
        """The first column of the first row (None when no row). The usual call (the statement prepared,
        the protocol's own binding) is this one coroutine: no ``_execute_hot`` frame in between."""
        stmt, protocol = self._hot.get(sql), self._protocol
        if stmt is None or protocol is None or not _Conn.direct:
            rows = await self._execute_hot(sql, args, 1)
            return rows[0][0] if rows else None
        try:
            done = protocol.bind_execute(stmt._state, args, "", 1, False, None)
        except (AttributeError, TypeError):  # another asyncpg: raised before anything was sent
            _Conn.direct = False
            rows = await self._execute_hot(sql, args, 1)
        else:
            try:
                rows = await done
            except (InvalidCachedStatementError, OutdatedSchemaCacheError) as exc:
                rows = await self._prepared_again(sql, args, 1, exc)
        return rows[0][0] if rows else None

    async def rows(self, sql: str, *args: Any) -> list[Any]:
        return await self._execute_hot(sql, args, 0)

    async def _execute_hot(self, sql: str, args: tuple[Any, ...], limit: int) -> list[Any]:
        stmt = self._hot.get(sql) or await self._prepare_hot(sql)
        try:
            return await self._bind_execute(stmt, args, limit)
        except (InvalidCachedStatementError, OutdatedSchemaCacheError) as exc:
            return await self._prepared_again(sql, args, limit, exc)

    async def _prepared_again(self, sql: str, args: tuple[Any, ...], limit: int, exc: Exception) -> list[Any]:
        """A statement the server no longer takes as prepared: prepared again and run once more
        (the first attempt failed in the server before changing anything)."""
        if isinstance(exc, OutdatedSchemaCacheError):  # a type changed: asyncpg's caches reloaded, as its own path does
            await self.reload_schema_state()
        # else InvalidCachedStatementError: the schema changed under it (a migration)
        return await self._bind_execute(await self._prepare_hot(sql), args, limit)

    async def _bind_execute(self, stmt: PreparedStatement, args: tuple[Any, ...], limit: int) -> list[Any]:
        protocol = self._protocol  # None once the connection is closed: the public path says so
        if _Conn.direct and protocol is not None:
            try:
                done = protocol.bind_execute(stmt._state, args, "", limit, False, None)
            except (AttributeError, TypeError):  # another asyncpg: raised before anything was sent
                _Conn.direct = False
            else:
                return await done
        rows = await stmt.fetch(*args)
        return rows[:limit] if limit else rows


class _Db:
    """``sql_store.Db`` over an asyncpg connection; each statement checked against ``LOCK_ORDER``."""

    __slots__ = ("conn", "order", "store")
    for_update = " FOR UPDATE"
    ilike = True

    def __init__(self, conn: _Conn, store: PostgresStore) -> None:
        self.conn, self.store = conn, store
        self.order = LockOrder()

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        self.order.take(lock_rank(sql), sql)
        return await self.conn.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        self.order.take(lock_rank(sql), sql)
        return await self.conn.fetchrow(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        self.order.take(lock_rank(sql), sql)
        status = await self.conn.execute(sql, *args)
        count = status.rsplit(" ", 1)[-1]
        return int(count) if count.isdigit() else 0

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.order.take(lock_rank(sql), sql)
        await self.conn.executemany(sql, rows)

    def one_of(self, n: int) -> str:
        return f"= ANY(${n}::text[])"

    def ids(self, values: list[str]) -> list[str]:
        return values

    async def lock_audit(self) -> None:
        self.order.take(len(LOCK_ORDER) - 1, "the audit chain's advisory lock")
        await self.conn.execute("SELECT pg_advisory_xact_lock($1)", _AUDIT_LOCK)

    async def collate(self) -> str:
        """libc's C / POSIX / C.UTF-8 order by code point; ICU (datlocprovider 'i', PostgreSQL 15+) does not:
        there the range compares in "C" (correct, but no index)."""
        if self.store._code_point_order is None:
            provider, collation = await self.conn.fetchrow(
                "SELECT to_jsonb(d) ->> 'datlocprovider', datcollate FROM pg_database d "
                "WHERE datname = current_database()"
            )
            self.store._code_point_order = provider in (None, "c") and str(collation).lower() in (
                "c",
                "posix",
                "c.utf8",
                "c.utf-8",
            )
        return "" if self.store._code_point_order else ' COLLATE "C"'

    async def write_claim(self, run: RunRow, picked: rules.Pick, plan: rules.ClaimPlan, req: ClaimRequest) -> bool:
        """``warden_claim``: the compare-and-set on the run and the call as read, the chained audit
        entries (their canonical JSON from Python, the chain's head spliced in there) and the lease."""
        stored, d, audit = picked.stored, plan.decision, plan.audit
        cuts = [hash_template(e) for e in audit]
        details = [None if e.detail is None else dumps(e.detail) for e in audit]
        entries: tuple[Any, ...]
        if len(audit) == 1:
            e, (pre, mid, post) = audit[0], cuts[0]
            sql, entries = _CLAIM1, (e.decision, e.reason, e.actor, details[0], pre, mid, post)
        else:
            sql = _CLAIM
            entries = (
                [e.decision for e in audit],
                [e.reason for e in audit],
                [e.actor for e in audit],
                details,
                [c[0] for c in cuts],
                [c[1] for c in cuts],
                [c[2] for c in cuts],
            )
        try:
            done = await self.conn.value(
                sql,
                req.run_id,
                stored.tool_call_id,
                run.status,
                run.version,
                run.lease_owner,
                run.lease_until,
                stored.status,
                stored.started_at,
                float(stored.decided_until),
                d.status,
                plan.decided_until,
                d.actor,
                None if d.resume_data is None else dumps(d.resume_data),
                None if d.edited_args is None else dumps(d.edited_args),
                run.agent_id,
                stored.tool_name,
                stored.fingerprint,
                plan.now,
                *entries,
                req.owner,
                plan.lease_until,
            )
        except asyncpg.PostgresError as exc:
            if exc.sqlstate == _MOVED:  # the call moved after the run's check: nothing written, read again
                return False
            raise
        return bool(done)


async def _scrub(conn: asyncpg.Connection) -> None:
    """After a failed call, a full session reset (a message cut short, say); a call that succeeded leaves none to do.

    The store sets no session state (no SET, LISTEN or session advisory lock: the
    subscription has a connection of its own), so a reset after every call would
    only cost one more round trip.
    """
    try:
        await asyncio.wait_for(conn.reset(), 2)
    except BaseException:
        conn.terminate()


def redact(dsn: str) -> str:
    """The DSN without its password, for names and messages."""
    try:
        parts = urlsplit(dsn)
    except ValueError:
        return "postgresql://…"
    if parts.password is None:
        return dsn
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


class PostgresStore(SqlStore):
    """Durable store in one PostgreSQL database, shared by any number of processes.

    ``dsn`` is a libpq URL (``postgresql://user:password@host:port/dbname``).
    ``synchronous_commit="off"`` (default) survives a crash of the process, as
    ``SqliteStore``'s default; ``"on"`` also survives a crash of the server's machine.
    The connection pool opens on first use (or ``await store.setup()``) and
    belongs to the event loop that opened it.
    """

    def __init__(
        self,
        dsn: str,
        *,
        synchronous_commit: Literal["off", "on"] | None = None,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 5.0,
    ) -> None:
        if synchronous_commit not in (None, "off", "on"):
            raise ValueError("synchronous_commit must be 'off' or 'on'")
        self.dsn = dsn
        # As SqliteStore's synchronous=NORMAL: a commit survives a crash of this process (the
        # server has it) but not a crash of the database server's machine within ~0.6 s;
        # "on" (or ?synchronous_commit=on in the URL) waits for the WAL flush, like FULL.
        in_url = "synchronous_commit=" in (urlsplit(dsn).query if "?" in dsn else "")
        self.synchronous_commit = synchronous_commit or (None if in_url else "off")
        self.name = f"PostgresStore({redact(dsn)!r})"
        self.min_size, self.max_size, self.connect_timeout = min_size, max_size, connect_timeout
        self._pool: Pool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opening: asyncio.Future[Pool] | None = None
        self._closed = False
        #: whether the database's collation orders text by code point (``find_ids`` may use the index)
        self._code_point_order: bool | None = None
        #: run id -> the rows of a run this store inserted, as written (the run's, then one per call,
        #: in ``_CLAIM_READ``'s layout): a claim of it decides on these and skips its read; the
        #: compare-and-set in ``warden_claim`` still checks them, and a claim that finds them
        #: stale reads and decides again, as after losing a race.
        self._inserted: dict[str, tuple[int, list[tuple[Any, ...]]]] = {}
        self._inserted_chars = 0
        #: transactions the server rolled back to break a deadlock or a serialization failure, run again
        self.transactions_retried = 0
        #: what the store warned about autovacuum when it opened (None: it cleans Warden's tables)
        self.vacuum_warning: str | None = None

    def __repr__(self) -> str:
        return self.name

    # -- connection -----------------------------------------------------------------
    async def _connection_pool(self) -> Pool:
        if self._closed:
            raise StoreClosed(f"{self.name} is closed")
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a pool serves one event loop: a new loop gets its own
            old, self._pool, self._opening, self._loop = self._pool, None, None, loop
            if old is not None:
                old.terminate()
        if self._pool is not None:
            return self._pool
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())
        try:
            pool = await asyncio.shield(self._opening)
        except BaseException:
            if self._opening is not None and self._opening.done():
                self._opening = None  # the next call tries again (the server may be back)
            raise
        if self._closed:
            await pool.close()
            raise StoreClosed(f"{self.name} is closed")
        self._pool = pool
        return pool

    async def _open(self) -> Pool:
        pool = Pool(self._connect, self.max_size, min_size=self.min_size)
        try:
            first = await pool.get()
        except BaseException as exc:
            raise self._typed(exc, opening=True) from None
        try:
            await self._migrate(first)
            await self._check_vacuum(first)
            pool.put(first)
            if self.min_size > 1:
                more = await asyncio.gather(*(pool.get() for _ in range(min(self.min_size, self.max_size) - 1)))
                for conn in more:
                    pool.put(conn)
        except BaseException as exc:
            pool.terminate()
            if isinstance(exc, StorageError):
                raise
            raise self._typed(exc, opening=True) from None
        return pool

    def _connect(self) -> Awaitable[asyncpg.Connection]:
        return asyncpg.connect(
            self.dsn,
            timeout=self.connect_timeout,
            command_timeout=None,
            server_settings=self._server_settings(),
            connection_class=_Conn,
        )

    def _server_settings(self) -> dict[str, str]:
        settings = {"application_name": "warden"}
        if self.synchronous_commit is not None:
            settings["synchronous_commit"] = self.synchronous_commit
        return settings

    def _typed(self, exc: BaseException, *, opening: bool = False) -> BaseException:
        """A typed, one-line error for a failure of the server or of the connection."""
        if isinstance(exc, StorageError | asyncio.CancelledError) or not isinstance(exc, Exception):
            return exc
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, asyncpg.InvalidPasswordError | asyncpg.InvalidAuthorizationSpecificationError):
            return StoreAuthFailed(f"{self.name}: authentication failed: {text}")
        if isinstance(exc, asyncpg.InvalidCatalogNameError):
            return StoreUnavailable(f"{self.name} cannot be opened: {text}")
        if isinstance(exc, asyncpg.CharacterNotInRepertoireError | asyncpg.UntranslatableCharacterError):
            return UnstorableText(f"{self.name}: text that PostgreSQL cannot store: {text}")
        if isinstance(exc, OSError | socket.gaierror | TimeoutError | asyncpg.exceptions.ConnectionFailureError):
            return StoreUnavailable(f"{self.name}: the server is unreachable: {text}")
        if isinstance(
            exc,
            asyncpg.PostgresConnectionError
            | asyncpg.ConnectionDoesNotExistError
            | asyncpg.CannotConnectNowError
            | asyncpg.TooManyConnectionsError
            | asyncpg.AdminShutdownError,
        ):
            return StoreUnavailable(f"{self.name}: the server is unavailable: {text}")
        if isinstance(exc, asyncpg.InterfaceError) and "closed" in text.lower() and self._closed:
            return StoreClosed(f"{self.name} is closed")
        if opening:
            return StoreUnavailable(f"{self.name} cannot be opened: {text}")
        if isinstance(exc, asyncpg.PostgresError | asyncpg.InterfaceError):
            return StorageError(f"{self.name}: {text}")
        return exc

    async def _check_vacuum(self, conn: asyncpg.Connection) -> None:
        """Warn (in the log, once per pool) when autovacuum will not clean Warden's tables: globally off, or
        off for one of them. ``vacuum_warning`` keeps what was said (None: autovacuum is on)."""
        rows = await conn.fetch(stats.PG_TABLES, list(stats.TABLES))
        autovacuum, track_counts, _ = await conn.fetchrow(stats.PG_SETTINGS)
        off = [r[0] for r in rows if not stats.table_autovacuum(r[5])]
        self.vacuum_warning = stats.vacuum_warning(autovacuum, track_counts, off)
        if self.vacuum_warning is not None:
            _log.warning("%s: %s", self.name, self.vacuum_warning)

    async def _migrate(self, conn: asyncpg.Connection) -> None:
        if await self._schema_current(conn):
            return
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            await conn.execute("CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)")
            current = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM warden_schema")
            self._refuse_newer(current)
            for version in range(current + 1, SCHEMA_VERSION + 1):
                if _MIGRATIONS[version]:  # a version may be SQLite's alone
                    await conn.execute(_MIGRATIONS[version])
                await conn.execute("INSERT INTO warden_schema (version) VALUES ($1)", version)

    async def _schema_current(self, conn: asyncpg.Connection) -> bool:
        if await conn.fetchval("SELECT to_regclass('warden_schema')") is None:
            return False
        current = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM warden_schema")
        self._refuse_newer(current)
        return bool(current == SCHEMA_VERSION)

    async def _call(self, fn: Callable[..., Awaitable[T]], *args: Any, mode: Mode = "write") -> T:
        """``fn(conn, *args)`` on a pooled connection: in a transaction for ``write``, in one read-only
        REPEATABLE READ snapshot for ``snapshot``, else as it comes (one statement is atomic).
        ``fn`` may be ``_Conn.value``: one prepared statement, no closure in between."""
        pool = self._pool
        if pool is None or self._loop is not asyncio.get_running_loop():
            pool = await self._connection_pool()
        attempt = 0
        while True:
            try:
                conn = pool.take() or await pool.get()
                try:
                    if mode == "read" or mode == "statement":
                        return await fn(conn, *args)
                    snapshot = mode == "snapshot"
                    async with conn.transaction(isolation="repeatable_read" if snapshot else None, readonly=snapshot):
                        return await fn(conn, *args)
                except BaseException:
                    await _scrub(conn)
                    raise
                finally:
                    pool.put(conn)
            except (StorageError, asyncio.CancelledError):
                raise
            except Exception as exc:
                attempt += 1
                if not _conflict(exc) or attempt >= _TX_ATTEMPTS:
                    self._raise_typed(exc)
                await self._retrying(exc, attempt)

    async def _retrying(self, exc: Exception, attempt: int) -> None:
        """A transaction rolled back by the server to break a conflict: counted, logged, run again after a
        short random pause (so two that met do not meet again at once). Its audit entries, if any, were
        rolled back with it: the one attempt that commits writes them once."""
        self.transactions_retried += 1
        _log.warning("%s: transaction retried (%s, attempt %d): %s", self.name, exc.sqlstate, attempt, exc)  # type: ignore[attr-defined]
        await asyncio.sleep(random.uniform(0.0, 0.005 * 2**attempt))

    def _raise_typed(self, exc: Exception) -> NoReturn:
        """``exc`` (a store call's failure) raised as the store's typed error, or as it is."""
        cause = exc if isinstance(exc, UnicodeEncodeError) else exc.__cause__
        if isinstance(cause, UnicodeEncodeError):  # raised before the server saw anything: no change made
            raise unstorable(self.name, cause) from None
        typed = self._typed(exc)
        if typed is exc:
            raise exc
        raise typed from exc

    async def _value(self, sql: str, *args: Any) -> Any:
        """The first column of the first row of a one-statement call (None when no row): ``_bound``."""
        rows = await self._bound(sql, args, 1)
        return rows[0][0] if rows else None

    async def _bound(self, sql: str, args: tuple[Any, ...], limit: int) -> list[Any]:
        """``_call(_Conn._execute_hot, sql, args, limit, mode="statement")`` in one coroutine in the usual
        case (a connection idle in the pool, the statement prepared on it, bound on the protocol): the
        cycle's one-statement calls skip a coroutine or two each. Anything else goes through ``_call``."""
        pool = self._pool
        conn = None
        if pool is not None and self._loop is asyncio.get_running_loop() and _Conn.direct:
            conn = pool.take()
        if pool is None or conn is None:
            return await self._call(_Conn._execute_hot, sql, args, limit, mode="statement")
        stmt, protocol = conn._hot.get(sql), conn._protocol
        if stmt is None or protocol is None:  # not prepared on it yet; or closed: ``_call`` says so
            pool.put(conn)
            return await self._call(_Conn._execute_hot, sql, args, limit, mode="statement")
        try:
            try:
                done = protocol.bind_execute(stmt._state, args, "", limit, False, None)
            except (AttributeError, TypeError):  # another asyncpg: nothing sent; the public path from now on
                _Conn.direct = False
                pool.put(conn)
                return await self._call(_Conn._execute_hot, sql, args, limit, mode="statement")
            try:
                try:
                    rows: list[Any] = await done
                except (InvalidCachedStatementError, OutdatedSchemaCacheError) as exc:  # as ``_Conn.value``
                    rows = await conn._prepared_again(sql, args, limit, exc)
            except BaseException:
                await _scrub(conn)
                raise
            finally:
                pool.put(conn)
        except (StorageError, asyncio.CancelledError):
            raise
        except Exception as exc:
            if not _conflict(exc):
                self._raise_typed(exc)
            await self._retrying(exc, 1)  # rolled back by the server: again, through ``_call``'s retries
            return await self._call(_Conn._execute_hot, sql, args, limit, mode="statement")
        return rows

    async def setup(self) -> None:
        """Connect and apply migrations now rather than on first use."""
        await self._connection_pool()

    async def aclose(self) -> None:
        self._closed = True
        self._inserted.clear()
        self._inserted_chars = 0
        opening, self._opening = self._opening, None
        pool, self._pool = self._pool, None
        if pool is None and opening is not None:
            try:
                pool = await opening
            except BaseException:
                pool = None
        if pool is not None:
            try:
                if self._loop is asyncio.get_running_loop():
                    await asyncio.wait_for(pool.close(), 5)
                else:
                    pool.terminate()
            except Exception:
                pool.terminate()

    _claim_mode: Mode = "statement"  # warden_claim compares-and-sets: no transaction held across Python

    async def _run(self, script: Script[T], *args: Any, mode: Mode = "write") -> T:
        return await self._call(lambda conn: script(_Db(conn, self), *args), mode=mode)

    # -- runs -------------------------------------------------------------------------
    async def _save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        if owner is not None:
            await super()._save_suspended(run, pending, owner, applied)
            return
        # A new run and its calls in one statement (one round trip, atomic without a transaction).
        now = time.time()
        params = [call_params(c) for c in pending]
        if len(params) == 1:
            sql, values = _SAVE_NEW_ONE, list(params[0])
        else:
            columns = list(zip(*params, strict=True)) if params else [()] * len(_CALL_TYPES)
            sql, values = _SAVE_NEW, [list(col) for col in columns]
        head = (run.run_id, run.agent_id, run.thread_id, run.resource_id, run.snapshot)
        times = (float(run.created_at or now), float(run.suspended_at or now), now)
        try:
            await self._bound(sql, (*head, *times, *values), 1)
        except StorageError as exc:
            if isinstance(exc.__cause__, asyncpg.UniqueViolationError):
                raise StorageError(f"{self.name}: run {run.run_id!r} already stored") from None
            raise
        self._remember(run, now, params)

    def _remember(self, run: RunRow, now: float, params: list[tuple[Any, ...]]) -> None:
        """Keep the rows of a run just inserted (``_SAVE_NEW``) as the database has them."""
        head = (
            run.run_id,
            run.agent_id,
            run.thread_id,
            run.resource_id,
            "suspended",
            run.snapshot,
            1,
            float(run.created_at or now),
            float(run.suspended_at or now),
            None,
            None,
            None,
        )
        calls: dict[str, tuple[Any, ...]] = {}
        for p in params:
            calls.setdefault(p[1], p)  # ON CONFLICT DO NOTHING keeps the first of a repeated id
        if not calls:
            return
        size = len(run.snapshot) + sum(len(c[6]) + len(c[8] or "") + len(c[7] or "") for c in calls.values())
        if size > _REMEMBERED_CHARS // 4:
            return  # a claim of a run this large reads it (one round trip is little next to the snapshot)
        while self._inserted and (
            len(self._inserted) >= _REMEMBERED or self._inserted_chars + size > _REMEMBERED_CHARS
        ):
            self._forget(next(iter(self._inserted)))
        self._inserted[run.run_id] = (size, [head + c for c in calls.values()])
        self._inserted_chars += size

    def _forget(self, run_id: str) -> list[tuple[Any, ...]] | None:
        """The rows remembered for ``run_id`` (None if none), no longer remembered."""
        entry = self._inserted.pop(run_id, None)
        if entry is None:
            return None
        self._inserted_chars -= entry[0]
        return entry[1]

    async def _claim(self, req: ClaimRequest) -> ClaimResult:
        # Two round trips, no transaction held across Python: read the run and its call(s) in one
        # statement, decide here, then ``warden_claim`` compares-and-sets the run and the call as
        # read, appends the chained audit entries and takes the lease in one statement. When the
        # run or the call moved in between (another decider won), read and decide again.
        # A run this store inserted is decided first on the rows it wrote (one round trip); when
        # those are stale, the compare-and-set fails (or they do not lead to a decision) and the
        # claim reads as usual.
        written = self._forget(req.run_id)
        if written is not None:
            result = await self._run(claim, req, written, mode="statement")
            if result is not None:
                return result
        return await super()._claim(req)

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        marked = await self._value(_MARK_STARTED, time.time(), run_id, tool_call_id, owner)
        return marked is not None

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        if len(applied) > 1:
            done = await self._value(_CHECKPOINT, snapshot, time.time(), run_id, owner, applied)
        else:
            done = await self._value(_CHECKPOINT_ONE, snapshot, time.time(), run_id, owner, *applied or (None,))
        return done is not None

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        if await self._value(_FINISH, run_id, owner, time.time()) is not None:
            return True
        return owner is None or await self._call(_Conn.value, q.RUN_EXISTS, run_id, mode="read") is None

    async def list_grants(self, now: float, *, tool_name: str | None = None) -> list[GrantRow]:
        if tool_name is None:
            return await super().list_grants(now)
        return [grant_from_row(r) for r in await self._bound(_GRANTS_OF_TOOL, (now, tool_name), 0)]

    # -- live updates -----------------------------------------------------------------
    async def subscribe(self) -> AsyncIterator[StoreEvent]:
        """Events as other processes commit them (LISTEN/NOTIFY), until the consumer stops iterating.

        Uses a connection of its own (not one of the pool's), so a slow
        consumer never holds up the store.
        """
        await self._connection_pool()  # typed errors, migrations (the triggers)
        try:
            conn = await asyncpg.connect(self.dsn, timeout=self.connect_timeout)
        except Exception as exc:
            raise self._typed(exc, opening=True) from None
        queue: asyncio.Queue[StoreEvent | None] = asyncio.Queue()

        def on_notify(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
            try:
                data = json.loads(payload)
                queue.put_nowait(StoreEvent.from_dict(data))
            except (ValueError, TypeError, KeyError):
                pass

        def on_lost(_conn: Any) -> None:
            queue.put_nowait(None)

        try:
            await conn.add_listener(CHANNEL, on_notify)
            conn.add_termination_listener(on_lost)
            yield StoreEvent("subscribed")
            while True:
                event = await queue.get()
                if event is None:
                    raise StoreUnavailable(f"{self.name}: the connection of the subscription was lost")
                yield event
        finally:
            if not conn.is_closed():
                try:
                    await asyncio.wait_for(conn.close(), 2)
                except BaseException:
                    conn.terminate()
