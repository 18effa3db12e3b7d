"""Whether to trace, asked cheaply: OpenTelemetry spans and metrics of runs, tool calls and the human wait.

Only ``opentelemetry-api`` is used: everything is a no-op until the application (or ``warden
serve`` / the console, from ``OTEL_*`` variables) installs an SDK. ``active()`` is asked once per
advance of a run, per gated call and per decision; while it says no, no span or attribute is built
and the API is not even imported (``agent_core.telemetry_spans`` holds the spans themselves).

The run's W3C ``traceparent`` (its first ``invoke_agent`` span) is stored in its snapshot; a
decision taken in any process makes its ``await_approval`` span (started when the call was gated)
and the resumed ``invoke_agent`` children of that span, so one run is one trace.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_core.call_state import CallState, RunState
    from agent_core.telemetry_spans import RunTrace


__all__ = ["RECHECK_SECONDS", "active", "decided", "gated", "provider_set", "settled_at_gate", "start_run"]

#: how often, at most, ``active()`` looks for a provider while none is set (seconds).
RECHECK_SECONDS = 1.0
_API_MODULES = ("opentelemetry.trace", "opentelemetry.metrics")
#: set, the API loads a provider named by these on first use, even before the application imports it.
_PROVIDER_VARIABLES = ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
_on = False
_recheck_at = 0.0


def active() -> bool:
    """True once the application set a real tracer or meter provider (the API's own are no-ops).

    Asking the API costs microseconds (it reads the environment each time while no provider is
    set), a few percent of an approval cycle: a "no" is kept for ``RECHECK_SECONDS``, so a provider
    set later is picked up within a second, and a "yes" is kept for good (providers are set once).
    """
    global _on, _recheck_at
    if _on:
        return True
    now = time.monotonic()
    if now < _recheck_at:
        return False
    _recheck_at = now + RECHECK_SECONDS
    _on = provider_set()
    return _on


def provider_set() -> bool:
    """Whether a tracer or meter provider other than the API's no-op is set (asked now, not cached)."""
    if not any(m in sys.modules for m in _API_MODULES) and not any(v in os.environ for v in _PROVIDER_VARIABLES):
        return False  # nobody imported the API: nobody can have set a provider (and importing it costs ~20 ms)
    from opentelemetry import metrics, trace

    providers = (trace.get_tracer_provider(), metrics.get_meter_provider())
    return any(not type(p).__module__.startswith(_API_MODULES) for p in providers)


def start_run(agent_id: str, state: RunState) -> RunTrace | None:
    """The spans of one advance of ``state`` (its ``invoke_agent`` started), or None when not tracing."""
    if not active():
        return None
    from agent_core.telemetry_spans import RunTrace

    return RunTrace(agent_id, state)


def gated() -> None:
    """A call started waiting for a decision (``warden.approvals.pending``)."""
    if active():
        from agent_core import telemetry_spans

        telemetry_spans.gated()


def settled_at_gate(rt_trace: RunTrace | None, state: RunState, call: CallState, decision: str) -> None:
    """A gated call settled without waiting: ``granted`` (a live grant approved it) or ``blocked`` (a
    policy denied it). Its ``await_approval`` lasts zero."""
    if active():
        from agent_core import telemetry_spans

        telemetry_spans.settled_at_gate(rt_trace, state, call, decision)


def decided(top: RunState, call: CallState, decision: str, actor: str | None) -> None:
    """A decision on a gated call was applied here: its ``await_approval`` span and the metrics."""
    if active():
        from agent_core import telemetry_spans

        telemetry_spans.decided(top, call, decision, actor)
