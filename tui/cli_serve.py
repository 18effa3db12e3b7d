"""``warden serve``: a Runtime over HTTP (the server package is imported only when it runs)."""

from __future__ import annotations

from typing import Annotated

import typer

from tui.cli_common import TokenOption, fail


def serve_command(
    app_spec: Annotated[str, typer.Option("--app", help="Your Runtime as module:attribute")],
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback unless a token is set)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: any free one)")] = 4111,
    token: TokenOption = None,
    cors_origin: Annotated[list[str] | None, typer.Option("--cors-origin", help="Allow a browser UI origin")] = None,
) -> None:
    """Serve a Runtime over HTTP (Mastra-compatible API; see docs/server.md)."""
    from warden_server.cli import ServeError, serve

    try:
        serve(app_spec, host, port, token, cors_origins=cors_origin or None)
    except ServeError as error:
        fail(str(error), 2)
