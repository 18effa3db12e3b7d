"""Store-only helpers for the headless CLI: listing pending runs without importing the agents.

``warden runs list`` only reads the store, so it skips building the runtime
(and importing ``agent_core``); the rows are shaped exactly like
``SuspendedRun.model_dump(mode="json")`` (a test keeps the two in step).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


def run_row_to_json(row: Any) -> dict[str, Any]:
    r = row.run
    deadlines = [c.expires_at for c in row.calls if c.expires_at is not None and c.kind == "approval"]
    return {
        "run_id": r.run_id,
        "agent_id": r.agent_id,
        "thread_id": r.thread_id,
        "resource_id": r.resource_id,
        "suspended_at": _iso(r.suspended_at),
        "tool_calls": [
            {
                "tool_call_id": c.tool_call_id,
                "tool_name": c.tool_name,
                "args": c.args,
                "requires_approval": c.kind != "suspend",
                "kind": c.kind,
                "suspend_payload": c.suspend_payload,
                "resume_schema": c.resume_schema,
                "fingerprint": c.fingerprint,
                "agent_path": list(c.agent_path),
                "pending_since": _iso(c.created_at),
                "started_at": None if c.started_at is None else _iso(c.started_at),
                "approved_by": c.decided_by if c.kind == "interrupted" else None,
                "expires_at": None if c.expires_at is None or c.kind != "approval" else _iso(c.expires_at),
                "policy_rule": c.policy_rule,
                "approvers_required": c.approvers_required,
                "approvals": [],
            }
            for c in row.calls
        ],
        "expires_at": _iso(min(deadlines)) if deadlines else None,
        "requested_by": next((c.requested_by for c in row.calls if c.requested_by is not None), None),
    }


async def _with_votes(store: Any, runs: list[dict[str, Any]]) -> None:
    """The votes so far of each four-eyes call (as ``agent_core.pending`` adds them)."""
    from storage.votes import approvals_of

    for run in runs:
        for call in run["tool_calls"]:
            if call["approvers_required"] > 1 and call["kind"] == "approval":
                entries = await store.audit_log(run["run_id"], call["tool_call_id"])
                call["approvals"] = approvals_of(entries, call["fingerprint"])


async def list_from_store(
    db: str | Path,
    *,
    agent_id: str | None = None,
    thread_id: str | None = None,
    resource_id: str | None = None,
    page: int = 0,
    per_page: int = 50,
) -> tuple[list[dict[str, Any]], int]:
    from storage.urls import is_postgres_url, open_store

    if not is_postgres_url(db) and not Path(db).exists():
        return [], 0
    store = open_store(db)
    try:
        rows, total = await store.list_suspended(
            agent_id=agent_id, thread_id=thread_id, resource_id=resource_id, page=page, per_page=per_page
        )
        runs = [run_row_to_json(r) for r in rows]
        await _with_votes(store, runs)
    finally:
        await store.aclose()
    return runs, total
