"""The run loop: model step -> tool calls (gated, executed, suspended, delegated) -> next step.

``drive`` advances a ``RunState`` as far as it can and yields chunks. It never
touches storage: the caller (``agent_core.persist``) stores the state before it
announces the calls that wait for a decision ("snapshot first"). It reads the
agent through the ``AgentDefinition`` protocol and moves calls only through
the transitions of ``CallState`` (``agent_core.call_state``).
"""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from agent_core.call_state import CallState, RunState, policy_mode
from agent_core.chunks import Chunk, make_chunk
from agent_core.concurrency import run_calls, writer_for
from agent_core.definition import AgentDefinition, DelegateInput, PolicyFn, ToolCallInfo
from agent_core.errors import ModelError, WardenError, validation_problems
from agent_core.fingerprint import fingerprint
from agent_core.hooks import Blocked, execute_tool, on_input_available
from agent_core.json_text import dumps
from agent_core.limits import args_problem
from agent_core.models import Message, ModelDone, ModelRequestInfo, ModelResponse, TextDelta, ToolCall
from agent_core.policy import Policy, PolicyDecision
from agent_core.policy_gate import (
    blocked_message,
    request_policy,
    run_policies,
    shadow_finding,
    validated_args,
    verdict,
    with_policy,
)
from agent_core.telemetry import gated, settled_at_gate
from agent_core.tools import Suspension, Tool, ToolContext

if TYPE_CHECKING:
    from agent_core.telemetry_spans import RunTrace

__all__ = ["DECLINED_MESSAGE", "EDITED_NOTE", "EXPIRED_MESSAGE", "Execution", "drive", "drive_into"]

DECLINED_MESSAGE = "Tool call was not approved by the user"
#: what the model is told when an approval's deadline passed and the sweep expired it.
EXPIRED_MESSAGE = "The approval request expired before anyone decided; the tool was not run."
#: what the model is told, with the arguments used, when the operator edited the call before approving it.
EDITED_NOTE = "The operator changed the arguments of this tool call before approving it; the tool ran with args."
#: ``grant_for(agent, state, call)``: the id of a live grant covering a gated call, or None.
GrantLookup = Callable[[AgentDefinition, RunState, CallState], Awaitable[str | None]]
#: ``audit(state, call, decision, reason, detail)``: appends an audit entry (``blocked``, ``policy-error``...).
AuditWriter = Callable[[RunState, CallState, str, str | None, dict[str, Any] | None], Awaitable[None]]


@dataclass
class Execution:
    """What one execution of a run has that is not stored: the in-process policy function, the ids in
    use, and the persistence hooks (``agent_core.persist``). Distinct from a run's stored context
    (``agent_core.decision_context``)."""

    request_policy: PolicyFn | None = None
    ids: set[str] = field(default_factory=set)
    top: RunState | None = None
    #: awaited just before a call's tool (or sub-agent) starts: the durable "started" mark.
    before_start: Callable[[CallState], Awaitable[None]] | None = None
    #: awaited once the top run's step has all its results, before the model is called again.
    step_done: Callable[[], Awaitable[None]] | None = None
    #: finds a live grant that approves a gated call without asking (None: grants are not looked up).
    grant_for: GrantLookup | None = None
    #: the spans of this advance (None: no OpenTelemetry SDK configured, nothing is traced).
    trace: RunTrace | None = None
    #: records what a policy did that no operator decided (blocked, policy-error, policy-shadow).
    audit: AuditWriter | None = None
    #: a candidate policy evaluated beside the enforced ones: audited where it differs, never enforced.
    shadow_policy: Policy | None = None

    def next_seq(self) -> int:
        assert self.top is not None
        self.top.seq_counter += 1
        return self.top.seq_counter

    def fresh_id(self, proposed: str | None) -> str:
        if proposed and proposed not in self.ids and len(proposed) <= 256 and proposed.isprintable():
            self.ids.add(proposed)
            return proposed
        while True:
            cid = "call_" + uuid.uuid4().hex[:16]
            if cid not in self.ids:
                self.ids.add(cid)
                return cid


def tool_message(call: CallState) -> Message:
    """The tool result the model sees, in the model's call order."""
    if call.result_kind == "denied":
        content, status = dumps(call.reason or DECLINED_MESSAGE), "denied"
    elif call.result_kind == "expired":
        content, status = dumps(call.result or EXPIRED_MESSAGE), "denied"
    elif call.edited_args is not None:
        key = "error" if call.result_kind == "error" else "result"
        body = {"note": EDITED_NOTE, "args": call.edited_args, key: call.result}
        content, status = dumps(body), "error" if key == "error" else "ok"
    elif call.result_kind == "error":
        content, status = dumps({"error": call.result}), "error"
    else:
        content, status = dumps(call.result), "ok"
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name, tool_status=status)


async def drive(agent: AgentDefinition, state: RunState, rt: Execution) -> AsyncIterator[Chunk]:
    """Advance ``state`` until it finishes, fails, or waits for decisions; sets ``state.outcome``. The
    chunks come once the advance is over (``drive_into`` hands each one on as it is made)."""
    out: list[Chunk] = []
    try:
        await drive_into(agent, state, rt, out.append)
    except Exception:
        for chunk in out:  # what was made before the failure, as a generator would have yielded it
            yield chunk
        raise
    for chunk in out:
        yield chunk


async def drive_into(agent: AgentDefinition, state: RunState, rt: Execution, emit: Callable[[Chunk], None]) -> None:
    """Advance ``state`` until it finishes, fails, or waits for decisions; sets ``state.outcome``.

    Each chunk goes to ``emit`` as it is made (``AgentStream``'s push, in the stream's own task): a
    coroutine, not a generator, so no chunk passes through a generator layer of its caller."""
    run_id = state.run_id
    model = agent.resolved_model()
    while True:
        if state.calls:
            for chunk in await _settle_new(agent, state, rt):
                emit(chunk)
            runnable = [c for c in state.calls if c.runnable]
            if runnable:
                # Independent calls of one step run concurrently (a sync tool in its own thread; at most
                # ``tool_call_concurrency``, a sequential tool alone); tools' progress chunks go live to
                # the run's stream, then come the calls' chunks in the model's call order.
                for chunk in await run_calls(
                    runnable,
                    lambda c: _run_call(agent, state, c, rt),
                    run_id=run_id,
                    limit=state.tool_call_concurrency,
                    sequential=lambda c: c.name in agent.tools and agent.tools[c.name].sequential,
                ):
                    emit(chunk)
                now = time.time()
                for call in runnable:
                    if call.status == "suspended":
                        call.mark_pending(now, rt.next_seq())
            if any(c.waiting for c in state.calls):
                state.outcome = "suspended"
                return
            for call in state.calls:
                state.messages.append(tool_message(call))
            if state.followups:  # a user message that resumed this run comes after the tool results
                state.messages.extend(state.followups)
                state.followups = []
            emit(make_chunk("step-finish", run_id, step=state.step, finish_reason="tool-calls"))
            state.calls = []
            state.step += 1
            if rt.step_done is not None and state is rt.top and state.step < state.max_steps:
                await rt.step_done()  # results stored before the model is called again
        if state.step >= state.max_steps:
            state.outcome, state.finish_reason = "finished", "length"
            return
        emit(make_chunk("step-start", run_id, step=state.step))
        info = ModelRequestInfo(
            tools=agent.tool_specs(),
            output_schema=state.output_schema,
            agent_id=agent.id,
            run_id=run_id,
            step=state.step,
            thread_id=state.thread_id,
        )
        response: ModelResponse | None = None
        tracing = rt.trace
        span = None if tracing is None else tracing.chat(agent.id, state, model.model_id)
        failed: str | None = None
        try:
            async for event in model.stream(agent.model_messages(state.messages), info):
                if isinstance(event, TextDelta):
                    if event.text:
                        emit(make_chunk("text-delta", run_id, text=event.text))
                elif isinstance(event, ModelDone):
                    response = event.response
        except WardenError as exc:
            failed = exc.message
            raise
        except Exception as exc:
            failed = f"model {model.model_id} failed: {type(exc).__name__}: {exc}"
            raise ModelError(failed) from exc
        finally:
            if tracing is not None and span is not None:
                tracing.chat_done(span, response, failed)
        if response is None:
            raise ModelError(f"model {model.model_id} ended its stream without a response")
        if response.usage is not None:
            state.usage = state.usage + response.usage
        calls = []
        for tc in response.tool_calls:
            # Arguments that cannot be stored become a tool-error the model sees, never a stranded run.
            problem = args_problem(tc.args)
            args, error = ({}, problem) if problem else (tc.args, tc.args_error)
            calls.append(CallState(id=rt.fresh_id(tc.id), name=tc.name, args=args, args_error=error))
        state.messages.append(
            Message(
                role="assistant",
                content=response.text,
                tool_calls=[ToolCall(name=c.name, args=c.args, id=c.id) for c in calls],
            )
        )
        if not calls:
            emit(make_chunk("step-finish", run_id, step=state.step, finish_reason="stop"))
            state.step += 1
            state.outcome, state.finish_reason = "finished", "stop"
            return
        state.calls = calls
        for call in calls:
            emit(make_chunk("tool-call", run_id, tool_call_id=call.id, tool_name=call.name, args=call.args))


def settle_refused(run_id: str, call: CallState) -> Chunk | None:
    """Resolve a declined (or policy-blocked) or expired call, and the chunk that says so; ``None`` for
    any other call. The model is told through the call's result (the engine's and the adapters')."""
    if call.status == "declined":
        reason = call.reason or DECLINED_MESSAGE
        call.resolve("denied", reason)
        return make_chunk(
            "tool-output-denied",
            run_id,
            tool_call_id=call.id,
            tool_name=call.name,
            args=call.args,
            reason=reason,
            policy_rule=call.policy_rule if call.blocked else None,
        )
    if call.status == "expired":
        call.resolve("expired", EXPIRED_MESSAGE)
        return make_chunk(
            "tool-call-expired",
            run_id,
            tool_call_id=call.id,
            tool_name=call.name,
            args=call.args,
            expired_at=datetime.fromtimestamp(call.expired_at or time.time(), UTC),
        )
    return None


async def _settle_new(agent: AgentDefinition, state: RunState, rt: Execution) -> list[Chunk]:
    """Resolve what can be resolved in this step before anything runs: check, gate, block or admit
    each new call, and settle the declined and expired ones; the chunks that say so, in call order."""
    run_id = state.run_id
    out: list[Chunk] = []
    for call in state.calls:
        if call.status == "new":
            # (the cheap checks inline: a coroutine is only made when there is a hook, a policy or a function)
            tool = agent.tools.get(call.name)
            error = _precheck(agent, call)
            if error is None and tool is not None and tool.hooks:
                error = await on_input_available(tool, state, call)
            if error is not None:
                call.resolve("error", error)
                out.append(make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=error))
                continue
            ruling = await _policy_ruling(agent, state, call, rt) if state.policies else None
            asks: bool | None = ruling is not None and ruling.decision == "ask"
            if not asks and (ruling is None or ruling.decision != "deny"):
                asks = _explicit_approval(agent, state, call)
                if asks is None:
                    asks = await _needs_approval(agent, state, call, rt)
            if ruling is not None and ruling.decision == "deny":
                call.block(blocked_message(ruling))
                await _audit(rt, state, call, "blocked", call.reason, {})
                settled_at_gate(rt.trace, state, call, "blocked")
            elif asks:
                # a grant never covers a call whose rule needs two or more approvers
                grant_id = None if call.approvers_required > 1 else await _granted(agent, state, call, rt)
                if grant_id is None:
                    now = time.time()
                    timeout = _approval_timeout(agent, state, call)
                    expires_at = None if timeout is None else now + timeout
                    call.gate(fingerprint(call.name, call.args), rt.next_seq(), now, expires_at=expires_at)
                    gated()
                    if rt.shadow_policy is not None:
                        await _shadow(agent, state, call, rt)
                    continue
                call.admit(grant_id=grant_id)
                settled_at_gate(rt.trace, state, call, "granted")
            else:
                call.admit()
            if rt.shadow_policy is not None:
                await _shadow(agent, state, call, rt)
        settled = settle_refused(run_id, call)
        if settled is not None:
            out.append(settled)
    return out


async def _run_call(agent: AgentDefinition, state: RunState, call: CallState, rt: Execution) -> list[Chunk]:
    """Run (or continue) one call: its tool or sub-agent, after the durable started mark, in its span."""
    if rt.before_start is not None:
        await rt.before_start(call)  # raises (and nothing runs) when the run's lease was lost
    run = _delegate if call.name in agent.delegates else _execute
    trace = rt.trace
    if trace is None:
        return await run(agent, state, call, rt)
    trace.tool(agent.id, state, call)  # the call's ``execute_tool`` span, from its start to its result
    try:
        return await run(agent, state, call, rt)
    finally:
        trace.tool_done(call)


def _precheck(agent: AgentDefinition, call: CallState) -> str | None:
    """Unknown tools and invalid arguments become errors the model sees, never crashes."""
    if call.args_error:
        return f"Invalid arguments for tool {call.name!r}: {call.args_error}"
    if call.name in agent.delegates:
        schema: type[BaseModel] = DelegateInput
    else:
        tool = agent.tools.get(call.name)
        if tool is None:
            return f"Tool {call.name!r} not found. Available tools: {', '.join(agent.tool_names()) or 'none'}"
        schema = tool.input_schema
    try:
        schema.model_validate(call.args)
    except ValidationError as exc:
        return f"Invalid arguments for tool {call.name!r}: {validation_problems(exc, limit=5)[1]}"
    return None


def _approval_timeout(agent: AgentDefinition, state: RunState, call: CallState) -> float | None:
    """Tool > request > agent: the tool's own ``approval_timeout``, else the run's (request or agent)."""
    tool = None if call.name in agent.delegates else agent.tools.get(call.name)
    own = getattr(tool, "approval_timeout", None)
    return own if own is not None else state.approval_timeout


async def _granted(agent: AgentDefinition, state: RunState, call: CallState, rt: Execution) -> str | None:
    if rt.grant_for is None:
        return None
    tool = None if call.name in agent.delegates else agent.tools.get(call.name)
    if tool is not None and not getattr(tool, "allow_grants", True):
        return None
    return await rt.grant_for(agent, state, call)


async def _policy_ruling(
    agent: AgentDefinition, state: RunState, call: CallState, rt: Execution
) -> PolicyDecision | None:
    """What the run's stored policies say about a new call (recorded on it); None: the run has none."""
    if not state.policies:
        return None
    ruling = verdict(run_policies(state), state, call, validated_args(_schema(agent, call), call.args))
    assert ruling is not None
    call.policy_version, call.policy_rule, call.policy_reason = ruling.version, ruling.rule_id, ruling.reason
    call.approvers_required = ruling.approvers
    if ruling.error:  # fail closed: the rule counted as ask; the error is on the record
        await _audit(rt, state, call, "policy-error", ruling.error, {"error": ruling.error})
    return ruling


async def _shadow(agent: AgentDefinition, state: RunState, call: CallState, rt: Execution) -> None:
    """Audit ``policy-shadow`` where the candidate policy would have decided this call differently."""
    if rt.shadow_policy is None:
        return
    enforced = "deny" if call.blocked else "ask" if call.status == "awaiting_approval" else "allow"
    if call.grant_id is not None:
        enforced = "ask"  # gated, then approved by a grant
    finding = shadow_finding(rt.shadow_policy, state, call, enforced, validated_args(_schema(agent, call), call.args))
    if finding is not None:
        await _audit(rt, state, call, "policy-shadow", *finding)


async def _audit(
    rt: Execution, state: RunState, call: CallState, decision: str, reason: str | None, detail: dict[str, Any]
) -> None:
    if rt.audit is not None:
        await rt.audit(state, call, decision, reason, detail)


def _schema(agent: AgentDefinition, call: CallState) -> type[BaseModel]:
    return DelegateInput if call.name in agent.delegates else agent.tools[call.name].input_schema


def _explicit_approval(agent: AgentDefinition, state: RunState, call: CallState) -> bool | None:
    """Whether a ``new`` call needs approval when the tool or the run's mode says so; None: ask the
    policy function (``_needs_approval``). A sub-agent has no explicit setting of its own."""
    explicit = None if call.name in agent.delegates else agent.tools[call.name].require_approval
    if explicit is True or state.policy == "all":
        return True
    if explicit is False or state.policy == "none":
        return False
    return None


async def _needs_approval(agent: AgentDefinition, state: RunState, call: CallState, rt: Execution) -> bool:
    """Only asked of a ``new`` call (after ``_explicit_approval``): the run's policy function decides."""
    explicit = _explicit_approval(agent, state, call)
    if explicit is not None:
        return explicit
    if state.policy == "request_fn":
        fn = rt.request_policy if state is rt.top else None
    else:
        fn = agent.default_policy_fn()
    if fn is None:
        # A function cannot be stored: in another process it counts as "approval required".
        return True
    try:
        out = fn(
            ToolCallInfo(
                tool_name=call.name,
                args=call.args,
                request_context=state.request_context,
                tool_call_id=call.id,
                agent_id=agent.id,
            )
        )
        if inspect.isawaitable(out):
            out = await out
        return bool(out)
    except Exception:
        return True  # a policy that fails asks for approval


async def _execute(agent: AgentDefinition, state: RunState, call: CallState, rt: Execution) -> list[Chunk]:
    tool: Tool = agent.tools[call.name]
    run_id = state.run_id
    inp = tool.input_schema.model_validate(call.run_args)
    resume = None
    if call.status == "resuming" and call.resume_data is not None:
        resume = tool.resume_schema.model_validate(call.resume_data) if tool.resume_schema else call.resume_data
    ctx = ToolContext(
        run_id=run_id,
        tool_call_id=call.id,
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        request_context=state.request_context,
        resume_data=resume,
        agent_id=agent.id,
        tool_name=call.name,
        writer=writer_for(run_id, state.agent_path, call),
        _suspend_schema=tool.suspend_schema,
    )
    try:
        if tool.is_async and not tool.hooks and not agent.hooks:  # what execute_tool does with no hook set
            out = await tool.execute(inp, ctx)
        else:
            out = await execute_tool(tool, inp, ctx, agent_hooks=agent.hooks, state=state, call=call)
    except Exception as exc:
        message = exc.message if isinstance(exc, WardenError) else f"{type(exc).__name__}: {exc}"
        call.resolve("error", message)
        return [make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=message)]
    if ctx.suspended or isinstance(out, Suspension):
        suspension = ctx._suspension if ctx._suspension is not None else out
        try:
            payload = to_jsonable_python(suspension.payload)
        except (TypeError, ValueError) as exc:
            message = f"Tool {call.name!r} suspended with a payload that cannot be stored: {exc}"
            call.resolve("error", message)
            return [make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=message)]
        call.suspend(payload)
        return []
    try:
        if isinstance(out, Blocked):  # before_tool_call said not to proceed: its output is the result
            out = out.output
        elif tool.output_schema is not None and not isinstance(out, tool.output_schema):
            out = tool.output_schema.model_validate(out)
        result = to_jsonable_python(out)
    except (ValidationError, TypeError, ValueError) as exc:
        message = f"Tool {call.name!r} returned an invalid result: {exc}"
        call.resolve("error", message)
        return [make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=message)]
    call.resolve("result", result)
    return [
        make_chunk(
            "tool-result",
            run_id,
            tool_call_id=call.id,
            tool_name=call.name,
            result=result,
            is_error=False,
            args=call.edited_args if call.edited_args is not None else inp.model_dump(mode="json"),
            grant_id=call.grant_id,
        )
    ]


async def _delegate(agent: AgentDefinition, state: RunState, call: CallState, rt: Execution) -> list[Chunk]:
    """Run (or continue) a sub-agent as a nested run; its final text is the tool's result."""
    sub = agent.delegates[call.name]
    child = call.child
    if child is None:
        child = child_state(sub, parent=state, prompt=DelegateInput.model_validate(call.run_args).prompt)
    call.delegate(child)
    tracing = rt.trace
    sub_span = None if tracing is None else tracing.sub_agent(call, sub.id, child)
    try:
        # A sub-agent's own chunks stay inside it: the top stream shows the
        # delegation's result, and every call waiting for a decision at any depth
        # is announced by the top run once its snapshot is stored.
        await drive_into(sub, child, rt, _discard)
    except WardenError as exc:
        call.resolve("error", f"Sub-agent {sub.id!r} failed: {exc.message}")
        return [make_chunk("tool-error", state.run_id, tool_call_id=call.id, tool_name=call.name, error=call.result)]
    finally:
        if tracing is not None and sub_span is not None:
            tracing.end_span(sub_span, call.result if call.result_kind == "error" else None)
    if child.outcome == "suspended":
        return []
    text = "".join(m.content for m in child.messages[-1:] if m.role == "assistant")
    call.resolve("result", text)
    return [
        make_chunk(
            "tool-result",
            state.run_id,
            tool_call_id=call.id,
            tool_name=call.name,
            result=text,
            is_error=False,
            args=call.run_args,
            grant_id=call.grant_id,
        )
    ]


def _discard(chunk: Chunk) -> None:
    """A sub-agent's own chunks stay inside it."""


def child_state(sub: AgentDefinition, *, parent: RunState, prompt: str) -> RunState:
    """The nested run of sub-agent ``sub`` inside ``parent`` (same run id, thread and context)."""
    return RunState(
        run_id=parent.run_id,
        agent_id=sub.id,
        agent_path=[*parent.agent_path, sub.id],
        thread_id=parent.thread_id,
        resource_id=parent.resource_id,
        messages=[Message(role="user", content=prompt)],
        max_steps=sub.default_options.get("max_steps", parent.max_steps),
        policy=policy_mode(sub.default_options.get("require_tool_approval")),
        policies=with_policy(parent.policies, request_policy(sub.default_options.get("require_tool_approval"))),
        request_context=parent.request_context,
        created_at=parent.created_at,
        tool_call_concurrency=sub.default_options.get("tool_call_concurrency", parent.tool_call_concurrency),
        approval_timeout=parent.approval_timeout,
    )
