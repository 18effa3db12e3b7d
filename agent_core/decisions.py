"""Decisions on waiting tool calls: validate, compare-and-set through the store, then apply.

A decision (approve / decline / resume) is one compare-and-set transaction in
the store that also validates it (kind, fingerprint, resume data, snapshot)
and takes the run's lease; its errors raise from the ``await`` and change
nothing. The returned stream then applies the decision: it moves the call
(``CallState.approve`` / ``decline`` / ``resume``), continues the run
(``agent_core.persist``), and either ends it (snapshot deleted) or stores it
again. Decisions on different calls of one run serialise on the lease, so
none is lost.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any, Literal, cast

from pydantic import BaseModel, ValidationError

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
    InvalidRequest,
    ResumeDataInvalid,
    SnapshotNotFound,
    ToolArgsInvalid,
    ToolCallNotSuspended,
    WardenError,
    WrongDecisionKind,
)
from agent_core.fingerprint import fingerprint as fingerprint_of
from agent_core.json_input import input_model
from agent_core.limits import args_problem
from agent_core.models import Message
from agent_core.persist import Runs
from agent_core.snapshot import find_call
from agent_core.stream import AgentStream
from agent_core.views import SuspendedRunList
from storage.base import Store
from storage.listing import KINDS, SORTS, ListKind, Sort
from storage.records import ClaimResult, Decision, PendingCallRow, RunRow

DecisionKind = Literal["approve", "decline", "resume"]
#: the kinds of waiting call (``PendingCallRow.kind``) each decision applies to (``expire``: the sweep's).
_KINDS: dict[str, tuple[Literal["approval", "suspend", "interrupted"], ...]] = {
    "approve": ("approval", "interrupted"),
    "decline": ("approval", "suspend", "interrupted"),
    "resume": ("suspend",),
    "expire": ("approval",),
}
#: The actor of expiries by ``sweep()``.
SWEEP_ACTOR = "warden-sweep"
#: What the model is told when the operator declines to run an interrupted call again.
INTERRUPTED_DECLINED = (
    "The tool call was interrupted; it may or may not have run. The operator declined to run it again."
)
#: The actor of automatic re-executions (``idempotent=True`` tools) by ``recover()``.
RECOVERY_ACTOR = "warden-recover"
#: Lease owners of decisions recorded by a process that does not host the run's agent (``RemoteAgent``):
#: the process that hosts it adopts the lease and applies the decision (``Decisions.adopt``).
HANDOVER = "handover:"
#: ``request_context`` key of runs whose decisions other processes may record for their host to apply.
HANDOVER_KEY = "warden_handover"


#: ``request_context`` key of a handover run: the definitions of the tools its host may run there,
#: ``{name: {"input_schema": <JSON Schema>, "allow_grants": bool}}``, so any process can validate
#: edited arguments and create grants for them (``declare_tools``, ``handover_tools``).
HANDOVER_TOOLS_KEY = "warden_handover_tools"


class StoredTool:
    """A tool of a handover run's host, as the run declared it: its input schema (to validate edited
    arguments) and whether grants may approve it. It never runs here."""

    resume_schema = None
    idempotent = False

    def __init__(self, name: str, input_schema: Mapping[str, Any], allow_grants: bool = True) -> None:
        self.id = name
        self.input_schema = input_model(name, input_schema)
        self.allow_grants = allow_grants


def declare_tools(tools: Mapping[str, Any]) -> dict[str, Any]:
    """The ``HANDOVER_TOOLS_KEY`` entry for these (hosted) tools, to store with a handover run."""
    return {
        name: {
            "input_schema": tool.input_schema.model_json_schema(),
            "allow_grants": bool(getattr(tool, "allow_grants", True)),
        }
        for name, tool in tools.items()
    }


def handover_tools(snapshot: str) -> dict[str, StoredTool] | None:
    """The tools a run's host declared, when the run asks for handover; None when it does not.

    A malformed declaration counts as no tool (nothing can be validated against it)."""
    try:
        context = json.loads(snapshot).get("request_context", {})
        if not context.get(HANDOVER_KEY):
            return None
        declared = context.get(HANDOVER_TOOLS_KEY) or {}
    except (ValueError, AttributeError):
        return None
    tools: dict[str, StoredTool] = {}
    if isinstance(declared, dict):
        for name, spec in declared.items():
            if isinstance(spec, dict) and isinstance(spec.get("input_schema", {}), dict):
                try:
                    tools[name] = StoredTool(
                        name, spec.get("input_schema") or {}, spec.get("allow_grants", True) is not False
                    )
                except Exception:  # an unusable declaration: this tool cannot be validated here
                    continue
    return tools


class RemoteAgent:
    """An agent this process does not host, whose runs ask for handover (``HANDOVER_KEY``), e.g. the
    MCP proxy's: a decision is recorded here (compare-and-set, audit) and applied by its host.

    ``tools``: those the run declared (``handover_tools``), so edited arguments are validated here."""

    remote = True
    delegates: Mapping[str, Any] = {}

    def __init__(self, agent_id: str, tools: Mapping[str, Any] | None = None) -> None:
        self.id = agent_id
        self.tools: Mapping[str, Any] = dict(tools or {})

    @classmethod
    def of_run(cls, run: RunRow) -> RemoteAgent | None:
        """The stand-in for a run's agent when the run asks for handover, else None."""
        tools = handover_tools(run.snapshot)
        return None if tools is None else cls(run.agent_id, tools)

    def descendant(self, agent_path: Any) -> RemoteAgent | None:
        return self if list(agent_path or []) == [self.id] else None


class Decisions:
    """Takes and applies decisions on the runs of one store."""

    def __init__(self, runs: Runs, *, lease_seconds: float, actor: str | None) -> None:
        self.runs = runs
        self.store: Store = runs.store
        self.lease_seconds = lease_seconds
        self.actor = actor

    async def decide(
        self,
        agent: HostedAgent,
        kind: DecisionKind | Literal["expire"],
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        reason: str | None = None,
        resume_data: Any = None,
        followups: list[Message] | None = None,
        actor: str | None = None,
        args: dict[str, Any] | None = None,
    ) -> AgentStream:
        """Record a decision atomically, then return the stream that applies it.

        ``followups``: user messages (auto-resume) that join the conversation
        after the tool results of the step being decided. On a call of kind
        ``interrupted`` (its tool started, no result was stored), ``approve``
        runs the tool again (audited ``re-executed``) and ``decline`` tells the
        model the outcome is unknown. ``args`` (approve): edited arguments, validated
        against the tool's ``input_schema`` first (``ToolArgsInvalid``). An approval
        whose deadline passed raises ``ApprovalExpired``; ``expire`` is the sweep's.
        """
        owner = (HANDOVER if getattr(agent, "remote", False) else "") + uuid.uuid4().hex
        captured: dict[str, Any] = {"apply": kind}
        actor = actor if actor is not None else self.actor

        def check(call: PendingCallRow, run: RunRow) -> Decision:
            if run.agent_id != agent.id:
                raise SnapshotNotFound(
                    f"run {run_id!r} in {self.store.name} belongs to agent {run.agent_id!r}, not {agent.id!r}"
                )
            state = RunState.from_json(run.snapshot, run_id=run_id, store=self.store.name)
            if find_call(state, call.tool_call_id) is None:
                raise CorruptSnapshot(
                    f"snapshot of run {run_id!r} in {self.store.name} has no tool call {call.tool_call_id!r}"
                )
            overdue = call.kind == "approval" and call.expires_at is not None and call.expires_at < time.time()
            if kind == "expire":
                if not overdue:
                    raise ToolCallNotSuspended(f"tool call {call.tool_call_id!r} of run {run_id!r} is not overdue")
                captured["state"] = state
                return Decision("expired", reason=EXPIRED_MESSAGE, actor=actor or SWEEP_ACTOR)
            if overdue:
                raise ApprovalExpired(_expired_message(call.tool_call_id, run_id, call.expires_at))
            if kind == "approve":
                if call.kind not in ("approval", "interrupted"):
                    raise WrongDecisionKind(
                        f"tool call {call.tool_call_id!r} of run {run_id!r} waits for resume "
                        "data, not approval: use resume_stream"
                    )
                if fingerprint is not None and fingerprint != call.fingerprint:
                    raise FingerprintMismatch(
                        f"fingerprint {fingerprint!r} does not match tool call {call.tool_call_id!r} of run "
                        f"{run_id!r} ({call.fingerprint}); nothing was executed"
                    )
                if call.kind == "interrupted" and call.resume_data is not None:
                    # an interrupted resume runs again with the resume data it was given
                    captured["apply"], captured["resume_data"] = "resume", call.resume_data
                    decision = Decision("resuming", actor=actor, resume_data=call.resume_data)
                else:
                    edited = self._validate_args(agent, call, args, run_id) if args is not None else None
                    if edited is None and call.kind == "interrupted":
                        edited = call.edited_args  # re-executed with the arguments it was approved with
                    captured["args"] = edited
                    detail = None
                    if edited is not None:
                        detail = {
                            "args": call.args,
                            "edited_args": edited,
                            "fingerprint": call.fingerprint,
                            "edited_fingerprint": fingerprint_of(call.tool_name, edited),
                        }
                    decision = Decision("approved", actor=actor, edited_args=edited, detail=detail)
            elif kind == "decline":
                if call.kind == "interrupted":
                    captured["reason"] = INTERRUPTED_DECLINED + (f" Reason: {reason}" if reason else "")
                decision = Decision("declined", reason=reason, actor=actor)
            else:
                if call.kind != "suspend":
                    raise WrongDecisionKind(
                        f"tool call {call.tool_call_id!r} of run {run_id!r} waits for "
                        "approval, not resume data: use approve_tool_call"
                    )
                captured["resume_data"] = self._validate_resume(agent, call, resume_data, run_id)
                decision = Decision("resuming", actor=actor, resume_data=captured["resume_data"])
            captured["state"] = state
            return decision

        claim = await self.store.claim(
            run_id, tool_call_id, kinds=_KINDS[kind], decide=check, owner=owner, lease_seconds=self.lease_seconds
        )
        if claim.outcome != "ok" and tool_call_id is not None and (claim.audited or claim.outcome == "no_run"):
            # an expired call stays expired after the run moved on: that wins over "already decided"
            for entry in await self.store.audit_log(run_id, tool_call_id):
                if entry.decision == "expired":
                    raise ApprovalExpired(
                        f"the approval of tool call {tool_call_id!r} of run {run_id!r} expired "
                        f"at {_iso(entry.decided_at)} (swept); nothing changed"
                    )
        self._raise_for(claim, run_id, tool_call_id, kind)
        assert claim.call is not None
        state: RunState | None = captured["state"] if claim.run is not None else None
        call_id = claim.call.tool_call_id
        if owner.startswith(HANDOVER):  # recorded only: the process hosting the agent applies it
            return AgentStream(run_id, _nothing())

        async def abandon() -> None:  # cancelled before it began: the decision goes back to pending
            await self.store.release(run_id, owner, reset_call=call_id)

        return AgentStream(
            run_id,
            self._apply(
                agent,
                captured["apply"],
                claim.call,
                state,
                owner,
                captured.get("reason", reason),
                captured.get("resume_data"),
                followups or [],
                captured.get("args"),
            ),
            on_abandon=abandon,
        )

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
            errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
            detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errors)
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
            errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
            detail = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errors)
            raise ResumeDataInvalid(
                f"resume data for tool {call.tool_name!r} (call {call.tool_call_id!r}, run {run_id!r}) fails its "
                f"resume_schema: {detail}; the run is unchanged",
                errors=errors,
            ) from exc

    async def _apply(
        self,
        agent: HostedAgent,
        kind: str,
        call: PendingCallRow,
        claimed: RunState | None,
        owner: str,
        reason: str | None,
        resume_data: Any,
        followups: list[Message],
        args: dict[str, Any] | None = None,
    ) -> AsyncIterator[Chunk]:
        run_id = call.run_id
        try:
            if claimed is None:  # another holder is applying a decision on this run: wait for it
                waited = await self._wait_for_lease(run_id, owner, call.tool_call_id)
                if isinstance(waited, Chunk):
                    yield waited
                    return
                state = waited
            else:
                state = claimed
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
                yield make_chunk("error", run_id, code=problem[0], error=problem[1])
                return
            assert found is not None
            _, target = found
            if kind == "approve":
                target.approve(args)
            elif kind == "expire":
                target.expire(time.time())
            elif kind == "decline":
                target.decline(reason)
            else:
                target.resume(resume_data)
            state.followups.extend(followups)
        except (asyncio.CancelledError, GeneratorExit):
            await asyncio.shield(self.store.release(run_id, owner, reset_call=call.tool_call_id))
            raise
        async for chunk in self._leased(agent, state, owner, [call.tool_call_id]):
            yield chunk

    async def _leased(
        self, agent: HostedAgent, state: RunState, owner: str, applied: list[str]
    ) -> AsyncIterator[Chunk]:
        """Advance a run while holding (and renewing) its lease."""
        run_id = state.run_id
        heartbeat = asyncio.get_running_loop().create_task(self._keep_lease(run_id, owner))
        try:
            async for chunk in self.runs.advance(agent, state, owner=owner, applied=applied):
                yield chunk
        except (asyncio.CancelledError, GeneratorExit):
            # Interrupted: free the run for others. A decision whose tool never started
            # goes back to pending (the store knows: no started mark); one whose tool
            # started reads as interrupted; a run whose results are stored may continue.
            await asyncio.shield(self.store.release(run_id, owner, reset_call=applied[0] if applied else None))
            raise
        finally:
            heartbeat.cancel()

    async def recover(self, agents: Mapping[str, HostedAgent]) -> int:
        """Advance the runs left behind under an expired lease; how many were advanced.

        Durable returned-to-pending (audited), automatic re-execution of
        interrupted calls of ``idempotent=True`` tools, and the continuation of
        runs whose calls all have stored results (the model is called again).
        Runs of agents not in ``agents`` are left alone.
        """
        advanced = 0
        for run in await self.store.list_expired(limit=1000):
            agent = agents.get(run.agent_id)
            if agent is None:
                continue
            await self.store.settle(run.run_id)
            listed = await self.store.get_suspended(run.run_id)
            if listed is not None:
                for call in listed.calls:
                    if call.kind == "interrupted" and _idempotent(agent, call):
                        try:
                            stream = await self.decide(
                                agent,
                                "approve",
                                run_id=run.run_id,
                                tool_call_id=call.tool_call_id,
                                actor=RECOVERY_ACTOR,
                            )
                        except WardenError:
                            continue
                        await stream.wait()
                        advanced += 1
                continue
            calls = await self.store.get_calls(run.run_id)
            expiry = next((c for c in calls if c.status == "expired" and c.started_at is None), None)
            if expiry is not None:  # an expiry recorded, never applied (its process died): apply it here
                adopted = await self.adopt(agent, run.run_id, expiry.tool_call_id)
                if adopted is not None:
                    await adopted.wait()
                    advanced += 1
                continue
            if calls:
                continue  # a decision waits to be applied by a live process
            owner = uuid.uuid4().hex
            row = await self.store.acquire_lease(run.run_id, owner, self.lease_seconds)
            if row is None:
                continue
            try:
                state = RunState.from_json(row.snapshot, run_id=run.run_id, store=self.store.name)
            except CorruptSnapshot:
                await self.store.release(run.run_id, owner)
                continue
            await AgentStream(run.run_id, self._leased(agent, state, owner, [])).wait()
            advanced += 1
        return advanced

    async def sweep(self, agents: Mapping[str, HostedAgent]) -> int:
        """Expire the overdue approvals of these agents' runs and continue those runs; how many expired.

        Fail-closed: the tool never runs; the model is told ``EXPIRED_MESSAGE``;
        the stream carries a ``tool-call-expired`` chunk. A call decided meanwhile is left alone.
        Overdue calls of runs that ask for handover (an MCP proxy's) are expired too, whoever hosts them:
        the expiry is recorded here (compare-and-set, audited once) and applied by the host (``adopt``).
        """
        expired = 0
        for call in await self.store.list_overdue(time.time(), limit=1000):
            run = await self.store.get_run(call.run_id)
            if run is None:
                continue
            agent = agents.get(run.agent_id)
            if agent is None:  # hosted elsewhere: recorded here (once), its host applies it (``adopt``)
                agent = cast(HostedAgent | None, RemoteAgent.of_run(run))
            if agent is None:
                continue
            try:
                stream = await self.decide(agent, "expire", run_id=call.run_id, tool_call_id=call.tool_call_id)
            except WardenError:
                continue
            await stream.wait()
            expired += 1
        return expired

    async def _keep_lease(self, run_id: str, owner: str) -> None:
        """Renew the lease while a decision is applied, so a long tool never loses its run."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                if not await self.store.renew_lease(run_id, owner, self.lease_seconds):
                    return
            except WardenError:
                return

    async def _wait_for_lease(self, run_id: str, owner: str, call_id: str) -> RunState | Chunk:
        delay = 0.002
        while True:
            row = await self.store.acquire_lease(run_id, owner, self.lease_seconds, waiting_call=call_id)
            if row is not None:
                try:
                    return RunState.from_json(row.snapshot, run_id=run_id, store=self.store.name)
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
            owner = uuid.uuid4().hex
            row = await self.store.acquire_lease(run_id, owner, self.lease_seconds, waiting_call=tool_call_id)
            if row is None:
                return None
            snapshot = row.snapshot
        try:
            state = RunState.from_json(snapshot, run_id=run_id, store=self.store.name)
        except CorruptSnapshot:
            await self.store.release(run_id, owner)
            raise
        kinds: dict[str, str] = {
            "approved": "approve",
            "declined": "decline",
            "resuming": "resume",
            "expired": "expire",
        }
        kind = kinds[call.status]
        reason = None
        if kind == "decline":
            audit = [a for a in await self.store.audit_log(run_id, tool_call_id) if a.decision == "declined"]
            reason = audit[-1].reason if audit else None
        edited = call.edited_args if kind == "approve" else None  # an approval with edited arguments
        return AgentStream(run_id, self._apply(agent, kind, call, state, owner, reason, call.resume_data, [], edited))

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
                    raise ApprovalExpired(
                        f"the approval of tool call {tool_call_id!r} of run {run_id!r} expired "
                        f"at {_iso(entry.decided_at)} (swept); nothing changed"
                    )
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
        if not approved:
            return await self.decide(
                agent, "decline", run_id=run_id, tool_call_id=tool_call_id, reason=reason, actor=actor
            )
        if kind == "suspend" or (kind is None and resume_data is not None):
            return await self.decide(
                agent,
                "resume",
                run_id=run_id,
                tool_call_id=tool_call_id,
                resume_data=resume_data if resume_data is not None else {},
                actor=actor,
            )
        return await self.decide(agent, "approve", run_id=run_id, tool_call_id=tool_call_id, actor=actor)


async def _nothing() -> AsyncIterator[Chunk]:
    return
    yield  # pragma: no cover - makes this an async generator


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


def _expired_message(tool_call_id: str, run_id: str, expires_at: float | None) -> str:
    return (
        f"the approval of tool call {tool_call_id!r} of run {run_id!r} expired at {_iso(expires_at or 0.0)}; "
        "nothing changed (the sweep will tell the model)"
    )


def _idempotent(agent: HostedAgent, call: PendingCallRow) -> bool:
    owner = agent.descendant(call.agent_path)
    tool = owner.tools.get(call.tool_name) if owner is not None else None
    return bool(getattr(tool, "idempotent", False))


async def list_suspended(
    store: Store,
    *,
    agent_id: str | None = None,
    thread_id: str | None = None,
    resource_id: str | None = None,
    page: int = 0,
    per_page: int = 50,
    query: str | None = None,
    tool_name: str | None = None,
    kind: ListKind | None = None,
    sort: Sort = "age",
    with_counts: bool = False,
) -> SuspendedRunList:
    """One page of the store's pending runs, as views, filtered and ordered by the store's query
    (``query`` terms over agent, thread, tool and arguments; exact ``tool_name`` and ``kind``);
    ``with_counts`` adds the pending calls per kind under the same filters."""
    if page < 0 or per_page < 1:
        raise ValueError("page must be >= 0 and per_page >= 1")
    if sort not in SORTS:
        raise InvalidRequest(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    if kind is not None and kind not in KINDS:
        raise InvalidRequest(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    filters: dict[str, Any] = {
        "agent_id": agent_id,
        "thread_id": thread_id,
        "resource_id": resource_id,
        "query": query or None,
        "tool_name": tool_name,
    }
    rows, total = await store.list_suspended(**filters, kind=kind, sort=sort, page=page, per_page=per_page)
    counts = await store.count_suspended_by_kind(**filters) if with_counts else None
    return SuspendedRunList.from_rows(rows, total=total, page=page, per_page=per_page, counts=counts)
