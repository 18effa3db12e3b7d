"""In-process store: the default for agents outside a ``Runtime``; lost when the process exits.

Same semantics as ``SqliteStore`` (compare-and-set decisions, leases, audit
log); each method runs without awaiting, so it is atomic on the event loop.
Rows are handed out as shallow copies: callers treat their JSON values as
read-only, and a deep copy per decision would cost more than the decision.
"""

from __future__ import annotations

import copy
import time
from typing import Any

from storage.base import DecideFn
from storage.errors import StorageError, StoreClosed
from storage.records import (
    AuditRow,
    CallKind,
    ClaimResult,
    PendingCallRow,
    RunRow,
    SuspendedRunRow,
)


class InMemoryStore:
    def __init__(self) -> None:
        self.name = f"InMemoryStore(id={id(self):#x})"
        self._runs: dict[str, RunRow] = {}
        self._leases: dict[str, tuple[str, float]] = {}
        self._calls: dict[str, dict[str, PendingCallRow]] = {}
        self._audit: list[AuditRow] = []
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._closed = False

    def __repr__(self) -> str:
        return self.name

    def _check(self) -> None:
        if self._closed:
            raise StoreClosed(f"{self.name} is closed")

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
            if current is None or self._leases.get(run.run_id, ("",))[0] != owner:
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
        audited = tool_call_id is not None and any(
            a.run_id == run_id and a.tool_call_id == tool_call_id for a in self._audit
        )
        run = self._runs.get(run_id)
        if run is None:
            return ClaimResult("no_run", audited=audited)
        calls = self._calls.get(run_id, {})
        if tool_call_id is not None:
            call = calls.get(tool_call_id)
            if call is None:
                return ClaimResult("no_call", audited=audited)
            if call.status != "pending":
                return ClaimResult("not_pending", call=copy.copy(call), audited=True)
        else:
            candidates = [c for c in calls.values() if c.status == "pending" and c.kind in kinds]
            if not candidates:
                other = any(c.status == "pending" for c in calls.values())
                return ClaimResult("no_call_of_kind" if other else "no_call", other_kinds=other)
            call = max(candidates, key=lambda c: (c.created_at, c.seq))
        decision = decide(copy.copy(call), copy.copy(run))
        now = time.time()
        call.status = decision.status
        self._audit.append(
            AuditRow(
                run_id=run_id,
                tool_call_id=call.tool_call_id,
                agent_id=run.agent_id,
                tool_name=call.tool_name,
                decision=decision.status,
                fingerprint=call.fingerprint,
                reason=decision.reason,
                decided_at=now,
                actor=decision.actor,
            )
        )
        lease = self._leases.get(run_id)
        if lease is None or lease[1] < now:
            self._leases[run_id] = (owner, now + lease_seconds)
            run.status = "running"
            return ClaimResult("ok", call=copy.copy(call), run=copy.copy(run))
        return ClaimResult("ok", call=copy.copy(call), run=None)

    async def acquire_lease(self, run_id: str, owner: str, lease_seconds: float) -> RunRow | None:
        self._check()
        run = self._runs.get(run_id)
        now = time.time()
        lease = self._leases.get(run_id)
        if run is None or (lease is not None and lease[1] >= now):
            return None
        self._leases[run_id] = (owner, now + lease_seconds)
        run.status = "running"
        return copy.copy(run)

    async def renew_lease(self, run_id: str, owner: str, lease_seconds: float) -> bool:
        self._check()
        if self._leases.get(run_id, ("",))[0] != owner:
            return False
        self._leases[run_id] = (owner, time.time() + lease_seconds)
        return True

    async def release(self, run_id: str, owner: str, *, reset_call: str | None = None) -> None:
        self._check()
        run = self._runs.get(run_id)
        if run is None:
            return
        if self._leases.get(run_id, ("",))[0] == owner:
            self._leases.pop(run_id, None)
            run.status = "suspended"
        call = self._calls.get(run_id, {}).get(reset_call or "")
        if call is not None and call.status != "pending":
            call.status = "pending"
            self._audit.append(
                AuditRow(
                    run_id=run_id,
                    tool_call_id=call.tool_call_id,
                    agent_id=run.agent_id,
                    tool_name=call.tool_name,
                    decision="withdrawn",
                    fingerprint=call.fingerprint,
                    reason="decision interrupted before it was applied",
                    decided_at=time.time(),
                )
            )

    async def finish_run(self, run_id: str, owner: str | None) -> None:
        self._check()
        self._runs.pop(run_id, None)
        self._calls.pop(run_id, None)
        self._leases.pop(run_id, None)

    async def fail_run(self, run_id: str, owner: str | None, snapshot: str, error: str) -> None:
        self._check()
        run = self._runs.get(run_id)
        if run is not None:
            run.status, run.snapshot, run.error = "failed", snapshot, error
            run.version += 1
        self._leases.pop(run_id, None)

    async def get_run(self, run_id: str) -> RunRow | None:
        self._check()
        run = self._runs.get(run_id)
        return copy.copy(run) if run else None

    async def get_calls(self, run_id: str) -> list[PendingCallRow]:
        self._check()
        calls = sorted(self._calls.get(run_id, {}).values(), key=lambda c: (c.created_at, c.seq))
        return [copy.copy(c) for c in calls]

    async def list_suspended(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> tuple[list[SuspendedRunRow], int]:
        self._check()
        now = time.time()
        for run_id, (_, until) in list(self._leases.items()):
            if until < now and run_id in self._runs:
                self._leases.pop(run_id)
                self._runs[run_id].status = "suspended"
        runs = [
            r
            for r in self._runs.values()
            if r.status == "suspended"
            and (agent_id is None or r.agent_id == agent_id)
            and (thread_id is None or r.thread_id == thread_id)
            and (resource_id is None or r.resource_id == resource_id)
        ]
        runs.sort(key=lambda r: (r.suspended_at, r.run_id), reverse=True)
        window = runs[page * per_page : (page + 1) * per_page]
        out = []
        for r in window:
            calls = sorted(
                (c for c in self._calls.get(r.run_id, {}).values() if c.status == "pending"),
                key=lambda c: (c.created_at, c.seq),
            )
            out.append(SuspendedRunRow(run=copy.copy(r), calls=[copy.copy(c) for c in calls]))
        return out, len(runs)

    async def audit_log(self, run_id: str | None = None, tool_call_id: str | None = None) -> list[AuditRow]:
        self._check()
        return [
            copy.copy(a)
            for a in self._audit
            if (run_id is None or a.run_id == run_id) and (tool_call_id is None or a.tool_call_id == tool_call_id)
        ]

    async def load_messages(self, thread_id: str, *, limit: int | None = None) -> list[dict[str, Any]]:
        self._check()
        msgs = self._messages.get(thread_id, [])
        if limit is not None:
            msgs = msgs[-limit:] if limit else []
        return copy.deepcopy(msgs)

    async def append_messages(self, thread_id: str, resource_id: str | None, messages: list[dict[str, Any]]) -> None:
        self._check()
        self._messages.setdefault(thread_id, []).extend(copy.deepcopy(messages))
