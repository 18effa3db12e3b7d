"""OpenAI-compatible provider against a loopback server speaking chat-completions SSE."""

from __future__ import annotations

import json

import pytest

from agent_core.errors import ModelError
from agent_core.models import Message, ModelRequestInfo, ToolCall, Usage
from agent_core.providers import OpenAIModel

from .common import ASK, RUN, STRUCTURED, SYSTEM, Answer, collect
from .loopback import LoopbackServer, Reply

PARIS = ToolCall(name="get_weather", args={"city": "Paris"}, id="call_Wx81mQ2a")


async def test_plain_text_streams_deltas_and_usage(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.sse("openai/text.sse"))
    deltas, done = await collect(openai_model, [SYSTEM, ASK], ModelRequestInfo())
    assert deltas == ["Hello", " there", "! How can", " I help?"]
    assert done.response.text == "Hello there! How can I help?"
    assert done.response.tool_calls == []
    assert done.response.finish_reason == "stop"
    assert done.response.usage == Usage(input_tokens=21, output_tokens=9)

    [req] = server.requests
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.headers["authorization"] == "Bearer sk-test-123"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "text/event-stream"
    body = req.json
    assert body["model"] == "gpt-4o-mini"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert "tools" not in body and "response_format" not in body


async def test_sse_split_at_arbitrary_byte_boundaries(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.sse("openai/tool_call.sse", split=7))
    deltas, done = await collect(openai_model, [ASK], RUN)
    assert "".join(deltas) == "Let me check."
    assert done.response.tool_calls == [PARIS]


async def test_one_tool_call_sent_with_strict_schema(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.sse("openai/tool_call.sse"))
    deltas, done = await collect(openai_model, [SYSTEM, ASK], RUN)
    assert "".join(deltas) == done.response.text == "Let me check."
    # The model answered {"city": "Paris", "unit": null}: strict mode's null for an omitted optional
    # field is dropped, so the tool's default applies.
    assert done.response.tool_calls == [PARIS]
    assert done.response.finish_reason == "tool-calls"
    assert done.response.usage == Usage(input_tokens=88, output_tokens=24)

    [tool] = server.requests[0].json["tools"]
    assert tool == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "strict": True,
            "parameters": {
                "type": "object",
                "description": "Current weather for a city.",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": ["string", "null"], "enum": ["c", "f", None]},
                },
                "required": ["city", "unit"],
                "additionalProperties": False,
            },
        },
    }


@pytest.mark.parametrize("fixture", ["openai/parallel_tool_calls.sse", "openai/parallel_tool_calls_interleaved.sse"])
async def test_parallel_tool_calls_assembled_by_index(
    server: LoopbackServer, openai_model: OpenAIModel, fixture: str
) -> None:
    server.script(Reply.sse(fixture))
    deltas, done = await collect(openai_model, [ASK], RUN)
    assert deltas == []
    assert done.response.tool_calls == [
        ToolCall(name="get_weather", args={"city": "Paris"}, id="call_Wx81mQ2a"),
        ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="call_Wx81mQ2b"),
    ]


async def test_tool_results_go_back_as_tool_messages(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.sse("openai/after_tool.sse"))
    history = [
        SYSTEM,
        ASK,
        Message(
            role="assistant",
            content="",
            tool_calls=[
                ToolCall(name="get_weather", args={"city": "Paris"}, id="call_Wx81mQ2a"),
                ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="call_Wx81mQ2b"),
            ],
        ),
        Message(role="tool", content='{"temp": 18}', tool_call_id="call_Wx81mQ2a", name="get_weather"),
        Message(role="tool", content='{"temp": 64}', tool_call_id="call_Wx81mQ2b", name="get_weather"),
    ]
    _, done = await collect(openai_model, history, RUN)
    assert done.response.text == "It is 18°C in Paris."
    sent = server.requests[0].json["messages"]
    assert sent[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_Wx81mQ2a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "call_Wx81mQ2b",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Tokyo", "unit": "f"}'},
            },
        ],
    }
    assert sent[3:] == [
        {"role": "tool", "tool_call_id": "call_Wx81mQ2a", "content": '{"temp": 18}'},
        {"role": "tool", "tool_call_id": "call_Wx81mQ2b", "content": '{"temp": 64}'},
    ]


async def test_structured_output_uses_json_schema_response_format(
    server: LoopbackServer, openai_model: OpenAIModel
) -> None:
    server.script(Reply.sse("openai/structured.sse"))
    messages = [ASK, Message(role="user", content="yes, go ahead")]
    deltas, done = await collect(openai_model, messages, STRUCTURED)
    # Streamed as the model sent it; the final text drops strict mode's null for the defaulted field.
    assert json.loads("".join(deltas)) == {"approved": True, "reason": None, "retries": None}
    assert json.loads(done.response.text) == {"approved": True, "reason": None}
    assert Answer.model_validate_json(done.response.text) == Answer(approved=True)

    rf = server.requests[0].json["response_format"]
    assert rf == {
        "type": "json_schema",
        "json_schema": {
            "name": "Answer",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "approved": {"type": "boolean"},
                    "reason": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    "retries": {"type": ["integer", "null"]},
                },
                "required": ["approved", "reason", "retries"],
                "additionalProperties": False,
            },
        },
    }


async def test_non_strict_schema_is_sent_as_is(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    free_form = {"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": True}}}
    server.script(Reply.sse("openai/text.sse"))
    info = ModelRequestInfo(tools=[RUN.tools[0].model_copy(update={"input_schema": free_form})])
    await collect(openai_model, [ASK], info)
    function = server.requests[0].json["tools"][0]["function"]
    assert "strict" not in function
    assert function["parameters"] == free_form


async def test_malformed_tool_args_become_args_error(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.sse("openai/malformed_args.sse"))
    _, done = await collect(openai_model, [ASK], RUN)
    [call] = done.response.tool_calls
    assert (call.name, call.id, call.args) == ("get_weather", "call_Wx81mQ2c", {})
    assert call.args_error is not None
    assert "not valid JSON" in call.args_error and '{"city":"Par' in call.args_error


async def test_no_key_means_no_authorization_header(server: LoopbackServer) -> None:
    model = OpenAIModel(
        "llama3.2", base_url=f"{server.url}/v1", headers={"X-Trace": "t1"}, extra_body={"temperature": 0}
    )
    server.script(Reply.sse("openai/text.sse"))
    try:
        await collect(model, [ASK], ModelRequestInfo())
    finally:
        await model.aclose()
    req = server.requests[0]
    assert "authorization" not in req.headers
    assert req.headers["x-trace"] == "t1"
    assert req.json["temperature"] == 0


async def test_error_event_inside_stream_is_a_model_error(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    error = b'data: {"error": {"message": "context length exceeded", "type": "invalid_request_error"}}\n\n'
    server.script(Reply(200, {"content-type": "text/event-stream"}, [error]))
    with pytest.raises(ModelError, match="context length exceeded"):
        await collect(openai_model, [ASK], ModelRequestInfo())


@pytest.mark.parametrize("drop_index", [False, True])
async def test_ollama_style_calls_reusing_or_omitting_index(
    server: LoopbackServer, openai_model: OpenAIModel, drop_index: bool
) -> None:
    """Ollama sends each call whole, all with ``index: 0`` (older versions: no index), finish "stop"."""
    reply = Reply.sse("openai/ollama_parallel_tool_calls.sse")
    if drop_index:
        reply.chunks = [c.replace(b',"index":0,"type"', b',"type"') for c in reply.chunks]
        assert b'"index":0,"type"' not in b"".join(reply.chunks)
    server.script(reply)
    _, done = await collect(openai_model, [ASK], RUN)
    assert done.response.tool_calls == [
        ToolCall(name="get_weather", args={"city": "Paris"}, id="call_8sa1kz1o"),
        ToolCall(name="get_weather", args={"city": "Tokyo", "unit": "f"}, id="call_q3v0yt2m"),
    ]
    assert done.response.finish_reason == "tool-calls"


async def test_multibyte_text_split_across_chunks(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.sse("openai/after_tool.sse", split=3))  # "°" is two bytes: some pieces cut it
    _, done = await collect(openai_model, [ASK], ModelRequestInfo())
    assert done.response.text == "It is 18°C in Paris."


def test_base_url_must_be_http() -> None:
    from agent_core.errors import ProviderConfigError

    with pytest.raises(ProviderConfigError, match="must start with http"):
        OpenAIModel("m", base_url="localhost:11434/v1")


async def test_json_instead_of_event_stream_is_reported(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    server.script(Reply.json(200, {"error": {"message": "streaming is not supported with tools"}}))
    with pytest.raises(ModelError, match=r"did not answer with an event stream.*streaming is not supported"):
        await collect(openai_model, [ASK], RUN)
    assert len(server.requests) == 1


async def test_arguments_sent_as_an_object_are_accepted(server: LoopbackServer, openai_model: OpenAIModel) -> None:
    """Some proxies in front of Ollama forward ``arguments`` as a JSON object rather than a string."""
    reply = Reply.sse("openai/ollama_parallel_tool_calls.sse")
    reply.chunks = [
        c.replace(b'"arguments":"{\\"city\\":\\"Paris\\"}"', b'"arguments":{"city":"Paris"}') for c in reply.chunks
    ]
    assert b'"arguments":{"city":"Paris"}' in b"".join(reply.chunks)
    server.script(reply)
    _, done = await collect(openai_model, [ASK], RUN)
    assert [c.args for c in done.response.tool_calls] == [{"city": "Paris"}, {"city": "Tokyo", "unit": "f"}]
