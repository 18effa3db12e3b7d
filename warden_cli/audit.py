"""``warden audit``: read the audit trail (who decided what, when), and ``warden audit verify`` its hash chain."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from warden_cli.common import (
    AppOption,
    DbOption,
    JsonOption,
    ServerOption,
    TokenOption,
    fail,
    merge_settings,
    run_on_runtime,
)

audit_app = typer.Typer(
    add_completion=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    help="The audit trail: every decision, who made it, chained by hashes.",
)

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(text: str) -> float:
    """``2026-01-31``, ``2026-01-31T12:00:00Z`` (UTC unless an offset is given), or ``90m`` / ``2h`` / ``7d`` ago."""
    m = _RELATIVE.match(text.strip())
    if m:
        return time.time() - float(m.group(1)) * _UNIT[m.group(2)]
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise typer.BadParameter(f"{text!r}: give an ISO 8601 time or an age like 30m, 2h, 7d") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _row(e: Any) -> str:
    when = e.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    extra = f"  {e.reason}" if e.reason else ""
    if e.args is not None:
        extra += f"  args={json.dumps(e.args, ensure_ascii=False)}"
    if e.grant_id:
        extra += f"  grant={e.grant_id}"
    if getattr(e, "policy_rule", None):
        extra += f"  rule={e.policy_rule}"
    who = e.actor or "-"
    return f"{e.seq:>6}  {when}  {who:<16} {e.decision:<20} {e.tool_name:<18} {e.run_id} {e.tool_call_id}{extra}"


@audit_app.callback()
def audit(
    ctx: typer.Context,
    run: Annotated[
        str | None, typer.Option("--run", help="Only this run (or a unique prefix of 6+ characters)")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent")] = None,
    actor: Annotated[str | None, typer.Option("--actor", help="Only decisions by this actor")] = None,
    decision: Annotated[str | None, typer.Option("--decision", help="Only this decision (e.g. declined)")] = None,
    since: Annotated[str | None, typer.Option("--since", help="ISO 8601 time, or an age: 30m, 2h, 7d")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many entries")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array")] = False,
    as_jsonl: Annotated[bool, typer.Option("--jsonl", help="One JSON object per line")] = False,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
) -> None:
    """List audit entries in order (oldest first)."""
    if ctx.invoked_subcommand is not None:  # ``warden audit --db X verify``: the options go on to it
        ctx.obj = merge_settings(ctx, db, app_spec, server, token, from_env=False)
        return
    ctx.obj = merge_settings(ctx, db, app_spec, server, token)
    if as_json and as_jsonl:
        fail("--json and --jsonl: choose one", 2)
    since_ts = parse_since(since) if since else None

    async def go(runtime: Any) -> None:
        run_id = run
        if run is not None:
            from agent_core.errors import InvalidRequest
            from warden_cli.runs import resolve_id

            try:  # a unique prefix of 6+ characters; a finished run's id is taken as given
                run_id = await resolve_id(runtime, run)
            except InvalidRequest:  # short: the id of a run no longer stored
                run_id = run
        entries: list[Any] = []
        after = 0
        while limit is None or len(entries) < limit:
            want = 500 if limit is None else min(500, limit - len(entries))
            page = await runtime.audit_log(
                run_id=run_id, agent_id=agent, actor=actor, since=since_ts, decision=decision, after=after, limit=want
            )
            entries.extend(page.entries)
            if as_jsonl:
                for e in page.entries:
                    typer.echo(json.dumps(e.model_dump(mode="json", by_alias=True), ensure_ascii=False))
            elif not as_json:
                for e in page.entries:
                    typer.echo(_row(e))
            if page.next_after is None:
                break
            after = page.next_after
        if as_json:
            typer.echo(json.dumps([e.model_dump(mode="json", by_alias=True) for e in entries], ensure_ascii=False))
        elif not as_jsonl and not entries:
            typer.echo("no audit entries", err=True)

    run_on_runtime(ctx.obj, go)


@audit_app.command("verify")
def verify(
    ctx: typer.Context,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check the hash chain of the whole trail; exit 1 naming the first broken entry."""
    outcome: dict[str, Any] = {}
    settings = merge_settings(ctx, db, app_spec, server, token)

    async def go(runtime: Any) -> None:
        outcome["report"] = await runtime.verify_audit()

    run_on_runtime(settings, go)
    report = outcome["report"]
    if as_json:
        keys = ("ok", "checked", "unsealed", "broken_seq", "problem")
        typer.echo(json.dumps({k: getattr(report, k) for k in keys}))
        if not report.ok:
            raise typer.Exit(1)
        return
    unsealed = f" ({report.unsealed} older entries from before the chain were not checked)" if report.unsealed else ""
    if not report.ok:
        fail(f"audit trail BROKEN at entry {report.broken_seq}: {report.problem}", 1)
    typer.echo(f"audit trail intact: {report.checked} entries verified{unsealed}")
