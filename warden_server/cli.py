"""``warden serve``: load a ``Runtime`` from ``module:attr`` and serve it with uvicorn.

Without a token (``--token`` or ``WARDEN_API_TOKEN``) the server refuses to
bind anything but a loopback address, and says so. Once it accepts
connections it prints one line ``Warden server listening on http://HOST:PORT``
on stdout (with the real port when ``--port 0`` asked for any free one).
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
from typing import Any

import uvicorn

from agent_core import Runtime
from agent_core.app_loader import AppLoadError, load_runtime
from agent_core.approval_links import LINK_ACTOR, LinkSigner
from agent_core.telemetry_setup import TelemetrySetupError, configure_from_env
from agent_core.telemetry_setup import flush as flush_telemetry
from agent_core.webhooks import WebhookNotifier
from warden_server import ui
from warden_server.addresses import is_loopback
from warden_server.app import DEFAULT_BODY_TIMEOUT_SECONDS, DEFAULT_MAX_BODY_BYTES, check_token, create_app
from warden_server.cors import InvalidCorsOrigin, check_origins
from warden_server.events import close_streams
from warden_server.tokens import TokenFileError, TokenSet, load_tokens

log = logging.getLogger("warden.server")

TOKEN_ENV = "WARDEN_API_TOKEN"
WEBHOOK_SECRET_ENV = "WARDEN_WEBHOOK_SECRET"
READY_PREFIX = "Warden server listening on "


class ServeError(Exception):
    """The server cannot start as asked (bad ``--app``, or no token on a public address)."""


def resolve_token(token: str | None) -> str | None:
    """The token to require: ``--token``, else ``$WARDEN_API_TOKEN``, else None (no auth).

    A token that is given but empty or blank (``WARDEN_API_TOKEN="   "``) is a
    ``ServeError``, never "no token" nor a token of spaces.
    """
    source = "--token"
    if token is None:
        token, source = os.environ.get(TOKEN_ENV), TOKEN_ENV
    if token is None:
        return None
    try:
        check_token(token)
    except ValueError as exc:
        raise ServeError(f"{source}: {exc}") from None
    return token


def check_bind(host: str, token: str | None) -> None:
    if token:
        return
    if not is_loopback(host):
        raise ServeError(
            f"refusing to listen on {host!r} without an API token: set --token or {TOKEN_ENV}, "
            "or bind a loopback address (127.0.0.1, ::1, localhost)"
        )


def approval_links(public_url: str | None, secret: str | None, actor: str | None) -> LinkSigner | None:
    """The signer of approval links for ``--public-url`` (None without it); a bad option is a ``ServeError``."""
    if actor is not None and (not actor.strip() or actor != actor.strip() or not actor.isprintable()):
        raise ServeError("--link-actor: give a plain name (no surrounding spaces or control characters)")
    if actor is not None and not public_url:
        raise ServeError("--link-actor names who decides through approval links: it needs --public-url")
    if not public_url:
        return None
    if not public_url.startswith(("http://", "https://")) or not public_url.isprintable() or " " in public_url:
        raise ServeError(f"--public-url: expected an http:// or https:// URL, not {public_url!r}")
    if not secret:
        raise ServeError(
            "--public-url: approval links are signed with the webhook secret: "
            f"set --webhook-secret or {WEBHOOK_SECRET_ENV}"
        )
    log.info("approval links point at %s (decided as %r)", public_url, actor or LINK_ACTOR)
    return LinkSigner(secret, public_url)


def _if_installed(module: str) -> str:
    """``module`` when it imports (uvloop / httptools, from ``uvicorn[standard]``), else uvicorn's ``"auto"``.

    Both are dependencies, but uvloop has no Windows build; there uvicorn falls back to asyncio / h11.
    """
    try:
        importlib.import_module(module)
    except ImportError:
        return "auto"
    return module


def demo_runtime(db: str, policy: str | None = None, shadow_policy: str | None = None) -> Runtime:
    """The demo agents on the store ``db`` names, built as the console and the CLI build them
    (``warden_demo.runtime_choice``); a store it cannot open is a ``ServeError``."""
    from warden_demo.runtime_choice import Settings, runtime_and_store_label

    try:
        settings = Settings(db=db, policy=policy, shadow_policy=shadow_policy)
        runtime: Runtime = runtime_and_store_label(settings)[0]
        return runtime
    except Exception as exc:  # a directory that cannot be created, a bad URL: one line, as for --app
        raise ServeError(f"the demo agents on {db!r}: {type(exc).__name__}: {exc}") from exc


class _Server(uvicorn.Server):
    async def shutdown(self, sockets: Any = None) -> None:
        # Live feeds end first: uvicorn waits for open connections, and an endless
        # ``GET /api/events`` would otherwise hold the stop for the whole grace period.
        close_streams(self.config.app)
        await super().shutdown(sockets=sockets)
        flush_telemetry()  # spans and metrics still buffered, before the process may end by its signal

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            for server in self.servers:
                for sock in server.sockets or ():
                    host, port = sock.getsockname()[:2]
                    shown = f"[{host}]" if ":" in host else host
                    print(f"{READY_PREFIX}http://{shown}:{port}", flush=True)


def serve(
    app: str | None,
    host: str = "127.0.0.1",
    port: int = 4111,
    token: str | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_SECONDS,
    log_level: str = "info",
    cors_origins: list[str] | None = None,
    tokens_file: str | None = None,
    webhooks: list[str] | None = None,
    webhook_secret: str | None = None,
    webhook_unsigned: bool = False,
    public_url: str | None = None,
    link_actor: str | None = None,
    demo_db: str | None = None,
    policy: str | None = None,
    shadow_policy: str | None = None,
) -> None:
    """Serve the ``Runtime`` named by ``app`` (``module:attr``) until interrupted; without ``app``,
    the demo agents on the store ``demo_db`` names (a SQLite path or a ``postgresql://`` URL).

    ``tokens_file``: named tokens with roles (``warden_server.tokens``), with or instead of ``token``.
    ``webhooks``: URLs POSTed (signed with ``webhook_secret`` / ``$WARDEN_WEBHOOK_SECRET``) when a call waits;
    without a secret they are refused unless ``webhook_unsigned``.
    ``public_url``: the address browsers reach this server at; with a secret, notifications carry signed
    approval links (``agent_core.approval_links``), decided as ``link_actor`` (default ``approval-link``).
    ``policy`` / ``shadow_policy``: policy files the runtime enforces / audits (else ``$WARDEN_POLICY`` /
    ``$WARDEN_SHADOW_POLICY``).
    """
    logging.basicConfig(
        level=getattr(logging, log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    token = resolve_token(token)
    named: TokenSet | None = None
    if tokens_file:
        try:
            named = load_tokens(tokens_file)
        except TokenFileError as exc:
            raise ServeError(f"--tokens-file: {exc}") from None
        log.info("%d named token(s) from %s", len(named), tokens_file)
    check_bind(host, token or ("named tokens" if named else None))
    try:
        cors_origins = check_origins(cors_origins or ()) or None
    except InvalidCorsOrigin as exc:
        raise ServeError(str(exc)) from None
    # before the warnings: a bad --app is the one line printed
    if app is not None:
        try:
            runtime = load_runtime(app, policy=policy, shadow_policy=shadow_policy)
        except AppLoadError as exc:
            raise ServeError(exc.message) from exc
    elif demo_db is not None:
        runtime = demo_runtime(demo_db, policy, shadow_policy)
    else:
        raise ServeError("nothing to serve: give an app (module:attribute) or the demo agents' store")
    try:
        if configure_from_env():  # OTEL_* asked for traces/metrics and the app set no provider (it is imported first)
            log.info("OpenTelemetry SDK configured from OTEL_* variables")
    except TelemetrySetupError as exc:
        raise ServeError(exc.message) from None
    if token and len(token) < 16:
        log.warning(
            "the API token is short (%d characters): use a long random one, e.g. `openssl rand -hex 32`", len(token)
        )
    if not token and not named:
        log.warning(
            "no API token (--token or %s): authentication is OFF; listening on loopback %s only",
            TOKEN_ENV,
            host,
        )
    secret = webhook_secret or os.environ.get(WEBHOOK_SECRET_ENV) or None
    signer = approval_links(public_url, secret, link_actor)
    notifier = None
    if webhooks:
        if not secret and not webhook_unsigned:
            raise ServeError(
                f"webhooks without a secret are refused: set --webhook-secret or {WEBHOOK_SECRET_ENV}, "
                "or say --webhook-unsigned to send them unsigned"
            )
        if not secret:
            log.warning("webhooks are not signed (--webhook-unsigned): receivers cannot tell them from forgeries")
        notifier = WebhookNotifier(list(webhooks), secret, links=signer.for_notice if signer else None)
    asgi = create_app(
        runtime,
        token=token,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        cors_origins=cors_origins,
        tokens=named,
        webhooks=notifier,
    )
    ui.configure_links(asgi, signer, link_actor)
    config = uvicorn.Config(
        asgi,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        loop=_if_installed("uvloop"),
        http=_if_installed("httptools"),
        timeout_graceful_shutdown=30,
        access_log=log_level == "debug",
    )
    freeze_startup_objects()
    _Server(config).run()


def freeze_startup_objects() -> None:
    """Move everything built so far (modules, models, the app) out of the garbage collector's sight.

    They live as long as the process; without this each full collection walks them all again
    (about 60 ms here, one every thousand approvals or so: docs/performance.md, "Server").
    Cycles made later are still collected."""
    gc.collect()
    gc.freeze()
