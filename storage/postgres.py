"""PostgreSQL store (asyncpg): many Warden processes and servers on one database.

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
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import fields
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from storage.audit import COLUMNS as AUDIT_COLUMNS
from storage.audit import AuditFilter, as_list, hash_template, seal, to_db
from storage.audit import from_db as audit_from_db
from storage.base import DecideFn, prefix_upper_bound
from storage.errors import (
    CorruptRecord,
    SchemaTooNew,
    StorageError,
    StoreAuthFailed,
    StoreClosed,
    StoreUnavailable,
    UnstorableText,
)
from storage.events import StoreEvent
from storage.listing import KINDS, ListKind, Sort, SuspendedFilter, count_sql, listed_kind
from storage.pg_pool import Pool
from storage.records import (
    AuditRow,
    CallKind,
    ClaimResult,
    GrantRow,
    PendingCallRow,
    RunRow,
    SuspendedRunRow,
    actionable,
    lease_live,
)
from storage.rows import (
    CALL_COLS as _CALL_COLS,
)
from storage.rows import (
    GRANT_COLS as _GRANT_COLS,
)
from storage.rows import (
    RUN_COLS as _RUN_COLS,
)
from storage.rows import (
    RUN_LIST_COLS as _RUN_LIST_COLS,
)
from storage.rows import (
    call_from_row as _call,
)
from storage.rows import (
    call_params as _call_params,
)
from storage.rows import (
    dumps as _dumps,
)
from storage.rows import (
    grant_from_row as _grant,
)
from storage.rows import (
    run_from_row as _run,
)

T = TypeVar("T")


def _mark(n: int) -> str:
    return f"${n}"


SCHEMA_VERSION = 5
#: the channel the triggers notify on (one per database).
CHANNEL = "warden_events"
#: serialises migrations of concurrent first starts (pg_advisory_xact_lock key).
_MIGRATION_LOCK = 0x5741524445  # "WARDE"
#: serialises appends to the audit log's hash chain (pg_advisory_xact_lock key).
_AUDIT_LOCK = 0x5741554454  # "WAUDT"

_MIGRATIONS: dict[int, str] = {
    1: f"""
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        thread_id TEXT,
        resource_id TEXT,
        status TEXT NOT NULL,
        snapshot TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        lease_owner TEXT,
        lease_until DOUBLE PRECISION,
        created_at DOUBLE PRECISION NOT NULL,
        suspended_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        error TEXT
    );
    CREATE INDEX runs_by_status ON runs (suspended_at DESC, run_id DESC) WHERE status = 'suspended';
    CREATE INDEX runs_by_agent ON runs (agent_id, suspended_at DESC, run_id DESC) WHERE status = 'suspended';
    CREATE INDEX runs_by_thread ON runs (thread_id, agent_id, suspended_at DESC, run_id DESC)
        WHERE status = 'suspended';
    CREATE INDEX runs_by_resource ON runs (resource_id, agent_id, suspended_at DESC, run_id DESC)
        WHERE status = 'suspended';
    CREATE INDEX runs_leased ON runs (lease_until) WHERE status = 'running';
    CREATE TABLE run_counts (
        agent_id TEXT PRIMARY KEY,
        suspended BIGINT NOT NULL
    );
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
    CREATE TABLE pending_calls (
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        args TEXT NOT NULL,
        suspend_payload TEXT,
        resume_schema TEXT,
        agent_path TEXT NOT NULL,
        seq INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (run_id, tool_call_id)
    );
    CREATE TABLE audit_log (
        id BIGSERIAL PRIMARY KEY,
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        decision TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        reason TEXT,
        actor TEXT,
        decided_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX audit_by_call ON audit_log (run_id, tool_call_id);
    CREATE FUNCTION warden_audited() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('{CHANNEL}', json_build_object('type', 'decided', 'run_id', NEW.run_id,
            'tool_call_id', NEW.tool_call_id, 'decision', NEW.decision)::text);
        RETURN NULL;
    END $$;
    CREATE TRIGGER audit_notify AFTER INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION warden_audited();
    CREATE TABLE threads (
        thread_id TEXT PRIMARY KEY,
        resource_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE messages (
        id BIGSERIAL PRIMARY KEY,
        thread_id TEXT NOT NULL,
        resource_id TEXT,
        body TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX messages_by_thread ON messages (thread_id, id);
    """,
    # Crash recovery (as SQLite's version 2): the "started" mark, a waiting decider's hold, the
    # actor, resume data. Calls decided under version 1 may have started: they read as interrupted.
    2: """
    ALTER TABLE pending_calls ADD COLUMN started_at DOUBLE PRECISION;
    ALTER TABLE pending_calls ADD COLUMN decided_until DOUBLE PRECISION NOT NULL DEFAULT 0;
    ALTER TABLE pending_calls ADD COLUMN decided_by TEXT;
    ALTER TABLE pending_calls ADD COLUMN resume_data TEXT;
    UPDATE pending_calls SET started_at = created_at WHERE status <> 'pending';
    """,
    # Operator power (as SQLite's version 3): approval deadlines, edited arguments, audit details, grants.
    3: """
    ALTER TABLE pending_calls ADD COLUMN expires_at DOUBLE PRECISION;
    ALTER TABLE pending_calls ADD COLUMN edited_args TEXT;
    CREATE INDEX pending_calls_overdue ON pending_calls (expires_at)
        WHERE status = 'pending' AND expires_at IS NOT NULL;
    ALTER TABLE audit_log ADD COLUMN detail TEXT;
    CREATE TABLE grants (
        id TEXT PRIMARY KEY,
        tool_name TEXT NOT NULL,
        scope TEXT NOT NULL,
        scope_id TEXT,
        agent_id TEXT,
        args_match TEXT,
        expires_at DOUBLE PRECISION,
        created_by TEXT,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX grants_by_tool ON grants (tool_name, created_at);
    """,
    # The audit trail's hash chain (as SQLite's version 4); edited arguments and grant ids live
    # in ``detail`` (version 3).
    4: """
    ALTER TABLE audit_log ADD COLUMN seq BIGINT;
    ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
    ALTER TABLE audit_log ADD COLUMN hash TEXT;
    UPDATE audit_log SET seq = s.n FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM audit_log) s
        WHERE audit_log.id = s.id;
    CREATE UNIQUE INDEX audit_by_seq ON audit_log (seq);
    CREATE INDEX audit_by_agent ON audit_log (agent_id, seq);
    """,
    # One round trip per decision: ``warden_claim`` applies a decision read and taken in Python
    # (compare-and-set on the run and the call as read, the chained audit entries, the lease).
    # The entries' canonical JSON comes from Python (``storage.audit.hash_template``); only the
    # chain's head (``prev_hash``, ``seq``) is spliced in here, under the chain's advisory lock.
    5: f"""
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
    -- the picker's filters by tool and kind (``storage.listing``) find pending calls by index.
    CREATE INDEX pending_calls_by_tool ON pending_calls (tool_name, run_id) WHERE status = 'pending';
    CREATE INDEX pending_calls_by_kind ON pending_calls (kind, run_id) WHERE status = 'pending';
    """,
}

#: a claim reads again when its run moved between its read and its write (another decider won).
_CLAIM_ATTEMPTS = 50
#: how many runs this store inserted it remembers as written (``PostgresStore._inserted``), and
#: how many characters of snapshot and arguments at most: the oldest are forgotten first.
_REMEMBERED = 1024
_REMEMBERED_CHARS = 8_000_000
_N_RUN_COLS = len(_RUN_COLS.split(","))
#: the run and its call(s) (one, or all when no call is named) in one statement.
_CLAIM_READ = (
    f"SELECT {', '.join('r.' + c.strip() for c in _RUN_COLS.split(','))}, "
    f"{', '.join('c.' + c.strip() for c in _CALL_COLS.split(','))} FROM runs r LEFT JOIN pending_calls c "
    "ON c.run_id = r.run_id AND ($2::text IS NULL OR c.tool_call_id = $2) WHERE r.run_id = $1"
)
_CALL_TYPES = (
    "text text text text text text text text text text integer float8 float8 float8 text text float8 text".split()
)
#: a new suspended run and its calls in one statement (``save_suspended`` without an owner).
_SAVE_NEW = (
    "WITH run AS (INSERT INTO runs (run_id, agent_id, thread_id, resource_id, status, snapshot, version, "
    "created_at, suspended_at, updated_at) VALUES ($1, $2, $3, $4, 'suspended', $5, 1, $6, $7, $8) RETURNING 1) "
    f"INSERT INTO pending_calls ({_CALL_COLS}) SELECT * FROM unnest("
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
_CALL_MARKS = ", ".join(f"${i}" for i in range(1, 19))
_AUDIT_INSERT = (
    f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({', '.join(f'${i + 1}' for i in range(len(fields(AuditRow))))})"
)


async def _append_audit(db: asyncpg.Connection, rows: list[AuditRow]) -> list[AuditRow]:
    """Append to the hash chain inside the caller's transaction, holding the chain's lock until it ends."""
    await db.execute("SELECT pg_advisory_xact_lock($1)", _AUDIT_LOCK)
    last = await db.fetchrow("SELECT seq, hash FROM audit_log WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1")
    sealed = seal(rows, last[0] if last else 0, last[1] if last else None)
    await db.executemany(_AUDIT_INSERT, [to_db(r) for r in sealed])
    return sealed


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


class PostgresStore:
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

    async def _migrate(self, conn: asyncpg.Connection) -> None:
        if await self._schema_current(conn):
            return
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            await conn.execute("CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)")
            current = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM warden_schema")
            self._refuse_newer(current)
            for version in range(current + 1, SCHEMA_VERSION + 1):
                await conn.execute(_MIGRATIONS[version])
                await conn.execute("INSERT INTO warden_schema (version) VALUES ($1)", version)

    async def _schema_current(self, conn: asyncpg.Connection) -> bool:
        if await conn.fetchval("SELECT to_regclass('warden_schema')") is None:
            return False
        current = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM warden_schema")
        self._refuse_newer(current)
        return bool(current == SCHEMA_VERSION)

    def _refuse_newer(self, current: int) -> None:
        if current > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{self.name} has schema version {current}, newer than this Warden "
                f"(knows {SCHEMA_VERSION}); upgrade Warden to use it"
            )

    async def _call(
        self, fn: Callable[[asyncpg.Connection], Awaitable[T]], *, tx: bool = True, isolation: str | None = None
    ) -> T:
        pool = await self._connection_pool()
        try:
            conn = await pool.get()
            try:
                if not tx:
                    return await fn(conn)
                async with conn.transaction(isolation=isolation, readonly=isolation is not None):
                    return await fn(conn)
            except BaseException:
                await _scrub(conn)
                raise
            finally:
                pool.put(conn)
        except (StorageError, asyncio.CancelledError):
            raise
        except Exception as exc:
            cause = exc if isinstance(exc, UnicodeEncodeError) else exc.__cause__
            if isinstance(cause, UnicodeEncodeError):  # raised before the server saw anything: no change made
                bad = cause.object[cause.start : cause.end] if isinstance(cause.object, str) else ""
                shown = "".join(f"\\u{ord(ch):04x}" for ch in bad)
                raise UnstorableText(
                    f"{self.name}: text with a lone surrogate ({shown}) cannot be stored or looked up"
                ) from None
            typed = self._typed(exc)
            if typed is exc:
                raise
            raise typed from exc

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

    # -- runs -------------------------------------------------------------------------
    async def save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], *, owner: str | None = None, applied: list[str] | None = None
    ) -> None:
        now = time.time()
        params = [_call_params(c) for c in pending]

        if owner is None:
            # A new run and its calls in one statement (one round trip, atomic without a transaction).
            if len(params) == 1:
                sql, values = _SAVE_NEW_ONE, list(params[0])
            else:
                columns = list(zip(*params, strict=True)) if params else [()] * len(_CALL_TYPES)
                sql, values = _SAVE_NEW, [list(col) for col in columns]

            async def insert(db: asyncpg.Connection) -> None:
                try:
                    await db.execute(
                        sql,
                        run.run_id,
                        run.agent_id,
                        run.thread_id,
                        run.resource_id,
                        run.snapshot,
                        float(run.created_at or now),
                        float(run.suspended_at or now),
                        now,
                        *values,
                    )
                except asyncpg.UniqueViolationError:
                    raise StorageError(f"{self.name}: run {run.run_id!r} already stored") from None

            await self._call(insert, tx=False)
            self._remember(run, now, params)
            return

        async def body(db: asyncpg.Connection) -> None:
            done = await db.execute(
                "UPDATE runs SET status = 'suspended', snapshot = $1, version = version + 1, "
                "lease_owner = NULL, lease_until = NULL, suspended_at = $2, updated_at = $3 "
                "WHERE run_id = $4 AND lease_owner = $5 AND lease_until >= $3",
                run.snapshot,
                float(run.suspended_at or now),
                now,
                run.run_id,
                owner,
            )
            if done != "UPDATE 1":
                raise StorageError(f"{self.name}: lost the lease on run {run.run_id!r}; not saved")
            if applied:
                await db.execute(
                    "DELETE FROM pending_calls WHERE run_id = $1 AND tool_call_id = ANY($2::text[])",
                    run.run_id,
                    list(applied),
                )
            if params:
                await db.executemany(
                    f"INSERT INTO pending_calls ({_CALL_COLS}) VALUES ({_CALL_MARKS}) "
                    "ON CONFLICT (run_id, tool_call_id) DO NOTHING",
                    params,
                )

        await self._call(body)

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

    async def claim(
        self,
        run_id: str,
        tool_call_id: str | None,
        *,
        kinds: tuple[CallKind, ...],
        decide: DecideFn,
        owner: str,
        lease_seconds: float,
    ) -> ClaimResult:
        # Two round trips, no transaction held across Python: read the run and its call(s) in one
        # statement, decide here, then ``warden_claim`` compares-and-sets the run and the call as
        # read, appends the chained audit entries and takes the lease in one statement. When the
        # run or the call moved in between (another decider won), read and decide again.
        # A run this store inserted is decided first on the rows it wrote (one round trip); when
        # those are stale, the compare-and-set fails (or they do not lead to a decision) and the
        # claim reads as usual.
        written = self._forget(run_id)
        if written is not None:
            result = await self._call(
                lambda db: self._claim_once(
                    db, run_id, tool_call_id, kinds, decide, owner, lease_seconds, written=written
                ),
                tx=False,
            )
            if result is not None:
                return result
        for _ in range(_CLAIM_ATTEMPTS):
            result = await self._call(
                lambda db: self._claim_once(db, run_id, tool_call_id, kinds, decide, owner, lease_seconds), tx=False
            )
            if result is not None:
                return result
        raise StorageError(f"{self.name}: run {run_id!r} kept changing while it was decided; nothing was decided")

    @staticmethod
    async def _claim_once(
        db: asyncpg.Connection,
        run_id: str,
        tool_call_id: str | None,
        kinds: tuple[CallKind, ...],
        decide: DecideFn,
        owner: str,
        lease_seconds: float,
        *,
        written: list[tuple[Any, ...]] | None = None,
    ) -> ClaimResult | None:
        """One read, decide, compare-and-set; None when the run moved in between.

        ``written``: the rows as this store inserted them, used instead of the read; anything but a
        decision on them (no such call, not pending, ``decide`` refusing) is None as well, so the
        caller reads the rows as they are now and answers from those.
        """

        async def audited() -> bool:
            if tool_call_id is None:
                return False
            found = await db.fetchval(
                "SELECT 1 FROM audit_log WHERE run_id = $1 AND tool_call_id = $2 LIMIT 1", run_id, tool_call_id
            )
            return found is not None

        now = time.time()
        if written is not None:
            rows: Any = [r for r in written if tool_call_id is None or r[_N_RUN_COLS + 1] == tool_call_id]
        else:
            rows = await db.fetch(_CLAIM_READ, run_id, tool_call_id)
        if not rows:
            return None if written is not None else ClaimResult("no_run", audited=await audited())
        run = _run(rows[0][:_N_RUN_COLS])
        by_id = {r[_N_RUN_COLS + 1]: _call(r[_N_RUN_COLS:]) for r in rows if r[_N_RUN_COLS] is not None}
        if tool_call_id is not None:
            if tool_call_id not in by_id:
                return None if written is not None else ClaimResult("no_call", audited=await audited())
            stored = by_id[tool_call_id]
            current = actionable(stored, run, now)
            if current is None:
                return None if written is not None else ClaimResult("not_pending", call=stored, audited=True)
        else:
            open_calls = [c for c in (actionable(c, run, now) for c in by_id.values()) if c is not None]
            candidates = [c for c in open_calls if c.kind in kinds]
            if not candidates:
                if written is not None:
                    return None
                return ClaimResult("no_call_of_kind" if open_calls else "no_call", other_kinds=bool(open_calls))
            current = max(candidates, key=lambda c: (c.created_at, c.seq))
            stored = by_id[current.tool_call_id]
        if written is None:
            decision = decide(current, run)
        else:
            try:
                decision = decide(current, run)
            except Exception:
                return None  # perhaps refused for what is no longer so: decided again on the rows as they are
        takes_lease = not lease_live(run, now)
        entries: list[tuple[str, str | None, str | None, dict[str, Any] | None]] = []
        if stored.status != "pending" and current.kind != "interrupted":
            entries.append(("returned-to-pending", "lease expired before the tool started", None, None))
        label = "re-executed" if current.kind == "interrupted" and decision.status != "declined" else None
        entries.append((label or decision.audit_label, decision.reason, decision.actor, decision.detail))
        audit = [
            AuditRow(run_id, stored.tool_call_id, run.agent_id, stored.tool_name, d, stored.fingerprint, r, now, a, x)
            for d, r, a, x in entries
        ]
        cuts = [hash_template(e) for e in audit]
        done = await db.fetchval(
            "SELECT warden_claim($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, "
            "$19, $20, $21, $22, $23, $24, $25, $26, $27)",
            run_id,
            stored.tool_call_id,
            run.status,
            run.version,
            run.lease_owner,
            run.lease_until,
            stored.status,
            stored.started_at,
            float(stored.decided_until),
            decision.status,
            0.0 if takes_lease else now + lease_seconds,
            decision.actor,
            None if decision.resume_data is None else _dumps(decision.resume_data),
            None if decision.edited_args is None else _dumps(decision.edited_args),
            run.agent_id,
            stored.tool_name,
            stored.fingerprint,
            now,
            [e.decision for e in audit],
            [e.reason for e in audit],
            [e.actor for e in audit],
            [None if e.detail is None else _dumps(e.detail) for e in audit],
            [c[0] for c in cuts],
            [c[1] for c in cuts],
            [c[2] for c in cuts],
            owner,
            now + lease_seconds if takes_lease else None,
        )
        if not done:
            return None
        if takes_lease:
            run.status, run.lease_owner, run.lease_until = "running", owner, now + lease_seconds
            return ClaimResult("ok", call=current, run=run)
        return ClaimResult("ok", call=current, run=None)

    async def acquire_lease(
        self, run_id: str, owner: str, lease_seconds: float, *, waiting_call: str | None = None
    ) -> RunRow | None:
        async def body(db: asyncpg.Connection) -> RunRow | None:
            now = time.time()
            row = await db.fetchrow(
                "UPDATE runs SET lease_owner = $1, lease_until = $2, status = 'running', updated_at = $3 "
                "WHERE run_id = $4 AND status <> 'failed' AND (lease_owner IS NULL OR lease_until < $3) "
                f"RETURNING {_RUN_COLS}",
                owner,
                now + lease_seconds,
                now,
                run_id,
            )
            if row is None:
                if waiting_call is not None:
                    await db.execute(
                        "UPDATE pending_calls SET decided_until = $1 WHERE run_id = $2 AND tool_call_id = $3 "
                        "AND status <> 'pending' AND started_at IS NULL",
                        now + lease_seconds,
                        run_id,
                        waiting_call,
                    )
                return None
            return _run(row)

        return await self._call(body)

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        async def body(db: asyncpg.Connection) -> bool:
            done = await db.execute(
                "UPDATE runs SET lease_until = $1 WHERE run_id = $2 AND lease_owner = $3",
                time.time() + lease_seconds,
                run_id,
                owner,
            )
            return bool(done == "UPDATE 1")

        return await self._call(body, tx=False)

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        async def body(db: asyncpg.Connection) -> bool:
            now = time.time()
            done = await db.execute(
                "UPDATE pending_calls SET started_at = $1 WHERE run_id = $2 AND tool_call_id = $3 "
                "AND status <> 'pending' AND EXISTS (SELECT 1 FROM runs WHERE run_id = $2 AND lease_owner = $4 "
                "AND lease_until >= $1)",
                now,
                run_id,
                tool_call_id,
                owner,
            )
            return bool(done == "UPDATE 1")

        return await self._call(body, tx=False)

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        # One statement: the owner-checked snapshot write and, only when it happened, the applied calls' removal.
        async def body(db: asyncpg.Connection) -> bool:
            done = await db.fetchval(
                "WITH run AS (UPDATE runs SET snapshot = $1, version = version + 1, updated_at = $2 "
                "WHERE run_id = $3 AND lease_owner = $4 AND lease_until >= $2 RETURNING 1), "
                "applied AS (DELETE FROM pending_calls WHERE run_id = $3 AND tool_call_id = ANY($5::text[]) "
                "AND EXISTS (SELECT 1 FROM run)) SELECT count(*) FROM run",
                snapshot,
                time.time(),
                run_id,
                owner,
                list(applied),
            )
            return bool(done == 1)

        return await self._call(body, tx=False)

    async def release(self, run_id: str, owner: str, *, reset_call: str | None = None) -> None:
        async def body(db: asyncpg.Connection) -> None:
            now = time.time()
            if reset_call is not None:
                done = await db.execute(
                    "UPDATE pending_calls SET status = 'pending', decided_until = 0, resume_data = NULL, "
                    "edited_args = NULL "
                    "WHERE run_id = $1 AND tool_call_id = $2 AND status NOT IN ('pending', 'expired') "
                    "AND started_at IS NULL",
                    run_id,
                    reset_call,
                )
                if done != "UPDATE 0":
                    found = await db.fetchrow(
                        "SELECT r.agent_id, c.tool_name, c.fingerprint FROM pending_calls c JOIN runs r "
                        "USING (run_id) WHERE c.run_id = $1 AND c.tool_call_id = $2",
                        run_id,
                        reset_call,
                    )
                    if found is not None:
                        agent_id, tool, fp = found
                        reason = "decision interrupted before it was applied"
                        await _append_audit(
                            db, [AuditRow(run_id, reset_call, agent_id, tool, "withdrawn", fp, reason, now)]
                        )
            # A run without calls left (its step's results are stored) stays "running", free to continue.
            await db.execute(
                "UPDATE runs SET status = CASE WHEN EXISTS (SELECT 1 FROM pending_calls WHERE run_id = $1 "
                "AND status <> 'expired') "
                "THEN 'suspended' ELSE 'running' END, lease_owner = NULL, lease_until = 0, updated_at = $2 "
                "WHERE run_id = $1 AND lease_owner = $3",
                run_id,
                now,
                owner,
            )

        await self._call(body)

    async def list_expired(self, *, limit: int = 100) -> list[RunRow]:
        async def body(db: asyncpg.Connection) -> list[RunRow]:
            rows = await db.fetch(
                f"SELECT {_RUN_COLS} FROM runs WHERE status = 'running' AND lease_until < $1 LIMIT $2",
                time.time(),
                limit,
            )
            return [_run(r) for r in rows]

        return await self._call(body, tx=False)

    async def settle(self, run_id: str) -> int:
        async def body(db: asyncpg.Connection) -> int:
            now = time.time()
            row = await db.fetchrow(
                "SELECT agent_id FROM runs WHERE run_id = $1 AND status <> 'failed' "
                "AND (lease_owner IS NULL OR lease_until < $2) FOR UPDATE",
                run_id,
                now,
            )
            if row is None:
                return 0
            returned = await db.fetch(
                "UPDATE pending_calls SET status = 'pending', decided_until = 0, resume_data = NULL, "
                "edited_args = NULL "
                "WHERE run_id = $1 AND status NOT IN ('pending', 'expired') AND started_at IS NULL "
                "AND decided_until < $2 RETURNING tool_call_id, tool_name, fingerprint",
                run_id,
                now,
            )
            if returned:
                reason = "lease expired before the tool started"
                await _append_audit(
                    db,
                    [AuditRow(run_id, r[0], row[0], r[1], "returned-to-pending", r[2], reason, now) for r in returned],
                )
            await db.execute(
                "UPDATE runs SET status = CASE WHEN EXISTS (SELECT 1 FROM pending_calls WHERE run_id = $1 "
                "AND status <> 'expired') "
                "THEN 'suspended' ELSE 'running' END, lease_owner = NULL, lease_until = 0, updated_at = $2 "
                "WHERE run_id = $1",
                run_id,
                now,
            )
            return len(returned)

        return await self._call(body)

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        # One statement: the run (owner-checked when an owner is named) and its calls go together.
        async def body(db: asyncpg.Connection) -> bool:
            done = await db.fetchval(
                "WITH run AS (DELETE FROM runs WHERE run_id = $1 "
                "AND ($2::text IS NULL OR (lease_owner = $2 AND lease_until >= $3)) RETURNING run_id), "
                "calls AS (DELETE FROM pending_calls WHERE run_id = $1 AND EXISTS (SELECT 1 FROM run)) "
                "SELECT count(*) FROM run",
                run_id,
                owner,
                time.time(),
            )
            if done == 1 or owner is None:
                return True
            return await db.fetchval("SELECT 1 FROM runs WHERE run_id = $1", run_id) is None

        return await self._call(body, tx=False)

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        async def body(db: asyncpg.Connection) -> bool:
            now = time.time()
            done = await db.execute(
                "UPDATE runs SET status = 'failed', snapshot = $1, error = $2, lease_owner = NULL, "
                "lease_until = NULL, version = version + 1, updated_at = $3 WHERE run_id = $4 "
                "AND ($5::text IS NULL OR (lease_owner = $5 AND lease_until >= $3))",
                snapshot,
                error,
                now,
                run_id,
                owner,
            )
            if done == "UPDATE 1":
                return True
            return await db.fetchval("SELECT 1 FROM runs WHERE run_id = $1", run_id) is None

        return await self._call(body)

    async def get_run(self, run_id: str) -> RunRow | None:
        async def body(db: asyncpg.Connection) -> RunRow | None:
            row = await db.fetchrow(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = $1", run_id)
            return None if row is None else _run(row)

        return await self._call(body, tx=False)

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        async def body(db: asyncpg.Connection) -> list[PendingCallRow]:
            rows = await db.fetch(
                f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id = $1 ORDER BY created_at, seq", run_id
            )
            return [_call(r) for r in rows]

        return await self._call(body, tx=False)

    async def find_ids(self, prefix: str, *, run_id: str | None = None, limit: int = 10) -> list[str]:
        # A range on the primary key, not LIKE (wildcards, and LIKE uses a btree only under the C
        # collation). The range is code-point order: in a database whose collation is not C-like,
        # compare in "C" (correct, but no index).
        async def body(db: asyncpg.Connection) -> list[str]:
            if self._code_point_order is None:
                # libc's C / POSIX / C.UTF-8 order by code point; ICU (datlocprovider 'i', PostgreSQL 15+) does not
                provider, collation = await db.fetchrow(
                    "SELECT to_jsonb(d) ->> 'datlocprovider', datcollate FROM pg_database d "
                    "WHERE datname = current_database()"
                )
                self._code_point_order = provider in (None, "c") and str(collation).lower() in (
                    "c",
                    "posix",
                    "c.utf8",
                    "c.utf-8",
                )
            c = "" if self._code_point_order else ' COLLATE "C"'
            bound = prefix_upper_bound(prefix)
            params: list[Any] = [prefix] if bound is None else [prefix, bound]
            if run_id is None:
                # the runs, and the finished ones the audit trail names (two index ranges)
                def rng(col: str) -> str:
                    return f"{col}{c} >= $1" + ("" if bound is None else f" AND {col}{c} < $2")

                sql = (
                    f"SELECT run_id{c} AS id FROM runs WHERE {rng('run_id')} UNION "
                    f"SELECT run_id{c} FROM audit_log WHERE {rng('run_id')} ORDER BY 1 LIMIT ${len(params) + 1}"
                )
                params.append(limit)
            else:
                upper = "" if bound is None else f" AND tool_call_id{c} < $2"
                params += [run_id, limit]
                n = len(params)
                sql = (
                    f"SELECT tool_call_id FROM pending_calls WHERE run_id = ${n - 1} AND tool_call_id{c} >= $1{upper} "
                    f"ORDER BY tool_call_id{c} LIMIT ${n}"
                )
            return [r[0] for r in await db.fetch(sql, *params)]

        return await self._call(body, tx=False)

    async def get_suspended(self, run_id: str) -> SuspendedRunRow | None:
        async def body(db: asyncpg.Connection) -> SuspendedRunRow | None:
            row = await db.fetchrow(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = $1", run_id)
            if row is None:
                return None
            broken: dict[str, str] = {}
            listed = await self._with_calls(db, [_run(row)], time.time(), broken)
            if broken:
                raise CorruptRecord(broken[run_id])
            return listed[0] if listed else None

        return await self._call(body, tx=False)

    @staticmethod
    async def _with_calls(
        db: asyncpg.Connection, runs: list[RunRow], now: float, broken: dict[str, str]
    ) -> list[SuspendedRunRow]:
        """The runs that have an actionable call now, with those calls (never a run with none)."""
        runs = [r for r in runs if r.status != "failed" and not lease_live(r, now)]
        calls: dict[str, list[PendingCallRow]] = {r.run_id: [] for r in runs}
        if runs:
            for crow in await db.fetch(
                f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id = ANY($1::text[]) ORDER BY created_at, seq",
                list(calls),
            ):
                try:
                    calls[crow[0]].append(_call(crow))
                except CorruptRecord as exc:  # listed as unreadable; the other runs are unaffected
                    broken.setdefault(crow[0], exc.message)
        out = []
        for r in runs:
            open_calls = [c for c in (actionable(c, r, now) for c in calls[r.run_id]) if c is not None]
            if open_calls or r.run_id in broken:
                out.append(SuspendedRunRow(run=r, calls=open_calls, error=broken.get(r.run_id)))
        return out

    async def list_suspended(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
        query: str | None = None,
        tool_name: str | None = None,
        kind: ListKind | None = None,
        sort: Sort = "age",
    ) -> tuple[list[SuspendedRunRow], int]:
        f = SuspendedFilter(agent_id, thread_id, resource_id, query, tool_name, kind, sort)

        # Read only: a run whose lease expired (a process died or stalled while applying a
        # decision) is listed from what its rows say now; nothing is written. One REPEATABLE READ
        # snapshot, so the total and the page agree.
        async def body(db: asyncpg.Connection) -> tuple[list[SuspendedRunRow], int]:
            now = time.time()
            broken: dict[str, str] = {}
            # Runs left "running" under an expired lease: usually none (the index on lease_until finds
            # them). Their decided calls read as pending at this moment, so the call filters run here.
            exact = SuspendedFilter(f.agent_id, f.thread_id, f.resource_id)
            params: list[Any] = [now]
            extra = exact.sql(_mark, params)
            expired = [
                narrowed
                for row in await self._with_calls(
                    db,
                    [
                        _run(r)
                        for r in await db.fetch(
                            f"SELECT {_RUN_LIST_COLS} FROM runs WHERE status = 'running' AND lease_until < $1{extra}",
                            *params,
                        )
                    ],
                    now,
                    broken,
                )
                if (row.error is not None or f.run_matches(row.run, row.calls)) and (narrowed := f.narrow(row))
            ]
            params = []
            extra = f.sql(_mark, params, ilike=True)
            if f == exact and f.thread_id is None and f.resource_id is None:
                # Counts of whole agents are kept by triggers: the total stays O(agents), not O(runs).
                if f.agent_id is None:
                    total = await db.fetchval("SELECT COALESCE(SUM(suspended), 0) FROM run_counts")
                else:
                    total = await db.fetchval("SELECT suspended FROM run_counts WHERE agent_id = $1", f.agent_id) or 0
            else:
                total = await db.fetchval(f"SELECT COUNT(*) FROM runs WHERE status = 'suspended'{extra}", *params)
            total = int(total) + len(expired)
            # The listing never reads snapshot JSON: everything shown is in indexed columns.
            start, stop = page * per_page, (page + 1) * per_page
            fetch_from = max(0, start - len(expired))
            n = len(params)
            rows = await db.fetch(
                f"SELECT {_RUN_LIST_COLS} FROM runs WHERE status = 'suspended'{extra} "
                f"ORDER BY {f.order_sql()} LIMIT ${n + 1} OFFSET ${n + 2}",
                *params,
                stop - fetch_from,
                fetch_from,
            )
            listed = await self._with_calls(db, [_run(r) for r in rows], now, broken)
            suspended = [r for r in (f.narrow(x) for x in listed) if r]
            merged = f.ordered([*expired, *suspended]) if expired else suspended
            skip = start - fetch_from
            return merged[skip : skip + per_page], total

        return await self._call(body, isolation="repeatable_read")

    async def count_suspended_by_kind(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: str | None = None,
        tool_name: str | None = None,
    ) -> dict[str, int]:
        f = SuspendedFilter(agent_id, thread_id, resource_id, query, tool_name)

        async def body(db: asyncpg.Connection) -> dict[str, int]:
            params: list[Any] = []
            sql = count_sql(f, _mark, params, ilike=True)
            out = dict.fromkeys(KINDS, 0)
            for stored, n in await db.fetch(sql, *params):
                out[listed_kind(stored)] += int(n)
            return out

        return await self._call(body, tx=False)

    async def audit_log(
        self,
        run_id: str | None = None,
        tool_call_id: str | None = None,
        *,
        agent_id: str | None = None,
        actor: str | None = None,
        since: float | None = None,
        decision: str | None = None,
        after: int = 0,
        limit: int | None = None,
    ) -> list[AuditRow]:
        f = AuditFilter(run_id, tool_call_id, agent_id, actor, since, decision, after, limit)

        async def body(db: asyncpg.Connection) -> list[AuditRow]:
            clause, params = f.sql(lambda n: f"${n}")
            rows = await db.fetch(
                f"SELECT {AUDIT_COLUMNS} FROM audit_log {clause} ORDER BY seq LIMIT ${len(params) + 1}",
                *params,
                f.limit,
            )
            return [audit_from_db(tuple(r)) for r in rows]

        return await self._call(body, tx=False)

    async def append_audit(self, entries: AuditRow | Iterable[AuditRow]) -> list[AuditRow]:
        rows = as_list(entries)

        async def body(db: asyncpg.Connection) -> list[AuditRow]:
            return await _append_audit(db, rows)

        return await self._call(body)

    # -- deadlines and grants -------------------------------------------------------------
    async def list_overdue(self, now: float, *, limit: int = 100) -> list[PendingCallRow]:
        async def body(db: asyncpg.Connection) -> list[PendingCallRow]:
            rows = await db.fetch(
                f"SELECT {_CALL_COLS} FROM pending_calls WHERE status = 'pending' AND expires_at IS NOT NULL "
                "AND expires_at < $1 AND kind = 'approval' ORDER BY expires_at LIMIT $2",
                now,
                limit,
            )
            return [_call(r) for r in rows]

        return await self._call(body, tx=False)

    async def add_grant(self, grant: GrantRow) -> None:
        g = grant

        async def body(db: asyncpg.Connection) -> None:
            await db.execute(
                f"INSERT INTO grants ({_GRANT_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                g.id,
                g.tool_name,
                g.scope,
                g.scope_id,
                g.agent_id,
                None if g.args_match is None else _dumps(g.args_match),
                None if g.expires_at is None else float(g.expires_at),
                g.created_by,
                float(g.created_at),
            )

        await self._call(body)

    async def list_grants(self, now: float, *, tool_name: str | None = None) -> list[GrantRow]:
        async def body(db: asyncpg.Connection) -> list[GrantRow]:
            by_tool = "" if tool_name is None else " AND tool_name = $2"
            rows = await db.fetch(
                f"SELECT {_GRANT_COLS} FROM grants WHERE (expires_at IS NULL OR expires_at > $1){by_tool} "
                "ORDER BY created_at, id",
                *((now,) if tool_name is None else (now, tool_name)),
            )
            return [_grant(r) for r in rows]

        return await self._call(body, tx=False)

    async def delete_grant(self, grant_id: str) -> bool:
        async def body(db: asyncpg.Connection) -> bool:
            return bool(await db.execute("DELETE FROM grants WHERE id = $1", grant_id) == "DELETE 1")

        return await self._call(body)

    # -- memory -----------------------------------------------------------------------
    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        async def body(db: asyncpg.Connection) -> list[dict[str, Any]]:
            if limit is None:
                rows = await db.fetch("SELECT body FROM messages WHERE thread_id = $1 ORDER BY id", thread_id)
            else:
                rows = await db.fetch(
                    "SELECT body FROM (SELECT id, body FROM messages WHERE thread_id = $1 "
                    "ORDER BY id DESC LIMIT $2) m ORDER BY id",
                    thread_id,
                    limit,
                )
            return [json.loads(r[0]) for r in rows]

        return await self._call(body, tx=False)

    async def append_messages(self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]) -> None:
        if not messages:
            return
        now = time.time()
        bodies = [(thread_id, resource_id, _dumps(m), now) for m in messages]

        async def body(db: asyncpg.Connection) -> None:
            await db.execute(
                "INSERT INTO threads (thread_id, resource_id, created_at, updated_at) VALUES ($1, $2, $3, $3) "
                "ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at",
                thread_id,
                resource_id,
                now,
            )
            await db.executemany(
                "INSERT INTO messages (thread_id, resource_id, body, created_at) VALUES ($1, $2, $3, $4)", bodies
            )

        await self._call(body)

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
