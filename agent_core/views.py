"""What listings return: pending runs and their calls, in snake_case with camelCase JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from storage.listing import ListKind, listed_kind
from storage.records import AuditRow, CallKind, GrantRow, GrantScope, PendingCallRow, SuspendedRunRow


class _View(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)


class PendingToolCall(_View):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    requires_approval: bool
    #: ``interrupted``: approved (or resumed), its tool started, no result stored (crash or stall).
    kind: CallKind
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None
    fingerprint: str
    agent_path: list[str] = Field(default_factory=list)
    pending_since: datetime
    #: interrupted calls: when the tool started, and who had approved it.
    started_at: datetime | None = None
    approved_by: str | None = None
    #: approvals with a deadline: when the sweep expires it (may be past until it runs).
    expires_at: datetime | None = None
    #: the policy rule that gated the call (None: no rule), the distinct approvers it needs (four
    #: eyes: 2+), and the votes so far for its fingerprint (``{actor, at}``; filled by the listing).
    policy_rule: str | None = None
    approvers_required: int = 1
    approvals: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def listed_kind(self) -> ListKind:
        """What a listing's ``kind`` filter and counts call it: ``approval`` (interrupted ones too) or ``input``."""
        return listed_kind(self.kind)

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
            expires_at=None
            if row.expires_at is None or row.kind != "approval"
            else datetime.fromtimestamp(row.expires_at, UTC),
            policy_rule=row.policy_rule,
            approvers_required=row.approvers_required,
        )


class SuspendedRun(_View):
    """A pending run; ``expires_at``: the earliest approval deadline among its calls (None: none)."""

    run_id: str
    agent_id: str
    thread_id: str | None = None
    resource_id: str | None = None
    suspended_at: datetime
    tool_calls: list[PendingToolCall] = Field(default_factory=list)
    expires_at: datetime | None = None
    #: who started the run (``stream(actor=)``; over HTTP the token's name); never counts toward its quorums.
    requested_by: str | None = None

    @classmethod
    def from_row(cls, row: SuspendedRunRow) -> SuspendedRun:
        r = row.run
        calls = [PendingToolCall.from_row(c) for c in row.calls]
        return cls(
            run_id=r.run_id,
            agent_id=r.agent_id,
            thread_id=r.thread_id,
            resource_id=r.resource_id,
            suspended_at=datetime.fromtimestamp(r.suspended_at, UTC),
            tool_calls=calls,
            expires_at=min((c.expires_at for c in calls if c.expires_at is not None), default=None),
            requested_by=next((c.requested_by for c in row.calls if c.requested_by is not None), None),
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
    #: pending calls per kind (``approval``, ``input``) under the same filters, when asked for
    #: (``with_counts=True``): the picker's header.
    counts: dict[str, int] | None = None

    @classmethod
    def from_rows(
        cls,
        rows: list[SuspendedRunRow],
        *,
        total: int,
        page: int,
        per_page: int,
        counts: dict[str, int] | None = None,
    ) -> SuspendedRunList:
        runs = [SuspendedRun.from_row(r) for r in rows if r.error is None]
        bad = [UnreadableRun(run_id=r.run.run_id, agent_id=r.run.agent_id, error=r.error) for r in rows if r.error]
        return cls(runs=runs, total=total, page=page, per_page=per_page, unreadable=bad, counts=counts)


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
    #: edited (approved with edited arguments), expired (the sweep), granted (a grant approved it);
    #: with a policy: blocked, policy-error, policy-shadow, vote (see docs/policy.md).
    decision: str
    fingerprint: str
    reason: str | None = None
    #: the arguments the tool ran with, when an operator edited them.
    args: Any = None
    grant_id: str | None = None
    #: the policy version and rule that decided the call (runs with a policy; ``agent_core.policy``).
    policy_version: str | None = None
    policy_rule: str | None = None
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
            policy_version=(row.detail or {}).get("policy_version"),
            policy_rule=(row.detail or {}).get("policy_rule"),
            prev_hash=row.prev_hash,
            hash=row.hash,
        )


class AuditPage(_View):
    entries: list[AuditEntry]
    #: pass as ``after`` for the next page; None when this page is the last.
    next_after: int | None = None


class Grant(_View):
    """A standing approval: gated calls of ``tool_name`` in its scope (matching ``args_match``) run unasked.

    ``scope``: ``run`` / ``thread`` / ``resource`` (``scope_id`` names which) or
    ``agent`` (``agent_id``). ``args_match``: argument values the call must have
    (each key compared by JSON equality with the validated arguments); None: any.
    ``command_match``: for a shell or SQL tool, the argv prefixes (or statement kinds) every
    command in the call must have (``agent_core.policy_commands.CommandGrant``); None: any.
    ``expires_at``: None means until revoked.
    """

    id: str
    tool_name: str
    scope: GrantScope
    scope_id: str | None = None
    agent_id: str | None = None
    args_match: dict[str, Any] | None = None
    expires_at: datetime | None = None
    created_by: str | None = None
    command_match: dict[str, Any] | None = None

    @classmethod
    def from_row(cls, row: GrantRow) -> Grant:
        return cls(
            id=row.id,
            tool_name=row.tool_name,
            scope=row.scope,
            scope_id=row.scope_id,
            agent_id=row.agent_id,
            args_match=row.args_match,
            expires_at=None if row.expires_at is None else datetime.fromtimestamp(row.expires_at, UTC),
            created_by=row.created_by,
            command_match=row.command_match,
        )

    def describe(self) -> str:
        """The rule in words: "allow send_email with to=ana@example.com in thread t-42 for 1 hour"."""
        return describe_grant(
            self.tool_name,
            self.scope,
            self.scope_id,
            self.agent_id,
            self.args_match,
            None if self.expires_at is None else (self.expires_at - datetime.now(UTC)).total_seconds(),
            command_match=self.command_match,
        )


def describe_grant(
    tool_name: str,
    scope: str,
    scope_id: str | None,
    agent_id: str | None,
    args_match: dict[str, Any] | None,
    expires_in: float | None,
    *,
    command_match: dict[str, Any] | None = None,
) -> str:
    """A grant's rule in words, as the console shows it before the operator confirms."""
    parts = [f"allow {tool_name}"]
    if command_match:
        parts.append(_describe_command_match(command_match))
    if args_match:
        pins = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in args_match.items())
        parts.append(f"with {pins}")
    elif not command_match:
        parts.append("with any arguments")
    where = {"run": "in run", "thread": "in thread", "resource": "for resource", "agent": "for every run of agent"}
    parts.append(f"{where.get(scope, scope)} {agent_id if scope == 'agent' else scope_id}")
    parts.append("until revoked" if expires_in is None else f"for {_duration(expires_in)}")
    return " ".join(parts)


def _describe_command_match(command_match: dict[str, Any]) -> str:
    from agent_core.policy_commands import CommandGrant, CommandsInvalid

    try:
        return CommandGrant.from_json(command_match).describe()
    except CommandsInvalid:  # a row no process here wrote: shown, never trusted
        return f"with command rule {json.dumps(command_match)[:200]} (invalid: covers nothing)"


def _duration(seconds: float) -> str:
    """Whole minutes once past one: a 1-hour grant read a moment later is still "1 hour", not "60 minutes"."""
    s = max(0, round(seconds))
    if s >= 60:
        s = round(s / 60) * 60
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if (s >= size and s % size == 0) or s >= size * 2:
            n = round(s / size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{s} second{'s' if s != 1 else ''}"
