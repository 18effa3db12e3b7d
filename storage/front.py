"""The keyword surface of ``Store`` written once for every backend.

The methods with many keywords (listing, counts, audit, claims) are spelt here
and turned into one value each (a filter, the claim's arguments), so a backend
implements only ``_list_suspended``, ``_count_by_kind``, ``_audit_log`` and
``_claim`` and a keyword cannot be dropped or renamed in one store alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from storage.audit import AuditFilter, as_list
from storage.base import DecideFn
from storage.listing import ListKind, Sort, SuspendedFilter
from storage.records import AuditRow, CallKind, ClaimResult, PendingCallRow, RunRow, SuspendedRunRow
from storage.rules import ClaimRequest


class StoreFront:
    """The public keyword methods; a subclass supplies the underscored ones."""

    async def save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], *, owner: str | None = None, applied: list[str] | None = None
    ) -> None:
        await self._save_suspended(run, pending, owner, applied or [])

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
        return await self._claim(ClaimRequest(run_id, tool_call_id, kinds, decide, owner, lease_seconds))

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
        return await self._list_suspended(f, page, per_page)

    async def count_suspended_by_kind(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        query: str | None = None,
        tool_name: str | None = None,
    ) -> dict[str, int]:
        """Pending calls per kind (``approval``, ``input``) of the suspended runs the filters list."""
        return await self._count_by_kind(SuspendedFilter(agent_id, thread_id, resource_id, query, tool_name))

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
        return await self._audit_log(AuditFilter(run_id, tool_call_id, agent_id, actor, since, decision, after, limit))

    async def append_audit(self, entries: AuditRow | Iterable[AuditRow]) -> list[AuditRow]:
        return await self._append_audit(as_list(entries))

    # -- what a backend implements ------------------------------------------------------
    async def _save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        raise NotImplementedError

    async def _claim(self, req: ClaimRequest) -> ClaimResult:
        raise NotImplementedError

    async def _list_suspended(self, f: SuspendedFilter, page: int, per_page: int) -> tuple[list[SuspendedRunRow], int]:
        raise NotImplementedError

    async def _count_by_kind(self, f: SuspendedFilter) -> dict[str, int]:
        raise NotImplementedError

    async def _audit_log(self, f: AuditFilter) -> list[AuditRow]:
        raise NotImplementedError

    async def _append_audit(self, rows: list[AuditRow]) -> list[AuditRow]:
        raise NotImplementedError
