"""The decision rules every store applies, as pure functions of rows and a clock (no I/O).

One rule, one place: the memory store applies these to its dicts, the SQL stores
(``storage.sql_store``) read rows, apply them and write what they return. A
change to crash recovery is made here once. ``records.actionable`` (how a
stored call reads now) is the model: computed from the rows, never stored.
Where a rule must also run inside one SQL statement (a compare-and-set), its
SQL spelling sits beside it here and a test checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from storage.base import DecideFn
from storage.records import (
    AuditRow,
    CallKind,
    ClaimResult,
    Decision,
    PendingCallRow,
    RunRow,
    RunStatus,
    actionable,
    copy_row,
    lease_live,
)

#: the audit label of a decided call whose tool never started, given back to the operators.
RETURNED = "returned-to-pending"
#: the audit label of an approved (or resumed) call that had started before its run was interrupted.
RE_EXECUTED = "re-executed"
#: the audit label of a decision recorded but given back before it was applied.
WITHDRAWN = "withdrawn"
#: why a call was returned to pending.
LEASE_EXPIRED = "lease expired before the tool started"
#: why a decision was withdrawn.
INTERRUPTED = "decision interrupted before it was applied"


def holds(run: RunRow, owner: str | None, now: float) -> bool:
    """True when ``owner`` holds the run's lease and it is live: it may write the run."""
    return owner is not None and run.lease_owner == owner and (run.lease_until or 0.0) >= now


def holds_sql(owner: str, now: str) -> str:
    """``holds`` on the ``runs`` row (``owner``, ``now``: placeholders)."""
    return f"lease_owner = {owner} AND lease_until >= {now}"


def lease_free(run: RunRow, now: float) -> bool:
    """Whether a process may take the run's lease now: not failed, and nobody's lease is live."""
    return run.status != "failed" and not lease_live(run, now)


def lease_free_sql(now: str) -> str:
    """``lease_free`` on the ``runs`` row (``now``: the placeholder of the clock)."""
    return f"status <> 'failed' AND (lease_owner IS NULL OR lease_until < {now})"


def undone(call: PendingCallRow) -> bool:
    """A decided call whose tool never started: its decision may still be taken back."""
    return call.status not in ("pending", "expired") and call.started_at is None


#: ``undone`` on the ``pending_calls`` row.
UNDONE_SQL = "status NOT IN ('pending', 'expired') AND started_at IS NULL"


def lapsed(call: PendingCallRow, now: float) -> bool:
    """An undone decision nobody waits to apply any more (once its run's lease is free): back to pending."""
    return undone(call) and call.decided_until < now


def lapsed_sql(now: str) -> str:
    """``lapsed`` on the ``pending_calls`` row (``now``: the placeholder of the clock)."""
    return f"{UNDONE_SQL} AND decided_until < {now}"


def held_by_waiter(call: PendingCallRow) -> bool:
    """A decision whose decider waits for the run's lease: its hold (``decided_until``) is renewed."""
    return call.status != "pending" and call.started_at is None


#: ``held_by_waiter`` on the ``pending_calls`` row.
HELD_SQL = "status <> 'pending' AND started_at IS NULL"


def may_start(call: PendingCallRow) -> bool:
    """A call whose tool may get its "started" mark (under a live lease): it was decided."""
    return call.status != "pending"


#: ``may_start`` on the ``pending_calls`` row.
MAY_START_SQL = "status <> 'pending'"


def back_to_pending(call: PendingCallRow) -> PendingCallRow:
    """The call as it is once returned to pending (or withdrawn): its decision's traces cleared."""
    return replace(call, status="pending", decided_until=0.0, resume_data=None, edited_args=None)


#: ``back_to_pending`` as the SET clause of an UPDATE of ``pending_calls``.
BACK_TO_PENDING_SQL = "status = 'pending', decided_until = 0, resume_data = NULL, edited_args = NULL"


def status_when_given_back(calls: Iterable[PendingCallRow]) -> RunStatus:
    """A run given back (lease freed): listed again while a call is left that is not expired;
    a run without any (its step's results are stored) stays ``running``, free to continue."""
    return "suspended" if any(c.status != "expired" for c in calls) else "running"


def given_back_sql(run: str) -> str:
    """``status_when_given_back`` as a SQL expression (``run``: the run id's placeholder)."""
    return (
        f"CASE WHEN EXISTS (SELECT 1 FROM pending_calls WHERE run_id = {run} AND status <> 'expired') "
        "THEN 'suspended' ELSE 'running' END"
    )


def entry(
    run_id: str,
    agent_id: str,
    call: PendingCallRow | tuple[str, str, str],
    decision: str,
    reason: str | None,
    now: float,
    actor: str | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditRow:
    """An audit entry about one call (``call``: the row, or its id, tool name and fingerprint)."""
    cid, tool, fp = (call.tool_call_id, call.tool_name, call.fingerprint) if isinstance(call, PendingCallRow) else call
    return AuditRow(run_id, cid, agent_id, tool, decision, fp, reason, now, actor, detail)


def returned_entries(
    run_id: str, agent_id: str, calls: Iterable[PendingCallRow | tuple[str, str, str]], now: float
) -> list[AuditRow]:
    """The ``returned-to-pending`` entries of calls whose lease expired before their tool started."""
    return [entry(run_id, agent_id, c, RETURNED, LEASE_EXPIRED, now) for c in calls]


def withdrawn_entry(run_id: str, agent_id: str, call: PendingCallRow | tuple[str, str, str], now: float) -> AuditRow:
    """The entry of a decision given back (``release(reset_call=...)``) before it was applied."""
    return entry(run_id, agent_id, call, WITHDRAWN, INTERRUPTED, now)


# -- a claim ------------------------------------------------------------------------------
@dataclass(slots=True)
class ClaimRequest:
    """``Store.claim``'s arguments as one value: the call (or, without an id, the kinds), how
    to decide it, and who takes the run's lease for how long."""

    run_id: str
    tool_call_id: str | None
    kinds: tuple[CallKind, ...]
    decide: DecideFn
    owner: str
    lease_seconds: float


@dataclass(slots=True)
class Pick:
    """The call a claim takes: as stored (what the compare-and-set compares) and as it reads now."""

    stored: PendingCallRow
    current: PendingCallRow


def pick(calls: Iterable[PendingCallRow], run: RunRow, now: float, req: ClaimRequest) -> Pick | ClaimResult:
    """Which call a claim takes, or the refusal (``ClaimResult``) when none can be taken.

    A named call must read as actionable now; without a name, the latest actionable call
    (by ``created_at``, then ``seq``) of one of ``kinds``. A refusal's ``audited`` is left to
    the store where only the audit log can tell (``asks_audit``).
    """
    tool_call_id = req.tool_call_id
    if tool_call_id is not None:
        stored = next((c for c in calls if c.tool_call_id == tool_call_id), None)
        if stored is None:
            return ClaimResult("no_call")
        current = actionable(stored, run, now)
        if current is None:
            return ClaimResult("not_pending", call=stored, audited=True)
        return Pick(stored, current)
    open_calls = [(c, a) for c in calls if (a := actionable(c, run, now)) is not None]
    candidates = [p for p in open_calls if p[1].kind in req.kinds]
    if not candidates:
        return ClaimResult("no_call_of_kind" if open_calls else "no_call", other_kinds=bool(open_calls))
    stored, current = max(candidates, key=lambda p: (p[1].created_at, p[1].seq))
    return Pick(stored, current)


def asks_audit(result: ClaimResult, req: ClaimRequest) -> bool:
    """Whether a refusal should say if the named call was decided before (a run or call now gone)."""
    return req.tool_call_id is not None and result.outcome in ("no_run", "no_call")


@dataclass(slots=True)
class ClaimPlan:
    """What a claim writes, all or nothing: the decision on the call (``decided`` is the row
    after it), the audit entries in order, the lease when the claimer takes it, and the result
    to return once written."""

    decision: Decision
    #: until when the decision is held for a decider waiting for the run's lease (0: applied now)
    decided_until: float
    audit: list[AuditRow]
    #: the new lease's end when the claimer takes the run's lease (None: another holder applies it).
    lease_until: float | None
    result: ClaimResult
    #: the claim's clock (the audit entries' ``decided_at``)
    now: float


def plan_claim(run: RunRow, picked: Pick, decision: Decision, now: float, req: ClaimRequest) -> ClaimPlan:
    """The compare-and-set of ``decision`` on the picked call.

    A decision taken while another process holds the run's lease is held for that long
    (``decided_until``), so it never reads as returned to pending while its decider waits.
    A lapsed decision decided again is audited ``returned-to-pending`` first; an approval or
    resume of an interrupted call is audited ``re-executed``.
    """
    takes_lease, until = not lease_live(run, now), now + req.lease_seconds
    stored, current = picked.stored, picked.current
    audit: list[AuditRow] = []
    if stored.status != "pending" and current.kind != "interrupted":
        audit.append(entry(run.run_id, run.agent_id, stored, RETURNED, LEASE_EXPIRED, now))
    interrupted = current.kind == "interrupted" and decision.status != "declined"
    label = RE_EXECUTED if interrupted else decision.audit_label
    audit.append(entry(run.run_id, run.agent_id, stored, label, decision.reason, now, decision.actor, decision.detail))
    if not takes_lease:
        return ClaimPlan(decision, until, audit, None, ClaimResult("ok", call=current, run=None), now)
    leased = copy_row(run)  # cheaper than dataclasses.replace on this hot path
    leased.status, leased.lease_owner, leased.lease_until = "running", req.owner, until
    return ClaimPlan(decision, 0.0, audit, until, ClaimResult("ok", call=current, run=leased), now)


def decided(call: PendingCallRow, plan: ClaimPlan) -> PendingCallRow:
    """The stored call's row once the claim's plan is written."""
    d = plan.decision
    row = copy_row(call)  # cheaper than dataclasses.replace on this hot path (one per decision)
    row.status, row.started_at, row.decided_until = d.status, None, plan.decided_until
    row.decided_by, row.resume_data, row.edited_args = d.actor, d.resume_data, d.edited_args
    return row


# -- giving a run back ----------------------------------------------------------------------
@dataclass(frozen=True)
class Settlement:
    """What ``settle`` writes: the calls returned to pending (as they become), their entries,
    and the run's status once its lease is freed."""

    returned: list[PendingCallRow]
    audit: list[AuditRow]
    run_status: RunStatus


def settle(run: RunRow, calls: list[PendingCallRow], now: float) -> Settlement | None:
    """Read-time recovery made durable for a run whose lease expired (None while a lease is live)."""
    if not lease_free(run, now):
        return None
    returned = [back_to_pending(c) for c in calls if lapsed(c, now)]
    return Settlement(
        returned, returned_entries(run.run_id, run.agent_id, returned, now), status_when_given_back(calls)
    )
