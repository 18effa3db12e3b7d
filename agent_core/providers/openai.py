"""OpenAI-compatible chat-completions provider (OpenAI, Ollama, vLLM, llama.cpp, LM Studio).

Speaks ``POST {base_url}/chat/completions`` with ``stream: true`` over httpx and
server-sent events. Tool-call arguments arrive as string fragments keyed by
``index`` (several calls may stream interleaved); they are assembled and
parsed once the stream ends. Tool schemas and structured output are sent in
strict mode when the schema allows it (see ``schema.py``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import httpx
from httpx_sse import ServerSentEvent

from agent_core.models import (
    Message,
    ModelEvent,
    ModelRequestInfo,
    ModelResponse,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from agent_core.providers.http import HTTPModel, HTTPModelError, RetryPolicy, stream_events
from agent_core.providers.schema import (
    ensure_object_schema,
    schema_name,
    strip_strict_nulls,
    to_strict_schema,
)

__all__ = ["DEFAULT_OPENAI_BASE_URL", "OpenAIModel", "parse_tool_args"]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"

_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


def parse_tool_args(raw: str, tool: str) -> tuple[dict[str, Any], str | None]:
    """Parse a model's JSON arguments: ``(args, None)``, or ``({}, error)`` the model will be shown."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        excerpt = raw if len(raw) <= 200 else raw[:200] + "..."
        return {}, f"arguments for tool {tool!r} are not valid JSON ({exc}): {excerpt}"
    if not isinstance(value, dict):
        return {}, f"arguments for tool {tool!r} must be a JSON object, got {type(value).__name__}"
    return value, None


class _ToolCallBuffer:
    __slots__ = ("args", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name = ""
        self.args: list[str] = []


class _OpenAIParser:
    """One attempt's state: text, tool-call fragments by index, usage, finish reason."""

    def __init__(
        self,
        provider: str,
        strict_tools: dict[str, dict[str, Any]],
        output_schema: dict[str, Any] | None,
        wrapped: bool,
    ) -> None:
        self.provider = provider
        self.text: list[str] = []
        self.calls: dict[int, _ToolCallBuffer] = {}
        self._slots: dict[int, int] = {}  # wire index -> buffer (see _slot_for)
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self._done = False
        self._strict_tools = strict_tools
        self._output_schema = output_schema
        self._wrapped = wrapped

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        data = event.data.strip()
        if not data:
            return []
        if data == "[DONE]":
            self._done = True
            return []
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise HTTPModelError(f"{self.provider} sent an unreadable stream event: {data[:200]!r}") from exc
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):
            err = chunk["error"]
            msg = err.get("message", err) if isinstance(err, dict) else err
            raise HTTPModelError(f"{self.provider} reported an error in the stream: {msg}")
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            )
        out: list[ModelEvent] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            for key in ("content", "refusal"):
                piece = delta.get(key)
                if isinstance(piece, str) and piece:
                    self.text.append(piece)
                    out.append(TextDelta(text=piece))
            for part in delta.get("tool_calls") or []:
                index = self._slot_for(part.get("index"), part.get("id"))
                buf = self.calls.setdefault(index, _ToolCallBuffer())
                if part.get("id"):
                    buf.id = part["id"]
                fn = part.get("function") or {}
                if fn.get("name"):
                    buf.name = fn["name"]
                if isinstance(fn.get("arguments"), str):
                    buf.args.append(fn["arguments"])
                elif isinstance(fn.get("arguments"), dict):  # a few servers send an object
                    buf.args.append(json.dumps(fn["arguments"]))
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return out

    def _slot_for(self, index: Any, call_id: str | None) -> int:
        """The buffer a tool-call fragment belongs to.

        OpenAI numbers parallel calls by ``index``. Some servers do not: old
        Ollama omitted ``index``, and Ollama reuses ``index: 0`` for every
        call. So a fragment whose ``id`` differs from the call already at its
        index starts a new call, and later id-less fragments for that index
        continue the newest one.
        """
        if not isinstance(index, int):
            index = -1
        slot = self._slots.get(index)
        current = self.calls.get(slot) if slot is not None else None
        if slot is None or (call_id and current is not None and current.id and current.id != call_id):
            slot = len(self.calls)
            self._slots[index] = slot
        return slot

    def finish(self) -> ModelResponse:
        if not self._done and self.finish_reason is None:
            raise HTTPModelError(f"{self.provider} stream ended before the answer was complete", retryable=True)
        calls = []
        for index in sorted(self.calls):
            buf = self.calls[index]
            args, error = parse_tool_args("".join(buf.args), buf.name)
            if error is None and buf.name in self._strict_tools:
                args = strip_strict_nulls(args, self._strict_tools[buf.name])
            calls.append(ToolCall(name=buf.name, args=args, id=buf.id, args_error=error))
        text = "".join(self.text)
        if self._output_schema is not None and text:
            text = _clean_structured(text, self._output_schema, self._wrapped)
        reason = _FINISH.get(self.finish_reason or "stop", self.finish_reason)
        if calls and reason == "stop":
            reason = "tool-calls"
        return ModelResponse(text=text, tool_calls=calls, usage=self.usage, finish_reason=reason)


def _clean_structured(text: str, original: dict[str, Any], wrapped: bool) -> str:
    """Undo the strict conversion's nulls (and the ``{"value": ...}`` wrapper) in the answer."""
    try:
        value = json.loads(text)
    except ValueError:
        return text  # the caller validates and reports it
    cleaned = strip_strict_nulls(value, original)
    if wrapped and isinstance(cleaned, dict) and "value" in cleaned:
        cleaned = cleaned["value"]
    elif cleaned == value:
        return text
    return json.dumps(cleaned, ensure_ascii=False)


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "assistant" and m.tool_calls:
        return {
            "role": "assistant",
            "content": m.content or None,
            "tool_calls": [
                {
                    "id": c.id or f"call_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.args, ensure_ascii=False)},
                }
                for i, c in enumerate(m.tool_calls)
            ],
        }
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.name and m.role == "user":
        out["name"] = m.name
    return out


class OpenAIModel(HTTPModel):
    """A model behind any OpenAI-compatible ``/chat/completions`` endpoint.

    ``strict`` sends tool schemas and structured output in strict mode when
    they convert (OpenAI enforces them; servers that ignore it are unharmed).
    ``include_usage`` asks for the final usage chunk (``stream_options``).
    ``extra_body`` is merged into every request (``temperature``, ``seed``...).
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_OPENAI_BASE_URL,
        api_key: str | None = None,
        timeout: float | httpx.Timeout | None = 60.0,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        strict: bool = True,
        include_usage: bool = True,
        provider_name: str = "openai",
        sleep: Callable[[float], Awaitable[Any]] | None = None,
    ) -> None:
        self.provider = provider_name
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            http_client=http_client,
            headers=headers,
            extra_body=extra_body,
            sleep=sleep,
        )
        self.strict = strict
        self.include_usage = include_usage

    def _tool(self, spec: ToolSpec, strict_tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
        schema = dict(spec.input_schema) or {"type": "object", "properties": {}}
        schema.setdefault("type", "object")
        function: dict[str, Any] = {"name": spec.name, "description": spec.description}
        if self.strict:
            converted = to_strict_schema(schema)
            if converted.strict:
                strict_tools[spec.name] = schema
                function["parameters"] = converted.schema
                function["strict"] = True
                return {"type": "function", "function": function}
        function["parameters"] = schema
        return {"type": "function", "function": function}

    def build_request(
        self, messages: list[Message], info: ModelRequestInfo
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any] | None, bool]:
        """The JSON body, plus what the parser needs to undo strict-mode conversions."""
        body: dict[str, Any] = {"model": self.model, "messages": [_message(m) for m in messages], "stream": True}
        if self.include_usage:
            body["stream_options"] = {"include_usage": True}
        strict_tools: dict[str, dict[str, Any]] = {}
        if info.tools:
            body["tools"] = [self._tool(t, strict_tools) for t in info.tools]
        original: dict[str, Any] | None = None
        wrapped = False
        if info.output_schema is not None:
            original, wrapped = ensure_object_schema(info.output_schema)
            converted = to_strict_schema(original) if self.strict else None
            json_schema: dict[str, Any] = {"name": schema_name(info.output_schema)}
            if converted is not None and converted.strict:
                json_schema.update(schema=converted.schema, strict=True)
            else:
                json_schema["schema"] = original
            body["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        body.update(self.extra_body)
        return body, strict_tools, original, wrapped

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "text/event-stream", **self.extra_headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def stream(self, messages: list[Message], info: ModelRequestInfo) -> AsyncIterator[ModelEvent]:
        body, strict_tools, original, wrapped = self.build_request(messages, info)
        async for event in stream_events(
            provider=self.model_id,
            client=self.client(),
            settings=self.settings,
            url=f"{self.base_url}/chat/completions",
            headers=self.headers(),
            body=body,
            new_parser=lambda: _OpenAIParser(self.model_id, strict_tools, original, wrapped),
        ):
            yield event
