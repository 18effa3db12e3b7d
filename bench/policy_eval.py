"""Policy evaluation per call (µs): the two CEL engines on a two-clause rule, and a whole policy.

Usage: python bench/policy_eval.py [evaluations]
Also: a shell tool's call of a 3-segment command under the ready coding-agent policy of
docs/policy.md (``docs/policies/coding-agent.toml``): parsed each time (a fresh text per
evaluation, so the parse cache never answers) and with the text seen before (cached).
Chose the CEL engine: ``common-expression-language`` (Rust, the dependency) vs
``cel-python`` (pure Python, behind the same interface in ``agent_core.policy_cel``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import _common  # noqa: F401  (puts the project on sys.path)
from _common import per_call_us

from agent_core import shell_segments
from agent_core.policy import Policy, cel_variables
from agent_core.policy_cel import engine

CODING = Path(__file__).resolve().parent.parent / "docs" / "policies" / "coding-agent.toml"
THREE = "git status --short && ls -la src | grep -c py"

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
    coding = Policy.load(CODING)
    d = coding.evaluate("bash", {"command": THREE})
    assert d.decision == "allow" and len(d.segments) == 3, d
    counter = iter(range(10**9))
    fresh = per_call_us(lambda: coding.evaluate("bash", {"command": f"{THREE} # {next(counter)}"}), n)
    cached = per_call_us(lambda: coding.evaluate("bash", {"command": THREE}), n)
    parse = per_call_us(lambda: shell_segments._parse_uncached(THREE), n)
    print(f"  3-segment shell command, coding-agent policy ({len(coding.rules)} rules): {fresh:8.1f} µs/call "
          f"parsed each time, {cached:.1f} µs with the text cached; the parse alone {parse:.1f} µs")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
