"""Anthropic Messages provider against a loopback server speaking the Messages SSE format."""

from __future__ import annotations

import json

import pytest

from agent_core.errors import ModelError
from agent_core.models import Message, ModelRequestInfo, ToolCall, Usage
from agent_core.providers import AnthropicModel
from agent_core.providers.anthropic import convert_messages

from .common import ASK, RUN, STRUCTURED, SYSTEM, Answer, WeatherInput, collect
from .loopback import LoopbackServer, Reply


async def test_plain_text_headers_and_system(server: LoopbackServer, anthropic_model: AnthropicModel) -> None:
    server.script(Reply.sse("anthropic/text.sse"))
    deltas, done = await collect(anthropic_model, [SYSTEM, ASK], ModelRequestInfo())
    assert deltas == ["Hello", " there", "! How can", " I help?"]
    assert done.response.text == "Hello there! How can I help?"
    assert done.response.finish_reason == "stop"
    assert done.response.usage == Usage(input_tokens=21, output_tokens=9)

    [req] = server.requests
    assert (req.method, req.path) == ("POST", "/v1/messages")
    assert req.headers["x-api-key"] == "sk-ant-test-456"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    body = req.json
    assert body["model"] == "claude-sonnet-4-5"
    assert body["stream"] is True
    assert body["max_tokens"] == 4096
    assert body["system"] == "You are a weather bot."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}]


async def test_one_tool_call_with_text_and_input_schema(
    server: LoopbackServer, anthropic_model: AnthropicModel
) -> None:
    server.script(Reply.sse("anthropic/tool_call.sse"))
    deltas, done = await collect(anthropic_model, [ASK], RUN)
    assert deltas == ["Let me ", "check."]
    assert done.response.tool_calls == [
        ToolCall(name="get_weather", args={"city": "Paris"}, id="toolu_01A09q90qw90lq917835lq9")
    ]
    assert done.response.finish_reason == "tool-calls"
    assert done.response.usage == Usage(input_tokens=412, output_tokens=24)
    assert server.requests[0].json["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city",
            "input_schema": WeatherInput.model_json_schema(),
        }
    ]
    assert "tool_choice" not in server.requests[0].json


async def test_parallel_tool_use_blocks(server: LoopbackServer, anthropic_model: AnthropicModel) -> None:
    server.script(Reply.sse("anthropic/parallel_tool_calls.sse", split=11))
    deltas, done = await collect(anthropic_model, [ASK], RUN)
    assert deltas == []
    assert done.response.tool_calls == [
        ToolCall(name="get_weather", args={"city": "Paris"}, id="toolu_01A09q90qw90lq917835lq9"),
        ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="toolu_01B18r81rx81mr826724mr8"),
    ]


async def test_tool_results_merged_into_one_user_message(
    server: LoopbackServer, anthropic_model: AnthropicModel
) -> None:
    server.script(Reply.sse("anthropic/after_tool.sse"))
    history = [
        SYSTEM,
        ASK,
        Message(
            role="assistant",
            content="Let me check.",
            tool_calls=[
                ToolCall(name="get_weather", args={"city": "Paris"}, id="toolu_01A"),
                ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="toolu_01B"),
            ],
        ),
        Message(role="tool", content='{"temp": 18}', tool_call_id="toolu_01A", name="get_weather"),
        Message(role="tool", content='{"temp": 64}', tool_call_id="toolu_01B", name="get_weather"),
    ]
    _, done = await collect(anthropic_model, history, RUN)
    assert done.response.text == "It is 18°C in Paris."
    assert server.requests[0].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Tokyo", "unit": "f"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": '{"temp": 18}'},
                {"type": "tool_result", "tool_use_id": "toolu_01B", "content": '{"temp": 64}'},
            ],
        },
    ]


def test_user_message_after_tool_results_follows_them_in_one_turn() -> None:
    """Auto-resume puts the new user message right after the tool result: one user turn, results first."""
    system, msgs = convert_messages(
        [
            Message(role="user", content="delete 7"),
            Message(role="assistant", tool_calls=[ToolCall(name="delete", args={"id": 7}, id="call:1/x")]),
            Message(role="tool", content='"deleted"', tool_call_id="call:1/x"),
            Message(role="user", content="thanks"),
            Message(role="assistant", content=""),
        ]
    )
    assert system is None
    assert msgs[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1_x", "content": '"deleted"'},
            {"type": "text", "text": "thanks"},
        ],
    }
    assert msgs[1]["content"][0]["id"] == "call_1_x"  # ids mapped to Anthropic's alphabet, consistently


async def test_structured_output_forces_a_tool(server: LoopbackServer, anthropic_model: AnthropicModel) -> None:
    server.script(Reply.sse("anthropic/structured.sse"))
    deltas, done = await collect(anthropic_model, [ASK, Message(role="user", content="yes")], STRUCTURED)
    assert "".join(deltas) == done.response.text
    assert json.loads(done.response.text) == {"approved": True, "reason": None}
    assert Answer.model_validate_json(done.response.text) == Answer(approved=True)
    assert done.response.tool_calls == []
    assert done.response.finish_reason == "stop"
    body = server.requests[0].json
    assert body["tool_choice"] == {"type": "tool", "name": "structured_output"}
    assert body["tools"] == [
        {
            "name": "structured_output",
            "input_schema": Answer.model_json_schema(),
            "description": "Give your answer by calling this tool; its input is the answer.",
        }
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}, {"type": "text", "text": "yes"}]}
    ]


async def test_malformed_tool_json_becomes_args_error(server: LoopbackServer, anthropic_model: AnthropicModel) -> None:
    server.script(Reply.sse("anthropic/malformed_args.sse"))
    _, done = await collect(anthropic_model, [ASK], RUN)
    [call] = done.response.tool_calls
    assert (call.name, call.id, call.args) == ("get_weather", "toolu_01C27s72sy72ns735613ns7", {})
    assert call.args_error and "not valid JSON" in call.args_error


async def test_overloaded_error_event_before_output_is_retried(
    server: LoopbackServer, anthropic_model: AnthropicModel
) -> None:
    server.script(Reply.sse("anthropic/overloaded.sse"), Reply.sse("anthropic/text.sse"))
    _, done = await collect(anthropic_model, [ASK], ModelRequestInfo())
    assert done.response.text == "Hello there! How can I help?"
    assert len(server.requests) == 2


async def test_non_retryable_error_status_names_the_cause(
    server: LoopbackServer, anthropic_model: AnthropicModel
) -> None:
    server.script(
        Reply.json(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
    )
    with pytest.raises(ModelError) as info:
        await collect(anthropic_model, [ASK], ModelRequestInfo())
    assert "HTTP 401" in str(info.value) and "invalid x-api-key" in str(info.value)
    assert "check the API key" in str(info.value)
    assert info.value.code == "MODEL_ERROR"
    assert len(server.requests) == 1


def test_tool_errors_are_flagged_is_error() -> None:
    _, msgs = convert_messages(
        [
            Message(role="user", content="go"),
            Message(
                role="assistant", tool_calls=[ToolCall(name="t", args={}, id="a"), ToolCall(name="t", args={}, id="b")]
            ),
            Message(role="tool", content='{"error": "boom"}', tool_call_id="a", tool_status="error"),
            Message(role="tool", content='"no"', tool_call_id="b", tool_status="denied"),
        ]
    )
    results = msgs[-1]["content"]
    assert results[0]["is_error"] is True and "is_error" not in results[1]
