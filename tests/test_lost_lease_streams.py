"""A decision's stream whose process lost the run's lease reports what happened to the run, not "failed".

Issue 43: in a two-instance chaos, three approve streams ended ``failed`` (``AGENT_LEASE_LOST``) while
their runs did not fail and each tool ran at most once. Their process (the approving instance) had
stalled past the lease; recovery in the other instance took the runs over. Two streams lost the lease
before the tool started (recovery gave the decision back: the call waited again), one after the tool's
result was stored (recovery continued the run and finished it). Here two runtimes on one SQLite file are
the two instances; the first one stalls at a chosen write (its lease renewals lost too) while the second
one's ``recover()`` runs, then the write goes on and finds the lease gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import SqliteStore
from tests.helpers import IdIn

LEASE = 0.2


def _agent(log: list[str], *, second_call: bool = False, gate: asyncio.Event | None = None) -> Agent:
    async def act(inp: IdIn, ctx: Any) -> dict[str, Any]:
        log.append(f"{ctx.tool_call_id}:{inp.id}")
        return {"done": inp.id}

    async def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if gate is not None:
            await gate.wait()  # the process that took the run over, still at it
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="act", args={"id": "1"}, id="x")])
        tools_seen = sum(1 for m in messages if m.role == "tool")
        if second_call and tools_seen == 1:
            return ModelResponse(tool_calls=[ToolCall(name="act", args={"id": "2"}, id="y")])
        return ModelResponse(text="done")

    tool = create_tool(id="act", input_schema=IdIn, execute=act, require_approval=True)
    return Agent(id="a", model=FunctionModel(model), tools={"act": tool})


class Instances:
    """Two runtimes on one SQLite file; ``stall(name)`` makes the first one's next ``store.name`` call wait
    past its lease while the second one recovers, then go on (and find the lease taken or expired)."""

    def __init__(
        self, path: Path, *, second_call: bool = False, recover: bool = True, while_held: bool = False
    ) -> None:
        self.log: list[str] = []
        self.first_agent = _agent(self.log, second_call=second_call)
        self.first = Runtime(agents={"a": self.first_agent}, storage=SqliteStore(path), lease_seconds=LEASE)
        #: ``while_held``: the second one's recovery holds the run (its model waits) while the first one writes
        self.gate = asyncio.Event() if while_held else None
        second = _agent(self.log, second_call=second_call, gate=self.gate)
        self.second = Runtime(agents={"a": second}, storage=SqliteStore(path), lease_seconds=LEASE)
        self.recover = recover
        self.recovered: list[int] = []
        self.recovering: asyncio.Future[int] | None = None

    def stall(self, name: str) -> None:
        store = self.first.store
        real: Callable[..., Awaitable[Any]] = getattr(store, name)

        async def renew_lost(*args: Any, **kwargs: Any) -> bool:
            return False  # the stalled process's renewals do not get through either

        async def stalled(*args: Any, **kwargs: Any) -> Any:
            if name == "save_suspended" and kwargs.get("owner") is None:
                return await real(*args, **kwargs)  # a new run's save: not the continuation's
            setattr(store, name, real)
            await asyncio.sleep(LEASE * 1.5)
            if self.gate is not None:  # the other process takes the run and is still continuing it
                run_id = args[0] if args else kwargs["run_id"]
                self.recovering = asyncio.ensure_future(self.second.recover())
                while (await store.get_run(run_id)).lease_owner in (None, self.owner_of(run_id)):
                    await asyncio.sleep(0.005)
                out = await real(*args, **kwargs)
                self.gate.set()
                return out
            if self.recover:
                self.recovered.append(await self.second.recover())
            return await real(*args, **kwargs)

        setattr(store, name, stalled)
        store.renew_lease = renew_lost  # type: ignore[method-assign]
        owners: dict[str, str | None] = {}
        real_claim = store.claim

        async def claim(*args: Any, **kwargs: Any) -> Any:
            owners[args[0]] = kwargs["owner"]
            return await real_claim(*args, **kwargs)

        store.claim = claim  # type: ignore[method-assign]
        self.owner_of = owners.get

    async def __aenter__(self) -> Instances:
        await self.first.__aenter__()
        await self.second.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.second.__aexit__(*exc)
        await self.first.__aexit__(*exc)

    async def approve(self, call: str = "x") -> Any:
        out = await self.first_agent.generate("go")
        assert out.status == "suspended"
        stream = await self.first_agent.approve_tool_call(run_id=out.run_id, tool_call_id=call)
        chunks = [c async for c in stream.full_stream]
        await stream.wait()
        return out.run_id, stream, chunks


async def test_lost_before_the_tool_started_the_stream_says_the_call_waits_again(tmp_path):
    """Recovery gave the decision back (its tool never started): the call is pending again, the stream
    ends ``suspended`` on it, and the tool runs once, when it is approved again."""
    async with Instances(tmp_path / "w.db") as inst:
        inst.stall("mark_started")
        run_id, stream, chunks = await inst.approve()
        assert stream.status == "suspended", stream.error
        assert chunks[-1].type == "tool-call-approval" and chunks[-1].payload.tool_call_id == "x"
        assert inst.log == []
        audit = [a.decision for a in await inst.second.store.audit_log(run_id)]
        assert audit == ["approved", "returned-to-pending"]
        again = await inst.second.get_agent("a").approve_tool_call(run_id=run_id, tool_call_id="x")
        await again.wait()
        assert again.status == "finished" and inst.log == ["x:1"]


async def test_lost_after_the_result_was_stored_the_stream_says_the_run_finished(tmp_path):
    """Recovery continued the run whose tool result was stored and finished it: the stream says so."""
    async with Instances(tmp_path / "w.db") as inst:
        inst.stall("finish_run")
        run_id, stream, chunks = await inst.approve()
        assert inst.recovered == [1]
        assert stream.status == "finished", stream.error
        assert [c.type for c in chunks].count("tool-result") == 1 and chunks[-1].type == "finish"
        assert inst.log == ["x:1"]
        assert await inst.first.store.get_run(run_id) is None


async def test_lost_while_another_process_finishes_the_run_the_stream_waits_and_says_finished(tmp_path):
    """The chaos case: the first process's ``finish_run`` finds the run held by the process that took it over
    (recovery, still calling the model); the stream follows the run until it is gone, then says finished."""
    async with Instances(tmp_path / "w.db", while_held=True) as inst:
        inst.stall("finish_run")
        run_id, stream, _chunks = await inst.approve()
        assert inst.recovering is not None and await inst.recovering == 1
        assert stream.status == "finished", stream.error
        assert inst.log == ["x:1"]
        assert await inst.first.store.get_run(run_id) is None


async def test_lost_while_the_tool_ran_the_stream_says_the_call_was_interrupted(tmp_path):
    """The lease went while the tool ran (its result not stored): the call reads as interrupted and waits
    for an operator; the stream ends ``suspended`` on it, never ``failed``."""
    async with Instances(tmp_path / "w.db") as inst:
        inst.stall("checkpoint")
        run_id, stream, chunks = await inst.approve()
        assert stream.status == "suspended", stream.error
        assert chunks[-1].type == "tool-call-approval" and chunks[-1].payload.tool_call_id == "x"
        listed = await inst.second.store.get_suspended(run_id)
        assert listed is not None and [c.kind for c in listed.calls] == ["interrupted"]
        assert inst.log == ["x:1"]


async def test_lost_at_the_next_suspension_the_stream_announces_the_new_call(tmp_path):
    """The run went on to a second gated call and was saved by the process that took it over."""
    async with Instances(tmp_path / "w.db", second_call=True) as inst:
        inst.stall("save_suspended")
        _run_id, stream, chunks = await inst.approve()
        assert inst.recovered == [1]
        assert stream.status == "suspended", stream.error
        assert chunks[-1].type == "tool-call-approval" and chunks[-1].payload.tool_call_id == "y"
        assert inst.log == ["x:1"]


async def test_lost_with_nobody_taking_the_run_the_stream_takes_it_back_and_finishes(tmp_path):
    """The lease ran out, but no other process took the run (its result stored, nothing waits): the stream's
    process takes the lease again and continues the run, as recovery would."""
    async with Instances(tmp_path / "w.db", recover=False) as inst:
        inst.stall("finish_run")
        run_id, stream, _chunks = await inst.approve()
        assert stream.status == "finished", stream.error
        assert inst.log == ["x:1"]
        assert await inst.first.store.get_run(run_id) is None
