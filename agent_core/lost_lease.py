"""What a decision's stream reports once its process lost the run's lease: the run's outcome as the
store tells it, never a failure that did not happen.

A process that stalls past ``lease_seconds`` (a blocked event loop, a lock wait) while it applies a
decision loses the run to another process: recovery gives a decision whose tool never started back to
the operators, or continues a run whose results are stored. Its stream used to end with
``AGENT_LEASE_LOST`` ("failed") although the run did not fail (issue 43: three such streams in a
two-instance chaos). Now it follows the run in the store until it can say what happened:

* the run is gone: it finished (in the process that took it over) -> ``finish``;
* the run failed -> ``error`` with the run's own error;
* the run waits for an operator (a decision given back, an interrupted call, a new approval) -> the
  waiting calls' ``tool-call-approval`` / ``tool-call-suspended`` chunks ("suspended");
* the run is free, nobody continues it and no call of it is left (all have results) -> this process takes
  its lease again and continues it in the same stream, as recovery would;
* another process still holds it after ``FOLLOW_LEASES`` leases -> ``AGENT_LEASE_LOST``, as before: the
  one case where the stream cannot know, and says so.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from agent_core.chunks import Chunk, make_chunk
from agent_core.errors import LeaseLost
from agent_core.models import Usage
from agent_core.quorum import approval_chunk, suspended_chunk
from storage.base import Store
from storage.records import PendingCallRow, lease_live

#: how long a stream follows a run another process holds, in leases of this runtime (at least 30 s).
FOLLOW_LEASES = 10
#: the code of the error chunk of a run that failed in another process (its message is the run's error).
RUN_FAILED = "AGENT_RUN_FAILED"

#: continue the run here (its lease taken again): the chunks of that advance, or None when it could not be taken.
TakeOver = Callable[[], Awaitable[AsyncIterator[Chunk] | None]]


def announced(run_id: str, call: PendingCallRow) -> Chunk:
    """The chunk that says ``call`` waits (for approval, or for resume data), as the listing reads it."""
    return suspended_chunk(run_id, call) if call.kind == "suspend" else approval_chunk(run_id, call, None)


async def follow(
    store: Store, run_id: str, *, lease_seconds: float, message: str, take_over: TakeOver
) -> AsyncIterator[Chunk]:
    """The chunks that end a stream whose process lost run ``run_id``'s lease (``message``: what it
    says if the run's outcome cannot be known in time)."""
    deadline = time.monotonic() + max(30.0, FOLLOW_LEASES * lease_seconds)
    delay = 0.01
    while True:
        run = await store.get_run(run_id)
        if run is None:  # finished: a run is deleted only when it ends
            yield make_chunk("finish", run_id, finish_reason="stop", usage=Usage(), object=None)
            return
        if run.status == "failed":
            yield make_chunk("error", run_id, error=run.error or message, code=RUN_FAILED)
            return
        listed = await store.get_suspended(run_id)
        if listed is not None and listed.calls:
            for call in listed.calls:
                yield announced(run_id, call)
            return
        if not lease_live(run, time.time()) and not await store.get_calls(run_id):
            # an orphan (its calls all have results, nobody on it): recovery's ``continue_orphan``, here
            taken = await take_over()
            if taken is not None:
                async for chunk in taken:
                    yield chunk
                return
        if time.monotonic() > deadline:
            yield make_chunk("error", run_id, error=message, code=LeaseLost.code)
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.25)
