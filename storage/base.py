"""The one async ``Store`` protocol every backend implements."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from storage.listing import ListKind, Sort
from storage.records import (
    AuditRow,
    CallKind,
    ClaimResult,
    Decision,
    GrantRow,
    PendingCallRow,
    RunRow,
    SuspendedRunRow,
)


def prefix_upper_bound(prefix: str) -> str | None:
    """The least string above every string that starts with ``prefix`` (code-point order, which is
    SQLite's BINARY and PostgreSQL's C order), None if there is none: ``id >= prefix AND id < bound``
    is a range scan of the primary-key index, where SQLite's LIKE (case-insensitive) scans the table."""
    stripped = prefix.rstrip("\U0010ffff")
    if not stripped:
        return None
    nxt = ord(stripped[-1]) + 1
    if 0xD800 <= nxt <= 0xDFFF:  # no surrogates in stored text
        nxt = 0xE000
    return stripped[:-1] + chr(nxt)


#: Called inside the decision's transaction with the pending call and its run
#: (snapshot included); returns the
#: decision or raises (then nothing changes). Keeps validation and the
#: compare-and-set in one transaction, one worker hop.
DecideFn = Callable[[PendingCallRow, RunRow], Decision]


@runtime_checkable
class Store(Protocol):
    #: human-readable identity used in error messages, e.g. ``SqliteStore('/tmp/w.db')``.
    name: str

    async def save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], *, owner: str | None = None, applied: list[str] | None = None
    ) -> None:
        """Store a suspended run with its pending calls.

        ``owner=None``: a fresh run (insert). Otherwise the caller holds the
        lease: the row is updated, the calls in ``applied`` (decisions it just
        applied) are removed, ``pending`` rows are upserted, the lease released.
        Decisions recorded by others meanwhile are left as they are.
        """
        ...

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
        """Compare-and-set one pending call to a decision, audit it, and try to take the run's lease."""
        ...

    async def acquire_lease(
        self, run_id: str, owner: str, lease_seconds: float, *, waiting_call: str | None = None
    ) -> RunRow | None:
        """Take the lease of a run whose lease is free or expired; the run row, or None.

        ``waiting_call``: the call whose decision the caller waits to apply; while
        it keeps asking, that decision stays held (``decided_until``) and never
        reads as returned to pending.
        """
        ...

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        """The durable "started" mark, written before a decided call's tool runs (own transaction).

        Compare-and-set on the lease: False (nothing written) when ``owner`` no
        longer holds a live lease on the run; the caller must then not run the tool.
        """
        ...

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        """Store the snapshot of a run whose step's calls all have results, keeping the lease.

        The calls in ``applied`` are over (their results are in the snapshot):
        their rows go. False (nothing written) when ``owner`` lost the lease.
        """
        ...

    async def list_expired(self, *, limit: int = 100) -> list[RunRow]:
        """Runs left ``running`` under an expired lease (a process died or stalled), snapshot included."""
        ...

    async def settle(self, run_id: str) -> int:
        """Make read-time recovery durable for a run whose lease expired.

        Decided calls whose tool never started go back to pending (audit:
        ``returned-to-pending``); a run with calls left is ``suspended`` again,
        one without any stays ``running`` (free to continue). Returns the number
        of calls returned to pending; does nothing while a lease is live.
        """
        ...

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        """Extend a lease this owner holds (a long tool is still running); False if it was lost."""
        ...

    async def release(self, run_id: str, owner: str, *, reset_call: str | None = None) -> None:
        """Give a run back after an interrupted application: lease freed, run listed again.

        ``reset_call``: a decision that was recorded but never applied (its tool
        did not start) goes back to pending, so it can be decided again.
        """
        ...

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        """The run ended: delete it and its pending calls (the audit log stays).

        False (nothing deleted) when ``owner`` no longer holds the run's lease.
        """
        ...

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        """Keep the run as ``failed`` (out of the pending list); False when ``owner`` lost the lease."""
        ...

    async def get_run(self, run_id: str) -> RunRow | None: ...

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        """Every stored call row of the run, as stored (see ``records.actionable`` for how they read)."""
        ...

    async def get_suspended(self, run_id: str) -> SuspendedRunRow | None:
        """The run as listed (actionable calls only, read at this moment), or None if not listed."""
        ...

    async def find_ids(self, prefix: str, *, run_id: str | None = None, limit: int = 10) -> list[str]:
        """Stored ids starting with ``prefix``, sorted, at most ``limit`` (so the CLI can take a short
        unique prefix of an id): run ids (every run, finished ones too), or with ``run_id`` the
        tool-call ids of that run. A range on the primary key (``prefix_upper_bound``): case-sensitive,
        no wildcards to escape, an index seek."""
        ...

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
        """Runs with at least one actionable call (never writes; lease expiry is read, not applied).

        Filtered and ordered by the database (``storage.listing.SuspendedFilter``): ``query`` terms
        over agent, thread, tool name and arguments; ``tool_name`` and ``kind`` (``approval`` or
        ``input``) also narrow the calls listed with each run; ``sort`` is ``age`` (newest first),
        ``agent`` or ``tool``. The total counts the runs the filters match.
        """
        ...

    async def thread_call_ids(self, thread_id: str) -> set[str]:
        """The tool-call ids of every stored call of the thread's runs, failed runs aside (one
        indexed query): a new call never takes one, so a thread's pending calls have distinct ids
        (``send_tool_approval(thread_id=..., tool_call_id=...)`` names one call). A superset of
        the ids its listing shows: decided calls of a run being applied count too."""
        ...

    async def count_suspended_by_kind(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: str | None = None,
        tool_name: str | None = None,
    ) -> dict[str, int]:
        """Pending calls of suspended runs per kind, ``{"approval": n, "input": m}``, under the
        same filters as ``list_suspended`` (for the picker's header; one grouped query)."""
        ...

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
        """Audit entries in chain order (``seq``), filtered; ``after`` (a ``seq``) and ``limit`` page."""
        ...

    async def append_audit(self, entries: AuditRow | Iterable[AuditRow]) -> list[AuditRow]:
        """Append one entry, or several in order, outside a decision (a grant's approval, a webhook failure).

        ``seq`` and the hashes are assigned here, under the store's write lock, so the chain holds;
        returns the entries as sealed.
        """
        ...

    async def list_overdue(self, now: float, *, limit: int = 100) -> list[PendingCallRow]:
        """Pending approval calls whose ``expires_at`` is before ``now`` (indexed; the sweep's work list)."""
        ...

    async def add_grant(self, grant: GrantRow) -> None: ...

    async def list_grants(self, now: float, *, tool_name: str | None = None) -> list[GrantRow]:
        """Live grants (not expired at ``now``), oldest first; only ``tool_name``'s when given."""
        ...

    async def delete_grant(self, grant_id: str) -> bool:
        """Revoke a grant; False when there is none with that id."""
        ...

    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]: ...

    async def append_messages(
        self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]
    ) -> None: ...

    async def aclose(self) -> None: ...
