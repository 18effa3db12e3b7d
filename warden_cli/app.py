"""The typer app every ``warden`` command hangs on (``warden_cli.main.main`` is the entry point:
it answers ``warden runs list`` without importing this module).

``warden`` opens the console (the only command that imports textual, through
``warden_cli.console``). The ``warden runs ...`` commands (``warden_cli.runs``) work without a UI
and share the store with it: ``--db PATH`` (default ``$WARDEN_DB``, else the user data
directory). ``warden serve`` is in ``warden_cli.serve``; what they all share (options, one-line
errors) in ``warden_cli.common``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from warden_cli.audit import audit_app
from warden_cli.common import (
    ActorOption,
    AppOption,
    DbOption,
    ServerOption,
    TokenOption,
    fail,
)
from warden_cli.mcp_proxy import mcp_proxy_command
from warden_cli.policy import PolicyOption, ShadowPolicyOption, policy_app, use_policy_files
from warden_cli.runs import grants_app, runs_app
from warden_cli.serve import serve_command, tokens_app
from warden_cli.store import store_app
from warden_cli.web import web_command
from warden_demo.runtime_choice import Settings

__all__ = ["app"]

app = typer.Typer(
    add_completion=False,
    invoke_without_command=True,
    no_args_is_help=False,
    help="Warden: human-in-the-loop approval for LLM agents.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(runs_app, name="runs")
app.add_typer(audit_app, name="audit")
app.add_typer(tokens_app, name="tokens")
app.add_typer(grants_app, name="grants")
app.add_typer(policy_app, name="policy")
app.add_typer(store_app, name="store")
app.command("serve")(serve_command)
app.command("web")(web_command)
app.command("mcp-proxy", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(mcp_proxy_command)

ModelOption = Annotated[str | None, typer.Option("--model", help="Real model for the demo agents (openai/gpt-5-mini)")]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("warden")
    except Exception:
        return "0.1.0"


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"warden {_version()}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: DbOption = None,
    app_spec: AppOption = None,
    model: ModelOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    actor: ActorOption = None,
    policy: PolicyOption = None,
    shadow_policy: ShadowPolicyOption = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version and exit")
    ] = False,
) -> None:
    """Open the approval console (built-in demo agents unless --app or --server is given).

    --db, --app, --server and --token given here apply to the subcommands too."""
    if server and (db or app_spec):
        fail(f"{'--db' if db else '--app'} and --server: give one (a local store, or a Warden server)", 2)
    policy, shadow_policy = use_policy_files(policy, shadow_policy)
    ctx.obj = Settings(
        db=db, app=app_spec, model=model, server=server, token=token, policy=policy, shadow_policy=shadow_policy
    )
    if ctx.invoked_subcommand is None:
        from warden_cli.console import open_local_console, open_remote_console

        if server:
            open_remote_console(server, token)
        else:
            open_local_console(ctx.obj, actor=actor)
