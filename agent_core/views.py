"""What listings return: pending runs and their calls, in snake_case with camelCase JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from storage.records import AuditRow, PendingCallRow, SuspendedRunRow


class _View(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class PendingToolCall(_View):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    requires_approval: bool
    #: ``interrupted``: approved (or resumed), its tool started, no result stored (crash or stall).
    kind: Literal["approval", "suspend", "interrupted"]
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None
    fingerprint: str
    agent_path: list[str] = Field(default_factory=list)
    pending_since: datetime
    #: interrupted calls: when the tool started, and who had approved it.
    started_at: datetime | None = None
    approved_by: str | None = None

    @classmethod
    def from_row(cls, row: PendingCallRow) -> PendingToolCall:
        return cls(
            tool_call_id=row.tool_call_id,
            tool_name=row.tool_name,
            args=row.args,
            requires_approval=row.kind != "suspend",
            kind=row.kind,
            suspend_payload=row.suspend_payload,
            resume_schema=row.resume_schema,
            fingerprint=row.fingerprint,
            agent_path=row.agent_path,
            pending_since=datetime.fromtimestamp(row.created_at, UTC),
            started_at=None if row.started_at is None else datetime.fromtimestamp(row.started_at, UTC),
            approved_by=row.decided_by if row.kind == "interrupted" else None,
        )


class SuspendedRun(_View):
    run_id: str
    agent_id: str
    thread_id: str | None = None
    resource_id: str | None = None
    suspended_at: datetime
    tool_calls: list[PendingToolCall] = Field(default_factory=list)

    @classmethod
    def from_row(cls, row: SuspendedRunRow) -> SuspendedRun:
        r = row.run
        return cls(
            run_id=r.run_id,
            agent_id=r.agent_id,
            thread_id=r.thread_id,
            resource_id=r.resource_id,
            suspended_at=datetime.fromtimestamp(r.suspended_at, UTC),
            tool_calls=[PendingToolCall.from_row(c) for c in row.calls],
        )


class UnreadableRun(_View):
    """A pending run whose stored rows cannot be decoded: reported, never hiding the others."""

    run_id: str
    agent_id: str
    error: str


class SuspendedRunList(_View):
    runs: list[SuspendedRun]
    total: int
    page: int = 0
    per_page: int = 50
    #: runs of this page that could not be read (corrupt rows); deciding them raises ``CorruptRecord``.
    unreadable: list[UnreadableRun] = Field(default_factory=list)

    @classmethod
    def from_rows(cls, rows: list[SuspendedRunRow], *, total: int, page: int, per_page: int) -> SuspendedRunList:
        runs = [SuspendedRun.from_row(r) for r in rows if r.error is None]
        bad = [UnreadableRun(run_id=r.run.run_id, agent_id=r.run.agent_id, error=r.error) for r in rows if r.error]
        return cls(runs=runs, total=total, page=page, per_page=per_page, unreadable=bad)


class AuditEntry(_View):
    """One entry of the audit trail: who decided what about which call, when; chained by hashes."""

    seq: int
    time: datetime
    actor: str | None = None
    run_id: str
    tool_call_id: str
    agent_id: str
    tool_name: str
    #: approved, declined, resuming, re-executed, returned-to-pending, withdrawn, notification-failed,
    #: and what later decisions add (edited, expired, granted).
    decision: str
    fingerprint: str
    reason: str | None = None
    #: the arguments the tool ran with, when an operator edited them.
    args: Any = None
    grant_id: str | None = None
    prev_hash: str | None = None
    hash: str | None = None

    @classmethod
    def from_row(cls, row: AuditRow) -> AuditEntry:
        return cls(
            seq=row.seq,
            time=datetime.fromtimestamp(row.decided_at, UTC),
            actor=row.actor,
            run_id=row.run_id,
            tool_call_id=row.tool_call_id,
            agent_id=row.agent_id,
            tool_name=row.tool_name,
            decision=row.decision,
            fingerprint=row.fingerprint,
            reason=row.reason,
            args=row.args,
            grant_id=row.grant_id,
            prev_hash=row.prev_hash,
            hash=row.hash,
        )


class AuditPage(_View):
    entries: list[AuditEntry]
    #: pass as ``after`` for the next page; None when this page is the last.
    next_after: int | None = None
