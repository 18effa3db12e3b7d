"""Approval before execution: the reference document's semantics, in-process."""

from __future__ import annotations

import asyncio

import pytest

from agent_core import (
    Agent,
    AlreadyDecided,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
    WardenError,
    create_tool,
    fingerprint,
)
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from tests.helpers import IdIn, calls_then, drain, echo_results, recording_tool, script, types


def make_agent(model, **tools):
    return Agent(id="my-agent", name="My Agent", instructions="be careful", model=model, tools=tools)


async def test_gated_call_stops_before_execute_and_approve_runs_it_once():
    log: list[str] = []
    agent = make_agent(
        script([("delete_tool", {"id": "abc-123"}, "call_1")], "deleted it"), delete_tool=recording_tool(log)
    )
    stream = await agent.stream("Delete record abc-123")
    chunks = await drain(stream)
    assert types(chunks) == ["start", "step-start", "tool-call", "tool-call-approval"]
    assert log == [] and stream.status == "suspended" and stream.finish_reason == "suspended"
    approval = chunks[-1].payload
    assert approval.fingerprint == fingerprint("delete_tool", {"id": "abc-123"})
    assert approval.agent_path == ["my-agent"]
    assert stream.suspend_payload.tool_call_id == "call_1"

    approved = await agent.approve_tool_call(run_id=stream.run_id)
    after = await drain(approved)
    assert types(after) == [
        "start",
        "tool-call",
        "tool-result",
        "step-finish",
        "step-start",
        "text-delta",
        "step-finish",
        "finish",
    ]
    assert after[1].payload.tool_call_id == after[2].payload.tool_call_id == "call_1"
    assert after[2].payload.result == {"deleted": True}
    assert log == ["abc-123"] and approved.status == "finished" and await approved.text() == "deleted it"
    with pytest.raises(AlreadyDecided):
        await agent.approve_tool_call(run_id=stream.run_id, tool_call_id="call_1")
    with pytest.raises(SnapshotNotFound) as err:
        await agent.approve_tool_call(run_id=stream.run_id)
    assert err.value.code == "AGENT_RESUME_NO_SNAPSHOT_FOUND" and stream.run_id in str(err.value)
    assert log == ["abc-123"]


async def test_request_level_require_tool_approval_gates_every_tool():
    log: list[str] = []
    agent = make_agent(
        calls_then([("d", {"id": "1"}, "c1")], lambda m: "ok"), d=recording_tool(log, require_approval=None)
    )
    free = await agent.generate("go")
    assert free.finish_reason == "stop" and log == ["1"]
    gated = await agent.generate("go", require_tool_approval=True)
    assert gated.finish_reason == "suspended" and log == ["1"]
    assert gated.suspend_payload.tool_name == "d" and gated.suspend_payload.args == {"id": "1"}


async def test_policy_function_sync_async_raising_and_tool_precedence():
    log: list[str] = []
    tools = {
        "delete_a": recording_tool(log, id="a", require_approval=None),
        "read_b": recording_tool(log, id="b", require_approval=None),
        "delete_never": recording_tool(log, id="c", require_approval=False),
    }
    calls = [("delete_a", {"id": "a"}, "1"), ("read_b", {"id": "b"}, "2"), ("delete_never", {"id": "c"}, "3")]
    seen = []

    def by_name(call):
        seen.append((call.tool_name, call.args, call.request_context))
        return call.tool_name.startswith("delete_")

    agent = Agent(id="a", model=calls_then(calls, echo_results()), tools=tools)
    out = await agent.generate("clean", require_tool_approval=by_name, request_context={"user": "u1"})
    # read_b and delete_never ran; delete_never's explicit False wins over the function.
    assert log == ["b", "c"] and out.suspend_payload.tool_name == "delete_a"
    assert ("read_b", {"id": "b"}, {"user": "u1"}) in seen and all(s[0] != "delete_never" for s in seen)

    async def async_policy(call):
        await asyncio.sleep(0)
        return call.args["id"] == "b"

    log.clear()
    out = await agent.generate("clean", require_tool_approval=async_policy)
    assert log == ["a", "c"] and out.suspend_payload.tool_name == "read_b"

    def broken(call):
        raise RuntimeError("policy bug")

    log.clear()
    stream = await agent.stream("clean", require_tool_approval=broken)
    chunks = await drain(stream)
    # A raising policy means approval required, except for the tool's explicit False.
    assert log == ["c"]
    assert [c.payload.tool_name for c in chunks if c.type == "tool-call-approval"] == ["delete_a", "read_b"]


async def test_tool_level_true_is_gated_even_when_policy_says_no():
    log: list[str] = []
    agent = Agent(id="a", model=script([("t", {"id": "x"}, "1")], "ok"), tools={"t": recording_tool(log)})
    out = await agent.generate("go", require_tool_approval=lambda call: False)
    assert out.finish_reason == "suspended" and log == []


async def test_decline_never_executes_and_model_sees_reason_or_default():
    log: list[str] = []
    record: list = []
    agent = make_agent(
        calls_then([("delete_tool", {"id": "k"}, "c1")], echo_results(), record=record), delete_tool=recording_tool(log)
    )
    first = await agent.generate("delete k")
    declined = await agent.decline_tool_call(run_id=first.run_id, reason="archive it instead")
    chunks = await drain(declined)
    denied = [c for c in chunks if c.type == "tool-output-denied"]
    assert len(denied) == 1 and denied[0].payload.reason == "archive it instead"
    assert log == [] and "archive it instead" in await declined.text()
    tool_msg = record[-1][-1]
    assert tool_msg.role == "tool" and tool_msg.tool_call_id == "c1" and "archive it instead" in tool_msg.content
    assert tool_msg.tool_status == "denied"

    second = await agent.generate("delete k")
    res = await agent.decline_tool_call_generate(run_id=second.run_id)
    assert res.finish_reason == "stop" and "Tool call was not approved by the user" in res.text and log == []


async def test_generate_variants_match_the_reference():
    log: list[str] = []
    agent = make_agent(
        calls_then([("delete_tool", {"id": "u1"}, "c1")], lambda m: "Final"), delete_tool=recording_tool(log)
    )
    output = await agent.generate("Find user John", require_tool_approval=True)
    assert output.finish_reason == "suspended" and output.run_id
    result = await agent.approve_tool_call_generate(
        run_id=output.run_id, tool_call_id=output.suspend_payload.tool_call_id
    )
    assert result.text == "Final" and result.finish_reason == "stop" and log == ["u1"]
    assert [r.result for r in result.tool_results] == [{"deleted": True}]


async def test_fingerprint_binds_the_approval_to_the_arguments():
    log: list[str] = []
    agent = make_agent(script([("delete_tool", {"id": "abc"}, "c1")], "ok"), delete_tool=recording_tool(log))
    out = await agent.generate("delete abc")
    wrong = fingerprint("delete_tool", {"id": "other"})
    with pytest.raises(FingerprintMismatch) as err:
        await agent.approve_tool_call(run_id=out.run_id, fingerprint=wrong)
    assert err.value.code == "AGENT_APPROVAL_FINGERPRINT_MISMATCH" and log == []
    listed = await agent.list_suspended_runs()
    assert listed.total == 1 and listed.runs[0].tool_calls[0].fingerprint == out.suspend_payload.fingerprint
    ok = await agent.approve_tool_call_generate(
        run_id=out.run_id, fingerprint=fingerprint("delete_tool", {"id": "abc"})
    )
    assert ok.finish_reason == "stop" and log == ["abc"]


async def test_errors_for_unknown_run_and_unknown_call_change_nothing():
    log: list[str] = []
    agent = make_agent(
        calls_then([("delete_tool", {"id": "abc"}, "c1")], lambda m: "ok"), delete_tool=recording_tool(log)
    )
    with pytest.raises(SnapshotNotFound) as err:
        await agent.approve_tool_call(run_id="nope")
    assert "nope" in str(err.value) and "InMemoryStore" in str(err.value)
    out = await agent.generate("x")
    with pytest.raises(ToolCallNotSuspended):
        await agent.approve_tool_call(run_id=out.run_id, tool_call_id="not-a-call")
    assert isinstance(ToolCallNotSuspended("x"), WardenError)
    assert (await agent.list_suspended_runs()).total == 1 and log == []


async def test_several_gated_calls_in_one_step_are_decided_separately():
    log: list[str] = []
    record: list = []

    def free_exec(inp, ctx):
        log.append("free:" + inp.id)
        return {"ok": inp.id}

    tools = {
        "delete": recording_tool(log),
        "free": create_tool(id="free", input_schema=IdIn, execute=free_exec),
    }
    calls = [("delete", {"id": "1"}, "a"), ("free", {"id": "2"}, "b"), ("delete", {"id": "3"}, "c")]
    agent = Agent(id="multi", model=calls_then(calls, echo_results(), record=record), tools=tools)
    stream = await agent.stream("do three things")
    chunks = await drain(stream)
    assert log == ["free:2"], "the ungated call runs at once, the gated ones wait"
    approvals = [c.payload.tool_call_id for c in chunks if c.type == "tool-call-approval"]
    assert approvals == ["a", "c"] and stream.suspend_payload.tool_call_id == "c"
    assert len(record) == 1
    listed = await agent.list_suspended_runs()
    assert [c.tool_call_id for c in listed.runs[0].tool_calls] == ["a", "c"]

    # Decide the second first: the run stays suspended and re-announces the first.
    s2 = await agent.decline_tool_call(run_id=stream.run_id, tool_call_id="c", reason="no")
    c2 = await drain(s2)
    assert s2.status == "suspended" and len(record) == 1
    assert [c.payload.tool_call_id for c in c2 if c.type == "tool-call-approval"] == ["a"]
    assert s2.suspend_payload.tool_call_id == "a"
    s1 = await agent.approve_tool_call(run_id=stream.run_id)  # latest pending = "a"
    text = await s1.text()
    assert s1.status == "finished" and len(record) == 2 and log == ["free:2", "1"]
    tool_msgs = [m for m in record[1] if m.role == "tool"]
    assert [m.tool_call_id for m in tool_msgs] == ["a", "b", "c"], "results in the model's call order"
    assert text == 'delete={"deleted": true} | free={"ok": "2"} | delete="no"'


async def test_concurrent_decisions_on_one_run_in_one_process_are_all_applied():
    log: list[str] = []
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow(inp, ctx):
        started.set()
        await release.wait()
        log.append(inp.id)
        return {"id": inp.id}

    tools = {"slow": create_tool(id="slow", input_schema=IdIn, execute=slow, require_approval=True)}
    agent = Agent(
        id="a", model=calls_then([("slow", {"id": "1"}, "x"), ("slow", {"id": "2"}, "y")], echo_results()), tools=tools
    )
    out = await agent.generate("go")
    s1 = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")
    await started.wait()
    # While x executes (holding the run's lease), y is decided: it must wait, not be lost.
    s2 = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="y")
    release.set()
    await s1.wait()
    await s2.wait()
    assert sorted(log) == ["1", "2"]
    assert {s1.status, s2.status} == {"suspended", "finished"}
    assert (await agent.list_suspended_runs()).total == 0


async def test_duplicate_and_missing_tool_call_ids_are_replaced():
    log: list[str] = []
    agent = Agent(
        id="a",
        model=calls_then(
            [("t", {"id": "1"}, "same"), ("t", {"id": "2"}, "same"), ("t", {"id": "3"}, None)], echo_results()
        ),
        tools={"t": recording_tool(log, require_approval=False)},
    )
    chunks = await drain(await agent.stream("go"))
    ids = [c.payload.tool_call_id for c in chunks if c.type == "tool-call"]
    assert ids[0] == "same" and len(set(ids)) == 3 and all(ids)


async def test_invalid_args_and_unknown_tools_become_tool_errors_the_model_sees():
    log: list[str] = []
    record: list = []
    agent = Agent(
        id="a",
        model=calls_then(
            [("t", {"id": 5, "x": 1}, "1"), ("nope", {}, "2"), ("t", {}, "3")], echo_results(), record=record
        ),
        tools={"t": recording_tool(log, require_approval=True)},
    )
    stream = await agent.stream("go")
    chunks = await drain(stream)
    errors = [c.payload for c in chunks if c.type == "tool-error"]
    assert [e.tool_call_id for e in errors] == ["1", "2", "3"]
    assert "nope" in errors[1].error and "Available tools: t" in errors[1].error
    assert "id" in errors[2].error
    assert stream.status == "finished" and log == [] and "tool-call-approval" not in types(chunks)
    assert [m.tool_status for m in record[-1] if m.role == "tool"] == ["error", "error", "error"]


async def test_tool_exceptions_and_bad_outputs_are_reported_not_raised():
    def boom(inp, ctx):
        raise ValueError("disk full")

    async def bad(inp, ctx):
        return {"deleted": "not-a-bool"}

    from tests.helpers import Deleted

    agent = Agent(
        id="a",
        model=calls_then([("boom", {"id": "1"}, "1"), ("bad", {"id": "2"}, "2")], echo_results()),
        tools={
            "boom": create_tool(id="boom", input_schema=IdIn, execute=boom),
            "bad": create_tool(id="bad", input_schema=IdIn, output_schema=Deleted, execute=bad),
        },
    )
    stream = await agent.stream("go")
    chunks = await drain(stream)
    errors = {c.payload.tool_call_id: c.payload.error for c in chunks if c.type == "tool-error"}
    assert "disk full" in errors["1"] and "invalid result" in errors["2"]
    assert stream.status == "finished"


async def test_full_stream_and_text_stream_of_one_stream_both_read_everything():
    agent = Agent(id="a", model=FunctionModel(lambda m, i: "hello world"))
    stream = await agent.stream("hi")
    texts, chunks = await asyncio.gather(_collect(stream.text_stream), drain(stream))
    assert "".join(texts) == "hello world"
    assert types(chunks) == ["start", "step-start", "text-delta", "step-finish", "finish"]
    assert "".join([t async for t in stream.text_stream]) == "hello world"  # replayable
    assert chunks[-1].to_json()["payload"] == {
        "finishReason": "stop",
        "usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
    }


async def _collect(it):
    return [x async for x in it]


async def test_max_steps_ends_with_length():
    agent = Agent(
        id="a", model=script([("t", {"id": "1"}, None)]), tools={"t": recording_tool([], require_approval=False)}
    )
    out = await agent.generate("loop forever", max_steps=3)
    assert out.finish_reason == "length" and len(out.steps) == 3


async def test_model_failure_ends_the_run_with_an_error_chunk():
    def broken(messages, info):
        raise ConnectionError("provider down")

    agent = Agent(id="a", model=FunctionModel(broken))
    stream = await agent.stream("hi")
    chunks = await drain(stream)
    assert types(chunks)[-1] == "error" and stream.status == "failed"
    assert "provider down" in chunks[-1].payload.error
    out = await agent.generate("hi")
    assert out.finish_reason == "error"


async def test_model_failure_after_approval_keeps_the_failed_run_out_of_the_pending_list():
    calls = {"n": 0}

    def model(messages, info):
        calls["n"] += 1
        if calls["n"] == 1:
            return ModelResponse(tool_calls=[ToolCall(name="t", args={"id": "1"}, id="c")])
        raise TimeoutError("model timed out")

    log: list[str] = []
    agent = Agent(id="a", model=FunctionModel(model), tools={"t": recording_tool(log)})
    out = await agent.generate("go")
    res = await agent.approve_tool_call_generate(run_id=out.run_id)
    assert res.finish_reason == "error" and "timed out" in res.error and log == ["1"]
    assert (await agent.list_suspended_runs()).total == 0
    stored = await agent.runtime.store.get_run(out.run_id)
    assert stored.status == "failed" and "timed out" in stored.error


async def test_approving_from_inside_the_async_for_works():
    log: list[str] = []
    agent = make_agent(script([("delete_tool", {"id": "abc"}, "c")], "done"), delete_tool=recording_tool(log))
    stream = await agent.stream("delete abc")
    out = []
    async for chunk in stream.full_stream:
        if chunk.type == "tool-call-approval":
            approved = await agent.approve_tool_call(run_id=stream.run_id)
            out.extend([t async for t in approved.text_stream])
    assert log == ["abc"] and "".join(out) == "done"


async def test_independent_calls_of_a_step_run_concurrently_and_report_in_call_order():
    started: list[str] = []
    all_started = asyncio.Event()

    async def rendezvous(inp, ctx):
        started.append(inp.id)
        if len(started) == 3:
            all_started.set()
        await asyncio.wait_for(all_started.wait(), 5)  # only completes if all three run at once
        await asyncio.sleep(0.01 * (3 - int(inp.id)))  # finish in reverse order
        return inp.id

    tool = create_tool(id="r", input_schema=IdIn, execute=rendezvous)
    agent = Agent(
        id="a",
        model=calls_then([("r", {"id": "1"}, "a"), ("r", {"id": "2"}, "b"), ("r", {"id": "3"}, "c")], echo_results()),
        tools={"r": tool},
    )
    stream = await agent.stream("go")
    chunks = await drain(stream)
    assert stream.status == "finished", stream.error
    assert [c.payload.tool_call_id for c in chunks if c.type == "tool-result"] == ["a", "b", "c"]
