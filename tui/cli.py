"""``warden``: the approval console, and the typer app every command hangs on.

``warden`` opens the console (the only command that imports textual). The
``warden runs ...`` commands (``tui.cli_runs``) work without a UI and share the
store with it: ``--db PATH`` (default ``$WARDEN_DB``, else the user data
directory). ``warden serve`` is in ``tui.cli_serve``; what they all share
(settings, loading the runtime, one-line errors) in ``tui.cli_common``.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from tui.cli_audit import audit_app
from tui.cli_common import (
    ActorOption,
    AppOption,
    CliError,
    DbOption,
    Settings,
    TokenOption,
    default_db_path,
    fail,
    load_runtime,
    resolve_actor,
)
from tui.cli_mcp import mcp_proxy_command
from tui.cli_runs import fast_runs_list, grants_app, runs_app
from tui.cli_serve import serve_command, tokens_app

__all__ = ["CliError", "Settings", "app", "default_db_path", "load_runtime", "main"]

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
app.command("mcp-proxy", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(mcp_proxy_command)

ModelOption = Annotated[str | None, typer.Option("--model", help="Real model for the demo agents (openai/gpt-5-mini)")]
ServerOption = Annotated[str | None, typer.Option("--server", help="Run the console against a Warden server URL")]


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
    """Open the approval console (built-in demo agents unless --app or --server is given)."""
    ctx.obj = Settings(db=db, app=app_spec, model=model)
    if ctx.invoked_subcommand is None:
        if server:
            run_remote_console(server, token)
        else:
            run_console(ctx.obj, actor=actor)


def run_remote_console(url: str, token: str | None) -> None:
    """The console against a Warden server: pending runs, decisions and streams over HTTP."""
    from agent_core.errors import WardenError

    token = token or os.environ.get("WARDEN_API_TOKEN")
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
    from agent_core.errors import WardenError

    try:
        runtime, label = load_runtime(settings)
        # decisions taken in the console: --actor, $WARDEN_ACTOR, else the OS user (unless the app set one)
        if actor or runtime.actor is None:
            runtime.actor = resolve_actor(actor)
    except CliError as error:
        fail(str(error), 2)
    except WardenError as error:
        fail(f"{error.code}: {error.message or error}", 1)
    from tui.app import WardenApp
    from tui.backend import LocalBackend

    WardenApp(LocalBackend(runtime, store_label=label)).run()


def _fast_console(argv: list[str]) -> bool:
    """``warden [--db P] [--app M:A] [--model S]``: open the console without typer's start-up cost."""
    import argparse

    if any(not a.startswith("--") for a in argv[::2]) or any(a in ("--help", "--version") for a in argv):
        return False
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False, allow_abbrev=False)
    parser.add_argument("--db")
    parser.add_argument("--app", dest="app_spec")
    parser.add_argument("--model")
    try:
        ns, rest = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit):
        return False
    if rest:
        return False
    try:
        run_console(Settings(db=ns.db, app=ns.app_spec, model=ns.model))
    except typer.Exit as exit_:
        sys.exit(exit_.exit_code)
    return True


#: exit status when the reader of our output went away (``warden runs list | head``): 128 + SIGPIPE, as coreutils.
EXIT_BROKEN_PIPE = 141


def main() -> None:
    argv = sys.argv[1:]
    try:
        if fast_runs_list(argv) or _fast_console(argv):
            return
        app(prog_name="warden")
    except BrokenPipeError:
        # The reader closed the pipe: end quietly. Point stdout at /dev/null so the
        # interpreter's final flush does not raise a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_BROKEN_PIPE)


if __name__ == "__main__":
    main()
