"""``warden serve``: load a ``Runtime`` from ``module:attr`` and serve it with uvicorn.

Without a token (``--token`` or ``WARDEN_API_TOKEN``) the server refuses to
bind anything but a loopback address, and says so. Once it accepts
connections it prints one line ``Warden server listening on http://HOST:PORT``
on stdout (with the real port when ``--port 0`` asked for any free one).
"""

from __future__ import annotations

import importlib
import ipaddress
import logging
import os
from typing import Any

import uvicorn

from agent_core import Runtime
from agent_core.app_loader import AppLoadError, load_runtime
from agent_core.telemetry_setup import TelemetrySetupError, configure_from_env
from agent_core.telemetry_setup import flush as flush_telemetry
from agent_core.webhooks import WebhookNotifier
from warden_server.app import DEFAULT_BODY_TIMEOUT_SECONDS, DEFAULT_MAX_BODY_BYTES, check_token, create_app
from warden_server.events import close_streams
from warden_server.tokens import TokenFileError, TokenSet, load_tokens

log = logging.getLogger("warden.server")

TOKEN_ENV = "WARDEN_API_TOKEN"
WEBHOOK_SECRET_ENV = "WARDEN_WEBHOOK_SECRET"
READY_PREFIX = "Warden server listening on "


class ServeError(Exception):
    """The server cannot start as asked (bad ``--app``, or no token on a public address)."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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


def _if_installed(module: str) -> str:
    """``module`` when it imports (uvloop / httptools, from ``uvicorn[standard]``), else uvicorn's ``"auto"``.

    Both are dependencies, but uvloop has no Windows build; there uvicorn falls back to asyncio / h11.
    """
    try:
        importlib.import_module(module)
    except ImportError:
        return "auto"
    return module


def demo_runtime(db: str) -> Runtime:
    """The demo agents on the store ``db`` names, built as the console and the CLI build them
    (``warden_demo.runtime_choice``); a store it cannot open is a ``ServeError``."""
    from warden_demo.runtime_choice import Settings, runtime_and_store_label

    try:
        runtime: Runtime = runtime_and_store_label(Settings(db=db))[0]
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
    demo_db: str | None = None,
) -> None:
    """Serve the ``Runtime`` named by ``app`` (``module:attr``) until interrupted; without ``app``,
    the demo agents on the store ``demo_db`` names (a SQLite path or a ``postgresql://`` URL).

    ``tokens_file``: named tokens with roles (``warden_server.tokens``), with or instead of ``token``.
    ``webhooks``: URLs POSTed (signed with ``webhook_secret`` / ``$WARDEN_WEBHOOK_SECRET``) when a call waits.
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
    # before the warnings: a bad --app is the one line printed
    if app is not None:
        try:
            runtime = load_runtime(app)
        except AppLoadError as exc:
            raise ServeError(exc.message) from exc
    elif demo_db is not None:
        runtime = demo_runtime(demo_db)
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
    notifier = None
    if webhooks:
        secret = webhook_secret or os.environ.get(WEBHOOK_SECRET_ENV) or None
        if not secret:
            log.warning("webhooks are not signed: set --webhook-secret or %s", WEBHOOK_SECRET_ENV)
        notifier = WebhookNotifier(list(webhooks), secret)
    asgi = create_app(
        runtime,
        token=token,
        max_body_bytes=max_body_bytes,
        body_timeout=body_timeout,
        cors_origins=cors_origins,
        tokens=named,
        webhooks=notifier,
    )
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
    _Server(config).run()
