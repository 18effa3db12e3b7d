"""A fresh PostgreSQL database per test (created, then dropped), on the server CI and dev machines run.

The server is named by ``WARDEN_TEST_PG`` (an admin DSN; default
``postgresql://postgres@127.0.0.1:5432/postgres``). When it is not reachable
the tests that need it FAIL with a message saying so: nothing is skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

ADMIN_DSN = os.environ.get("WARDEN_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def dsn_for(database: str) -> str:
    return ADMIN_DSN.rsplit("/", 1)[0] + "/" + database


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(ADMIN_DSN, timeout=5)
    except Exception as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {ADMIN_DSN} ({type(exc).__name__}: {exc}). "
            "The tests need a PostgreSQL 15 server (trust auth on 127.0.0.1:5432), or set WARDEN_TEST_PG.",
            pytrace=False,
        )


@asynccontextmanager
async def fresh_database() -> AsyncIterator[str]:
    """Yields the DSN of a new, empty database; drops it afterwards (closing whatever still uses it)."""
    name = "warden_test_" + uuid.uuid4().hex[:12]
    admin = await _admin()
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield dsn_for(name)
    finally:
        admin = await _admin()
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
