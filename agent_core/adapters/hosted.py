"""``FrameworkAgent``: an agent of another framework, hosted by a ``Runtime`` like Warden's ``Agent``.

It has ``Agent``'s public methods (stream, decisions, listing) and drives its own run
(``Runs.advance`` calls ``drive``): the framework runs until it stops on tool calls; Warden gates
them (the run's policy: a deny is refused at once, an ask records its rule and quorum; fingerprint,
grants, deadlines), stores the framework's state in the snapshot and, once every
call of the step is decided, resumes the framework with its verdicts. "Snapshot first", leases,
the durable started mark, the audit log and listing are Warden's, unchanged.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from agent_core.adapters.gate import WardenGate, policy_args, policy_ruling
from agent_core.adapters.protocol import Framework, Outcome, Pending, Verdict
from agent_core.agent import Agent
from agent_core.call_state import CallState, RunState
from agent_core.chunks import Chunk, make_chunk
from agent_core.engine import Execution, settle_refused
from agent_core.errors import ModelError, WardenError
from agent_core.fingerprint import fingerprint
from agent_core.limits import args_problem
from agent_core.memory import Memory
from agent_core.models import LanguageModel, Message, ModelEvent, ModelRequestInfo
from agent_core.policy_gate import blocked_message, shadow_finding
from agent_core.telemetry import gated, settled_at_gate


class FrameworkModel(LanguageModel):
    """Stands in for the model of an agent whose framework calls its own model; names the framework."""

    def __init__(self, kind: str) -> None:
        self.model_id = kind

    async def stream(self, messages: list[Message], info: ModelRequestInfo) -> AsyncIterator[ModelEvent]:
        raise ModelError(f"the model of a {self.model_id} agent is called by its framework, not by Warden")
        yield  # pragma: no cover - makes this an async generator


class FrameworkAgent(Agent):
    """A framework's agent as Warden hosts it (see ``agent_core.adapters``)."""

    def __init__(
        self,
        framework: Framework,
        *,
        id: str,
        name: str | None = None,
        description: str = "",
        instructions: str = "",
        memory: Memory | None = None,
        default_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            id=id,
            name=name,
            description=description,
            instructions=instructions,
            model=FrameworkModel(framework.kind),
            tools=dict(framework.tools),
            memory=memory,
            default_options=default_options,
        )
        self.framework = framework

    def __repr__(self) -> str:
        return f"FrameworkAgent(id={self.id!r}, framework={self.framework.kind!r})"

    async def drive(self, state: RunState, rt: Execution) -> AsyncIterator[Chunk]:
        """Advance the run: start or resume the framework, gate what it stops on; sets ``state.outcome``."""
        gate = WardenGate(self, state, rt)
        run_id = state.run_id
        announced = {c.id for c in state.calls}
        if state.calls:  # a step waiting for decisions
            for chunk in _settle(state):
                yield chunk
            if any(c.waiting for c in state.calls):
                state.outcome = "suspended"
                return
            if rt.before_start is not None:
                for call in state.calls:
                    if call.status == "approved":
                        await rt.before_start(call)  # the durable started mark (raises if the lease was lost)
            outcome = await self.framework.resume(state.framework_state, _verdicts(state.calls), gate, run_id=run_id)
        else:
            yield make_chunk("step-start", run_id, step=state.step)
            outcome = await self.framework.start(state.messages, gate, run_id=run_id, thread_id=state.thread_id)
        while True:
            state.framework_state = outcome.state
            if gate.allowed:
                await self._shadow_allowed(state, rt, gate, outcome)
            for chunk in _absorb(state, outcome, announced):
                yield chunk
            if not outcome.pending:
                if outcome.text:
                    yield make_chunk("text-delta", run_id, text=outcome.text)
                state.messages.append(Message(role="assistant", content=outcome.text))
                yield make_chunk("step-finish", run_id, step=state.step, finish_reason="stop")
                state.step += 1
                state.outcome, state.finish_reason = "finished", "stop"
                return
            state.calls = [await self._gate(state, rt, p) for p in outcome.pending]
            for call in state.calls:
                if call.id not in announced:
                    announced.add(call.id)
                    yield make_chunk("tool-call", run_id, tool_call_id=call.id, tool_name=call.name, args=call.args)
            for chunk in _settle(state):  # calls a policy denied: refused now, never pending
                yield chunk
            if any(c.waiting for c in state.calls):
                state.outcome = "suspended"
                return
            # every call was approved by a grant or denied by a policy: the framework goes on at once
            outcome = await self.framework.resume(outcome.state, _verdicts(state.calls), gate, run_id=run_id)

    async def _gate(self, state: RunState, rt: Execution, pending: Pending) -> CallState:
        """A call the framework stopped on, as Warden's waiting call (or approved by a live grant)."""
        problem = args_problem(pending.args)
        if problem:
            raise WardenError(f"tool call {pending.id!r} of {pending.name!r} cannot be stored: {problem}")
        call = CallState(id=pending.id, name=pending.name, args=pending.args)
        rt.ids.add(call.id)
        # The run's policies, as the engine applies them: recorded on the call; a deny refuses it.
        ruling = policy_ruling(self, state, call.name, call.args)
        if ruling is not None:
            call.policy_version, call.policy_rule, call.policy_reason = ruling.version, ruling.rule_id, ruling.reason
            call.approvers_required = ruling.approvers
            if ruling.error:  # fail closed: the rule counted as ask; the error is on the record
                await _audit(rt, state, call, "policy-error", ruling.error, {"error": ruling.error})
            if ruling.decision == "deny":
                call.block(blocked_message(ruling))
                await _audit(rt, state, call, "blocked", call.reason, {})
                settled_at_gate(rt.trace, state, call, "blocked")
                await self._shadow(state, rt, call)
                return call
        tool = self.tools.get(call.name)
        grant_id = None
        # a grant never covers a call whose rule needs two or more approvers
        if rt.grant_for is not None and tool is not None and tool.allow_grants and call.approvers_required < 2:
            grant_id = await rt.grant_for(self, state, call)
        if grant_id is not None:
            call.admit(grant_id=grant_id)
            settled_at_gate(rt.trace, state, call, "granted")
            await self._shadow(state, rt, call)
            return call
        own = tool.approval_timeout if tool is not None else None
        timeout = own if own is not None else state.approval_timeout
        now = time.time()
        call.gate(
            fingerprint(call.name, call.args), rt.next_seq(), now, expires_at=None if timeout is None else now + timeout
        )
        gated()
        await self._shadow(state, rt, call)
        return call

    async def _shadow_allowed(self, state: RunState, rt: Execution, gate: WardenGate, outcome: Outcome) -> None:
        """The shadow audit of the calls Warden's hook let run in this stretch of the framework's run.

        Only calls this stretch reported (a resumed LangGraph node asks its ``when`` again about calls of
        an earlier stretch) and did not stop on (the framework's own flag may stop what the hook let by)."""
        fresh = {seen.id for seen in outcome.events if seen.kind == "tool-call"}
        stopped = {p.id for p in outcome.pending}
        for call in gate.allowed.values():
            if call.id in fresh and call.id not in stopped:
                await self._shadow(state, rt, call)
        gate.allowed.clear()

    async def _shadow(self, state: RunState, rt: Execution, call: CallState) -> None:
        """Audit ``policy-shadow`` where the candidate policy would have decided ``call`` otherwise (as the
        engine does): ``call`` is blocked, waiting, approved by a grant, or one the framework ran."""
        if rt.shadow_policy is None:
            return
        enforced = "deny" if call.blocked else "ask" if call.waiting or call.grant_id is not None else "allow"
        finding = shadow_finding(rt.shadow_policy, state, call, enforced, policy_args(self, call.name, call.args))
        if finding is not None:
            await _audit(rt, state, call, "policy-shadow", *finding)


async def _audit(
    rt: Execution, state: RunState, call: CallState, decision: str, reason: str | None, detail: dict[str, Any]
) -> None:
    """What a policy did that no operator decided (``blocked``, ``policy-error``), as the engine audits it."""
    if rt.audit is not None:
        await rt.audit(state, call, decision, reason, detail)


def _settle(state: RunState) -> list[Chunk]:
    """Resolve the step's declined, blocked and expired calls (the framework is told when it resumes)."""
    settled = (settle_refused(state.run_id, call) for call in state.calls)
    return [chunk for chunk in settled if chunk is not None]


def _verdicts(calls: list[CallState]) -> dict[str, Verdict]:
    out: dict[str, Verdict] = {}
    for call in calls:
        if call.status == "approved":
            out[call.id] = Verdict(True, args=call.edited_args)
        elif call.result_kind in ("denied", "expired"):
            out[call.id] = Verdict(False, message=str(call.result))
    return out


def _absorb(state: RunState, outcome: Outcome, announced: set[str]) -> list[Chunk]:
    """Chunks for what the framework did; the decided step's calls get their results and the step ends."""
    run_id = state.run_id
    decided = {c.id: c for c in state.calls}
    out: list[Chunk] = []
    for seen in outcome.events:
        if seen.kind == "text":
            if seen.text:
                out.append(make_chunk("text-delta", run_id, text=seen.text))
        elif seen.kind == "tool-call":
            if seen.id not in announced:
                announced.add(seen.id)
                out.append(make_chunk("tool-call", run_id, tool_call_id=seen.id, tool_name=seen.name, args=seen.args))
        else:
            result = _jsonable(seen.result)
            call = decided.get(seen.id)
            if call is not None and call.status != "approved":
                continue  # a declined or expired call: its denial was shown when it was decided
            if call is not None:
                call.resolve("error" if seen.is_error else "result", result)
            out.append(_result_chunk(run_id, seen.id, seen.name, result, seen.is_error, call))
    for call in state.calls:
        if call.status == "approved":  # the framework reported no result for it
            call.resolve("result", None)
            out.append(_result_chunk(run_id, call.id, call.name, None, False, call))
    if state.calls:
        out.append(make_chunk("step-finish", run_id, step=state.step, finish_reason="tool-calls"))
        state.step += 1
        state.calls = []
    return out


def _result_chunk(run_id: str, call_id: str, name: str, result: Any, is_error: bool, call: CallState | None) -> Chunk:
    if is_error:
        return make_chunk("tool-error", run_id, tool_call_id=call_id, tool_name=name, error=str(result))
    return make_chunk(
        "tool-result",
        run_id,
        tool_call_id=call_id,
        tool_name=name,
        result=result,
        is_error=False,
        args=call.run_args if call is not None else None,
        grant_id=call.grant_id if call is not None else None,
    )


def _jsonable(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except (TypeError, ValueError):
        return str(value)
