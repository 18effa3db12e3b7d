"""In-process store: the default for agents outside a ``Runtime``; lost when the process exits.

A thin driver over ``storage.rules`` (the same rules as the SQL stores: compare-and-set
decisions, leases, audit log); each method runs without awaiting, so it is atomic on the
event loop. Rows are handed out as shallow copies: callers treat their JSON values as
read-only, and a deep copy per decision would cost more than the decision.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from storage import rules
from storage.audit import AuditFilter, seal_in_place
from storage.errors import LeaseNotHeld, StorageError, StoreClosed
from storage.front import StoreFront
from storage.listing import SuspendedFilter, count_kinds
from storage.records import (
    AuditRow,
    ClaimResult,
    GrantRow,
    PendingCallRow,
    RunRow,
    SuspendedRunRow,
    actionable,
    copy_row,
    lease_live,
)
from storage.rules import ClaimRequest


class InMemoryStore(StoreFront):
    def __init__(self) -> None:
        self.name = f"InMemoryStore(id={id(self):#x})"
        self._runs: dict[str, RunRow] = {}
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

    def _holds(self, run_id: str, owner: str | None, now: float) -> bool:
        run = self._runs.get(run_id)
        return run is not None and rules.holds(run, owner, now)

    @staticmethod
    def _free(run: RunRow, status: str) -> None:
        """Give the run's lease up, the run left in ``status``."""
        run.status, run.lease_owner, run.lease_until = status, None, None  # type: ignore[assignment]

    def _write_audit(self, rows: list[AuditRow]) -> None:
        """Append the entries ``storage.rules`` just made for this store (``rules.entry``: nobody else
        holds them, so they are sealed as they are), their JSON details copied (a decision's own)."""
        for r in rows:
            if r.detail is not None:
                r.detail = copy.deepcopy(r.detail)
        self._seal(rows)

    def _seal(self, rows: list[AuditRow]) -> None:
        """Seal this store's own copies once, in place, and append them (no copy per step)."""
        last = self._audit[-1] if self._audit else None
        self._audit.extend(seal_in_place(rows, last.seq if last else 0, last.hash if last else None))

    async def setup(self) -> None:
        self._check()

    async def aclose(self) -> None:
        self._closed = True

    async def _save_suspended(
        self, run: RunRow, pending: list[PendingCallRow], owner: str | None, applied: list[str]
    ) -> None:
        self._check()
        now = time.time()
        calls = self._calls.setdefault(run.run_id, {})
        if owner is None:
            if run.run_id in self._runs:
                raise StorageError(f"{self.name}: run {run.run_id!r} already stored")
            stored = copy_row(run)
            stored.version = 1
            self._free(stored, "suspended")
            stored.created_at = run.created_at or now
        else:
            current = self._runs.get(run.run_id)
            if current is None or not rules.holds(current, owner, now):
                raise LeaseNotHeld.on(self.name, run.run_id)
            stored = copy_row(current)
            stored.snapshot, stored.version = run.snapshot, current.version + 1
            self._free(stored, "suspended")
            for cid in applied:
                calls.pop(cid, None)
        stored.suspended_at = run.suspended_at or now
        self._runs[run.run_id] = stored
        for c in pending:
            calls.setdefault(c.tool_call_id, copy_row(c))

    async def _claim(self, req: ClaimRequest) -> ClaimResult:
        self._check()
        now = time.time()
        run = self._runs.get(req.run_id)
        calls = self._calls.get(req.run_id, {})
        named = req.tool_call_id
        if run is None:
            picked: rules.Pick | ClaimResult = ClaimResult("no_run")
        else:
            candidates = calls.values() if named is None else [calls[named]] if named in calls else []
            picked = rules.pick(candidates, run, now, req)
        if isinstance(picked, ClaimResult):
            if rules.asks_audit(picked, req):
                picked.audited = any(a.run_id == req.run_id and a.tool_call_id == named for a in self._audit)
            if picked.call is not None:
                picked.call = copy_row(picked.call)
            return picked
        assert run is not None
        decision = req.decide(copy_row(picked.current), copy_row(run))
        plan = rules.plan_claim(run, picked, decision, now, req)
        calls[picked.stored.tool_call_id] = rules.decided(picked.stored, plan)
        self._write_audit(plan.audit)
        if plan.lease_until is not None:
            run.status, run.lease_owner, run.lease_until = "running", req.owner, plan.lease_until
        return plan.result

    async def acquire_lease(
        self, run_id: str, owner: str, lease_seconds: float, *, waiting_call: str | None = None
    ) -> RunRow | None:
        self._check()
        run = self._runs.get(run_id)
        now = time.time()
        if run is None:
            return None
        if not rules.lease_free(run, now):
            call = self._calls.get(run_id, {}).get(waiting_call or "")
            if call is not None and rules.held_by_waiter(call):
                call.decided_until = now + lease_seconds
            return None
        run.status, run.lease_owner, run.lease_until = "running", owner, now + lease_seconds
        return copy_row(run)

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        self._check()
        run = self._runs.get(run_id)
        if run is None or run.lease_owner != owner:
            return False
        run.lease_until = time.time() + lease_seconds
        return True

    async def mark_started(self, run_id: str, tool_call_id: str, owner: str) -> bool:
        self._check()
        now = time.time()
        call = self._calls.get(run_id, {}).get(tool_call_id)
        if not self._holds(run_id, owner, now) or call is None or not rules.may_start(call):
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
        if call is not None and rules.undone(call):
            calls[call.tool_call_id] = rules.back_to_pending(call)
            self._write_audit([rules.withdrawn_entry(run_id, run.agent_id, call, time.time())])
        if run.lease_owner == owner:
            self._free(run, rules.status_when_given_back(calls.values()))

    async def list_expired(self, *, limit: int = 100) -> list[RunRow]:
        self._check()
        now = time.time()
        out = [copy_row(r) for r in self._runs.values() if r.status == "running" and not lease_live(r, now)]
        return out[:limit]

    async def settle(self, run_id: str) -> int:
        self._check()
        run = self._runs.get(run_id)
        calls = self._calls.get(run_id, {})
        settled = None if run is None else rules.settle(run, list(calls.values()), time.time())
        if run is None or settled is None:
            return 0
        for call in settled.returned:
            calls[call.tool_call_id] = call
        self._write_audit(settled.audit)
        self._free(run, settled.run_status)
        return len(settled.returned)

    async def finish_run(self, run_id: str, owner: str | None) -> bool:
        self._check()
        if owner is not None and run_id in self._runs and not self._holds(run_id, owner, time.time()):
            return False
        self._runs.pop(run_id, None)
        self._calls.pop(run_id, None)
        return True

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> bool:
        self._check()
        run = self._runs.get(run_id)
        if run is None:
            return True
        if owner is not None and not self._holds(run_id, owner, time.time()):
            return False
        run.snapshot, run.error = snapshot, error
        run.version += 1
        self._free(run, "failed")
        return True

    async def get_run(self, run_id: str) -> RunRow | None:
        self._check()
        run = self._runs.get(run_id)
        return copy_row(run) if run else None

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        self._check()
        calls = sorted(self._calls.get(run_id, {}).values(), key=lambda c: (c.created_at, c.seq))
        return [copy_row(c) for c in calls]

    def _listed(self, run: RunRow, now: float) -> SuspendedRunRow | None:
        view = copy_row(run)
        if run.status == "failed" or lease_live(view, now):
            return None
        calls = sorted(
            (c for c in (actionable(c, view, now) for c in self._calls.get(run.run_id, {}).values()) if c),
            key=lambda c: (c.created_at, c.seq),
        )
        if not calls:
            return None
        return SuspendedRunRow(run=view, calls=[copy_row(c) for c in calls])

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

    async def _list_suspended(self, f: SuspendedFilter, page: int, per_page: int) -> tuple[list[SuspendedRunRow], int]:
        self._check()
        listed = f.ordered([n for row in self._matching(f) if (n := f.narrow(row)) is not None])
        return listed[page * per_page : (page + 1) * per_page], len(listed)

    def _matching(self, f: SuspendedFilter) -> list[SuspendedRunRow]:
        now = time.time()
        return [
            row
            for r in self._runs.values()
            if (row := self._listed(r, now)) is not None and f.run_matches(row.run, row.calls)
        ]

    async def thread_call_ids(self, thread_id: str) -> set[str]:
        self._check()
        return {
            cid
            for run_id, run in self._runs.items()
            if run.thread_id == thread_id and run.status != "failed"
            for cid in self._calls.get(run_id, {})
        }

    async def _count_by_kind(self, f: SuspendedFilter) -> dict[str, int]:
        self._check()
        return count_kinds(
            [
                c
                for row in self._matching(f)
                if row.run.status == "suspended"
                for c in self._calls.get(row.run.run_id, {}).values()
                if c.status == "pending" and f.call_matches(c)
            ]
        )

    async def _audit_log(self, f: AuditFilter) -> list[AuditRow]:
        self._check()
        out = [copy_row(a) for a in self._audit if f.matches(a)]
        return out if f.limit is None else out[: f.limit]

    async def _append_audit(self, rows: list[AuditRow]) -> list[AuditRow]:
        self._check()
        copies = [copy.deepcopy(e) for e in rows]
        self._seal(copies)
        return [copy_row(r) for r in copies]

    async def list_overdue(self, now: float, *, limit: int = 100) -> list[PendingCallRow]:
        self._check()
        out = [
            copy_row(c)
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
