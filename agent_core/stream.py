"""``AgentStream`` (chunks as they come, replayable by several readers) and ``GenerateResult``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
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
from agent_core.errors import StructuredOutputInvalid, WardenError
from agent_core.fold import StepSummary, StreamFold, StreamStatus, result_fields
from agent_core.models import Usage

__all__ = ["AgentStream", "GenerateResult", "live_sink"]

#: ``(run_id, push)`` of the stream whose task is advancing run ``run_id``: set by ``AgentStream`` in its
#: own task (tasks started there, e.g. a parallel batch of tool calls, inherit it). A tool's writer pushes
#: its ``tool-output`` chunks straight into the stream, live, with no queue and no task to drain one.
live_sink: ContextVar[tuple[str, Callable[[Chunk], None]] | None] = ContextVar("warden_live_sink", default=None)


class AgentStream:
    """A run's chunk stream. The run advances in a background task whether or not it is read.

    ``full_stream`` and ``text_stream`` may both be read, each from the start,
    as many times as wanted: chunks are kept for the life of the stream.
    """

    def __init__(
        self,
        run_id: str,
        source: AsyncIterator[Chunk],
        *,
        on_abandon: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.run_id = run_id
        #: awaited by ``cancel()`` when ``source`` never began (e.g. to withdraw a decision).
        self._on_abandon = on_abandon
        self._began = False
        self._fold = StreamFold()  # status, finish_reason, suspend_payload, error, usage
        self._chunks: list[Chunk] = []
        self._done = False
        self._loop = asyncio.get_running_loop()
        #: one future per reader waiting for the next chunk, and per caller waiting for the end: each is
        #: woken only by what it waits for, and a cancelled waiter cancels its own future, nothing shared.
        self._waiters: list[asyncio.Future[None]] = []
        self._enders: list[asyncio.Future[None]] = []
        #: the pydantic model of ``output_schema=`` (``result().object`` is an instance of it), if given here.
        self.output_model: type[BaseModel] | None = None
        self._task = self._loop.create_task(self._pump(source))

    def __repr__(self) -> str:
        return f"AgentStream(run_id={self.run_id!r}, status={self.status!r})"

    async def _pump(self, source: AsyncIterator[Chunk]) -> None:
        self._began = True
        push = self._push
        # this task's context only; reset at the end, or the context would hold the stream (through
        # ``push``) and the stream its task: a cycle only the garbage collector frees, chunks and all
        sink = live_sink.set((self.run_id, push))
        try:
            async for chunk in source:
                push(chunk)
        except BaseException as exc:  # the producer reports its own errors; this is a last resort
            if not isinstance(exc, asyncio.CancelledError | GeneratorExit):
                message = exc.message if isinstance(exc, WardenError) else f"{type(exc).__name__}: {exc}"
                chunk = make_chunk("error", self.run_id, error=message, code=getattr(exc, "code", None))
                self._observe(chunk)
                self._chunks.append(chunk)
            else:
                self._fold.cancelled()
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            live_sink.reset(sink)
            self._fold.end()
            self._done = True
            self._wake()

    def _push(self, chunk: Chunk) -> None:
        """Append a chunk (from the source, or live from a tool's writer); dropped once the stream ended."""
        if self._done:
            return
        self._fold.observe(chunk)
        self._chunks.append(chunk)
        if self._waiters:  # most chunks come while no reader waits (the source runs ahead of them)
            self._wake()

    def _observe(self, chunk: Chunk) -> None:
        self._fold.observe(chunk)

    @property
    def status(self) -> StreamStatus:
        return self._fold.status

    @property
    def finish_reason(self) -> str | None:
        return self._fold.finish_reason

    @property
    def suspend_payload(self) -> ToolCallApprovalPayload | ToolCallSuspendedPayload | None:
        return self._fold.suspend_payload

    @property
    def error(self) -> str | None:
        return self._fold.error

    @property
    def usage(self) -> Usage:
        return self._fold.usage

    def _wake(self) -> None:
        """Wake the readers waiting for a chunk, and at the end also those waiting for the end."""
        if self._waiters:
            waiters, self._waiters = self._waiters, []
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)
        if self._done and self._enders:
            enders, self._enders = self._enders, []
            for fut in enders:
                if not fut.done():
                    fut.set_result(None)

    async def _ended(self) -> None:
        """Return once the stream is over (not raising if it was cancelled)."""
        if not self._done:
            fut = self._loop.create_future()
            self._enders.append(fut)
            await fut

    async def _chunks_from_start(self) -> AsyncIterator[Chunk]:
        i = 0
        chunks = self._chunks
        while True:
            if i < len(chunks):
                yield chunks[i]
                i += 1
                continue
            if self._done:
                return
            fut = self._loop.create_future()
            self._waiters.append(fut)
            await fut

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
        await self._ended()
        return "".join([c.payload.text for c in self._chunks if c.type == "text-delta"])  # type: ignore[union-attr]

    async def chunks(self) -> list[Chunk]:
        """Wait for the end and return every chunk."""
        await self._ended()
        return list(self._chunks)

    async def wait(self) -> AgentStream:
        """Wait for the run to stop (finished, suspended or failed); raises ``CancelledError`` if it was cancelled."""
        await self._ended()
        if self._task.cancelled():
            raise asyncio.CancelledError
        return self

    async def result(self) -> GenerateResult:
        """The outcome; raises ``StructuredOutputInvalid`` if the final answer fails the run's ``output_schema``."""
        await self._ended()
        result = GenerateResult.from_chunks(self.run_id, self._chunks, self)
        if self._fold.error_code == StructuredOutputInvalid.code:
            raise StructuredOutputInvalid(result.error or "structured output invalid", text=result.text)
        if self.output_model is not None and result.object is not None:
            result.object = self.output_model.model_validate(result.object)
        return result

    async def object(self) -> Any:
        """The validated final answer of a run with ``output_schema`` (a model instance, or a dict when
        the run was started elsewhere and no model was passed here); None if the run did not finish."""
        return (await self.result()).object

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
        abandon, self._on_abandon = self._on_abandon, None
        if not self._began and abandon is not None:
            await asyncio.shield(abandon())
        if not self._done:  # cancelled before it began: no reader may wait forever
            self._fold.cancelled()
            self._fold.end()
            self._done = True
            self._wake()

    aclose = cancel


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
    #: the validated final answer of a run with ``output_schema`` (model instance, or dict); else None.
    object: Any = None

    @classmethod
    def from_chunks(cls, run_id: str, chunks: list[Chunk], stream: Any = None) -> GenerateResult:
        """The result of a stream's chunks; ``stream`` (an ``AgentStream``, a remote stream or a
        ``fold.StreamFold``) gives its outcome (status, finish reason, suspension, usage, error)."""
        return cls(**result_fields(run_id, chunks, stream))
