"""Live updates from a store: "the pending set changed / a call was decided".

``subscribe(store)`` is the one entry point; its events are ``warden_types.events.StoreEvent``. A store with a native
``subscribe()`` (``PostgresStore``: LISTEN/NOTIFY) is used as it is; any other
store (``SqliteStore``, ``InMemoryStore``) is polled behind the same
interface: its first page of pending runs is compared every ``interval``
seconds and the differences are reported as events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from warden_types.events import StoreEvent


def subscribe(store: Any, *, interval: float = 0.25, window: int = 200) -> AsyncIterator[StoreEvent]:
    """Events of ``store`` until the consumer stops iterating (``aclose()`` or leaving ``async for``)."""
    native = getattr(store, "subscribe", None)
    if native is not None:
        return native()
    return _poll(store, interval, window)


async def _poll(store: Any, interval: float, window: int) -> AsyncIterator[StoreEvent]:
    async def state() -> dict[str, tuple[str, int, frozenset[str]]]:
        rows, _ = await store.list_suspended(per_page=window)
        return {r.run.run_id: (r.run.agent_id, r.run.version, frozenset(c.tool_call_id for c in r.calls)) for r in rows}

    before = await state()
    yield StoreEvent("subscribed")
    while True:
        await asyncio.sleep(interval)
        now = await state()
        if now == before:
            continue
        for run_id, (agent_id, version, calls) in now.items():
            old = before.get(run_id)
            if old is None or old[1] != version or calls - old[2]:
                yield StoreEvent("suspended", run_id=run_id, agent_id=agent_id)
            if old is not None:
                for cid in sorted(old[2] - calls):
                    yield StoreEvent("decided", run_id=run_id, tool_call_id=cid, agent_id=agent_id)
        for run_id, (agent_id, _, calls) in before.items():
            if run_id not in now:
                for cid in sorted(calls):
                    yield StoreEvent("decided", run_id=run_id, tool_call_id=cid, agent_id=agent_id)
                yield StoreEvent("changed", run_id=run_id, agent_id=agent_id)
        before = now
