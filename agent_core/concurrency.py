"""Running the runnable calls of one step: bounded concurrency, sequential tools, live progress.

``run_calls`` runs the calls (``tool_call_concurrency`` at most at once, a
``sequential`` tool alone) and returns every call's own chunks, in the model's
call order. The ``tool-output`` chunks their tools write (``ctx.writer``), from
any depth of sub-agents, go live to the run's stream: ``AgentStream`` sets
``stream.live_sink`` in its task, and a writer pushes into it directly. So a
call runs inline in the stream's own task (no task and no queue per call); a
batch of several concurrent calls runs them in tasks of a ``gather``, which
inherit the sink. A run advanced without a stream (its generator read
directly) gets the progress first in the list, before the calls' chunks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agent_core.call_state import RUNNABLE, CallState
from agent_core.chunks import Chunk, make_chunk
from agent_core.stream import live_sink
from agent_core.tools import ToolWriter

__all__ = ["run_calls", "writer_for"]


class _LiveWriter(ToolWriter):
    """A writer whose ``tool-output`` chunks go to the run's stream, built only when the tool writes."""

    __slots__ = ("_call", "_path", "_push", "_run_id")

    def __init__(self, push: Callable[[Chunk], None], run_id: str, agent_path: list[str], call: CallState) -> None:
        super().__init__(None, call.name)
        self._push, self._run_id, self._path, self._call = push, run_id, agent_path, call

    async def write(self, data: Any) -> None:
        value = self._jsonable(data)
        call = self._call
        if call.status in RUNNABLE:  # a task the tool left behind writes no more once the call is resolved
            self._push(
                make_chunk(
                    "tool-output",
                    self._run_id,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    data=value,
                    agent_path=list(self._path),
                )
            )


def writer_for(run_id: str, agent_path: list[str], call: CallState) -> ToolWriter:
    """``ctx.writer`` for ``call``: its ``tool-output`` chunks go live to the run's stream while the call runs."""
    sink = live_sink.get()
    if sink is None or sink[0] != run_id:
        return ToolWriter(None, call.name)
    return _LiveWriter(sink[1], run_id, agent_path, call)


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
    run_one: Callable[[CallState], Awaitable[list[Chunk]]],
    *,
    run_id: str,
    limit: int | None,
    sequential: Callable[[CallState], bool],
) -> list[Chunk]:
    """Run ``calls`` of run ``run_id``; every call's chunks, in call order. Tools get their writer from
    ``writer_for``: their progress goes live to the run's stream, or (a run read without a stream, whose
    generator has no one to push to) comes first in the list."""
    sink = live_sink.get()
    if sink is not None and sink[0] == run_id:  # the run's stream (or a sub-agent's step inside it)
        return await _run_all(calls, run_one, limit, sequential)
    progress: list[Chunk] = []
    token = live_sink.set((run_id, progress.append))
    try:
        results = await _run_all(calls, run_one, limit, sequential)
    finally:
        live_sink.reset(token)
    return progress + results


async def _run_all(
    calls: Sequence[CallState],
    run_one: Callable[[CallState], Awaitable[list[Chunk]]],
    limit: int | None,
    sequential: Callable[[CallState], bool],
) -> list[Chunk]:
    if len(calls) == 1:  # the common case: inline, in the caller's task
        return await run_one(calls[0])
    results: list[list[Chunk]] = [[] for _ in calls]
    errors: list[BaseException | None] = [None] * len(calls)
    gate = asyncio.Semaphore(limit) if limit and limit < len(calls) else None

    async def one(i: int) -> None:
        try:
            if gate is None:
                results[i] = await run_one(calls[i])
            else:
                async with gate:
                    results[i] = await run_one(calls[i])
        except Exception as exc:
            errors[i] = exc

    for batch in _batches(calls, sequential):
        if len(batch) == 1:
            await one(batch[0])
        else:
            await asyncio.gather(*(one(i) for i in batch))
    for error in errors:
        if error is not None:
            raise error
    return [chunk for chunks in results for chunk in chunks]
