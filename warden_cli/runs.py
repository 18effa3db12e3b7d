"""``warden runs ...``: headless commands on pending runs (no UI, never imports textual).

They share the store with the console: ``--db PATH`` (default ``$WARDEN_DB``, else
the user data directory), or ``--app module:runtime``; or they reach a Warden server with
``--server URL`` (``$WARDEN_SERVER``) and ``--token`` through the client SDK (``warden_cli.remote``),
printing the same thing. Run and tool-call ids may be shortened to a unique prefix of 6+
characters (the console shows 8). ``--json`` on every command; pages are numbered from 1.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from warden_cli.common import (
    ActorOption,
    AppOption,
    DbOption,
    JsonOption,
    ServerOption,
    TokenOption,
    fail,
    merge_settings,
    run_on_runtime,
)
from warden_cli.fast_list import KIND_SHOWN as _KIND_SHOWN
from warden_cli.policy import PolicyOption, use_policy_files
from warden_demo.runtime_choice import Settings, db_location, resolve_actor

runs_app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None, help="Headless commands on pending runs (no UI)."
)

ToolCallOption = Annotated[
    str | None, typer.Option("--tool-call", help="Tool call id or a unique prefix of 6+ characters (default: latest)")
]
RunArgument = Annotated[str, typer.Argument(metavar="RUN", help="Run id, or a unique prefix of 6+ characters")]
PageOption = Annotated[int, typer.Option("--page", help="Page number, from 1 (newest first)")]

FingerprintOption = Annotated[str | None, typer.Option("--fingerprint", help="Approve only if it matches")]


def _format_age(seconds: float) -> str:
    """As the console shows ages (``tui.formatting``: no textual), imported when a command prints one."""
    from tui.formatting import format_age

    return format_age(seconds)


def _age(when: datetime) -> str:
    return _format_age((datetime.now(UTC) - when).total_seconds())


def _clean(value: Any) -> str:
    from tui.untrusted import escape_unsafe

    return escape_unsafe(str(value), multiline=False)


@runs_app.command("list")
def runs_list(
    ctx: typer.Context,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    as_json: JsonOption = False,
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Only this resource")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent")] = None,
    page: PageOption = 1,
    per_page: Annotated[int, typer.Option("--per-page", min=1, max=1000)] = 50,
) -> None:
    """List runs waiting for a decision, newest first."""
    policy, _ = use_policy_files(policy, None)
    list_runs(
        merge_settings(ctx, db, app_spec, server, token, policy=policy),
        as_json=as_json,
        thread=thread,
        resource=resource,
        agent=agent,
        page=page,
        per_page=per_page,
    )


def check_page(page: int) -> None:
    if page < 1:
        fail(f"--page {page}: pages are numbered from 1 (page 1 is the newest)", 2)


def list_runs(
    settings: Settings,
    *,
    as_json: bool = False,
    thread: str | None = None,
    resource: str | None = None,
    agent: str | None = None,
    page: int = 1,
    per_page: int = 50,
) -> None:
    """``warden runs list`` (``page`` from 1): store-only when no ``--app`` is given (no agents
    built); through the server with ``settings.server``. ``warden_cli.fast_list`` renders it."""
    from warden_cli.fast_list import render_list

    check_page(page)
    index = page - 1  # the store's and the server's pages start at 0

    def emit(runs: list[dict[str, Any]], total: int) -> None:
        typer.echo(render_list(runs, total, page=page, per_page=per_page, as_json=as_json))

    if settings.app is None and not settings.server:
        # Fast path: listing needs only the store, not the agents (no agent_core import).
        from warden_cli.headless import list_from_store

        try:
            runs, total = asyncio.run(
                list_from_store(
                    db_location(settings),
                    agent_id=agent,
                    thread_id=thread,
                    resource_id=resource,
                    page=index,
                    per_page=per_page,
                )
            )
        except Exception as error:  # storage errors carry a code; keep one line
            code = getattr(error, "code", type(error).__name__)
            fail(f"{code}: {error}", 1)
        emit(runs, total)
        return

    async def go(runtime: Any) -> None:
        result = await runtime.list_suspended_runs(
            agent_id=agent, thread_id=thread, resource_id=resource, page=index, per_page=per_page
        )
        emit([r.model_dump(mode="json") for r in result.runs], result.total)

    run_on_runtime(settings, go)


async def resolve_id(runtime: Any, given: str, *, run_id: str | None = None) -> str:
    """The full id ``given`` names (itself, or a unique prefix of 6+ characters); an id the store
    does not know is passed on as given, so the command reports it as it always did (a finished
    run's decision is ``AGENT_TOOL_CALL_ALREADY_DECIDED``, not "not found")."""
    from agent_core.errors import SnapshotNotFound, ToolCallNotSuspended

    try:
        return str(await runtime.resolve_id(given, run_id=run_id))
    except (SnapshotNotFound, ToolCallNotSuspended):
        return given


async def resolve_ids(runtime: Any, run: str, tool_call: str | None) -> tuple[str, str | None]:
    """The full run id and tool-call id that ``run`` and ``tool_call`` (6+ character prefixes) name."""
    run_id = await resolve_id(runtime, run)
    return run_id, (None if tool_call is None else await resolve_id(runtime, tool_call, run_id=run_id))


@runs_app.command("show")
def runs_show(
    ctx: typer.Context,
    run: RunArgument,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a pending run: the request that started it, the model's text before each call, the
    calls (k of n in their step), arguments, fingerprints, input schemas, and decisions taken."""
    policy, _ = use_policy_files(policy, None)
    from agent_core.decision_context import run_context
    from tui.untrusted import escape_unsafe, to_json

    async def go(runtime: Any) -> None:
        run_id = await resolve_id(runtime, run_arg)
        run = await runtime.get_suspended_run(run_id)
        remote_context = getattr(runtime, "run_context", None)  # RemoteRuntime: the server's context route
        context = await (remote_context(run.run_id) if remote_context else run_context(runtime, run.run_id))
        if as_json:
            out = run.model_dump(mode="json")
            out["context"] = context.to_json()
            typer.echo(json.dumps(out, ensure_ascii=True, indent=2))
            return
        typer.echo(f"run       {run.run_id}")
        typer.echo(f"agent     {_clean(run.agent_id)}")
        typer.echo(f"thread    {_clean(run.thread_id or '-')}")
        typer.echo(f"resource  {_clean(run.resource_id or '-')}")
        typer.echo(f"suspended {run.suspended_at.isoformat()} ({_age(run.suspended_at)} ago)")
        first = next(iter(context.calls.values()), None)
        if first is not None and first.request:
            typer.echo(f"request   {_clean(first.request)}")
        for call in run.tool_calls:
            typer.echo("")
            kind = _KIND_SHOWN.get(call.kind, "approval")
            ctx = context.calls.get(call.tool_call_id)
            typer.echo(f"  tool call   {_clean(call.tool_call_id)} ({kind})")
            if call.kind == "interrupted":
                started = call.started_at.isoformat() if call.started_at else "?"
                typer.echo(f"  started     {started}, approved by {_clean(call.approved_by or '-')}")
                typer.echo("              it may or may not have run: approve runs it again, decline tells the model")
            tool = _clean(call.tool_name)
            if ctx is not None and ctx.tool_description:
                tool += f"  ({_clean(ctx.tool_description)})"
            typer.echo(f"  tool        {tool}")
            typer.echo(f"  agent path  {_clean(' > '.join(call.agent_path))}")
            if ctx is not None:
                if ctx.delegated_prompt:
                    typer.echo(f"  delegated   {_clean(ctx.delegated_prompt)}")
                if ctx.model_text.strip():
                    typer.echo(f"  model said  {_clean(ctx.model_text)}")
                if ctx.pending_since:
                    waited = _format_age(datetime.now(UTC).timestamp() - ctx.pending_since)
                    typer.echo(f"  waiting     {waited}")
                if ctx.of > 1:
                    others = ", ".join(
                        f"{i}. {_clean(c.tool_name)} ({c.state})"
                        for i, c in enumerate(ctx.step_calls, 1)
                        if c.tool_call_id != call.tool_call_id
                    )
                    typer.echo(f"  step        call {ctx.position} of {ctx.of}; also {others}")
            if ctx is not None and ctx.policy_line:
                needed = f" ({ctx.approvers_required} approvals needed)" if ctx.approvers_required > 1 else ""
                typer.echo(f"  policy      {_clean(ctx.policy_line)}{needed}")
                if ctx.quorum_line:
                    typer.echo(f"  approvals   {_clean(ctx.quorum_line)}")
            typer.echo(f"  fingerprint {call.fingerprint}")
            if call.expires_at is not None:
                typer.echo(f"  expires at  {call.expires_at.isoformat()}")
            typer.echo("  args        " + escape_unsafe(to_json(call.args)).replace("\n", "\n              "))
            if call.kind == "suspend":
                typer.echo("  question    " + escape_unsafe(to_json(call.suspend_payload)))
                if call.resume_schema:
                    typer.echo("  schema      " + escape_unsafe(to_json(call.resume_schema, indent=None)))
        if context.decisions:
            typer.echo("")
            typer.echo("decisions")
            for d in context.decisions:
                line = f"  {_clean(d.tool_name)}: {d.decision} by {_clean(d.actor or 'unknown')}"
                typer.echo(line + (f": {_clean(d.reason)}" if d.reason else ""))

    run_arg = run
    run_on_runtime(merge_settings(ctx, db, app_spec, server, token, policy=policy), go)


async def _print_stream(stream: Any, *, as_json: bool = False) -> None:
    """What a decision led to: the run's chunks as lines, or with ``as_json`` one JSON object
    (``run_id``, ``status``, ``chunks`` in the wire encoding)."""
    from tui.untrusted import escape_unsafe, to_json

    if as_json:
        chunks = [chunk.to_json() async for chunk in stream.full_stream]
        out = {"run_id": stream.run_id, "status": stream.status, "chunks": chunks}
        typer.echo(json.dumps(out, ensure_ascii=True, indent=2))
        return

    text_open = False
    async for chunk in stream.full_stream:
        p: Any = chunk.payload
        if chunk.type == "text-delta":
            sys.stdout.write(escape_unsafe(p.text))
            text_open = True
            continue
        if text_open:
            sys.stdout.write("\n")
            text_open = False
        if chunk.type == "tool-result":
            typer.echo(
                f"{'error' if p.is_error else 'result'} {_clean(p.tool_name)}: "
                f"{escape_unsafe(to_json(p.result, indent=None), multiline=False)}"
            )
        elif chunk.type == "tool-output-denied":
            typer.echo(f"declined {_clean(p.tool_name)}: {_clean(p.reason)}")
        elif chunk.type == "tool-call-expired":
            typer.echo(f"expired {_clean(p.tool_name)}: not run (no decision before {p.expired_at.isoformat()})")
        elif chunk.type == "tool-error":
            typer.echo(f"tool error {_clean(p.tool_name)}: {_clean(p.error)}")
        elif chunk.type in ("tool-call-approval", "tool-call-suspended"):
            kind = "approval" if chunk.type == "tool-call-approval" else "input"
            quorum = ""
            if getattr(p, "approvers_required", 1) > 1:  # a four-eyes rule: the votes so far
                from agent_core.quorum import quorum_line

                quorum = f", {_clean(quorum_line(p.approvals, p.approvers_required))}"
            typer.echo(
                f"pending {kind}: {_clean(p.tool_name)} run {chunk.run_id} tool call {_clean(p.tool_call_id)}{quorum}"
            )
        elif chunk.type == "error":
            typer.echo(f"error: {_clean(p.error)}")
    if text_open:
        sys.stdout.write("\n")
    typer.echo(f"status: {stream.status}")


def _decider(settings: Settings, actor: str | None) -> str | None:
    """Who decides: ``--actor``, ``$WARDEN_ACTOR``, else the OS user; on a server, the server
    records its token's name, so ``--actor`` there is a usage error rather than ignored."""
    if settings.server:
        if actor:
            fail("--actor with --server: the server records the name of the token as the actor", 2)
        return None
    return resolve_actor(actor)


@runs_app.command("approve")
def runs_approve(
    ctx: typer.Context,
    run: RunArgument,
    tool_call: ToolCallOption = None,
    fingerprint: FingerprintOption = None,
    args: Annotated[
        str | None, typer.Option("--args", help="Run with these arguments instead (JSON object, validated first)")
    ] = None,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    actor: ActorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve a pending call; the tool runs and the agent continues.

    --fingerprint refers to the call as presented (its original arguments), also with --args."""
    policy, _ = use_policy_files(policy, None)
    edited: dict[str, Any] | None = None
    if args is not None:
        try:
            edited = json.loads(args)
        except ValueError as error:
            fail(f"--args is not valid JSON: {error}", 2)
        if not isinstance(edited, dict):
            fail("--args must be a JSON object", 2)
    settings = merge_settings(ctx, db, app_spec, server, token, policy=policy)
    who = _decider(settings, actor)

    async def go(runtime: Any) -> None:
        run_id, call_id = await resolve_ids(runtime, run, tool_call)
        extra = {"args": edited} if edited is not None else {}
        stream = await runtime.approve_tool_call(
            run_id=run_id, tool_call_id=call_id, fingerprint=fingerprint, actor=who, **extra
        )
        await _print_stream(stream, as_json=as_json)

    run_on_runtime(settings, go)


@runs_app.command("decline")
def runs_decline(
    ctx: typer.Context,
    run: RunArgument,
    tool_call: ToolCallOption = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Told to the model")] = None,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    actor: ActorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Decline a pending call; the tool never runs and the model is told why."""
    policy, _ = use_policy_files(policy, None)
    settings = merge_settings(ctx, db, app_spec, server, token, policy=policy)
    who = _decider(settings, actor)

    async def go(runtime: Any) -> None:
        run_id, call_id = await resolve_ids(runtime, run, tool_call)
        stream = await runtime.decline_tool_call(run_id=run_id, tool_call_id=call_id, reason=reason, actor=who)
        await _print_stream(stream, as_json=as_json)

    run_on_runtime(settings, go)


@runs_app.command("resume")
def runs_resume(
    ctx: typer.Context,
    run: RunArgument,
    data: Annotated[str, typer.Option("--data", help="Resume data as a JSON object")],
    tool_call: ToolCallOption = None,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    actor: ActorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Resume a suspended tool with data matching its resume schema."""
    policy, _ = use_policy_files(policy, None)
    try:
        resume_data = json.loads(data)
    except ValueError as error:
        fail(f"--data is not valid JSON: {error}", 2)
    settings = merge_settings(ctx, db, app_spec, server, token, policy=policy)
    who = _decider(settings, actor)

    async def go(runtime: Any) -> None:
        run_id, call_id = await resolve_ids(runtime, run, tool_call)
        stream = await runtime.resume_stream(resume_data, run_id=run_id, tool_call_id=call_id, actor=who)
        await _print_stream(stream, as_json=as_json)

    run_on_runtime(settings, go)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


@runs_app.command("recover")
def runs_recover(
    ctx: typer.Context,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Recover runs left behind by a crash: continue those whose calls all have results,
    put decided calls whose tool never started back to pending, re-run interrupted
    calls of idempotent tools. Needs --app (the agents continue the runs), or --server."""
    policy, _ = use_policy_files(policy, None)
    settings = merge_settings(ctx, db, app_spec, server, token, policy=policy)
    if settings.app is None and not settings.server:
        fail("warden runs recover needs --app module:runtime (the agents continue the runs) or --server URL", 2)

    async def go(runtime: Any) -> None:
        advanced = await runtime.recover()
        typer.echo(json.dumps({"recovered": advanced}) if as_json else f"recovered {_count(advanced, 'run')}")

    run_on_runtime(settings, go)


@runs_app.command("sweep")
def runs_sweep(
    ctx: typer.Context,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    policy: PolicyOption = None,
    as_json: JsonOption = False,
) -> None:
    """Expire approvals past their deadline (approval_timeout): the tools never run, the
    models are told, the runs continue here for the agents of --app (or the demo agents of --db);
    runs hosted elsewhere that ask for handover (an MCP proxy's) are recorded for their host."""
    policy, _ = use_policy_files(policy, None)
    settings = merge_settings(ctx, db, app_spec, server, token, policy=policy)

    async def go(runtime: Any) -> None:
        expired = await runtime.sweep()
        typer.echo(json.dumps({"expired": expired}) if as_json else f"expired {_count(expired, 'approval')}")

    run_on_runtime(settings, go)


grants_app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None, help="Standing approvals ('always allow')."
)


@grants_app.command("list")
def grants_list(
    ctx: typer.Context,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """List live grants."""

    async def go(runtime: Any) -> None:
        grants = await runtime.list_grants()
        if as_json:
            typer.echo(json.dumps([g.model_dump(mode="json") for g in grants], ensure_ascii=True, indent=2))
            return
        if not grants:
            typer.echo("no grants")
        for g in grants:
            typer.echo(f"{g.id}  {_clean(g.describe())}  (by {_clean(g.created_by or '-')})")

    run_on_runtime(merge_settings(ctx, db, app_spec, server, token), go)


@grants_app.command("create")
def grants_create(
    ctx: typer.Context,
    tool_name: Annotated[str, typer.Argument(metavar="TOOL", help="The agent's name for the tool")],
    scope: Annotated[str, typer.Option("--scope", help="run | thread | resource | agent")],
    scope_id: Annotated[
        str | None, typer.Option("--id", help="The run (or a 6+ character prefix), thread or resource id")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="The agent (scope agent)")] = None,
    match: Annotated[str | None, typer.Option("--match", help="Argument values to pin (JSON object)")] = None,
    command_prefix: Annotated[
        list[str] | None,
        typer.Option(
            "--command-prefix",
            help="A shell tool: cover only calls whose every command starts with this (shell words, repeatable)",
        ),
    ] = None,
    statement: Annotated[
        list[str] | None,
        typer.Option(
            "--statement", help="A SQL tool: cover only calls whose every statement is of this kind (repeatable)"
        ),
    ] = None,
    command_arg: Annotated[
        str | None, typer.Option("--command-arg", help="The argument holding the command (default command; SQL query)")
    ] = None,
    dialect: Annotated[str, typer.Option("--dialect", help="The SQL dialect (sqlglot's name)")] = "postgres",
    expires_in: Annotated[float, typer.Option("--expires-in", help="Seconds (default 3600)")] = 3600,
    forever: Annotated[bool, typer.Option("--no-expiry", help="Until revoked")] = False,
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    actor: ActorOption = None,
    as_json: JsonOption = False,
) -> None:
    """Approve future calls of a tool in a scope without asking ("always allow")."""
    args_match = None
    if match is not None:
        try:
            args_match = json.loads(match)
        except ValueError as error:
            fail(f"--match is not valid JSON: {error}", 2)
    command_match = _command_match(command_prefix, statement, command_arg, dialect)
    settings = merge_settings(ctx, db, app_spec, server, token)
    who = _decider(settings, actor)

    async def go(runtime: Any) -> None:
        target = scope_id
        if scope == "run" and scope_id is not None:
            target = await resolve_id(runtime, scope_id)
        g = await runtime.grant(
            tool_name,
            scope=scope,
            scope_id=target,
            agent_id=agent,
            args_match=args_match,
            expires_in=None if forever else expires_in,
            actor=who if who is not None else runtime.actor,
            **({"command_match": command_match} if command_match is not None else {}),
        )
        if as_json:
            typer.echo(json.dumps(g.model_dump(mode="json"), ensure_ascii=True, indent=2))
            return
        typer.echo(f"{g.id}  {_clean(g.describe())}")

    run_on_runtime(settings, go)


def _command_match(
    prefixes: list[str] | None, statements: list[str] | None, argument: str | None, dialect: str
) -> dict[str, Any] | None:
    """``--command-prefix`` / ``--statement`` as a grant's ``command_match`` (checked by the runtime)."""
    if prefixes and statements:
        fail("give --command-prefix (a shell tool) or --statement (a SQL tool), not both", 2)
    if prefixes:
        try:
            split = [shlex.split(p) for p in prefixes]
        except ValueError as error:
            fail(f"--command-prefix is not shell words: {error}", 2)
        return {"argument": argument or "command", "prefixes": split}
    if statements:
        return {"argument": argument or "query", "statements": statements, "dialect": dialect}
    if argument is not None:
        fail("--command-arg goes with --command-prefix or --statement", 2)
    return None


@grants_app.command("revoke")
def grants_revoke(
    ctx: typer.Context,
    grant_id: Annotated[str, typer.Argument(metavar="GRANT")],
    db: DbOption = None,
    app_spec: AppOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke a grant (calls it already approved stay approved)."""

    async def go(runtime: Any) -> None:
        await runtime.revoke_grant(grant_id)
        typer.echo(json.dumps({"revoked": grant_id}) if as_json else f"revoked {_clean(grant_id)}")

    run_on_runtime(merge_settings(ctx, db, app_spec, server, token), go)
