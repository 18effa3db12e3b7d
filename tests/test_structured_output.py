"""output_schema=Model on stream/generate: the final answer is validated, through approvals."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from agent_core import Agent, StructuredOutputInvalid, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from tests.helpers import IdIn


class Answer(BaseModel):
    city: str
    population: int


def model_answering(final: str, infos: list[ModelRequestInfo], *, call_tool: bool = True) -> FunctionModel:
    def fn(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        infos.append(info)
        if call_tool and messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="lookup", args={"id": "paris"}, id="c1")])
        return ModelResponse(text=final)

    return FunctionModel(fn)


async def lookup(inp: IdIn, ctx):
    return {"city": inp.id}


def agent_with(final: str, infos: list, **tool_opts) -> Agent:
    return Agent(
        id="a",
        model=model_answering(final, infos),
        tools={"lookup": create_tool(id="lookup", input_schema=IdIn, execute=lookup, **tool_opts)},
    )


async def test_generate_validates_the_final_answer_and_every_model_call_sees_the_schema():
    infos: list[ModelRequestInfo] = []
    agent = agent_with('{"city": "Paris", "population": 2100000}', infos)
    res = await agent.generate("where?", output_schema=Answer)
    assert res.object == Answer(city="Paris", population=2100000)
    assert len(infos) == 2 and all(i.output_schema == Answer.model_json_schema() for i in infos)
    stream = await agent.stream("where?", output_schema=Answer)
    assert await stream.object() == Answer(city="Paris", population=2100000)
    chunks = await stream.chunks()
    assert chunks[-1].to_json()["payload"]["object"] == {"city": "Paris", "population": 2100000}


async def test_without_output_schema_nothing_changes():
    infos: list[ModelRequestInfo] = []
    res = await agent_with("plain", infos).generate("where?")
    assert res.object is None and res.text == "plain" and infos[0].output_schema is None


async def test_fenced_json_is_accepted():
    res = await agent_with('```json\n{"city": "Lyon", "population": 5}\n```', []).generate("?", output_schema=Answer)
    assert res.object == Answer(city="Lyon", population=5)


@pytest.mark.parametrize("final", ["not json at all", '{"city": "Paris"}', '{"city": "Paris", "population": "many"}'])
async def test_invalid_final_answer_raises_with_the_raw_text_and_the_stream_ends_with_an_error(final):
    agent = agent_with(final, [])
    with pytest.raises(StructuredOutputInvalid) as info:
        await agent.generate("where?", output_schema=Answer)
    assert info.value.text == final and info.value.code == "AGENT_STRUCTURED_OUTPUT_INVALID"
    stream = await agent.stream("where?", output_schema=Answer)
    chunks = await stream.chunks()
    assert chunks[-1].type == "error" and chunks[-1].payload.code == "AGENT_STRUCTURED_OUTPUT_INVALID"
    assert stream.status == "failed"
    with pytest.raises(StructuredOutputInvalid):
        await stream.object()


async def test_structured_output_through_an_approval_with_and_without_the_model():
    infos: list[ModelRequestInfo] = []
    agent = agent_with('{"city": "Paris", "population": 1}', infos, require_approval=True)
    stream = await agent.stream("where?", output_schema=Answer)
    await stream.wait()
    assert stream.status == "suspended"
    # The decision does not repeat the model: the stored JSON Schema validates, ``object`` is a dict.
    res = await agent.approve_tool_call_generate(run_id=stream.run_id, tool_call_id="c1")
    assert res.object == {"city": "Paris", "population": 1}
    assert all(i.output_schema == Answer.model_json_schema() for i in infos)

    stream = await agent.stream("where?", output_schema=Answer)
    await stream.wait()
    res = await agent.approve_tool_call_generate(run_id=stream.run_id, tool_call_id="c1", output_schema=Answer)
    assert res.object == Answer(city="Paris", population=1)


async def test_structured_output_checked_against_the_stored_schema_on_decline():
    agent = agent_with('{"city": 3}', [], require_approval=True)
    stream = await agent.stream("where?", output_schema=Answer)
    await stream.wait()
    with pytest.raises(StructuredOutputInvalid) as info:
        await agent.decline_tool_call_generate(run_id=stream.run_id, tool_call_id="c1")
    assert info.value.text == '{"city": 3}'
    assert json.loads(info.value.text) == {"city": 3}
