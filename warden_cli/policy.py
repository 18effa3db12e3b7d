"""``warden policy check FILE`` and ``warden policy explain FILE --tool T --args JSON``.

A policy is reviewed like code: ``check`` compiles it and runs its self-tests (one line
per failure, exit 1), ``explain`` shows what it decides for one call and why. No UI
import: both work on a server without a terminal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from warden_cli.common import fail

policy_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Policy files: check them (compile + self-tests) and explain their decisions.",
)

FileArg = Annotated[Path, typer.Argument(help="The policy file (TOML)", show_default=False)]


def _load(path: Path) -> Any:
    from agent_core.errors import PolicyInvalid
    from agent_core.policy import Policy

    try:
        return Policy.load(path)
    except PolicyInvalid as exc:
        fail(exc.message)


def _json_object(text: str | None, option: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        fail(f"{option} is not valid JSON: {exc}", code=2)
    if not isinstance(value, dict):
        fail(f"{option} must be a JSON object, not {type(value).__name__}", code=2)
    return value


@policy_app.command("check")
def check_command(file: FileArg) -> None:
    """Compile the policy and run its match / not_match self-tests."""
    policy = _load(file)
    failures = policy.check()
    for line in failures:
        typer.echo(f"{file}: {line}", err=True)
    if failures:
        raise typer.Exit(1)
    tests = sum(len(r.match) + len(r.not_match) for r in policy.rules)
    typer.echo(f"{file}: ok, {len(policy.rules)} rules, {tests} self-tests pass; version {policy.version}")


@policy_app.command("explain")
def explain_command(
    file: FileArg,
    tool: Annotated[str, typer.Option("--tool", help="The tool's name, as the model sees it")],
    args: Annotated[str | None, typer.Option("--args", help="The call's arguments (a JSON object)")] = None,
    context: Annotated[str | None, typer.Option("--context", help="The request context (a JSON object)")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="The agent's id")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="The thread id")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="The resource id")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object")] = False,
) -> None:
    """What the policy decides for one call, which rule decided, and every rule that matched."""
    from agent_core.policy import cel_variables
    from agent_core.policy_cel import CelError

    policy = _load(file)
    variables = cel_variables(
        tool,
        _json_object(args, "--args"),
        agent_id=agent,
        thread_id=thread,
        resource_id=resource,
        request_context=_json_object(context, "--context"),
    )
    decision = policy.evaluate(
        tool,
        variables["args"],
        agent_id=agent,
        thread_id=thread,
        resource_id=resource,
        request_context=variables["context"],
    )
    matched: list[dict[str, Any]] = []
    for rule in policy.rules:
        try:
            if policy.rule_holds(rule, variables):
                matched.append({"rule": rule.id, "decision": rule.decision})
        except CelError as exc:
            matched.append({"rule": rule.id, "decision": "ask", "error": str(exc)})
    if as_json:
        out = {
            "decision": decision.decision,
            "policy_rule": decision.rule_id,
            "approvers": decision.approvers,
            "reason": decision.reason,
            "policy_version": decision.version,
            "error": decision.error,
            "matched": matched,
            "segments": [seg.to_dict() for seg in decision.segments],
        }
        typer.echo(json.dumps(out, ensure_ascii=False))
        return
    rule = f"rule {decision.rule_id}" if decision.rule_id else f"no rule matched (default {policy.default})"
    line = f"{decision.decision}: {rule}"
    if decision.reason:
        line += f": {decision.reason}"
    if decision.decision == "ask" and decision.approvers > 1:
        line += f" ({decision.approvers} approvers)"
    typer.echo(line)
    for m in matched:
        note = f"  error: {m['error']}" if "error" in m else ""
        typer.echo(f"  matched {m['rule']} -> {m['decision']}{note}")
    if decision.segments:
        from agent_core.untrusted_text import escape_unsafe

        typer.echo(f"  {len(decision.segments)} command(s) in {tool}'s argument:")
        for seg in decision.segments:
            typer.echo(f"    {escape_unsafe(seg.describe(), multiline=False)}")
    typer.echo(f"  version {policy.version}")


PolicyOption = Annotated[
    str | None,
    typer.Option(
        "--policy", help="Enforce this policy file (TOML) on new runs [env: WARDEN_POLICY]", show_default=False
    ),
]
ShadowPolicyOption = Annotated[
    str | None,
    typer.Option(
        "--shadow-policy",
        help="Audit where this candidate policy would decide differently; never enforced [env: WARDEN_SHADOW_POLICY]",
        show_default=False,
    ),
]


def use_policy_files(policy: str | None, shadow_policy: str | None) -> tuple[str | None, str | None]:
    """``--policy`` / ``--shadow-policy`` (else their variables), checked now, before any UI or
    server starts: the paths to put in the command's ``Settings``, which hand them to wherever
    the runtime is loaded, as ``--db``. The process's environment is left as it was."""
    paths = (
        policy or os.environ.get("WARDEN_POLICY") or None,
        shadow_policy or os.environ.get("WARDEN_SHADOW_POLICY") or None,
    )
    if not any(paths):
        return paths  # nothing to check: agent_core is not imported for it
    from agent_core.errors import WardenError
    from agent_core.policy_env import load_checked

    for path in paths:
        if path:
            try:
                load_checked(path)
            except WardenError as exc:
                fail(exc.message, 2)
    return paths
