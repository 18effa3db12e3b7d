"""Background upkeep of a store's runs: crash recovery and the deadline sweep.

Neither is an operator's decision: recovery continues what a dead process left under an
expired lease, the sweep expires approvals nobody took in time. Both go through the same
``Decisions`` (compare-and-set, audit, lease) as any decision. The console and the server
run them at start and periodically; ``warden runs recover`` / ``sweep`` run them once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import cast

from agent_core.decisions import Decisions
from agent_core.definition import HostedAgent
from agent_core.errors import WardenError
from agent_core.handover import RemoteAgent
from agent_core.verdicts import Approve, Expire
from storage.records import PendingCallRow

#: The actor of automatic re-executions (``idempotent=True`` tools) by ``recover()``.
RECOVERY_ACTOR = "warden-recover"


async def recover(decisions: Decisions, agents: Mapping[str, HostedAgent]) -> int:
    """Advance the runs left behind under an expired lease; how many were advanced.

    Durable returned-to-pending (audited), automatic re-execution of
    interrupted calls of ``idempotent=True`` tools, and the continuation of
    runs whose calls all have stored results (the model is called again).
    Runs of agents not in ``agents`` are left alone.
    """
    store = decisions.store
    advanced = 0
    for run in await store.list_expired(limit=1000):
        agent = agents.get(run.agent_id)
        if agent is None:
            continue
        await store.settle(run.run_id)
        listed = await store.get_suspended(run.run_id)
        if listed is not None:
            for call in listed.calls:
                if call.kind == "interrupted" and _idempotent(agent, call):
                    try:
                        stream = await decisions.decide(
                            agent, Approve(actor=RECOVERY_ACTOR), run_id=run.run_id, tool_call_id=call.tool_call_id
                        )
                    except WardenError:
                        continue
                    await stream.wait()
                    advanced += 1
            continue
        calls = await store.get_calls(run.run_id)
        expiry = next((c for c in calls if c.status == "expired" and c.started_at is None), None)
        if expiry is not None:  # an expiry recorded, never applied (its process died): apply it here
            adopted = await decisions.adopt(agent, run.run_id, expiry.tool_call_id)
            if adopted is not None:
                await adopted.wait()
                advanced += 1
            continue
        if calls:
            continue  # a decision waits to be applied by a live process
        if await decisions.continue_orphan(agent, run.run_id):
            advanced += 1
    return advanced


async def sweep(decisions: Decisions, agents: Mapping[str, HostedAgent]) -> int:
    """Expire the overdue approvals of these agents' runs and continue those runs; how many expired.

    Fail-closed: the tool never runs; the model is told ``EXPIRED_MESSAGE``;
    the stream carries a ``tool-call-expired`` chunk. A call decided meanwhile is left alone.
    Overdue calls of runs that ask for handover (an MCP proxy's) are expired too, whoever hosts them:
    the expiry is recorded here (compare-and-set, audited once) and applied by the host (``adopt``).
    """
    store = decisions.store
    expired = 0
    for call in await store.list_overdue(time.time(), limit=1000):
        run = await store.get_run(call.run_id)
        if run is None:
            continue
        agent = agents.get(run.agent_id)
        if agent is None:  # hosted elsewhere: recorded here (once), its host applies it (``adopt``)
            agent = cast(HostedAgent | None, RemoteAgent.of_run(run))
        if agent is None:
            continue
        try:
            stream = await decisions.decide(agent, Expire(), run_id=call.run_id, tool_call_id=call.tool_call_id)
        except WardenError:
            continue
        await stream.wait()
        expired += 1
    return expired


def _idempotent(agent: HostedAgent, call: PendingCallRow) -> bool:
    owner = agent.descendant(call.agent_path)
    tool = owner.tools.get(call.tool_name) if owner is not None else None
    return bool(getattr(tool, "idempotent", False))
