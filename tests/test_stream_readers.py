"""Readers of an ``AgentStream``: several at once, each woken by its own future, none disturbing the run."""

from __future__ import annotations

import asyncio

import pytest

from agent_core import Agent, create_tool
from tests.helpers import IdIn, calls_then, echo_results, types


def _agent(release: asyncio.Event) -> Agent:
    async def job(inp: IdIn, ctx):
        await ctx.writer.write("working")
        await release.wait()
        return inp.id

    return Agent(
        id="a",
        model=calls_then([("job", {"id": "1"}, "c1")], echo_results()),
        tools={"job": create_tool(id="job", input_schema=IdIn, execute=job)},
    )


async def test_every_reader_gets_every_chunk_in_order():
    release = asyncio.Event()
    stream = await _agent(release).stream("go")
    readers = [asyncio.ensure_future(stream.chunks()) for _ in range(3)]
    live = []
    async for chunk in stream.full_stream:
        live.append(chunk)
        if chunk.type == "tool-output":
            release.set()
    texts = asyncio.ensure_future(stream.text())
    waited = await stream.wait()
    assert waited is stream and stream.status == "finished"
    for reader in readers:
        assert await reader == live
    assert await texts == 'job="1"'
    assert types(live)[-1] == "finish" and [c async for c in stream.full_stream] == live


async def test_a_cancelled_reader_leaves_the_run_and_the_other_readers_alone():
    release = asyncio.Event()
    stream = await _agent(release).stream("go")
    doomed = asyncio.ensure_future(stream.chunks())
    waiter = asyncio.ensure_future(stream.wait())
    other = asyncio.ensure_future(stream.chunks())
    await asyncio.sleep(0.01)  # all three wait: the tool is blocked
    doomed.cancel()
    waiter.cancel()
    await asyncio.gather(doomed, waiter, return_exceptions=True)
    assert not stream.done
    release.set()
    chunks = await asyncio.wait_for(other, 2)
    assert stream.status == "finished" and types(chunks)[-1] == "finish"


async def test_wait_on_a_cancelled_stream_raises_cancelled_and_readers_end():
    release = asyncio.Event()
    stream = await _agent(release).stream("go")
    waiter = asyncio.ensure_future(stream.wait())
    reader = asyncio.ensure_future(stream.chunks())
    await asyncio.sleep(0.01)
    await stream.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    chunks = await asyncio.wait_for(reader, 2)
    assert "tool-output" in types(chunks) and "finish" not in types(chunks)
    assert stream.status == "failed" and stream.error == "cancelled"
    assert await stream.text() == ""


async def test_an_ended_stream_is_freed_without_the_garbage_collector():
    """The stream's task context drops its push when the stream ends: no reference cycle keeps the
    stream and its chunks alive until the garbage collector runs."""
    import gc
    import weakref

    release = asyncio.Event()
    release.set()
    gc.disable()
    try:
        stream = await _agent(release).stream("go")
        await stream.wait()
        assert stream.status == "finished", stream.error
        for _ in range(3):  # the task finishes its step after waking the waiters
            await asyncio.sleep(0)
        gone = weakref.ref(stream)
        del stream
        assert gone() is None
    finally:
        gc.enable()
