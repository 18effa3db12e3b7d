"""Quorum (four-eyes) on all three stores: votes, the three errors, decline, edits, and two processes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_core import (
    ActorRequired,
    Agent,
    AlreadyDecided,
    AlreadyVoted,
    Policy,
    PolicyRule,
    Runtime,
    SelfApprovalNotAllowed,
    create_tool,
    fingerprint,
)
from agent_core.decision_context import run_context
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import open_store
from tests import policy_fixtures
from tests.helpers import ExecLog
from tests.policy_fixtures import ROOT, app

#: the shared fixtures (three stores; the stores processes share)
location = policy_fixtures.location
shared_db = policy_fixtures.shared_db

FOUR_EYES = Policy(
    rules=[
        PolicyRule(
            id="big-refunds",
            tools=["issue_refund"],
            when="args.amount > 1000",
            decision="ask",
            approvers=2,
            reason="refunds over 1000 need two people",
        )
    ]
)


class RefundIn(BaseModel):
    amount: int


def refund_agent(ran: list) -> Agent:
    def refund(inp: RefundIn, ctx):
        ran.append(inp.amount)
        return {"refunded": inp.amount}

    def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="issue_refund", args={"amount": 5000}, id="c1")])
        return ModelResponse(text=messages[-1].content)

    tool = create_tool(id="issue_refund", input_schema=RefundIn, execute=refund)
    return Agent(id="ops", model=FunctionModel(model), tools={"issue_refund": tool})


async def test_two_distinct_people_approve(location: str) -> None:
    ran: list = []
    agent = refund_agent(ran)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=FOUR_EYES) as runtime:
        stream = await agent.stream("refund", actor="bob")
        await stream.chunks()
        run_id = stream.run_id
        with pytest.raises(ActorRequired):
            await agent.approve_tool_call(run_id=run_id)  # the runtime has no actor either
        with pytest.raises(SelfApprovalNotAllowed):
            await agent.approve_tool_call(run_id=run_id, actor="bob")
        first = await agent.approve_tool_call(run_id=run_id, actor="alice")
        chunks = await first.chunks()
        assert first.status == "suspended" and ran == []
        [again] = [c for c in chunks if c.type == "tool-call-approval"]
        assert [a["actor"] for a in again.payload.approvals] == ["alice"]
        assert (again.payload.approvers_required, again.payload.policy_rule) == (2, "big-refunds")
        with pytest.raises(AlreadyVoted):
            await agent.approve_tool_call(run_id=run_id, actor="alice")
        assert (await runtime.list_suspended_runs()).total == 1
        ctx = (await run_context(runtime, run_id)).calls["c1"]  # what the dialog and `runs show` read
        assert (ctx.policy_line, ctx.quorum_line) == (
            "rule big-refunds: refunds over 1000 need two people",
            "1 of 2 approvals (alice)",
        )
        done = await agent.approve_tool_call(run_id=run_id, actor="carol")
        await done.chunks()
        assert done.status == "finished" and ran == [5000]
        audit = await runtime.store.audit_log(run_id)
        assert [(a.decision, a.actor) for a in audit] == [("vote", "alice"), ("vote", "carol"), ("approved", "carol")]
        assert audit[0].detail is not None and audit[0].detail["policy_rule"] == "big-refunds"
        with pytest.raises(AlreadyDecided):
            await agent.approve_tool_call(run_id=run_id, tool_call_id="c1", actor="dave")


async def test_a_decline_by_anyone_ends_it(location: str) -> None:
    ran: list = []
    agent = refund_agent(ran)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=FOUR_EYES) as runtime:
        stream = await agent.stream("refund", actor="bob")
        await stream.chunks()
        await (await agent.approve_tool_call(run_id=stream.run_id, actor="alice")).chunks()
        declined = await agent.decline_tool_call(run_id=stream.run_id, reason="too much")
        await declined.chunks()
        assert declined.status == "finished" and ran == []
        assert [a.decision for a in await runtime.store.audit_log(stream.run_id)] == ["vote", "declined"]


async def test_votes_count_per_fingerprint(location: str) -> None:
    ran: list = []
    agent = refund_agent(ran)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=FOUR_EYES) as runtime:
        stream = await agent.stream("refund", actor="bob")
        await stream.chunks()
        run_id = stream.run_id
        await (await agent.approve_tool_call(run_id=run_id, actor="alice")).chunks()
        edited = await agent.approve_tool_call(run_id=run_id, actor="carol", args={"amount": 4000})
        await edited.chunks()
        assert edited.status == "suspended" and ran == []  # one vote for each fingerprint
        last = await agent.approve_tool_call(run_id=run_id, actor="alice", args={"amount": 4000})
        await last.chunks()
        assert last.status == "finished" and ran == [4000]
        votes = [a for a in await runtime.store.audit_log(run_id) if a.decision == "vote"]
        edited_fp = fingerprint("issue_refund", {"amount": 4000})
        assert [(v.actor, v.detail["fingerprint"] == edited_fp) for v in votes if v.detail] == [
            ("alice", False),
            ("carol", True),
            ("alice", True),
        ]


async def test_grants_and_one_approver_rules_keep_working(location: str) -> None:
    ran: list = []
    agent = refund_agent(ran)
    one = Policy(rules=[PolicyRule(id="refunds", tools=["issue_refund"], decision="ask")])
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=one):
        stream = await agent.stream("refund", actor="bob")
        await stream.chunks()
        done = await agent.approve_tool_call(run_id=stream.run_id)  # one approver: no actor needed
        await done.chunks()
        assert done.status == "finished" and ran == [5000]


async def test_quorum_across_processes_with_distinct_actors(shared_db: str, tmp_path: Path) -> None:
    policy_file = tmp_path / "four-eyes.toml"
    policy_file.write_text(
        '[[rules]]\nid = "deletes"\ntools = ["delete_*"]\ndecision = "ask"\napprovers = 2\nreason = "two people"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "WARDEN_TEST_DB": shared_db, "WARDEN_TEST_EXEC": str(tmp_path / "exec.db")}
    env["PYTHONPATH"] = str(ROOT)
    env.pop("WARDEN_TEST_POLICY", None)
    started = app({**env, "WARDEN_TEST_POLICY": str(policy_file)}, "start", "bob")
    assert started["status"] == "suspended"
    run_id = started["run_id"]
    alice = app(env, "approve", run_id, "d1", "alice")
    assert alice["ok"] and alice["status"] == "suspended"
    [chunk] = [c for c in alice["chunks"] if c["type"] == "tool-call-approval"]
    assert [a["actor"] for a in chunk["payload"]["approvals"]] == ["alice"]
    assert chunk["payload"]["approversRequired"] == 2
    again = app(env, "approve", run_id, "d1", "alice")
    assert (again["ok"], again["code"]) == (False, "AGENT_ALREADY_VOTED")
    selfie = app(env, "approve", run_id, "d1", "bob")
    assert (selfie["ok"], selfie["code"]) == (False, "AGENT_SELF_APPROVAL")
    nobody = app(env, "approve", run_id, "d1")
    assert (nobody["ok"], nobody["code"]) == (False, "AGENT_ACTOR_REQUIRED")
    assert ExecLog(env["WARDEN_TEST_EXEC"]).rows() == []
    carol = app(env, "approve", run_id, "d1", "carol")
    assert carol["ok"] and carol["status"] == "suspended"  # the next step's delete asks again
    assert ExecLog(env["WARDEN_TEST_EXEC"]).rows() == [("delete_record", {"id": "a"}), ("list_records", {"id": "b"})]
