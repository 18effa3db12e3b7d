"""Warden's approval question for a framework's call that the framework itself did not mark.

The same rule as Warden's own run loop for a tool whose ``require_approval`` is unset: the run's
stored policy (the request's ``require_tool_approval`` flag or function, else the agent's default
option) decides; a function that is gone (another process) or raises means "approval required".
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any

from agent_core.call_state import RunState
from agent_core.definition import AgentDefinition, ToolCallInfo
from agent_core.engine import Execution


class WardenGate:
    """Answers a framework hook's "does Warden want this call approved first?" for one run."""

    def __init__(self, agent: AgentDefinition, state: RunState, rt: Execution) -> None:
        self.agent, self.state, self.rt = agent, state, rt

    @property
    def asks(self) -> bool:
        return self.state.policy != "none"

    async def requires_approval(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        answer = self._ask(tool_name, args, tool_call_id)
        if isinstance(answer, bool):
            return answer
        try:
            return bool(await answer)
        except Exception:
            return True  # a policy that fails asks for approval

    def requires_approval_now(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        """For hooks that cannot await (LangChain's ``when``): an async policy function means "ask"."""
        answer = self._ask(tool_name, args, tool_call_id)
        if isinstance(answer, bool):
            return answer
        close = getattr(answer, "close", None)
        if close is not None:
            close()  # never awaited: fail closed
        return True

    def _ask(self, tool_name: str, args: dict[str, Any], tool_call_id: str) -> bool | Awaitable[Any]:
        policy = self.state.policy
        if policy in ("all", "none"):
            return policy == "all"
        fn = self.rt.request_policy if policy == "request_fn" else self.agent.default_policy_fn()
        if fn is None:
            return True  # a function cannot be stored: in another process it counts as "approval required"
        try:
            out = fn(
                ToolCallInfo(
                    tool_name=tool_name,
                    args=args,
                    request_context=self.state.request_context,
                    tool_call_id=tool_call_id,
                    agent_id=self.agent.id,
                )
            )
        except Exception:
            return True  # a policy that fails asks for approval
        return out if inspect.isawaitable(out) else bool(out)
