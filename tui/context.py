"""The console's names for a stored run's context (defined in ``agent_core.decision_context``,
shared with ``warden runs show`` and the server's context route)."""

from __future__ import annotations

from agent_core.decision_context import DecisionRecord as Decision
from agent_core.decision_context import RunContextView as RunContext
from agent_core.decision_context import describer, run_context

__all__ = ["Decision", "RunContext", "describer", "run_context"]
