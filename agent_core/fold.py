"""The one fold of a stream's chunks into its outcome (status, finish reason, suspension, usage, error).

``AgentStream`` in process and the client's remote streams feed it the same
chunks, so both report the same outcome; ``result_fields`` builds the fields of
a ``GenerateResult``. Plain data: it sits below the stream and the wire format.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from agent_core.chunks import (
    Chunk,
    ToolCallApprovalPayload,
    ToolCallPayload,
    ToolCallSuspendedPayload,
    ToolResultPayload,
)
from agent_core.models import Usage

StreamStatus = Literal["running", "finished", "suspended", "failed"]


class StepSummary(BaseModel):
    step: int
    text: str = ""
    finish_reason: str | None = None
    tool_calls: list[ToolCallPayload] = Field(default_factory=list)


class StreamFold:
    """What a stream's chunks say about its run: ``status``, ``finish_reason``,
    ``suspend_payload``, ``usage``, ``error``. The last telling chunk wins.

    ``AgentStream`` (in process) and the client's remote streams feed it the same
    chunks, so both report the same outcome; ``result_fields`` builds a ``GenerateResult``.
    """

    __slots__ = ("_usage", "error", "error_code", "finish_reason", "status", "suspend_payload")

    def __init__(self) -> None:
        self.status: StreamStatus = "running"
        self.finish_reason: str | None = None
        self.suspend_payload: ToolCallApprovalPayload | ToolCallSuspendedPayload | None = None
        self.error: str | None = None
        self.error_code: str | None = None
        #: built when first read: most streams (every suspended one) never carry a ``finish`` usage.
        self._usage: Usage | None = None

    @property
    def usage(self) -> Usage:
        if self._usage is None:
            self._usage = Usage()
        return self._usage

    @usage.setter
    def usage(self, value: Usage) -> None:
        self._usage = value

    def observe(self, chunk: Chunk) -> None:
        t = chunk.type
        if t in ("tool-call-approval", "tool-call-suspended"):
            self.status = "suspended"
            self.finish_reason = "suspended"
            self.suspend_payload = chunk.payload  # type: ignore[assignment]
        elif t == "finish":
            self.status = "finished"
            self.finish_reason = chunk.payload.finish_reason  # type: ignore[union-attr]
            self._usage = chunk.payload.usage  # type: ignore[union-attr]
        elif t == "error":
            self.status = "failed"
            self.finish_reason = "error"
            self.error = chunk.payload.error  # type: ignore[union-attr]
            self.error_code = chunk.payload.code  # type: ignore[union-attr]

    def cancelled(self) -> None:
        self.status = "failed"
        self.error = self.error or "cancelled"

    def end(self, *, unterminated: StreamStatus = "finished") -> None:
        """The stream is over. One that ended without ``finish``, ``error`` or a suspension gets
        ``unterminated``: "finished" in process (the producer just stopped), "failed" over HTTP
        (the connection was cut)."""
        if self.status == "running":
            self.status = unterminated
            if unterminated == "failed":
                self.finish_reason = self.finish_reason or "error"


def result_fields(run_id: str, chunks: Iterable[Chunk], outcome: Any = None) -> dict[str, Any]:
    """The fields of the ``GenerateResult`` of ``chunks``; ``outcome`` (a ``StreamFold`` or a stream
    exposing the same attributes) gives status, finish reason, suspension, usage and error."""
    text: list[str] = []
    steps: list[Any] = []
    current: Any = None
    tool_calls: list[ToolCallPayload] = []
    tool_results: list[ToolResultPayload] = []
    obj: Any = None
    for c in chunks:
        p: Any = c.payload
        if c.type == "step-start":
            current = StepSummary(step=p.step)
            steps.append(current)
        elif c.type == "text-delta":
            text.append(p.text)
            if current is not None:
                current.text += p.text
        elif c.type == "tool-call":
            tool_calls.append(p)
            if current is not None:
                current.tool_calls.append(p)
        elif c.type == "tool-result":
            tool_results.append(p)
        elif c.type == "step-finish" and current is not None:
            current.finish_reason = p.finish_reason
        elif c.type == "finish":
            obj = p.object
    status = outcome.status if outcome is not None else "finished"
    finish = outcome.finish_reason if outcome is not None else None
    if status == "suspended":
        finish = "suspended"
    elif status == "failed":
        finish = "error"
    return {
        "run_id": run_id,
        "text": "".join(text),
        "finish_reason": finish or "stop",
        "suspend_payload": outcome.suspend_payload if outcome is not None and status == "suspended" else None,
        "steps": steps,
        "tool_calls": tool_calls,
        "tool_results": tool_results,
        "usage": outcome.usage if outcome is not None else Usage(),
        "error": outcome.error if outcome is not None else None,
        "status": status,
        "object": obj,
    }
