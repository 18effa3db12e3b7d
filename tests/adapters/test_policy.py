"""Warden's ``Policy`` on the calls of agents of other frameworks, as on Warden's own: ``ask`` gates a tool
the framework did not mark (with the rule, its approvers and the quorum), ``deny`` refuses a call (the
model is told, the tool never runs), a four-eyes rule needs two distinct approvers. Each framework with
its real package and its own test model, on a real SQLite store; decisions also from other processes
(``warden runs approve --app``), which build their runtime without a policy: the run's stored one rules."""

from __future__ import annotations

import pytest

from agent_core import AlreadyDecided, AlreadyVoted, Policy, SelfApprovalNotAllowed, fingerprint
from tests.adapters import lg_app, pai_app
from tests.adapters.conftest import exec_log, warden
from tests.helpers import drain, types

LOOKUPS_ASK = Policy.from_dict(
    {"rules": [{"id": "lookups-reviewed", "tools": ["look*"], "decision": "ask", "reason": "lookups read PII"}]}
)
DELETES_DENIED = Policy.from_dict(
    {"rules": [{"id": "no-deletes", "tools": ["delete_record"], "decision": "deny", "reason": "records are kept"}]}
)
LOOKUPS_DENIED = Policy.from_dict(
    {"rules": [{"id": "no-lookups", "tools": ["lookup"], "decision": "deny", "reason": "lookups are off"}]}
)
FOUR_EYES = Policy.from_dict(
    {"rules": [{"id": "four-eyes", "tools": ["delete_record"], "decision": "ask", "approvers": 2}]}
)


async def test_an_ask_rule_gates_an_unmarked_tool_and_another_process_approves_under_the_stored_policy(fw, app_env):
    app, prefix, _, _ = fw
    async with app.build(policy=LOOKUPS_ASK) as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x then lookup z", actor="dana")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert (approval.payload.tool_name, approval.payload.tool_call_id) == ("lookup", prefix + "0")
        assert approval.payload.fingerprint == fingerprint("lookup", {"query": "x"})
        assert (approval.payload.policy_rule, approval.payload.approvers_required) == ("lookups-reviewed", 1)
        [listed] = (await rt.list_suspended_runs(agent_id="records")).runs[0].tool_calls
        assert (listed.tool_call_id, listed.policy_rule, listed.approvers_required) == (
            prefix + "0",
            "lookups-reviewed",
            1,
        )
    assert exec_log(app_env).rows() == [], "the tool the framework did not mark waits for the policy"

    # another process, whose runtime has no policy: the run's stored policy gates its next call too
    out = warden(app_env, f"{app.__name__}:build", "runs", "approve", stream.run_id, "--actor", "alice")
    assert out.returncode == 0, out.stderr
    assert exec_log(app_env).rows() == [("lookup", {"query": "x"})]

    async with app.build() as rt:
        [run] = (await rt.list_suspended_runs()).runs
        [second] = run.tool_calls
        assert (second.tool_call_id, second.args, second.policy_rule) == (
            prefix + "1",
            {"query": "z"},
            "lookups-reviewed",
        )
        result = await (await rt.approve_tool_call(run_id=stream.run_id, actor="bob")).result()
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    assert result.status == "finished" and result.text == "found x; found z"
    assert [t for t, _ in exec_log(app_env).rows()] == ["lookup", "lookup", "model"], "each call ran exactly once"
    assert [(a.tool_call_id, a.decision, a.actor, a.policy_rule) for a in audit] == [
        (prefix + "0", "approved", "alice", "lookups-reviewed"),
        (prefix + "1", "approved", "bob", "lookups-reviewed"),
    ]
    assert {a.policy_version for a in audit} == {LOOKUPS_ASK.version}


@pytest.mark.parametrize(
    ("policy", "prompt", "tool", "rule", "why"),
    [
        (LOOKUPS_DENIED, "lookup x", "lookup", "no-lookups", "lookups are off"),  # a tool the framework did not mark
        (DELETES_DENIED, "delete y", "delete_record", "no-deletes", "records are kept"),  # one it gates itself
    ],
)
async def test_a_deny_rule_refuses_the_call_the_model_is_told_and_the_tool_never_runs(
    fw, app_env, policy, prompt, tool, rule, why
):
    app, prefix, _, _ = fw
    async with app.build(policy=policy) as rt:
        grant = await rt.grant(tool, scope="thread", scope_id="t1", actor="ops")  # no grant can run it either
        stream = await rt.get_agent("records").stream(prompt, thread_id="t1")
        chunks = await drain(stream)
        result = await stream.result()
        assert (await rt.list_suspended_runs()).total == 0, "a denied call is never pending"
        with pytest.raises(AlreadyDecided):  # no operator can run it afterwards either
            await rt.approve_tool_call(run_id=stream.run_id, tool_call_id=prefix + "0", actor="alice")
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    blocked = f"Blocked by policy rule {rule}: {why}"
    assert result.status == "finished"
    assert "tool-call-approval" not in types(chunks)
    denied = next(c for c in chunks if c.type == "tool-output-denied")
    assert (denied.payload.tool_call_id, denied.payload.policy_rule) == (prefix + "0", rule)
    assert denied.payload.reason == blocked
    assert [(a.tool_call_id, a.decision, a.reason, a.policy_rule) for a in audit] == [
        (prefix + "0", "blocked", blocked, rule)
    ]
    assert grant.id not in str([a.reason for a in audit])
    [(ran, seen)] = exec_log(app_env).rows()
    assert ran == "model" and blocked in seen["seen"][0], "the model sees the policy's reason; the tool never ran"


async def test_a_denied_call_and_an_asked_one_of_the_same_stop(fw, app_env):
    policy = Policy.from_dict(
        {
            "rules": [
                {"id": "no-deletes", "tools": ["delete_record"], "decision": "deny", "reason": "records are kept"},
                {"id": "lookups-reviewed", "tools": ["lookup"], "decision": "ask"},
            ]
        }
    )
    app, prefix, _, _ = fw
    async with app.build(policy=policy) as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x delete y")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-output-denied"] == [prefix + "1"]
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-call-approval"] == [prefix + "0"]
        [listed] = (await rt.list_suspended_runs()).runs[0].tool_calls
        assert listed.tool_call_id == prefix + "0"
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
    assert result.status == "finished"
    rows = exec_log(app_env).rows()
    assert [t for t, _ in rows] == ["lookup", "model"]
    seen = rows[-1][1]["seen"]
    assert "found x" in seen and any("Blocked by policy rule no-deletes: records are kept" in s for s in seen)


async def test_a_quorum_rule_needs_two_distinct_approvers_before_the_framework_resumes(fw, app_env):
    app, prefix, _, _ = fw
    async with app.build(policy=FOUR_EYES) as rt:
        await rt.grant("delete_record", scope="thread", scope_id="t4", actor="ops")  # never covers a 2-approver rule
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc", thread_id="t4", actor="dana")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert (approval.payload.policy_rule, approval.payload.approvers_required) == ("four-eyes", 2)
        with pytest.raises(SelfApprovalNotAllowed):
            await agent.approve_tool_call(run_id=stream.run_id, actor="dana")

    out = warden(app_env, f"{app.__name__}:build", "runs", "approve", stream.run_id, "--actor", "alice")
    assert out.returncode == 0, out.stderr
    assert "1 of 2 approvals" in out.stdout
    assert exec_log(app_env).rows() == [], "one approval does not resume the framework"

    async with app.build(policy=FOUR_EYES) as rt:
        agent = rt.get_agent("records")
        [call] = (await rt.list_suspended_runs()).runs[0].tool_calls
        assert (call.tool_call_id, call.approvers_required) == (prefix + "0", 2)
        assert [a["actor"] for a in call.approvals] == ["alice"]
        with pytest.raises(AlreadyVoted):
            await agent.approve_tool_call(run_id=stream.run_id, actor="alice")
        done = await agent.approve_tool_call(run_id=stream.run_id, actor="bob")
        result = await done.result()
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    assert result.status == "finished" and result.text == "deleted abc"
    assert [t for t, _ in exec_log(app_env).rows()] == ["delete_record", "model"], "it ran once, after the second"
    assert [(a.decision, a.actor) for a in audit] == [("vote", "alice"), ("vote", "bob"), ("approved", "bob")]
    assert all(a.policy_rule == "four-eyes" for a in audit)


async def test_an_allow_rule_leaves_the_framework_s_own_gate_and_the_request_flag(fw, app_env):
    allow_all = Policy.from_dict({"rules": [{"id": "ok", "decision": "allow"}]})
    app, _, _, _ = fw
    async with app.build(policy=allow_all) as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x delete y")
        chunks = await drain(stream)
        # the tool's own flag still asks when the policy allows; the unmarked tool runs
        assert [c.payload.tool_name for c in chunks if c.type == "tool-call-approval"] == ["delete_record"]
        assert next(c for c in chunks if c.type == "tool-call-approval").payload.policy_rule == "ok"
        await (await agent.approve_tool_call(run_id=stream.run_id)).result()
        flagged = await agent.stream("lookup q", require_tool_approval=True)
        gated = [c.payload.tool_name for c in await drain(flagged) if c.type == "tool-call-approval"]
        assert gated == ["lookup"], "the request's flag still gates what the policy allows"


async def test_a_request_level_policy_is_stored_and_applied_like_the_runtime_s(fw, app_env):
    app, prefix, _, _ = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x", require_tool_approval=LOOKUPS_ASK)
        chunks = await drain(stream)
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert (approval.payload.tool_call_id, approval.payload.policy_rule) == (prefix + "0", "lookups-reviewed")
        result = await (await agent.approve_tool_call(run_id=stream.run_id, actor="alice")).result()
        [entry] = (await rt.audit_log(run_id=stream.run_id)).entries
    assert result.text == "found x"
    assert (entry.decision, entry.policy_version, entry.policy_rule) == (
        "approved",
        LOOKUPS_ASK.version,
        "lookups-reviewed",
    )


async def test_a_rule_that_fails_to_evaluate_asks_and_is_audited(fw, app_env):
    broken = Policy.from_dict(
        {"rules": [{"id": "prod-lookups", "tools": ["lookup"], "when": "context.env == 'prod'", "decision": "deny"}]}
    )
    app, prefix, _, _ = fw
    async with app.build(policy=broken) as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x")  # no request context: ``context.env`` is an evaluation error
        chunks = await drain(stream)
        assert stream.status == "suspended", "fail closed: the call waits, it is neither run nor refused"
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-call-approval"] == [prefix + "0"]
        [entry] = (await rt.audit_log(run_id=stream.run_id)).entries
        assert (entry.decision, entry.tool_call_id, entry.policy_rule) == ("policy-error", prefix + "0", "prod-lookups")
        assert entry.reason
    assert exec_log(app_env).rows() == []


@pytest.mark.parametrize(
    ("policy", "hooked"),
    [
        ({"rules": [{"id": "ok", "decision": "allow"}]}, False),  # can never stop a call: no hook
        ({"rules": [{"id": "ok", "decision": "allow", "when": "args.query == 'x'"}]}, True),  # may fail: asks
        ({"default": "ask", "rules": []}, True),
        ({"rules": [{"id": "no", "tools": ["lookup"], "decision": "deny"}]}, True),
    ],
)
def test_the_framework_gets_warden_s_hook_whenever_a_stored_policy_could_stop_a_call(policy, hooked, app_env):
    from agent_core.adapters import from_pydantic_ai
    from agent_core.adapters.gate import WardenGate
    from agent_core.call_state import RunState
    from agent_core.engine import Execution
    from agent_core.policy_gate import with_policy

    agent = from_pydantic_ai(pai_app.pydantic_agent(exec_log(app_env)), id="records")
    state = RunState(run_id="r", agent_id="records", agent_path=["records"])
    state.policies = with_policy({}, Policy.from_dict(policy))
    assert WardenGate(agent, state, Execution()).asks is hooked


async def test_langgraph_a_deny_of_a_tool_whose_review_cannot_reject_fails_the_run_and_the_tool_never_runs(app_env):
    """LangChain refuses a ``reject`` for a tool configured without it: Warden fails the run (closed)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_core import Runtime
    from agent_core.adapters import from_langgraph
    from storage import SqliteStore

    graph = lg_app.langgraph_agent(
        exec_log(app_env), InMemorySaver(), interrupt_on={"delete_record": {"allowed_decisions": ["approve"]}}
    )
    agent = from_langgraph(graph, id="records")
    async with Runtime(agents={"records": agent}, storage=SqliteStore(app_env["ADAPTER_DB"]), policy=DELETES_DENIED):
        stream = await agent.stream("delete y")
        chunks = await drain(stream)
        assert stream.status == "failed"
        error = next(c for c in chunks if c.type == "error")
        assert error.payload.code == "AGENT_RUN_FAILED" and "reject" in error.payload.error
    assert exec_log(app_env).rows() == [], "the tool never ran"


async def test_a_shadow_policy_is_audited_where_it_differs_and_changes_nothing(fw, app_env):
    shadow = Policy.from_dict(
        {
            "rules": [
                {"id": "shadow-no-lookups", "tools": ["lookup"], "decision": "deny"},
                {"id": "shadow-deletes-ok", "tools": ["delete_record"], "decision": "allow"},
            ]
        }
    )
    app, prefix, _, _ = fw
    async with app.build(policy=FOUR_EYES) as rt:
        rt.shadow_policy = shadow
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x then delete y", actor="dana")
        await drain(stream)
        [call] = (await rt.list_suspended_runs()).runs[0].tool_calls
        assert (call.tool_name, call.approvers_required) == ("delete_record", 2), "the enforced policy rules"
        await agent.approve_tool_call(run_id=stream.run_id, actor="alice")
        result = await (await agent.approve_tool_call(run_id=stream.run_id, actor="bob")).result()
        audit = await rt.store.audit_log(stream.run_id)
    assert result.text == "found x; deleted y"
    assert [t for t, _ in exec_log(app_env).rows()] == ["lookup", "delete_record", "model"]
    shadows = [(a.tool_call_id, a.detail) for a in audit if a.decision == "policy-shadow"]
    assert shadows == [
        (  # ran inside the framework: audited once that stretch of its run ended
            prefix + "0",
            {
                "decision": "allow",
                "policy_version": FOUR_EYES.version,
                "policy_rule": None,
                "shadow_version": shadow.version,
                "shadow_decision": "deny",
                "shadow_rule": "shadow-no-lookups",
            },
        ),
        (
            prefix + "1",
            {
                "decision": "ask",
                "policy_version": FOUR_EYES.version,
                "policy_rule": "four-eyes",
                "shadow_version": shadow.version,
                "shadow_decision": "allow",
                "shadow_rule": "shadow-deletes-ok",
            },
        ),
    ]


async def test_a_shadow_policy_alone_sees_the_calls_the_framework_runs_without_asking(fw, app_env):
    shadow = Policy.from_dict({"rules": [{"id": "shadow-no-lookups", "tools": ["lookup"], "decision": "deny"}]})
    app, prefix, _, _ = fw
    async with app.build() as rt:
        rt.shadow_policy = shadow
        result = await rt.get_agent("records").generate("lookup x")
        audit = await rt.store.audit_log(result.run_id)
    assert result.status == "finished" and result.text == "found x", "a shadow policy never enforces"
    assert [(a.decision, a.tool_call_id, a.detail["decision"], a.detail["shadow_rule"]) for a in audit] == [
        ("policy-shadow", prefix + "0", "allow", "shadow-no-lookups")
    ]


async def test_a_shadow_entry_per_call_when_an_allowed_call_shares_a_stop_with_a_gated_one(fw, app_env):
    shadow = Policy.from_dict({"rules": [{"id": "shadow-no-lookups", "tools": ["lookup"], "decision": "deny"}]})
    app, prefix, _, _ = fw
    async with app.build() as rt:
        rt.shadow_policy = shadow
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x delete y")
        await stream.wait()
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
        audit = await rt.store.audit_log(stream.run_id)
    assert sorted(result.text.split("; ")) == ["deleted y", "found x"]
    shadow_entries = [a for a in audit if a.decision == "policy-shadow"]
    shadows = [(a.tool_call_id, a.detail["decision"], a.detail["shadow_decision"]) for a in shadow_entries]
    assert sorted(shadows) == [
        (prefix + "0", "allow", "deny"),  # once, though a resumed LangGraph node asks about it again
        (prefix + "1", "ask", "allow"),  # the framework gates it; the shadow policy would not
    ]


async def test_langgraph_per_call_interrupts_under_a_policy(app_env):
    """``interrupt_mode="per_call"``: one interrupt per reviewed call, each answered by its interrupt id."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agent_core import Runtime
    from agent_core.adapters import from_langgraph
    from storage import SqliteStore

    policy = Policy.from_dict(
        {
            "rules": [
                {"id": "no-deletes", "tools": ["delete_record"], "decision": "deny", "reason": "records are kept"},
                {"id": "lookups-reviewed", "tools": ["lookup"], "decision": "ask", "approvers": 2},
            ]
        }
    )
    graph = lg_app.langgraph_agent(exec_log(app_env), InMemorySaver(), interrupt_mode="per_call")
    agent = from_langgraph(graph, id="records")
    async with Runtime(agents={"records": agent}, storage=SqliteStore(app_env["ADAPTER_DB"]), policy=policy):
        stream = await agent.stream("lookup x delete y then lookup z")
        chunks = await drain(stream)
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-output-denied"] == ["lg-1"]
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-call-approval"] == ["lg-0"]
        await agent.approve_tool_call(run_id=stream.run_id, actor="alice")
        assert exec_log(app_env).rows() == [], "one vote of two"
        second = await drain(await agent.approve_tool_call(run_id=stream.run_id, actor="bob"))
        assert [c.payload.tool_call_id for c in second if c.type == "tool-call-approval"] == ["lg-2"]
        await agent.approve_tool_call(run_id=stream.run_id, actor="alice")
        result = await (await agent.approve_tool_call(run_id=stream.run_id, actor="bob")).result()
    assert result.status == "finished"
    rows = exec_log(app_env).rows()
    assert [t for t, _ in rows] == ["lookup", "lookup", "model"]
    assert any("Blocked by policy rule no-deletes: records are kept" in s for s in rows[-1][1]["seen"])
