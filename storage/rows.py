"""How runs, pending calls and grants are laid out in SQL rows, for every SQL store.

One codec for SQLite and PostgreSQL: the column lists, decoding a row into a
record (a row that cannot be decoded is a ``CorruptRecord`` naming it, so one bad
row never hides the others) and the parameters of an insert.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from storage.errors import CorruptRecord
from storage.records import GrantRow, PendingCallRow, RunRow

RUN_COLS = (
    "run_id, agent_id, thread_id, resource_id, status, snapshot, version, created_at, suspended_at, error, "
    "lease_owner, lease_until"
)
#: the listing never reads snapshot JSON
RUN_LIST_COLS = RUN_COLS.replace("snapshot", "''")
CALL_COLS = (
    "run_id, tool_call_id, tool_name, kind, status, fingerprint, args, suspend_payload, "
    "resume_schema, agent_path, seq, created_at, started_at, decided_until, decided_by, resume_data, "
    "expires_at, edited_args, approvers_required, policy_rule, requested_by"
)
GRANT_COLS = "id, tool_name, scope, scope_id, agent_id, args_match, expires_at, created_by, created_at, command_match"


#: compact JSON with non-ASCII kept: ``json.dumps`` with these options builds an encoder per call;
#: this one is built once (the C encoder, the same text). Every stored JSON value goes through it.
dumps: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def number(value: Any, what: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"{what} is {value!r}, not a number")


def json_field(value: Any, what: str) -> Any:
    try:
        return json.loads(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} is not valid JSON ({exc})") from exc


def run_from_row(row: Any) -> RunRow:
    try:
        return RunRow(
            run_id=row[0],
            agent_id=row[1],
            thread_id=row[2],
            resource_id=row[3],
            status=row[4],
            snapshot=row[5],
            version=row[6],
            created_at=number(row[7], "created_at"),
            suspended_at=number(row[8], "suspended_at"),
            error=row[9],
            lease_owner=row[10],
            lease_until=row[11],
        )
    except ValueError as exc:
        raise CorruptRecord(f"run {row[0]!r} is stored corrupt: {exc}") from exc


def call_from_row(row: Any) -> PendingCallRow:
    """A pending-call row; a row that cannot be decoded is a ``CorruptRecord`` naming it."""
    try:
        return PendingCallRow(
            run_id=row[0],
            tool_call_id=row[1],
            tool_name=row[2],
            kind=row[3],
            status=row[4],
            fingerprint=row[5],
            args=json_field(row[6], "args"),
            suspend_payload=None if row[7] is None else json_field(row[7], "suspend_payload"),
            resume_schema=None if row[8] is None else json_field(row[8], "resume_schema"),
            agent_path=json_field(row[9], "agent_path"),
            seq=row[10],
            created_at=number(row[11], "created_at"),
            started_at=row[12],
            decided_until=row[13] or 0.0,
            decided_by=row[14],
            resume_data=None if row[15] is None else json_field(row[15], "resume_data"),
            expires_at=row[16],
            edited_args=None if row[17] is None else json_field(row[17], "edited_args"),
            approvers_required=row[18],
            policy_rule=row[19],
            requested_by=row[20],
        )
    except ValueError as exc:
        raise CorruptRecord(f"pending tool call {row[1]!r} of run {row[0]!r} is stored corrupt: {exc}") from exc


def call_params(c: PendingCallRow) -> tuple:
    return (
        c.run_id,
        c.tool_call_id,
        c.tool_name,
        c.kind,
        c.status,
        c.fingerprint,
        dumps(c.args),
        None if c.suspend_payload is None else dumps(c.suspend_payload),
        None if c.resume_schema is None else dumps(c.resume_schema),
        dumps(c.agent_path),
        c.seq,
        float(c.created_at),
        None if c.started_at is None else float(c.started_at),
        float(c.decided_until),
        c.decided_by,
        None if c.resume_data is None else dumps(c.resume_data),
        None if c.expires_at is None else float(c.expires_at),
        None if c.edited_args is None else dumps(c.edited_args),
        c.approvers_required,
        c.policy_rule,
        c.requested_by,
    )


def grant_from_row(row: Any) -> GrantRow:
    return GrantRow(
        id=row[0],
        tool_name=row[1],
        scope=row[2],
        scope_id=row[3],
        agent_id=row[4],
        args_match=None if row[5] is None else json.loads(row[5]),
        expires_at=row[6],
        created_by=row[7],
        created_at=row[8],
        command_match=None if row[9] is None else json.loads(row[9]),
    )
