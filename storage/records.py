"""Plain records the stores hold. Storage knows nothing of agents: snapshots are opaque JSON text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CallKind = Literal["approval", "suspend"]
#: pending -> approved | declined | resuming (a decision, compare-and-set once).
CallStatus = Literal["pending", "approved", "declined", "resuming"]
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


@dataclass
class PendingCallRow:
    run_id: str
    tool_call_id: str
    tool_name: str
    kind: CallKind
    args: Any
    fingerprint: str
    status: CallStatus = "pending"
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None
    agent_path: list[str] = field(default_factory=list)
    seq: int = 0
    created_at: float = 0.0


@dataclass
class Decision:
    """What a caller decided about one pending call, as the audit log records it."""

    status: Literal["approved", "declined", "resuming"]
    reason: str | None = None
    actor: str | None = None


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
