"""``warden mcp-proxy``: an MCP server in front of an upstream MCP server; gated calls wait for Warden.

``warden mcp-proxy --db PATH -- <upstream command ...>`` (stdio upstream) or ``--upstream URL``
(streamable HTTP upstream). Serves MCP over stdio, or streamable HTTP with ``--port``. See docs/mcp.md.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from tui.cli_common import DbOption, Settings, db_location, fail, merge_settings


def mcp_proxy_command(
    ctx: typer.Context,
    db: DbOption = None,
    upstream: Annotated[
        str | None, typer.Option("--upstream", help="Upstream MCP server URL (streamable HTTP) instead of a command")
    ] = None,
    server: Annotated[str | None, typer.Option("--server", help="A Warden server URL (not supported yet)")] = None,
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
) -> None:
    """Serve an upstream MCP server's tools; gated calls wait for a decision in Warden."""
    command = list(ctx.args)
    if server or (isinstance(ctx.obj, Settings) and ctx.obj.server):
        fail("mcp-proxy --server is not supported yet: use --db (the same store as the console)", 2)
    if bool(command) == bool(upstream):
        fail("give the upstream MCP server as `-- <command ...>` or as --upstream URL (exactly one)", 2)
    policy: bool | dict[str, bool] | None = True if approve_all else None
    if not approve_all and (approve or no_approve):
        policy = {**{p: True for p in approve or []}, **{p: False for p in no_approve or []}}
    settings: Settings = merge_settings(ctx, db, None)
    location = db_location(settings)
    try:
        asyncio.run(_serve(upstream or command, location, name=name, policy=policy, port=port, host=host, actor=actor))
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
) -> None:
    from pathlib import Path

    from agent_core.errors import WardenError
    from storage import open_store
    from storage.urls import is_postgres_url
    from warden_mcp import McpProxy

    if not is_postgres_url(location):
        Path(location).parent.mkdir(parents=True, exist_ok=True)
    try:
        proxy = McpProxy(upstream, open_store(location), name=name, require_approval=policy, actor=actor)
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
