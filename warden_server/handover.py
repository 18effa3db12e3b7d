"""Decisions on runs of agents this server does not host, whose host applies them (handover).

``warden mcp-proxy`` hosts the agent ``mcp:<upstream>``: the upstream connection and the MCP
client's request live in that process. Its runs carry ``request_context["warden_handover"]``
(``agent_core.handover.HANDOVER_KEY``). A server on the same store cannot apply a decision on
them, but it can *record* it (compare-and-set, audit, under a handover lease) exactly as
``warden runs approve`` does; the proxy adopts the lease and applies it. The decision routes
and the listings of ``/api/agents/{agentId}/...`` use ``HandoverAgent`` for such an agent id.

The answer to a recorded decision is one ``finish`` chunk with ``finishReason: "handover"``
(``generate`` routes: ``finishReason: "handover"``): the decision was accepted; the tool's
result goes to the MCP client, not to the HTTP caller. Runs of an unknown agent that do not ask
for handover still answer 404 (``AgentNotFound``), and nothing is recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agent_core.chunks import Chunk, make_chunk
from agent_core.errors import AgentNotFound
from agent_core.handover import RemoteAgent, asks_for_handover
from agent_core.stream import AgentStream, GenerateResult
from agent_core.verdicts import Approve
from agent_core.views import SuspendedRunList

#: ``finishReason`` of the answer to a decision recorded for the process that hosts the agent.
HANDOVER_FINISH = "handover"


def not_hosted(agent_id: str) -> AgentNotFound:
    return AgentNotFound(f"no agent {agent_id!r} in this runtime, and no pending run of it asks for handover")


class HandoverAgent:
    """Stands in for agent ``agent_id``, hosted elsewhere: decisions are recorded here, applied there.

    Every decision first checks that the run belongs to ``agent_id`` and asks for handover, so the
    path's agent id means what it says; otherwise ``AgentNotFound`` (404), nothing recorded.
    """

    def __init__(self, runtime: Any, agent_id: str, external: Any = None) -> None:
        self.runtime = runtime
        self.id = agent_id
        #: ``warden_server.external.ExternalCalls``: knows the tools of calls a remote proxy registered here
        self.external = external

    async def _check(self, run_id: str) -> None:
        run = await self.runtime.store.get_run(run_id)
        if run is None:
            return  # the runtime says why (finished, expired, decided, unknown): nothing is recorded
        if run.agent_id != self.id or not asks_for_handover(run.snapshot):
            raise not_hosted(self.id)

    async def approve_tool_call(self, *, run_id: str, actor: str | None = None, **kw: Any) -> AgentStream:
        await self._check(run_id)
        agent = self.external.agent_of_run(run_id) if self.external is not None else None
        if agent is not None:  # an external call of this process: edited arguments are validated here
            # recorded for the host (``remote``) with the agent's tools at hand: edits are checked first
            recorder = RemoteAgent(agent.id, agent.tools)
            verdict = Approve(args=kw.pop("args", None), fingerprint=kw.pop("fingerprint", None), actor=actor)
            return _accepted(await self.runtime.decide(recorder, verdict, run_id=run_id, **kw))
        return _accepted(await self.runtime.approve_tool_call(run_id=run_id, actor=actor, **kw))

    async def decline_tool_call(self, *, run_id: str, actor: str | None = None, **kw: Any) -> AgentStream:
        await self._check(run_id)
        return _accepted(await self.runtime.decline_tool_call(run_id=run_id, actor=actor, **kw))

    async def resume_stream(self, resume_data: Any, *, run_id: str, actor: str | None = None, **kw: Any) -> AgentStream:
        await self._check(run_id)
        return _accepted(await self.runtime.resume_stream(resume_data, run_id=run_id, actor=actor, **kw))

    async def approve_tool_call_generate(self, **kw: Any) -> GenerateResult:
        return await (await self.approve_tool_call(**kw)).result()

    async def decline_tool_call_generate(self, **kw: Any) -> GenerateResult:
        return await (await self.decline_tool_call(**kw)).result()

    async def resume_generate(self, resume_data: Any, **kw: Any) -> GenerateResult:
        return await (await self.resume_stream(resume_data, **kw)).result()

    async def list_suspended_runs(self, **kw: Any) -> SuspendedRunList:
        result: SuspendedRunList = await self.runtime.list_suspended_runs(agent_id=self.id, **kw)
        return result


async def check_listed(runtime: Any, agent_id: str) -> None:
    """A listing filtered on an agent id: fine for a hosted agent, or one with pending handover runs."""
    try:
        runtime.get_agent(agent_id)
        return
    except AgentNotFound:
        pass
    rows, _ = await runtime.store.list_suspended(agent_id=agent_id, per_page=5)
    for row in rows:  # listings carry no snapshot: read the run
        run = await runtime.store.get_run(row.run.run_id)
        if run is not None and asks_for_handover(run.snapshot):
            return
    raise not_hosted(agent_id)


def decider(runtime: Any, agent_id: str, external: Any = None) -> Any:
    """The hosted agent ``agent_id``, else a ``HandoverAgent`` for it (which checks each run)."""
    try:
        return runtime.get_agent(agent_id)
    except AgentNotFound:
        return HandoverAgent(runtime, agent_id, external)


def _accepted(stream: AgentStream) -> AgentStream:
    """The recorded decision's (empty) stream, ending with a ``finish`` chunk that says who applies it."""

    async def chunks() -> AsyncIterator[Chunk]:
        async for chunk in stream.full_stream:
            yield chunk
        yield make_chunk("finish", stream.run_id, finish_reason=HANDOVER_FINISH)

    return AgentStream(stream.run_id, chunks())


__all__ = ["HANDOVER_FINISH", "HandoverAgent", "asks_for_handover", "check_listed", "decider"]
