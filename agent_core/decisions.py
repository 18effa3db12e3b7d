"""Decisions on waiting tool calls: validate, compare-and-set through the store, then apply.

A decision (a ``Verdict``: ``Approve`` / ``Decline`` / ``Resume``, or the sweep's
``Expire``) is one compare-and-set transaction in the store that also checks it
(kind, fingerprint, resume data, snapshot: ``Decisions.check``) and takes the
run's lease; its errors raise from the ``await`` and change nothing. Checked, it
becomes a ``Plan``, which the returned stream applies: it moves the call
(``CallState.approve`` / ``decline`` / ``resume``), continues the run
(``agent_core.persist``), and either ends it (snapshot deleted) or stores it
again. Decisions on different calls of one run serialise on the lease, so
none is lost. Handover (``agent_core.handover``): a decision on a run hosted
elsewhere is recorded here and applied by its host (``adopt``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from agent_core import telemetry
from agent_core.call_state import RunState
from agent_core.chunks import Chunk, make_chunk
from agent_core.definition import DelegateInput, HostedAgent
from agent_core.engine import EXPIRED_MESSAGE
from agent_core.errors import (
    AlreadyDecided,
    AmbiguousToolCall,
    ApprovalExpired,
    CorruptSnapshot,
    EditNotSupported,
    FingerprintMismatch,
    ResumeDataInvalid,
    SnapshotNotFound,
    ToolArgsInvalid,
    ToolCallNotSuspended,
    WrongDecisionKind,
    validation_problems,
)
from agent_core.fingerprint import fingerprint as fingerprint_of
from agent_core.handover import HANDOVER
from agent_core.ids import new_token
from agent_core.limits import args_problem
from agent_core.lost_lease import follow
from agent_core.models import Message
from agent_core.pending import list_suspended
from agent_core.persist import Runs
from agent_core.policy_gate import policy_detail, run_policies
from agent_core.quorum import VoteNeeded, needs_vote, record_vote
from agent_core.snapshot import find_call
from agent_core.stream import AgentStream
from agent_core.verdicts import Action, Approve, Decline, Expire, Plan, Resume, Verdict
from storage.base import Store
from storage.records import ClaimResult, Decision, PendingCallRow, RunRow

#: The actor of expiries by ``sweep()``.
SWEEP_ACTOR = "warden-sweep"
#: What the model is told when the operator declines to run an interrupted call again.
INTERRUPTED_DECLINED = (
    "The tool call was interrupted; it may or may not have run. The operator declined to run it again."
)
#: the verdict a stored call status asks for when its decision is applied here (``adopt``).
#: ``warden.approval.decision`` of an applied plan (action, edited arguments).
_OUTCOME: dict[tuple[Action, bool], str] = {
    ("approve", False): "approved",
    ("approve", True): "edited",
    ("decline", False): "declined",
    ("expire", False): "expired",
}
_ADOPTED: dict[str, Action] = {"approved": "approve", "declined": "decline", "resuming": "resume", "expired": "expire"}


class Decisions:
    """Takes and applies decisions on the runs of one store."""

    def __init__(self, runs: Runs, *, lease_seconds: float, actor: str | None) -> None:
        self.runs = runs
        self.store: Store = runs.store
        self.lease_seconds = lease_seconds
        self.actor = actor
        #: the leases this process holds, renewed by one timer (``_Renewals``).
        self.renewals = _Renewals(self)

    async def decide(
        self,
        agent: HostedAgent,
        verdict: Verdict,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        followups: list[Message] | None = None,
    ) -> AgentStream:
        """Record a decision atomically, then return the stream that applies it.

        ``followups``: user messages (auto-resume) that join the conversation
        after the tool results of the step being decided. On a call of kind
        ``interrupted`` (its tool started, no result was stored), ``Approve``
        runs the tool again (audited ``re-executed``) and ``Decline`` tells the
        model the outcome is unknown. ``Approve.args``: edited arguments, validated
        against the tool's ``input_schema`` first (``ToolArgsInvalid``). An approval
        whose deadline passed raises ``ApprovalExpired``; ``Expire`` is the sweep's.
        """
        owner = (HANDOVER if getattr(agent, "remote", False) else "") + new_token()
        # copied: the caller's messages must not change the state once it is stored (``saved_states``)
        check = _Check(
            self, agent, verdict, owner, tuple([m.model_copy(deep=True) for m in followups]) if followups else ()
        )

        async def claim_it() -> ClaimResult:
            return await self.store.claim(
                run_id, tool_call_id, kinds=verdict.kinds, decide=check, owner=owner, lease_seconds=self.lease_seconds
            )

        try:
            try:
                claim = await claim_it()
            except VoteNeeded as need:
                short = await record_vote(self.store, need)
                if short is not None:
                    check.give_back()
                    return short  # the quorum is short: the call stays pending
                check.quorum_met = True  # this vote completed it: the ordinary approval runs the call
                claim = await claim_it()
            if claim.outcome != "ok" and tool_call_id is not None and (claim.audited or claim.outcome == "no_run"):
                # an expired call stays expired after the run moved on: that wins over "already decided"
                for entry in await self.store.audit_log(run_id, tool_call_id):
                    if entry.decision == "expired":
                        raise ApprovalExpired(_swept_message(tool_call_id, run_id, entry.decided_at))
            self._raise_for(claim, run_id, tool_call_id, verdict.action)
        except BaseException:
            check.give_back()  # refused: nothing changed the state, a later decision may use it
            raise
        assert claim.call is not None and check.plan is not None
        plan = check.plan
        plan.call = claim.call
        if claim.run is None:  # another holder has the run's lease (applying a decision): the plan waits for it
            plan.state = None
            check.give_back()
        if owner.startswith(HANDOVER):  # recorded only: the process hosting the agent applies it
            check.give_back()
            return AgentStream(run_id, _nothing())
        call_id = claim.call.tool_call_id

        async def abandon() -> None:  # cancelled before it began: the decision goes back to pending
            await self.store.release(run_id, owner, reset_call=call_id)

        return AgentStream(run_id, self._apply(agent, plan), on_abandon=abandon)

    def check(
        self,
        agent: HostedAgent,
        verdict: Verdict,
        call: PendingCallRow,
        run: RunRow,
        owner: str,
        followups: tuple[Message, ...] = (),
        *,
        state: RunState | None = None,
    ) -> tuple[Decision, Plan]:
        """Check ``verdict`` against the stored call and run (no I/O: the store calls it inside its
        compare-and-set): the decision to record, and the plan that applies it. Raises the typed
        error of a decision that cannot be taken; nothing is then written (``state`` is not changed).
        ``state``: the run's state when the caller already has it (else read from ``run.snapshot``)."""
        run_id = run.run_id
        if run.agent_id != agent.id:
            raise SnapshotNotFound(
                f"run {run_id!r} in {self.store.name} belongs to agent {run.agent_id!r}, not {agent.id!r}"
            )
        if state is None:
            state = RunState.from_json(run.snapshot, run_id=run_id, store=self.store.name)
        run_policies(state)  # a stored policy that was altered is CorruptSnapshot, before anything changes
        if find_call(state, call.tool_call_id) is None:
            raise CorruptSnapshot(
                f"snapshot of run {run_id!r} in {self.store.name} has no tool call {call.tool_call_id!r}"
            )
        actor = verdict.actor if verdict.actor is not None else self.actor
        overdue = call.kind == "approval" and call.expires_at is not None and call.expires_at < time.time()
        if isinstance(verdict, Expire):
            if not overdue:
                raise ToolCallNotSuspended(f"tool call {call.tool_call_id!r} of run {run_id!r} is not overdue")
            decision = Decision("expired", reason=EXPIRED_MESSAGE, actor=actor or SWEEP_ACTOR)
            return decision, Plan("expire", call, owner, state, followups=followups)
        if overdue:
            raise ApprovalExpired(_expired_message(call.tool_call_id, run_id, call.expires_at))
        if isinstance(verdict, Approve):
            return self._check_approve(agent, verdict, call, Plan("approve", call, owner, state, followups=followups))
        if isinstance(verdict, Decline):
            told = verdict.reason
            if call.kind == "interrupted":
                told = INTERRUPTED_DECLINED + (f" Reason: {verdict.reason}" if verdict.reason else "")
            decision = Decision("declined", reason=verdict.reason, actor=actor)
            return decision, Plan("decline", call, owner, state, reason=told, followups=followups)
        if call.kind != "suspend":
            raise WrongDecisionKind(
                f"tool call {call.tool_call_id!r} of run {run_id!r} waits for "
                "approval, not resume data: use approve_tool_call"
            )
        data = self._validate_resume(agent, call, verdict.data, run_id)
        decision = Decision("resuming", actor=actor, resume_data=data)
        return decision, Plan("resume", call, owner, state, resume_data=data, followups=followups)

    def _check_approve(
        self, agent: HostedAgent, verdict: Approve, call: PendingCallRow, plan: Plan
    ) -> tuple[Decision, Plan]:
        run_id = call.run_id
        actor = verdict.actor if verdict.actor is not None else self.actor
        if call.kind not in ("approval", "interrupted"):
            raise WrongDecisionKind(
                f"tool call {call.tool_call_id!r} of run {run_id!r} waits for resume "
                "data, not approval: use resume_stream"
            )
        if verdict.fingerprint is not None and verdict.fingerprint != call.fingerprint:
            raise FingerprintMismatch(
                f"fingerprint {verdict.fingerprint!r} does not match tool call {call.tool_call_id!r} of run "
                f"{run_id!r} ({call.fingerprint}); nothing was executed"
            )
        if call.kind == "interrupted" and call.resume_data is not None:
            # an interrupted resume runs again with the resume data it was given
            decision = Decision("resuming", actor=actor, resume_data=call.resume_data)
            plan.action, plan.resume_data = "resume", call.resume_data
            return decision, plan
        edited = self._validate_args(agent, call, verdict.args, run_id) if verdict.args is not None else None
        if edited is None and call.kind == "interrupted":
            edited = call.edited_args  # re-executed with the arguments it was approved with
        detail = None
        if edited is not None:
            detail = {
                "args": call.args,
                "edited_args": edited,
                "fingerprint": call.fingerprint,
                "edited_fingerprint": fingerprint_of(call.tool_name, edited),
            }
        decision = Decision("approved", actor=actor, edited_args=edited, detail=detail)
        plan.args = edited
        return decision, plan

    def _raise_for(self, claim: ClaimResult, run_id: str, tool_call_id: str | None, kind: str) -> None:
        if claim.outcome == "ok":
            return
        call = f"tool call {tool_call_id!r}" if tool_call_id else "the latest pending tool call"
        if claim.outcome == "not_pending" or claim.audited:
            status = claim.call.status if claim.call else "decided"
            raise AlreadyDecided(f"{call} of run {run_id!r} was already decided ({status}) in {self.store.name}")
        if claim.outcome == "no_run":
            raise SnapshotNotFound(
                f"no snapshot found for run {run_id!r} in {self.store.name}: it never "
                "suspended, has already finished, or lives in another store"
            )
        if claim.outcome == "no_call_of_kind":
            wanted = "approval" if kind == "approve" else "resume data"
            raise WrongDecisionKind(f"run {run_id!r} has no tool call waiting for {wanted}")
        raise ToolCallNotSuspended(
            f"run {run_id!r} in {self.store.name} has no pending {call if tool_call_id else 'tool call'}"
        )

    def _validate_args(self, agent: HostedAgent, call: PendingCallRow, args: Any, run_id: str) -> dict[str, Any] | None:
        """Edited arguments, validated and dumped as ``execute`` receives them; None when they are the original."""
        if args == call.args:
            return None  # the same arguments are not an edit
        owner = agent.descendant(call.agent_path)
        schema: type[BaseModel] | None = None
        if owner is not None:
            if call.tool_name in owner.delegates:
                schema = DelegateInput
            elif call.tool_name in owner.tools:
                schema = owner.tools[call.tool_name].input_schema
        if schema is None:
            raise ToolArgsInvalid(f"tool {call.tool_name!r} of call {call.tool_call_id!r} is unknown here")
        if owner is not None and not getattr(owner.tools.get(call.tool_name), "editable", True):
            raise EditNotSupported(
                f"tool {call.tool_name!r} of call {call.tool_call_id!r} (run {run_id!r}) belongs to an agent whose "
                "framework cannot run edited arguments: approve or decline it as it is; nothing changed"
            )
        if not isinstance(args, dict):
            raise ToolArgsInvalid(f"edited arguments for tool call {call.tool_call_id!r} must be an object")
        try:
            dumped: dict[str, Any] = schema.model_validate(args).model_dump(mode="json")
        except ValidationError as exc:
            errors, detail = validation_problems(exc)
            raise ToolArgsInvalid(
                f"edited arguments for tool {call.tool_name!r} (call {call.tool_call_id!r}, run {run_id!r}) fail "
                f"its input_schema: {detail}; the call is unchanged",
                errors=errors,
            ) from exc
        problem = args_problem(dumped)
        if problem:
            raise ToolArgsInvalid(f"edited arguments for tool call {call.tool_call_id!r}: {problem}")
        return dumped

    def _validate_resume(self, agent: HostedAgent, call: PendingCallRow, data: Any, run_id: str) -> Any:
        owner = agent.descendant(call.agent_path)
        tool = owner.tools.get(call.tool_name) if owner is not None else None
        if tool is None or tool.resume_schema is None:
            if not isinstance(data, dict):
                raise ResumeDataInvalid(f"resume data for tool call {call.tool_call_id!r} must be an object")
            return data
        try:
            return tool.resume_schema.model_validate(data).model_dump(mode="json")
        except ValidationError as exc:
            errors, detail = validation_problems(exc)
            raise ResumeDataInvalid(
                f"resume data for tool {call.tool_name!r} (call {call.tool_call_id!r}, run {run_id!r}) fails its "
                f"resume_schema: {detail}; the run is unchanged",
                errors=errors,
            ) from exc

    def _apply(self, agent: HostedAgent, plan: Plan) -> AsyncIterator[Chunk]:
        """The stream that applies a claimed decision and advances the run: one generator for all of
        it (each generator layer costs every chunk of the run one more hop)."""
        return self._leased(agent, plan.state, plan.owner, [plan.call.tool_call_id], plan=plan)

    async def _decided(self, plan: Plan) -> RunState | Chunk:
        """The run with ``plan``'s decision applied to its call; or the error chunk of a decision that cannot
        be applied (the lease given back). Cancelled: the decision goes back to pending."""
        call, owner = plan.call, plan.owner
        run_id = call.run_id
        try:
            if plan.state is None:  # another holder is applying a decision on this run: wait for it
                waited = await self._wait_for_lease(run_id, owner, call.tool_call_id)
                if isinstance(waited, Chunk):
                    return waited
                state = waited
            else:
                state = plan.state
            found = find_call(state, call.tool_call_id)
            problem: tuple[str, str] | None = None
            if found is None:
                problem = (CorruptSnapshot.code, f"snapshot of run {run_id!r} has no tool call {call.tool_call_id!r}")
            elif not found[1].decidable:
                # Never apply a decision twice (e.g. a decision that was withdrawn and
                # taken again after the first one had in fact been applied).
                problem = (
                    AlreadyDecided.code,
                    f"tool call {call.tool_call_id!r} of run {run_id!r} was already "
                    f"applied ({found[1].status}); nothing was executed",
                )
            if problem is not None:
                await self.store.release(run_id, owner)
                return make_chunk("error", run_id, code=problem[0], error=problem[1])
        except asyncio.CancelledError:
            await asyncio.shield(self.store.release(run_id, owner, reset_call=call.tool_call_id))
            raise
        assert found is not None
        _, target = found
        if plan.action == "approve":
            target.approve(plan.args)
        elif plan.action == "expire":
            target.expire(time.time())
        elif plan.action == "decline":
            target.decline(plan.reason)
        else:
            target.resume(plan.resume_data)
        if call.kind == "approval":
            outcome = _OUTCOME.get((plan.action, plan.args is not None), plan.action)
            telemetry.decided(state, target, outcome, plan.actor)
        state.followups.extend(plan.followups)
        return state

    def _leased(
        self,
        agent: HostedAgent,
        state: RunState | None,
        owner: str,
        applied: list[str],
        *,
        plan: Plan | None = None,
    ) -> AsyncIterator[Chunk]:
        """Advance a run while holding (and renewing) its lease; with ``plan``, apply that decision first."""
        return self.runs.advance(
            agent, state, owner=owner, applied=applied, lease=_Held(self, state, owner, applied, plan, agent)
        )

    async def continue_orphan(self, agent: HostedAgent, run_id: str) -> bool:
        """Continue a run left under an expired lease whose calls all have stored results (the model is
        called again); False when another process took it first or its snapshot is unreadable."""
        advance = await self._orphan(agent, run_id)
        if advance is None:
            return False
        await AgentStream(run_id, advance).wait()
        return True

    async def _orphan(self, agent: HostedAgent, run_id: str, *, emit_start: bool = True) -> AsyncIterator[Chunk] | None:
        """The advance of a run whose lease is free, its lease taken here; None when another process took
        it first or its snapshot is unreadable."""
        owner = new_token()
        row = await self.store.acquire_lease(run_id, owner, self.lease_seconds)
        if row is None:
            return None
        try:
            state = self.load(row)
        except CorruptSnapshot:
            await self.store.release(run_id, owner)
            return None
        return self.runs.advance(
            agent,
            state,
            owner=owner,
            applied=[],
            emit_start=emit_start,
            lease=_Held(self, state, owner, [], None, agent),
        )

    async def _wait_for_lease(self, run_id: str, owner: str, call_id: str) -> RunState | Chunk:
        delay = 0.002
        while True:
            row = await self.store.acquire_lease(run_id, owner, self.lease_seconds, waiting_call=call_id)
            if row is not None:
                try:
                    return self.load(row)
                except CorruptSnapshot as exc:
                    await self.store.release(run_id, owner)
                    return make_chunk("error", run_id, error=exc.message, code=exc.code)
            if await self.store.get_run(run_id) is None:
                return make_chunk(
                    "error",
                    run_id,
                    code=SnapshotNotFound.code,
                    error=f"run {run_id!r} ended before this decision could be applied",
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.25)

    async def adopt(self, agent: HostedAgent, run_id: str, tool_call_id: str) -> AgentStream | None:
        """Apply a decision another process recorded on a call of ``agent`` (see ``RemoteAgent``).

        Takes over the recorder's handover lease (or waits for a free one, as a decider that lost the race
        does), then applies the decision here, where the agent's tools live. None while the call is still
        pending, or someone else is applying it.
        """
        call = next((c for c in await self.store.get_calls(run_id) if c.tool_call_id == tool_call_id), None)
        run = await self.store.get_run(run_id)
        if run is None or call is None or call.status == "pending" or call.started_at is not None:
            return None
        if (run.lease_owner or "").startswith(HANDOVER) and (run.lease_until or 0.0) >= time.time():
            owner = run.lease_owner or ""
            if not await self.store.renew_lease(run_id, owner, self.lease_seconds):
                return None
            snapshot = run.snapshot
        else:
            owner = new_token()
            row = await self.store.acquire_lease(run_id, owner, self.lease_seconds, waiting_call=tool_call_id)
            if row is None:
                return None
            snapshot = row.snapshot
        try:
            state = self.runs.saved.take(run_id, snapshot) or RunState.from_json(
                snapshot, run_id=run_id, store=self.store.name
            )
        except CorruptSnapshot:
            await self.store.release(run_id, owner)
            raise
        action = _ADOPTED[call.status]
        reason = None
        if action == "decline":
            audit = [a for a in await self.store.audit_log(run_id, tool_call_id) if a.decision == "declined"]
            reason = audit[-1].reason if audit else None
        plan = Plan(
            action,
            call,
            owner,
            state,
            args=call.edited_args if action == "approve" else None,  # an approval with edited arguments
            reason=reason,
            resume_data=call.resume_data,
            actor=call.decided_by,
        )
        return AgentStream(run_id, self._apply(agent, plan))

    def load(self, run: RunRow) -> RunState:
        """The run's state: the one this process stored, when ``run.snapshot`` is exactly its text
        (taken: a decision changes it), else validated from the text (``CorruptSnapshot``)."""
        state = self.runs.saved.take(run.run_id, run.snapshot)
        if state is None:
            state = RunState.from_json(run.snapshot, run_id=run.run_id, store=self.store.name)
        return state

    # -- finding the call a decision is about ----------------------------------------------------
    async def run_of_decided(self, run_id: str, tool_call_id: str | None) -> RunRow:
        """The stored run a decision by run id is about; or why there is none (from the audit log)."""
        run = await self.store.get_run(run_id)
        if run is not None:
            return run
        if tool_call_id is not None:
            audit = await self.store.audit_log(run_id, tool_call_id)
            for entry in audit:
                if entry.decision == "expired":
                    raise ApprovalExpired(_swept_message(tool_call_id, run_id, entry.decided_at))
            if audit:
                raise AlreadyDecided(
                    f"tool call {tool_call_id!r} of run {run_id!r} was already decided "
                    f"({audit[-1].decision}) in {self.store.name}"
                )
        raise SnapshotNotFound(
            f"no snapshot found for run {run_id!r} in {self.store.name}: it never "
            "suspended, has already finished, or lives in another store"
        )

    async def send_tool_approval(
        self,
        agent: HostedAgent,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool,
        tool_call_id: str | None = None,
        run_id: str | None = None,
        resume_data: Any = None,
        reason: str | None = None,
        actor: str | None = None,
    ) -> AgentStream:
        """Decide a thread's pending call without knowing its run id: found in storage."""
        if run_id is None:
            listing = await list_suspended(
                self.store, agent_id=agent.id, thread_id=thread_id, resource_id=resource_id, per_page=100
            )
            matches = [
                (r, c)
                for r in listing.runs
                for c in r.tool_calls
                if tool_call_id is None or c.tool_call_id == tool_call_id
            ]
            if not matches:
                raise SnapshotNotFound(
                    f"no suspended run for agent {agent.id!r} in thread {thread_id!r}"
                    + (f" with tool call {tool_call_id!r}" if tool_call_id else "")
                    + f" in {self.store.name}"
                )
            if len(matches) > 1:
                ids = ", ".join(c.tool_call_id for _, c in matches[:10])
                raise AmbiguousToolCall(
                    f"thread {thread_id!r} has {len(matches)} pending tool calls ({ids}); "
                    "pass tool_call_id to choose one"
                )
            run, call = matches[0]
            run_id, tool_call_id = run.run_id, call.tool_call_id
            kind: str | None = call.kind
        else:
            kind = None
        verdict: Verdict
        if not approved:
            verdict = Decline(reason=reason, actor=actor)
        elif kind == "suspend" or (kind is None and resume_data is not None):
            verdict = Resume(resume_data if resume_data is not None else {}, actor=actor)
        else:
            verdict = Approve(actor=actor)
        return await self.decide(agent, verdict, run_id=run_id, tool_call_id=tool_call_id)


class _Renewals:
    """Renews every lease this process holds while it applies decisions (so a long tool never loses its
    run), with one timer for all of them: a lease is registered when its holder starts applying and
    unregistered when it stops. Each lease is renewed a third of ``lease_seconds`` after it was taken or
    last renewed. A decision costs a dict insert and removal, not a timer (or a task) of its own: most
    decisions end long before their first renewal is due."""

    __slots__ = ("decisions", "held", "loop", "task", "timer")

    def __init__(self, decisions: Decisions) -> None:
        self.decisions = decisions
        #: (run id, lease owner) -> the loop time its next renewal is due.
        self.held: dict[tuple[str, str], float] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[None] | None = None

    def add(self, run_id: str, owner: str) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self.loop:  # a runtime used from another event loop: that loop's timer is gone
            self.loop, self.timer, self.task = loop, None, None
        due = loop.time() + self.decisions.lease_seconds / 3
        self.held[(run_id, owner)] = due
        if self.task is None and (self.timer is None or self.timer.when() > due):
            self._schedule(due)

    def discard(self, run_id: str, owner: str) -> None:
        self.held.pop((run_id, owner), None)  # a timer with nothing due stops by itself

    def _schedule(self, due: float) -> None:
        assert self.loop is not None
        if self.timer is not None:
            self.timer.cancel()
        self.timer = self.loop.call_at(due, self._fire)

    def _fire(self) -> None:
        self.timer = None
        if self.held and self.loop is not None:
            self.task = self.loop.create_task(self._renew_due())

    async def _renew_due(self) -> None:
        loop, d = asyncio.get_running_loop(), self.decisions
        try:
            due = [key for key, when in self.held.items() if when <= loop.time()]
            for key in due:
                if key not in self.held:
                    continue  # released meanwhile
                try:
                    kept = await d.store.renew_lease(key[0], key[1], d.lease_seconds)
                except Exception:  # the store failed: this lease's next write says so; the others go on
                    kept = False
                if not kept:
                    self.held.pop(key, None)  # lost: the run's next write says so
                elif key in self.held:
                    self.held[key] = loop.time() + d.lease_seconds / 3
        finally:
            if self.task is asyncio.current_task():
                self.task = None
                if self.held and self.loop is loop:
                    self._schedule(min(self.held.values()))


class _Held:
    """The lease a decision's advance holds (``persist.Held``): the decision applied first, the lease renewed
    while the run advances, the run freed if the advance is interrupted."""

    __slots__ = ("agent", "applied", "decisions", "gone", "owner", "plan", "run_id", "state")

    def __init__(
        self,
        decisions: Decisions,
        state: RunState | None,
        owner: str,
        applied: list[str],
        plan: Plan | None,
        agent: HostedAgent,
    ) -> None:
        self.decisions, self.state, self.owner, self.applied, self.plan = decisions, state, owner, applied, plan
        self.agent = agent
        self.run_id: str | None = None
        #: set once the lease was lost: nothing of this run is this holder's to give back any more
        self.gone = False

    async def begin(self) -> RunState | Chunk:
        state = self.state
        if self.plan is not None:
            ready = await self.decisions._decided(self.plan)
            if isinstance(ready, Chunk):
                return ready
            state = ready
        assert state is not None
        self.run_id = state.run_id
        self.decisions.renewals.add(state.run_id, self.owner)
        return state

    async def interrupted(self) -> None:
        # Interrupted: free the run for others. A decision whose tool never started
        # goes back to pending (the store knows: no started mark); one whose tool
        # started reads as interrupted; a run whose results are stored may continue.
        assert self.run_id is not None
        if self.gone:
            return  # another process holds the run: its decision is not this holder's to withdraw
        applied = self.applied
        await asyncio.shield(
            self.decisions.store.release(self.run_id, self.owner, reset_call=applied[0] if applied else None)
        )

    def lost(self, message: str) -> AsyncIterator[Chunk]:
        assert self.run_id is not None
        self.gone = True
        self.end()
        d, agent, run_id = self.decisions, self.agent, self.run_id

        async def take_over() -> AsyncIterator[Chunk] | None:
            return await d._orphan(agent, run_id, emit_start=False)

        return follow(d.store, run_id, lease_seconds=d.lease_seconds, message=message, take_over=take_over)

    def end(self) -> None:
        if self.run_id is not None:
            self.decisions.renewals.discard(self.run_id, self.owner)


class _Check:
    """The store's ``decide`` callback for one verdict (``Decisions.check``), keeping the plan it made.

    The store may call it more than once (a transaction retried): the last plan is the one applied."""

    __slots__ = ("agent", "decisions", "followups", "loaded", "owner", "plan", "quorum_met", "verdict")

    def __init__(
        self, decisions: Decisions, agent: HostedAgent, verdict: Verdict, owner: str, followups: tuple[Message, ...]
    ) -> None:
        self.decisions, self.agent, self.verdict, self.owner, self.followups = (
            decisions,
            agent,
            verdict,
            owner,
            followups,
        )
        self.plan: Plan | None = None
        #: set once this approver's vote completed a quorum: the approval then runs the call.
        self.quorum_met = False
        #: the run as read (snapshot text, state), kept across a retried transaction and given back if refused.
        self.loaded: tuple[RunRow, RunState] | None = None

    def __call__(self, call: PendingCallRow, run: RunRow) -> Decision:
        loaded = self.loaded
        read: RunState | None = None
        if loaded is not None and loaded[0].snapshot == run.snapshot:
            read = loaded[1]  # a retried transaction, or the claim after a completed quorum
        elif run.agent_id == self.agent.id:
            read = self.decisions.load(run)
            self.loaded = (run, read)
        decision, self.plan = self.decisions.check(
            self.agent, self.verdict, call, run, self.owner, self.followups, state=read
        )
        self.plan.actor = decision.actor
        # the audit entry names the policy version and rule of the call
        state = self.plan.state
        found = find_call(state, call.tool_call_id) if state is not None else None
        target = found[1] if found else None
        if decision.status == "approved" and call.kind == "approval" and not self.quorum_met:
            # a four-eyes call: this approval is a vote, recorded outside this transaction (VoteNeeded)
            assert state is not None
            needs_vote(state, call, target, decision.actor, self.plan.args)
        decision.detail = policy_detail(decision.detail, target)
        return decision

    def give_back(self) -> None:
        """The decision was refused: the state read (unchanged) goes back for the next decision."""
        if self.loaded is not None:
            run, state = self.loaded
            self.loaded = None
            self.decisions.runs.saved.give_back(run.run_id, run.snapshot, state)


async def _nothing() -> AsyncIterator[Chunk]:
    return
    yield  # pragma: no cover - makes this an async generator


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _swept_message(tool_call_id: str, run_id: str, decided_at: float) -> str:
    return (
        f"the approval of tool call {tool_call_id!r} of run {run_id!r} expired "
        f"at {_iso(decided_at)} (swept); nothing changed"
    )


def _expired_message(tool_call_id: str, run_id: str, expires_at: float | None) -> str:
    return (
        f"the approval of tool call {tool_call_id!r} of run {run_id!r} expired at {_iso(expires_at or 0.0)}; "
        "nothing changed (the sweep will tell the model)"
    )
