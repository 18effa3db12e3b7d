"""Listed calls carry the policy rule, the approvers needed and the votes so far; runs carry who
started them (on all three stores, read from the call rows: no snapshot per listed run)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import SqliteStore, open_store
from storage.sql_common import SCHEMA_VERSION
from tests import policy_fixtures
from tests.test_quorum import FOUR_EYES, RefundIn, refund_agent

location = policy_fixtures.location

#: a pending run and its call as a version-5 store held them (before the policy columns)
SCHEMA_5_ROWS = (
    "INSERT INTO runs (run_id, agent_id, status, snapshot, created_at, suspended_at, updated_at) "
    "VALUES ('r1', 'mailer', 'suspended', '{}', 1, 1, 1)",
    "INSERT INTO pending_calls (run_id, tool_call_id, tool_name, kind, status, fingerprint, args, "
    "agent_path, seq, created_at) VALUES ('r1', 'c1', 'send_email', 'approval', 'pending', 'fp', "
    "'{\"to\":\"ana\"}', '[]', 0, 1)",
)


async def test_a_four_eyes_call_lists_its_rule_votes_and_requester(location: str) -> None:
    agent = refund_agent([])
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=FOUR_EYES) as runtime:
        stream = await agent.stream("refund", actor="bob")
        await stream.chunks()
        [run] = (await runtime.list_suspended_runs()).runs
        [call] = run.tool_calls
        assert (run.requested_by, call.policy_rule, call.approvers_required, call.approvals) == (
            "bob",
            "big-refunds",
            2,
            [],
        )
        await (await agent.approve_tool_call(run_id=stream.run_id, actor="alice")).chunks()
        [run] = (await agent.list_suspended_runs()).runs
        [call] = run.tool_calls
        assert [a["actor"] for a in call.approvals] == ["alice"] and call.approvals[0]["at"]
        wire = run.model_dump(mode="json", by_alias=True)
        assert wire["requestedBy"] == "bob"
        assert wire["toolCalls"][0]["approversRequired"] == 2
        assert wire["toolCalls"][0]["policyRule"] == "big-refunds"
        assert [a["actor"] for a in wire["toolCalls"][0]["approvals"]] == ["alice"]


async def test_a_call_without_a_policy_lists_the_defaults(location: str) -> None:
    def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="issue_refund", args={"amount": 5}, id="c1")])
        return ModelResponse(text="done")

    tool = create_tool(id="issue_refund", input_schema=RefundIn, execute=lambda i, c: {}, require_approval=True)
    agent = Agent(id="ops", model=FunctionModel(model), tools={"issue_refund": tool})
    async with Runtime(agents={"ops": agent}, storage=open_store(location)) as runtime:
        await (await agent.stream("refund")).chunks()
        [run] = (await runtime.list_suspended_runs()).runs
        [call] = run.tool_calls
        assert (run.requested_by, call.policy_rule, call.approvers_required, call.approvals) == (None, None, 1, [])


async def _lists_the_defaults(store: Any) -> None:
    """The store migrates on first use; the old call lists as one approver, no rule, no requester."""
    try:
        [row], total = await store.list_suspended()
        call = row.calls[0]
        assert total == 1 and (call.approvers_required, call.policy_rule, call.requested_by) == (1, None, None)
    finally:
        await store.aclose()


async def test_sqlite_schema_5_gains_the_policy_columns_with_defaults(tmp_path: Path) -> None:
    """A call stored before version 6 lists as one approver, no rule, no requester; nothing else changes."""
    from storage.sqlite import _MIGRATIONS, _statements

    path = tmp_path / "w.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in (1, 2, 3, 4, 5):
            for statement in _statements(_MIGRATIONS[version]):
                db.execute(statement)
            db.execute("INSERT INTO warden_schema (version) VALUES (?)", (version,))
        for statement in SCHEMA_5_ROWS:
            db.execute(statement)
    await _lists_the_defaults(SqliteStore(path))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT MAX(version) FROM warden_schema").fetchone()[0] == SCHEMA_VERSION


async def test_postgres_schema_5_gains_the_policy_columns_with_defaults() -> None:
    import asyncpg

    from storage.postgres import _MIGRATIONS, PostgresStore
    from tests.pg import fresh_database

    async with fresh_database() as dsn:
        conn = await asyncpg.connect(dsn)
        await conn.execute("CREATE TABLE warden_schema (version INTEGER NOT NULL)")
        for version in (1, 2, 3, 4, 5):
            await conn.execute(_MIGRATIONS[version])
            await conn.execute("INSERT INTO warden_schema (version) VALUES ($1)", version)
        for statement in SCHEMA_5_ROWS:
            await conn.execute(statement)
        await _lists_the_defaults(PostgresStore(dsn))
        assert await conn.fetchval("SELECT MAX(version) FROM warden_schema") == SCHEMA_VERSION
        await conn.close()
