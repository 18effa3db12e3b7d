"""Quorum (four-eyes): a call whose policy rule needs ``approvers = N >= 2`` runs once N
distinct named actors approved the same fingerprint.

Each approval is a vote, stored as a ``vote`` entry of the audit log (append-only, in
every store: no schema change). A vote is appended, then the votes are read again:
whichever voter sees the quorum complete takes the ordinary compare-and-set approval,
so two last votes at once cannot both run the tool, and neither can be lost. A decline
by anyone ends it (the ordinary decline). An edit is a vote for the edited arguments'
fingerprint: votes count per fingerprint.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

from agent_core.call_state import CallState, RunState
from agent_core.chunks import Chunk, make_chunk
from agent_core.errors import ActorRequired, AlreadyVoted, FingerprintMismatch, SelfApprovalNotAllowed
from agent_core.fingerprint import fingerprint as fingerprint_of
from agent_core.snapshot import find_call, pending_leaves
from agent_core.stream import AgentStream
from storage.base import Store
from storage.records import AuditRow, PendingCallRow

__all__ = ["approval_chunk", "approvals_of", "quorum_line", "vote"]

#: validates edited arguments against the pending call: the dumped arguments, or None (not an edit).
ValidateArgs = Callable[[PendingCallRow], dict[str, Any] | None]


def approvals_of(entries: list[AuditRow], fingerprint: str) -> list[dict[str, Any]]:
    """The votes for ``fingerprint``, one per actor, oldest first: ``{actor, at}`` (``at`` ISO 8601)."""
    seen: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.decision == "vote" and e.actor and (e.detail or {}).get("fingerprint") == fingerprint:
            seen.setdefault(e.actor, {"actor": e.actor, "at": datetime.fromtimestamp(e.decided_at, UTC).isoformat()})
    return list(seen.values())


def quorum_line(approvals: list[dict[str, Any]], required: int) -> str:
    """``1 of 2 approvals (alice)``."""
    names = ", ".join(str(a.get("actor")) for a in approvals)
    return f"{len(approvals)} of {required} approvals" + (f" ({names})" if names else "")


async def vote(
    store: Store,
    *,
    run_id: str,
    tool_call_id: str | None,
    fingerprint: str | None,
    actor: str | None,
    validate_args: ValidateArgs,
) -> AgentStream | None:
    """Record ``actor``'s vote when the call needs a quorum. Returns the stream of a vote that
    leaves the quorum short; None when the ordinary approval applies (no quorum needed, or this
    vote completed it, or the call is not pending: the ordinary path raises the right error).
    Raises ``ActorRequired`` / ``SelfApprovalNotAllowed`` / ``AlreadyVoted`` before anything changes."""
    run = await store.get_run(run_id)
    if run is None or run.status != "suspended":
        return None
    state = RunState.from_json(run.snapshot, run_id=run_id, store=store.name)
    call = _target(state, tool_call_id)
    if call is None or call.approvers_required < 2 or call.status != "awaiting_approval":
        return None
    row = next((c for c in await store.get_calls(run_id) if c.tool_call_id == call.id), None)
    if row is None or row.status != "pending" or row.kind != "approval":
        return None
    if row.expires_at is not None and row.expires_at < time.time():
        return None  # the ordinary path raises ApprovalExpired
    if not actor:
        raise ActorRequired(
            f"tool call {call.id!r} of run {run_id!r} needs {call.approvers_required} distinct named approvers "
            f"(rule {call.policy_rule}): give actor= (--actor / WARDEN_ACTOR); nothing changed"
        )
    if state.requested_by is not None and actor == state.requested_by:
        raise SelfApprovalNotAllowed(
            f"{actor!r} started run {run_id!r} and cannot count toward the quorum of tool call {call.id!r} "
            f"(rule {call.policy_rule}); nothing changed"
        )
    if fingerprint is not None and fingerprint != row.fingerprint:
        raise FingerprintMismatch(
            f"fingerprint {fingerprint!r} does not match tool call {call.id!r} of run {run_id!r} "
            f"({row.fingerprint}); nothing was executed"
        )
    edited = validate_args(row)
    voted_for = row.fingerprint if edited is None else fingerprint_of(row.tool_name, edited)
    before = approvals_of(await store.audit_log(run_id, call.id), voted_for)
    if any(a["actor"] == actor for a in before):
        raise AlreadyVoted(
            f"{actor!r} already approved tool call {call.id!r} of run {run_id!r} "
            f"({quorum_line(before, call.approvers_required)}); nothing changed"
        )
    detail: dict[str, Any] = {
        "fingerprint": voted_for,
        "approvers_required": call.approvers_required,
        "policy_version": call.policy_version,
        "policy_rule": call.policy_rule,
    }
    if edited is not None:
        detail["edited_args"] = edited
    await store.append_audit(
        AuditRow(
            run_id=run_id,
            tool_call_id=call.id,
            agent_id=run.agent_id,
            tool_name=call.name,
            decision="vote",
            fingerprint=row.fingerprint,
            reason=None,
            decided_at=time.time(),
            actor=actor,
            detail=detail,
        )
    )
    after = approvals_of(await store.audit_log(run_id, call.id), voted_for)
    if len(after) >= call.approvers_required:
        return None  # complete: the ordinary compare-and-set approval runs the call (once)
    return AgentStream(run_id, _still_waiting(run_id, row, call, after))


def _target(state: RunState, tool_call_id: str | None) -> CallState | None:
    if tool_call_id is not None:
        found = find_call(state, tool_call_id)
        return found[1] if found else None
    leaves = [leaf for leaf in pending_leaves(state) if leaf.kind == "approval"]
    return leaves[-1].call if leaves else None


async def _still_waiting(
    run_id: str, row: PendingCallRow, call: CallState, approvals: list[dict[str, Any]]
) -> AsyncIterator[Chunk]:
    """A vote that leaves the quorum short: the call's approval chunk again, with the votes so far."""
    yield approval_chunk(run_id, row, call, approvals)


def approval_chunk(
    run_id: str, row: PendingCallRow, call: CallState, approvals: list[dict[str, Any]] | None = None
) -> Chunk:
    """The ``tool-call-approval`` chunk of a stored pending call (its policy rule and votes included)."""
    return make_chunk(
        "tool-call-approval",
        run_id,
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        args=row.args,
        fingerprint=row.fingerprint,
        resume_schema=row.resume_schema,
        agent_path=row.agent_path,
        expires_at=None if row.expires_at is None else datetime.fromtimestamp(row.expires_at, UTC),
        policy_rule=call.policy_rule,
        policy_reason=call.policy_reason,
        approvers_required=call.approvers_required,
        approvals=approvals or [],
    )
