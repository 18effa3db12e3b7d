"""``--policy FILE`` / ``WARDEN_POLICY`` and ``--shadow-policy FILE`` / ``WARDEN_SHADOW_POLICY``.

The command line checks the files it is given (``--policy``, else the variable) and hands
their paths to whatever loads the runtime (``load_runtime``, the demo agents, ``warden
serve``), as it hands over ``--db``; a loader given none reads the variables. A file whose
self-tests fail is refused: a policy is enforced only once its own examples hold.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agent_core.errors import PolicyInvalid
from agent_core.policy import Policy

if TYPE_CHECKING:
    from agent_core.runtime import Runtime

POLICY_ENV = "WARDEN_POLICY"
SHADOW_POLICY_ENV = "WARDEN_SHADOW_POLICY"


def load_checked(path: str) -> Policy:
    """The policy in ``path``, compiled and self-tested (``PolicyInvalid`` naming the first failure)."""
    policy = Policy.load(path)
    failures = policy.check()
    if failures:
        more = f" (and {len(failures) - 1} more; see `warden policy check {path}`)" if len(failures) > 1 else ""
        raise PolicyInvalid(f"policy file {path!r}: self-test failed: {failures[0]}{more}")
    return policy


def apply_policy_env(runtime: Runtime, policy: str | None = None, shadow_policy: str | None = None) -> Runtime:
    """Give ``runtime`` the policy files ``policy`` / ``shadow_policy`` name, else those of
    ``WARDEN_POLICY`` / ``WARDEN_SHADOW_POLICY`` (they replace its own)."""
    path = policy or os.environ.get(POLICY_ENV)
    if path:
        runtime.policy = load_checked(path)
    shadow = shadow_policy or os.environ.get(SHADOW_POLICY_ENV)
    if shadow:
        runtime.shadow_policy = load_checked(shadow)
    return runtime
