"""SQLite store: WAL, busy timeout, versioned schema, one transaction per state change.

Every public method is ONE function run inside one transaction, so a
decision's validation, compare-and-set, audit entry and snapshot read cost a
single round trip. Writers use ``BEGIN IMMEDIATE`` so two processes on one
file serialise on the write lock and the ``WHERE status = 'pending'``
compare-and-set lets exactly one win.

Where it runs: with ``synchronous=NORMAL`` a commit does not wait for the disk,
so a transaction takes ~0.1 ms and is run inline on the event loop thread
when the write lock is free (``busy_timeout = 0`` there). If the lock is held
(another process, a long transaction) the same function is retried on
aiosqlite's worker thread, which waits up to ``busy_timeout_ms`` without
blocking the loop. ``synchronous=FULL`` (an fsync per commit) always uses the
worker. Checkpoints run on the worker too.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from storage.audit import COLUMNS as AUDIT_COLUMNS
from storage.audit import AuditFilter, as_list, seal, to_db
from storage.audit import from_db as audit_from_db
from storage.base import DecideFn, prefix_upper_bound
from storage.errors import (
    CorruptRecord,
    SchemaTooNew,
    StorageError,
    StoreClosed,
    StoreCorrupt,
    StoreReadOnly,
    StoreUnavailable,
    UnstorableText,
)
from storage.listing import KINDS, ListKind, Sort, SuspendedFilter, count_sql, listed_kind
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

if TYPE_CHECKING:  # imported when a store opens: ``warden runs list`` reads without them (list_suspended_now)
    import asyncio

    import aiosqlite

T = TypeVar("T")


def _mark(n: int) -> str:
    """SQLite's numbered placeholder (one parameter may be used twice in a query)."""
    return f"?{n}"


SCHEMA_VERSION = 5

_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        thread_id TEXT,
        resource_id TEXT,
        status TEXT NOT NULL,
        snapshot TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        lease_owner TEXT,
        lease_until REAL,
        created_at REAL NOT NULL,
        suspended_at REAL NOT NULL,
        updated_at REAL NOT NULL,
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
        suspended INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TRIGGER runs_count_insert AFTER INSERT ON runs WHEN NEW.status = 'suspended' BEGIN
        INSERT INTO run_counts (agent_id, suspended) VALUES (NEW.agent_id, 1)
            ON CONFLICT (agent_id) DO UPDATE SET suspended = suspended + 1;
    END;
    CREATE TRIGGER runs_count_delete AFTER DELETE ON runs WHEN OLD.status = 'suspended' BEGIN
        UPDATE run_counts SET suspended = suspended - 1 WHERE agent_id = OLD.agent_id;
    END;
    CREATE TRIGGER runs_count_update AFTER UPDATE OF status ON runs
        WHEN (OLD.status = 'suspended') <> (NEW.status = 'suspended') BEGIN
        UPDATE run_counts SET suspended = suspended - 1 WHERE agent_id = OLD.agent_id AND OLD.status = 'suspended';
        INSERT INTO run_counts (agent_id, suspended) SELECT NEW.agent_id, 1 WHERE NEW.status = 'suspended'
            ON CONFLICT (agent_id) DO UPDATE SET suspended = suspended + 1;
    END;
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
        created_at REAL NOT NULL,
        PRIMARY KEY (run_id, tool_call_id)
    ) WITHOUT ROWID;
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        decision TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        reason TEXT,
        actor TEXT,
        decided_at REAL NOT NULL
    );
    CREATE INDEX audit_by_call ON audit_log (run_id, tool_call_id);
    CREATE TABLE threads (
        thread_id TEXT PRIMARY KEY,
        resource_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        thread_id TEXT NOT NULL,
        resource_id TEXT,
        body TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX messages_by_thread ON messages (thread_id, id);
    """,
    # Crash recovery: the "started" mark, a waiting decider's hold, the actor, resume data.
    # Calls decided under version 1 may have started: they read as interrupted, never re-run.
    2: """
    ALTER TABLE pending_calls ADD COLUMN started_at REAL;
    ALTER TABLE pending_calls ADD COLUMN decided_until REAL NOT NULL DEFAULT 0;
    ALTER TABLE pending_calls ADD COLUMN decided_by TEXT;
    ALTER TABLE pending_calls ADD COLUMN resume_data TEXT;
    UPDATE pending_calls SET started_at = created_at WHERE status <> 'pending';
    """,
    # Operator power: approval deadlines, edited arguments, audit details, grants.
    3: """
    ALTER TABLE pending_calls ADD COLUMN expires_at REAL;
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
        expires_at REAL,
        created_by TEXT,
        created_at REAL NOT NULL
    );
    CREATE INDEX grants_by_tool ON grants (tool_name, created_at);
    """,
    # The audit trail's hash chain (storage.audit); edited arguments and grant ids live in
    # ``detail`` (version 3). Entries written before read as unsealed; their order is their position.
    4: """
    ALTER TABLE audit_log ADD COLUMN seq INTEGER;
    ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
    ALTER TABLE audit_log ADD COLUMN hash TEXT;
    UPDATE audit_log SET seq = (SELECT COUNT(*) FROM audit_log a WHERE a.id <= audit_log.id);
    CREATE UNIQUE INDEX audit_by_seq ON audit_log (seq);
    CREATE INDEX audit_by_agent ON audit_log (agent_id, seq);
    """,
    # The picker's filters by tool and kind (``storage.listing``) find pending calls by index.
    5: """
    CREATE INDEX pending_calls_by_tool ON pending_calls (tool_name, run_id) WHERE status = 'pending';
    CREATE INDEX pending_calls_by_kind ON pending_calls (kind, run_id) WHERE status = 'pending';
    """,
}


def _statements(script: str) -> list[str]:
    """Split a migration into statements (triggers hold semicolons), to run inside one transaction."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buf.strip()[:60]!r}")
    return out


def _append_audit(db: sqlite3.Connection, rows: list[AuditRow]) -> list[AuditRow]:
    """Append to the hash chain; callers are inside a ``BEGIN IMMEDIATE`` transaction (the write lock)."""
    last = db.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
    sealed = seal(rows, last[0] if last else 0, last[1] if last else None)
    marks = ", ".join("?" for _ in fields(AuditRow))
    db.executemany(f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({marks})", [to_db(r) for r in sealed])
    return sealed


def _checkpoint(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA wal_checkpoint(PASSIVE)")


class SqliteStore:
    """Durable store in one SQLite file, shared safely by several processes.

    ``synchronous="NORMAL"`` (default) survives a crash of the process;
    ``"FULL"`` also survives power loss. The worker thread is a daemon, so a
    store that is never closed does not keep the process alive.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        busy_timeout_ms: int = 10_000,
        inline: bool | None = None,
        read_only: bool = False,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError("synchronous must be 'NORMAL' or 'FULL'")
        self.path = str(path)
        self.read_only = read_only
        self.synchronous = synchronous
        self.busy_timeout_ms = busy_timeout_ms
        self.name = f"SqliteStore({self.path!r})"
        self._conn: aiosqlite.Connection | None = None
        self._opening: asyncio.Future[None] | None = None
        self._closed = False
        self.inline = (synchronous == "NORMAL" and not read_only) if inline is None else inline
        self._inline_db: sqlite3.Connection | None = None
        self._inline_thread: int | None = None
        self._inline_commits = 0
        self._checkpoint: asyncio.Future[Any] | None = None

    def __repr__(self) -> str:
        return self.name

    # -- connection -----------------------------------------------------------------
    async def _connection(self) -> aiosqlite.Connection:
        if self._conn is not None:
            return self._conn
        if self._closed:
            raise StoreClosed(f"{self.name} is closed")
        import asyncio

        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())
        await asyncio.shield(self._opening)
        assert self._conn is not None
        return self._conn

    async def _open(self) -> None:
        try:
            await self._open_unchecked()
        except StorageError:
            raise
        except (sqlite3.Error, OSError) as exc:
            raise self._typed(exc, opening=True) from exc

    def _typed(self, exc: BaseException, *, opening: bool = False) -> StorageError:
        """A typed, one-line error for a failure of the file or of SQLite."""
        text = str(exc)
        low = text.lower()
        if isinstance(exc, FileExistsError | NotADirectoryError):
            return StoreUnavailable(
                f"{self.name} cannot be opened: {exc.filename or 'a parent'} is a file, not a folder"
            )
        if isinstance(exc, OSError) and not isinstance(exc, sqlite3.Error):
            reason = exc.strerror or text
            where = f" ({exc.filename})" if exc.filename else ""
            return StoreUnavailable(f"{self.name} cannot be opened: {reason}{where}")
        if "not a database" in low or "malformed" in low or "corrupt" in low:
            return StoreCorrupt(f"{self.name} is not a Warden database or is damaged: {text}")
        if "readonly" in low or "read-only" in low:
            return StoreReadOnly(f"{self.name} is read-only here: {text}")
        if opening or "unable to open" in low:
            hint = " (it is a directory)" if os.path.isdir(self.path) else ""
            return StoreUnavailable(f"{self.name} cannot be opened{hint}: {text}")
        return StorageError(f"{self.name}: {text}")

    async def _open_unchecked(self) -> None:
        import asyncio

        import aiosqlite

        if self.path != ":memory:":
            path = Path(self.path).expanduser()
            if path.is_dir():
                raise StoreUnavailable(f"{self.name} cannot be opened: it is a directory")
            if self.read_only:
                if not path.exists():
                    raise StoreUnavailable(f"{self.name} cannot be opened read-only: no such file")
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
        if self.read_only:
            uri = Path(self.path).expanduser().resolve().as_uri() + "?mode=ro"
            conn = aiosqlite.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        else:
            conn = aiosqlite.connect(self.path, isolation_level=None, check_same_thread=False)
        # aiosqlite's worker is not a daemon thread: a store the user forgets to
        # close would keep the interpreter from exiting. Each write commits before
        # returning, so nothing is lost when the thread dies with the process.
        conn._thread.daemon = True
        try:
            await conn
        except BaseException:
            await asyncio.to_thread(conn._thread.join, 1.0)  # no noise from a worker outliving the loop
            raise
        try:
            await conn._execute(self._setup_sync, conn._conn)
        except BaseException:
            await conn.close()
            raise
        if self.inline and self.path != ":memory:":
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA busy_timeout = 0")
            db.execute(f"PRAGMA synchronous = {self.synchronous}")
            db.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoints belong on the worker
            self._inline_db, self._inline_thread = db, threading.get_ident()
        self._conn = conn

    def _setup_sync(self, db: sqlite3.Connection) -> None:
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        if self.read_only:
            if not self._schema_current(db):
                raise StoreReadOnly(f"{self.name} is opened read-only but is not a current Warden database")
            return
        if self.path != ":memory:" and db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            db.execute("PRAGMA journal_mode = WAL")
        db.execute(f"PRAGMA synchronous = {self.synchronous}")
        if self._schema_current(db):
            return  # nothing to migrate: a read-only database opens too
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT MAX(version) FROM warden_schema").fetchone()
            current = row[0] or 0
            if current > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"{self.name} has schema version {current}, newer than this Warden "
                    f"(knows {SCHEMA_VERSION}); upgrade Warden to use it"
                )
            for version in range(current + 1, SCHEMA_VERSION + 1):
                for statement in _statements(_MIGRATIONS[version]):
                    db.execute(statement)
                db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _schema_current(self, db: sqlite3.Connection) -> bool:
        """True when the schema is this Warden's (read without taking the write lock)."""
        if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'warden_schema'").fetchone():
            return False
        current = db.execute("SELECT MAX(version) FROM warden_schema").fetchone()[0] or 0
        if current > SCHEMA_VERSION:
            raise SchemaTooNew(
                f"{self.name} has schema version {current}, newer than this Warden "
                f"(knows {SCHEMA_VERSION}); upgrade Warden to use it"
            )
        return bool(current == SCHEMA_VERSION)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await self._call_typed(fn, *args)
        except UnicodeEncodeError as exc:  # raised before SQLite sees anything: no change was made
            bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
            shown = "".join(f"\\u{ord(ch):04x}" for ch in bad)
            raise UnstorableText(
                f"{self.name}: text with a lone surrogate ({shown}) cannot be stored or looked up"
            ) from None

    async def _call_typed(self, fn: Callable[..., T], *args: Any) -> T:
        conn = await self._connection()
        db = self._inline_db
        if db is not None and threading.get_ident() == self._inline_thread:
            try:
                out = fn(db, *args)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY:
                    raise self._typed(exc) from exc
                # The write lock is held: wait for it on the worker, off the event loop.
            except sqlite3.DatabaseError as exc:
                raise self._typed(exc) from exc
            else:
                self._inline_commits += 1
                if self._inline_commits % 256 == 0 and (self._checkpoint is None or self._checkpoint.done()):
                    import asyncio

                    self._checkpoint = asyncio.ensure_future(conn._execute(_checkpoint, conn._conn))
                return out
        try:
            return await conn._execute(fn, conn._conn, *args)
        except ValueError as exc:  # aiosqlite: "Connection closed"
            if self._closed:
                raise StoreClosed(f"{self.name} is closed") from exc
            raise
        except sqlite3.DatabaseError as exc:
            raise self._typed(exc) from exc

    @staticmethod
    def _tx(db: sqlite3.Connection, body: Callable[[], T]) -> T:
        db.execute("BEGIN IMMEDIATE")
        try:
            out = body()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return out

    async def setup(self) -> None:
        """Open the file and apply migrations now rather than on first use."""
        await self._connection()

    async def aclose(self) -> None:
        self._closed = True
        if self._checkpoint is not None and not self._checkpoint.done():
            try:
                await self._checkpoint
            except Exception:
                pass
        inline, self._inline_db = self._inline_db, None
        if inline is not None:
            inline.close()
        if self._opening is not None and self._conn is None:
            try:
                await self._opening
            except BaseException:
                pass
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    # -- runs -------------------------------------------------------------------------
    async def save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], *, owner: str | None = None, applied: list[str] | None = None
    ) -> None:
        await self._call(self._save_suspended, run, pending, owner, applied or [])

    def _save_suspended(
        self, db: sqlite3.Connection, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        now = time.time()

        def body() -> None:
            if owner is None:
                db.execute(
                    "INSERT INTO runs (run_id, agent_id, thread_id, resource_id, status, snapshot, version, "
                    "created_at, suspended_at, updated_at) VALUES (?, ?, ?, ?, 'suspended', ?, 1, ?, ?, ?)",
                    (
                        run.run_id,
                        run.agent_id,
                        run.thread_id,
                        run.resource_id,
                        run.snapshot,
                        run.created_at or now,
                        run.suspended_at or now,
                        now,
                    ),
                )
            else:
                cur = db.execute(
                    "UPDATE runs SET status = 'suspended', snapshot = ?, version = version + 1, "
                    "lease_owner = NULL, lease_until = NULL, suspended_at = ?, updated_at = ? "
                    "WHERE run_id = ? AND lease_owner = ? AND lease_until >= ?",
                    (run.snapshot, run.suspended_at or now, now, run.run_id, owner, now),
                )
                if cur.rowcount != 1:
                    raise StorageError(f"{self.name}: lost the lease on run {run.run_id!r}; not saved")
                if applied:
                    db.executemany(
                        "DELETE FROM pending_calls WHERE run_id = ? AND tool_call_id = ?",
                        [(run.run_id, cid) for cid in applied],
                    )
            db.executemany(
                f"INSERT INTO pending_calls ({_CALL_COLS}) VALUES ({', '.join('?' * 18)}) "
                "ON CONFLICT (run_id, tool_call_id) DO NOTHING",
                [_call_params(c) for c in pending],
            )

        self._tx(db, body)

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
        return await self._call(self._claim, run_id, tool_call_id, kinds, decide, owner, lease_seconds)

    def _claim(
        self,
        db: sqlite3.Connection,
        run_id: str,
        tool_call_id: str | None,
        kinds: tuple[CallKind, ...],
        decide: DecideFn,
        owner: str,
        lease_seconds: float,
    ) -> ClaimResult:
        def audited() -> bool:
            if tool_call_id is None:
                return False
            return (
                db.execute(
                    "SELECT 1 FROM audit_log WHERE run_id = ? AND tool_call_id = ? LIMIT 1", (run_id, tool_call_id)
                ).fetchone()
                is not None
            )

        def body() -> ClaimResult:
            now = time.time()
            row = db.execute(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                return ClaimResult("no_run", audited=audited())
            run = _run(row)
            if tool_call_id is not None:
                crow = db.execute(
                    f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id = ? AND tool_call_id = ?",
                    (run_id, tool_call_id),
                ).fetchone()
                if crow is None:
                    return ClaimResult("no_call", audited=audited())
                stored = _call(crow)
                current = actionable(stored, run, now)
                if current is None:
                    return ClaimResult("not_pending", call=stored, audited=True)
            else:
                rows = db.execute(f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id = ?", (run_id,)).fetchall()
                open_calls = [c for c in (actionable(_call(r), run, now) for r in rows) if c is not None]
                candidates = [c for c in open_calls if c.kind in kinds]
                if not candidates:
                    return ClaimResult("no_call_of_kind" if open_calls else "no_call", other_kinds=bool(open_calls))
                current = max(candidates, key=lambda c: (c.created_at, c.seq))
                stored = _call(
                    db.execute(
                        f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id = ? AND tool_call_id = ?",
                        (run_id, current.tool_call_id),
                    ).fetchone()
                )
            decision = decide(current, run)
            takes_lease = not lease_live(run, now)
            cur = db.execute(
                "UPDATE pending_calls SET status = ?, started_at = NULL, decided_until = ?, decided_by = ?, "
                "resume_data = ?, edited_args = ? WHERE run_id = ? AND tool_call_id = ? AND status = ? "
                "AND started_at IS ?",
                (
                    decision.status,
                    0.0 if takes_lease else now + lease_seconds,
                    decision.actor,
                    None if decision.resume_data is None else _dumps(decision.resume_data),
                    None if decision.edited_args is None else _dumps(decision.edited_args),
                    run_id,
                    stored.tool_call_id,
                    stored.status,
                    stored.started_at,
                ),
            )
            if cur.rowcount != 1:  # pragma: no cover - guarded by the write lock
                return ClaimResult("not_pending", call=stored, audited=True)
            entries: list[tuple[str, str | None, str | None, dict[str, Any] | None]] = []
            if stored.status != "pending" and current.kind != "interrupted":
                entries.append(("returned-to-pending", "lease expired before the tool started", None, None))
            label = "re-executed" if current.kind == "interrupted" and decision.status != "declined" else None
            entries.append((label or decision.audit_label, decision.reason, decision.actor, decision.detail))
            _append_audit(
                db,
                [
                    AuditRow(
                        run_id, stored.tool_call_id, run.agent_id, stored.tool_name, d, stored.fingerprint, r, now, a, x
                    )
                    for d, r, a, x in entries
                ],
            )
            if takes_lease:
                db.execute(
                    "UPDATE runs SET lease_owner = ?, lease_until = ?, status = 'running', updated_at = ? "
                    "WHERE run_id = ?",
                    (owner, now + lease_seconds, now, run_id),
                )
                run.status, run.lease_owner, run.lease_until = "running", owner, now + lease_seconds
                return ClaimResult("ok", call=current, run=run)
            return ClaimResult("ok", call=current, run=None)

        return self._tx(db, body)

    async def acquire_lease(
        self, run_id: str, owner: str, lease_seconds: float, *, waiting_call: str | None = None
    ) -> RunRow | None:
        return await self._call(self._acquire_lease, run_id, owner, lease_seconds, waiting_call)

    def _acquire_lease(
        self, db: sqlite3.Connection, run_id: str, owner: str, lease_seconds: float, waiting_call: str | None
    ) -> RunRow | None:
        def body() -> RunRow | None:
            now = time.time()
            cur = db.execute(
                "UPDATE runs SET lease_owner = ?, lease_until = ?, status = 'running', updated_at = ? "
                "WHERE run_id = ? AND status <> 'failed' AND (lease_owner IS NULL OR lease_until < ?)",
                (owner, now + lease_seconds, now, run_id, now),
            )
            if cur.rowcount != 1:
                if waiting_call is not None:
                    db.execute(
                        "UPDATE pending_calls SET decided_until = ? WHERE run_id = ? AND tool_call_id = ? "
                        "AND status <> 'pending' AND started_at IS NULL",
                        (now + lease_seconds, run_id, waiting_call),
                    )
                return None
            row = db.execute(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            return _run(row)

        return self._tx(db, body)

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        return await self._call(self._renew_lease, run_id, owner, lease_seconds)

    def _renew_lease(self, db: sqlite3.Connection, run_id: str, owner: str, lease_seconds: float) -> bool:
        def body() -> bool:
            cur = db.execute(
                "UPDATE runs SET lease_until = ? WHERE run_id = ? AND lease_owner = ?",
                (time.time() + lease_seconds, run_id, owner),
            )
            return cur.rowcount == 1

        return self._tx(db, body)

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        return await self._call(self._mark_started, run_id, tool_call_id, owner)

    def _mark_started(self, db: sqlite3.Connection, run_id: str, tool_call_id: str, owner: str) -> bool:
        def body() -> bool:
            now = time.time()
            cur = db.execute(
                "UPDATE pending_calls SET started_at = ? WHERE run_id = ? AND tool_call_id = ? "
                "AND status <> 'pending' AND EXISTS (SELECT 1 FROM runs WHERE run_id = ? AND lease_owner = ? "
                "AND lease_until >= ?)",
                (now, run_id, tool_call_id, run_id, owner, now),
            )
            return cur.rowcount == 1

        return self._tx(db, body)

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        return await self._call(self._checkpoint_run, run_id, owner, snapshot, applied)

    def _checkpoint_run(
        self, db: sqlite3.Connection, run_id: str, owner: str, snapshot: str, applied: list[str]
    ) -> bool:
        def body() -> bool:
            now = time.time()
            cur = db.execute(
                "UPDATE runs SET snapshot = ?, version = version + 1, updated_at = ? "
                "WHERE run_id = ? AND lease_owner = ? AND lease_until >= ?",
                (snapshot, now, run_id, owner, now),
            )
            if cur.rowcount != 1:
                return False
            if applied:
                db.executemany(
                    "DELETE FROM pending_calls WHERE run_id = ? AND tool_call_id = ?", [(run_id, c) for c in applied]
                )
            return True

        return self._tx(db, body)

    async def release(self, run_id: str, owner: str, *, reset_call: str | None = None) -> None:
        await self._call(self._release, run_id, owner, reset_call)

    def _release(self, db: sqlite3.Connection, run_id: str, owner: str, reset_call: str | None) -> None:
        def body() -> None:
            now = time.time()
            if reset_call is not None:
                cur = db.execute(
                    "UPDATE pending_calls SET status = 'pending', decided_until = 0, resume_data = NULL, "
                    "edited_args = NULL "
                    "WHERE run_id = ? AND tool_call_id = ? AND status NOT IN ('pending', 'expired') "
                    "AND started_at IS NULL",
                    (run_id, reset_call),
                )
                if cur.rowcount:
                    found = db.execute(
                        "SELECT r.agent_id, c.tool_name, c.fingerprint FROM pending_calls c JOIN runs r "
                        "USING (run_id) WHERE c.run_id = ? AND c.tool_call_id = ?",
                        (run_id, reset_call),
                    ).fetchone()
                    if found is not None:
                        agent_id, tool, fp = found
                        reason = "decision interrupted before it was applied"
                        _append_audit(db, [AuditRow(run_id, reset_call, agent_id, tool, "withdrawn", fp, reason, now)])
            # A run without calls left (its step's results are stored) stays "running", free to continue.
            db.execute(
                "UPDATE runs SET status = CASE WHEN EXISTS (SELECT 1 FROM pending_calls WHERE run_id = ? "
                "AND status <> 'expired') "
                "THEN 'suspended' ELSE 'running' END, lease_owner = NULL, lease_until = 0, updated_at = ? "
                "WHERE run_id = ? AND lease_owner = ?",
                (run_id, now, run_id, owner),
            )

        self._tx(db, body)

    async def list_expired(self, *, limit: int = 100) -> list[RunRow]:
        return await self._call(self._list_expired, limit)

    @staticmethod
    def _list_expired(db: sqlite3.Connection, limit: int) -> list[RunRow]:
        rows = db.execute(
            f"SELECT {_RUN_COLS} FROM runs WHERE status = 'running' AND lease_until < ? LIMIT ?",
            (time.time(), limit),
        ).fetchall()
        return [_run(r) for r in rows]

    async def settle(self, run_id: str) -> int:
        return await self._call(self._settle, run_id)

    def _settle(self, db: sqlite3.Connection, run_id: str) -> int:
        def body() -> int:
            now = time.time()
            row = db.execute(
                "SELECT agent_id FROM runs WHERE run_id = ? AND status <> 'failed' "
                "AND (lease_owner IS NULL OR lease_until < ?)",
                (run_id, now),
            ).fetchone()
            if row is None:
                return 0
            returned = db.execute(
                "SELECT tool_call_id, tool_name, fingerprint FROM pending_calls WHERE run_id = ? "
                "AND status NOT IN ('pending', 'expired') AND started_at IS NULL AND decided_until < ?",
                (run_id, now),
            ).fetchall()
            if returned:
                reason = "lease expired before the tool started"
                _append_audit(
                    db,
                    [AuditRow(run_id, r[0], row[0], r[1], "returned-to-pending", r[2], reason, now) for r in returned],
                )
                db.executemany(
                    "UPDATE pending_calls SET status = 'pending', decided_until = 0, resume_data = NULL, "
                    "edited_args = NULL "
                    "WHERE run_id = ? AND tool_call_id = ?",
                    [(run_id, r[0]) for r in returned],
                )
            db.execute(
                "UPDATE runs SET status = CASE WHEN EXISTS (SELECT 1 FROM pending_calls WHERE run_id = ? "
                "AND status <> 'expired') "
                "THEN 'suspended' ELSE 'running' END, lease_owner = NULL, lease_until = 0, updated_at = ? "
                "WHERE run_id = ?",
                (run_id, now, run_id),
            )
            return len(returned)

        return self._tx(db, body)

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        return await self._call(self._finish_run, run_id, owner)

    def _finish_run(self, db: sqlite3.Connection, run_id: str, owner: str | None) -> bool:
        def body() -> bool:
            if owner is not None:
                held = db.execute(
                    "SELECT 1 FROM runs WHERE run_id = ? AND lease_owner = ? AND lease_until >= ?",
                    (run_id, owner, time.time()),
                ).fetchone()
                if held is None:
                    return db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None
            db.execute("DELETE FROM pending_calls WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
            return True

        return self._tx(db, body)

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        return await self._call(self._fail_run, run_id, owner, snapshot, error)

    def _fail_run(self, db: sqlite3.Connection, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        def body() -> bool:
            now = time.time()
            cur = db.execute(
                "UPDATE runs SET status = 'failed', snapshot = ?, error = ?, lease_owner = NULL, "
                "lease_until = NULL, version = version + 1, updated_at = ? WHERE run_id = ? "
                "AND (? IS NULL OR (lease_owner = ? AND lease_until >= ?))",
                (snapshot, error, now, run_id, owner, owner, now),
            )
            return cur.rowcount == 1 or db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None

        return self._tx(db, body)

    async def get_run(self, run_id: str) -> RunRow | None:
        return await self._call(self._get_run, run_id)

    @staticmethod
    def _get_run(db: sqlite3.Connection, run_id: str) -> RunRow | None:
        row = db.execute(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else _run(row)

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        return await self._call(self._get_calls, run_id)

    @staticmethod
    def _get_calls(db: sqlite3.Connection, run_id: str) -> list[PendingCallRow]:
        rows = db.execute(
            f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id = ? ORDER BY created_at, seq", (run_id,)
        ).fetchall()
        return [_call(r) for r in rows]

    async def find_ids(self, prefix: str, *, run_id: str | None = None, limit: int = 10) -> list[str]:
        return await self._call(self._find_ids, prefix, run_id, limit)

    @staticmethod
    def _find_ids(db: sqlite3.Connection, prefix: str, run_id: str | None, limit: int) -> list[str]:
        # A range on the primary key (BINARY collation: code-point order), not LIKE: SQLite's LIKE
        # is case-insensitive and would not use the index. Run ids come from the runs and from the
        # audit trail (a finished run's rows are gone, its decisions stay): two index ranges.
        bound = prefix_upper_bound(prefix)
        upper = "" if bound is None else " AND {col} < ?"
        rng = [prefix] if bound is None else [prefix, bound]
        if run_id is None:
            sql = (
                f"SELECT run_id FROM runs WHERE run_id >= ?{upper.format(col='run_id')} UNION "
                f"SELECT run_id FROM audit_log WHERE run_id >= ?{upper.format(col='run_id')} ORDER BY 1 LIMIT ?"
            )
            params = [*rng, *rng, limit]
        else:
            sql = (
                "SELECT tool_call_id FROM pending_calls WHERE run_id = ? AND tool_call_id >= ?"
                f"{upper.format(col='tool_call_id')} ORDER BY 1 LIMIT ?"
            )
            params = [run_id, *rng, limit]
        return [r[0] for r in db.execute(sql, params).fetchall()]

    async def get_suspended(self, run_id: str) -> SuspendedRunRow | None:
        return await self._call(self._get_suspended, run_id)

    @classmethod
    def _get_suspended(cls, db: sqlite3.Connection, run_id: str) -> SuspendedRunRow | None:
        row = db.execute(f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        broken: dict[str, str] = {}
        listed = cls._with_calls(db, [_run(row)], time.time(), broken)
        if broken:
            raise CorruptRecord(broken[run_id])
        return listed[0] if listed else None

    @staticmethod
    def _with_calls(
        db: sqlite3.Connection, runs: list[RunRow], now: float, broken: dict[str, str]
    ) -> list[SuspendedRunRow]:
        """The runs that have an actionable call now, with those calls (never a run with none)."""
        runs = [r for r in runs if r.status != "failed" and not lease_live(r, now)]
        calls: dict[str, list[PendingCallRow]] = {r.run_id: [] for r in runs}
        if runs:
            marks = ",".join("?" * len(runs))
            for crow in db.execute(
                f"SELECT {_CALL_COLS} FROM pending_calls WHERE run_id IN ({marks}) ORDER BY created_at, seq",
                list(calls),
            ).fetchall():
                try:
                    calls[crow[0]].append(_call(crow))
                except CorruptRecord as exc:
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
        return await self._call(self._list_suspended, f, page, per_page)

    def list_suspended_now(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> tuple[list[SuspendedRunRow], int] | None:
        """``list_suspended`` read synchronously on a connection of its own, without an event loop
        or aiosqlite: ``warden runs list`` starts in a fraction of the time. None when this
        read cannot answer (no file yet, a schema to migrate): then use ``list_suspended``."""
        f = SuspendedFilter(agent_id, thread_id, resource_id)
        return self._read_now(lambda db: self._list_suspended(db, f, page, per_page))

    def pending_page_now(
        self, f: SuspendedFilter, page: int, per_page: int, *, with_counts: bool = False
    ) -> tuple[list[SuspendedRunRow], int, dict[str, int] | None] | None:
        """One page of ``list_suspended`` and, with ``with_counts``, ``count_suspended_by_kind``,
        read as ``list_suspended_now`` does: the console's picker lists from it while the runtime
        is still loading. None when this read cannot answer."""

        def read(db: sqlite3.Connection) -> tuple[list[SuspendedRunRow], int, dict[str, int] | None]:
            rows, total = self._list_suspended(db, f, page, per_page)
            return rows, total, self._count_by_kind(db, f) if with_counts else None

        return self._read_now(read)

    def _read_now(self, read: Callable[[sqlite3.Connection], T]) -> T | None:
        if self.path == ":memory:" or not os.path.isfile(self.path):
            return None
        try:
            db = sqlite3.connect(self.path, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._typed(exc, opening=True) from exc
        try:
            db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if not self._schema_current(db):
                return None
            return read(db)
        except sqlite3.Error as exc:
            raise self._typed(exc) from exc
        finally:
            db.close()

    @classmethod
    def _list_suspended(
        cls, db: sqlite3.Connection, f: SuspendedFilter, page: int, per_page: int
    ) -> tuple[list[SuspendedRunRow], int]:
        # Read only: a run whose lease expired (a process died or stalled while applying
        # a decision) is listed from what its rows say now; nothing is written.
        now = time.time()
        broken: dict[str, str] = {}

        def decode(rows: list[tuple]) -> list[RunRow]:
            out: list[RunRow] = []
            for r in rows:
                try:
                    out.append(_run(r))
                except CorruptRecord as exc:  # listed as unreadable; the other runs are unaffected
                    broken[r[0]] = exc.message
                    out.append(RunRow(r[0], r[1], r[2], r[3], r[4], "", suspended_at=0.0))
            return out

        # Runs left "running" under an expired lease: usually none (the index on lease_until finds
        # them). Their decided calls read as pending at this moment, so the call filters run here.
        exact = SuspendedFilter(f.agent_id, f.thread_id, f.resource_id)
        params: list[Any] = [now]
        extra = exact.sql(_mark, params)
        expired = [
            narrowed
            for row in cls._with_calls(
                db,
                decode(
                    db.execute(
                        f"SELECT {_RUN_LIST_COLS} FROM runs WHERE status = 'running' AND lease_until < ?1{extra}",
                        params,
                    ).fetchall()
                ),
                now,
                broken,
            )
            if (row.error is not None or f.run_matches(row.run, row.calls)) and (narrowed := f.narrow(row))
        ]
        params = []
        extra = f.sql(_mark, params)
        if f == exact and f.thread_id is None and f.resource_id is None:
            # Counts of whole agents are kept by triggers: the total stays O(agents), not O(runs).
            if f.agent_id is None:
                total = db.execute("SELECT COALESCE(SUM(suspended), 0) FROM run_counts").fetchone()[0]
            else:
                row = db.execute("SELECT suspended FROM run_counts WHERE agent_id = ?", (f.agent_id,)).fetchone()
                total = row[0] if row else 0
        else:
            total = db.execute(f"SELECT COUNT(*) FROM runs WHERE status = 'suspended'{extra}", params).fetchone()[0]
        total += len(expired)
        # The listing never reads snapshot JSON: everything shown is in indexed columns.
        start, stop = page * per_page, (page + 1) * per_page
        fetch_from = max(0, start - len(expired))
        n = len(params)
        rows = db.execute(
            f"SELECT {_RUN_LIST_COLS} FROM runs WHERE status = 'suspended'{extra} "
            f"ORDER BY {f.order_sql()} LIMIT ?{n + 1} OFFSET ?{n + 2}",
            [*params, stop - fetch_from, fetch_from],
        ).fetchall()
        suspended = [r for r in (f.narrow(x) for x in cls._with_calls(db, decode(rows), now, broken)) if r]
        merged = f.ordered([*expired, *suspended]) if expired else suspended
        skip = start - fetch_from
        return merged[skip : skip + per_page], total

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
        return await self._call(self._count_by_kind, f)

    @staticmethod
    def _count_by_kind(db: sqlite3.Connection, f: SuspendedFilter) -> dict[str, int]:
        params: list[Any] = []
        sql = count_sql(f, _mark, params)
        out = dict.fromkeys(KINDS, 0)
        for stored, n in db.execute(sql, params).fetchall():
            out[listed_kind(stored)] += n
        return out

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
        return await self._call(self._audit_log, f)

    @staticmethod
    def _audit_log(db: sqlite3.Connection, f: AuditFilter) -> list[AuditRow]:
        clause, params = f.sql(lambda n: "?")
        rows = db.execute(
            f"SELECT {AUDIT_COLUMNS} FROM audit_log {clause} ORDER BY seq LIMIT ?",
            [*params, -1 if f.limit is None else f.limit],
        ).fetchall()
        return [audit_from_db(r) for r in rows]

    async def append_audit(self, entries: AuditRow | Iterable[AuditRow]) -> list[AuditRow]:
        return await self._call(self._append_audit_tx, as_list(entries))

    def _append_audit_tx(self, db: sqlite3.Connection, rows: list[AuditRow]) -> list[AuditRow]:
        return self._tx(db, lambda: _append_audit(db, rows))

    # -- deadlines and grants -------------------------------------------------------------
    async def list_overdue(self, now: float, *, limit: int = 100) -> list[PendingCallRow]:
        return await self._call(self._list_overdue, now, limit)

    @staticmethod
    def _list_overdue(db: sqlite3.Connection, now: float, limit: int) -> list[PendingCallRow]:
        rows = db.execute(
            f"SELECT {_CALL_COLS} FROM pending_calls WHERE status = 'pending' AND expires_at IS NOT NULL "
            "AND expires_at < ? AND kind = 'approval' ORDER BY expires_at LIMIT ?",
            (now, limit),
        ).fetchall()
        return [_call(r) for r in rows]

    async def add_grant(self, grant: GrantRow) -> None:
        await self._call(self._add_grant, grant)

    def _add_grant(self, db: sqlite3.Connection, g: GrantRow) -> None:
        params = (
            g.id,
            g.tool_name,
            g.scope,
            g.scope_id,
            g.agent_id,
            None if g.args_match is None else _dumps(g.args_match),
            g.expires_at,
            g.created_by,
            g.created_at,
        )
        self._tx(
            db, lambda: db.execute(f"INSERT INTO grants ({_GRANT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", params)
        )

    async def list_grants(self, now: float, *, tool_name: str | None = None) -> list[GrantRow]:
        return await self._call(self._list_grants, now, tool_name)

    @staticmethod
    def _list_grants(db: sqlite3.Connection, now: float, tool_name: str | None) -> list[GrantRow]:
        by_tool = "" if tool_name is None else " AND tool_name = ?"
        rows = db.execute(
            f"SELECT {_GRANT_COLS} FROM grants WHERE (expires_at IS NULL OR expires_at > ?){by_tool} "
            "ORDER BY created_at, id",
            (now,) if tool_name is None else (now, tool_name),
        ).fetchall()
        return [_grant(r) for r in rows]

    async def delete_grant(self, grant_id: str) -> bool:
        return await self._call(self._delete_grant, grant_id)

    def _delete_grant(self, db: sqlite3.Connection, grant_id: str) -> bool:
        return self._tx(db, lambda: db.execute("DELETE FROM grants WHERE id = ?", (grant_id,)).rowcount == 1)

    # -- memory -----------------------------------------------------------------------
    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        return await self._call(self._load_messages, thread_id, limit)

    @staticmethod
    def _load_messages(db: sqlite3.Connection, thread_id: str, limit: int | None) -> list[dict[str, Any]]:
        if limit is None:
            rows = db.execute("SELECT body FROM messages WHERE thread_id = ? ORDER BY id", (thread_id,)).fetchall()
        else:
            rows = db.execute(
                "SELECT body FROM (SELECT id, body FROM messages WHERE thread_id = ? "
                "ORDER BY id DESC LIMIT ?) ORDER BY id",
                (thread_id, limit),
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    async def append_messages(self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]) -> None:
        if messages:
            await self._call(self._append_messages, thread_id, resource_id, messages)

    def _append_messages(
        self, db: sqlite3.Connection, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]
    ) -> None:
        now = time.time()

        def body() -> None:
            db.execute(
                "INSERT INTO threads (thread_id, resource_id, created_at, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at",
                (thread_id, resource_id, now, now),
            )
            db.executemany(
                "INSERT INTO messages (thread_id, resource_id, body, created_at) VALUES (?, ?, ?, ?)",
                [(thread_id, resource_id, _dumps(m), now) for m in messages],
            )

        self._tx(db, body)
