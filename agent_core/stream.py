"""``AgentStream`` (chunks as they come, replayable by several readers) and ``GenerateResult``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_core.chunks import (
    Chunk,
    ToolCallApprovalPayload,
    ToolCallPayload,
    ToolCallSuspendedPayload,
    ToolResultPayload,
    make_chunk,
)
from agent_core.errors import WardenError
from agent_core.models import Usage

StreamStatus = Literal["running", "finished", "suspended", "failed"]


class AgentStream:
    """A run's chunk stream. The run advances in a background task whether or not it is read.

    ``full_stream`` and ``text_stream`` may both be read, each from the start,
    as many times as wanted: chunks are kept for the life of the stream.
    """

    def __init__(self, run_id: str, source: AsyncIterator[Chunk]) -> None:
        self.run_id = run_id
        self.status: StreamStatus = "running"
        self.finish_reason: str | None = None
        self.suspend_payload: ToolCallApprovalPayload | ToolCallSuspendedPayload | None = None
        self.error: str | None = None
        self.usage = Usage()
        self._chunks: list[Chunk] = []
        self._done = False
        self._signal: asyncio.Future[None] | None = None
        self._task = asyncio.get_running_loop().create_task(self._pump(source))

    def __repr__(self) -> str:
        return f"AgentStream(run_id={self.run_id!r}, status={self.status!r})"

    async def _pump(self, source: AsyncIterator[Chunk]) -> None:
        try:
            async for chunk in source:
                self._observe(chunk)
                self._chunks.append(chunk)
                self._wake()
        except BaseException as exc:  # the producer reports its own errors; this is a last resort
            if not isinstance(exc, asyncio.CancelledError | GeneratorExit):
                message = exc.message if isinstance(exc, WardenError) else f"{type(exc).__name__}: {exc}"
                chunk = make_chunk("error", self.run_id, error=message, code=getattr(exc, "code", None))
                self._observe(chunk)
                self._chunks.append(chunk)
            else:
                self.status = "failed"
                self.error = self.error or "cancelled"
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if self.status == "running":
                self.status = "finished"
            self._done = True
            self._wake()

    def _observe(self, chunk: Chunk) -> None:
        t = chunk.type
        if t in ("tool-call-approval", "tool-call-suspended"):
            self.status = "suspended"
            self.finish_reason = "suspended"
            self.suspend_payload = chunk.payload  # type: ignore[assignment]
        elif t == "finish":
            self.status = "finished"
            self.finish_reason = chunk.payload.finish_reason  # type: ignore[union-attr]
            self.usage = chunk.payload.usage  # type: ignore[union-attr]
        elif t == "error":
            self.status = "failed"
            self.finish_reason = "error"
            self.error = chunk.payload.error  # type: ignore[union-attr]

    def _wake(self) -> None:
        signal, self._signal = self._signal, None
        if signal is not None and not signal.done():
            signal.set_result(None)

    async def _chunks_from_start(self) -> AsyncIterator[Chunk]:
        i = 0
        while True:
            if i < len(self._chunks):
                yield self._chunks[i]
                i += 1
                continue
            if self._done:
                return
            if self._signal is None:
                self._signal = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._signal)

    @property
    def full_stream(self) -> AsyncIterator[Chunk]:
        return self._chunks_from_start()

    @property
    def text_stream(self) -> AsyncIterator[str]:
        return self._texts()

    async def _texts(self) -> AsyncIterator[str]:
        async for chunk in self._chunks_from_start():
            if chunk.type == "text-delta":
                yield chunk.payload.text  # type: ignore[union-attr]

    async def text(self) -> str:
        return "".join([t async for t in self._texts()])

    async def chunks(self) -> list[Chunk]:
        """Wait for the end and return every chunk."""
        return [c async for c in self._chunks_from_start()]

    async def wait(self) -> AgentStream:
        await asyncio.shield(self._task)
        return self

    async def result(self) -> GenerateResult:
        return GenerateResult.from_chunks(self.run_id, await self.chunks(), self)

    @property
    def done(self) -> bool:
        return self._done

    async def cancel(self) -> None:
        """Stop the run now: the model request is closed and the run's lease released.

        A cancelled fresh run is simply gone; a cancelled decision whose tool had
        not started goes back to pending. Readers see the stream end.
        """
        if not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    aclose = cancel


class StepSummary(BaseModel):
    step: int
    text: str = ""
    finish_reason: str | None = None
    tool_calls: list[ToolCallPayload] = Field(default_factory=list)


class GenerateResult(BaseModel):
    """The complete outcome of ``generate`` (or of a stream read to its end)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_id: str
    text: str = ""
    finish_reason: Literal["stop", "suspended", "length", "error"] | str = "stop"
    suspend_payload: ToolCallApprovalPayload | ToolCallSuspendedPayload | None = None
    steps: list[StepSummary] = Field(default_factory=list)
    tool_calls: list[ToolCallPayload] = Field(default_factory=list)
    tool_results: list[ToolResultPayload] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None
    status: str = "finished"

    @classmethod
    def from_chunks(cls, run_id: str, chunks: list[Chunk], stream: AgentStream | None = None) -> GenerateResult:
        text: list[str] = []
        steps: list[StepSummary] = []
        current: StepSummary | None = None
        tool_calls: list[ToolCallPayload] = []
        tool_results: list[ToolResultPayload] = []
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
        status = stream.status if stream is not None else "finished"
        finish = stream.finish_reason if stream is not None else None
        if status == "suspended":
            finish = "suspended"
        elif status == "failed":
            finish = "error"
        return cls(
            run_id=run_id,
            text="".join(text),
            finish_reason=finish or "stop",
            suspend_payload=stream.suspend_payload if stream and status == "suspended" else None,
            steps=steps,
            tool_calls=tool_calls,
            tool_results=tool_results,
            usage=stream.usage if stream else Usage(),
            error=stream.error if stream else None,
            status=status,
        )
