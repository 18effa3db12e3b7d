"""What the async and sync clients share: request bodies, result models, stream state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from agent_core.chunks import PAYLOAD_TYPES, Chunk, Payload, ToolCallPayload, ToolResultPayload
from agent_core.models import Message, Usage
from agent_core.stream import GenerateResult, StepSummary
from agent_core.views import SuspendedRun, SuspendedRunList
from warden_client.errors import ProtocolError, error_from_response

RUN_ID_HEADER = "x-warden-run-id"
API = "/api/agents"


def normalize_base_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[: -len("/api")] if base.endswith("/api") else base


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def stream_timeout(t: httpx.Timeout) -> httpx.Timeout:
    """A stream may wait long between chunks (a slow model): no read timeout."""
    return httpx.Timeout(connect=t.connect, read=None, write=t.write, pool=t.pool)


def raise_for_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise error_from_response(response.status_code, response.content)


def json_of(response: httpx.Response) -> Any:
    raise_for_status(response)
    try:
        return response.json()
    except ValueError as exc:
        raise ProtocolError(f"server answered {response.status_code} with a body that is not JSON") from exc


def message_json(m: Any) -> Any:
    if isinstance(m, Message):
        return {"role": m.role, "content": m.content}
    return m


def stream_body(
    messages: str | Sequence[Any],
    *,
    thread_id: str | None,
    resource_id: str | None,
    require_tool_approval: bool | None,
    max_steps: int | None,
    request_context: dict[str, Any] | None,
) -> dict[str, Any]:
    if require_tool_approval is not None and not isinstance(require_tool_approval, bool):
        raise TypeError("over HTTP require_tool_approval is True, False or None (a policy function cannot be sent)")
    body: dict[str, Any] = {
        "messages": messages if isinstance(messages, str) else [message_json(m) for m in messages],
    }
    if require_tool_approval is not None:
        body["requireToolApproval"] = require_tool_approval
    if max_steps is not None:
        body["maxSteps"] = max_steps
    if thread_id is not None:
        body["threadId"] = thread_id
        body["memory"] = {"thread": thread_id, **({"resource": resource_id} if resource_id else {})}
    if resource_id is not None:
        body["resourceId"] = resource_id
    if request_context is not None:
        body["requestContext"] = request_context
    return body


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def generate_result(data: dict[str, Any]) -> GenerateResult:
    """The JSON of a ``/generate``-style route -> the runtime's own ``GenerateResult``."""
    payload = data.get("suspendPayload")
    kind = data.get("suspendType")
    suspend_payload = None
    if isinstance(payload, dict):
        if kind not in ("tool-call-approval", "tool-call-suspended"):
            kind = "tool-call-approval" if "fingerprint" in payload else "tool-call-suspended"
        suspend_payload = PAYLOAD_TYPES[kind].model_validate(payload)
    usage = data.get("usage") or {}
    steps = [
        StepSummary(
            step=s.get("step", 0),
            text=s.get("text", ""),
            finish_reason=s.get("finishReason"),
            tool_calls=[ToolCallPayload.model_validate(c) for c in s.get("toolCalls") or []],
        )
        for s in data.get("steps") or []
    ]
    return GenerateResult(
        run_id=data.get("runId", ""),
        text=data.get("text", ""),
        finish_reason=data.get("finishReason") or "stop",
        suspend_payload=suspend_payload,
        steps=steps,
        tool_calls=[ToolCallPayload.model_validate(c) for c in data.get("toolCalls") or []],
        tool_results=[ToolResultPayload.model_validate(c) for c in data.get("toolResults") or []],
        usage=Usage(input_tokens=usage.get("inputTokens", 0) or 0, output_tokens=usage.get("outputTokens", 0) or 0),
        error=data.get("error"),
        status=data.get("status") or "finished",
    )


def suspended_run(data: Any) -> SuspendedRun:
    try:
        return SuspendedRun.model_validate(data)
    except ValueError as exc:
        raise ProtocolError(f"suspended run answer does not match SuspendedRun: {exc}") from exc


def suspended_run_list(data: Any) -> SuspendedRunList:
    """The JSON of ``GET .../suspended-runs`` -> the runtime's own ``SuspendedRunList``."""
    try:
        return SuspendedRunList.model_validate(data)
    except ValueError as exc:
        raise ProtocolError(f"suspended-runs answer does not match SuspendedRunList: {exc}") from exc


class StreamState:
    """Chunks read so far and what they say about the run (``status``, ``finish_reason``, ...)."""

    def __init__(self, run_id: str | None) -> None:
        self.run_id: str = run_id or ""
        self.chunks: list[Chunk] = []
        self.done = False
        self.status: str | None = None
        self.finish_reason: str | None = None
        self.suspend_payload: Payload | None = None
        self.error: str | None = None
        self.usage = Usage()
        self._finished = False
        self._failed = False

    def add(self, data: dict[str, Any]) -> None:
        if data.get("type") not in PAYLOAD_TYPES:
            return  # a chunk type this client does not know: skip it (forward compatible)
        chunk = Chunk.from_json(data)
        if not self.run_id:
            self.run_id = chunk.run_id
        if chunk.type == "finish":
            self._finished = True
            self.finish_reason = chunk.payload.finish_reason  # type: ignore[union-attr]
            self.usage = chunk.payload.usage  # type: ignore[union-attr]
        elif chunk.type == "error":
            self._failed = True
            self.error = chunk.payload.error  # type: ignore[union-attr]
        elif chunk.type in ("tool-call-approval", "tool-call-suspended"):
            self.suspend_payload = chunk.payload
        self.chunks.append(chunk)

    def end(self) -> None:
        if self.done:
            return
        self.done = True
        if self._finished:
            self.status = "finished"
            if self.finish_reason != "suspended":
                self.suspend_payload = None
        elif self._failed:
            self.status = "failed"
            self.finish_reason = self.finish_reason or "error"
        elif self.suspend_payload is not None:
            self.status = "suspended"
            self.finish_reason = "suspended"
        else:
            self.status = "failed"
            self.finish_reason = self.finish_reason or "error"

    @staticmethod
    def text_of(chunks: Sequence[Chunk]) -> str:
        return "".join(c.payload.text for c in chunks if c.type == "text-delta")  # type: ignore[union-attr]


class StreamView:
    """The ``AgentStream`` attributes of a remote stream, read from its ``StreamState``.

    Shared by the async and the blocking stream classes, which differ only in how they read.
    """

    _state: StreamState

    @property
    def run_id(self) -> str:
        return self._state.run_id

    @property
    def status(self) -> str | None:
        return self._state.status

    @property
    def finish_reason(self) -> str | None:
        return self._state.finish_reason

    @property
    def suspend_payload(self) -> Any:
        return self._state.suspend_payload

    @property
    def error(self) -> str | None:
        return self._state.error

    @property
    def usage(self) -> Usage:
        return self._state.usage

    @property
    def received(self) -> list[Chunk]:
        """Chunks received so far (without waiting for more)."""
        return list(self._state.chunks)
