"""Warden's approval question for a framework's call that the framework itself did not mark.

The same rules as Warden's own run loop (``agent_core.engine``): the run's stored policies
(``Policy`` objects: the runtime's and the request's, evaluated by ``agent_core.policy_gate``)
come first, and a policy ``ask`` or ``deny`` stops the call whatever else says; otherwise the
request's ``require_tool_approval`` flag or function, else the agent's default option, decides;
a function that is gone (another process) or raises means "approval required".

The framework's hook only learns "stop this call"; what a stopped call becomes (blocked by a deny,
waiting with its rule and quorum, approved by a grant) is ``FrameworkAgent._gate``'s to say, from
``policy_ruling`` again: the same inputs, so the same answer. The calls the hook lets run are
kept (``allowed``) for the shadow policy's audit, which the framework's run cannot write itself.
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

__all__ = ["WardenGate", "policy_args", "policy_ruling"]


def policy_ruling(
    agent: AgentDefinition, state: RunState, tool_name: str, args: Mapping[str, Any]
) -> PolicyDecision | None:
    """What the run's stored policies decide for a call (None: the run has none).

    ``args`` are validated against the tool's schema first, as the engine does (a rule sees what
    ``execute`` would receive); a tool Warden does not know, or arguments that do not validate (the
    framework reports those to the model itself), are evaluated as the model sent them."""
    if not state.policies:
        return None
    seen = policy_args(agent, tool_name, args)
    return verdict(run_policies(state), state, CallState(id="", name=tool_name, args=dict(args)), seen)


def policy_args(agent: AgentDefinition, tool_name: str, args: Mapping[str, Any]) -> Mapping[str, Any]:
    """The arguments a rule sees: validated and dumped by the tool's schema, else as the model sent them."""
    tool = agent.tools.get(tool_name)
    if tool is not None:
        try:
            return validated_args(tool.input_schema, args)
        except ValidationError:
            pass
    return args


def _may_stop(body: Mapping[str, Any]) -> bool:
    """Whether a stored policy could ever say ask or deny (a rule's ``when`` that fails to evaluate asks)."""
    if body.get("default") != "allow":
        return True
    return any(rule.get("decision") != "allow" or rule.get("when") is not None for rule in body.get("rules", []))


class WardenGate:
    """Answers a framework hook's "does Warden want this call stopped first?" for one run."""

    def __init__(self, agent: AgentDefinition, state: RunState, rt: Execution) -> None:
        self.agent, self.state, self.rt = agent, state, rt
        #: calls the hook let run, by tool-call id (for the shadow policy's audit; only with one).
        self.allowed: dict[str, CallState] = {}

    @property
    def asks(self) -> bool:
        """False when nothing could ever stop a call (no request flag or function, no policy that can
        say ask or deny) and no shadow policy watches: the adapters then install no hook in the framework."""
        return (
            self.state.policy != "none"
            or self.rt.shadow_policy is not None
            or any(_may_stop(body) for body in self.state.policies.values())
        )

    async def requires_approval(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        ruling = policy_ruling(self.agent, self.state, tool_name, args)
        if ruling is not None and ruling.decision != "allow":
            return True  # a policy ask (or a rule that failed to evaluate) waits; a deny is refused
        answer = self._ask(tool_name, args, tool_call_id)
        if not isinstance(answer, bool):
            try:
                answer = bool(await answer)
            except Exception:
                answer = True  # a policy that fails asks for approval
        if not answer:
            self._let_run(tool_name, args, tool_call_id, ruling)
        return answer

    def requires_approval_now(self, tool_name: str, args: dict[str, Any], tool_call_id: str = "") -> bool:
        """For hooks that cannot await (LangChain's ``when``): an async policy function means "ask"."""
        ruling = policy_ruling(self.agent, self.state, tool_name, args)
        if ruling is not None and ruling.decision != "allow":
            return True
        answer = self._ask(tool_name, args, tool_call_id)
        if not isinstance(answer, bool):
            close = getattr(answer, "close", None)
            if close is not None:
                close()  # never awaited: fail closed
            return True
        if not answer:
            self._let_run(tool_name, args, tool_call_id, ruling)
        return answer

    def _let_run(self, tool_name: str, args: dict[str, Any], tool_call_id: str, ruling: PolicyDecision | None) -> None:
        if self.rt.shadow_policy is None or not tool_call_id:
            return
        call = CallState(id=tool_call_id, name=tool_name, args=dict(args))
        if ruling is not None:
            call.policy_version, call.policy_rule = ruling.version, ruling.rule_id
        self.allowed[tool_call_id] = call

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
