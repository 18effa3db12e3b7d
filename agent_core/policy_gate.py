"""The policies of a run, as the run loop and the decisions use them.

A run stores the policies it started under (``RunState.policies``: version -> body), so
a later step or a decision in another process, with another policy or none, evaluates
the same rules. Compiled policies are cached by version: a stored body is compiled
once per process, not once per call.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from agent_core.call_state import CallState, RunState
from agent_core.errors import CorruptSnapshot, PolicyInvalid
from agent_core.policy import Policy, PolicyDecision, cel_variables, combine

__all__ = [
    "blocked_message",
    "policy_detail",
    "remember",
    "request_policy",
    "run_policies",
    "verdict",
    "with_policy",
]

_CACHE: OrderedDict[str, Policy] = OrderedDict()
_CACHE_SIZE = 64


def remember(policy: Policy) -> dict[str, Any]:
    """Cache ``policy`` by version (this process need not compile it again); its stored form."""
    _CACHE[policy.version] = policy
    _CACHE.move_to_end(policy.version)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return policy.body()


def run_policies(state: RunState) -> list[Policy]:
    """The run's stored policies, compiled (from the cache when this process has seen the version).

    A stored body that does not compile, or does not hash to its version, is ``CorruptSnapshot``:
    never a guess at what the rules were."""
    out: list[Policy] = []
    for version, body in state.policies.items():
        policy = _CACHE.get(version)
        if policy is None:
            try:
                policy = Policy.from_dict(body)
            except PolicyInvalid as exc:
                raise CorruptSnapshot(
                    f"run {state.run_id!r}: stored policy {version} is invalid: {exc.message}"
                ) from exc
            if policy.version != version:
                raise CorruptSnapshot(
                    f"run {state.run_id!r}: stored policy {version} hashes to {policy.version} (altered)"
                )
            remember(policy)
        out.append(policy)
    return out


def with_policy(policies: dict[str, dict[str, Any]], policy: Policy | None) -> dict[str, dict[str, Any]]:
    """``policies`` (version -> body) with ``policy`` added after them (None: unchanged)."""
    if policy is None or policy.version in policies:
        return policies
    return {**policies, policy.version: remember(policy)}


def request_policy(value: Any) -> Policy | None:
    """A ``require_tool_approval=`` (or agent default) that is a ``Policy``, else None."""
    return value if isinstance(value, Policy) else None


def verdict(policies: list[Policy], state: RunState, call: CallState, args: Mapping[str, Any]) -> PolicyDecision | None:
    """What the run's policies decide for ``call`` (validated ``args``); None when the run has none."""
    if not policies:
        return None
    variables = cel_variables(
        call.name,
        args,
        agent_id=state.agent_id,
        agent_path=state.agent_path,
        thread_id=state.thread_id,
        resource_id=state.resource_id,
        request_context=state.request_context,
    )
    return combine(policies, variables)


def validated_args(schema: type[BaseModel], args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as ``execute`` receives them, dumped (what a rule's ``args`` sees)."""
    dumped: dict[str, Any] = schema.model_validate(dict(args)).model_dump(mode="json")
    return dumped


def blocked_message(d: PolicyDecision) -> str:
    """What the model is told when a policy denies a call."""
    if d.rule_id is None:
        text = "Blocked by policy (default deny)"
    else:
        text = f"Blocked by policy rule {d.rule_id}: {d.reason}" if d.reason else f"Blocked by policy rule {d.rule_id}"
    denied = next((s for s in d.segments if s.decision == "deny"), None)
    if denied is not None:  # a command tool: which command inside the line was denied
        shown = denied.text if len(denied.text) <= 200 else denied.text[:199] + "…"
        text += f" (in `{shown}`)"
    return text


def policy_detail(detail: dict[str, Any] | None, call: CallState | None) -> dict[str, Any] | None:
    """An audit entry's ``detail`` with the call's ``policy_version`` and ``policy_rule`` (runs with a policy)."""
    if call is None or call.policy_version is None:
        return detail
    return {**(detail or {}), "policy_version": call.policy_version, "policy_rule": call.policy_rule}


def shadow_finding(
    shadow: Policy, state: RunState, call: CallState, enforced: str, args: Mapping[str, Any]
) -> tuple[str | None, dict[str, Any]] | None:
    """The ``policy-shadow`` entry (reason, detail) when the candidate policy would have decided ``call``
    otherwise than ``enforced`` (or by another rule); ``None`` when it agrees. One comparison for the
    engine and the framework adapters."""
    candidate = verdict([shadow], state, call, args)
    assert candidate is not None
    if candidate.decision == enforced and (call.policy_version is None or candidate.rule_id == call.policy_rule):
        return None
    return candidate.error, shadow_detail(enforced, call, candidate)


def shadow_detail(enforced: str, call: CallState, candidate: PolicyDecision) -> dict[str, Any]:
    """A ``policy-shadow`` entry: the enforced decision and rule, the candidate's version, decision and rule."""
    return {
        "decision": enforced,
        "policy_version": call.policy_version,
        "policy_rule": call.policy_rule,
        "shadow_version": candidate.version,
        "shadow_decision": candidate.decision,
        "shadow_rule": candidate.rule_id,
    }
