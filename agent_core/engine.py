"""The run loop: model step -> tool calls (gated, executed, suspended, delegated) -> next step.

``drive`` advances a ``RunState`` as far as it can and yields chunks. It never
touches storage: the caller (``agent_core.persist``) stores the state before it
announces the calls that wait for a decision ("snapshot first"). It reads the
agent through the ``AgentDefinition`` protocol and moves calls only through
the transitions of ``CallState`` (``agent_core.call_state``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from agent_core.call_state import CallState, RunState, policy_mode
from agent_core.chunks import Chunk, make_chunk
from agent_core.definition import AgentDefinition, DelegateInput, PolicyFn, ToolCallInfo, delegation_name
from agent_core.errors import ModelError, WardenError
from agent_core.fingerprint import fingerprint
from agent_core.limits import args_problem
from agent_core.models import Message, ModelDone, ModelRequestInfo, ModelResponse, TextDelta, ToolCall
from agent_core.tools import Suspension, Tool, ToolContext

# Re-exported: ``agent_core.engine.ToolCallInfo`` and the delegation helpers were defined here.
__all__ = ["DECLINED_MESSAGE", "DelegateInput", "RunContext", "ToolCallInfo", "delegation_name", "drive"]

DECLINED_MESSAGE = "Tool call was not approved by the user"


@dataclass
class RunContext:
    """Per-execution facts that are not stored: the in-process policy function, ids in use."""

    request_policy: PolicyFn | None = None
    ids: set[str] = field(default_factory=set)
    top: RunState | None = None
    #: awaited just before a call's tool (or sub-agent) starts: the durable "started" mark.
    before_start: Callable[[CallState], Awaitable[None]] | None = None
    #: awaited once the top run's step has all its results, before the model is called again.
    step_done: Callable[[], Awaitable[None]] | None = None

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
        content, status = json.dumps(call.reason or DECLINED_MESSAGE, ensure_ascii=False), "denied"
    elif call.result_kind == "error":
        content, status = json.dumps({"error": call.result}, ensure_ascii=False), "error"
    else:
        content, status = json.dumps(call.result, ensure_ascii=False), "ok"
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name, tool_status=status)


async def drive(agent: AgentDefinition, state: RunState, rt: RunContext) -> AsyncIterator[Chunk]:
    """Advance ``state`` until it finishes, fails, or waits for decisions; sets ``state.outcome``."""
    run_id = state.run_id
    model = agent.resolved_model()
    while True:
        if state.calls:
            async for chunk in _process_calls(agent, state, rt):
                yield chunk
            if any(c.waiting for c in state.calls):
                state.outcome = "suspended"
                return
            for call in state.calls:
                state.messages.append(tool_message(call))
            if state.followups:  # a user message that resumed this run comes after the tool results
                state.messages.extend(state.followups)
                state.followups = []
            yield make_chunk("step-finish", run_id, step=state.step, finish_reason="tool-calls")
            state.calls = []
            state.step += 1
            if rt.step_done is not None and state is rt.top and state.step < state.max_steps:
                await rt.step_done()  # results stored before the model is called again
        if state.step >= state.max_steps:
            state.outcome, state.finish_reason = "finished", "length"
            return
        yield make_chunk("step-start", run_id, step=state.step)
        info = ModelRequestInfo(tools=agent.tool_specs(), agent_id=agent.id, run_id=run_id, step=state.step)
        response: ModelResponse | None = None
        try:
            async for event in model.stream(agent.model_messages(state.messages), info):
                if isinstance(event, TextDelta):
                    if event.text:
                        yield make_chunk("text-delta", run_id, text=event.text)
                elif isinstance(event, ModelDone):
                    response = event.response
        except WardenError:
            raise
        except Exception as exc:
            raise ModelError(f"model {model.model_id} failed: {type(exc).__name__}: {exc}") from exc
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
            yield make_chunk("step-finish", run_id, step=state.step, finish_reason="stop")
            state.step += 1
            state.outcome, state.finish_reason = "finished", "stop"
            return
        state.calls = calls
        for call in calls:
            yield make_chunk("tool-call", run_id, tool_call_id=call.id, tool_name=call.name, args=call.args)


async def _process_calls(agent: AgentDefinition, state: RunState, rt: RunContext) -> AsyncIterator[Chunk]:
    """Resolve what can be resolved in this step: gate, deny, then run the rest concurrently."""
    run_id = state.run_id
    for call in state.calls:
        if call.status == "new":
            error = _precheck(agent, call)
            if error is not None:
                call.resolve("error", error)
                yield make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=error)
                continue
            if await _needs_approval(agent, state, call, rt):
                call.gate(fingerprint(call.name, call.args), rt.next_seq(), time.time())
                continue
            call.admit()
        if call.status == "declined":
            call.resolve("denied", call.reason or DECLINED_MESSAGE)
            yield make_chunk(
                "tool-output-denied",
                run_id,
                tool_call_id=call.id,
                tool_name=call.name,
                args=call.args,
                reason=call.reason or DECLINED_MESSAGE,
            )
    runnable = [c for c in state.calls if c.runnable]
    if len(runnable) == 1:
        async for chunk in _run_call(agent, state, runnable[0], rt):
            yield chunk
    elif runnable:
        # Independent calls of one step run concurrently (a sync tool in its own
        # thread); their chunks come out in the model's call order.
        outcomes = await asyncio.gather(
            *(_collect(_run_call(agent, state, c, rt)) for c in runnable), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        for outcome in outcomes:
            for chunk in outcome:  # type: ignore[union-attr]
                yield chunk
    now = time.time()
    for call in runnable:
        if call.status == "suspended":
            call.mark_pending(now, rt.next_seq())


async def _collect(chunks: AsyncIterator[Chunk]) -> list[Chunk]:
    return [c async for c in chunks]


def _run_call(agent: AgentDefinition, state: RunState, call: CallState, rt: RunContext) -> AsyncIterator[Chunk]:
    if call.name in agent.delegates:
        inner = _delegate(agent, state, call, rt)
    else:
        inner = _execute(agent, state, call, rt)
    return inner if rt.before_start is None else _started(rt, call, inner)


async def _started(rt: RunContext, call: CallState, inner: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
    assert rt.before_start is not None
    await rt.before_start(call)  # raises (and nothing runs) when the run's lease was lost
    async for chunk in inner:
        yield chunk


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
        return f"Invalid arguments for tool {call.name!r}: {_short_errors(exc)}"
    return None


def _short_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


async def _needs_approval(agent: AgentDefinition, state: RunState, call: CallState, rt: RunContext) -> bool:
    """Only asked of a ``new`` call; a sub-agent has no explicit setting of its own."""
    explicit = None if call.name in agent.delegates else agent.tools[call.name].require_approval
    if explicit is True or state.policy == "all":
        return True
    if explicit is False or state.policy == "none":
        return False
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


async def _execute(agent: AgentDefinition, state: RunState, call: CallState, rt: RunContext) -> AsyncIterator[Chunk]:
    tool: Tool = agent.tools[call.name]
    run_id = state.run_id
    inp = tool.input_schema.model_validate(call.args)
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
        _suspend_schema=tool.suspend_schema,
    )
    try:
        if tool.is_async:
            out = await tool.execute(inp, ctx)
        else:
            out = await asyncio.to_thread(tool.execute, inp, ctx)
            if inspect.isawaitable(out):
                out = await out
    except Exception as exc:
        message = exc.message if isinstance(exc, WardenError) else f"{type(exc).__name__}: {exc}"
        call.resolve("error", message)
        yield make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=message)
        return
    if ctx.suspended or isinstance(out, Suspension):
        suspension = ctx._suspension if ctx._suspension is not None else out
        try:
            payload = to_jsonable_python(suspension.payload)
        except (TypeError, ValueError) as exc:
            message = f"Tool {call.name!r} suspended with a payload that cannot be stored: {exc}"
            call.resolve("error", message)
            yield make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=message)
            return
        call.suspend(payload)
        return
    try:
        if tool.output_schema is not None and not isinstance(out, tool.output_schema):
            out = tool.output_schema.model_validate(out)
        result = to_jsonable_python(out)
    except (ValidationError, TypeError, ValueError) as exc:
        message = f"Tool {call.name!r} returned an invalid result: {exc}"
        call.resolve("error", message)
        yield make_chunk("tool-error", run_id, tool_call_id=call.id, tool_name=call.name, error=message)
        return
    call.resolve("result", result)
    yield make_chunk("tool-result", run_id, tool_call_id=call.id, tool_name=call.name, result=result, is_error=False)


async def _delegate(agent: AgentDefinition, state: RunState, call: CallState, rt: RunContext) -> AsyncIterator[Chunk]:
    """Run (or continue) a sub-agent as a nested run; its final text is the tool's result."""
    sub = agent.delegates[call.name]
    child = call.child
    if child is None:
        child = child_state(sub, parent=state, prompt=DelegateInput.model_validate(call.args).prompt)
    call.delegate(child)
    try:
        # A sub-agent's own chunks stay inside it: the top stream shows the
        # delegation's result, and every call waiting for a decision at any depth
        # is announced by the top run once its snapshot is stored.
        async for _ in drive(sub, child, rt):
            pass
    except WardenError as exc:
        call.resolve("error", f"Sub-agent {sub.id!r} failed: {exc.message}")
        yield make_chunk("tool-error", state.run_id, tool_call_id=call.id, tool_name=call.name, error=call.result)
        return
    if child.outcome == "suspended":
        return
    text = "".join(m.content for m in child.messages[-1:] if m.role == "assistant")
    call.resolve("result", text)
    yield make_chunk(
        "tool-result", state.run_id, tool_call_id=call.id, tool_name=call.name, result=text, is_error=False
    )


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
        request_context=parent.request_context,
        created_at=parent.created_at,
    )
