"""Shared by the policy and quorum tests: the stores to run on, and the policy app as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent


async def _locations(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    if kind == "postgres":
        async with fresh_database() as dsn:
            yield dsn
        return
    yield "memory:" if kind == "memory" else str(tmp_path / "w.db")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def location(request, tmp_path) -> AsyncIterator[str]:
    """A store on each of the three kinds (a real SQLite file; a fresh PostgreSQL database)."""
    async for where in _locations(request.param, tmp_path):
        yield where


@pytest.fixture(params=["sqlite", "postgres"])
async def shared_db(request, tmp_path) -> AsyncIterator[str]:
    """A store several OS processes share."""
    async for where in _locations(request.param, tmp_path):
        yield where


def app(env: dict, *args: str) -> dict:
    """``python -m tests.apps.policy_app ARGS`` in its own process: its one JSON line."""
    cmd = [sys.executable, "-m", "tests.apps.policy_app", *args]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
