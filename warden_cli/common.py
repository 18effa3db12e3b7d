"""What every ``warden`` command shares: the ``--db``/``--app``/``--server`` options, running a
headless coroutine on the runtime (or a server's), and reporting errors as one line. The
settings themselves and loading the runtime are ``warden_demo.runtime_choice`` (the console's
start shares them)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from warden_demo.runtime_choice import CliError, Settings, runtime_and_store_label

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="SQLite file or postgresql:// URL (default: $WARDEN_DB, else user data dir)"),
]
AppOption = Annotated[str | None, typer.Option("--app", help="Your Runtime as module:attribute")]
TokenOption = Annotated[str | None, typer.Option("--token", help="API token (default: $WARDEN_API_TOKEN)")]
ServerOption = Annotated[
    str | None,
    typer.Option("--server", help="A Warden server's URL instead of a local store (default: $WARDEN_SERVER)"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="JSON output")]

#: environment: the server the headless commands reach when neither --server nor --db/--app is given
SERVER_ENV = "WARDEN_SERVER"
TOKEN_ENV = "WARDEN_API_TOKEN"
ActorOption = Annotated[
    str | None, typer.Option("--actor", help="Who decides, for the audit trail (default: $WARDEN_ACTOR, else OS user)")
]
WebhookOption = Annotated[
    list[str] | None, typer.Option("--webhook", help="POST a signed notice to this URL when a call waits (repeatable)")
]
WebhookSecretOption = Annotated[
    str | None, typer.Option("--webhook-secret", help="HMAC-SHA256 key for webhooks (default: $WARDEN_WEBHOOK_SECRET)")
]


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"warden: {message}", err=True)
    raise typer.Exit(code)


def run_on_runtime(settings: Settings, coro_fn: Callable[[Any], Awaitable[None]]) -> None:
    """Run a headless coroutine on the runtime, or on a server's (``settings.server``) through the
    client SDK, which answers the same calls; WardenError -> one line on stderr."""
    from agent_core.errors import WardenError

    async def go() -> None:
        if settings.server:
            from warden_cli.remote import RemoteRuntime

            async with RemoteRuntime(settings.server, settings.token or os.environ.get(TOKEN_ENV)) as remote:
                await coro_fn(remote)
            return
        runtime, _ = runtime_and_store_label(settings)
        async with runtime:
            await coro_fn(runtime)

    try:
        asyncio.run(go())
    except CliError as error:
        fail(str(error), 2)
    except WardenError as error:
        fail(f"{error.code}: {error.message or error}", 1)
    except Exception as error:
        if not settings.server or isinstance(error, BrokenPipeError) or not _transport_error(error):
            raise
        fail(f"cannot reach Warden server at {settings.server}: {type(error).__name__}: {error}", 1)


def _transport_error(error: BaseException) -> bool:
    """A connection that failed (refused, reset, timed out, bad URL), not a server's answer."""
    import httpx

    return isinstance(error, httpx.TransportError | httpx.InvalidURL | httpx.UnsupportedProtocol | OSError)


def merge_settings(
    ctx: typer.Context,
    db: str | Path | None,
    app_spec: str | None,
    server: str | None = None,
    token: str | None = None,
    *,
    policy: str | None = None,
    from_env: bool = True,
) -> Settings:
    """A subcommand's ``--db``/``--app``/``--server``/``--token``/``--policy`` (checked:
    ``warden_cli.policy.use_policy_files``) over the root command's; then
    ``$WARDEN_SERVER`` when no store was named (unless ``from_env`` is False: a group passing its
    options on to a subcommand). A store and a server together is a usage error."""
    base: Settings = ctx.obj if isinstance(ctx.obj, Settings) else Settings()
    merged = Settings(
        db=db or base.db,
        app=app_spec or base.app,
        model=base.model,
        server=server or base.server,
        token=token or base.token,
        policy=policy or base.policy,
        shadow_policy=base.shadow_policy,
    )
    return with_server_default(merged, from_env=from_env)


def with_server_default(settings: Settings, *, from_env: bool = True) -> Settings:
    """Check ``--server`` against ``--db``/``--app``, and fill it from ``$WARDEN_SERVER`` if no store is named."""
    if settings.server and (settings.db or settings.app):
        given = "--db" if settings.db else "--app"
        fail(f"{given} and --server: give one (a local store, or a Warden server that has its own)", 2)
    if from_env and not settings.server and not settings.db and not settings.app:
        settings.server = os.environ.get(SERVER_ENV) or None
    return settings
