"""The one async ``Store`` protocol every backend implements."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from storage.records import (
    AuditRow,
    CallKind,
    ClaimResult,
    Decision,
    PendingCallRow,
    RunRow,
    SuspendedRunRow,
)

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

    async def acquire_lease(self, run_id: str, owner: str, lease_seconds: float) -> RunRow | None:
        """Take the lease of a suspended run whose lease is free or expired; the run row, or None."""
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

    async def finish_run(self, run_id: str, owner: str | None) -> None:
        """The run ended: delete it and its pending calls (the audit log stays)."""
        ...

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> None: ...

    async def get_run(self, run_id: str) -> RunRow | None: ...

    async def get_calls(self, run_id: str) -> list[PendingCallRow]: ...

    async def list_suspended(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> tuple[list[SuspendedRunRow], int]: ...

    async def audit_log(self, run_id: str | None = None, tool_call_id: str | None = None) -> list[AuditRow]: ...

    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]: ...

    async def append_messages(
        self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]
    ) -> None: ...

    async def aclose(self) -> None: ...
