"""Suspension during execution: ctx.suspend(), resume data validated before the tool is re-entered."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from agent_core import (
    Agent,
    AlreadyDecided,
    ResumeDataInvalid,
    WardenError,
    WrongDecisionKind,
    create_tool,
    tool,
)
from agent_core.tools import ToolContext
from tests.helpers import calls_then, drain, echo_results, recording_tool, types


class WeatherIn(BaseModel):
    location: str | None = None


class Question(BaseModel):
    question: str


class WhereIn(BaseModel):
    location: str
    units: Literal["metric", "imperial"] = "metric"


def weather_tool(entries: list):
    async def execute(inp: WeatherIn, ctx: ToolContext):
        entries.append(("enter", inp.location, ctx.resume_data))
        loc = inp.location or (ctx.resume_data.location if ctx.resume_data else None)
        if not loc:
            return await ctx.suspend({"question": "Which city would you like the weather for?"})
        return {"weather": f"{loc}: sunny ({ctx.resume_data.units if ctx.resume_data else 'metric'})"}

    return create_tool(
        id="get-weather",
        description="weather",
        input_schema=WeatherIn,
        suspend_schema=Question,
        resume_schema=WhereIn,
        execute=execute,
    )


def weather_agent(entries):
    return Agent(
        id="w", model=calls_then([("weather", {}, "c1")], echo_results()), tools={"weather": weather_tool(entries)}
    )


async def test_suspend_then_resume_with_valid_data():
    entries: list = []
    agent = weather_agent(entries)
    stream = await agent.stream("What's the weather?")
    chunks = await drain(stream)
    assert types(chunks)[-1] == "tool-call-suspended" and stream.status == "suspended"
    sus = chunks[-1].payload
    assert sus.suspend_payload == {"question": "Which city would you like the weather for?"}
    assert sus.resume_schema["required"] == ["location"]
    listed = await agent.list_suspended_runs()
    call = listed.runs[0].tool_calls[0]
    assert call.requires_approval is False and call.kind == "suspend"
    assert call.suspend_payload == sus.suspend_payload and call.resume_schema == sus.resume_schema

    resumed = await agent.resume_stream({"location": "Paris", "units": "imperial"}, run_id=stream.run_id)
    text = await resumed.text()
    assert "Paris: sunny (imperial)" in text and resumed.status == "finished"
    assert entries[1][2] == WhereIn(location="Paris", units="imperial")
    with pytest.raises(AlreadyDecided):
        await agent.resume_stream({"location": "Rome"}, run_id=stream.run_id, tool_call_id="c1")


async def test_invalid_resume_data_raises_and_leaves_the_run_unchanged():
    entries: list = []
    agent = weather_agent(entries)
    out = await agent.generate("weather?")
    before = await agent.runtime.store.get_run(out.run_id)
    for bad in ({"nope": 1}, {"location": 3}, {"location": "Paris", "units": "kelvin"}, "Paris", None):
        with pytest.raises(ResumeDataInvalid) as err:
            await agent.resume_stream(bad, run_id=out.run_id)
        assert err.value.code == "AGENT_RESUME_DATA_INVALID" and out.run_id in str(err.value)
    assert err.value.errors  # per-field errors for a form
    after = await agent.runtime.store.get_run(out.run_id)
    assert after.snapshot == before.snapshot and after.version == before.version
    assert len(entries) == 1, "the tool was not re-entered"
    assert (await agent.list_suspended_runs()).runs[0].tool_calls[0].tool_call_id == "c1"
    assert await agent.runtime.store.audit_log(out.run_id) == []
    ok = await agent.resume_generate({"location": "Oslo"}, run_id=out.run_id)
    assert "Oslo" in ok.text


async def test_a_tool_can_suspend_again_after_resuming():
    class Confirm(BaseModel):
        confirmed: bool

    async def execute(inp, ctx):
        if ctx.resume_data is None:
            return await ctx.suspend({"message": "Confirm?"})
        if not ctx.resume_data.confirmed:
            return await ctx.suspend({"message": "Really confirm?"})
        return "done"

    t = create_tool(id="op", execute=execute, resume_schema=Confirm)
    agent = Agent(id="a", model=calls_then([("op", {}, "c")], echo_results()), tools={"op": t})
    out = await agent.generate("go")
    again = await agent.resume_generate({"confirmed": False}, run_id=out.run_id)
    assert again.finish_reason == "suspended"
    assert again.suspend_payload.suspend_payload == {"message": "Really confirm?"}
    listed = await agent.list_suspended_runs()
    assert listed.runs[0].tool_calls[0].suspend_payload == {"message": "Really confirm?"}
    done = await agent.resume_generate({"confirmed": True}, run_id=out.run_id)
    assert done.finish_reason == "stop" and 'op="done"' in done.text


async def test_wrong_decision_kinds_are_refused():
    entries: list = []
    agent = weather_agent(entries)
    out = await agent.generate("weather?")
    with pytest.raises(WrongDecisionKind):
        await agent.approve_tool_call(run_id=out.run_id, tool_call_id="c1")
    with pytest.raises(WrongDecisionKind):
        await agent.approve_tool_call(run_id=out.run_id)
    log: list = []
    gated = Agent(id="g", model=calls_then([("d", {"id": "1"}, "c")], echo_results()), tools={"d": recording_tool(log)})
    g = await gated.generate("x")
    with pytest.raises(WrongDecisionKind):
        await gated.resume_stream({"a": 1}, run_id=g.run_id)
    assert isinstance(WrongDecisionKind("x"), WardenError)


async def test_declining_a_suspended_call_cancels_it():
    entries: list = []
    agent = weather_agent(entries)
    out = await agent.generate("weather?")
    res = await agent.decline_tool_call_generate(run_id=out.run_id, reason="never mind")
    assert res.finish_reason == "stop" and "never mind" in res.text and len(entries) == 1


async def test_suspend_payload_failing_its_schema_is_a_tool_error():
    async def execute(inp, ctx):
        return await ctx.suspend({"wrong": "shape"})

    t = create_tool(id="q", execute=execute, suspend_schema=Question)
    agent = Agent(id="a", model=calls_then([("q", {}, "c")], echo_results()), tools={"q": t})
    stream = await agent.stream("go")
    chunks = await drain(stream)
    err = [c for c in chunks if c.type == "tool-error"]
    assert err and "suspend_schema" in err[0].payload.error and stream.status == "finished"


async def test_sync_tools_and_the_tool_decorator():
    calls = []

    @tool(require_approval=True)
    def transfer(amount: int, to: str, ctx: ToolContext) -> dict:
        """Move money."""
        calls.append((amount, to, ctx.tool_call_id))
        return {"moved": amount}

    assert transfer.id == "transfer" and transfer.description == "Move money."
    assert set(transfer.json_schema()["properties"]) == {"amount", "to"}

    @tool
    def ask(ctx: ToolContext) -> str:
        if ctx.resume_data is None:
            return ctx.suspend({"q": "name?"})  # sync tools return the suspension directly
        return f"hi {ctx.resume_data['name']}"

    agent = Agent(
        id="a",
        model=calls_then([("transfer", {"amount": "5", "to": "bob"}, "t1"), ("ask", {}, "a1")], echo_results()),
        tools=[transfer, ask],
    )
    out = await agent.generate("go")
    assert out.finish_reason == "suspended"
    res = await agent.approve_tool_call_generate(run_id=out.run_id, tool_call_id="t1")
    assert calls == [(5, "bob", "t1")] and res.finish_reason == "suspended"
    done = await agent.resume_generate({"name": "Ann"}, run_id=out.run_id)
    assert 'ask="hi Ann"' in done.text and 'transfer={"moved": 5}' in done.text


async def test_an_approved_call_that_suspends_is_not_gated_again_on_resume():
    runs = []

    @tool(require_approval=True)
    def wire(amount: int, ctx: ToolContext) -> str:
        runs.append(ctx.resume_data)
        if ctx.resume_data is None:
            return ctx.suspend({"q": "which account?"})
        return f"wired {amount} from {ctx.resume_data['account']}"

    agent = Agent(id="a", model=calls_then([("wire", {"amount": 5}, "w1")], echo_results()), tools=[wire])
    out = await agent.generate("go", require_tool_approval=True)
    assert out.suspend_payload.tool_call_id == "w1" and out.finish_reason == "suspended"
    approved = await agent.approve_tool_call(run_id=out.run_id, tool_call_id="w1")
    chunks = await drain(approved)
    assert types(chunks)[-1] == "tool-call-suspended" and "tool-call-approval" not in types(chunks)
    res = await agent.resume_generate({"account": "main"}, run_id=out.run_id, tool_call_id="w1")
    assert res.finish_reason == "stop" and "wired 5 from main" in res.text
    assert runs == [None, {"account": "main"}]
