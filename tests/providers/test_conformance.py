"""One set of scenarios, run against every provider: OpenAI, Anthropic and FunctionModel.

Each scenario states what any ``LanguageModel`` must produce (the event
protocol, text, tool calls, structured JSON, errors). The HTTP providers replay
their own wire transcripts of the same conversation from a loopback server;
``FunctionModel`` answers from a function. The tool-result scenario also checks
what the model *received*: whatever the wire format, it must carry each tool
result under the id of the call it answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_core.errors import ModelError
from agent_core.models import FunctionModel, LanguageModel, Message, ModelRequestInfo, ModelResponse, ToolCall

from .common import ASK, RUN, STRUCTURED, SYSTEM, Answer, collect
from .conftest import FAST, SleepLog
from .loopback import LoopbackServer, Reply

FUNCTION_ANSWERS: dict[str, ModelResponse] = {
    "text": ModelResponse(text="Hello there! How can I help?", finish_reason="stop"),
    "tool_call": ModelResponse(
        text="Let me check.",
        finish_reason="tool-calls",
        tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="fn_1")],
    ),
    "parallel_tool_calls": ModelResponse(
        finish_reason="tool-calls",
        tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris"}, id="fn_1"),
            ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="fn_2"),
        ],
    ),
    "structured": ModelResponse(text='{"approved": true, "reason": null}', finish_reason="stop"),
    "after_tool": ModelResponse(text="It is 18°C in Paris.", finish_reason="stop"),
    "malformed_args": ModelResponse(
        finish_reason="tool-calls",
        tool_calls=[
            ToolCall(
                name="get_weather",
                id="fn_3",
                args_error='arguments for tool \'get_weather\' are not valid JSON (Unterminated string): {"city": "Pa',
            )
        ],
    ),
}


class Harness:
    """A model of one kind plus a way to script its next answer and see what it was sent."""

    def __init__(self, kind: str, server: LoopbackServer, sleeps: SleepLog) -> None:
        self.kind = kind
        self.server = server
        self.received: list[list[Message]] = []
        self.next: str | None = None
        if kind == "openai":
            from agent_core.providers import OpenAIModel

            self.model: LanguageModel = OpenAIModel(
                "gpt-4o-mini", base_url=server.url, api_key="sk-x", retry=FAST, sleep=sleeps
            )
        elif kind == "anthropic":
            from agent_core.providers import AnthropicModel

            self.model = AnthropicModel(
                "claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-x", retry=FAST, sleep=sleeps
            )
        else:
            self.model = FunctionModel(self._answer)

    def _answer(self, messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        self.received.append(list(messages))
        if self.next == "error":
            raise ModelError("the function model failed")
        assert self.next is not None
        return FUNCTION_ANSWERS[self.next]

    def script(self, scenario: str) -> None:
        self.next = scenario
        if self.kind == "function":
            return
        if scenario == "error":
            self.server.script(Reply.json(400, {"error": {"message": "bad request", "type": "invalid"}}))
        else:
            self.server.script(Reply.sse(f"{self.kind}/{scenario}.sse"))

    def tool_results_received(self) -> list[tuple[str, str]]:
        """(tool call id, result text) pairs in the last request, read from its wire format."""
        if self.kind == "function":
            return [(m.tool_call_id or "", m.content) for m in self.received[-1] if m.role == "tool"]
        body = self.server.requests[-1].json
        if self.kind == "openai":
            return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
        return [
            (b["tool_use_id"], b["content"])
            for m in body["messages"]
            if m["role"] == "user"
            for b in m["content"]
            if b["type"] == "tool_result"
        ]

    def tool_calls_received(self) -> list[tuple[str, str, dict[str, Any]]]:
        if self.kind == "function":
            return [(c.id or "", c.name, c.args) for m in self.received[-1] for c in m.tool_calls]
        body = self.server.requests[-1].json
        if self.kind == "openai":
            return [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for m in body["messages"]
                for c in m.get("tool_calls", [])
            ]
        return [
            (b["id"], b["name"], b["input"])
            for m in body["messages"]
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "tool_use"
        ]


@pytest.fixture(params=["openai", "anthropic", "function"])
async def harness(request: pytest.FixtureRequest, server: LoopbackServer, sleeps: SleepLog) -> AsyncIterator[Harness]:
    h = Harness(request.param, server, sleeps)
    yield h
    await h.model.aclose()


def simple(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.args) for c in calls]


async def test_plain_text(harness: Harness) -> None:
    harness.script("text")
    deltas, done = await collect(harness.model, [SYSTEM, ASK], ModelRequestInfo())
    assert deltas and "".join(deltas) == done.response.text == "Hello there! How can I help?"
    assert done.response.tool_calls == []
    assert done.response.finish_reason == "stop"
    assert done.response.usage is None or done.response.usage.total_tokens > 0


async def test_one_tool_call(harness: Harness) -> None:
    harness.script("tool_call")
    deltas, done = await collect(harness.model, [SYSTEM, ASK], RUN)
    assert "".join(deltas) == done.response.text == "Let me check."
    assert simple(done.response.tool_calls) == [("get_weather", {"city": "Paris"})]
    assert done.response.tool_calls[0].id and done.response.tool_calls[0].args_error is None
    assert done.response.finish_reason == "tool-calls"


async def test_two_parallel_tool_calls(harness: Harness) -> None:
    harness.script("parallel_tool_calls")
    _, done = await collect(harness.model, [SYSTEM, ASK], RUN)
    assert simple(done.response.tool_calls) == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Tokyo", "unit": "f"}),
    ]
    ids = [c.id for c in done.response.tool_calls]
    assert all(ids) and len(set(ids)) == 2


async def test_tool_results_reach_the_model_under_their_call_ids(harness: Harness) -> None:
    harness.script("after_tool")
    history = [
        SYSTEM,
        ASK,
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(name="get_weather", args={"city": "Paris"}, id="call_a"),
                ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="call_b"),
            ],
        ),
        Message(role="tool", content='{"temp": 18}', tool_call_id="call_a", name="get_weather"),
        Message(role="tool", content='{"temp": 64}', tool_call_id="call_b", name="get_weather"),
    ]
    _, done = await collect(harness.model, history, RUN)
    assert done.response.text == "It is 18°C in Paris."
    assert harness.tool_calls_received() == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_weather", {"city": "Tokyo", "unit": "f"}),
    ]
    assert harness.tool_results_received() == [("call_a", '{"temp": 18}'), ("call_b", '{"temp": 64}')]


async def test_structured_output(harness: Harness) -> None:
    harness.script("structured")
    _, done = await collect(harness.model, [ASK, Message(role="user", content="yes")], STRUCTURED)
    assert json.loads(done.response.text) == {"approved": True, "reason": None}
    assert Answer.model_validate_json(done.response.text) == Answer(approved=True, retries=1)
    assert done.response.tool_calls == []


async def test_malformed_tool_arguments(harness: Harness) -> None:
    harness.script("malformed_args")
    _, done = await collect(harness.model, [ASK], RUN)
    [call] = done.response.tool_calls
    assert call.name == "get_weather" and call.args == {} and call.id
    assert call.args_error and "not valid JSON" in call.args_error


async def test_provider_error_is_a_model_error(harness: Harness) -> None:
    harness.script("error")
    with pytest.raises(ModelError):
        await collect(harness.model, [ASK], ModelRequestInfo())
