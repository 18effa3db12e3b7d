"""The tool-call state machine (agent_core.call_state): legal moves, illegal ones, old snapshots."""

from __future__ import annotations

import json

import pytest

from agent_core.call_state import TRANSITIONS, CallState, RunState
from agent_core.errors import IllegalTransition, WardenError


def call(status: str = "new") -> CallState:
    return CallState(id="c1", name="delete", args={"id": "x"}, status=status)  # type: ignore[arg-type]


def test_gate_then_approve_runs_and_completes():
    c = call()
    c.gate("sha256:ab", seq=3, now=10.0)
    assert (c.status, c.fingerprint, c.seq, c.pending_since) == ("awaiting_approval", "sha256:ab", 3, 10.0)
    assert c.decidable and c.waiting and not c.runnable
    c.approve()
    assert c.status == "approved" and c.runnable
    c.resolve("result", {"ok": True})
    assert (c.status, c.result_kind, c.result) == ("done", "result", {"ok": True})


def test_suspend_resume_and_decline():
    c = call()
    c.admit()
    c.suspend({"ask": "which"})
    assert c.status == "suspended" and c.decidable and c.suspend_payload == {"ask": "which"}
    c.resume({"answer": 1})
    assert c.status == "resuming" and c.resume_data == {"answer": 1}
    c.suspend({"ask": "again"})
    assert c.resume_data is None
    c.decline("no")
    assert (c.status, c.reason) == ("declined", "no")
    c.resolve("denied", "no")
    assert c.status == "done" and c.resume_data is None


def test_delegate_keeps_its_child_until_resolved():
    c = call()
    c.admit()
    child = RunState(run_id="r", agent_id="sub", agent_path=["top", "sub"])
    c.delegate(child)
    c.delegate(child)  # continuing the sub-agent after a decision inside it
    assert c.status == "delegated" and c.child is child and c.waiting and c.runnable
    c.resolve("error", "boom")
    assert c.status == "done" and c.child is None


@pytest.mark.parametrize(
    ("status", "move"),
    [
        ("approved", lambda c: c.gate("fp", 1, 0.0)),  # approved once, never gated again
        ("resuming", lambda c: c.gate("fp", 1, 0.0)),
        ("suspended", lambda c: c.approve()),  # an approval is not resume data
        ("awaiting_approval", lambda c: c.resume({})),
        ("done", lambda c: c.decline(None)),  # a decided call is never decided again
        ("declined", lambda c: c.resolve("result", 1)),  # a declined tool never runs
        ("new", lambda c: c.suspend({})),
    ],
)
def test_illegal_transitions_raise_and_change_nothing(status, move):
    c = call(status)
    before = c.model_dump()
    with pytest.raises(IllegalTransition) as info:
        move(c)
    assert isinstance(info.value, WardenError) and info.value.code == "AGENT_ILLEGAL_CALL_TRANSITION"
    assert c.model_dump() == before


def test_no_transition_leads_back_to_new():
    assert all(target != "new" for _, target in TRANSITIONS.values())


def test_a_snapshot_with_the_old_approved_flag_still_loads():
    state = RunState(run_id="r", agent_id="a", agent_path=["a"], calls=[call("approved")])
    raw = json.loads(state.to_json())
    raw["calls"][0]["approved"] = True  # written by Warden before the flag was derived from status
    loaded = RunState.from_json(json.dumps(raw), run_id="r", store="test")
    assert loaded.calls[0].status == "approved"
    assert "approved" not in json.loads(loaded.to_json())["calls"][0]


@pytest.mark.parametrize("model", [CallState, RunState])
def test_field_writes_behave_as_pydantic_s(model):
    """The models' own ``__setattr__`` (a fast path for fields) keeps pydantic's behaviour."""
    obj = call() if model is CallState else RunState(run_id="r", agent_id="a", agent_path=["a"])
    name = "reason" if model is CallState else "error"
    assert name not in obj.model_fields_set
    setattr(obj, name, "why")
    assert getattr(obj, name) == "why" and name in obj.model_fields_set
    assert json.loads(obj.model_dump_json())[name] == "why"
    with pytest.raises(ValueError, match="no field"):
        obj.not_a_field = 1
