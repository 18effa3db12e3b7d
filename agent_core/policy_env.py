"""``--policy FILE`` / ``WARDEN_POLICY`` and ``--shadow-policy FILE`` / ``WARDEN_SHADOW_POLICY``.

The command line names policy files through the environment (as ``--db`` names the store
through ``WARDEN_DB``), so every way a runtime is loaded (the demo agents, ``--app``,
``warden serve``'s worker) applies the same files. A file whose self-tests fail is
refused: a policy is enforced only once its own examples hold.
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


def apply_policy_env(runtime: Runtime) -> Runtime:
    """Give ``runtime`` the policies ``WARDEN_POLICY`` / ``WARDEN_SHADOW_POLICY`` name (they replace its own)."""
    path = os.environ.get(POLICY_ENV)
    if path:
        runtime.policy = load_checked(path)
    shadow = os.environ.get(SHADOW_POLICY_ENV)
    if shadow:
        runtime.shadow_policy = load_checked(shadow)
    return runtime
