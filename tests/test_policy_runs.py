"""Policies in runs, on all three stores: gating, deny over everything, combining, storage, audit, shadow.

The durable example of the reference document runs across real processes: started by a
process with the policy, continued by one without any.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_core import Agent, InvalidRequest, Policy, PolicyRule, Runtime, create_tool
from agent_core.call_state import RunState
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import open_store
from tests import policy_fixtures
from tests.apps.policy_app import DELETES_ASK, build_runtime
from tests.helpers import ExecLog
from tests.policy_fixtures import ROOT, app

#: the shared fixtures (three stores; the stores processes share)
location = policy_fixtures.location
shared_db = policy_fixtures.shared_db

PAYMENTS = Policy.from_dict(
    {
        "label": "payments",
        "rules": [
            {
                "id": "big-refunds",
                "tools": ["issue_refund"],
                "when": "args.amount > 1000",
                "decision": "ask",
                "approvers": 2,
                "reason": "refunds over 1000 need two people",
            },
            {
                "id": "prod-deletes",
                "tools": ["delete_*"],
                "when": 'has(context.env) && context.env == "prod"',
                "decision": "deny",
                "reason": "never delete in prod",
            },
        ],
    }
)


class RefundIn(BaseModel):
    amount: int


class IdIn(BaseModel):
    id: str


def one_call(name: str, args: dict, record: list | None = None) -> FunctionModel:
    """Calls ``name`` once, then answers with the tool message it got."""

    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if record is not None:
            record.append(list(messages))
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name=name, args=args, id="c1")])
        return ModelResponse(text=messages[-1].content)

    return FunctionModel(fn)


def ops_agent(model: FunctionModel, ran: list, *, flag: bool | None = None) -> Agent:
    def refund(inp: RefundIn, ctx):
        ran.append(("issue_refund", inp.amount))
        return {"refunded": inp.amount}

    def delete(inp: IdIn, ctx):
        ran.append(("delete_user", inp.id))
        return {"deleted": inp.id}

    tools = {
        "issue_refund": create_tool(id="issue_refund", input_schema=RefundIn, execute=refund, require_approval=flag),
        "delete_user": create_tool(id="delete_user", input_schema=IdIn, execute=delete, require_approval=flag),
    }
    return Agent(id="ops", model=model, tools=tools)


async def test_ask_rule_gates_whatever_the_tool_flag_says(location: str) -> None:
    ran: list = []
    agent = ops_agent(one_call("issue_refund", {"amount": "5000"}), ran, flag=False)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS) as runtime:
        stream = await agent.stream("refund")
        chunks = await stream.chunks()
        assert stream.status == "suspended" and ran == []
        [approval] = [c for c in chunks if c.type == "tool-call-approval"]
        p = approval.payload
        assert (p.policy_rule, p.policy_reason, p.approvers_required, p.approvals) == (
            "big-refunds",
            "refunds over 1000 need two people",
            2,
            [],
        )
        # args the rule sees are the validated ones (the model sent "5000", a string)
        stored = RunState.from_json(
            (await runtime.store.get_run(stream.run_id)).snapshot, run_id=stream.run_id, store="t"
        )
        assert stored.policies == {PAYMENTS.version: PAYMENTS.body()}
        await (await agent.approve_tool_call(run_id=stream.run_id, actor="alice")).chunks()  # a vote (four eyes)
        done = await agent.approve_tool_call(run_id=stream.run_id, actor="carol")
        await done.chunks()
        assert ran == [("issue_refund", 5000)]
        entry = (await runtime.store.audit_log(stream.run_id))[-1]
        assert entry.decision == "approved" and entry.actor == "carol"
        assert entry.detail == {"policy_version": PAYMENTS.version, "policy_rule": "big-refunds"}


async def test_deny_beats_tool_flag_grant_and_request_flag(location: str) -> None:
    ran: list = []
    record: list = []
    agent = ops_agent(one_call("delete_user", {"id": "u1"}, record), ran, flag=True)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS) as runtime:
        await runtime.grant("delete_user", scope="agent", agent_id="ops")
        stream = await agent.stream("delete", require_tool_approval=True, request_context={"env": "prod"})
        chunks = await stream.chunks()
        assert stream.status == "finished" and ran == []
        [denied] = [c for c in chunks if c.type == "tool-output-denied"]
        assert denied.payload.policy_rule == "prod-deletes"
        assert denied.payload.reason == "Blocked by policy rule prod-deletes: never delete in prod"
        tool_msg = [m for m in record[-1] if m.role == "tool"][-1]
        assert json.loads(tool_msg.content) == "Blocked by policy rule prod-deletes: never delete in prod"
        [entry] = await runtime.store.audit_log(stream.run_id)
        assert (entry.decision, entry.tool_name, entry.reason) == (
            "blocked",
            "delete_user",
            "Blocked by policy rule prod-deletes: never delete in prod",
        )
        assert entry.detail == {"policy_version": PAYMENTS.version, "policy_rule": "prod-deletes"}
        # nothing pending: no operator can run it
        assert (await runtime.list_suspended_runs()).total == 0
        # outside prod the grant covers the flagged tool as before
        ok = await agent.stream("delete", request_context={"env": "dev"})
        await ok.chunks()
        assert ok.status == "finished" and ran == [("delete_user", "u1")]


async def test_grant_never_covers_a_four_eyes_rule(location: str) -> None:
    ran: list = []
    agent = ops_agent(one_call("issue_refund", {"amount": 5000}), ran)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS) as runtime:
        await runtime.grant("issue_refund", scope="agent", agent_id="ops")
        stream = await agent.stream("refund")
        await stream.chunks()
        assert stream.status == "suspended" and ran == []


async def test_request_policy_combines_with_the_runtimes(location: str) -> None:
    ran: list = []
    agent = ops_agent(one_call("issue_refund", {"amount": 10}), ran)
    request = Policy(rules=[PolicyRule(id="all-refunds", tools=["issue_refund"], decision="ask", reason="r")])
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS) as runtime:
        stream = await agent.stream("refund", require_tool_approval=request)
        chunks = await stream.chunks()
        assert stream.status == "suspended" and ran == []
        [approval] = [c for c in chunks if c.type == "tool-call-approval"]
        assert approval.payload.policy_rule == "all-refunds"
        run = await runtime.store.get_run(stream.run_id)
        stored = RunState.from_json(run.snapshot, run_id=stream.run_id, store="t")
        assert list(stored.policies) == [PAYMENTS.version, request.version]
        await (await agent.decline_tool_call(run_id=stream.run_id, reason="no")).chunks()
        [entry] = await runtime.store.audit_log(stream.run_id)
        assert entry.decision == "declined"
        assert entry.detail == {"policy_version": request.version, "policy_rule": "all-refunds"}


async def test_policy_allow_keeps_the_tools_own_flag(location: str) -> None:
    ran: list = []
    agent = ops_agent(one_call("issue_refund", {"amount": 10}), ran, flag=True)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS):
        stream = await agent.stream("refund")
        await stream.chunks()
        assert stream.status == "suspended"  # the policy allows; the tool's require_approval=True still asks
    agent2 = ops_agent(one_call("issue_refund", {"amount": 10}), ran)
    async with Runtime(agents={"ops": agent2}, storage=open_store(location), policy=PAYMENTS):
        stream = await agent2.stream("refund")
        await stream.chunks()
        assert stream.status == "finished" and ran == [("issue_refund", 10)]


async def test_evaluation_error_asks_and_is_audited(location: str) -> None:
    ran: list = []
    policy = Policy(rules=[PolicyRule(id="needs-env", decision="allow", when='context.env == "dev"')])
    agent = ops_agent(one_call("issue_refund", {"amount": 1}), ran)
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=policy) as runtime:
        stream = await agent.stream("refund")  # no context.env: the rule cannot be evaluated
        await stream.chunks()
        assert stream.status == "suspended" and ran == []
        [entry] = await runtime.store.audit_log(stream.run_id)
        assert entry.decision == "policy-error" and "needs-env" in (entry.reason or "")
        assert entry.detail is not None and entry.detail["policy_rule"] == "needs-env"


async def test_shadow_policy_audits_differences_and_never_enforces(location: str) -> None:
    ran: list = []
    candidate = Policy(rules=[PolicyRule(id="no-refunds", tools=["issue_refund"], decision="deny")])
    agent = ops_agent(one_call("issue_refund", {"amount": 10}), ran)
    async with Runtime(
        agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS, shadow_policy=candidate
    ) as runtime:
        stream = await agent.stream("refund")
        await stream.chunks()
        assert stream.status == "finished" and ran == [("issue_refund", 10)]  # enforced: allow
        [entry] = await runtime.store.audit_log(stream.run_id)
        assert entry.decision == "policy-shadow"
        assert entry.detail == {
            "decision": "allow",
            "policy_version": PAYMENTS.version,
            "policy_rule": None,
            "shadow_version": candidate.version,
            "shadow_decision": "deny",
            "shadow_rule": "no-refunds",
        }
        same = Policy(rules=[PolicyRule(id="x", tools=["nothing"], decision="deny")])
    async with Runtime(agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS, shadow_policy=same) as rt:
        stream = await agent.stream("refund")
        await stream.chunks()
        assert await rt.store.audit_log(stream.run_id) == []  # the same decision: nothing recorded


def test_runtime_rejects_a_non_policy() -> None:
    with pytest.raises(InvalidRequest, match="takes a Policy"):
        Runtime(policy={"rules": []})  # type: ignore[arg-type]


# -- the durable example across processes -------------------------------------------------------
async def test_durable_example_second_process_without_policy(shared_db: str, tmp_path: Path) -> None:
    policy_file = tmp_path / "deletes.toml"
    policy_file.write_text(DELETES_ASK, encoding="utf-8")
    base = {**os.environ, "WARDEN_TEST_DB": shared_db, "WARDEN_TEST_EXEC": str(tmp_path / "exec.db")}
    base["PYTHONPATH"] = str(ROOT)
    base.pop("WARDEN_TEST_POLICY", None)
    log = ExecLog(base["WARDEN_TEST_EXEC"])

    started = app({**base, "WARDEN_TEST_POLICY": str(policy_file)}, "start")
    assert started["ok"] and started["status"] == "suspended", started
    [approval] = [c for c in started["chunks"] if c["type"] == "tool-call-approval"]
    assert approval["payload"]["policyRule"] == "deletes"

    # another process, with no policy at all, approves: the next step keeps the stored policy's answers
    resumed = app(base, "approve", started["run_id"], "d1")
    assert resumed["ok"] and resumed["status"] == "suspended", resumed
    pending = [c["payload"]["toolCallId"] for c in resumed["chunks"] if c["type"] == "tool-call-approval"]
    assert pending == ["d2"]  # delete_record asks again; list_records ran without asking
    assert log.rows() == [("delete_record", {"id": "a"}), ("list_records", {"id": "b"})]

    async with build_runtime(shared_db, base["WARDEN_TEST_EXEC"]) as runtime:  # this process: no policy either
        agent = runtime.get_agent("ops")
        listed = await runtime.list_suspended_runs()
        assert [c.tool_name for r in listed.runs for c in r.tool_calls] == ["delete_record"]
        final = await agent.approve_tool_call_generate(run_id=started["run_id"], tool_call_id="d2")
        assert final.finish_reason == "stop"
        audit = await runtime.store.audit_log(started["run_id"])
        assert [(a.tool_call_id, a.decision) for a in audit] == [("d1", "approved"), ("d2", "approved")]
        assert all(a.detail and a.detail["policy_rule"] == "deletes" for a in audit)
        assert {a.detail["policy_version"] for a in audit if a.detail} == {Policy.load(policy_file).version}
    assert log.rows()[-1] == ("delete_record", {"id": "c"})


async def test_stored_policy_wins_over_the_deciding_process_policy(tmp_path: Path) -> None:
    """A later step in a process with *another* policy still evaluates the run's own."""
    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    deletes = Policy.from_dict({"rules": [{"id": "deletes", "tools": ["delete_*"], "decision": "ask"}]})
    permissive = Policy(default="allow")
    async with build_runtime(db, exec_path, deletes) as first:
        s = await first.get_agent("ops").stream("tidy up")
        await s.chunks()
        assert s.status == "suspended"
    async with build_runtime(db, exec_path, permissive) as second:
        r = await second.get_agent("ops").approve_tool_call(run_id=s.run_id, tool_call_id="d1")
        chunks = await r.chunks()
        assert r.status == "suspended"
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-call-approval"] == ["d2"]


async def test_shadow_policy_on_a_gated_call(location: str) -> None:
    ran: list = []
    candidate = Policy(default="allow")
    agent = ops_agent(one_call("issue_refund", {"amount": 5000}), ran)
    async with Runtime(
        agents={"ops": agent}, storage=open_store(location), policy=PAYMENTS, shadow_policy=candidate
    ) as runtime:
        stream = await agent.stream("refund")
        await stream.chunks()
        assert stream.status == "suspended" and ran == []  # the enforced rule still asks
        [entry] = await runtime.store.audit_log(stream.run_id)
        assert entry.decision == "policy-shadow"
        assert entry.detail is not None
        assert (entry.detail["decision"], entry.detail["policy_rule"]) == ("ask", "big-refunds")
        assert (entry.detail["shadow_decision"], entry.detail["shadow_rule"]) == ("allow", None)


async def test_an_agents_default_policy_is_stored_like_a_requests(location: str) -> None:
    ran: list = []
    deletes = Policy(rules=[PolicyRule(id="deletes", tools=["delete_*"], decision="ask")])

    def refund(inp: IdIn, ctx):
        ran.append(inp.id)
        return {"deleted": inp.id}

    tool = create_tool(id="delete_user", input_schema=IdIn, execute=refund)
    agent = Agent(
        id="ops",
        model=one_call("delete_user", {"id": "u1"}),
        tools={"delete_user": tool},
        default_options={"require_tool_approval": deletes},
    )
    async with Runtime(agents={"ops": agent}, storage=open_store(location)) as runtime:
        stream = await agent.stream("delete")
        await stream.chunks()
        assert stream.status == "suspended" and ran == []
        run = await runtime.store.get_run(stream.run_id)
        assert RunState.from_json(run.snapshot, run_id=stream.run_id, store="t").policies == {
            deletes.version: deletes.body()
        }


@pytest.mark.parametrize("change", ["invalid", "altered"])
async def test_an_altered_stored_policy_is_corrupt_and_nothing_changes(tmp_path: Path, change: str) -> None:
    import sqlite3

    from agent_core import CorruptSnapshot, policy_gate

    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    deletes = Policy.from_dict({"rules": [{"id": "deletes-" + change, "tools": ["delete_*"], "decision": "ask"}]})
    async with build_runtime(db, exec_path, deletes) as first:
        s = await first.get_agent("ops").stream("tidy up")
        await s.chunks()
    policy_gate._CACHE.clear()  # as in another process, which has never seen this version
    con = sqlite3.connect(db)
    (snapshot,) = con.execute("SELECT snapshot FROM runs WHERE run_id = ?", (s.run_id,)).fetchone()
    data = json.loads(snapshot)
    rule = data["policies"][deletes.version]["rules"][0]
    rule["decision"] = "maybe" if change == "invalid" else "allow"
    con.execute("UPDATE runs SET snapshot = ? WHERE run_id = ?", (json.dumps(data), s.run_id))
    con.commit()
    con.close()
    async with build_runtime(db, exec_path) as second:
        with pytest.raises(CorruptSnapshot, match="stored policy"):
            await second.get_agent("ops").approve_tool_call(run_id=s.run_id, tool_call_id="d1")
        assert [c.tool_call_id for r in (await second.list_suspended_runs()).runs for c in r.tool_calls] == ["d1"]
        assert await second.store.audit_log(s.run_id) == []
    assert ExecLog(exec_path).rows() == []
