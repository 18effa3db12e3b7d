"""The provider-neutral model interface.

A model sees a list of ``Message`` objects and a ``ModelRequestInfo`` (the tools
it may call, an optional output schema, and why it is called) and streams
``ModelEvent`` values: text deltas as they arrive, then exactly one
``ModelDone`` carrying the complete ``ModelResponse``. ``FunctionModel`` wraps a
plain function: the deterministic model for tests and demos.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field
from pydantic.alias_generators import to_camel

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    """A tool call as the model made it. ``args`` are the model's raw arguments.

    ``args_error`` is set by a provider whose model sent arguments that are not
    a JSON object; the run loop turns it into a ``tool-error`` the model sees.
    """

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    args_error: str | None = None

    def __init__(
        self, name: str | None = None, args: dict[str, Any] | None = None, id: str | None = None, **data: Any
    ) -> None:
        if name is not None:
            data["name"] = name
        if args is not None:
            data["args"] = args
        if id is not None:
            data["id"] = id
        super().__init__(**data)


class Message(BaseModel):
    """One conversation message. A tool result is ``role="tool"`` with JSON text ``content``.

    ``tool_status`` says what a tool result is: the tool's output (``"ok"``), an
    error the model should see (``"error"``: bad arguments, an exception), or
    the operator's refusal (``"denied"``, ``content`` is the reason). Providers
    that can flag errors (Anthropic's ``is_error``) use it.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    tool_status: Literal["ok", "error", "denied"] | None = None


class Usage(BaseModel):
    """Token counts; JSON (``by_alias=True``) uses Mastra's ``inputTokens``/``outputTokens``/``totalTokens``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    input_tokens: int = 0
    output_tokens: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens, output_tokens=self.output_tokens + other.output_tokens
        )


class ModelResponse(BaseModel):
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None


class ToolSpec(BaseModel):
    """What the model is told about one tool: its name as the agent exposes it, and JSON Schema."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ModelRequestInfo(BaseModel):
    """Why and how the model is called.

    ``purpose`` is ``"run"`` for an ordinary step and ``"resume"`` when the
    runtime asks the model to turn a user message into resume data; then
    ``output_schema`` is the JSON Schema the answer's JSON must satisfy.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tools: list[ToolSpec] = Field(default_factory=list)
    output_schema: dict[str, Any] | None = None
    purpose: Literal["run", "resume"] = "run"
    agent_id: str | None = None
    run_id: str | None = None
    step: int = 0
    #: the run's thread, if any (a model that makes up ids can keep them apart across the thread's runs)
    thread_id: str | None = None


class TextDelta(BaseModel):
    type: Literal["text-delta"] = "text-delta"
    text: str


class ModelDone(BaseModel):
    type: Literal["done"] = "done"
    response: ModelResponse


ModelEvent = TextDelta | ModelDone


class LanguageModel(ABC):
    """What an agent talks to. Subclasses implement ``stream``; ``generate`` collects it."""

    #: ``provider/model`` style id, shown in the console ("function" for FunctionModel).
    model_id: str = "model"
    #: True for offline demo models, so the UI can label them.
    is_demo: bool = False

    @abstractmethod
    def stream(self, messages: list[Message], info: ModelRequestInfo) -> AsyncIterator[ModelEvent]:
        """Yield ``TextDelta`` events, then exactly one ``ModelDone``."""

    async def generate(self, messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        response: ModelResponse | None = None
        async for event in self.stream(messages, info):
            if isinstance(event, ModelDone):
                response = event.response
        if response is None:
            from agent_core.errors import ModelError

            raise ModelError(f"model {self.model_id} ended its stream without a response")
        return response

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections (HTTP clients); a no-op for in-process models."""


FunctionModelFn = Callable[[list[Message], ModelRequestInfo], "ModelResponse | str | Awaitable[ModelResponse | str]"]


class FunctionModel(LanguageModel):
    """A model whose answers come from a Python function: deterministic, offline, fast."""

    model_id = "function"

    def __init__(self, fn: FunctionModelFn, *, model_id: str = "function") -> None:
        self.fn = fn
        self.model_id = model_id

    async def _call(self, messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        out = self.fn(messages, info)
        if type(out) is not ModelResponse and inspect.isawaitable(out):  # the usual answer needs no ABC check
            out = await out
        if isinstance(out, str):
            return ModelResponse(text=out)
        if isinstance(out, ModelResponse):
            return out
        raise TypeError(f"FunctionModel function must return ModelResponse or str, got {type(out).__name__}")

    async def generate(self, messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        return await self._call(messages, info)

    async def stream(self, messages: list[Message], info: ModelRequestInfo) -> AsyncIterator[ModelEvent]:
        response = await self._call(messages, info)
        if response.text:
            yield TextDelta(text=response.text)
        yield ModelDone(response=response)


__all__ = [
    "FunctionModel",
    "LanguageModel",
    "Message",
    "ModelDone",
    "ModelEvent",
    "ModelRequestInfo",
    "ModelResponse",
    "Role",
    "TextDelta",
    "ToolCall",
    "ToolSpec",
    "Usage",
]
