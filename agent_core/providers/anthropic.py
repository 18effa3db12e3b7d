"""Anthropic Messages API provider, streamed over httpx and server-sent events.

The Messages API differs from chat completions in ways that matter here: the
system prompt is a top-level field, tool results are ``tool_result`` blocks in
a *user* message (all results of one step in the same message), roles must
alternate, and there is no ``response_format``: structured output is obtained
by forcing the model to call a tool whose input schema is the output schema,
and returning that input as JSON text.
"""

from __future__ import annotations

import json
import re
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
    Usage,
)
from agent_core.providers.http import HTTPModel, HTTPModelError, RetryPolicy, stream_events
from agent_core.providers.openai import parse_tool_args
from agent_core.providers.schema import ensure_object_schema

__all__ = ["ANTHROPIC_VERSION", "DEFAULT_ANTHROPIC_BASE_URL", "AnthropicModel"]

DEFAULT_ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
OUTPUT_TOOL = "structured_output"

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}
_RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


def _tool_id(value: str | None, fallback: str) -> str:
    """Anthropic accepts tool ids matching ``^[a-zA-Z0-9_-]+$``; map others consistently."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", value) if value else fallback


def convert_messages(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` in Messages API form.

    Consecutive messages of one role are merged (tool results of one step go
    in one user message), and in a user message the ``tool_result`` blocks
    come first, as the API requires.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    unnamed = 0
    for m in messages:
        if m.role == "system":
            if m.content:
                system.append(m.content)
            continue
        blocks: list[dict[str, Any]] = []
        if m.role == "tool":
            role = "user"
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": _tool_id(m.tool_call_id, "toolu_missing"),
                "content": m.content,
            }
            if m.tool_status == "error":
                block["is_error"] = True
            blocks.append(block)
        else:
            role = m.role
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            if m.role == "assistant":
                for call in m.tool_calls:
                    unnamed += 1
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": _tool_id(call.id, f"toolu_{unnamed}"),
                            "name": call.name,
                            "input": call.args,
                        }
                    )
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for msg in out:
        if msg["role"] == "user":
            msg["content"].sort(key=lambda b: b["type"] != "tool_result")  # stable: results first
    return ("\n\n".join(system) or None), out


class _Block:
    __slots__ = ("id", "initial", "json", "kind", "name")

    def __init__(self, kind: str, id: str | None = None, name: str = "", initial: dict[str, Any] | None = None) -> None:
        self.kind = kind
        self.id = id
        self.name = name
        self.initial = initial or {}
        self.json: list[str] = []


class _AnthropicParser:
    def __init__(self, provider: str, output_tool: str | None, wrapped: bool) -> None:
        self.provider = provider
        self.blocks: dict[int, _Block] = {}
        self.text: list[str] = []
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None
        self._done = False
        self._started = False
        self._output_tool = output_tool
        self._wrapped = wrapped

    @property
    def done(self) -> bool:
        return self._done

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        if not event.data.strip():
            return []
        try:
            data = json.loads(event.data)
        except ValueError as exc:
            raise HTTPModelError(f"{self.provider} sent an unreadable stream event: {event.data[:200]!r}") from exc
        kind = data.get("type") or event.event
        if kind == "message_start":
            self._started = True
            self._usage(data.get("message", {}).get("usage"))
        elif kind == "content_block_start":
            block = data.get("content_block") or {}
            btype = block.get("type", "")
            self.blocks[data.get("index", len(self.blocks))] = _Block(
                btype, block.get("id"), block.get("name", ""), block.get("input") or {}
            )
            if btype == "text" and block.get("text"):
                return self._text(block["text"])
        elif kind == "content_block_delta":
            delta = data.get("delta") or {}
            block = self.blocks.get(data.get("index", -1))
            if delta.get("type") == "text_delta" and delta.get("text"):
                return self._text(delta["text"])
            if delta.get("type") == "input_json_delta" and block is not None:
                piece = delta.get("partial_json", "")
                block.json.append(piece)
                if piece and block.name == self._output_tool and not self._wrapped:
                    return [TextDelta(text=piece)]
        elif kind == "message_delta":
            reason = (data.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop_reason = reason
            self._usage(data.get("usage"))
        elif kind == "message_stop":
            self._done = True
        elif kind == "error":
            err = data.get("error") or {}
            etype = err.get("type", "error")
            raise HTTPModelError(
                f"{self.provider} reported an error in the stream: {err.get('message', 'no message')} ({etype})",
                retryable=etype in _RETRYABLE_ERRORS,
            )
        return []

    def _text(self, piece: str) -> list[ModelEvent]:
        self.text.append(piece)
        return [TextDelta(text=piece)]

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        if any(k in usage for k in keys):
            self.input_tokens = sum(int(usage.get(k) or 0) for k in keys)
        if "output_tokens" in usage:
            self.output_tokens = int(usage.get("output_tokens") or 0)  # cumulative

    def finish(self) -> ModelResponse:
        if not self._done and self.stop_reason is None:
            raise HTTPModelError(f"{self.provider} stream ended before the answer was complete", retryable=True)
        usage = Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)
        text = "".join(self.text)
        calls: list[ToolCall] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind != "tool_use":
                continue
            raw = "".join(block.json)
            if block.name == self._output_tool:
                return ModelResponse(text=self._structured(raw, block.initial), usage=usage, finish_reason="stop")
            if raw.strip():
                args, error = parse_tool_args(raw, block.name)
            else:
                args, error = dict(block.initial), None
            calls.append(ToolCall(name=block.name, args=args, id=block.id, args_error=error))
        reason = _FINISH.get(self.stop_reason or "end_turn", self.stop_reason)
        return ModelResponse(text=text, tool_calls=calls, usage=usage, finish_reason=reason)

    def _structured(self, raw: str, initial: dict[str, Any]) -> str:
        if not raw.strip():
            raw = json.dumps(initial, ensure_ascii=False)
        if not self._wrapped:
            return raw
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return json.dumps(value.get("value") if isinstance(value, dict) else value, ensure_ascii=False)


class AnthropicModel(HTTPModel):
    """A Claude model over the Messages API (``POST {base_url}/v1/messages``).

    ``max_tokens`` is required by the API; ``extra_body`` is merged into every
    request (``temperature``, ``top_k``, ``metadata``...).
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_ANTHROPIC_BASE_URL,
        max_tokens: int = 4096,
        timeout: float | httpx.Timeout | None = 60.0,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        anthropic_version: str = ANTHROPIC_VERSION,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
    ) -> None:
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
        self.max_tokens = max_tokens
        self.anthropic_version = anthropic_version

    def build_request(self, messages: list[Message], info: ModelRequestInfo) -> tuple[dict[str, Any], str | None, bool]:
        """The JSON body, the forced output tool's name (if any) and whether its schema was wrapped."""
        system, converted = convert_messages(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": converted,
            "stream": True,
        }
        if system:
            body["system"] = system
        tools = []
        for spec in info.tools:
            schema = dict(spec.input_schema) or {"type": "object", "properties": {}}
            schema.setdefault("type", "object")
            tool: dict[str, Any] = {"name": spec.name, "input_schema": schema}
            if spec.description:
                tool["description"] = spec.description
            tools.append(tool)
        output_tool: str | None = None
        wrapped = False
        if info.output_schema is not None:
            schema, wrapped = ensure_object_schema(info.output_schema)
            names = {t["name"] for t in tools}
            output_tool = OUTPUT_TOOL
            while output_tool in names:
                output_tool = "_" + output_tool
            tools.append(
                {
                    "name": output_tool,
                    "input_schema": schema,
                    "description": "Give your answer by calling this tool; its input is the answer.",
                }
            )
            # Alone, the output tool is forced; with the agent's tools the model must call *a* tool
            # (one of its tools, or the output tool to answer), so a run can still use its tools.
            body["tool_choice"] = {"type": "any"} if tools[:-1] else {"type": "tool", "name": output_tool}
        if tools:
            body["tools"] = tools
        body.update(self.extra_body)
        return body, output_tool, wrapped

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version, "Accept": "text/event-stream", **self.extra_headers}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    async def stream(self, messages: list[Message], info: ModelRequestInfo) -> AsyncIterator[ModelEvent]:
        body, output_tool, wrapped = self.build_request(messages, info)
        async for event in stream_events(
            provider=self.model_id,
            client=self.client(),
            settings=self.settings,
            url=f"{self.base_url}/v1/messages",
            headers=self.headers(),
            body=body,
            new_parser=lambda: _AnthropicParser(self.model_id, output_tool, wrapped),
        ):
            yield event
