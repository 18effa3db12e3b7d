"""``warden store stats``: what the store's tables hold and take on disk (``storage.stats``): rows, dead
rows (PostgreSQL) or free pages and the WAL (SQLite), sizes, and PostgreSQL's autovacuum per table."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated

import typer

from warden_cli.common import DbOption, JsonOption, fail
from warden_demo.runtime_choice import Settings, db_location

store_app = typer.Typer(help="The store itself: its tables and their size.", no_args_is_help=True)


def _mb(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e6:.2f} MB"


def _ago(at: float | None) -> str:
    if at is None:
        return "never"
    s = max(0.0, time.time() - at)
    return f"{s:.0f} s ago" if s < 120 else f"{s / 60:.0f} min ago" if s < 7200 else f"{s / 3600:.0f} h ago"


@store_app.command("stats")
def stats_command(
    ctx: typer.Context,
    db: DbOption = None,
    as_json: JsonOption = False,
    warn_exit: Annotated[
        bool, typer.Option("--check", help="Exit 1 when autovacuum is off for Warden's tables (PostgreSQL)")
    ] = False,
) -> None:
    """Rows, dead rows or free pages, and sizes per table of the store --db names (read only)."""
    from storage.errors import WardenError
    from storage.stats import postgres_stats, sqlite_stats
    from storage.urls import describe, is_postgres_url

    parent = ctx.obj if isinstance(ctx.obj, Settings) else Settings()
    location = db_location(Settings(db=db or parent.db))
    if location == "memory:":
        fail("memory: keeps nothing on disk; --db names a SQLite file or a postgresql:// URL", 2)
    try:
        if is_postgres_url(location):
            out = asyncio.run(postgres_stats(location))
        else:
            path = location.removeprefix("sqlite://").removeprefix("sqlite:")
            out = sqlite_stats(path)
    except WardenError as exc:
        fail(exc.message)
    except Exception as exc:  # the driver's: unreachable server, not a database, no such file
        fail(f"cannot read {describe(location)}: {exc}".splitlines()[0])
    if as_json:
        typer.echo(json.dumps(out.to_dict()))
    else:
        pg = out.autovacuum is not None
        typer.echo(f"store {out.store}: {_mb(out.bytes)}")
        if pg:
            typer.echo(f"{'table':<14} {'rows':>9} {'dead rows':>10} {'size':>11}  autovacuum")
            for t in out.tables:
                state = f"on, last {_ago(t.last_autovacuum)}" if t.autovacuum else "OFF for this table"
                typer.echo(f"{t.name:<14} {t.rows:>9} {t.dead_rows or 0:>10} {_mb(t.bytes):>11}  {state}")
            typer.echo(f"autovacuum on the server: {'on' if out.autovacuum else 'OFF'}")
        else:
            typer.echo(f"{'table':<14} {'rows':>9} {'size':>11}")
            for t in out.tables:
                typer.echo(f"{t.name:<14} {t.rows:>9} {_mb(t.bytes):>11}")
            typer.echo(f"free pages: {_mb(out.free_bytes)}   WAL: {_mb(out.wal_bytes)}")
        if out.warning:
            typer.echo(f"warning: {out.warning}", err=True)
    if warn_exit and out.warning:
        raise typer.Exit(1)
