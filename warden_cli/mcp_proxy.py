"""``warden mcp-proxy``: an MCP server in front of an upstream MCP server; gated calls wait for Warden.

``warden mcp-proxy --db PATH -- <upstream command ...>`` (stdio upstream) or ``--upstream URL``
(streamable HTTP upstream); ``--server URL [--token T]`` instead of ``--db``: gated calls wait on a
Warden server (``warden serve``) rather than in a local store. Serves MCP over stdio, or streamable
HTTP with ``--port``. See docs/mcp.md.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated, Any

import typer

from warden_cli.common import DbOption, TokenOption, fail, merge_settings
from warden_demo.runtime_choice import Settings, db_location


def mcp_proxy_command(
    ctx: typer.Context,
    db: DbOption = None,
    upstream: Annotated[
        str | None, typer.Option("--upstream", help="Upstream MCP server URL (streamable HTTP) instead of a command")
    ] = None,
    server: Annotated[
        str | None, typer.Option("--server", help="A Warden server URL (warden serve) instead of a local --db")
    ] = None,
    token: TokenOption = None,
    name: Annotated[str | None, typer.Option("--name", help="Upstream name in the agent id (default: its own)")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Serve streamable HTTP on this port")] = None,
    host: Annotated[str, typer.Option("--host", help="Address for --port")] = "127.0.0.1",
    approve: Annotated[
        list[str] | None, typer.Option("--approve", help="Tool name or glob that always needs approval (repeat)")
    ] = None,
    no_approve: Annotated[
        list[str] | None, typer.Option("--no-approve", help="Tool name or glob that never needs approval (repeat)")
    ] = None,
    approve_all: Annotated[bool, typer.Option("--approve-all", help="Every call needs approval")] = False,
    actor: Annotated[str | None, typer.Option("--actor", help="Actor of the proxy's own decisions")] = None,
    approval_timeout: Annotated[
        float | None,
        typer.Option(
            "--approval-timeout",
            metavar="SECONDS",
            help="A gated call not decided within SECONDS expires (the tool never runs; the client gets an error)",
        ),
    ] = None,
) -> None:
    """Serve an upstream MCP server's tools; gated calls wait for a decision in Warden."""
    command = list(ctx.args)
    if server is None and isinstance(ctx.obj, Settings) and ctx.obj.server:
        server = ctx.obj.server  # the global `warden --server URL mcp-proxy ...`
        token = token if token is not None else ctx.obj.token
    if server and db:
        fail("give --db (a local store) or --server (a Warden server), not both", 2)
    if bool(command) == bool(upstream):
        fail("give the upstream MCP server as `-- <command ...>` or as --upstream URL (exactly one)", 2)
    if approval_timeout is not None and not approval_timeout > 0:
        fail("--approval-timeout must be a positive number of seconds", 2)
    policy: bool | dict[str, bool] | None = True if approve_all else None
    if not approve_all and (approve or no_approve):
        policy = {**{p: True for p in approve or []}, **{p: False for p in no_approve or []}}
    location = ""
    if not server:
        settings: Settings = merge_settings(ctx, db, None)
        location = db_location(settings)
    try:
        asyncio.run(
            _serve(
                upstream or command,
                location,
                name=name,
                policy=policy,
                port=port,
                host=host,
                actor=actor,
                approval_timeout=approval_timeout,
                server=server,
                token=token if token is not None else os.environ.get("WARDEN_API_TOKEN"),
            )
        )
    except KeyboardInterrupt:
        pass


async def _serve(
    upstream: str | list[str],
    location: str,
    *,
    name: str | None,
    policy: bool | dict[str, bool] | None,
    port: int | None,
    host: str,
    actor: str | None,
    approval_timeout: float | None,
    server: str | None,
    token: str | None,
) -> None:
    from pathlib import Path

    from agent_core.errors import WardenError
    from storage import open_store
    from storage.urls import is_postgres_url
    from warden_mcp import McpProxy

    store: Any = None
    warden: Any = None
    if server:
        from warden_client import WardenClient

        warden = WardenClient(server, token)
    else:
        if not is_postgres_url(location):
            Path(location).parent.mkdir(parents=True, exist_ok=True)
        store = open_store(location)
    try:
        proxy = McpProxy(
            upstream,
            store,
            warden=warden,
            name=name,
            require_approval=policy,
            actor=actor,
            approval_timeout=approval_timeout,
        )
        async with proxy:
            if port is None:
                from mcp.server.stdio import stdio_server

                async with stdio_server() as (read, write):
                    await proxy.server.run(read, write, proxy.server.create_initialization_options())
            else:
                import uvicorn

                app = proxy.server.streamable_http_app(host=host)
                config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
                await uvicorn.Server(config).serve()
    except WardenError as error:
        fail(f"{error.code}: {error.message or error}", 1)
