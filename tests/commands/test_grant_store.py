"""A grant's ``command_match`` is stored and read back by the three stores (schema 10 on the SQL ones),
and a grant stored without one reads as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from storage import open_store
from storage.records import GrantRow
from storage.sql_common import SCHEMA_VERSION
from tests import policy_fixtures

location = policy_fixtures.location

MATCH = {"argument": "command", "prefixes": [["git", "status"], ["ls"]]}
SQL_MATCH = {"argument": "query", "statements": ["select"], "dialect": "postgres"}


async def test_command_match_round_trips_on_every_store(location: str) -> None:
    store = open_store(location)
    try:
        await store.add_grant(
            GrantRow(id="g1", tool_name="bash", scope="agent", agent_id="a", command_match=MATCH, created_at=1.0)
        )
        await store.add_grant(
            GrantRow(id="g2", tool_name="run_sql", scope="run", scope_id="r", command_match=SQL_MATCH, created_at=2.0)
        )
        await store.add_grant(
            GrantRow(id="g3", tool_name="bash", scope="agent", agent_id="a", args_match={"x": 1}, created_at=3.0)
        )
        got = {g.id: g for g in await store.list_grants(10.0)}
        assert got["g1"].command_match == MATCH and got["g2"].command_match == SQL_MATCH
        assert got["g3"].command_match is None and got["g3"].args_match == {"x": 1}
        assert [g.id for g in await store.list_grants(10.0, tool_name="bash")] == ["g1", "g3"]
    finally:
        await store.aclose()


async def test_a_schema_9_database_gains_the_column_and_keeps_its_grants(tmp_path: Path) -> None:
    """A file written before this schema: its grants read with no command rule (they match as before)."""
    from storage.sqlite import _MIGRATIONS, _statements

    assert SCHEMA_VERSION == 10
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
    for version in range(1, 10):
        for statement in _statements(_MIGRATIONS[version]):
            db.execute(statement)
        db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
    db.execute(
        "INSERT INTO grants (id, tool_name, scope, agent_id, args_match, created_at) "
        "VALUES ('old', 'bash', 'agent', 'a', NULL, 1)"
    )
    db.commit()
    db.close()
    store = open_store(str(path))
    try:
        [old] = await store.list_grants(10.0)
        assert (old.id, old.command_match) == ("old", None)
    finally:
        await store.aclose()
    assert sqlite3.connect(path).execute("SELECT MAX(version) FROM warden_schema").fetchone()[0] == 10
