"""``warden serve``: a Runtime over HTTP (the server package is imported only when it runs)."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from tui.cli_common import DbOption, TokenOption, fail

#: served when no --app is given: the demo agents on --db / $WARDEN_DB
DEMO_APP = "tui.cli_serve:demo_runtime"


def demo_runtime() -> Any:
    """The built-in demo agents on the store ``$WARDEN_DB`` names (set from ``--db`` by ``serve_command``)."""
    from tui.cli_common import Settings, load_runtime

    return load_runtime(Settings())[0]


def serve_command(
    app_spec: Annotated[
        str | None, typer.Option("--app", help="Your Runtime as module:attribute (default: the demo agents on --db)")
    ] = None,
    db: DbOption = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless a token is set)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free one)")] = 4111,
    token: TokenOption = None,
    cors_origin: Annotated[list[str] | None, typer.Option("--cors-origin", help="Allow a browser UI origin")] = None,
) -> None:
    """Serve a Runtime over HTTP (Mastra-compatible API; see docs/server.md)."""
    from warden_server.cli import ServeError, serve

    if app_spec and db:
        fail("--db names the store of the demo agents; with --app your Runtime names its own store", 2)
    if db:
        os.environ["WARDEN_DB"] = db
    try:
        serve(app_spec or DEMO_APP, host, port, token, cors_origins=cors_origin or None)
    except ServeError as error:
        fail(str(error), 2)
