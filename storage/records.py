"""Plain records the stores hold. Storage knows nothing of agents: snapshots are opaque JSON text."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

R = TypeVar("R")


def copy_row(row: R) -> R:
    """A shallow copy of a record (its JSON values shared, read-only by convention): what
    ``copy.copy`` does for these dataclasses, about three times faster (it skips
    ``__reduce_ex__``); several per cycle on the approval path."""
    new = object.__new__(type(row))
    new.__dict__.update(row.__dict__)
    return new


#: ``interrupted`` is never stored: it is how a row reads once its tool started
#: (``started_at``) under a lease that has since expired without a stored result.
CallKind = Literal["approval", "suspend", "interrupted"]
#: a decision recorded on a stored call (``Decision.status``).
DecidedStatus = Literal["approved", "declined", "resuming", "expired"]
#: a stored call's row: pending -> approved | declined | resuming | expired (a decision,
#: compare-and-set once). Not ``agent_core.call_state.CallStatus``, a call's whole life in a run.
PendingCallStatus = Literal["pending", "approved", "declined", "resuming", "expired"]
#: what a grant covers: one run, a thread, a resource (user), or every run of an agent.
GrantScope = Literal["run", "thread", "resource", "agent"]
#: suspended: waiting for decisions; running: a process holds the lease and is applying one.
RunStatus = Literal["suspended", "running", "failed"]


@dataclass
class RunRow:
    run_id: str
    agent_id: str
    thread_id: str | None
    resource_id: str | None
    status: RunStatus
    snapshot: str
    version: int = 0
    created_at: float = 0.0
    suspended_at: float = 0.0
    error: str | None = None
    #: who is applying a decision on this run, until when (None: nobody).
    lease_owner: str | None = None
    lease_until: float | None = None


@dataclass
class PendingCallRow:
    run_id: str
    tool_call_id: str
    tool_name: str
    kind: CallKind
    args: Any
    fingerprint: str
    status: PendingCallStatus = "pending"
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None
    agent_path: list[str] = field(default_factory=list)
    seq: int = 0
    created_at: float = 0.0
    #: when the tool of a decided call started (the durable "started" mark), or None.
    started_at: float | None = None
    #: a decision recorded by a process that waits for the run's lease holds the call until then.
    decided_until: float = 0.0
    #: the actor of the decision (as in the audit log).
    decided_by: str | None = None
    #: the resume data of a ``resuming`` decision (so an interrupted resume can run again).
    resume_data: Any = None
    #: when an approval is overdue (``approval_timeout``), epoch seconds; None: never.
    expires_at: float | None = None
    #: the validated arguments an operator approved instead of ``args`` (kept for a re-execution).
    edited_args: Any = None
    #: distinct approvers a policy rule asks for (four eyes: 2+), and that rule's id: kept on the row
    #: so a listing shows them without reading the run's snapshot.
    approvers_required: int = 1
    policy_rule: str | None = None
    #: who started the run (``stream(actor=)``): the run's ``requested_by``, listed without its snapshot.
    requested_by: str | None = None


def lease_live(run: RunRow, now: float) -> bool:
    """True while a process holds the run's lease (it is applying a decision or continuing it)."""
    return run.lease_owner is not None and (run.lease_until or 0.0) >= now


def actionable(call: PendingCallRow, run: RunRow, now: float) -> PendingCallRow | None:
    """How a stored call reads now: the row an operator may decide, or None.

    ``pending``: as stored. A decided call whose run's lease has expired (and
    that no waiting decider still holds) reads as pending again when its tool
    never started (returned to pending, same kind and fingerprint), and as kind
    ``interrupted`` when its tool started but no result was stored. Computed at
    read time: listing never writes. An ``expired`` call never reads as pending again: the
    expiry is final (fail-closed), whoever applies it and whenever.
    """
    if call.status == "pending":
        return call
    if call.status == "expired":
        return None
    if lease_live(run, now) or call.decided_until >= now:
        return None
    if call.started_at is None:
        return replace(call, status="pending", edited_args=None)
    if call.status in ("approved", "resuming"):
        return replace(call, status="pending", kind="interrupted")
    return None


@dataclass
class Decision:
    """What a caller decided about one pending call, as the audit log records it."""

    status: DecidedStatus
    reason: str | None = None
    actor: str | None = None
    #: resume data kept with the call (``resuming``), so an interrupted resume can run again.
    resume_data: Any = None
    #: edited arguments (validated) an approval runs the tool with, kept with the call.
    edited_args: Any = None
    #: extra facts for the audit entry (JSON): original and edited arguments and fingerprints.
    detail: dict[str, Any] | None = None

    @property
    def audit_label(self) -> str:
        """The audit entry's decision: ``edited`` for an approval with edited arguments, else the status."""
        return "edited" if self.status == "approved" and self.edited_args is not None else self.status


@dataclass
class AuditRow:
    run_id: str
    tool_call_id: str
    agent_id: str
    tool_name: str
    decision: str
    fingerprint: str
    reason: str | None
    decided_at: float
    actor: str | None = None
    #: extra facts (JSON): ``args`` / ``edited_args`` / ``edited_fingerprint`` of an edit, ``grant_id``.
    detail: dict[str, Any] | None = None
    #: the hash chain (``storage.audit``): position (1-based), the previous entry's hash, this one's.
    seq: int = 0
    prev_hash: str | None = None
    hash: str | None = None

    @property
    def args(self) -> Any:
        """The arguments the tool ran with when an operator edited them (``detail["edited_args"]``), else None."""
        return (self.detail or {}).get("edited_args")

    @args.setter
    def args(self, value: Any) -> None:
        self._set_detail("edited_args", value)

    @property
    def grant_id(self) -> str | None:
        """The grant that decided the call (``detail["grant_id"]``), if one did."""
        return (self.detail or {}).get("grant_id")

    @grant_id.setter
    def grant_id(self, value: str | None) -> None:
        self._set_detail("grant_id", value)

    def _set_detail(self, key: str, value: Any) -> None:
        detail = dict(self.detail or {})
        if value is None:
            detail.pop(key, None)
        else:
            detail[key] = value
        self.detail = detail or None


@dataclass
class GrantRow:
    """A standing approval: calls of ``tool_name`` in its scope (and matching ``args_match``) run unasked."""

    id: str
    tool_name: str
    scope: GrantScope
    scope_id: str | None = None
    agent_id: str | None = None
    args_match: dict[str, Any] | None = None
    #: epoch seconds; None: until revoked.
    expires_at: float | None = None
    created_by: str | None = None
    created_at: float = 0.0
    #: a command tool's grant: ``{"argument", "prefixes"}`` or ``{"argument", "statements", "dialect"}``
    #: (``agent_core.policy_commands.CommandGrant``); None: the call's command is not looked at.
    command_match: dict[str, Any] | None = None

    def live(self, now: float) -> bool:
        return self.expires_at is None or self.expires_at > now


ClaimOutcome = Literal["ok", "no_run", "no_call", "not_pending", "no_call_of_kind"]


@dataclass
class ClaimResult:
    """The result of a compare-and-set decision.

    ``outcome == "ok"``: the call moved from pending to the decision. ``run`` is
    set when this caller also took the run's lease (and so may apply it now);
    otherwise another holder is applying a decision and the caller must wait.
    ``audited`` tells, on failure, whether the audit log already has a decision
    for that call (so the caller can say "already decided").
    """

    outcome: ClaimOutcome
    #: on success, the call as it was before the decision (``kind`` may be ``interrupted``).
    call: PendingCallRow | None = None
    run: RunRow | None = None
    audited: bool = False
    other_kinds: bool = False


@dataclass
class SuspendedRunRow:
    run: RunRow
    calls: list[PendingCallRow]
    #: set when a row of this run cannot be decoded: the listing reports it instead of failing whole.
    error: str | None = None


@dataclass
class StoredMessage:
    thread_id: str
    resource_id: str | None
    message: dict[str, Any]
    created_at: float = 0.0
