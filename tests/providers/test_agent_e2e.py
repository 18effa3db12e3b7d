"""The whole approval flow through real providers: Agent -> HTTP (loopback) -> approval -> HTTP again."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agent_core import Agent, create_tool, fingerprint
from agent_core.models import LanguageModel
from agent_core.tools import ToolContext

from .common import WeatherInput
from .conftest import FAST, SleepLog
from .loopback import LoopbackServer, Reply

CALL_IDS = {"openai": "call_Wx81mQ2a", "anthropic": "toolu_01A09q90qw90lq917835lq9"}


def make_model(kind: str, server: LoopbackServer, sleeps: SleepLog) -> LanguageModel:
    from agent_core.providers import AnthropicModel, OpenAIModel

    if kind == "openai":
        return OpenAIModel("gpt-4o-mini", base_url=f"{server.url}/v1", api_key="sk-e2e", retry=FAST, sleep=sleeps)
    return AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-e2e", retry=FAST, sleep=sleeps)


def weather_agent(model: LanguageModel, log: list[str]) -> Agent:
    def get_weather(inp: WeatherInput, ctx: Any) -> dict[str, Any]:
        log.append(f"{inp.city}/{inp.unit}")
        return {"temp": 18, "unit": inp.unit}

    tool = create_tool(
        id="get-weather",
        description="Current weather for a city",
        input_schema=WeatherInput,
        require_approval=True,
        execute=get_weather,
    )
    return Agent(id="weather", instructions="You are a weather bot.", model=model, tools={"get_weather": tool})


def assistant_and_tool_messages(kind: str, body: dict[str, Any]) -> tuple[Any, Any]:
    """The assistant tool-call turn and the tool-result turn of a follow-up request."""
    msgs = body["messages"]
    at = next(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    return msgs[at], msgs[at + 1 :]


EXPECTED: dict[str, Callable[[str], tuple[Any, Any]]] = {
    "openai": lambda cid: (
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
            ],
        },
        [{"role": "tool", "tool_call_id": cid, "content": '{"temp": 18, "unit": "c"}'}],
    ),
    "anthropic": lambda cid: (
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": cid, "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        [
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": cid, "content": '{"temp": 18, "unit": "c"}'}],
            }
        ],
    ),
}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_gated_call_suspends_then_approval_sends_tool_result(
    kind: str, server: LoopbackServer, sleeps: SleepLog
) -> None:
    server.script(Reply.sse(f"{kind}/tool_call.sse"), Reply.sse(f"{kind}/after_tool.sse"))
    model = make_model(kind, server, sleeps)
    log: list[str] = []
    agent = weather_agent(model, log)
    try:
        stream = await agent.stream("Weather in Paris?")
        chunks = [c async for c in stream.full_stream]
        assert [c.type for c in chunks] == [
            "start",
            "step-start",
            "text-delta",
            "text-delta",
            "tool-call",
            "tool-call-approval",
        ]
        assert stream.status == "suspended" and log == []
        approval = chunks[-1].payload
        cid = CALL_IDS[kind]
        assert (approval.tool_call_id, approval.tool_name, approval.args) == (cid, "get_weather", {"city": "Paris"})
        assert approval.fingerprint == fingerprint("get_weather", {"city": "Paris"})
        assert len(server.requests) == 1

        approved = await agent.approve_tool_call(
            run_id=stream.run_id, tool_call_id=cid, fingerprint=approval.fingerprint
        )
        after = [c async for c in approved.full_stream]
        kinds = [c.type for c in after]
        assert kinds[:3] == ["start", "tool-call", "tool-result"] and kinds[-1] == "finish"
        assert approved.status == "finished"
        assert await approved.text() == "It is 18°C in Paris."
        assert log == ["Paris/c"]
    finally:
        await model.aclose()

    assert len(server.requests) == 2
    first, second = server.requests[0].json, server.requests[1].json
    sent_tools = [t["function"]["name"] if kind == "openai" else t["name"] for t in first["tools"]]
    assert sent_tools == ["get_weather"] and second["tools"] == first["tools"]
    assistant, results = assistant_and_tool_messages(kind, second)
    want_assistant, want_results = EXPECTED[kind](cid)
    assert assistant == want_assistant
    assert results == want_results
    if kind == "openai":
        assert second["messages"][0] == {"role": "system", "content": "You are a weather bot."}
    else:
        assert second["system"] == "You are a weather bot."
        assert second["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_decline_sends_the_refusal_as_tool_result(kind: str, server: LoopbackServer, sleeps: SleepLog) -> None:
    server.script(Reply.sse(f"{kind}/tool_call.sse"), Reply.sse(f"{kind}/text.sse"))
    model = make_model(kind, server, sleeps)
    log: list[str] = []
    agent = weather_agent(model, log)
    try:
        stream = await agent.stream("Weather in Paris?")
        [c async for c in stream.full_stream]
        declined = await agent.decline_tool_call(run_id=stream.run_id, reason="not today")
        [c async for c in declined.full_stream]
        assert declined.status == "finished" and log == []
    finally:
        await model.aclose()
    _, results = assistant_and_tool_messages(kind, server.requests[1].json)
    if kind == "openai":
        assert results == [{"role": "tool", "tool_call_id": CALL_IDS[kind], "content": json.dumps("not today")}]
    else:
        assert results[0]["content"] == [
            {"type": "tool_result", "tool_use_id": CALL_IDS[kind], "content": json.dumps("not today")}
        ]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_provider_failure_ends_the_run_with_an_error_chunk(
    kind: str, server: LoopbackServer, sleeps: SleepLog
) -> None:
    server.script(Reply.sse(f"{kind}/text.sse", cut_after=4))
    model = make_model(kind, server, sleeps)
    agent = weather_agent(model, [])
    try:
        stream = await agent.stream("Weather in Paris?")
        chunks = [c async for c in stream.full_stream]
    finally:
        await model.aclose()
    assert chunks[-1].type == "error"
    assert "connection failed in the middle of the answer" in chunks[-1].payload.error
    assert stream.status == "failed"
    assert len(server.requests) == 1


class UnitChoice(BaseModel):
    unit: Literal["c", "f"]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_suspended_tool_resumes_and_its_result_reaches_the_model(
    kind: str, server: LoopbackServer, sleeps: SleepLog
) -> None:
    async def get_weather(inp: WeatherInput, ctx: ToolContext) -> Any:
        if ctx.resume_data is None:
            return await ctx.suspend({"question": "Celsius or Fahrenheit?"})
        return {"temp": 64 if ctx.resume_data.unit == "f" else 18, "unit": ctx.resume_data.unit}

    tool = create_tool(
        id="get-weather",
        description="Current weather for a city",
        input_schema=WeatherInput,
        resume_schema=UnitChoice,
        execute=get_weather,
    )
    server.script(Reply.sse(f"{kind}/tool_call.sse"), Reply.sse(f"{kind}/after_tool.sse"))
    model = make_model(kind, server, sleeps)
    agent = Agent(id="weather", model=model, tools={"get_weather": tool})
    try:
        stream = await agent.stream("Weather in Paris?")
        chunks = [c async for c in stream.full_stream]
        assert chunks[-1].type == "tool-call-suspended" and stream.status == "suspended"
        assert chunks[-1].payload.suspend_payload == {"question": "Celsius or Fahrenheit?"}
        assert len(server.requests) == 1
        resumed = await agent.resume_stream({"unit": "f"}, run_id=stream.run_id)
        [c async for c in resumed.full_stream]
        assert resumed.status == "finished"
    finally:
        await model.aclose()
    _, results = assistant_and_tool_messages(kind, server.requests[1].json)
    if kind == "openai":
        assert results == [{"role": "tool", "tool_call_id": CALL_IDS[kind], "content": '{"temp": 64, "unit": "f"}'}]
    else:
        assert results[0]["content"] == [
            {"type": "tool_result", "tool_use_id": CALL_IDS[kind], "content": '{"temp": 64, "unit": "f"}'}
        ]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_run_with_output_schema_passes_the_schema_on_every_request(
    kind: str, server: LoopbackServer, sleeps: SleepLog
) -> None:
    """``output_schema=`` on a run with tools, through an approval: OpenAI's ``response_format``,
    Anthropic's output tool (``tool_choice`` "any" beside the agent's tools)."""
    from .common import Answer

    server.script(Reply.sse(f"{kind}/tool_call.sse"), Reply.sse(f"{kind}/structured.sse"))
    model = make_model(kind, server, sleeps)
    log: list[str] = []
    agent = weather_agent(model, log)
    try:
        stream = await agent.stream("Weather in Paris?", output_schema=Answer)
        [c async for c in stream.full_stream]
        assert stream.status == "suspended"
        result = await agent.approve_tool_call_generate(
            run_id=stream.run_id, tool_call_id=CALL_IDS[kind], output_schema=Answer
        )
    finally:
        await model.aclose()
    assert log == ["Paris/c"]
    assert result.object == Answer(approved=True)
    assert len(server.requests) == 2
    for request in server.requests:
        body = request.json
        if kind == "openai":
            assert body["response_format"]["type"] == "json_schema"
            assert body["response_format"]["json_schema"]["name"] == "Answer"
            assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]
        else:
            assert body["tool_choice"] == {"type": "any"}
            assert [t["name"] for t in body["tools"]] == ["get_weather", "structured_output"]
            assert body["tools"][1]["input_schema"] == Answer.model_json_schema()
