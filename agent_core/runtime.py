"""The runtime: agents plus the store their pending runs live in, and the decision protocol.

A decision (approve / decline / resume) is one compare-and-set transaction in
the store that also validates it (kind, fingerprint, resume data, snapshot)
and takes the run's lease; its errors raise from the ``await`` and change
nothing. The returned stream then applies the decision: it runs the tool,
continues the run, and either ends it (snapshot deleted) or stores it again.
Decisions on different calls of one run serialise on the lease, so none is lost.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from agent_core.chunks import Chunk, make_chunk
from agent_core.engine import RunContext, ToolCallInfo, drive
from agent_core.errors import (
    AgentNotFound,
    AlreadyDecided,
    AmbiguousToolCall,
    CorruptSnapshot,
    FingerprintMismatch,
    InvalidRequest,
    ResumeDataInvalid,
    SnapshotNotFound,
    ToolCallNotSuspended,
    WardenError,
    WrongDecisionKind,
)
from agent_core.models import Message
from agent_core.snapshot import RunState, find_call, pending_leaves, used_ids
from agent_core.stream import AgentStream
from agent_core.views import SuspendedRun, SuspendedRunList
from storage.base import Store
from storage.memory import InMemoryStore
from storage.records import ClaimResult, Decision, PendingCallRow, RunRow, SuspendedRunRow

if TYPE_CHECKING:
    from agent_core.agent import Agent

DecisionKind = Literal["approve", "decline", "resume"]
_KINDS: dict[str, tuple[Literal["approval", "suspend"], ...]] = {
    "approve": ("approval",),
    "decline": ("approval", "suspend"),
    "resume": ("suspend",),
}


class Runtime:
    """Agents and their store. ``async with Runtime(...)`` closes the store at the end."""

    def __init__(
        self,
        agents: dict[str, Agent] | None = None,
        storage: Store | None = None,
        *,
        lease_seconds: float = 600.0,
        actor: str | None = None,
    ) -> None:
        self.store: Store = storage if storage is not None else InMemoryStore()
        self.agents: dict[str, Agent] = dict(agents or {})
        self.lease_seconds = lease_seconds
        self.actor = actor
        self._policies: dict[str, Callable[[ToolCallInfo], Any]] = {}
        self._by_id: dict[str, Agent] = {}
        for key, agent in self.agents.items():
            agent._attach(self)
            self._by_id[agent.id] = agent
            self._by_id.setdefault(key, agent)

    @property
    def storage(self) -> Store:
        return self.store

    async def __aenter__(self) -> Runtime:
        setup = getattr(self.store, "setup", None)
        if setup is not None:
            await setup()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.store.aclose()

    def get_agent(self, agent_id: str) -> Agent:
        """An agent by its registry key or its id."""
        agent = self._by_id.get(agent_id)
        if agent is None:
            known = ", ".join(sorted(self.agents)) or "none"
            raise AgentNotFound(f"no agent {agent_id!r} in this runtime (agents: {known})")
        return agent

    # -- starting runs ------------------------------------------------------------------
    async def start(
        self,
        agent: Agent,
        messages: str | list[Any],
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        require_tool_approval: Any = None,
        max_steps: int | None = None,
        request_context: dict[str, Any] | None = None,
        auto_resume_suspended_tools: bool | None = None,
    ) -> AgentStream:
        new_messages = _as_messages(messages)
        opts = agent.default_options
        policy_arg = require_tool_approval if require_tool_approval is not None else None
        if policy_arg is None:
            default = opts.get("require_tool_approval")
            mode = "all" if default is True else "agent_default" if callable(default) else "none"
        elif callable(policy_arg):
            mode = "request_fn"
        else:
            mode = "all" if policy_arg else "none"
        try:
            context = to_jsonable_python(dict(request_context or {}))
        except (TypeError, ValueError) as exc:
            raise InvalidRequest(
                f"request_context must be JSON-serialisable (it is stored with the run): {exc}"
            ) from exc
        run_id = str(uuid.uuid4())
        if callable(policy_arg):
            self._policies[run_id] = policy_arg
        state = RunState(
            run_id=run_id,
            agent_id=agent.id,
            agent_path=[agent.id],
            thread_id=thread_id,
            resource_id=resource_id,
            max_steps=max_steps or opts.get("max_steps", 10),
            policy=mode,
            request_context=context,
            created_at=time.time(),
        )
        auto = (
            auto_resume_suspended_tools
            if auto_resume_suspended_tools is not None
            else opts.get("auto_resume_suspended_tools", False)
        )
        history: list[Message] = []
        if agent.memory is not None and thread_id:
            raw = await self.store.load_messages(thread_id, limit=agent.memory.last_messages)
            history = agent.memory.clean_history([Message.model_validate(m) for m in raw])
            if auto:
                from agent_core.autoresume import auto_resume

                resumed = await auto_resume(
                    self,
                    agent,
                    thread_id=thread_id,
                    resource_id=resource_id,
                    history=history,
                    new_messages=new_messages,
                )
                if resumed is not None:
                    self._policies.pop(run_id, None)
                    return resumed
        state.messages = [*history, *new_messages]
        state.memory_saved = len(history)
        return AgentStream(run_id, self._advance(agent, state, owner=None, applied=[]))

    # -- advancing and persisting ---------------------------------------------------------
    async def _advance(
        self, agent: Agent, state: RunState, *, owner: str | None, applied: list[str], emit_start: bool = True
    ) -> AsyncIterator[Chunk]:
        run_id = state.run_id
        rt = RunContext(request_policy=self._policies.get(run_id), ids=used_ids(state), top=state)
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
            async for chunk in drive(agent, state, rt):
                yield chunk
        except WardenError as exc:
            failure = exc
        except Exception as exc:  # a bug in user code outside a tool: still end cleanly
            failure = WardenError(f"{type(exc).__name__}: {exc}", code="AGENT_RUN_FAILED")
        if failure is not None:
            state.outcome, state.error = "failed", failure.message
            self._policies.pop(run_id, None)
            if owner is not None:
                await self.store.fail_run(run_id, owner, state.to_json(), failure.message)
            yield make_chunk("error", run_id, error=failure.message, code=failure.code)
            return
        await self._save_memory(agent, state)
        if state.outcome == "suspended":
            leaves = pending_leaves(state)
            now = time.time()
            rows = [
                PendingCallRow(
                    run_id=run_id,
                    tool_call_id=leaf.call.id,
                    tool_name=leaf.call.name,
                    kind=leaf.kind,
                    args=leaf.call.args,
                    fingerprint=leaf.call.fingerprint or _fp(leaf.call.name, leaf.call.args),
                    suspend_payload=leaf.call.suspend_payload,
                    resume_schema=self._resume_schema(agent, leaf.agent_path, leaf.call.name),
                    agent_path=leaf.agent_path,
                    seq=leaf.call.seq,
                    created_at=leaf.call.pending_since or now,
                )
                for leaf in leaves
            ]
            record = RunRow(
                run_id=run_id,
                agent_id=state.agent_id,
                thread_id=state.thread_id,
                resource_id=state.resource_id,
                status="suspended",
                snapshot=state.to_json(),
                created_at=state.created_at,
                suspended_at=now,
            )
            try:
                await self.store.save_suspended(record, rows, owner=owner, applied=applied)
            except WardenError as exc:
                yield make_chunk("error", run_id, error=exc.message, code=exc.code)
                return
            for leaf, row in zip(leaves, rows, strict=True):
                if leaf.kind == "approval":
                    yield make_chunk(
                        "tool-call-approval",
                        run_id,
                        tool_call_id=row.tool_call_id,
                        tool_name=row.tool_name,
                        args=row.args,
                        fingerprint=row.fingerprint,
                        resume_schema=row.resume_schema,
                        agent_path=row.agent_path,
                    )
                else:
                    yield make_chunk(
                        "tool-call-suspended",
                        run_id,
                        tool_call_id=row.tool_call_id,
                        tool_name=row.tool_name,
                        args=row.args,
                        suspend_payload=row.suspend_payload,
                        resume_schema=row.resume_schema,
                        agent_path=row.agent_path,
                    )
            return
        self._policies.pop(run_id, None)
        if owner is not None:
            await self.store.finish_run(run_id, owner)
        yield make_chunk("finish", run_id, finish_reason=state.finish_reason or "stop", usage=state.usage)

    async def _save_memory(self, agent: Agent, state: RunState) -> None:
        if agent.memory is None or not state.thread_id:
            return
        fresh = state.messages[state.memory_saved :]
        if fresh:
            await self.store.append_messages(
                state.thread_id, state.resource_id, [m.model_dump(mode="json", exclude_defaults=True) for m in fresh]
            )
            state.memory_saved = len(state.messages)

    def _resume_schema(self, top: Agent, agent_path: list[str], tool_name: str) -> dict[str, Any] | None:
        owner = top.descendant(agent_path)
        tool = owner.tools.get(tool_name) if owner is not None else None
        return tool.resume_json_schema() if tool is not None else None

    # -- decisions --------------------------------------------------------------------------
    async def decide(
        self,
        agent: Agent,
        kind: DecisionKind,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        reason: str | None = None,
        resume_data: Any = None,
        followups: list[Message] | None = None,
    ) -> AgentStream:
        """Record a decision atomically, then return the stream that applies it.

        ``followups``: user messages (auto-resume) that join the conversation
        after the tool results of the step being decided.
        """
        owner = uuid.uuid4().hex
        captured: dict[str, Any] = {}

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
            if kind == "approve":
                if call.kind != "approval":
                    raise WrongDecisionKind(
                        f"tool call {call.tool_call_id!r} of run {run_id!r} waits for resume "
                        "data, not approval: use resume_stream"
                    )
                if fingerprint is not None and fingerprint != call.fingerprint:
                    raise FingerprintMismatch(
                        f"fingerprint {fingerprint!r} does not match tool call {call.tool_call_id!r} of run "
                        f"{run_id!r} ({call.fingerprint}); nothing was executed"
                    )
                decision = Decision("approved", actor=self.actor)
            elif kind == "decline":
                decision = Decision("declined", reason=reason, actor=self.actor)
            else:
                if call.kind != "suspend":
                    raise WrongDecisionKind(
                        f"tool call {call.tool_call_id!r} of run {run_id!r} waits for "
                        "approval, not resume data: use approve_tool_call"
                    )
                captured["resume_data"] = self._validate_resume(agent, call, resume_data, run_id)
                decision = Decision("resuming", actor=self.actor)
            captured["state"] = state
            return decision

        claim = await self.store.claim(
            run_id, tool_call_id, kinds=_KINDS[kind], decide=check, owner=owner, lease_seconds=self.lease_seconds
        )
        self._raise_for(claim, run_id, tool_call_id, kind)
        assert claim.call is not None
        state: RunState | None = captured["state"] if claim.run is not None else None
        return AgentStream(
            run_id,
            self._apply(agent, kind, claim.call, state, owner, reason, captured.get("resume_data"), followups or []),
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

    def _validate_resume(self, agent: Agent, call: PendingCallRow, data: Any, run_id: str) -> Any:
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
        agent: Agent,
        kind: DecisionKind,
        call: PendingCallRow,
        state: RunState | None,
        owner: str,
        reason: str | None,
        resume_data: Any,
        followups: list[Message],
    ) -> AsyncIterator[Chunk]:
        run_id = call.run_id
        started = False
        try:
            if state is None:  # another holder is applying a decision on this run: wait for it
                state = await self._wait_for_lease(run_id, owner)
                if isinstance(state, Chunk):
                    yield state
                    return
            found = find_call(state, call.tool_call_id)
            problem: tuple[str, str] | None = None
            if found is None:
                problem = (CorruptSnapshot.code, f"snapshot of run {run_id!r} has no tool call {call.tool_call_id!r}")
            elif found[1].status not in ("awaiting_approval", "suspended"):
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
                target.status, target.approved = "approved", True
            elif kind == "decline":
                target.status, target.reason = "declined", reason
            else:
                target.status, target.resume_data = "resuming", resume_data
            state.followups.extend(followups)
            started = True
            heartbeat = asyncio.get_running_loop().create_task(self._keep_lease(run_id, owner))
            try:
                async for chunk in self._advance(agent, state, owner=owner, applied=[call.tool_call_id]):
                    yield chunk
            finally:
                heartbeat.cancel()
        except (asyncio.CancelledError, GeneratorExit):
            # Interrupted: free the run for others; a decision whose tool never
            # started goes back to pending rather than being lost.
            await asyncio.shield(self.store.release(run_id, owner, reset_call=None if started else call.tool_call_id))
            raise

    async def _keep_lease(self, run_id: str, owner: str) -> None:
        """Renew the lease while a decision is applied, so a long tool never loses its run."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                if not await self.store.renew_lease(run_id, owner, self.lease_seconds):
                    return
            except WardenError:
                return

    async def _wait_for_lease(self, run_id: str, owner: str) -> RunState | Chunk:
        delay = 0.002
        while True:
            row = await self.store.acquire_lease(run_id, owner, self.lease_seconds)
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

    # -- listing -----------------------------------------------------------------------------
    async def list_suspended_runs(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> SuspendedRunList:
        if page < 0 or per_page < 1:
            raise ValueError("page must be >= 0 and per_page >= 1")
        if agent_id is not None and agent_id in self._by_id:
            agent_id = self._by_id[agent_id].id
        rows, total = await self.store.list_suspended(
            agent_id=agent_id, thread_id=thread_id, resource_id=resource_id, page=page, per_page=per_page
        )
        return SuspendedRunList.from_rows(rows, total=total, page=page, per_page=per_page)

    async def get_suspended_run(self, run_id: str) -> SuspendedRun:
        run = await self.store.get_run(run_id)
        if run is None or run.status == "failed":
            raise SnapshotNotFound(f"no suspended run {run_id!r} in {self.store.name}")
        calls = [c for c in await self.store.get_calls(run_id) if c.status == "pending"]
        return SuspendedRun.from_row(SuspendedRunRow(run=run, calls=calls))

    async def _agent_of(self, run_id: str) -> Agent:
        run = await self.store.get_run(run_id)
        if run is None:
            raise SnapshotNotFound(f"no snapshot found for run {run_id!r} in {self.store.name}")
        return self.get_agent(run.agent_id)

    async def approve_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, fingerprint: str | None = None
    ) -> AgentStream:
        agent = await self._agent_of_decided(run_id, tool_call_id)
        return await self.decide(agent, "approve", run_id=run_id, tool_call_id=tool_call_id, fingerprint=fingerprint)

    async def decline_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> AgentStream:
        agent = await self._agent_of_decided(run_id, tool_call_id)
        return await self.decide(agent, "decline", run_id=run_id, tool_call_id=tool_call_id, reason=reason)

    async def resume_stream(self, resume_data: Any, *, run_id: str, tool_call_id: str | None = None) -> AgentStream:
        agent = await self._agent_of_decided(run_id, tool_call_id)
        return await self.decide(agent, "resume", run_id=run_id, tool_call_id=tool_call_id, resume_data=resume_data)

    async def _agent_of_decided(self, run_id: str, tool_call_id: str | None) -> Agent:
        run = await self.store.get_run(run_id)
        if run is not None:
            return self.get_agent(run.agent_id)
        if tool_call_id is not None:
            audit = await self.store.audit_log(run_id, tool_call_id)
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
        agent: Agent,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool,
        tool_call_id: str | None = None,
        run_id: str | None = None,
        resume_data: Any = None,
        reason: str | None = None,
    ) -> AgentStream:
        """Decide a thread's pending call without knowing its run id: found in storage."""
        if run_id is None:
            listing = await self.list_suspended_runs(
                agent_id=agent.id, thread_id=thread_id, resource_id=resource_id, per_page=100
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
            kind = call.kind
        else:
            kind = None
        if not approved:
            return await self.decide(agent, "decline", run_id=run_id, tool_call_id=tool_call_id, reason=reason)
        if kind == "suspend" or (kind is None and resume_data is not None):
            return await self.decide(
                agent,
                "resume",
                run_id=run_id,
                tool_call_id=tool_call_id,
                resume_data=resume_data if resume_data is not None else {},
            )
        return await self.decide(agent, "approve", run_id=run_id, tool_call_id=tool_call_id)


def _fp(name: str, args: Any) -> str:
    from agent_core.fingerprint import fingerprint

    return fingerprint(name, args)


def _as_messages(messages: str | list[Any]) -> list[Message]:
    if isinstance(messages, str):
        return [Message(role="user", content=messages)]
    out: list[Message] = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, dict):
            out.append(Message.model_validate(m))
        elif isinstance(m, str):
            out.append(Message(role="user", content=m))
        else:
            raise TypeError(f"messages must be strings, Message objects or dicts, not {type(m).__name__}")
    return out
