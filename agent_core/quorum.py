"""Quorum (four-eyes): a call whose policy rule needs ``approvers = N >= 2`` runs once N
distinct named actors approved the same fingerprint.

Each approval is a vote, stored as a ``vote`` entry of the audit log (append-only, in
every store: no schema change). The approval's own compare-and-set
finds the call needs a quorum and leaves everything unchanged (``VoteNeeded``); the vote
is appended, then the votes are read again: whichever voter sees the quorum complete
takes the ordinary compare-and-set approval, so two last votes at once cannot both run
the tool, and neither can be lost. An ordinary approval costs nothing more. A decline
by anyone ends it (the ordinary decline). An edit is a vote for the edited arguments'
fingerprint: votes count per fingerprint.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from agent_core.call_state import CallState, RunState
from agent_core.chunks import Chunk, make_chunk
from agent_core.errors import ActorRequired, AlreadyVoted, SelfApprovalNotAllowed, WardenError
from agent_core.fingerprint import fingerprint as fingerprint_of
from agent_core.stream import AgentStream
from storage.base import Store
from storage.records import AuditRow, PendingCallRow
from storage.votes import approvals_of

__all__ = ["VoteNeeded", "approval_chunk", "approvals_of", "needs_vote", "quorum_line", "record_vote"]


def quorum_line(approvals: list[dict[str, Any]], required: int) -> str:
    """``1 of 2 approvals (alice)``."""
    names = ", ".join(str(a.get("actor")) for a in approvals)
    return f"{len(approvals)} of {required} approvals" + (f" ({names})" if names else "")


class VoteNeeded(WardenError):
    """Raised inside a decision's compare-and-set to leave it unchanged: the approval is a vote.
    ``Decisions.decide`` catches it, records the vote, and claims again only when the quorum is met."""

    code = "AGENT_VOTE_NEEDED"

    def __init__(self, state: RunState, row: PendingCallRow, call: CallState, actor: str, edited: Any) -> None:
        super().__init__(f"tool call {call.id!r} needs {call.approvers_required} approvals")
        self.state, self.row, self.call, self.actor, self.edited = state, row, call, actor, edited


def needs_vote(
    state: RunState, row: PendingCallRow, call: CallState | None, actor: str | None, edited: dict[str, Any] | None
) -> None:
    """Inside the claim (pure, nothing changed yet): ``VoteNeeded`` when the call needs a quorum,
    after the checks that need no store: ``ActorRequired``, ``SelfApprovalNotAllowed``."""
    if call is None or call.approvers_required < 2:
        return
    if not actor:
        raise ActorRequired(
            f"tool call {call.id!r} of run {state.run_id!r} needs {call.approvers_required} distinct named "
            f"approvers (rule {call.policy_rule}): give actor= (--actor / WARDEN_ACTOR); nothing changed"
        )
    if state.requested_by is not None and actor == state.requested_by:
        raise SelfApprovalNotAllowed(
            f"{actor!r} started run {state.run_id!r} and cannot count toward the quorum of tool call "
            f"{call.id!r} (rule {call.policy_rule}); nothing changed"
        )
    raise VoteNeeded(state, row, call, actor, edited)


async def record_vote(store: Store, need: VoteNeeded) -> AgentStream | None:
    """Append the vote (``AlreadyVoted`` first if this actor voted for this fingerprint), then read
    the votes again. None: the quorum is met (the caller takes the ordinary approval, which runs the
    call once whoever gets there first); else the stream of a vote that leaves the quorum short."""
    row, call, actor, run_id = need.row, need.call, need.actor, need.state.run_id
    voted_for = row.fingerprint if need.edited is None else fingerprint_of(row.tool_name, need.edited)
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
    if need.edited is not None:
        detail["edited_args"] = need.edited
    await store.append_audit(
        AuditRow(
            run_id=run_id,
            tool_call_id=call.id,
            agent_id=need.state.agent_id,
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
        return None
    return AgentStream(run_id, _still_waiting(run_id, row, call, after))


async def _still_waiting(
    run_id: str, row: PendingCallRow, call: CallState, approvals: list[dict[str, Any]]
) -> AsyncIterator[Chunk]:
    """A vote that leaves the quorum short: the call's approval chunk again, with the votes so far."""
    yield approval_chunk(run_id, row, call, approvals)


def approval_chunk(
    run_id: str, row: PendingCallRow, call: CallState | None, approvals: list[dict[str, Any]] | None = None
) -> Chunk:
    """The ``tool-call-approval`` chunk of a stored pending call (its policy rule and votes included);
    without its ``CallState``, from the row alone (no policy reason)."""
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
        policy_rule=row.policy_rule if call is None else call.policy_rule,
        policy_reason=None if call is None else call.policy_reason,
        approvers_required=row.approvers_required if call is None else call.approvers_required,
        approvals=approvals or [],
    )


def suspended_chunk(run_id: str, row: PendingCallRow) -> Chunk:
    """The ``tool-call-suspended`` chunk of a stored call waiting for resume data."""
    return make_chunk(
        "tool-call-suspended",
        run_id,
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        args=row.args,
        suspend_payload=row.suspend_payload,
        resume_schema=row.resume_schema,
        agent_path=row.agent_path,
    )
