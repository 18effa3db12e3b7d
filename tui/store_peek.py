"""Pending runs read straight from a SQLite file, while the console's runtime is still loading.

The runtime (agent_core, its pydantic models, the demo agents) takes longer to load than the
console's first frame and the picker's first page together; listing needs none of it: the
store's own query (``SqliteStore.pending_page_now``) on a connection of its own, its rows
shaped as ``PendingRun`` the way ``LocalBackend`` shapes the runtime's views. Decisions
still wait for the runtime (``DeferredBackend``). No agent_core, no textual here.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING

# the backend's value types load with the first page read, after the first frame
if TYPE_CHECKING:
    from storage.records import PendingCallRow, SuspendedRunRow
    from storage.sqlite import SqliteStore
    from tui.backend import PendingCall, PendingPage, PendingQuery, PendingRun


def sqlite_path(db: str) -> str | None:
    """The file a ``--db`` value names when it is a plain SQLite path (not a URL, not ``memory:``)."""
    if db.lower().startswith(("postgresql://", "postgres://", "sqlite:", "memory:")):
        return None
    return os.path.expanduser(db)


class SqlitePeek:
    """``list_pending`` of a ``ConsoleBackend``, answered from a SQLite file (None: ask the runtime).

    Called in a worker thread (``DeferredBackend``): the store module is imported there too."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._store: SqliteStore | None = None

    @property
    def store(self) -> SqliteStore:
        if self._store is None:
            from storage.sqlite import SqliteStore

            self._store = SqliteStore(self.path, read_only=True)
        return self._store

    def any_pending(self) -> bool:
        """Whether the file holds suspended runs, from the per-agent counts its triggers keep
        (``run_counts``, see ``storage.sqlite``): one indexed read with ``sqlite3`` alone, before
        the store's modules are imported. False when unsure (no file, another schema, an error):
        the console then opens as usual and lists after its first frame."""
        if not os.path.isfile(self.path):
            return False
        import sqlite3

        try:
            db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
            try:
                return bool(db.execute("SELECT 1 FROM run_counts WHERE suspended > 0 LIMIT 1").fetchone())
            finally:
                db.close()
        except sqlite3.Error:
            return False

    def list_pending(
        self,
        *,
        page: int = 0,
        per_page: int = 50,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: PendingQuery | None = None,
        with_counts: bool = False,
    ) -> PendingPage | None:
        """One page as ``LocalBackend.list_pending`` gives it (no file yet: nothing pending); None
        when the file cannot answer without the runtime (a schema to migrate)."""
        from storage.listing import SuspendedFilter
        from tui.backend import PendingPage, listing_filters

        p = listing_filters(query, agent_id, thread_id)
        f = SuspendedFilter(
            p["agent_id"],
            p["thread_id"],
            resource_id,
            p.get("query"),
            p.get("tool_name"),
            p.get("kind"),
            p.get("sort", "age"),
        )
        if not os.path.isfile(self.path):  # nothing stored yet: nothing pending
            counts = dict.fromkeys(("approval", "input"), 0) if with_counts else None
            return PendingPage([], 0, page, per_page, counts)
        read = self.store.pending_page_now(f, page, per_page, with_counts=with_counts)
        if read is None:
            return None
        rows, total, counts = read
        return PendingPage([_run(r) for r in rows if r.error is None], total, page, per_page, counts)


def _run(row: SuspendedRunRow) -> PendingRun:
    from tui.backend import PendingRun

    r = row.run
    calls = tuple(_call(c) for c in row.calls)
    return PendingRun(
        r.run_id, r.agent_id, r.thread_id, r.resource_id, datetime.fromtimestamp(r.suspended_at, UTC), calls
    )


def _call(c: PendingCallRow) -> PendingCall:
    from tui.backend import PendingCall

    # as ``agent_core.views.PendingToolCall.from_row``: an interrupted call is decided like an approval
    return PendingCall(
        run_id=c.run_id,
        tool_call_id=c.tool_call_id,
        tool_name=c.tool_name,
        args=dict(c.args or {}),
        kind="input" if c.kind == "suspend" else "approval",
        fingerprint=c.fingerprint,
        suspend_payload=c.suspend_payload,
        resume_schema=c.resume_schema,
        agent_path=tuple(c.agent_path or ()),
        expires_at=None if c.expires_at is None or c.kind != "approval" else datetime.fromtimestamp(c.expires_at, UTC),
        policy_rule=c.policy_rule,
        approvers_required=c.approvers_required,  # the votes come with the runtime's listing
    )
