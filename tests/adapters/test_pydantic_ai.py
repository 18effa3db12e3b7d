"""pydantic-ai agents hosted by Warden, with pydantic-ai's own FunctionModel and a real SQLite store."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from agent_core import Runtime, ToolArgsInvalid, fingerprint
from agent_core.engine import EXPIRED_MESSAGE
from tests.adapters import pai_app
from tests.adapters.conftest import ROOT, exec_log, warden
from tests.helpers import drain, types

APP = "tests.adapters.pai_app:runtime"


async def test_a_gated_call_is_approved_in_another_process_and_runs_once(app_env):
    async with pai_app.build() as rt:
        stream = await rt.get_agent("records").stream("delete abc-123", thread_id="t1")
        chunks = await drain(stream)
        assert stream.status == "suspended"
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert approval.payload.tool_call_id == "pai-0"  # pydantic-ai's own tool_call_id
        assert approval.payload.fingerprint == fingerprint("delete_record", {"record_id": "abc-123"})
        listed = await rt.list_suspended_runs(agent_id="records")
        assert [(c.tool_call_id, c.tool_name, c.args) for r in listed.runs for c in r.tool_calls] == [
            ("pai-0", "delete_record", {"record_id": "abc-123"})
        ]
    assert exec_log(app_env).rows() == [], "nothing runs before the decision"

    out = warden(app_env, APP, "runs", "approve", stream.run_id, "--actor", "alice")
    assert out.returncode == 0, out.stderr

    rows = exec_log(app_env).rows()
    assert rows == [("delete_record", {"record_id": "abc-123"}), ("model", {"seen": ["delete_record=deleted abc-123"]})]
    async with pai_app.build() as rt:
        assert await rt.store.get_run(stream.run_id) is None, "the run finished"
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
        assert [(a.tool_call_id, a.decision, a.actor) for a in audit] == [("pai-0", "approved", "alice")]


async def test_a_decline_reaches_the_model_and_the_tool_never_runs(app_env):
    async with pai_app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc-123")
        await stream.wait()
        done = await agent.decline_tool_call(run_id=stream.run_id, tool_call_id="pai-0", reason="not that one")
        chunks = await drain(done)
        result = await done.result()
    assert "tool-output-denied" in types(chunks)
    assert result.status == "finished" and result.text == "delete_record=not that one"
    assert [t for t, _ in exec_log(app_env).rows()] == ["model"]


async def test_an_edit_runs_the_tool_with_the_operators_arguments(app_env):
    async with pai_app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc-123")
        await stream.wait()
        with pytest.raises(ToolArgsInvalid):
            await agent.approve_tool_call(run_id=stream.run_id, args={"record_id": 5})
        assert (await rt.list_suspended_runs()).total == 1, "a bad edit changes nothing"
        done = await agent.approve_tool_call(run_id=stream.run_id, args={"record_id": "abc-999"})
        chunks = await drain(done)
        audit = (await rt.audit_log(run_id=stream.run_id)).entries
    result = next(c for c in chunks if c.type == "tool-result" and c.payload.tool_call_id == "pai-0")
    assert result.payload.args == {"record_id": "abc-999"} and result.payload.result == "deleted abc-999"
    assert exec_log(app_env).rows()[0] == ("delete_record", {"record_id": "abc-999"})
    assert (audit[0].decision, audit[0].args) == ("edited", {"record_id": "abc-999"})


@pytest.mark.parametrize("policy", [True, "function"])
async def test_the_request_policy_gates_a_tool_pydantic_ai_did_not_mark(app_env, policy):
    require = True if policy is True else (lambda call: call.tool_name == "lookup" and call.args["query"] == "x")
    async with pai_app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x", require_tool_approval=require)
        chunks = await drain(stream)
        assert stream.status == "suspended"
        approval = next(c for c in chunks if c.type == "tool-call-approval")
        assert (approval.payload.tool_name, approval.payload.tool_call_id) == ("lookup", "pai-0")
        assert exec_log(app_env).rows() == [], "the unmarked tool waits too"
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
    assert result.text == "lookup=found x"
    assert [t for t, _ in exec_log(app_env).rows()] == ["lookup", "model"]


async def test_without_a_policy_an_unmarked_tool_runs_and_a_marked_one_waits(app_env):
    async with pai_app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("lookup x delete y")
        chunks = await drain(stream)
        assert [c.payload.tool_name for c in chunks if c.type == "tool-result"] == ["lookup"]
        assert [c.payload.tool_name for c in chunks if c.type == "tool-call-approval"] == ["delete_record"]
        result = await (await agent.approve_tool_call(run_id=stream.run_id)).result()
    assert (
        result.text == "delete_record=deleted y; lookup=found x"
        or result.text == "lookup=found x; delete_record=deleted y"
    )
    assert [t for t, _ in exec_log(app_env).rows()] == ["lookup", "delete_record", "model"]


async def test_a_grant_approves_the_call_without_asking(app_env):
    async with pai_app.build() as rt:
        grant = await rt.grant("delete_record", scope="thread", scope_id="t9", actor="ops")
        stream = await rt.get_agent("records").stream("delete abc", thread_id="t9")
        chunks = await drain(stream)
    assert stream.status == "finished"
    result = next(c for c in chunks if c.type == "tool-result")
    assert result.payload.grant_id == grant.id
    assert [t for t, _ in exec_log(app_env).rows()] == ["delete_record", "model"]


async def test_an_overdue_approval_is_expired_by_the_sweep_and_the_model_is_told(app_env):
    async with pai_app.build() as rt:
        agent = rt.get_agent("records")
        stream = await agent.stream("delete abc", approval_timeout=0.05)
        await stream.wait()
        listed = (await rt.list_suspended_runs()).runs[0].tool_calls[0]
        assert listed.expires_at is not None
        await asyncio.sleep(0.1)
        assert await rt.sweep() == 1
        assert await rt.store.get_run(stream.run_id) is None
    assert exec_log(app_env).rows() == [("model", {"seen": [f"delete_record={EXPIRED_MESSAGE}"]})]


async def test_killed_while_the_tool_runs_the_call_is_interrupted_and_recovered(app_env):
    app_env["ADAPTER_LEASE"] = "1"
    os.environ["ADAPTER_LEASE"] = "1"
    async with pai_app.build() as rt:
        stream = await rt.get_agent("records").stream("delete abc")
        await stream.wait()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.adapters.pai_app", "approve", stream.run_id],
        env={**os.environ, **app_env, "ADAPTER_HANG": "tool"},
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
    await asyncio.sleep(1.2)  # the dead process's lease runs out
    async with pai_app.build() as rt:
        assert await rt.recover() == 0, "an interrupted call waits for an operator"
        call = (await rt.get_suspended_run(stream.run_id)).tool_calls[0]
        assert (call.kind, call.tool_call_id, call.approved_by) == ("interrupted", "pai-0", "carol")
        done = await (await rt.decline_tool_call(run_id=stream.run_id)).result()
        assert done.status == "finished"
        assert await rt.store.get_run(stream.run_id) is None
    rows = exec_log(app_env).rows()
    assert [t for t, _ in rows] == ["delete_record", "model"], "the tool ran exactly once"
    assert "may or may not have run" in rows[-1][1]["seen"][0]


def test_agent_core_imports_no_framework_until_an_adapter_is_used():
    code = (
        "import sys, agent_core, agent_core.runtime, agent_core.adapters; "
        "from agent_core import Agent, Runtime; "
        "print(sorted(m for m in ('pydantic_ai', 'agents', 'langgraph', 'langchain') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


async def test_it_is_a_hosted_agent_like_warden_s_own(app_env):
    async with pai_app.build() as rt:
        agent = rt.get_agent("records")
        assert isinstance(rt, Runtime) and agent.name == "records" and agent.model.model_id == "pydantic-ai"
        assert agent.tools["delete_record"].require_approval is True
        assert agent.tools["lookup"].require_approval is None
        assert agent.tools["delete_record"].json_schema()["properties"] == {"record_id": {"type": "string"}}
