"""Running the runnable calls of one step: bounded concurrency, sequential tools, live progress.

``run_calls`` runs the calls (``tool_call_concurrency`` at most at once, a
``sequential`` tool alone) and yields, while they run, the ``tool-output``
chunks their tools write (``ctx.writer``), from any depth of sub-agents; then
every call's own chunks, in the model's call order. The outermost step of a
run owns the ``LiveChannel`` and drains it; a sub-agent's steps write into it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agent_core.call_state import CallState
from agent_core.chunks import Chunk, make_chunk
from agent_core.tools import ToolWriter

__all__ = ["LiveChannel", "run_calls", "writer_for"]

_DONE: Any = object()


class LiveChannel:
    """Where tools' progress chunks wait for the outermost step of run ``run_id`` to yield them."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.queue: asyncio.Queue[Any] = asyncio.Queue()


#: The channel of the run whose step is running (tasks of its calls, and sub-agents inside them, inherit it).
_current: contextvars.ContextVar[LiveChannel | None] = contextvars.ContextVar("warden_live_channel", default=None)


def writer_for(run_id: str, agent_path: list[str], call: CallState) -> ToolWriter:
    """``ctx.writer`` for ``call``: its ``tool-output`` chunks go to the run's live channel."""
    channel = _current.get()
    if channel is None or channel.run_id != run_id:
        return ToolWriter(None, call.name)
    queue, call_id, name, path = channel.queue, call.id, call.name, list(agent_path)

    async def emit(data: Any) -> None:
        queue.put_nowait(
            make_chunk("tool-output", run_id, tool_call_id=call_id, tool_name=name, data=data, agent_path=path)
        )

    return ToolWriter(emit, name)


def _batches(calls: Sequence[CallState], sequential: Callable[[CallState], bool]) -> list[list[int]]:
    """Consecutive ordinary calls share a batch; a sequential call is a batch of its own."""
    out: list[list[int]] = []
    for i, call in enumerate(calls):
        if sequential(call):
            out.append([i])
        elif out and not sequential(calls[out[-1][0]]):
            out[-1].append(i)
        else:
            out.append([i])
    return out


async def run_calls(
    calls: Sequence[CallState],
    run_one: Callable[[CallState], AsyncIterator[Chunk]],
    *,
    run_id: str,
    limit: int | None,
    sequential: Callable[[CallState], bool],
) -> AsyncIterator[Chunk]:
    """Run ``calls`` of run ``run_id``; yield live progress (if this is the run's outermost step) and then
    each call's chunks in call order. Tools get their writer from ``writer_for``."""
    results: list[list[Chunk]] = [[] for _ in calls]
    errors: list[BaseException | None] = [None] * len(calls)
    gate = asyncio.Semaphore(limit) if limit and limit < len(calls) else None

    async def one(i: int) -> None:
        try:
            if gate is None:
                async for chunk in run_one(calls[i]):
                    results[i].append(chunk)
            else:
                async with gate:
                    async for chunk in run_one(calls[i]):
                        results[i].append(chunk)
        except Exception as exc:
            errors[i] = exc

    async def schedule() -> None:
        for batch in _batches(calls, sequential):
            if len(batch) == 1:
                await one(batch[0])
            else:
                await asyncio.gather(*(one(i) for i in batch))

    outer = _current.get()
    if outer is not None and outer.run_id == run_id:  # a sub-agent's step: the outermost one yields progress
        await schedule()
    else:
        channel = LiveChannel(run_id)
        _current.set(channel)

        async def scheduled() -> None:
            try:
                await schedule()
            finally:
                channel.queue.put_nowait(_DONE)

        task = asyncio.get_running_loop().create_task(scheduled())
        try:
            while True:
                item = await channel.queue.get()
                if item is _DONE:
                    break
                yield item
            await task
        finally:
            _current.set(outer)
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
    for error in errors:
        if error is not None:
            raise error
    for chunks in results:
        for chunk in chunks:
            yield chunk
