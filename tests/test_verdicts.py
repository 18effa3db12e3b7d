"""A decision is a typed value checked into a typed plan (``Decisions.check``), with no I/O.

Real rows from a real SQLite file: a run stops at a gated call; each verdict is checked against
the stored call and run, and the plan says what would be done. Checking writes nothing: the call
is still pending, and the audit log is empty, until the store's compare-and-set records one.
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool, fingerprint
from agent_core.decisions import INTERRUPTED_DECLINED
from agent_core.errors import (
    FingerprintMismatch,
    ResumeDataInvalid,
    SnapshotNotFound,
    ToolArgsInvalid,
    ToolCallNotSuspended,
    WrongDecisionKind,
)
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from agent_core.verdicts import Approve, Decline, Expire, Plan, Resume
from storage import SqliteStore


class SendIn(BaseModel):
    to: str
    priority: int = 1


class Answer(BaseModel):
    ok: bool


async def _ask(ctx_input: SendIn, ctx) -> dict:
    if ctx.resume_data is None:
        return await ctx.suspend({"question": "sure?"})
    return {"ok": ctx.resume_data.ok}


def _model(messages, info):
    if any(m.role == "tool" for m in messages):
        return "done"
    return ModelResponse(tool_calls=[ToolCall(name="send", args={"to": "ana"}), ToolCall(name="ask", args={"to": "x"})])


def _agent() -> Agent:
    send = create_tool(
        id="send", description="", input_schema=SendIn, require_approval=True, execute=lambda i, c: "sent"
    )
    ask = create_tool(id="ask", description="", input_schema=SendIn, resume_schema=Answer, execute=_ask)
    return Agent(id="mailer", model=FunctionModel(_model), tools={"send": send, "ask": ask})


@pytest.fixture
async def stopped(tmp_path):
    """A runtime on a SQLite file with one run waiting on an approval and an input request."""
    agent = _agent()
    async with Runtime(agents={"mailer": agent}, storage=SqliteStore(str(tmp_path / "w.db"))) as rt:
        s = await agent.stream("mail ana")
        await s.wait()
        run = await rt.store.get_run(s.run_id)
        calls = {c.tool_name: c for c in await rt.store.get_calls(s.run_id)}
        yield rt, agent, run, calls


async def _unchanged(rt: Runtime, run_id: str) -> None:
    assert {c.status for c in await rt.store.get_calls(run_id)} == {"pending"}
    assert await rt.store.audit_log(run_id) == []


async def test_each_verdict_becomes_its_plan(stopped) -> None:
    rt, agent, run, calls = stopped
    send, ask = calls["send"], calls["ask"]
    decision, plan = rt._decisions.check(agent, Approve(fingerprint=send.fingerprint, actor="ana"), send, run, "o1")
    assert (decision.status, decision.actor, decision.edited_args) == ("approved", "ana", None)
    assert isinstance(plan, Plan) and (plan.action, plan.owner, plan.args) == ("approve", "o1", None)
    assert plan.state is not None and plan.state.run_id == run.run_id

    decision, plan = rt._decisions.check(agent, Approve(args={"to": "bob", "priority": "3"}), send, run, "o2")
    assert plan.args == {"to": "bob", "priority": 3}, "edited arguments are validated and dumped as execute gets them"
    assert decision.detail is not None and decision.detail["edited_fingerprint"] == fingerprint("send", plan.args)

    decision, plan = rt._decisions.check(agent, Decline(reason="not today"), send, run, "o3")
    assert (decision.status, decision.reason, plan.action, plan.reason) == (
        "declined",
        "not today",
        "decline",
        "not today",
    )

    decision, plan = rt._decisions.check(agent, Resume({"ok": True}), ask, run, "o4")
    assert (decision.status, plan.action, plan.resume_data) == ("resuming", "resume", {"ok": True})
    await _unchanged(rt, run.run_id)


async def test_a_verdict_that_cannot_be_taken_raises_its_typed_error_and_writes_nothing(stopped) -> None:
    rt, agent, run, calls = stopped
    send, ask = calls["send"], calls["ask"]
    cases = [
        (Approve(fingerprint="sha256:nope"), send, FingerprintMismatch),
        (Approve(args={"priority": "high"}), send, ToolArgsInvalid),
        (Approve(), ask, WrongDecisionKind),
        (Resume({"ok": True}), send, WrongDecisionKind),
        (Resume({"ok": "maybe"}), ask, ResumeDataInvalid),
        (Expire(), send, ToolCallNotSuspended),  # not overdue
    ]
    for verdict, call, error in cases:
        with pytest.raises(error):
            rt._decisions.check(agent, verdict, call, run, "o")
    other = Agent(id="someone-else", model=FunctionModel(_model))
    with pytest.raises(SnapshotNotFound):
        rt._decisions.check(other, Approve(), send, run, "o")
    await _unchanged(rt, run.run_id)


async def test_declining_an_interrupted_call_tells_the_model_the_outcome_is_unknown(stopped) -> None:
    rt, agent, run, calls = stopped
    interrupted = calls["send"]
    interrupted.kind = "interrupted"
    decision, plan = rt._decisions.check(agent, Decline(reason="risky"), interrupted, run, "o")
    assert decision.reason == "risky", "the audit log keeps the operator's reason"
    assert plan.reason == INTERRUPTED_DECLINED + " Reason: risky", "the model is told the call may have run"


async def test_the_public_methods_build_the_verdicts(stopped) -> None:
    """``approve_tool_call(args=..., fingerprint=..., actor=...)`` keeps its signature and records the edit."""
    rt, agent, run, calls = stopped
    send = calls["send"]
    s = await agent.approve_tool_call(
        run_id=run.run_id, tool_call_id=send.tool_call_id, fingerprint=send.fingerprint, args={"to": "bob"}, actor="ana"
    )
    await s.wait()
    [entry] = await rt.store.audit_log(run.run_id, send.tool_call_id)
    assert (entry.decision, entry.actor) == ("edited", "ana")
