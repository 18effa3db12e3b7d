"""In-process store: the default for agents outside a ``Runtime``; lost when the process exits.

Same semantics as ``SqliteStore`` (compare-and-set decisions, leases, audit
log); each method runs without awaiting, so it is atomic on the event loop.
Rows are handed out as shallow copies: callers treat their JSON values as
read-only, and a deep copy per decision would cost more than the decision.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable
from typing import Any

from storage.audit import AuditFilter, as_list, seal
from storage.base import DecideFn
from storage.errors import StorageError, StoreClosed
from storage.listing import ListKind, Sort, SuspendedFilter, count_kinds
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


class InMemoryStore:
    def __init__(self) -> None:
        self.name = f"InMemoryStore(id={id(self):#x})"
        self._runs: dict[str, RunRow] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        self._calls: dict[str, dict[str, PendingCallRow]] = {}
        self._audit: list[AuditRow] = []
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._grants: dict[str, GrantRow] = {}
        self._closed = False

    def __repr__(self) -> str:
        return self.name

    def _check(self) -> None:
        if self._closed:
            raise StoreClosed(f"{self.name} is closed")

    def _view(self, run: RunRow) -> RunRow:
        """A copy of the run with its lease."""
        out = copy.copy(run)
        out.lease_owner, out.lease_until = self._leases.get(run.run_id, (None, None))
        return out

    def _holds(self, run_id: str, owner: str | None, now: float) -> bool:
        lease = self._leases.get(run_id)
        return owner is not None and lease is not None and lease[0] == owner and lease[1] >= now

    def _audit_row(
        self,
        run: RunRow,
        call: PendingCallRow,
        decision: str,
        reason: str | None,
        actor: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self._append(
            [
                AuditRow(
                    run_id=run.run_id,
                    tool_call_id=call.tool_call_id,
                    agent_id=run.agent_id,
                    tool_name=call.tool_name,
                    decision=decision,
                    fingerprint=call.fingerprint,
                    reason=reason,
                    decided_at=time.time(),
                    actor=actor,
                    detail=copy.deepcopy(detail),
                )
            ]
        )

    def _append(self, rows: list[AuditRow]) -> list[AuditRow]:
        last = self._audit[-1] if self._audit else None
        sealed = seal(rows, last.seq if last else 0, last.hash if last else None)
        self._audit.extend(sealed)
        return [copy.copy(r) for r in sealed]

    async def setup(self) -> None:
        self._check()

    async def aclose(self) -> None:
        self._closed = True

    async def save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], *, owner: str | None = None, applied: list[str] | None = None
    ) -> None:
        self._check()
        now = time.time()
        calls = self._calls.setdefault(run.run_id, {})
        if owner is None:
            if run.run_id in self._runs:
                raise StorageError(f"{self.name}: run {run.run_id!r} already stored")
            stored = copy.copy(run)
            stored.status, stored.version = "suspended", 1
            stored.created_at = run.created_at or now
        else:
            current = self._runs.get(run.run_id)
            if current is None or not self._holds(run.run_id, owner, now):
                raise StorageError(f"{self.name}: lost the lease on run {run.run_id!r}; not saved")
            stored = copy.copy(current)
            stored.snapshot, stored.status, stored.version = run.snapshot, "suspended", current.version + 1
            self._leases.pop(run.run_id, None)
            for cid in applied or []:
                calls.pop(cid, None)
        stored.suspended_at = run.suspended_at or now
        self._runs[run.run_id] = stored
        for c in pending:
            calls.setdefault(c.tool_call_id, copy.copy(c))

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
        self._check()
        now = time.time()
        audited = tool_call_id is not None and any(
            a.run_id == run_id and a.tool_call_id == tool_call_id for a in self._audit
        )
        run = self._runs.get(run_id)
        if run is None:
            return ClaimResult("no_run", audited=audited)
        view = self._view(run)
        calls = self._calls.get(run_id, {})
        if tool_call_id is not None:
            stored = calls.get(tool_call_id)
            if stored is None:
                return ClaimResult("no_call", audited=audited)
            current = actionable(stored, view, now)
            if current is None:
                return ClaimResult("not_pending", call=copy.copy(stored), audited=True)
        else:
            open_calls = [c for c in (actionable(c, view, now) for c in calls.values()) if c is not None]
            candidates = [c for c in open_calls if c.kind in kinds]
            if not candidates:
                return ClaimResult("no_call_of_kind" if open_calls else "no_call", other_kinds=bool(open_calls))
            current = max(candidates, key=lambda c: (c.created_at, c.seq))
            stored = calls[current.tool_call_id]
        decision = decide(copy.copy(current), copy.copy(view))
        if stored.status != "pending" and current.kind != "interrupted":
            self._audit_row(run, stored, "returned-to-pending", "lease expired before the tool started")
        label = (
            "re-executed" if current.kind == "interrupted" and decision.status != "declined" else decision.audit_label
        )
        stored.status, stored.started_at, stored.decided_by = decision.status, None, decision.actor
        stored.resume_data, stored.edited_args = decision.resume_data, decision.edited_args
        stored.decided_until = now + lease_seconds
        self._audit_row(run, stored, label, decision.reason, decision.actor, decision.detail)
        lease = self._leases.get(run_id)
        if lease is None or lease[1] < now:
            self._leases[run_id] = (owner, now + lease_seconds)
            run.status = "running"
            stored.decided_until = 0.0  # applied by this holder: its lease covers the call
            return ClaimResult("ok", call=current, run=self._view(run))
        return ClaimResult("ok", call=current, run=None)

    async def acquire_lease(
        self, run_id: str, owner: str, lease_seconds: float, *, waiting_call: str | None = None
    ) -> RunRow | None:
        self._check()
        run = self._runs.get(run_id)
        now = time.time()
        if run is None or run.status == "failed":
            return None
        if lease_live(self._view(run), now):
            call = self._calls.get(run_id, {}).get(waiting_call or "")
            if call is not None and call.status != "pending" and call.started_at is None:
                call.decided_until = now + lease_seconds
            return None
        self._leases[run_id] = (owner, now + lease_seconds)
        run.status = "running"
        return self._view(run)

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        self._check()
        if self._leases.get(run_id, ("",))[0] != owner:
            return False
        self._leases[run_id] = (owner, time.time() + lease_seconds)
        return True

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        self._check()
        now = time.time()
        call = self._calls.get(run_id, {}).get(tool_call_id)
        if not self._holds(run_id, owner, now) or call is None or call.status == "pending":
            return False
        call.started_at = now
        return True

    async def checkpoint(self, run_id: str, owner: str, snapshot: str, applied: list[str]) -> bool:
        self._check()
        run = self._runs.get(run_id)
        if run is None or not self._holds(run_id, owner, time.time()):
            return False
        run.snapshot, run.version = snapshot, run.version + 1
        calls = self._calls.get(run_id, {})
        for cid in applied:
            calls.pop(cid, None)
        return True

    async def release(self, run_id: str, owner: str, *, reset_call: str | None = None) -> None:
        self._check()
        run = self._runs.get(run_id)
        if run is None:
            return
        calls = self._calls.get(run_id, {})
        call = calls.get(reset_call or "")
        if call is not None and call.status not in ("pending", "expired") and call.started_at is None:
            call.status, call.decided_until, call.resume_data, call.edited_args = "pending", 0.0, None, None
            self._audit_row(run, call, "withdrawn", "decision interrupted before it was applied")
        if self._leases.get(run_id, ("",))[0] == owner:
            self._leases.pop(run_id, None)
            # a run without calls left (its step's results are stored) stays "running", free to continue
            run.status = "suspended" if any(c.status != "expired" for c in calls.values()) else "running"

    async def list_expired(self, *, limit: int = 100) -> list[RunRow]:
        self._check()
        now = time.time()
        out = [
            self._view(r) for r in self._runs.values() if r.status == "running" and not lease_live(self._view(r), now)
        ]
        return out[:limit]

    async def settle(self, run_id: str) -> int:
        self._check()
        now = time.time()
        run = self._runs.get(run_id)
        if run is None or run.status == "failed" or lease_live(self._view(run), now):
            return 0
        calls = self._calls.get(run_id, {})
        returned = 0
        for call in calls.values():
            if call.status not in ("pending", "expired") and call.started_at is None and call.decided_until < now:
                call.status, call.decided_until, call.resume_data, call.edited_args = "pending", 0.0, None, None
                self._audit_row(run, call, "returned-to-pending", "lease expired before the tool started")
                returned += 1
        self._leases.pop(run_id, None)
        run.status = "suspended" if any(c.status != "expired" for c in calls.values()) else "running"
        return returned

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        self._check()
        if owner is not None and run_id in self._runs and not self._holds(run_id, owner, time.time()):
            return False
        self._runs.pop(run_id, None)
        self._calls.pop(run_id, None)
        self._leases.pop(run_id, None)
        return True

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        self._check()
        run = self._runs.get(run_id)
        if run is None:
            return True
        if owner is not None and not self._holds(run_id, owner, time.time()):
            return False
        run.status, run.snapshot, run.error = "failed", snapshot, error
        run.version += 1
        self._leases.pop(run_id, None)
        return True

    async def get_run(self, run_id: str) -> RunRow | None:
        self._check()
        run = self._runs.get(run_id)
        return self._view(run) if run else None

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        self._check()
        calls = sorted(self._calls.get(run_id, {}).values(), key=lambda c: (c.created_at, c.seq))
        return [copy.copy(c) for c in calls]

    def _listed(self, run: RunRow, now: float) -> SuspendedRunRow | None:
        view = self._view(run)
        if run.status == "failed" or lease_live(view, now):
            return None
        calls = sorted(
            (c for c in (actionable(c, view, now) for c in self._calls.get(run.run_id, {}).values()) if c),
            key=lambda c: (c.created_at, c.seq),
        )
        if not calls:
            return None
        return SuspendedRunRow(run=view, calls=[copy.copy(c) for c in calls])

    async def find_ids(self, prefix: str, *, run_id: str | None = None, limit: int = 10) -> list[str]:
        self._check()
        if run_id is None:  # the runs, and the finished ones the audit trail names
            ids = set(self._runs) | {a.run_id for a in self._audit}
        else:
            ids = set(self._calls.get(run_id, {}))
        return sorted(i for i in ids if i.startswith(prefix))[:limit]

    async def get_suspended(self, run_id: str) -> SuspendedRunRow | None:
        self._check()
        run = self._runs.get(run_id)
        return None if run is None else self._listed(run, time.time())

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
        self._check()
        f = SuspendedFilter(agent_id, thread_id, resource_id, query, tool_name, kind, sort)
        listed = f.ordered([n for row in self._matching(f) if (n := f.narrow(row)) is not None])
        return listed[page * per_page : (page + 1) * per_page], len(listed)

    def _matching(self, f: SuspendedFilter) -> list[SuspendedRunRow]:
        now = time.time()
        return [
            row
            for r in self._runs.values()
            if (row := self._listed(r, now)) is not None and f.run_matches(row.run, row.calls)
        ]

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
        self._check()
        f = SuspendedFilter(agent_id, thread_id, resource_id, query, tool_name)
        return count_kinds(
            [
                c
                for row in self._matching(f)
                if row.run.status == "suspended"
                for c in self._calls.get(row.run.run_id, {}).values()
                if c.status == "pending" and f.call_matches(c)
            ]
        )

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
        self._check()
        f = AuditFilter(run_id, tool_call_id, agent_id, actor, since, decision, after, limit)
        out = [copy.copy(a) for a in self._audit if f.matches(a)]
        return out if limit is None else out[:limit]

    async def append_audit(self, entries: AuditRow | Iterable[AuditRow]) -> list[AuditRow]:
        self._check()
        return self._append([copy.deepcopy(e) for e in as_list(entries)])

    async def list_overdue(self, now: float, *, limit: int = 100) -> list[PendingCallRow]:
        self._check()
        out = [
            copy.copy(c)
            for calls in self._calls.values()
            for c in calls.values()
            if c.status == "pending" and c.kind == "approval" and c.expires_at is not None and c.expires_at < now
        ]
        out.sort(key=lambda c: c.expires_at or 0.0)
        return out[:limit]

    async def add_grant(self, grant: GrantRow) -> None:
        self._check()
        if grant.id in self._grants:
            raise StorageError(f"{self.name}: grant {grant.id!r} already stored")
        self._grants[grant.id] = copy.deepcopy(grant)

    async def list_grants(self, now: float, *, tool_name: str | None = None) -> list[GrantRow]:
        self._check()
        return [
            copy.deepcopy(g)
            for g in sorted(self._grants.values(), key=lambda g: (g.created_at, g.id))
            if g.live(now) and (tool_name is None or g.tool_name == tool_name)
        ]

    async def delete_grant(self, grant_id: str) -> bool:
        self._check()
        return self._grants.pop(grant_id, None) is not None

    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        self._check()
        msgs = self._messages.get(thread_id, [])
        if limit is not None:
            msgs = msgs[-limit:] if limit else []
        return copy.deepcopy(msgs)

    async def append_messages(self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]) -> None:
        self._check()
        self._messages.setdefault(thread_id, []).extend(copy.deepcopy(messages))
