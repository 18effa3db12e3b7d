"""The chunk protocol: what a run streams, with Mastra's names and camelCase JSON keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.alias_generators import to_camel

from agent_core.models import Usage

ChunkType = Literal[
    "start",
    "step-start",
    "text-delta",
    "tool-call",
    "tool-call-approval",
    "tool-call-suspended",
    "tool-result",
    "tool-error",
    "tool-output-denied",
    "tool-call-expired",
    "tool-output",
    "step-finish",
    "finish",
    "error",
]


class Payload(BaseModel):
    """Base of chunk payloads: snake_case in Python, camelCase in JSON (``by_alias=True``)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, serialize_by_alias=False, defer_build=True
    )


class StartPayload(Payload):
    agent_id: str


class StepStartPayload(Payload):
    step: int


class TextDeltaPayload(Payload):
    text: str


class ToolCallPayload(Payload):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]


class ToolCallApprovalPayload(Payload):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    fingerprint: str
    resume_schema: dict[str, Any] | None = None
    agent_path: list[str] = Field(default_factory=list)
    #: the approval deadline (``approval_timeout``); None: it waits until decided (left out of JSON).
    expires_at: datetime | None = None
    #: the policy rule that asked (None: no rule), its reason, and the distinct approvals it needs.
    policy_rule: str | None = None
    policy_reason: str | None = None
    approvers_required: int = 1
    #: the votes so far (``{actor, at}``) of a quorum (``approvers_required`` >= 2).
    approvals: list[dict[str, Any]] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _drop_no_deadline(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("expires_at", "expiresAt"):
            if data.get(key, 0) is None:
                del data[key]
        return data


class ToolCallSuspendedPayload(Payload):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    suspend_payload: Any = None
    resume_schema: dict[str, Any] | None = None
    agent_path: list[str] = Field(default_factory=list)


class ToolResultPayload(Payload):
    tool_call_id: str
    tool_name: str
    result: Any = None
    is_error: bool = False
    #: the arguments the tool ran with (validated; an operator's edit when there was one).
    args: dict[str, Any] | None = None
    #: the grant that approved the call without asking (left out of JSON when None).
    grant_id: str | None = None

    @model_serializer(mode="wrap")
    def _drop_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("args", "grant_id", "grantId"):
            if data.get(key, 0) is None:
                del data[key]
        return data


class ToolErrorPayload(Payload):
    tool_call_id: str
    tool_name: str
    error: str


class ToolOutputDeniedPayload(Payload):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    reason: str
    #: the policy rule that blocked the call (a policy ``deny``); None: declined by an operator.
    policy_rule: str | None = None


class ToolCallExpiredPayload(Payload):
    """The approval deadline passed before anyone decided: the tool was not run (fail-closed)."""

    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    expired_at: datetime


class ToolOutputPayload(Payload):
    """Progress a running tool wrote with ``ctx.writer.write(data)``; ``agent_path`` names its agent."""

    tool_call_id: str
    tool_name: str
    data: Any = None
    agent_path: list[str] = Field(default_factory=list)


class StepFinishPayload(Payload):
    step: int
    finish_reason: str


class FinishPayload(Payload):
    finish_reason: str
    usage: Usage = Field(default_factory=Usage)
    #: the validated final answer (JSON) of a run with ``output_schema``; else None (and left out of JSON).
    object: Any = None

    @model_serializer(mode="wrap")
    def _drop_empty_object(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("object", 0) is None:
            del data["object"]
        return data


class ErrorPayload(Payload):
    error: str
    code: str | None = None


AnyPayload = (
    StartPayload
    | StepStartPayload
    | TextDeltaPayload
    | ToolCallPayload
    | ToolCallApprovalPayload
    | ToolCallSuspendedPayload
    | ToolResultPayload
    | ToolErrorPayload
    | ToolOutputDeniedPayload
    | ToolCallExpiredPayload
    | ToolOutputPayload
    | StepFinishPayload
    | FinishPayload
    | ErrorPayload
)

PAYLOAD_TYPES: dict[str, type[Payload]] = {
    "start": StartPayload,
    "step-start": StepStartPayload,
    "text-delta": TextDeltaPayload,
    "tool-call": ToolCallPayload,
    "tool-call-approval": ToolCallApprovalPayload,
    "tool-call-suspended": ToolCallSuspendedPayload,
    "tool-result": ToolResultPayload,
    "tool-error": ToolErrorPayload,
    "tool-output-denied": ToolOutputDeniedPayload,
    "tool-call-expired": ToolCallExpiredPayload,
    "tool-output": ToolOutputPayload,
    "step-finish": StepFinishPayload,
    "finish": FinishPayload,
    "error": ErrorPayload,
}


class Chunk(BaseModel):
    """One streamed event. ``from_`` is ``"AGENT"`` (JSON key ``from``) as in Mastra."""

    model_config = ConfigDict(populate_by_name=True)

    type: ChunkType
    run_id: str = Field(alias="runId")
    from_: str = Field(default="AGENT", alias="from")
    payload: AnyPayload

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Chunk:
        """Rebuild a chunk from its JSON form (camelCase or snake_case), picking the payload by type."""
        ptype = PAYLOAD_TYPES[data["type"]]
        payload = ptype.model_validate(data.get("payload") or {})
        return cls(
            type=data["type"],
            run_id=data.get("runId", data.get("run_id", "")),
            from_=data.get("from", data.get("from_", "AGENT")),
            payload=payload,
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def _defaults(cls: type[BaseModel]) -> tuple[tuple[str, Any, bool], ...]:
    """``(name, default, is_factory)`` of each optional field of ``cls``."""
    out = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            out.append((name, info.default_factory, True))
        elif not info.is_required():
            out.append((name, info.default, False))
    return tuple(out)


#: chunk type -> (payload class, its optional fields): one lookup per chunk built.
_SPECS: dict[str, tuple[type[BaseModel], tuple[tuple[str, Any, bool], ...]]] = {
    t: (cls, _defaults(cls)) for t, cls in PAYLOAD_TYPES.items()
}
_new = object.__new__
_set = object.__setattr__


def make_chunk(type_: ChunkType, run_id: str, **fields: Any) -> Chunk:
    """Build a chunk from runtime-validated values without re-validating them.

    What ``model_construct`` does, minus its per-field bookkeeping: chunks are built only
    here, from values the runtime already validated, several per model step, so this is on
    the hot path of every run (inlined: two models per chunk, no helper calls).
    """
    cls, defaults = _SPECS[type_]
    for name, default, factory in defaults:
        if name not in fields:
            fields[name] = default() if factory else default
    payload = _new(cls)
    _set(payload, "__dict__", fields)
    _set(payload, "__pydantic_fields_set__", set(fields))
    _set(payload, "__pydantic_extra__", None)
    _set(payload, "__pydantic_private__", None)
    chunk = _new(Chunk)
    _set(chunk, "__dict__", {"type": type_, "run_id": run_id, "from_": "AGENT", "payload": payload})
    _set(chunk, "__pydantic_fields_set__", {"type", "run_id", "from_", "payload"})
    _set(chunk, "__pydantic_extra__", None)
    _set(chunk, "__pydantic_private__", None)
    return chunk
