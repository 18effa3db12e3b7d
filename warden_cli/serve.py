"""``warden serve``: a Runtime over HTTP (the server package is imported only when it runs), and
``warden tokens add`` for its ``--tokens-file``.

Without ``--app`` the server runs the demo agents (``warden_demo``) on the store ``--db`` names
(else ``$WARDEN_DB``, else the user data directory), handed to it as an argument."""

from __future__ import annotations

from typing import Annotated

import typer

from warden_cli.common import DbOption, TokenOption, WebhookOption, WebhookSecretOption, fail
from warden_cli.policy import PolicyOption, ShadowPolicyOption, use_policy_files
from warden_demo.runtime_choice import Settings, db_location


def serve_command(
    app_spec: Annotated[
        str | None, typer.Option("--app", help="Your Runtime as module:attribute (default: the demo agents on --db)")
    ] = None,
    db: DbOption = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless a token is set)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free one)")] = 4111,
    token: TokenOption = None,
    cors_origin: Annotated[list[str] | None, typer.Option("--cors-origin", help="Allow a browser UI origin")] = None,
    tokens_file: Annotated[
        str | None, typer.Option("--tokens-file", help="Named tokens with roles (warden tokens add)")
    ] = None,
    webhook: WebhookOption = None,
    webhook_secret: WebhookSecretOption = None,
    webhook_unsigned: Annotated[
        bool, typer.Option("--webhook-unsigned", help="Send webhooks without a secret (refused otherwise)")
    ] = False,
    public_url: Annotated[
        str | None, typer.Option("--public-url", help="Where browsers reach this server: signed approval links")
    ] = None,
    link_actor: Annotated[
        str | None, typer.Option("--link-actor", help="The actor of decisions taken through links (approval-link)")
    ] = None,
    policy: PolicyOption = None,
    shadow_policy: ShadowPolicyOption = None,
) -> None:
    """Serve a Runtime over HTTP (Mastra-compatible API; see docs/server.md)."""
    from warden_server.cli import ServeError, serve

    policy, shadow_policy = use_policy_files(policy, shadow_policy)

    if app_spec and db:
        fail("--db names the store of the demo agents; with --app your Runtime names its own store", 2)
    try:
        serve(
            app_spec,
            host,
            port,
            token,
            cors_origins=cors_origin or None,
            tokens_file=tokens_file,
            webhooks=webhook or None,
            webhook_secret=webhook_secret,
            demo_db=None if app_spec else db_location(Settings(db=db)),
            webhook_unsigned=webhook_unsigned,
            public_url=public_url,
            link_actor=link_actor,
            policy=policy,
            shadow_policy=shadow_policy,
        )
    except ServeError as error:
        fail(str(error), 2)


tokens_app = typer.Typer(help="Named API tokens for warden serve --tokens-file.", no_args_is_help=True)


@tokens_app.command("add")
def tokens_add(
    name: Annotated[str, typer.Argument(help="The token's name (recorded as the actor of its decisions)")],
    role: Annotated[str, typer.Option("--role", help="viewer, approver or admin")] = "approver",
    file: Annotated[str, typer.Option("--file", help="The tokens file (created if missing)")] = "warden-tokens.json",
) -> None:
    """Create (or replace) a named token; prints its secret once (only its SHA-256 is stored)."""
    from warden_server.tokens import ROLES, TokenFileError, add_token

    if role not in ROLES:
        fail(f"--role must be one of {', '.join(ROLES)}, not {role!r}", 2)
    try:
        secret = add_token(file, name, role)
    except TokenFileError as error:
        fail(str(error), 2)
    typer.echo(secret)
    typer.echo(f"token {name!r} ({role}) written to {file}; the secret above is not shown again", err=True)
