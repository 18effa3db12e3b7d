"""SQLite store: WAL, busy timeout, versioned schema, one transaction per state change.

A thin driver: what a store does is ``storage.sql_store`` (the decisions ``storage.rules``,
the SQL ``storage.sql_common``); this module holds the file, its connections, the inline
path, typed errors and SQLite's own schema pieces.

Every public method is ONE script: several writes run inside one transaction,
so a decision's validation, compare-and-set, audit entry and snapshot read cost a
single round trip; one write statement (the started mark, a renewal, ``finish_run``)
runs alone in autocommit, atomic without BEGIN/COMMIT. Writers use ``BEGIN
IMMEDIATE`` so two processes on one file serialise on the write lock and the
``WHERE status = 'pending'`` compare-and-set lets exactly one win.

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
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from storage import rules
from storage import sql_common as q
from storage.errors import (
    StorageError,
    StoreClosed,
    StoreCorrupt,
    StoreReadOnly,
    StoreUnavailable,
)
from storage.listing import SuspendedFilter
from storage.records import PendingCallRow, RunRow, SuspendedRunRow
from storage.rules import ClaimRequest
from storage.sql_store import (
    Mode,
    Script,
    SqlStore,
    _changed_one,
    _fetch,
    count_by_kind,
    lease_lost,
    list_suspended,
    plan_save,
    run_sync,
    unstorable,
    write_claim,
)

if TYPE_CHECKING:  # imported when a store opens: ``warden runs list`` reads without them (list_suspended_now)
    import asyncio

    import aiosqlite

T = TypeVar("T")

SCHEMA_VERSION = q.SCHEMA_VERSION
#: the oldest SQLite whose SQL the shared statements use (``UPDATE ... RETURNING``: 3.35, 2021).
MIN_SQLITE = (3, 35, 0)

#: ``run_counts`` kept by triggers (PostgreSQL's are one plpgsql function that also notifies).
_COUNTING = """
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
"""

#: version 8: the audit table keyed by ``seq`` (SQLite's rowid), not by an ``id`` beside a unique
#: index on ``seq``: an entry is one B-tree row fewer to write (every decision appends one), and
#: the chain's head (``AUDIT_HEAD``) is the table's last row. Rows are copied in ``seq`` order (every
#: entry has one since version 4); ``audit_by_agent`` on ``agent_id`` alone holds ``seq`` as the rowid.
#: And a run's calls go with it (``runs_calls_delete``): ``finish_run`` is one statement, in autocommit.
_AUDIT_BY_SEQ = """
    CREATE TABLE audit_log_v8 (
        seq INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        decision TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        reason TEXT,
        actor TEXT,
        decided_at REAL NOT NULL,
        detail TEXT,
        prev_hash TEXT,
        hash TEXT
    );
    INSERT INTO audit_log_v8 (seq, run_id, tool_call_id, agent_id, tool_name, decision, fingerprint, reason, actor,
        decided_at, detail, prev_hash, hash)
        SELECT seq, run_id, tool_call_id, agent_id, tool_name, decision, fingerprint, reason, actor,
        decided_at, detail, prev_hash, hash FROM audit_log ORDER BY seq;
    DROP TABLE audit_log;
    ALTER TABLE audit_log_v8 RENAME TO audit_log;
    CREATE INDEX audit_by_call ON audit_log (run_id, tool_call_id);
    CREATE INDEX audit_by_agent ON audit_log (agent_id);
    CREATE TRIGGER runs_calls_delete AFTER DELETE ON runs BEGIN
        DELETE FROM pending_calls WHERE run_id = OLD.run_id;
    END;
"""

_MIGRATIONS: dict[int, str] = q.migrations(
    q.SQLITE_TYPES,
    runs_triggers=_COUNTING,
    audit_triggers="",
    number_audit="    UPDATE audit_log SET seq = (SELECT COUNT(*) FROM audit_log a WHERE a.id <= audit_log.id);\n",
    v8=_AUDIT_BY_SEQ,
)


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


#: WAL frames past which the next checkpoint holds this process's writes back until it is done (see
#: ``SqliteStore._start_checkpoint``): the WAL file stays under about this many pages (16 MB).
WAL_RESTART_FRAMES = 4096
#: bytes the WAL file is cut back to when SQLite starts it over (``PRAGMA journal_size_limit``): without
#: it the file keeps the size of its largest stretch between two restarts for good (24.8 -> 28.9 MB over
#: 12 minutes of a server, issue 43; far more after a long reader held checkpoints back). About what
#: ``WAL_RESTART_FRAMES`` frames take, so the usual stretch reuses the file and only a larger one is cut.
JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024


#: SQLITE_BUSY_SNAPSHOT (extended code): a write that began on a snapshot another connection has
#: since written past; nothing was changed, so the same script runs again.
_BUSY_SNAPSHOT = 517
#: how often the worker runs a script again after SQLITE_BUSY_SNAPSHOT (each time behind the writer
#: that moved the snapshot: it cannot repeat for long).
_SNAPSHOT_ATTEMPTS = 100


# A ``None`` parameter (a NULL: ~19 of a cycle's) is not one of the types ``sqlite3`` binds without
# adapting, so each went through ``microprotocols_adapt``, which found no adapter and then raised and
# cleared two AttributeErrors (``__adapt__``, ``__conform__``): ~3.4k instructions per NULL. An
# adapter for ``NoneType`` that returns it unchanged (an empty dict's ``get``: a C call, no frame)
# binds the same NULL. ``setdefault``: an adapter the application registered itself stays.
def _adapt_none() -> None:
    sqlite3.adapters.setdefault((type(None), sqlite3.PrepareProtocol), {}.get)


_adapt_none()


def _busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY, or one of its extended codes (SQLITE_BUSY_SNAPSHOT, ...): the lock or snapshot was taken."""
    return (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == sqlite3.SQLITE_BUSY


def _checkpoint(db: sqlite3.Connection) -> int:
    """A passive checkpoint on the worker; the frames the WAL held (SQLite's ``log`` column)."""
    row = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(row[1]) if row else 0


class _Db:
    """``sql_store.Db`` over a ``sqlite3`` connection: every await completes at once (``run_sync``)."""

    __slots__ = ("cur", "db")
    for_update = ""  # BEGIN IMMEDIATE already holds the write lock
    ilike = False  # SQLite's LIKE is case-insensitive (ASCII)

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        #: one cursor for every statement (``Connection.execute`` makes one per call); each
        #: statement's rows are read to the end before the next, and scripts never interleave.
        self.cur = db.cursor()

    async def fetch(self, sql: str, *args: Any) -> list[Any]:
        return self.cur.execute(q.sqlite_text(sql), args).fetchall()

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        rows = self.cur.execute(q.sqlite_text(sql), args).fetchall()
        return rows[0] if rows else None

    async def execute(self, sql: str, *args: Any) -> int:
        return self.cur.execute(q.sqlite_text(sql), args).rowcount

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.cur.executemany(q.sqlite_text(sql), rows)

    def one_of(self, n: int) -> str:
        return f"IN (SELECT value FROM json_each(${n}))"

    def ids(self, values: list[str]) -> str:
        return json.dumps(values)

    async def lock_audit(self) -> None:
        """Nothing to take: appends run inside ``BEGIN IMMEDIATE`` (the write lock)."""

    async def collate(self) -> str:
        return ""  # BINARY: code-point order

    async def write_claim(self, run: RunRow, picked: rules.Pick, plan: rules.ClaimPlan, req: ClaimRequest) -> bool:
        return await write_claim(self, run, picked, plan, req)


# -- a cycle's writes as plain functions on the cursor ------------------------------------------
# The save, the checkpoint and the finish (every cycle has one of each) are written here as plain
# functions the inline path calls as they are (``_NOW``), without a script's coroutines and
# ``run_sync`` around them; the worker runs the same function through its script twin. The same
# statements, in the same transactions, as ``sql_store``'s portable scripts.
_FINISH_RUN, _RUN_EXISTS = q.sqlite_text(q.FINISH_RUN), q.sqlite_text(q.RUN_EXISTS)
_INSERT_CALL, _DELETE_CALL = q.sqlite_text(q.INSERT_CALL), q.sqlite_text(q.DELETE_CALL)
_CHECKPOINT = q.sqlite_text(q.CHECKPOINT)


def _finish_now(db: _Db, run_id: str, owner: str | None) -> bool:
    """``finish_run``: one statement, in autocommit."""
    cur = db.cur
    if cur.execute(_FINISH_RUN, (run_id, owner, time.time())).rowcount == 1 or owner is None:
        return True
    return not cur.execute(_RUN_EXISTS, (run_id,)).fetchall()


def _save_now(
    db: _Db, name: str, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
) -> None:
    """``save_suspended`` (``plan_save``'s statements), inside the caller's ``BEGIN IMMEDIATE``."""
    cur, plan = db.cur, plan_save(run, pending, owner, applied)
    if cur.execute(q.sqlite_text(plan.first), plan.params).rowcount != 1 and plan.owned:
        raise lease_lost(name, run.run_id)
    if plan.deleted:
        cur.executemany(_DELETE_CALL, plan.deleted)
    if plan.inserted:
        cur.executemany(_INSERT_CALL, plan.inserted)


def _checkpoint_now(db: _Db, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
    """``checkpoint`` (``SqlStore.checkpoint``'s script), inside the caller's ``BEGIN IMMEDIATE``."""
    cur = db.cur
    if cur.execute(_CHECKPOINT, (snapshot, time.time(), run_id, owner)).rowcount != 1:
        return False
    if applied:
        cur.executemany(_DELETE_CALL, [(run_id, c) for c in applied])
    return True


async def _finish(db: _Db, *args: Any) -> bool:
    return _finish_now(db, *args)


async def _save(db: _Db, *args: Any) -> None:
    _save_now(db, *args)


async def _checkpoint_script(db: _Db, *args: Any) -> bool:
    return _checkpoint_now(db, *args)


#: each script above -> the function the inline path calls in its place
_NOW: dict[Callable[..., Any], Callable[..., Any]] = {
    _finish: _finish_now,
    _save: _save_now,
    _checkpoint_script: _checkpoint_now,
}


class SqliteStore(SqlStore):
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
        self._inline: _Db | None = None  # the adapter over ``_inline_db``, made once
        self._inline_thread: int | None = None
        self._inline_commits = 0
        self._checkpoint: asyncio.Future[Any] | None = None
        #: the running checkpoint holds writes back (they queue on the worker behind it): see ``_start_checkpoint``.
        self._checkpoint_holds = False

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

        if sqlite3.sqlite_version_info < MIN_SQLITE:
            needed = ".".join(map(str, MIN_SQLITE))
            raise StoreUnavailable(
                f"{self.name} needs SQLite {needed} or newer; this Python has SQLite {sqlite3.sqlite_version}"
            )
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
            db.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")  # this connection restarts the WAL
            self._inline_db, self._inline, self._inline_thread = db, _Db(db), threading.get_ident()
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
        db.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
        if self._schema_current(db):
            return  # nothing to migrate: a read-only database opens too
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS warden_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT MAX(version) FROM warden_schema").fetchone()
            current = row[0] or 0
            self._refuse_newer(current)
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
        self._refuse_newer(current)
        return bool(current == SCHEMA_VERSION)

    async def _run(self, script: Script[T], *args: Any, mode: Mode = "write") -> T:
        """Run ``script`` inline when the write lock is free, else on aiosqlite's worker (it waits)."""
        conn = self._conn or await self._connection()
        try:
            ad = self._inline
            if (
                ad is not None
                and threading.get_ident() == self._inline_thread
                and (mode in ("read", "snapshot") or not self._checkpoint_holds or self._checkpoint_done())
            ):
                # The inline path, kept lean (every store call of a cycle takes it): the adapter made
                # once, a write transaction only around a script of several statements.
                db, cur = ad.db, ad.cur
                try:
                    if mode == "write":
                        cur.execute("BEGIN IMMEDIATE")
                        try:
                            now = _NOW.get(script)
                            out = now(ad, *args) if now is not None else run_sync(script(ad, *args))
                            cur.execute("COMMIT")
                        except BaseException:
                            if db.in_transaction:
                                db.execute("ROLLBACK")
                            raise
                    elif mode == "snapshot":
                        out = self._snapshot(db, ad, script, args)
                    elif script is _fetch:
                        # The shared one-statement scripts (a read, a renewal, the started mark) run
                        # on the cursor here, without the two coroutines and ``run_sync`` around them
                        # (~6.5k instructions a call); the worker still runs them as scripts.
                        out = cur.execute(q.sqlite_text(args[0]), args[1:]).fetchall()
                    elif script is _changed_one:
                        out = cur.execute(q.sqlite_text(args[0]), args[1:]).rowcount == 1
                    elif script is _finish:
                        out = _finish_now(ad, *args)
                    else:  # a read, or one write statement: atomic alone (autocommit)
                        out = run_sync(script(ad, *args))
                except sqlite3.OperationalError as exc:
                    if not _busy(exc):
                        raise self._typed(exc) from exc
                    # The write lock is held, or the snapshot moved: nothing was changed. Wait for
                    # the lock on the worker, off the event loop (it also retries a moved snapshot).
                except sqlite3.DatabaseError as exc:
                    raise self._typed(exc) from exc
                else:
                    self._inline_commits += 1
                    if self._inline_commits % 256 == 0 and self._checkpoint_done():
                        self._start_checkpoint(conn)
                    return out
            try:
                return await conn._execute(self._script, conn._conn, script, mode, args)
            except sqlite3.DatabaseError as exc:
                raise self._typed(exc) from exc
        except UnicodeEncodeError as exc:  # raised before SQLite sees anything: no change was made
            raise unstorable(self.name, exc) from None
        except ValueError as exc:  # aiosqlite: "Connection closed"
            if self._closed:
                raise StoreClosed(f"{self.name} is closed") from exc
            raise

    def _checkpoint_done(self) -> bool:
        return self._checkpoint is None or self._checkpoint.done()

    def _start_checkpoint(self, conn: aiosqlite.Connection) -> None:
        """A passive checkpoint on the worker, beside the inline writes (their commits never wait for
        its fsyncs). SQLite rewinds the WAL only after a checkpoint has copied every frame, and under
        a steady stream of inline writes none ever does: the file grew by each commit's pages for the
        life of the process (500 MB after 4,000 approval cycles). So once a checkpoint saw more than
        ``WAL_RESTART_FRAMES`` frames, the next one holds this process's writes back (they wait on
        the worker behind it, a few ms once per ~130 cycles) and the WAL starts over after it."""
        import asyncio

        last = self._checkpoint
        frames = last.result() if last is not None and not last.cancelled() and last.exception() is None else 0
        self._checkpoint_holds = frames > WAL_RESTART_FRAMES
        self._checkpoint = asyncio.ensure_future(conn._execute(_checkpoint, conn._conn))

    @staticmethod
    def _tx(db: sqlite3.Connection, body: Callable[[], T], begin: str = "BEGIN IMMEDIATE") -> T:
        db.execute(begin)
        try:
            out = body()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return out

    def _snapshot(self, db: sqlite3.Connection, ad: _Db, script: Script[T], args: tuple[Any, ...]) -> T:
        """Reads that must agree (a listing's runs, counts and calls), in one read transaction:
        ``BEGIN`` (deferred) takes no lock; the first SELECT fixes the snapshot the others see."""
        return self._tx(db, lambda: run_sync(script(ad, *args)), "BEGIN")

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

    def _script(self, db: sqlite3.Connection, script: Script[T], mode: Mode, args: tuple[Any, ...]) -> T:
        """One script on the worker's connection: reads as they come (a snapshot's in one read
        transaction), a script of several writes under ``BEGIN IMMEDIATE``, one write statement in
        autocommit. SQLITE_BUSY_SNAPSHOT (a write begun on a snapshot another connection wrote
        past; the busy timeout does not wait for it) changed nothing: the script runs again."""
        ad = _Db(db)
        for attempt in range(_SNAPSHOT_ATTEMPTS):
            try:
                if mode == "write":
                    return self._tx(db, lambda: run_sync(script(ad, *args)))
                if mode == "snapshot":
                    return self._snapshot(db, ad, script, args)
                return run_sync(script(ad, *args))
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", None) != _BUSY_SNAPSHOT or attempt == _SNAPSHOT_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def _save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        await self._run(_save, self.name, run, pending, owner, applied)

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        return await self._run(_checkpoint_script, run_id, owner, snapshot, applied)

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        """One statement in autocommit: the run deleted if ``owner`` holds its lease (its calls
        with it, by ``runs_calls_delete``); else True only when the run is already gone."""
        return await self._run(_finish, run_id, owner, mode="statement")

    # -- reads without an event loop --------------------------------------------------------
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
        return self._read_now(lambda db: run_sync(list_suspended(_Db(db), f, page, per_page)))

    def pending_page_now(
        self, f: SuspendedFilter, page: int, per_page: int, *, with_counts: bool = False
    ) -> tuple[list[SuspendedRunRow], int, dict[str, int] | None] | None:
        """One page of ``list_suspended`` and, with ``with_counts``, ``count_suspended_by_kind``,
        read as ``list_suspended_now`` does: the console's picker lists from it while the runtime
        is still loading. None when this read cannot answer."""

        def read(db: sqlite3.Connection) -> tuple[list[SuspendedRunRow], int, dict[str, int] | None]:
            rows, total = run_sync(list_suspended(_Db(db), f, page, per_page))
            return rows, total, run_sync(count_by_kind(_Db(db), f)) if with_counts else None

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
