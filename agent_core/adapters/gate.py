"""Warden's approval question for a framework's call that the framework itself did not mark.

The same rules as Warden's own run loop (``agent_core.engine``): the run's stored policies
(``Policy`` objects: the runtime's and the request's, evaluated by ``agent_core.policy_gate``)
come first, and a policy ``ask`` or ``deny`` stops the call whatever else says; otherwise the
request's ``require_tool_approval`` flag or function, else the agent's default option, decides;
a function that is gone (another process) or raises means "approval required".

The framework's hook only learns "stop this call"; what a stopped call becomes (blocked by a deny,
waiting with its rule and quorum, approved by a grant) is ``FrameworkAgent._gate``'s to say, from
``policy_ruling`` again: the same inputs, so the same answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Mapping
from typing import Any

from pydantic import ValidationError

from agent_core.call_state import CallState, RunState
from agent_core.definition import AgentDefinition, ToolCallInfo
from agent_core.engine import Execution
from agent_core.policy import PolicyDecision
from agent_core.policy_gate import run_policies, validated_args, verdict

__all__ = ["WardenGate", "policy_ruling"]


def policy_ruling(
    agent: AgentDefinition, state: RunState, tool_name: str, args: Mapping[str, Any]
) -> PolicyDecision | None:
    """What the run's stored policies decide for a call (None: the run has none).

    ``args`` are validated against the tool's schema first, as the engine does (a rule sees what
    ``execute`` would receive); a tool Warden does not know, or arguments that do not validate (the
    framework reports those to the model itself), are evaluated as the model sent them."""
    if not state.policies:
        return None
    tool = agent.tools.get(tool_name)
    seen: Mapping[str, Any] = args
    if tool is not None:
        try:
            seen = validated_args(tool.input_schema, args)
        except ValidationError:
            pass
    return verdict(run_policies(state), state, CallState(id="", name=tool_name, args=dict(args)), seen)


def _may_stop(body: Mapping[str, Any]) -> bool:
    """Whether a stored policy could ever say ask or deny (a rule's ``when`` that fails to evaluate asks)."""
    if body.get("default") != "allow":
        return True
    return any(rule.get("decision") != "allow" or rule.get("when") is not None for rule in body.get("rules", []))


class WardenGate:
    """Answers a framework hook's "does Warden want this call stopped first?" for one run."""

    def __init__(self, agent: AgentDefinition, state: RunState, rt: Execution) -> None:
        self.agent, self.state, self.rt = agent, state, rt

    @property
    def asks(self) -> bool:
        """False when nothing could ever stop a call (no request flag or function, no policy that can
        say ask or deny): the adapters then install no hook in the framework."""
        return self.state.policy != "none" or any(_may_stop(body) for body in self.state.policies.values())

    async def requires_approval(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        if self._policy_stops(tool_name, args):
            return True
        answer = self._ask(tool_name, args, tool_call_id)
        if isinstance(answer, bool):
            return answer
        try:
            return bool(await answer)
        except Exception:
            return True  # a policy that fails asks for approval

    def requires_approval_now(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        """For hooks that cannot await (LangChain's ``when``): an async policy function means "ask"."""
        if self._policy_stops(tool_name, args):
            return True
        answer = self._ask(tool_name, args, tool_call_id)
        if isinstance(answer, bool):
            return answer
        close = getattr(answer, "close", None)
        if close is not None:
            close()  # never awaited: fail closed
        return True

    def _policy_stops(self, tool_name: str, args: dict[str, Any]) -> bool:
        """A policy ``ask`` (or a rule that failed to evaluate) waits; a ``deny`` is refused: both stop."""
        ruling = policy_ruling(self.agent, self.state, tool_name, args)
        return ruling is not None and ruling.decision != "allow"

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
