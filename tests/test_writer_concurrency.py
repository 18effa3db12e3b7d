"""ctx.writer (live tool-output chunks) and tool-call concurrency (tool_call_concurrency, sequential)."""

from __future__ import annotations

import asyncio

import pytest

from agent_core import Agent, ToolOutputNotSerializable, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from tests.helpers import IdIn, calls_then, echo_results, types


async def test_writer_chunks_are_live_while_the_tool_runs():
    release = asyncio.Event()

    async def long_job(inp: IdIn, ctx):
        await ctx.writer.write({"progress": 0.5, "id": inp.id})
        await release.wait()
        await ctx.writer.write("almost")
        return {"done": inp.id}

    agent = Agent(
        id="a",
        model=calls_then([("job", {"id": "j1"}, "c1")], echo_results()),
        tools={"job": create_tool(id="job", input_schema=IdIn, execute=long_job)},
    )
    stream = await agent.stream("go")
    seen = []
    async for chunk in stream.full_stream:
        seen.append(chunk)
        if chunk.type == "tool-output" and chunk.payload.data == {"progress": 0.5, "id": "j1"}:
            assert "tool-result" not in types(seen)  # live: the tool is still running
            release.set()
    assert types(seen).count("tool-output") == 2
    out = [c for c in seen if c.type == "tool-output"]
    assert out[0].payload.tool_call_id == "c1" and out[0].payload.tool_name == "job"
    assert out[0].payload.agent_path == ["a"] and out[1].payload.data == "almost"
    assert types(seen).index("tool-output") < types(seen).index("tool-result")
    js = out[0].to_json()
    assert js["type"] == "tool-output"
    assert js["payload"] == {
        "toolCallId": "c1",
        "toolName": "job",
        "data": {"progress": 0.5, "id": "j1"},
        "agentPath": ["a"],
    }
    from agent_core import Chunk

    assert Chunk.from_json(js).payload == out[0].payload


async def test_writer_rejects_data_that_is_not_json():
    caught: list[str] = []

    async def job(inp: IdIn, ctx):
        try:
            await ctx.writer.write(object())
        except ToolOutputNotSerializable as exc:
            caught.append(exc.code)
        return "ok"

    agent = Agent(
        id="a",
        model=calls_then([("job", {"id": "1"}, "c1")], echo_results()),
        tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)},
    )
    chunks = await (await agent.stream("go")).chunks()
    assert caught == ["AGENT_TOOL_OUTPUT_NOT_SERIALIZABLE"] and "tool-output" not in types(chunks)


async def test_concurrent_calls_stream_progress_live_and_results_in_call_order():
    gate = asyncio.Event()

    async def slow(inp: IdIn, ctx):
        await ctx.writer.write(f"start {inp.id}")
        await gate.wait()
        return inp.id

    async def fast(inp: IdIn, ctx):
        await ctx.writer.write(f"fast {inp.id}")
        gate.set()
        return inp.id

    agent = Agent(
        id="a",
        model=calls_then([("slow", {"id": "s"}, "c1"), ("fast", {"id": "f"}, "c2")], echo_results()),
        tools={
            "slow": create_tool(id="slow", input_schema=IdIn, execute=slow),
            "fast": create_tool(id="fast", input_schema=IdIn, execute=fast),
        },
    )
    chunks = await (await agent.stream("go")).chunks()
    results = [c.payload.tool_call_id for c in chunks if c.type == "tool-result"]
    assert results == ["c1", "c2"]
    assert [c.payload.data for c in chunks if c.type == "tool-output"] == ["start s", "fast f"]


async def test_sub_agent_tool_output_reaches_the_top_stream_with_its_agent_path():
    async def crunch(inp: IdIn, ctx):
        await ctx.writer.write({"step": 1})
        return "crunched"

    def sub_model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="crunch", args={"id": "x"}, id="s1")])
        return ModelResponse(text="sub done")

    sub = Agent(
        id="data-agent",
        model=FunctionModel(sub_model),
        tools={"crunch": create_tool(id="crunch", input_schema=IdIn, execute=crunch)},
    )
    top = Agent(
        id="supervisor",
        model=calls_then([("agent-data", {"prompt": "do"}, "t1")], echo_results()),
        agents={"data": sub},
    )
    chunks = await (await top.stream("go")).chunks()
    out = [c for c in chunks if c.type == "tool-output"]
    assert len(out) == 1
    assert out[0].payload.agent_path == ["supervisor", "data-agent"] and out[0].payload.tool_call_id == "s1"
    assert out[0].payload.tool_name == "crunch" and out[0].payload.data == {"step": 1}


def _tracker():
    state = {"now": 0, "peak": 0}

    async def work(inp: IdIn, ctx):
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.01)
        state["now"] -= 1
        return inp.id

    return state, work


@pytest.mark.parametrize(
    ("limit", "default", "peak"), [(None, None, 5), (2, None, 2), (1, None, 1), (None, 3, 3), (2, 4, 2)]
)
async def test_tool_call_concurrency_bounds_ungated_calls(limit, default, peak):
    state, work = _tracker()
    calls = [("w", {"id": str(i)}, f"c{i}") for i in range(5)]
    agent = Agent(
        id="a",
        model=calls_then(calls, echo_results()),
        tools={"w": create_tool(id="w", input_schema=IdIn, execute=work)},
        default_options={"tool_call_concurrency": default} if default else None,
    )
    res = await agent.generate("go", tool_call_concurrency=limit)
    assert state["peak"] == peak
    assert [r.tool_call_id for r in res.tool_results] == [f"c{i}" for i in range(5)]


async def test_sequential_tool_never_runs_with_another_call_of_its_step():
    log: list[str] = []
    running: set[str] = set()

    def make(name: str):
        async def run(inp: IdIn, ctx):
            log.append(f"{name}:{inp.id}:with={sorted(running)}")
            running.add(inp.id)
            await asyncio.sleep(0.01)
            running.discard(inp.id)
            return inp.id

        return run

    agent = Agent(
        id="a",
        model=calls_then(
            [("p", {"id": "1"}, "c1"), ("p", {"id": "2"}, "c2"), ("seq", {"id": "3"}, "c3"), ("p", {"id": "4"}, "c4")],
            echo_results(),
        ),
        tools={
            "p": create_tool(id="p", input_schema=IdIn, execute=make("p")),
            "seq": create_tool(id="seq", input_schema=IdIn, execute=make("seq"), sequential=True),
        },
    )
    res = await agent.generate("go")
    assert "seq:3:with=[]" in log
    assert any(entry.startswith("p:2:with=['1']") for entry in log)  # the others still run together
    assert [r.tool_call_id for r in res.tool_results] == ["c1", "c2", "c3", "c4"]


async def test_invalid_tool_call_concurrency_is_refused():
    from agent_core import InvalidRequest

    agent = Agent(id="a", model=calls_then([], echo_results()))
    with pytest.raises(InvalidRequest):
        await agent.stream("go", tool_call_concurrency=0)


async def test_a_single_call_runs_in_the_streams_own_task():
    """One call of a step runs inline in the task that advances the stream: no task, no queue per call."""
    seen: list[asyncio.Task | None] = []

    async def job(inp: IdIn, ctx):
        seen.append(asyncio.current_task())
        await ctx.writer.write("working")
        return inp.id

    agent = Agent(
        id="a",
        model=calls_then([("job", {"id": "1"}, "c1")], echo_results()),
        tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)},
    )
    stream = await agent.stream("go")
    chunks = await stream.chunks()
    assert seen == [stream._task]
    assert types(chunks).index("tool-output") < types(chunks).index("tool-result")


def _blocking_job(cancelled: list[str]):
    """A tool that writes once, then waits until cancelled (its id recorded in ``cancelled``)."""
    forever = asyncio.Event()

    async def job(inp: IdIn, ctx):
        await ctx.writer.write("started")
        try:
            await forever.wait()
        except asyncio.CancelledError:
            cancelled.append(inp.id)
            raise
        return inp.id

    return job


async def test_cancel_while_a_tool_runs_inline_stops_the_tool_and_ends_every_reader():
    cancelled: list[str] = []
    job = _blocking_job(cancelled)

    agent = Agent(
        id="a",
        model=calls_then([("job", {"id": "1"}, "c1")], echo_results()),
        tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)},
    )
    stream = await agent.stream("go")
    other = asyncio.ensure_future(stream.chunks())
    seen = []
    async for chunk in stream.full_stream:
        seen.append(chunk)
        if chunk.type == "tool-output":  # live: the tool is running, inline in the stream's task
            await stream.cancel()
    assert cancelled == ["1"]
    assert stream.status == "failed" and stream.error == "cancelled"
    assert types(seen)[-1] == "tool-output" and "tool-result" not in types(seen)
    assert types(await asyncio.wait_for(other, 2)) == types(seen)


async def test_progress_written_after_the_call_resolved_is_dropped():
    """A task a tool leaves behind cannot add output to a call that already has its result."""
    late: list[str] = []

    async def job(inp: IdIn, ctx):
        async def later():
            await asyncio.sleep(0)
            await ctx.writer.write("too late")
            late.append("written")

        asyncio.get_running_loop().create_task(later())
        return inp.id

    async def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="job", args={"id": "1"}, id="c1")])
        while not late:
            await asyncio.sleep(0)
        return ModelResponse(text="done")

    agent = Agent(
        id="a", model=FunctionModel(model), tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)}
    )
    chunks = await (await agent.stream("go")).chunks()
    assert late == ["written"] and "tool-output" not in types(chunks)


async def test_progress_reaches_a_run_advanced_without_a_stream():
    """The run generator read directly (no ``AgentStream``): progress still comes before the result."""
    from agent_core.call_state import RunState
    from agent_core.engine import Execution, drive

    async def job(inp: IdIn, ctx):
        await ctx.writer.write("working")
        return inp.id

    agent = Agent(
        id="a",
        model=calls_then([("job", {"id": "1"}, "c1")], echo_results()),
        tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)},
    )
    state = RunState(run_id="r1", agent_id="a", agent_path=["a"], messages=[Message(role="user", content="go")])
    chunks = [c async for c in drive(agent, state, Execution(top=state))]
    assert types(chunks).count("tool-output") == 1
    assert types(chunks).index("tool-output") < types(chunks).index("tool-result")
    assert state.outcome == "finished"


async def test_a_run_read_without_a_stream_yields_what_came_before_a_failure():
    """``drive`` read directly: the chunks made before the model failed come out, then the error."""
    from agent_core.call_state import RunState
    from agent_core.engine import Execution, drive
    from agent_core.errors import ModelError

    def model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="job", args={"id": "1"}, id="c1")])
        raise RuntimeError("the model broke")

    async def job(inp: IdIn, ctx):
        return inp.id

    agent = Agent(
        id="a", model=FunctionModel(model), tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)}
    )
    state = RunState(run_id="r1", agent_id="a", agent_path=["a"], messages=[Message(role="user", content="go")])
    seen = []
    with pytest.raises(ModelError, match="the model broke"):
        async for chunk in drive(agent, state, Execution(top=state)):
            seen.append(chunk)
    assert types(seen) == ["step-start", "tool-call", "tool-result", "step-finish", "step-start"]


async def test_a_stream_gets_the_engine_chunks_in_order_up_to_a_failure():
    """Through ``AgentStream`` the engine pushes its chunks straight into the stream: same order, and a
    model failure still ends the stream with one error chunk after them."""

    def model(messages, info):
        if messages[-1].role == "user":
            return ModelResponse(text="thinking", tool_calls=[ToolCall(name="job", args={"id": "1"}, id="c1")])
        raise RuntimeError("the model broke")

    async def job(inp: IdIn, ctx):
        await ctx.writer.write("working")
        return inp.id

    agent = Agent(
        id="a", model=FunctionModel(model), tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)}
    )
    out = await agent.stream("go")
    chunks = await out.chunks()
    assert types(chunks) == [
        "start",
        "step-start",
        "text-delta",
        "tool-call",
        "tool-output",
        "tool-result",
        "step-finish",
        "step-start",
        "error",
    ]
    assert out.status == "failed" and "the model broke" in (out.error or "")


async def test_cancelling_a_decision_while_its_tool_runs_inline_frees_the_run():
    """The approved tool runs inline in the decision stream's task: a cancel reaches the tool, the lease
    is released, and the call (started) reads as interrupted."""
    from agent_core import Runtime
    from storage import InMemoryStore

    cancelled: list[str] = []
    job = _blocking_job(cancelled)

    tool = create_tool(id="job", input_schema=IdIn, execute=job, require_approval=True)
    agent = Agent(id="a", model=calls_then([("job", {"id": "1"}, "c1")], echo_results()), tools={"job": tool})
    async with Runtime(agents={"a": agent}, storage=InMemoryStore(), lease_seconds=0.2) as rt:
        out = await agent.generate("go")
        stream = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="c1")
        async for chunk in stream.full_stream:
            if chunk.type == "tool-output":
                await stream.cancel()
        assert cancelled == ["1"] and stream.status == "failed"
        run = await rt.store.get_run(out.run_id)
        assert run is not None and run.lease_owner is None
        listed = await rt.get_suspended_run(out.run_id)
        assert [c.kind for c in listed.tool_calls] == ["interrupted"]
