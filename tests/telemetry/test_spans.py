"""Spans and metrics of runs, tool calls and the human wait, read back from a real SDK's exporter."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from opentelemetry import trace
from opentelemetry.trace import StatusCode

from agent_core import Agent, Policy, PolicyRule, Runtime, create_tool, fingerprint, telemetry
from storage import SqliteStore
from tests.helpers import IdIn, drain, recording_tool, script
from tests.telemetry.conftest import Otel

ROOT = Path(__file__).resolve().parents[2]


def make_agent(log: list[str], **tool_options) -> Agent:
    tool = recording_tool(log, id="delete_tool") if not tool_options else _tool(log, **tool_options)
    return Agent(
        id="ops", model=script([("delete_tool", {"id": "abc-123"}, "call_1")], "done"), tools={"delete_tool": tool}
    )


def _tool(log: list[str], **options):
    async def execute(inp: IdIn, ctx) -> dict:
        log.append(inp.id)
        return {"deleted": True}

    return create_tool(id="delete_tool", input_schema=IdIn, execute=execute, require_approval=True, **options)


async def suspended(agent: Agent, **kw):
    stream = await agent.stream("delete abc-123", thread_id="thread-1", **kw)
    await drain(stream)
    assert stream.status == "suspended", stream.error
    return stream


async def stored_traceparent(store: SqliteStore, run_id: str) -> str | None:
    row = await store.get_run(run_id)
    assert row is not None
    return json.loads(row.snapshot)["traceparent"]


def parent_id(span) -> int | None:
    return None if span.parent is None else span.parent.span_id


async def test_approved_call_spans_names_attributes_and_parentage(otel: Otel, tmp_path) -> None:
    log: list[str] = []
    agent = make_agent(log)
    store = SqliteStore(tmp_path / "w.db")
    async with Runtime(agents={"ops": agent}, storage=store):
        stream = await suspended(agent)
        first = otel.one("invoke_agent ops")
        assert otel.named("execute_tool delete_tool") == [] and otel.named("await_approval delete_tool") == []
        # the run's traceparent is stored in its snapshot: the first invoke_agent span
        ctx = first.context
        assert (await stored_traceparent(store, stream.run_id) or "").startswith(
            f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-"
        )
        await drain(await agent.approve_tool_call(run_id=stream.run_id, actor="alice"))
    assert log == ["abc-123"]

    spans = otel.spans()
    assert {s.context.trace_id for s in spans} == {first.context.trace_id}
    assert sorted(s.name for s in spans) == [
        "await_approval delete_tool",
        "chat function",
        "chat function",
        "execute_tool delete_tool",
        "invoke_agent ops",
        "invoke_agent ops",
    ]
    assert dict(first.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": "ops",
        "gen_ai.conversation.id": "thread-1",
        "warden.run.id": stream.run_id,
        "warden.run.outcome": "suspended",
    }
    resumed = next(s for s in otel.named("invoke_agent ops") if s is not first)
    assert parent_id(resumed) == first.context.span_id
    assert resumed.attributes["warden.run.outcome"] == "finished"

    wait = otel.one("await_approval delete_tool")
    assert parent_id(wait) == first.context.span_id
    assert dict(wait.attributes) == {
        "warden.run.id": stream.run_id,
        "warden.approval.decision": "approved",
        "warden.approval.actor": "alice",
        "warden.approval.fingerprint": fingerprint("delete_tool", {"id": "abc-123"}),
        "warden.approval.wait_ms": wait.attributes["warden.approval.wait_ms"],
        "gen_ai.tool.name": "delete_tool",
        "gen_ai.tool.call.id": "call_1",
    }
    assert wait.attributes["warden.approval.wait_ms"] >= 0
    # from gating (in the first advance) to the decision (before the resumed advance)
    assert first.start_time <= wait.start_time <= first.end_time <= wait.end_time <= resumed.start_time

    tool = otel.one("execute_tool delete_tool")
    assert parent_id(tool) == resumed.context.span_id
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "delete_tool"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"
    assert tool.attributes["gen_ai.agent.id"] == "ops"
    chats = otel.named("chat function")
    assert [parent_id(c) for c in chats] == [first.context.span_id, resumed.context.span_id]
    assert chats[0].attributes["gen_ai.operation.name"] == "chat"
    assert chats[0].attributes["gen_ai.request.model"] == "function"
    assert chats[0].attributes["gen_ai.conversation.id"] == "thread-1"


async def test_declined_call_has_no_execute_tool_span(otel: Otel) -> None:
    log: list[str] = []
    agent = make_agent(log)
    stream = await suspended(agent)
    await drain(await agent.decline_tool_call(run_id=stream.run_id, reason="no", actor="bob"))
    assert log == []
    assert otel.named("execute_tool delete_tool") == []
    wait = otel.one("await_approval delete_tool")
    assert wait.attributes["warden.approval.decision"] == "declined"
    assert wait.attributes["warden.approval.actor"] == "bob"
    decisions = otel.points("warden.decisions")
    assert [(dict(p.attributes), p.value) for p in decisions] == [({"decision": "declined"}, 1)]


async def test_edited_approval_is_recorded_as_edited(otel: Otel) -> None:
    log: list[str] = []
    agent = make_agent(log)
    stream = await suspended(agent)
    await drain(await agent.approve_tool_call(run_id=stream.run_id, args={"id": "xyz-9"}, actor="carol"))
    assert log == ["xyz-9"]
    assert otel.one("await_approval delete_tool").attributes["warden.approval.decision"] == "edited"
    assert len(otel.named("execute_tool delete_tool")) == 1


async def test_expired_call_is_an_await_approval_span_without_execute_tool(otel: Otel, tmp_path) -> None:
    log: list[str] = []
    agent = make_agent(log, approval_timeout=0.05)
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db")) as runtime:
        stream = await suspended(agent)
        await asyncio.sleep(0.1)  # past the deadline (not a timing assertion: the sweep decides)
        assert await runtime.sweep() == 1
        for _ in range(200):  # the sweep applies the expiry in the background; wait for the run's next spans
            if len(otel.named("invoke_agent ops")) == 2:
                break
            await asyncio.sleep(0.05)
    assert log == []
    wait = otel.one("await_approval delete_tool")
    assert wait.attributes["warden.approval.decision"] == "expired"
    assert wait.attributes["warden.run.id"] == stream.run_id
    assert otel.named("execute_tool delete_tool") == []


async def test_metrics_pending_wait_and_decisions(otel: Otel) -> None:
    log: list[str] = []
    one, two = make_agent(log), make_agent(log)
    first = await suspended(one)
    second = await suspended(two)
    assert [p.value for p in otel.points("warden.approvals.pending")] == [2]
    await drain(await one.approve_tool_call(run_id=first.run_id))
    assert [p.value for p in otel.points("warden.approvals.pending")] == [1]
    await drain(await two.decline_tool_call(run_id=second.run_id))
    assert [p.value for p in otel.points("warden.approvals.pending")] == [0]
    decisions = {p.attributes["decision"]: p.value for p in otel.points("warden.decisions")}
    assert decisions == {"approved": 1, "declined": 1}
    waits = {p.attributes["decision"]: p.count for p in otel.points("warden.approval.wait")}
    assert waits == {"approved": 1, "declined": 1}


async def test_sub_agent_spans_nest_under_the_delegation(otel: Otel) -> None:
    log: list[str] = []
    worker = make_agent(log)
    worker.id = "worker"  # type: ignore[misc]
    supervisor = Agent(
        id="boss",
        model=script([("agent-worker", {"prompt": "delete abc-123"}, "s1")], "supervised"),
        agents={"worker": worker},
    )
    stream = await supervisor.stream("go")
    await drain(stream)
    assert stream.status == "suspended"
    await drain(await supervisor.approve_tool_call(run_id=stream.run_id))
    assert log == ["abc-123"]
    boss = otel.named("invoke_agent boss")
    delegations = otel.named("execute_tool agent-worker")
    workers = otel.named("invoke_agent worker")
    assert len(boss) == 2 and len(delegations) == 2 and len(workers) == 2
    for delegation, sub in zip(delegations, workers, strict=True):
        assert parent_id(delegation) in {b.context.span_id for b in boss}
        assert parent_id(sub) == delegation.context.span_id
    tool = otel.one("execute_tool delete_tool")
    assert parent_id(tool) == workers[1].context.span_id
    assert tool.attributes["gen_ai.agent.id"] == "worker"
    assert parent_id(otel.one("await_approval delete_tool")) == boss[0].context.span_id


async def test_failed_tool_marks_its_span_as_an_error(otel: Otel) -> None:
    async def boom(inp: IdIn, ctx) -> dict:
        raise RuntimeError("disk full")

    tool = create_tool(id="delete_tool", input_schema=IdIn, execute=boom)
    agent = Agent(id="ops", model=script([("delete_tool", {"id": "a"}, "c1")], "ok"), tools={"delete_tool": tool})
    await drain(await agent.stream("go"))
    span = otel.one("execute_tool delete_tool")
    assert span.status.status_code is StatusCode.ERROR
    assert "disk full" in (span.status.description or "")


async def test_no_sdk_no_spans_and_no_traceparent(no_sdk: None, tmp_path) -> None:
    log: list[str] = []
    agent = make_agent(log)
    store = SqliteStore(tmp_path / "w.db")
    async with Runtime(agents={"ops": agent}, storage=store):
        stream = await suspended(agent)
        assert telemetry.active() is False
        assert await stored_traceparent(store, stream.run_id) is None
        await drain(await agent.approve_tool_call(run_id=stream.run_id))
    assert log == ["abc-123"]


async def test_a_call_approved_by_a_grant_is_a_granted_wait_of_zero(otel: Otel, tmp_path) -> None:
    log: list[str] = []
    agent = make_agent(log)
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db")) as runtime:
        grant = await runtime.grant("delete_tool", scope="agent", agent_id="ops", args_match={"id": "abc-123"})
        stream = await agent.stream("delete abc-123")
        await drain(stream)
    assert stream.status == "finished" and log == ["abc-123"]
    wait = otel.one("await_approval delete_tool")
    assert wait.attributes["warden.approval.decision"] == "granted"
    assert wait.attributes["warden.approval.wait_ms"] == 0.0
    assert wait.attributes["warden.grant.id"] == grant.id
    assert parent_id(wait) == otel.one("invoke_agent ops").context.span_id
    assert {p.attributes["decision"]: p.value for p in otel.points("warden.decisions")} == {"granted": 1}
    assert otel.points("warden.approvals.pending") == []  # never pending


async def test_a_run_started_inside_an_application_span_is_its_child(otel: Otel) -> None:
    agent = Agent(id="ops", model=script("hello"))
    with trace.get_tracer("app").start_as_current_span("handle request") as outer:
        stream = await agent.stream("hi")
    await drain(stream)
    run = otel.one("invoke_agent ops")
    assert parent_id(run) == outer.get_span_context().span_id
    assert run.context.trace_id == outer.get_span_context().trace_id


def test_without_a_provider_the_api_is_never_imported() -> None:
    """The cheap path: a whole approval cycle in a fresh process leaves ``opentelemetry`` unimported."""
    code = (
        "import asyncio, sys\n"
        "from tests.helpers import drain, recording_tool, script\n"
        "from agent_core import Agent\n"
        "async def main():\n"
        "    log = []\n"
        "    agent = Agent(id='ops', model=script([('delete_tool', {'id': 'a'}, 'c1')], 'done'),\n"
        "                  tools={'delete_tool': recording_tool(log, id='delete_tool')})\n"
        "    stream = await agent.stream('go')\n"
        "    await drain(stream)\n"
        "    await drain(await agent.approve_tool_call(run_id=stream.run_id))\n"
        "    assert log == ['a'], log\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


async def test_a_call_a_policy_blocks_is_a_blocked_wait_with_the_rule(otel: Otel, tmp_path) -> None:
    log: list[str] = []
    agent = make_agent(log)
    policy = Policy(rules=[PolicyRule(id="no-deletes", tools=["delete_*"], decision="deny")])
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db"), policy=policy):
        stream = await agent.stream("delete abc-123")
        await drain(stream)
    assert stream.status == "finished" and log == []
    assert otel.named("execute_tool delete_tool") == []
    wait = otel.one("await_approval delete_tool")
    assert wait.attributes["warden.approval.decision"] == "blocked"
    assert wait.attributes["warden.policy.rule"] == "no-deletes"
    assert wait.attributes["warden.policy.version"] == policy.version
    assert parent_id(wait) == otel.one("invoke_agent ops").context.span_id
    assert {p.attributes["decision"]: p.value for p in otel.points("warden.decisions")} == {"blocked": 1}


async def test_a_call_a_policy_asks_about_carries_the_rule_on_its_wait(otel: Otel, tmp_path) -> None:
    log: list[str] = []
    agent = make_agent(log)
    policy = Policy(rules=[PolicyRule(id="ask-deletes", tools=["delete_*"], decision="ask")])
    async with Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "w.db"), policy=policy):
        stream = await suspended(agent)
        await drain(await agent.approve_tool_call(run_id=stream.run_id, actor="dana"))
    assert log == ["abc-123"]
    wait = otel.one("await_approval delete_tool")
    assert wait.attributes["warden.approval.decision"] == "approved"
    assert wait.attributes["warden.policy.rule"] == "ask-deletes"
    assert wait.attributes["warden.policy.version"] == policy.version
