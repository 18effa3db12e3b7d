"""``--db`` / ``WARDEN_DB`` name a store by path or URL: ``storage.open_store`` opens either."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from storage import InMemoryStore, PostgresStore, SqliteStore, open_store
from tests.pg import fresh_database

ROOT = Path(__file__).resolve().parent.parent


def test_open_store_picks_the_store_a_value_names(tmp_path):
    pg = open_store("postgresql://warden:s3cret@db.example:5432/w")
    assert isinstance(pg, PostgresStore) and "s3cret" not in pg.name and "***" in pg.name
    assert isinstance(open_store("postgres://u@h/w"), PostgresStore)
    plain = open_store(tmp_path / "a.db")
    assert isinstance(plain, SqliteStore) and plain.path == str(tmp_path / "a.db")
    url = open_store(f"sqlite://{tmp_path}/b.db")
    assert isinstance(url, SqliteStore) and url.path == f"{tmp_path}/b.db"
    assert isinstance(open_store("memory:"), InMemoryStore)
    full = open_store(tmp_path / "c.db", synchronous="FULL")
    assert isinstance(full, SqliteStore) and full.synchronous == "FULL"


def warden(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "warden_cli", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


async def test_console_commands_take_a_postgresql_url(tmp_path, monkeypatch):
    from tests.console.conftest import suspend_runs

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # the demo's sample records file
    env = {**os.environ, "WARDEN_DEMO_DELAY": "0", "XDG_DATA_HOME": str(tmp_path)}
    env.pop("WARDEN_DB", None)
    async with fresh_database() as dsn:
        [run_id] = await suspend_runs(dsn, [("ops", "delete record abc-123")])  # type: ignore[list-item]
        listed = warden("runs", "list", "--db", dsn, "--json", env=env)
        assert listed.returncode == 0, listed.stderr
        assert [r["run_id"] for r in json.loads(listed.stdout)["runs"]] == [run_id]
        ok = warden("runs", "approve", run_id, env={**env, "WARDEN_DB": dsn})
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.rstrip().endswith("status: finished")
        again = warden("runs", "list", env={**env, "WARDEN_DB": dsn})
        assert again.stdout.strip() == "no pending runs"


@pytest.mark.parametrize("args", [["runs", "list"], ["runs", "approve", "abcdef12"]])
def test_an_unreachable_postgresql_server_is_one_line(args):
    env = {**os.environ, "WARDEN_DB": "postgresql://postgres:pw@127.0.0.1:1/w"}
    out = warden(*args, env=env)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "STORAGE_UNAVAILABLE" in lines[0] and "pw@" not in lines[0], out.stderr
