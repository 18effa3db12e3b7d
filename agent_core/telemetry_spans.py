"""The spans and metrics themselves (``opentelemetry-api``), imported only once a provider is set.

``agent_core.telemetry`` decides whether to come here; this module builds the spans with explicit
parents and records the three metrics (docs/operations.md "Traces and metrics").
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from agent_core.call_state import CallState, RunState
    from agent_core.models import ModelResponse

__all__ = ["RunTrace", "chat_done", "decided", "end_span", "gated", "settled_at_gate"]

_PROPAGATOR = TraceContextTextMapPropagator()


class _Instruments:
    """The three metrics, made on first use (after a provider is set)."""

    def __init__(self) -> None:
        meter = metrics.get_meter("warden")
        self.pending = meter.create_up_down_counter(
            "warden.approvals.pending", unit="{call}", description="tool calls waiting for a decision"
        )
        self.wait = meter.create_histogram("warden.approval.wait", unit="s", description="time from gating to decision")
        self.decisions = meter.create_counter(
            "warden.decisions", unit="{decision}", description="decisions on gated calls, by outcome"
        )


_instruments: _Instruments | None = None


def _metrics() -> _Instruments:
    global _instruments
    if _instruments is None:
        _instruments = _Instruments()
    return _instruments


def _tracer() -> trace.Tracer:
    return trace.get_tracer("warden")


def _context_of(traceparent: str | None) -> Context | None:
    return _PROPAGATOR.extract({"traceparent": traceparent}) if traceparent else None


def _traceparent(span: Span) -> str | None:
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent")


def _ns(epoch_seconds: float) -> int:
    return int(epoch_seconds * 1e9)


def end_span(span: Span, error: str | None = None) -> None:
    """End ``span``, marked as an error when ``error`` says what failed."""
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, error))
    span.end()


def chat_done(span: Span, response: ModelResponse | None, error: str | None) -> None:
    """End a ``chat`` span with the tokens the model reported."""
    if response is not None and response.usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
    end_span(span, error)


def _run_attributes(agent_id: str, state: RunState) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.agent.id": agent_id, "warden.run.id": state.run_id}
    if state.thread_id is not None:
        attrs["gen_ai.conversation.id"] = state.thread_id
    return attrs


class RunTrace:
    """The spans of one advance of a run: ``invoke_agent`` and, below it, ``chat`` and ``execute_tool``.

    Spans are started with explicit parents (never made current across a ``yield``), so a run driven
    by any task or generator nests correctly; sub-agents nest under their delegation's span.
    """

    def __init__(self, agent_id: str, state: RunState) -> None:
        self._parents: dict[int, Context] = {}
        self._tools: dict[str, Span] = {}
        # A resumed run is a child of its first invoke_agent (already exported); a new one of the caller's span.
        self.root = self._invoke(agent_id, state, _context_of(state.traceparent))
        if state.traceparent is None:
            state.traceparent = _traceparent(self.root)

    def _invoke(self, agent_id: str, state: RunState, parent: Context | None) -> Span:
        attrs = _run_attributes(agent_id, state)
        attrs["gen_ai.operation.name"] = "invoke_agent"
        span = _tracer().start_span(f"invoke_agent {agent_id}", context=parent, attributes=attrs)
        self._parents[id(state)] = trace.set_span_in_context(span)
        return span

    chat_done = staticmethod(chat_done)
    end_span = staticmethod(end_span)

    def end(self, state: RunState, error: str | None) -> None:
        self.root.set_attribute("warden.run.outcome", state.outcome)
        end_span(self.root, error)

    def chat(self, agent_id: str, state: RunState, model_id: str) -> Span:
        attrs = _run_attributes(agent_id, state)
        attrs["gen_ai.operation.name"] = "chat"
        attrs["gen_ai.request.model"] = model_id
        return _tracer().start_span(f"chat {model_id}", context=self._parents.get(id(state)), attributes=attrs)

    def tool(self, agent_id: str, state: RunState, call: CallState) -> Span:
        attrs = _run_attributes(agent_id, state)
        attrs["gen_ai.operation.name"] = "execute_tool"
        attrs["gen_ai.tool.name"] = call.name
        attrs["gen_ai.tool.call.id"] = call.id
        span = _tracer().start_span(f"execute_tool {call.name}", context=self._parents.get(id(state)), attributes=attrs)
        self._tools[call.id] = span
        return span

    def tool_done(self, call: CallState) -> None:
        span = self._tools.pop(call.id, None)
        if span is not None:
            end_span(span, str(call.result) if call.result_kind == "error" else None)

    def sub_agent(self, call: CallState, agent_id: str, child: RunState) -> Span:
        """The nested ``invoke_agent`` of a sub-agent, under its delegation's ``execute_tool`` span."""
        parent = self._tools.get(call.id)
        return self._invoke(agent_id, child, None if parent is None else trace.set_span_in_context(parent))

    def context_of(self, state: RunState) -> Context | None:
        return self._parents.get(id(state))


def gated() -> None:
    """A call started waiting for a decision."""
    _metrics().pending.add(1)


def settled_at_gate(rt_trace: RunTrace | None, state: RunState, call: CallState, decision: str) -> None:
    """A gated call granted or blocked without waiting: a zero-length ``await_approval``."""
    _metrics().decisions.add(1, {"decision": decision})
    attrs = _approval_attributes(state.run_id, call, decision, None, 0.0)
    if call.grant_id is not None:
        attrs["warden.grant.id"] = call.grant_id
    parent = rt_trace.context_of(state) if rt_trace is not None else None
    _tracer().start_span(f"await_approval {call.name}", context=parent, attributes=attrs).end()


def decided(top: RunState, call: CallState, decision: str, actor: str | None) -> None:
    """A decision on a gated call was applied here: end its wait as an ``await_approval`` span.

    The span starts when the call was gated (``pending_since``, stored) and is a child of the run's
    first ``invoke_agent`` span, whichever process gated it.
    """
    now = time.time()
    waited = max(0.0, now - call.pending_since) if call.pending_since else 0.0
    ins = _metrics()
    ins.pending.add(-1)
    ins.wait.record(waited, {"decision": decision})
    ins.decisions.add(1, {"decision": decision})
    attrs = _approval_attributes(top.run_id, call, decision, actor, waited)
    span = _tracer().start_span(
        f"await_approval {call.name}",
        context=_context_of(top.traceparent),
        attributes=attrs,
        start_time=_ns(call.pending_since or now),
    )
    span.end(end_time=_ns(now))


def _approval_attributes(
    run_id: str, call: CallState, decision: str, actor: str | None, waited: float
) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "warden.run.id": run_id,
        "warden.approval.decision": decision,
        "warden.approval.fingerprint": call.fingerprint,
        "warden.approval.wait_ms": round(waited * 1000.0, 3),
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
    }
    if actor is not None:
        attrs["warden.approval.actor"] = actor
    if call.policy_version is not None:  # the policy that gated (or blocked) the call
        attrs["warden.policy.version"] = call.policy_version
    if call.policy_rule is not None:
        attrs["warden.policy.rule"] = call.policy_rule
    return attrs
