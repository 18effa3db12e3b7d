"""Running the runnable calls of one step: bounded concurrency, sequential tools, live progress.

``run_calls`` runs the calls (``tool_call_concurrency`` at most at once, a
``sequential`` tool alone) and yields every call's own chunks, in the model's
call order. The ``tool-output`` chunks their tools write (``ctx.writer``), from
any depth of sub-agents, go live to the run's stream: ``AgentStream`` sets
``stream.live_sink`` in its task, and a writer pushes into it directly. So a
call runs inline in the stream's own task (no task and no queue per call); a
batch of several concurrent calls runs them in tasks of a ``gather``, which
inherit the sink. A run advanced without a stream (its generator read
directly) gets the same chunks through a queue the outermost step drains.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agent_core.call_state import RUNNABLE, CallState
from agent_core.chunks import Chunk, make_chunk
from agent_core.stream import live_sink
from agent_core.tools import ToolWriter

__all__ = ["run_calls", "writer_for"]

_DONE: Any = object()


def writer_for(run_id: str, agent_path: list[str], call: CallState) -> ToolWriter:
    """``ctx.writer`` for ``call``: its ``tool-output`` chunks go live to the run's stream while the call runs."""
    sink = live_sink.get()
    if sink is None or sink[0] != run_id:
        return ToolWriter(None, call.name)
    push = sink[1]

    async def emit(data: Any) -> None:
        if call.status in RUNNABLE:  # a task the tool left behind writes no more once the call is resolved
            push(
                make_chunk(
                    "tool-output",
                    run_id,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    data=data,
                    agent_path=list(agent_path),
                )
            )

    return ToolWriter(emit, call.name)


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
    """Run ``calls`` of run ``run_id`` and yield each call's chunks in call order (after the live
    progress, when no stream takes it). Tools get their writer from ``writer_for``."""
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
        if len(calls) == 1:
            await one(0)
            return
        for batch in _batches(calls, sequential):
            if len(batch) == 1:
                await one(batch[0])
            else:
                await asyncio.gather(*(one(i) for i in batch))

    sink = live_sink.get()
    if sink is not None and sink[0] == run_id:  # the run's stream takes the progress: run in this task
        await schedule()
    else:  # read without a stream: the outermost step yields the progress from a queue
        queue: asyncio.Queue[Any] = asyncio.Queue()
        token = live_sink.set((run_id, queue.put_nowait))

        async def scheduled() -> None:
            try:
                await schedule()
            finally:
                queue.put_nowait(_DONE)

        task = asyncio.get_running_loop().create_task(scheduled())
        live_sink.reset(token)
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                yield item
            await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
    for error in errors:
        if error is not None:
            raise error
    for chunks in results:
        for chunk in chunks:
            yield chunk
