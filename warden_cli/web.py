"""``warden web``: the Textual console itself in a browser, through textual-serve.

Every browser tab that connects runs its own console process (textual-serve
starts the command per websocket), on the store, ``--app`` or ``--server``
given to ``warden`` (``warden --db FILE web``). A console decides for whoever
reaches the page, so the page is served on loopback only, unless a token
protects it (``--web-token`` / ``$WARDEN_WEB_TOKEN``): then the first visit
is ``/?token=TOKEN``, answered with a signed HttpOnly SameSite=Strict cookie
that every later request (the websocket too) must carry; anything else is 401.
Secrets (the API token) reach the console process through its environment,
never its command line.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from warden_cli.common import TOKEN_ENV, fail

if TYPE_CHECKING:
    from warden_demo.runtime_choice import Settings

WEB_TOKEN_ENV = "WARDEN_WEB_TOKEN"
COOKIE = "warden_web"


def console_command(settings: Settings | None) -> str:
    """The shell command textual-serve runs per connection: the ``warden`` console installed beside
    this Python (the entry point, wherever the CLI's modules live)."""
    installed = Path(sys.executable).with_name("warden")
    found = str(installed) if installed.exists() else shutil.which("warden")
    if found is None:
        fail("web: cannot find the `warden` command to run in the browser (is Warden installed?)", 2)
    args = [found]
    if settings is not None:
        options = (
            ("--db", settings.db),
            ("--app", settings.app),
            ("--model", settings.model),
            ("--server", settings.server),
        )
        for flag, value in options:
            if value:
                args += [flag, str(value)]
    return shlex.join(args)


def protected_server(command: str, host: str, port: int, token: str | None, public_url: str | None) -> Any:
    """A textual-serve ``Server`` whose every route needs ``token`` (when given), by query once, then cookie."""
    from aiohttp import web
    from textual_serve.server import Server

    key = secrets.token_bytes(32)
    expected = hashlib.sha256(token.encode()).digest() if token else b""
    cookie_value = hmac.new(key, b"warden web session", hashlib.sha256).hexdigest()

    @web.middleware
    async def require_token(request: web.Request, handler: Any) -> web.StreamResponse:
        if token is None:
            return await handler(request)
        if hmac.compare_digest(request.cookies.get(COOKIE, ""), cookie_value):
            return await handler(request)
        given = request.query.get("token", "")
        if request.path == "/" and hmac.compare_digest(hashlib.sha256(given.encode()).digest(), expected):
            response = web.HTTPSeeOther("/")  # the token leaves the address bar and the history
            response.set_cookie(COOKIE, cookie_value, httponly=True, samesite="Strict", path="/")
            return response
        return web.Response(status=401, text="warden web: open /?token=YOUR_WEB_TOKEN first\n")

    class _Server(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(require_token)
            return app

    return _Server(command, host=host, port=port, title="Warden", public_url=public_url)


def web_command(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless --web-token)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port")] = 8000,
    web_token: Annotated[
        str | None, typer.Option("--web-token", help=f"Protect the page with this token (default: ${WEB_TOKEN_ENV})")
    ] = None,
    public_url: Annotated[
        str | None, typer.Option("--public-url", help="Where browsers reach the page (behind a proxy)")
    ] = None,
) -> None:
    """Serve the console in a browser (textual-serve; see docs/server.md)."""
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        fail("warden web needs textual-serve: pip install 'warden[web]'", 2)
    token = web_token if web_token is not None else os.environ.pop(WEB_TOKEN_ENV, None) or None
    if token is not None and (len(token) < 16 or token != token.strip() or not token.isprintable()):
        fail("--web-token: give a long random token (16+ printable characters, e.g. `openssl rand -hex 32`)", 2)
    from warden_server.addresses import is_loopback  # the server's rule

    if token is None and not is_loopback(host):
        fail(f"refusing to serve the console on {host!r} without a token: set --web-token or {WEB_TOKEN_ENV}", 2)
    settings = ctx.obj
    if settings is not None and settings.token:  # a secret: the console processes read it from their environment
        os.environ[TOKEN_ENV] = settings.token
    protected_server(console_command(settings), host, port, token, public_url).serve()
