"""SQL that SQLite and PostgreSQL share, written once: statements and the common part of each migration.

Statements use PostgreSQL's numbered placeholders (``$1``); the SQLite driver reads
them as ``?1`` (same number, same parameter: ``sqlite_text``). Migrations are
templates over the few column types that differ (``SQLITE_TYPES``, ``POSTGRES_TYPES``); each dialect adds its
own pieces (SQLite's counting triggers, PostgreSQL's NOTIFY triggers and
``warden_claim``) where the schemas differ. The SQL spelling of a decision rule
comes from ``storage.rules``, beside the rule.
"""

from __future__ import annotations

import re
from dataclasses import fields

from storage import rules
from storage.records import AuditRow
from storage.rows import CALL_COLS, GRANT_COLS, RUN_COLS, RUN_LIST_COLS

SCHEMA_VERSION = 10

_MARK = re.compile(r"\$(\d+)")
_SQLITE_TEXT: dict[str, str] = {}


def sqlite_text(sql: str) -> str:
    """A statement with ``$n`` placeholders as SQLite reads it (``?n``), translated once per text."""
    out = _SQLITE_TEXT.get(sql)
    if out is None:
        out = _SQLITE_TEXT[sql] = _MARK.sub(r"?\1", sql)
    return out


def mark(n: int) -> str:
    """The n-th placeholder (1-based), as ``SuspendedFilter.sql`` and ``AuditFilter.sql`` ask."""
    return f"${n}"


# -- runs -----------------------------------------------------------------------------------
RUN_BY_ID = f"SELECT {RUN_COLS} FROM runs WHERE run_id = $1"
RUN_LISTED_BY_ID = f"SELECT {RUN_LIST_COLS} FROM runs WHERE run_id = $1"
RUN_EXISTS = "SELECT 1 FROM runs WHERE run_id = $1"
INSERT_RUN = (
    "INSERT INTO runs (run_id, agent_id, thread_id, resource_id, status, snapshot, version, "
    "created_at, suspended_at, updated_at) VALUES ($1, $2, $3, $4, 'suspended', $5, 1, $6, $7, $8)"
)
#: a run saved again by its lease holder: suspended, its lease freed.
SAVE_OWNED = (
    "UPDATE runs SET status = 'suspended', snapshot = $1, version = version + 1, "
    "lease_owner = NULL, lease_until = NULL, suspended_at = $2, updated_at = $3 "
    f"WHERE run_id = $4 AND {rules.holds_sql('$5', '$3')}"
)
TAKE_LEASE = (
    "UPDATE runs SET lease_owner = $1, lease_until = $2, status = 'running', updated_at = $3 "
    f"WHERE run_id = $4 AND {rules.lease_free_sql('$3')} RETURNING {RUN_COLS}"
)
#: the lease a claim takes (the run was read lease-free in the same transaction).
CLAIM_LEASE = (
    "UPDATE runs SET lease_owner = $1, lease_until = $2, status = 'running', updated_at = $3 WHERE run_id = $4"
)
RENEW_LEASE = "UPDATE runs SET lease_until = $1 WHERE run_id = $2 AND lease_owner = $3"
CHECKPOINT = (
    "UPDATE runs SET snapshot = $1, version = version + 1, updated_at = $2 "
    f"WHERE run_id = $3 AND {rules.holds_sql('$4', '$2')}"
)
#: the run given back: lease freed, status by ``rules.status_when_given_back``; $3: only its holder's.
GIVE_BACK = (
    f"UPDATE runs SET status = {rules.given_back_sql('$1')}, lease_owner = NULL, lease_until = 0, "
    "updated_at = $2 WHERE run_id = $1"
)
GIVE_BACK_HELD = GIVE_BACK + " AND lease_owner = $3"
#: the run a settlement may write (``rules.lease_free``); PostgreSQL appends its row lock.
SETTLE_RUN = f"SELECT agent_id FROM runs WHERE run_id = $1 AND {rules.lease_free_sql('$2')}"
FAIL_RUN = (
    "UPDATE runs SET status = 'failed', snapshot = $1, error = $2, lease_owner = NULL, "
    "lease_until = NULL, version = version + 1, updated_at = $3 WHERE run_id = $4 "
    f"AND (CAST($5 AS TEXT) IS NULL OR ({rules.holds_sql('$5', '$3')}))"
)
#: a finished run deleted, only by its lease holder ($2; None: by anyone), in the same statement
#: (SQLite's ``runs_calls_delete`` trigger removes its calls with it: one statement, no transaction).
FINISH_RUN = f"DELETE FROM runs WHERE run_id = $1 AND (CAST($2 AS TEXT) IS NULL OR ({rules.holds_sql('$2', '$3')}))"
LIST_EXPIRED = f"SELECT {RUN_COLS} FROM runs WHERE status = 'running' AND lease_until < $1 LIMIT $2"
EXPIRED_LISTED = f"SELECT {RUN_LIST_COLS} FROM runs WHERE status = 'running' AND lease_until < $1"
SUSPENDED_TOTAL = "SELECT COALESCE(SUM(suspended), 0) FROM run_counts"
SUSPENDED_OF_AGENT = "SELECT suspended FROM run_counts WHERE agent_id = $1"
AGENT_OF_RUN = "SELECT agent_id FROM runs WHERE run_id = $1"

# -- pending calls ----------------------------------------------------------------------------
CALLS_OF_RUN = f"SELECT {CALL_COLS} FROM pending_calls WHERE run_id = $1 ORDER BY created_at, seq"
_N_CALL_COLS = len(CALL_COLS.split(","))
INSERT_CALL = (
    f"INSERT INTO pending_calls ({CALL_COLS}) VALUES ({', '.join(f'${i}' for i in range(1, _N_CALL_COLS + 1))}) "
    "ON CONFLICT (run_id, tool_call_id) DO NOTHING"
)
DELETE_CALL = "DELETE FROM pending_calls WHERE run_id = $1 AND tool_call_id = $2"
#: a run and its call(s) (the one named by $2, or all) in one statement: what a claim decides on.
CLAIM_READ = (
    f"SELECT {', '.join('r.' + c.strip() for c in RUN_COLS.split(','))}, "
    f"{', '.join('c.' + c.strip() for c in CALL_COLS.split(','))} FROM runs r LEFT JOIN pending_calls c "
    "ON c.run_id = r.run_id AND (CAST($2 AS TEXT) IS NULL OR c.tool_call_id = $2) WHERE r.run_id = $1"
)
#: the columns of a run in ``CLAIM_READ``'s rows (the call's follow).
N_RUN_COLS = len(RUN_COLS.split(","))
#: the compare-and-set of ``rules.plan_claim`` on the call as it was read.
CLAIM_CALL = (
    "UPDATE pending_calls SET status = $1, started_at = NULL, decided_until = $2, decided_by = $3, "
    "resume_data = $4, edited_args = $5 WHERE run_id = $6 AND tool_call_id = $7 AND status = $8 "
    "AND (started_at = $9 OR (started_at IS NULL AND $9 IS NULL)) AND decided_until = $10"
)
HOLD_DECISION = (
    f"UPDATE pending_calls SET decided_until = $1 WHERE run_id = $2 AND tool_call_id = $3 AND {rules.HELD_SQL}"
)
MARK_STARTED = (
    f"UPDATE pending_calls SET started_at = $1 WHERE run_id = $2 AND tool_call_id = $3 AND {rules.MAY_START_SQL} "
    f"AND EXISTS (SELECT 1 FROM runs WHERE run_id = $2 AND {rules.holds_sql('$4', '$1')})"
)
#: ``release(reset_call=...)``: the decision given back (``rules.undone``).
WITHDRAW_CALL = (
    f"UPDATE pending_calls SET {rules.BACK_TO_PENDING_SQL} WHERE run_id = $1 AND tool_call_id = $2 "
    f"AND {rules.UNDONE_SQL} RETURNING tool_call_id, tool_name, fingerprint"
)
#: ``settle``: the lapsed decisions back to pending (``rules.lapsed``).
RETURN_LAPSED = (
    f"UPDATE pending_calls SET {rules.BACK_TO_PENDING_SQL} WHERE run_id = $1 AND {rules.lapsed_sql('$2')} "
    "RETURNING tool_call_id, tool_name, fingerprint"
)
LIST_OVERDUE = (
    f"SELECT {CALL_COLS} FROM pending_calls WHERE status = 'pending' AND expires_at IS NOT NULL "
    "AND expires_at < $1 AND kind = 'approval' ORDER BY expires_at LIMIT $2"
)
#: ``Store.thread_call_ids``: one range of the ``runs_in_thread`` index (version 7), then each run's calls.
THREAD_CALL_IDS = (
    "SELECT c.tool_call_id FROM runs r JOIN pending_calls c ON c.run_id = r.run_id "
    "WHERE r.thread_id = $1 AND r.status <> 'failed'"
)
AUDITED = "SELECT 1 FROM audit_log WHERE run_id = $1 AND tool_call_id = $2 LIMIT 1"

# -- audit, grants, memory -------------------------------------------------------------------
AUDIT_COLUMNS = ", ".join(f.name for f in fields(AuditRow))
AUDIT_HEAD = "SELECT seq, hash FROM audit_log WHERE seq IS NOT NULL ORDER BY seq DESC LIMIT 1"
INSERT_AUDIT = (
    f"INSERT INTO audit_log ({AUDIT_COLUMNS}) VALUES ({', '.join(f'${i + 1}' for i in range(len(fields(AuditRow))))})"
)
INSERT_GRANT = f"INSERT INTO grants ({GRANT_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
LIVE_GRANTS = f"SELECT {GRANT_COLS} FROM grants WHERE (expires_at IS NULL OR expires_at > $1)"
GRANTS_ORDER = " ORDER BY created_at, id"
DELETE_GRANT = "DELETE FROM grants WHERE id = $1"
MESSAGES = "SELECT body FROM messages WHERE thread_id = $1 ORDER BY id"
LAST_MESSAGES = (
    "SELECT body FROM (SELECT id, body FROM messages WHERE thread_id = $1 ORDER BY id DESC LIMIT $2) m ORDER BY id"
)
TOUCH_THREAD = (
    "INSERT INTO threads (thread_id, resource_id, created_at, updated_at) VALUES ($1, $2, $3, $3) "
    "ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at"
)
INSERT_MESSAGE = "INSERT INTO messages (thread_id, resource_id, body, created_at) VALUES ($1, $2, $3, $4)"


# -- migrations -------------------------------------------------------------------------------
#: the column types and table options in which the two schemas differ (``keyed``: after a table
#: whose primary key is its whole point, SQLite's ``WITHOUT ROWID``).
SQLITE_TYPES = {"real": "REAL", "bigint": "INTEGER", "serial_key": "INTEGER PRIMARY KEY", "keyed": " WITHOUT ROWID"}
POSTGRES_TYPES = {"real": "DOUBLE PRECISION", "bigint": "BIGINT", "serial_key": "BIGSERIAL PRIMARY KEY", "keyed": ""}

_RUNS = """
    CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        thread_id TEXT,
        resource_id TEXT,
        status TEXT NOT NULL,
        snapshot TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 1,
        lease_owner TEXT,
        lease_until {real},
        created_at {real} NOT NULL,
        suspended_at {real} NOT NULL,
        updated_at {real} NOT NULL,
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
        suspended {bigint} NOT NULL
    ){keyed};
"""
_CALLS_AND_AUDIT = """
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
        created_at {real} NOT NULL,
        PRIMARY KEY (run_id, tool_call_id)
    ){keyed};
    CREATE TABLE audit_log (
        id {serial_key},
        run_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        decision TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        reason TEXT,
        actor TEXT,
        decided_at {real} NOT NULL
    );
    CREATE INDEX audit_by_call ON audit_log (run_id, tool_call_id);
"""
_MEMORY = """
    CREATE TABLE threads (
        thread_id TEXT PRIMARY KEY,
        resource_id TEXT,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE TABLE messages (
        id {serial_key},
        thread_id TEXT NOT NULL,
        resource_id TEXT,
        body TEXT NOT NULL,
        created_at {real} NOT NULL
    );
    CREATE INDEX messages_by_thread ON messages (thread_id, id);
"""
# Crash recovery: the "started" mark, a waiting decider's hold, the actor, resume data.
# Calls decided under version 1 may have started: they read as interrupted, never re-run.
_V2 = """
    ALTER TABLE pending_calls ADD COLUMN started_at {real};
    ALTER TABLE pending_calls ADD COLUMN decided_until {real} NOT NULL DEFAULT 0;
    ALTER TABLE pending_calls ADD COLUMN decided_by TEXT;
    ALTER TABLE pending_calls ADD COLUMN resume_data TEXT;
    UPDATE pending_calls SET started_at = created_at WHERE status <> 'pending';
"""
# Operator power: approval deadlines, edited arguments, audit details, grants.
_V3 = """
    ALTER TABLE pending_calls ADD COLUMN expires_at {real};
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
        expires_at {real},
        created_by TEXT,
        created_at {real} NOT NULL
    );
    CREATE INDEX grants_by_tool ON grants (tool_name, created_at);
"""
# The audit trail's hash chain (storage.audit); edited arguments and grant ids live in
# ``detail`` (version 3). Entries written before read as unsealed; their order is their position.
_V4_COLUMNS = """
    ALTER TABLE audit_log ADD COLUMN seq {bigint};
    ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
    ALTER TABLE audit_log ADD COLUMN hash TEXT;
"""
_V4_INDEXES = """
    CREATE UNIQUE INDEX audit_by_seq ON audit_log (seq);
    CREATE INDEX audit_by_agent ON audit_log (agent_id, seq);
"""
# The picker's filters by tool and kind (``storage.listing``) find pending calls by index.
_V5 = """
    CREATE INDEX pending_calls_by_tool ON pending_calls (tool_name, run_id) WHERE status = 'pending';
    CREATE INDEX pending_calls_by_kind ON pending_calls (kind, run_id) WHERE status = 'pending';
"""

# Policy as data: a gated call's required approvers and rule, and who started its run, on the
# call's row, so listings show them without reading snapshots (calls stored before: 1, none, none).
_V6 = """
    ALTER TABLE pending_calls ADD COLUMN approvers_required INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE pending_calls ADD COLUMN policy_rule TEXT;
    ALTER TABLE pending_calls ADD COLUMN requested_by TEXT;
"""


# A new call's id is checked against the ids stored in its thread (``Store.thread_call_ids``) by
# index, not by paging the thread's listing. Only runs in a thread are indexed, and on
# ``thread_id`` alone: a status change (suspended <-> running) leaves the index untouched.
# The listing's thread and resource indexes leave out the runs without one (most runs), so a
# run saved, claimed and finished writes two index pages fewer at each change of its status
# (SQLite: 30 -> 26 WAL frames per approval cycle; a listing by thread or resource still seeks them).
_V7 = """
    CREATE INDEX runs_in_thread ON runs (thread_id) WHERE thread_id IS NOT NULL;
    DROP INDEX runs_by_thread;
    CREATE INDEX runs_by_thread ON runs (thread_id, agent_id, suspended_at DESC, run_id DESC)
        WHERE status = 'suspended' AND thread_id IS NOT NULL;
    DROP INDEX runs_by_resource;
    CREATE INDEX runs_by_resource ON runs (resource_id, agent_id, suspended_at DESC, run_id DESC)
        WHERE status = 'suspended' AND resource_id IS NOT NULL;
"""


# The picker's two pending-only indexes (by tool, by kind: version 5) as one: every call stored
# and every call decided wrote a page of each (SQLite: 2 of a cycle's WAL frames). The listing's
# filters by tool or kind read a run's calls by their key inside its EXISTS, as before (the plans
# are in tests/test_storage.py); the header's counts (``listing.count_sql``) seek a tool here or
# read the whole index in one pass, as they did ``by_tool`` and ``by_kind``; ``LIST_OVERDUE`` now
# reads ``pending_calls_overdue`` (it took ``by_kind`` and sorted every pending approval).
_V8 = """
    DROP INDEX pending_calls_by_tool;
    DROP INDEX pending_calls_by_kind;
    CREATE INDEX pending_calls_open ON pending_calls (tool_name, kind, run_id) WHERE status = 'pending';
"""

# Commands, not tool names: a grant for a shell or SQL tool covers only calls whose every command
# starts with a granted argv prefix (or has a granted statement kind): ``command_match``, JSON
# (agent_core.policy_commands.CommandGrant). Grants stored before have none: they match as before.
_V10 = """
    ALTER TABLE grants ADD COLUMN command_match TEXT;
"""


def migrations(
    types: dict[str, str],
    *,
    runs_triggers: str,
    audit_triggers: str,
    number_audit: str,
    v5: str = "",
    v8: str = "",
    v9: str = "",
) -> dict[int, str]:
    """Every migration of a dialect, one script per version, with the dialect's own pieces where
    the schemas differ: version 1's triggers after ``runs`` (what keeps ``run_counts``) and after
    ``audit_log``, version 4's numbering of the entries written before the chain, version 5's
    function (PostgreSQL's ``warden_claim``) before its indexes, version 8's own changes (SQLite's
    audit table keyed by ``seq``), version 9 (PostgreSQL only: its triggers, claim functions and
    audit key)."""

    def t(text: str) -> str:
        return text.format(**types)

    return {
        1: t(_RUNS) + runs_triggers + t(_CALLS_AND_AUDIT) + audit_triggers + t(_MEMORY),
        2: t(_V2),
        3: t(_V3),
        4: t(_V4_COLUMNS) + number_audit + _V4_INDEXES,
        5: v5 + _V5,
        6: _V6,
        7: _V7,
        8: _V8 + v8,
        9: v9,
        10: _V10,
    }
