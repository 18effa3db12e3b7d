"""Agents of other frameworks hosted by Warden, each with its real package and its own test model,
on a real SQLite store; decisions also come from other processes (``warden runs approve --app``)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from types import ModuleType

import pytest

from agent_core import EditNotSupported, ToolArgsInvalid, fingerprint
from agent_core.decisions import INTERRUPTED_DECLINED
from agent_core.engine import EDITED_NOTE, EXPIRED_MESSAGE
from tests.adapters.conftest import ROOT, exec_log, warden
from tests.helpers import drain, types


async def test_a_gated_call_is_approved_in_another_process_and_runs_once(fw, app_env):
    app, prefix, _, kind = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        assert agent.model.model_id == kind
        stream = await agent.stream("delete abc-123", thread_id="t1")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert approval.payload.tool_call_id == prefix + "0", "the framework's own tool-call id"
        assert approval.payload.fingerprint == fingerprint("delete_record", {"record_id": "abc-123"})
        listed = await rt.list_suspended_runs(agent_id="records")
        assert [(c.tool_call_id, c.tool_name, c.args) for r in listed.runs for c in r.tool_calls] == [
            (prefix + "0", "delete_record", {"record_id": "abc-123"})
        ]
    assert exec_log(app_env).rows() == [], "nothing runs before the decision"

    out = warden(app_env, f"{app.__name__}:build", "runs", "approve", stream.run_id, "--actor", "alice")
    assert out.returncode == 0, out.stderr

    assert exec_log(app_env).rows() == [
        ("delete_record", {"record_id": "abc-123"}),
        ("model", {"seen": ["deleted abc-123"]}),
    ]
    async with app.build() as rt:
        assert await rt.store.get_run(stream.run_id) is None, "the run finished"
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
        assert [(a.tool_call_id, a.decision, a.actor) for a in audit] == [(prefix + "0", "approved", "alice")]


async def test_a_decline_reaches_the_model_and_the_tool_never_runs(fw, app_env):
    app, prefix, _, _ = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc-123")
        await stream.wait()
        done = await agent.decline_tool_call(run_id=stream.run_id, tool_call_id=prefix + "0", reason="not that one")
        chunks = await drain(done)
        result = await done.result()
    assert "tool-output-denied" in types(chunks)
    assert result.status == "finished" and "not that one" in result.text
    [(tool, seen)] = exec_log(app_env).rows()
    assert tool == "model" and "not that one" in seen["seen"][0]


async def test_an_edit_runs_with_the_operators_arguments_or_is_refused(fw, app_env):
    app, prefix, editable, _ = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc-123")
        await stream.wait()
        if not editable:
            with pytest.raises(EditNotSupported) as err:
                await agent.approve_tool_call(run_id=stream.run_id, args={"record_id": "abc-999"})
            assert err.value.code == "AGENT_EDIT_NOT_SUPPORTED"
            assert (await rt.list_suspended_runs()).total == 1 and (await rt.audit_log()).entries == []
            assert exec_log(app_env).rows() == [], "nothing changed"
            return
        with pytest.raises(ToolArgsInvalid):
            await agent.approve_tool_call(run_id=stream.run_id, args={"record_id": 5})
        assert (await rt.list_suspended_runs()).total == 1, "a bad edit changes nothing"
        done = await agent.approve_tool_call(run_id=stream.run_id, args={"record_id": "abc-999"})
        chunks = await drain(done)
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    result = next(c for c in chunks if c.type == "tool-result" and c.payload.tool_call_id == prefix + "0")
    assert result.payload.args == {"record_id": "abc-999"}
    assert result.payload.result.endswith("deleted abc-999")  # LangChain also tells the model of the edit
    rows = exec_log(app_env).rows()
    assert rows[0] == ("delete_record", {"record_id": "abc-999"})
    assert (audit[0].decision, audit[0].args) == ("edited", {"record_id": "abc-999"})
    told = rows[-1][1]["seen"][0]  # the model is told of the edit: Warden's note, or LangChain's own
    assert EDITED_NOTE in told or "a human reviewer replaced this tool call" in told


@pytest.mark.parametrize("policy", ["flag", "function"])
async def test_the_request_policy_gates_a_tool_the_framework_did_not_mark(fw, app_env, policy):
    app, prefix, _, _ = fw
    require = True if policy == "flag" else (lambda call: call.tool_name == "lookup" and call.args["query"] == "x")
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x", require_tool_approval=require)
        chunks = await drain(stream)
        assert stream.status == "suspended"
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert (approval.payload.tool_name, approval.payload.tool_call_id) == ("lookup", prefix + "0")
        assert exec_log(app_env).rows() == [], "the unmarked tool waits too"
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
    assert result.text == "found x"
    assert [t for t, _ in exec_log(app_env).rows()] == ["lookup", "model"]


async def test_a_request_function_s_stop_is_decided_in_another_process_where_the_function_is_gone(fw, app_env):
    """In the deciding process the function counts as "approval required" for later calls only: the
    stopped turn resumes as it stopped (LangGraph's node asks its ``when`` again about that turn)."""
    app, prefix, _, _ = fw
    async with app.build() as rt:
        stream = await rt.get_agent("records").stream(
            "lookup x lookup z", require_tool_approval=lambda call: call.args.get("query") == "x"
        )
        chunks = await drain(stream)
        assert [c.payload.tool_call_id for c in chunks if c.type == "tool-call-approval"] == [prefix + "0"]
    out = warden(app_env, f"{app.__name__}:build", "runs", "approve", stream.run_id, "--actor", "alice")
    assert out.returncode == 0 and "failed" not in out.stdout, out.stdout + out.stderr
    rows = exec_log(app_env).rows()
    assert sorted(args["query"] for tool, args in rows if tool == "lookup") == ["x", "z"], "each ran once"
    assert rows[-1][0] == "model" and sorted(rows[-1][1]["seen"]) == ["found x", "found z"]
    async with app.build() as rt:
        assert await rt.store.get_run(stream.run_id) is None, "the run finished"


async def test_without_a_policy_an_unmarked_tool_is_not_gated_and_a_marked_one_waits(fw, app_env):
    app, _, _, kind = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x delete y")
        chunks = await drain(stream)
        assert [c.payload.tool_name for c in chunks if c.type == "tool-call-approval"] == ["delete_record"]
        ran_first = [c.payload.tool_name for c in chunks if c.type == "tool-result"]
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    assert sorted(result.text.split("; ")) == ["deleted y", "found x"]
    assert [(a.tool_name, a.decision) for a in audit] == [("delete_record", "approved")]
    log = [t for t, _ in exec_log(app_env).rows()]
    if kind == "langgraph" and os.environ.get("ADAPTER_LG_MODE") != "per_call":
        # LangGraph's batched review stops the whole step before any tool runs
        assert ran_first == [] and sorted(log[:2]) == ["delete_record", "lookup"] and log[2:] == ["model"]
    else:
        assert ran_first == ["lookup"] and log == ["lookup", "delete_record", "model"]


async def test_a_grant_approves_the_call_without_asking(fw, app_env):
    app, _, _, _ = fw
    async with app.build() as rt:
        grant = await rt.grant("delete_record", scope="thread", scope_id="t9", actor="ops")
        stream = await rt.get_agent("records").stream("delete abc", thread_id="t9")
        chunks = await drain(stream)
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    assert stream.status == "finished"
    result = next(c for c in chunks if c.type == "tool-result")
    assert result.payload.grant_id == grant.id
    assert [(a.decision, a.actor) for a in audit] == [("granted", "ops")]
    assert [t for t, _ in exec_log(app_env).rows()] == ["delete_record", "model"]


async def test_an_overdue_approval_is_expired_by_the_sweep_and_the_model_is_told(fw, app_env):
    app, _, _, _ = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc", approval_timeout=0.05)
        await stream.wait()
        listed = (await rt.list_suspended_runs()).runs[0].tool_calls[0]
        assert listed.expires_at is not None
        await asyncio.sleep(0.1)
        assert await rt.sweep() == 1
        assert await rt.store.get_run(stream.run_id) is None
    [(tool, seen)] = exec_log(app_env).rows()
    assert tool == "model" and EXPIRED_MESSAGE in seen["seen"][0]


async def test_killed_while_the_tool_runs_the_call_is_interrupted_and_recovered(fw, app_env, monkeypatch):
    app, prefix, _, _ = fw
    app_env["ADAPTER_LEASE"] = "1"
    monkeypatch.setenv("ADAPTER_LEASE", "1")
    async with app.build() as rt:
        stream = await rt.get_agent("records").stream("delete abc")
        await stream.wait()
    _approve_and_kill(app, stream.run_id, app_env, "tool")  # the decision is taken and the tool has started
    await asyncio.sleep(1.2)  # the dead process's lease runs out
    async with app.build() as rt:
        assert await rt.recover() == 0, "an interrupted call waits for an operator"
        call = (await rt.get_suspended_run(stream.run_id)).tool_calls[0]
        assert (call.kind, call.tool_call_id, call.approved_by) == ("interrupted", prefix + "0", "carol")
        done = await (await rt.decline_tool_call(run_id=stream.run_id)).result()
        assert done.status == "finished"
        assert await rt.store.get_run(stream.run_id) is None
    rows = exec_log(app_env).rows()
    assert [t for t, _ in rows] == ["delete_record", "model"], "the tool ran exactly once"
    assert INTERRUPTED_DECLINED in rows[-1][1]["seen"][0]


async def test_killed_between_the_decision_and_the_resume_the_call_returns_to_pending(fw, app_env, monkeypatch):
    app, prefix, _, _ = fw
    app_env["ADAPTER_LEASE"] = "1"
    monkeypatch.setenv("ADAPTER_LEASE", "1")
    async with app.build() as rt:
        stream = await rt.get_agent("records").stream("delete abc")
        await stream.wait()
        fp = (await rt.get_suspended_run(stream.run_id)).tool_calls[0].fingerprint
    _approve_and_kill(app, stream.run_id, app_env, "resume")  # approved, killed before the framework resumed
    assert [t for t, _ in exec_log(app_env).rows()] == ["stalled"], "the tool did not start"
    await asyncio.sleep(1.2)  # the dead process's lease runs out
    async with app.build() as rt:
        call = (await rt.get_suspended_run(stream.run_id)).tool_calls[0]
        assert (call.kind, call.tool_call_id, call.fingerprint, call.started_at) == ("approval", prefix + "0", fp, None)
        assert await rt.recover() == 0, "made durable, nothing to advance"
        done = await (await rt.approve_tool_call(run_id=stream.run_id, actor="alice")).result()
        decisions = [(a.decision, a.actor) for a in (await rt.audit_log(run_id=stream.run_id)).entries]
    assert done.status == "finished" and done.text == "deleted abc"
    assert decisions[0] == ("approved", "carol") and decisions[-1] == ("approved", "alice")
    assert [d for d, _ in decisions] == ["approved", "returned-to-pending", "approved"]
    assert [t for t, _ in exec_log(app_env).rows()] == ["stalled", "delete_record", "model"], "the tool ran once"


def _approve_and_kill(app: ModuleType, run_id: str, app_env: dict[str, str], hang: str) -> None:
    """``python -m APP approve RUN`` (as carol) with ADAPTER_HANG=``hang``; kill -9 once it logged a row."""
    proc = subprocess.Popen(
        [sys.executable, "-m", app.__name__, "approve", run_id],
        env={**os.environ, **app_env, "ADAPTER_HANG": hang},
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 60
    while not exec_log(app_env).rows():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.time() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


async def test_the_hosted_agent_describes_the_framework_s_tools(fw, app_env):
    app, _, editable, _ = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        assert agent.tools["delete_record"].require_approval is True
        assert agent.tools["lookup"].require_approval is None
        assert agent.tools["delete_record"].editable is editable
        assert agent.tools["delete_record"].json_schema()["properties"]["record_id"]["type"] == "string"


def test_agent_core_imports_no_framework_until_an_adapter_is_used():
    code = (
        "import sys, agent_core, agent_core.runtime, agent_core.adapters; "
        "from agent_core import Agent, Runtime; "
        "print(sorted(m for m in ('pydantic_ai', 'agents', 'langgraph', 'langchain') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


async def test_a_run_that_stops_twice_reports_each_result_once(fw, app_env):
    app, prefix, _, _ = fw
    async with app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x then delete y", require_tool_approval=True)
        first = await drain(stream)
        assert [c.payload.tool_call_id for c in first if c.type == "tool-call-approval"] == [prefix + "0"]
        second = await drain(await agent.approve_tool_call(run_id=stream.run_id))
        assert [c.payload.tool_call_id for c in second if c.type == "tool-result"] == [prefix + "0"]
        assert [c.payload.tool_call_id for c in second if c.type == "tool-call-approval"] == [prefix + "1"]
        listed = (await rt.list_suspended_runs()).runs[0].tool_calls
        assert [(c.tool_call_id, c.tool_name) for c in listed] == [(prefix + "1", "delete_record")]
        last = await agent.approve_tool_call(run_id=stream.run_id)
        third = await drain(last)
        result = await last.result()
    assert [c.payload.tool_call_id for c in third if c.type == "tool-result"] == [prefix + "1"]
    assert result.status == "finished" and result.text == "found x; deleted y"
    assert [t for t, _ in exec_log(app_env).rows()] == ["lookup", "delete_record", "model"]


async def test_warden_memory_keeps_the_thread_and_passes_it_to_the_framework(fw, app_env):
    import json

    from agent_core import Memory

    app, _, _, kind = fw
    async with app.build(memory=Memory()) as rt:
        agent = rt.get_agent("records")
        assert (await agent.generate("lookup x", thread_id="th")).text == "found x"
        stream = await agent.stream("delete y", thread_id="th")
        await stream.wait()
        framework_state = json.loads((await rt.store.get_run(stream.run_id)).snapshot)["framework_state"]
        if kind == "langgraph":  # the conversation is in the graph's checkpoint; the snapshot names it
            config = {"configurable": {"thread_id": framework_state["thread_id"]}}
            graph = agent.framework.graph
            values = (
                await graph.aget_state(config) if await agent.framework._uses_asyncio() else graph.get_state(config)
            ).values
            seen = [m.content for m in values["messages"]]
        else:
            seen = json.dumps(framework_state)
        assert "lookup x" in seen and "found x" in seen, "the framework got the thread's history"
        assert (await (await agent.approve_tool_call(run_id=stream.run_id)).result()).text == "deleted y"
        stored = await rt.store.load_messages("th", limit=10)
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "lookup x"),
        ("assistant", "found x"),
        ("user", "delete y"),
        ("assistant", "deleted y"),
    ]
