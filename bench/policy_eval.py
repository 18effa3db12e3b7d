"""Policy evaluation per call (µs): the two CEL engines on a two-clause rule, and a whole policy.

Usage: python bench/policy_eval.py [evaluations]
Chose the CEL engine: ``common-expression-language`` (Rust, the dependency) vs
``cel-python`` (pure Python, behind the same interface in ``agent_core.policy_cel``).
"""

from __future__ import annotations

import sys
import time

import _common  # noqa: F401  (puts the project on sys.path)

from agent_core.policy import Policy, cel_variables
from agent_core.policy_cel import engine

RULE = 'tool == "issue_refund" && args.amount > 1000'
POLICY = {
    "default": "allow",
    "rules": [
        {
            "id": "big-refunds",
            "tools": ["issue_refund"],
            "when": "args.amount > 1000",
            "decision": "ask",
            "approvers": 2,
        },
        {
            "id": "prod-deletes",
            "tools": ["delete_*"],
            "when": 'has(context.env) && context.env == "prod"',
            "decision": "deny",
        },
        {"id": "reads", "tools": ["get_*", "list_*"], "decision": "allow"},
    ],
}


def per_call_us(fn, n: int) -> float:
    for _ in range(min(n, 500)):
        fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def main(n: int) -> None:
    variables = cel_variables("issue_refund", {"amount": 5000}, agent_id="ops", request_context={"env": "prod"})
    print(f"policy evaluation, {n} evaluations each (µs per call; the machine is shared, figures are noisy)")
    for name in ("rust", "python"):
        eng = engine(name)
        t0 = time.perf_counter()
        compiled = eng.compile(RULE)
        compile_ms = (time.perf_counter() - t0) * 1000
        assert compiled(eng.prepare(variables, compiled.names)) is True
        us = per_call_us(lambda c=compiled, e=eng: c(e.prepare(variables, c.names)), n)
        print(f"  two-clause rule, {eng.name:<28} {us:8.1f} µs/eval   (first compile, with import {compile_ms:.1f} ms)")
    for name in ("rust", "python"):
        policy = Policy.from_dict(POLICY, engine_name=name)
        args = {"amount": 5000}
        us = per_call_us(
            lambda p=policy, a=args: p.evaluate("issue_refund", a, agent_id="ops", request_context={"env": "prod"}), n
        )
        print(f"  Policy.evaluate, 3 rules, {policy.engine.name:<27} {us:8.1f} µs/call")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
