"""Supervisor agents: approvals and suspensions inside sub-agents, at any depth, decided from the top."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.apps.supervisors import Confirm, build_chain, build_runtime
from tests.helpers import ExecLog, drain, types

ROOT = Path(__file__).resolve().parent.parent


def one_level(log: list, *, require_approval=True):
    class UserIn(BaseModel):
        user_id: str

    async def find_user(inp, ctx):
        log.append(inp.user_id)
        return {"id": inp.user_id, "name": "Ann", "email": "ann@example.com"}

    tool = create_tool(
        id="find-user",
        description="Finds user by ID in the database",
        input_schema=UserIn,
        require_approval=require_approval,
        execute=find_user,
    )

    def data_model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="find_user", args={"user_id": "12345"}, id="call_1")])
        return ModelResponse(text="found: " + messages[-1].content)

    data_agent = Agent(
        id="data-agent",
        name="Data Agent",
        description="Handles database queries",
        model=FunctionModel(data_model),
        tools={"find_user": tool},
    )

    def sup_model(messages, info):
        assert {t.name for t in info.tools} == {"agent-data_agent"}
        if messages[-1].role == "user":
            return ModelResponse(
                tool_calls=[ToolCall(name="agent-data_agent", args={"prompt": "find 12345"}, id="call_1")]
            )
        return ModelResponse(text="supervisor says " + messages[-1].content)

    return Agent(
        id="supervisor",
        name="Supervisor Agent",
        instructions="You coordinate data retrieval tasks.",
        model=FunctionModel(sup_model),
        agents={"data_agent": data_agent},
    )


async def test_sub_agent_approval_surfaces_at_the_top_and_flows_down():
    log: list = []
    sup = one_level(log)
    stream = await sup.stream("Find user with ID 12345")
    chunks = await drain(stream)
    approval = [c for c in chunks if c.type == "tool-call-approval"]
    assert len(approval) == 1 and log == []
    p = approval[0].payload
    assert p.tool_name == "find_user" and p.args == {"user_id": "12345"}
    assert p.agent_path == ["supervisor", "data-agent"]
    assert p.tool_call_id != "call_1", "ids stay unique across the run tree (the supervisor used call_1)"
    listed = await sup.list_suspended_runs()
    assert listed.total == 1 and listed.runs[0].tool_calls[0].agent_path == ["supervisor", "data-agent"]

    resumed = await sup.approve_tool_call(run_id=stream.run_id, tool_call_id=p.tool_call_id)
    text = await resumed.text()
    assert log == ["12345"] and resumed.status == "finished"
    assert text.startswith("supervisor says ") and "found: " in text and "ann@example.com" in text


async def test_sub_agent_decline_and_generate():
    log: list = []
    sup = one_level(log)
    out = await sup.generate("Find user with ID 12345", max_steps=10)
    assert out.finish_reason == "suspended" and out.suspend_payload.tool_name == "find_user"
    res = await sup.decline_tool_call_generate(
        run_id=out.run_id, tool_call_id=out.suspend_payload.tool_call_id, reason="privacy"
    )
    assert log == [] and res.finish_reason == "stop" and "privacy" in res.text


async def test_suspend_inside_a_sub_agent_resumes_from_the_top():
    class OpIn(BaseModel):
        operation: str

    done: list = []

    async def conditional(inp, ctx):
        if not (ctx.resume_data and ctx.resume_data.confirmed):
            return await ctx.suspend({"message": f"Confirm: {inp.operation}?"})
        done.append(inp.operation)
        return {"done": inp.operation}

    tool = create_tool(id="conditional-operation", input_schema=OpIn, resume_schema=Confirm, execute=conditional)

    def worker_model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="op", args={"operation": "purge"}, id="w1")])
        return ModelResponse(text="worker: " + messages[-1].content)

    worker = Agent(id="worker", model=FunctionModel(worker_model), tools={"op": tool})

    def sup_model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="agent-worker", args={"prompt": "purge"}, id="s1")])
        return ModelResponse(text="top: " + messages[-1].content)

    sup = Agent(id="sup", model=FunctionModel(sup_model), agents={"worker": worker})
    stream = await sup.stream("purge it")
    chunks = await drain(stream)
    assert types(chunks)[-1] == "tool-call-suspended"
    assert chunks[-1].payload.suspend_payload == {"message": "Confirm: purge?"}
    assert chunks[-1].payload.agent_path == ["sup", "worker"]
    resumed = await sup.resume_stream({"confirmed": True}, run_id=stream.run_id)
    assert "worker:" in await resumed.text() and done == ["purge"]


async def test_two_sub_agents_suspended_in_parallel_are_addressed_by_id():
    log: list = []

    class UserIn(BaseModel):
        user_id: str

    async def find(inp, ctx):
        log.append(inp.user_id)
        return inp.user_id

    def sub(agent_id: str, uid: str):
        tool = create_tool(id="find", input_schema=UserIn, require_approval=True, execute=find)

        def model(messages, info):
            if messages[-1].role == "user":
                return ModelResponse(tool_calls=[ToolCall(name="find", args={"user_id": uid}, id="call_1")])
            return ModelResponse(text=f"{agent_id}:{messages[-1].content}")

        return Agent(id=agent_id, model=FunctionModel(model), tools={"find": tool})

    calls_seen: list = []

    def sup_model(messages, info):
        calls_seen.append(messages[-1].role)
        if messages[-1].role == "user":
            return ModelResponse(
                tool_calls=[
                    ToolCall(name="agent-a", args={"prompt": "x"}, id="call_1"),
                    ToolCall(name="agent-b", args={"prompt": "y"}, id="call_2"),
                ]
            )
        return ModelResponse(text=" & ".join(m.content for m in messages if m.role == "tool"))

    sup = Agent(id="sup", model=FunctionModel(sup_model), agents={"a": sub("sub-a", "1"), "b": sub("sub-b", "2")})
    stream = await sup.stream("both")
    chunks = await drain(stream)
    pending = [c.payload for c in chunks if c.type == "tool-call-approval"]
    assert [p.agent_path[-1] for p in pending] == ["sub-a", "sub-b"]
    assert len({p.tool_call_id for p in pending}) == 2
    by_agent = {p.agent_path[-1]: p.tool_call_id for p in pending}
    first = await sup.approve_tool_call(run_id=stream.run_id, tool_call_id=by_agent["sub-b"])
    await first.wait()
    assert first.status == "suspended" and log == ["2"] and calls_seen == ["user"]
    second = await sup.approve_tool_call(run_id=stream.run_id, tool_call_id=by_agent["sub-a"])
    text = await second.text()
    assert log == ["2", "1"] and second.status == "finished"
    assert text == '"sub-a:\\"1\\"" & "sub-b:\\"2\\""'


async def test_three_levels_approve_decline_in_process(tmp_path):
    sup = build_chain(str(tmp_path / "exec.db"))
    out = await sup.generate("Find user with ID 777")
    assert out.suspend_payload.agent_path == ["supervisor", "team-agent", "data-agent"]
    assert out.suspend_payload.tool_name == "find_user" and out.suspend_payload.args == {"user_id": "777"}
    res = await sup.approve_tool_call_generate(run_id=out.run_id, tool_call_id=out.suspend_payload.tool_call_id)
    assert res.text.startswith("top(") and "team(" in res.text and "data(" in res.text and "Ann" in res.text
    out2 = await sup.generate("Find user with ID 778")
    res2 = await sup.decline_tool_call_generate(run_id=out2.run_id)
    assert "not approved" in res2.text
    assert ExecLog(tmp_path / "exec.db").rows() == [("find_user", {"user_id": "777"})]


async def test_three_level_run_survives_a_process_restart(tmp_path):
    db, exec_path = str(tmp_path / "w.db"), str(tmp_path / "exec.db")
    out = subprocess.run(
        [sys.executable, "-m", "tests.apps.supervisors", "start", db, exec_path],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert out.returncode == 0, out.stderr
    started = json.loads(out.stdout)
    assert started["status"] == "suspended" and started["type"] == "tool-call-approval"
    assert started["payload"]["agent_path"] == ["supervisor", "team-agent", "data-agent"]
    assert ExecLog(exec_path).rows() == []

    async with build_runtime(db, exec_path) as runtime:  # a new process's view of the same file
        sup = runtime.get_agent("supervisor")
        listed = await sup.list_suspended_runs(thread_id="t-1", resource_id="u-1")
        assert listed.total == 1, "only the top run is listed"
        run = listed.runs[0]
        call = run.tool_calls[0]
        assert run.agent_id == "supervisor" and call.tool_name == "find_user" and call.requires_approval
        res = await sup.approve_tool_call_generate(
            run_id=run.run_id, tool_call_id=call.tool_call_id, fingerprint=call.fingerprint
        )
        assert res.finish_reason == "stop"
        assert res.text.startswith("top(") and "team(" in res.text and "data(" in res.text
        assert (await runtime.list_suspended_runs()).total == 0
        history = await runtime.store.load_messages("t-1")
        assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
    assert ExecLog(exec_path).rows() == [("find_user", {"user_id": "12345"})]


async def test_request_level_approval_gates_the_delegation_itself(tmp_path):
    log: list = []
    sup = one_level(log, require_approval=False)
    out = await sup.generate("Find user", require_tool_approval=True)
    assert out.suspend_payload.tool_name == "agent-data_agent" and out.suspend_payload.agent_path == ["supervisor"]
    res = await sup.approve_tool_call_generate(run_id=out.run_id)
    assert res.finish_reason == "stop" and log == ["12345"]


async def test_supervisor_in_sqlite_runtime(tmp_path):
    log: list = []
    sup = one_level(log)
    async with Runtime(agents={"supervisor": sup}, storage=SqliteStore(tmp_path / "w.db")):
        out = await sup.generate("Find user")
        res = await sup.approve_tool_call_generate(run_id=out.run_id, tool_call_id=out.suspend_payload.tool_call_id)
        assert res.finish_reason == "stop" and log == ["12345"]
