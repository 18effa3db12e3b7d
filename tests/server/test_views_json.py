"""Pending runs' JSON written by the views' own serializers: the bytes ``JSONResponse`` wrote from
``wire``'s dicts before (same values, same keys in the same order), for a run and for a listing
page with its optional parts; anything but the runtime's view types goes the old way."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.responses import JSONResponse

from agent_core import wire
from agent_core.views import PendingToolCall, SuspendedRun, SuspendedRunList, UnreadableRun
from warden_server import views_json

AT = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _call(i: int, **extra: Any) -> PendingToolCall:
    return PendingToolCall(
        tool_call_id=f"call_{i}",
        tool_name="delete_tool",
        args={"id": f"x-{i}", "text": 'é 😀 \u2028 \x00\x1b \x7f "q" \\', "n": [1, 2.5, None, True], "big": 2**70},
        requires_approval=True,
        kind="approval",
        fingerprint="sha256:" + "ab" * 32,
        agent_path=["bench"],
        pending_since=AT,
        **extra,
    )


def _run(i: int, **extra: Any) -> SuspendedRun:
    return SuspendedRun(run_id=f"run/{i}", agent_id="bench", suspended_at=AT, tool_calls=[_call(i)], **extra)


RUNS = [
    _run(0),
    _run(1, thread_id="t", resource_id="r", requested_by="ann", expires_at=AT),
    SuspendedRun(
        run_id="run-2",
        agent_id="ops",
        suspended_at=AT,
        tool_calls=[
            _call(2, started_at=AT, approved_by="bob", expires_at=AT, policy_rule="big", approvers_required=2),
            _call(3, suspend_payload={"ask": "why?"}, resume_schema={"type": "object"}),
        ],
    ),
    SuspendedRun(run_id="run-empty", agent_id="ops", suspended_at=AT),
]


def _before(content: Any) -> bytes:
    return bytes(JSONResponse(content).body)


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.run_id)
def test_a_run_is_the_bytes_wire_and_json_wrote(run: SuspendedRun) -> None:
    assert views_json.suspended_run(run) == _before(wire.encode_suspended_run(run))


@pytest.mark.parametrize(
    "page",
    [
        SuspendedRunList(runs=RUNS, total=7, page=0, per_page=50),
        SuspendedRunList(runs=[], total=0, page=3, per_page=10),
        SuspendedRunList(
            runs=RUNS[:1],
            total=2,
            page=1,
            per_page=1,
            counts={"approval": 1, "input": 1},
            unreadable=[UnreadableRun(run_id="bad", agent_id="ops", error="corrupt row é")],
        ),
    ],
    ids=["runs", "empty", "counts-and-unreadable"],
)
def test_a_listing_is_the_bytes_wire_and_json_wrote(page: SuspendedRunList) -> None:
    assert views_json.suspended_run_list(page) == _before(wire.encode_suspended_run_list(page))


def test_exponents_are_the_same_values() -> None:
    """pydantic spells ``1.5e-7`` where ``json`` wrote ``1.5e-07``: the same number."""
    run = SuspendedRun(
        run_id="r", agent_id="a", suspended_at=AT, tool_calls=[_call(9).model_copy(update={"args": {"x": 1.5e-7}})]
    )
    data = views_json.suspended_run(run)
    assert data is not None and json.loads(data) == json.loads(_before(wire.encode_suspended_run(run)))


def test_what_is_not_a_view_of_the_runtime_goes_the_old_way() -> None:
    class Other(SuspendedRun):
        pass

    assert views_json.suspended_run({"runId": "r"}) is None
    assert views_json.suspended_run(Other(run_id="r", agent_id="a", suspended_at=AT)) is None
    assert views_json.suspended_run_list({"runs": [], "total": 0}) is None
    odd = SuspendedRunList.model_construct(runs=[{"runId": "r"}], total=1, page=0, per_page=50)
    assert views_json.suspended_run_list(odd) is None
