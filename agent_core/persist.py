"""Persisting an advanced run: store it suspended, finish it, or fail it, and save its memory.

``Runs.advance`` drives a run (``agent_core.engine``) and then records the
outcome in the store. "Snapshot first": a suspended run is durable *before*
the ``tool-call-approval`` / ``tool-call-suspended`` chunks are yielded.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any, Protocol

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agent_core.call_state import CallState, RunState
from agent_core.chunks import Chunk, make_chunk
from agent_core.definition import AgentDefinition, DelegateInput, HostedAgent, PolicyFn
from agent_core.engine import Execution, drive, drive_into
from agent_core.errors import LeaseLost, WardenError
from agent_core.fingerprint import fingerprint
from agent_core.limits import scrub
from agent_core.notify import PendingCallback, PendingNotice, notify
from agent_core.policy import Policy
from agent_core.policy_commands import command_grant_covers
from agent_core.policy_gate import policy_detail
from agent_core.quorum import approval_chunk, suspended_chunk
from agent_core.saved_states import SavedStates
from agent_core.snapshot import pending_leaves, used_ids
from agent_core.stream import live_sink
from agent_core.structured import parse_output
from agent_core.telemetry import start_run
from storage.base import Store
from storage.errors import LeaseNotHeld
from storage.records import AuditRow, GrantRow, PendingCallRow, RunRow


class Held(Protocol):
    """The lease a decision holds while its run advances (``agent_core.decisions``), run by ``Runs.advance``
    itself rather than by a generator around it."""

    async def begin(self) -> RunState | Chunk:
        """The run to advance (its decision applied, the lease renewed from now on), or the error chunk
        of a decision that cannot be applied (nothing is held then)."""

    async def interrupted(self) -> None:
        """The advance was cancelled or closed after ``begin``: free the run for others."""

    def lost(self, message: str) -> AsyncIterator[Chunk]:
        """The chunks that end the stream once the lease was lost (``agent_core.lost_lease``): the run's
        outcome as the store tells it; ``message`` if it cannot be known."""

    def end(self) -> None:
        """The advance is over (however it ended): stop renewing the lease."""


class Runs:
    """Advances runs against one store; holds the in-process policy functions of live runs."""

    def __init__(self, store: Store) -> None:
        self.store = store
        #: run id -> the request's ``require_tool_approval`` function (cannot be stored).
        self.policies: dict[str, PolicyFn] = {}
        #: run id -> the pydantic model passed as ``output_schema=`` in this process (else the stored JSON Schema).
        self.output_models: dict[str, type[BaseModel]] = {}
        #: ``Runtime(on_pending=...)``: told (in the background) when a call starts waiting.
        self.pending_listeners: list[PendingCallback] = []
        #: ``Runtime(shadow_policy=...)``: evaluated beside the enforced policies, audited where it differs.
        self.shadow_policy: Policy | None = None
        #: the states of runs this process suspended, for a decision taken here (``agent_core.saved_states``).
        self.saved = SavedStates()

    async def advance(
        self,
        agent: HostedAgent,
        state: RunState | None,
        *,
        owner: str | None,
        applied: list[str],
        emit_start: bool = True,
        lease: Held | None = None,
    ) -> AsyncIterator[Chunk]:
        """Drive ``state`` as far as it goes, then store it (suspended), or end it (finished / failed).

        ``owner``: the lease holder applying a decision (None for a new run);
        ``applied``: the tool-call ids whose decisions this advance applied;
        ``lease``: the held lease of a decision (``Held``): its state comes from ``lease.begin()`` (``state``
        is then ignored). Kept inside this one generator: a wrapping generator would cost every chunk a hop.
        """
        if lease is not None:
            ready = await lease.begin()
            if isinstance(ready, Chunk):
                yield ready
                return
            state = ready
        assert state is not None
        try:
            run_id = state.run_id
            began = time.time()
            ids = used_ids(state)
            if state.thread_id:
                # ids a new call may not take (a thread's pending calls have distinct ids): one indexed query
                ids |= await self.store.thread_call_ids(state.thread_id)
            rt = Execution(
                request_policy=self.policies.get(run_id),
                ids=ids,
                top=state,
                grant_for=self.grant_for,
                audit=self.audit_policy,
                shadow_policy=self.shadow_policy,
                trace=start_run(agent.id, state),
            )
            if owner is not None:
                self._guard(rt, state, owner, applied)
            if emit_start:
                yield make_chunk("start", run_id, agent_id=agent.id)
            if owner is not None:
                # A resumed stream repeats the calls of the step it resolves, so each
                # tool-result it carries follows its tool-call (clients such as
                # @mastra/client-js expect that); consumers dedupe by tool_call_id.
                for call in state.calls:
                    if call.status != "done":
                        yield make_chunk("tool-call", run_id, tool_call_id=call.id, tool_name=call.name, args=call.args)
            failure: WardenError | None = None
            state.outcome = "running"
            try:
                # An agent hosted from another framework (``agent_core.adapters``) drives its own run.
                own_drive = getattr(agent, "drive", None)
                sink = live_sink.get()
                if own_drive is None and sink is not None and sink[0] == run_id:
                    # read by the run's stream (in its task): the engine pushes each chunk into it directly
                    await drive_into(agent, state, rt, sink[1])
                else:
                    async for chunk in own_drive(state, rt) if own_drive is not None else drive(agent, state, rt):
                        yield chunk
            except WardenError as exc:
                failure = exc
            except Exception as exc:  # a bug in user code outside a tool: still end cleanly
                failure = WardenError(f"{type(exc).__name__}: {exc}", code="AGENT_RUN_FAILED")
            finally:
                if rt.trace is not None:
                    rt.trace.end(state, None if failure is None else failure.message)
            structured: Any = None
            if failure is None and state.output_schema is not None and state.outcome == "finished":
                if state.finish_reason == "stop":
                    last = state.messages[-1] if state.messages else None
                    text = last.content if last is not None and last.role == "assistant" else ""
                    try:
                        structured = to_jsonable_python(
                            parse_output(text, state.output_schema, self.output_models.get(run_id))
                        )
                    except WardenError as exc:
                        failure = exc
            if failure is None:
                try:
                    await self.save_memory(agent, state)
                except WardenError as exc:
                    failure = exc
            if failure is not None:
                message, code = scrub(failure.message), failure.code
                state.outcome, state.error = "failed", message
                self.policies.pop(run_id, None)
                self.output_models.pop(run_id, None)
                if isinstance(failure, LeaseLost):
                    lost = message
                elif owner is not None and not await self.store.fail_run(run_id, owner, state.to_json(), message):
                    lost = _lost(run_id)
                else:
                    yield make_chunk("error", run_id, error=message, code=code)
                    return
            elif state.outcome == "suspended":
                saved = await self._save_suspended(agent, state, owner=owner, applied=applied, began=began)
                if saved is not None:
                    for chunk in saved:
                        yield chunk
                    return
                lost = _lost(run_id)
            else:
                self.policies.pop(run_id, None)
                self.output_models.pop(run_id, None)
                if owner is None or await self.store.finish_run(run_id, owner):
                    yield make_chunk(
                        "finish",
                        run_id,
                        finish_reason=state.finish_reason or "stop",
                        usage=state.usage,
                        object=structured,
                    )
                    return
                lost = _lost(run_id)
            # The lease was lost (this process stalled past it; another took the run over): the stream ends
            # with what happened to the run, not with a failure that did not happen (``agent_core.lost_lease``).
            if lease is None:
                yield make_chunk("error", run_id, error=lost, code=LeaseLost.code)
                return
            async for chunk in lease.lost(lost):
                yield chunk
        except (asyncio.CancelledError, GeneratorExit):
            if lease is not None:
                await lease.interrupted()
            raise
        finally:
            if lease is not None:
                lease.end()

    def _guard(self, rt: Execution, state: RunState, owner: str, applied: list[str]) -> None:
        """Crash recovery while ``owner`` holds the lease: the started mark and the step checkpoint."""
        run_id = state.run_id
        unmarked = set(applied)

        async def before_start(call: CallState) -> None:
            if call.id in unmarked:
                unmarked.discard(call.id)
                if not await self.store.mark_started(run_id, call.id, owner):
                    raise LeaseLost(_lost(run_id) + "; the tool was not run")

        async def step_done() -> None:
            if not await self.store.checkpoint(run_id, owner, state.to_json(), applied):
                raise LeaseLost(_lost(run_id))

        rt.before_start, rt.step_done = before_start, step_done

    async def _save_suspended(
        self, agent: HostedAgent, state: RunState, *, owner: str | None, applied: list[str], began: float = 0.0
    ) -> list[Chunk] | None:
        """Store the suspended run and its waiting calls; the chunks that announce them (or an error);
        None when ``owner`` lost the run's lease (nothing was stored)."""
        run_id = state.run_id
        leaves = pending_leaves(state)
        now = time.time()
        text = state.to_json_plain()
        rows = [
            PendingCallRow(
                run_id=run_id,
                tool_call_id=leaf.call.id,
                tool_name=leaf.call.name,
                kind=leaf.kind,
                args=leaf.call.args,
                fingerprint=leaf.call.fingerprint or fingerprint(leaf.call.name, leaf.call.args),
                suspend_payload=leaf.call.suspend_payload,
                resume_schema=resume_schema(agent, leaf.agent_path, leaf.call.name),
                agent_path=leaf.agent_path,
                seq=leaf.call.seq,
                created_at=leaf.call.pending_since or now,
                expires_at=leaf.call.expires_at if leaf.kind == "approval" else None,
                approvers_required=leaf.call.approvers_required,
                policy_rule=leaf.call.policy_rule,
                requested_by=state.requested_by,
            )
            for leaf in leaves
        ]
        record = RunRow(
            run_id=run_id,
            agent_id=state.agent_id,
            thread_id=state.thread_id,
            resource_id=state.resource_id,
            status="suspended",
            snapshot=text if text is not None else state.to_json(),
            created_at=state.created_at,
            suspended_at=now,
        )
        try:
            await self.store.save_suspended(record, rows, owner=owner, applied=applied)
        except LeaseNotHeld:
            return None
        except WardenError as exc:
            return [make_chunk("error", run_id, error=exc.message, code=exc.code)]
        if text is not None:  # stored as pydantic wrote it: a decision here may reuse the state
            self.saved.put(run_id, text, state)
        # calls that started waiting in this advance (siblings still pending from before were announced then)
        if self.pending_listeners:  # notices are built only for someone to tell
            notify(self.pending_listeners, [PendingNotice.from_rows(record, r) for r in rows if r.created_at >= began])
        announced: list[Chunk] = []
        for leaf, row in zip(leaves, rows, strict=True):
            announced.append(
                approval_chunk(run_id, row, leaf.call) if leaf.kind == "approval" else suspended_chunk(run_id, row)
            )
        return announced

    async def grant_for(self, agent: AgentDefinition, state: RunState, call: CallState) -> str | None:
        """The id of a live grant that covers this gated call (audited as its approval), or None."""
        now = time.time()
        grants = await self.store.list_grants(now, tool_name=call.name)
        if not grants:
            return None
        validated: dict[str, Any] | None = None
        for g in grants:
            if not _in_scope(g, agent.id, state):
                continue
            if g.args_match or g.command_match:
                if validated is None:
                    validated = _validated_args(agent, call)
                if g.args_match and any(
                    k not in validated or not _json_equal(validated[k], v) for k, v in g.args_match.items()
                ):
                    continue
                if g.command_match and not command_grant_covers(g.command_match, validated):
                    continue
            await self.audit_policy(state, call, "granted", f"grant {g.id}", {"grant_id": g.id}, actor=g.created_by)
            return g.id
        return None

    async def audit_policy(
        self,
        state: RunState,
        call: CallState,
        decision: str,
        reason: str | None,
        detail: dict[str, Any] | None,
        *,
        actor: str | None = None,
    ) -> None:
        """An audit entry for what no operator decided (``granted``; a policy's ``blocked``,
        ``policy-error``, ``policy-shadow``), naming the call's policy version and rule."""
        await self.store.append_audit(
            AuditRow(
                run_id=state.run_id,
                tool_call_id=call.id,
                agent_id=state.agent_id,
                tool_name=call.name,
                decision=decision,
                fingerprint=fingerprint(call.name, call.args),
                reason=reason,
                decided_at=time.time(),
                actor=actor,
                detail=policy_detail(detail, call),
            )
        )

    async def save_memory(self, agent: HostedAgent, state: RunState) -> None:
        if agent.memory is None or not state.thread_id:
            return
        fresh = state.messages[state.memory_saved :]
        if fresh:
            dumped = [m.model_dump(mode="json", exclude_defaults=True) for m in fresh]
            text = json.dumps(dumped, ensure_ascii=False)
            if scrub(text) != text:  # model text with lone surrogates: stored escaped
                dumped = json.loads(scrub(text, json_text=True))
            await self.store.append_messages(state.thread_id, state.resource_id, dumped)
            state.memory_saved = len(state.messages)


def _in_scope(grant: GrantRow, agent_id: str, state: RunState) -> bool:
    if grant.scope == "run":
        return grant.scope_id == state.run_id
    if grant.scope == "thread":
        return state.thread_id is not None and grant.scope_id == state.thread_id
    if grant.scope == "resource":
        return state.resource_id is not None and grant.scope_id == state.resource_id
    return grant.scope == "agent" and grant.agent_id == agent_id


def _json_equal(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _validated_args(agent: AgentDefinition, call: CallState) -> dict[str, Any]:
    """The call's arguments as ``execute`` receives them, dumped to JSON (what ``args_match`` compares)."""
    schema = DelegateInput if call.name in agent.delegates else agent.tools[call.name].input_schema
    dumped: dict[str, Any] = schema.model_validate(call.args).model_dump(mode="json")
    return dumped


def _lost(run_id: str) -> str:
    return (
        f"lost the lease on run {run_id!r} (this process stalled past lease_seconds and another "
        "took the run over); nothing more was stored"
    )


def resume_schema(top: HostedAgent, agent_path: list[str], tool_name: str) -> dict[str, Any] | None:
    """The JSON Schema of the resume data of ``tool_name`` in the agent at ``agent_path``."""
    owner = top.descendant(agent_path)
    tool = owner.tools.get(tool_name) if owner is not None else None
    return tool.resume_json_schema() if tool is not None else None
