"""The typer app every ``warden`` command hangs on (``tui.cli.main`` is the entry point:
it answers ``warden runs list`` without importing this module).

``warden`` opens the console (the only command that imports textual). The
``warden runs ...`` commands (``tui.cli_runs``) work without a UI and share the
store with it: ``--db PATH`` (default ``$WARDEN_DB``, else the user data
directory). ``warden serve`` is in ``tui.cli_serve``; what they all share
(settings, loading the runtime, one-line errors) in ``tui.cli_common``.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from tui.cli_audit import audit_app
from tui.cli_common import (
    TOKEN_ENV,
    ActorOption,
    AppOption,
    CliError,
    DbOption,
    ServerOption,
    Settings,
    TokenOption,
    default_db_path,
    fail,
    load_runtime,
)
from tui.cli_mcp import mcp_proxy_command
from tui.cli_runs import grants_app, runs_app
from tui.cli_serve import serve_command, tokens_app
from tui.cli_web import web_command

__all__ = ["CliError", "Settings", "app", "default_db_path", "load_runtime", "run_console"]

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
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Print the version and exit")
    ] = False,
) -> None:
    """Open the approval console (built-in demo agents unless --app or --server is given).

    --db, --app, --server and --token given here apply to the subcommands too."""
    if server and (db or app_spec):
        fail(f"{'--db' if db else '--app'} and --server: give one (a local store, or a Warden server)", 2)
    ctx.obj = Settings(db=db, app=app_spec, model=model, server=server, token=token)
    if ctx.invoked_subcommand is None:
        if server:
            run_remote_console(server, token)
        else:
            run_console(ctx.obj, actor=actor)


def run_remote_console(url: str, token: str | None) -> None:
    """The console against a Warden server: pending runs, decisions and streams over HTTP."""
    from agent_core.errors import WardenError

    token = token or os.environ.get(TOKEN_ENV)
    try:
        from tui.backend import RemoteBackend

        backend = RemoteBackend.open(url, token)
    except WardenError as error:
        fail(f"{error.code}: {error.message or error}", 1)
    except Exception as error:  # connection refused, bad URL: one line, not a traceback
        fail(f"cannot reach Warden server at {url}: {type(error).__name__}: {error}", 1)
    from tui.app import WardenApp

    WardenApp(backend).run()


def run_console(settings: Settings, *, actor: str | None = None) -> None:
    """The console on a local runtime (``tui.console_start``: the first frame before the runtime)."""
    from tui.console_start import open_console

    open_console(settings, actor=actor)
