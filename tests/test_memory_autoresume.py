"""Memory threads, auto-resume from the next user message, and send_tool_approval by thread."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from agent_core import Agent, AmbiguousToolCall, Memory, Runtime, SnapshotNotFound, create_tool
from agent_core.autoresume import explicit_yes, parse_json
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import SqliteStore
from tests.helpers import calls_then, drain, echo_results, recording_tool


class CityIn(BaseModel):
    city: str | None = None


class CityResume(BaseModel):
    city: str


class Message_(BaseModel):
    message: str


def weather_agent(record: list, *, auto=True):
    async def execute(inp, ctx):
        city = (ctx.resume_data.city if ctx.resume_data else None) or inp.city
        if not city:
            return await ctx.suspend({"message": "What city do you want to know the weather for?"})
        return {"weather": f"{city}: +72F"}

    tool = create_tool(
        id="weather-tool",
        description="Fetches weather for a city",
        input_schema=CityIn,
        suspend_schema=Message_,
        resume_schema=CityResume,
        execute=execute,
    )

    def model(messages, info):
        record.append((info.purpose, info.output_schema, [(m.role, m.content) for m in messages]))
        if info.purpose == "resume":
            text = messages[-1].content
            if "San Francisco" in text:
                return ModelResponse(text='```json\n{"city": "San Francisco"}\n```')
            return ModelResponse(text='{"city": null}')
        last = messages[-1]
        if last.role == "user" and "weather" in last.content.lower():
            return ModelResponse(tool_calls=[ToolCall(name="weatherTool", args={}, id="w1")])
        if last.role == "user" and messages[-2].role != "tool":
            return ModelResponse(text=f"You said: {last.content}")
        tool_msg = next(m for m in reversed(messages) if m.role == "tool")
        return ModelResponse(text="The weather in San Francisco is: " + json.loads(tool_msg.content)["weather"])

    return Agent(
        id="my-agent",
        name="My Agent",
        instructions="You are a helpful assistant",
        model=FunctionModel(model),
        tools={"weatherTool": tool},
        memory=Memory(),
        default_options={"auto_resume_suspended_tools": auto},
    )


async def test_memory_keeps_the_thread_and_loads_it_on_the_next_run(tmp_path):
    seen: list = []
    agent = Agent(
        id="chat",
        model=FunctionModel(lambda m, i: seen.append([x.content for x in m]) or f"#{len(m)}"),
        memory=Memory(),
    )
    async with Runtime(agents={"chat": agent}, storage=SqliteStore(tmp_path / "w.db")):
        assert (await agent.generate("hello", thread_id="t")).text == "#1"
        assert (await agent.generate("again", thread_id="t")).text == "#3"
        assert seen[-1] == ["hello", "#1", "again"]
        assert (await agent.generate("other thread", thread_id="u")).text == "#1"
        assert (await agent.generate("no thread")).text == "#1"
    async with Runtime(agents={"chat": agent}, storage=SqliteStore(tmp_path / "w.db")):
        assert (await agent.generate("after restart", thread_id="t")).text == "#5"


async def test_messages_are_saved_before_a_run_suspends(tmp_path):
    log: list = []
    agent = Agent(
        id="a",
        model=calls_then([("d", {"id": "1"}, "c")], echo_results()),
        tools={"d": recording_tool(log)},
        memory=Memory(),
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")) as runtime:
        out = await agent.generate("delete 1", thread_id="t")
        assert out.finish_reason == "suspended"
        saved = await runtime.store.load_messages("t")
        assert [m["role"] for m in saved] == ["user", "assistant"]
        assert saved[1]["tool_calls"][0]["id"] == "c"
        await agent.approve_tool_call_generate(run_id=out.run_id)
        assert [m["role"] for m in await runtime.store.load_messages("t")] == ["user", "assistant", "tool", "assistant"]


async def test_auto_resume_of_the_reference_weather_example(tmp_path):
    record: list = []
    agent = weather_agent(record)
    async with Runtime(agents={"my-agent": agent}, storage=SqliteStore(tmp_path / "w.db")) as runtime:
        first = await agent.stream("What's the weather like?", thread_id="t", resource_id="u")
        chunks = await drain(first)
        assert chunks[-1].type == "tool-call-suspended"
        assert chunks[-1].payload.suspend_payload == {"message": "What city do you want to know the weather for?"}

        second = await agent.stream("San Francisco", thread_id="t", resource_id="u")
        assert second.run_id == first.run_id, "the follow-up resumed the suspended run"
        text = "".join([t async for t in second.text_stream])
        assert text == "The weather in San Francisco is: San Francisco: +72F"
        purpose, schema, messages = record[1]
        assert purpose == "resume" and schema["required"] == ["city"]
        assert messages[-1] == ("user", "San Francisco")
        # In the thread: the tool result follows the assistant's call; the new user message comes after it.
        history = await runtime.store.load_messages("t")
        assert [(m["role"], m.get("content", "")[:20]) for m in history] == [
            ("user", "What's the weather l"),
            ("assistant", ""),
            ("tool", '{"weather": "San Fra'),
            ("user", "San Francisco"),
            ("assistant", "The weather in San F"),
        ]
        assert (await agent.list_suspended_runs()).total == 0


async def test_auto_resume_with_an_unusable_answer_leaves_the_call_suspended(tmp_path):
    record: list = []
    agent = weather_agent(record)
    async with Runtime(agents={"my-agent": agent}, storage=SqliteStore(tmp_path / "w.db")):
        first = await agent.generate("What's the weather like?", thread_id="t")
        other = await agent.generate("tell me a joke", thread_id="t")
        assert other.run_id != first.run_id and other.text == "You said: tell me a joke"
        assert (await agent.list_suspended_runs(thread_id="t")).runs[0].run_id == first.run_id
        # Without the option, the follow-up is just a new message.
        res = await agent.generate("San Francisco", thread_id="t", auto_resume_suspended_tools=False)
        assert res.run_id != first.run_id and (await agent.list_suspended_runs()).total == 1


def approval_agent(log: list, model_decision: str):
    def model(messages, info):
        if info.purpose == "resume":
            return ModelResponse(text=json.dumps({"decision": model_decision}))
        if messages[-1].role == "user" and "delete" in messages[-1].content:
            return ModelResponse(tool_calls=[ToolCall(name="d", args={"id": "9"}, id="c")])
        return ModelResponse(text="ok: " + messages[-1].content)

    return Agent(
        id="a",
        model=FunctionModel(model),
        tools={"d": recording_tool(log)},
        memory=Memory(),
        default_options={"auto_resume_suspended_tools": True},
    )


@pytest.mark.parametrize(
    ("reply", "model_says", "expect"),
    [
        ("yes, go ahead", "approve", "approved"),
        ("hmm, maybe? what would it do", "approve", "pending"),  # the model over-reads: still not approved
        ("yes but not that one", "approve", "pending"),
        ("no, don't", "decline", "declined"),
        ("whatever", "unclear", "pending"),
    ],
)
async def test_auto_resume_of_an_approval_needs_an_explicit_answer(reply, model_says, expect):
    log: list = []
    agent = approval_agent(log, model_says)
    first = await agent.generate("delete 9", thread_id="t")
    assert first.finish_reason == "suspended"
    nxt = await agent.generate(reply, thread_id="t")
    pending = (await agent.list_suspended_runs()).total
    if expect == "approved":
        assert log == ["9"] and pending == 0 and nxt.run_id == first.run_id
    elif expect == "declined":
        assert log == [] and pending == 0 and nxt.run_id == first.run_id and "don't" in nxt.text
    else:
        assert log == [] and pending == 1 and nxt.run_id != first.run_id


def test_helpers_for_answers():
    assert explicit_yes("Yes please") and not explicit_yes("no") and not explicit_yes("yes? not sure")
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1} and parse_json('sure: {"a": 2}') == {"a": 2}
    assert parse_json("nothing") is None


async def test_send_tool_approval_by_thread_from_storage(tmp_path):
    log: list = []
    path = tmp_path / "w.db"

    def build():
        agent = Agent(
            id="a",
            model=calls_then([("d", {"id": "x"}, "c1")], echo_results()),
            tools={"d": recording_tool(log)},
            memory=Memory(),
        )
        return agent, Runtime(agents={"a": agent}, storage=SqliteStore(path))

    agent, runtime = build()
    async with runtime:
        out = await agent.generate("go", thread_id="thread-1", resource_id="u")
        assert out.finish_reason == "suspended"
    agent2, runtime2 = build()  # nothing runs in this process: found in storage
    async with runtime2:
        with pytest.raises(SnapshotNotFound):
            await agent2.send_tool_approval(thread_id="other", approved=True)
        stream = await agent2.send_tool_approval(thread_id="thread-1", resource_id="u", approved=True)
        await stream.wait()
        assert stream.run_id == out.run_id and stream.status == "finished" and log == ["x"]


async def test_send_tool_approval_needs_an_id_when_ambiguous():
    log: list = []
    agent = Agent(
        id="a",
        model=calls_then([("d", {"id": "1"}, "c1"), ("d", {"id": "2"}, "c2")], echo_results()),
        tools={"d": recording_tool(log)},
    )
    out = await agent.generate("go", thread_id="t")
    with pytest.raises(AmbiguousToolCall) as err:
        await agent.send_tool_approval(thread_id="t", approved=True)
    assert "c1" in str(err.value) and "tool_call_id" in str(err.value)
    s = await agent.send_tool_approval(thread_id="t", approved=False, tool_call_id="c2")
    await s.wait()
    s = await agent.send_tool_approval(thread_id="t", approved=True)  # now only one is left
    await s.wait()
    assert s.status == "finished" and log == ["1"] and s.run_id == out.run_id


async def test_cancelling_a_decision_before_its_tool_starts_gives_it_back(tmp_path):
    release = asyncio.Event()
    log: list = []

    async def slow(inp, ctx):
        await release.wait()
        log.append(inp.id)
        return "ok"

    from tests.helpers import IdIn

    tool = create_tool(id="slow", input_schema=IdIn, execute=slow, require_approval=True)
    agent = Agent(
        id="a",
        model=calls_then([("slow", {"id": "1"}, "x"), ("slow", {"id": "2"}, "y")], echo_results()),
        tools={"slow": tool},
    )
    async with Runtime(agents={"a": agent}, storage=SqliteStore(tmp_path / "w.db")) as runtime:
        out = await agent.generate("go")
        first = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="x")  # holds the lease
        await asyncio.sleep(0.05)
        waiting = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="y")  # waits for it
        await asyncio.sleep(0.05)
        await waiting.cancel()
        assert waiting.done
        calls = {c.tool_call_id: c.status for c in await runtime.store.get_calls(out.run_id)}
        assert calls["y"] == "pending", "an interrupted decision goes back to pending"
        release.set()
        await first.wait()
        assert first.status == "suspended"
        listed = await agent.list_suspended_runs()
        assert [c.tool_call_id for c in listed.runs[0].tool_calls] == ["y"]
        again = await agent.approve_tool_call_generate(run_id=out.run_id, tool_call_id="y")
        assert again.finish_reason == "stop" and log == ["1", "2"]
