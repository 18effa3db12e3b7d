"""Notifications when a call starts waiting: ``Runtime(on_pending=...)`` and the store watcher.

A ``PendingNotice`` says which call waits (run, call, tool, agent path, an
arguments summary, fingerprint, ``expires_at`` when known). Listeners are
called in the background: a slow or raising listener never blocks or fails
the run (errors are logged). ``watch_pending`` does the same from a store
subscription, so a server or console learns of calls suspended by any
process sharing the store.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from storage.events import subscribe
from storage.records import CallKind, PendingCallRow, RunRow

log = logging.getLogger("warden.notify")

#: the longest arguments summary sent (characters of compact JSON).
SUMMARY_CHARS = 500


class PendingNotice(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    event: Literal["tool-call-pending"] = "tool-call-pending"
    run_id: str
    tool_call_id: str
    tool_name: str
    agent_id: str
    agent_path: list[str]
    kind: CallKind
    args_summary: str
    fingerprint: str
    pending_since: datetime
    expires_at: datetime | None = None

    @classmethod
    def from_rows(cls, run: RunRow, call: PendingCallRow) -> PendingNotice:
        text = json.dumps(call.args, ensure_ascii=False, separators=(",", ":"), default=str)
        if len(text) > SUMMARY_CHARS:
            text = text[: SUMMARY_CHARS - 1] + "…"
        expires = getattr(call, "expires_at", None)  # deadlines (operator branch) may add it
        return cls(
            run_id=run.run_id,
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            agent_id=run.agent_id,
            agent_path=list(call.agent_path),
            kind=call.kind,
            args_summary=text,
            fingerprint=call.fingerprint,
            pending_since=datetime.fromtimestamp(call.created_at or run.suspended_at, UTC),
            expires_at=datetime.fromtimestamp(expires, UTC) if isinstance(expires, int | float) else None,
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


PendingCallback = Callable[[PendingNotice], Awaitable[None] | None]

_background: set[asyncio.Task[None]] = set()


def notify(listeners: list[PendingCallback], notices: list[PendingNotice]) -> None:
    """Call every listener with every notice, in the background (never raises, never waits)."""
    if not listeners or not notices:
        return

    async def deliver() -> None:
        for notice in notices:
            for listener in listeners:
                try:
                    out = listener(notice)
                    if inspect.isawaitable(out):
                        await out
                except Exception:
                    log.exception("on_pending listener %r failed for call %s", listener, notice.tool_call_id)

    task = asyncio.get_running_loop().create_task(deliver())
    _background.add(task)
    task.add_done_callback(_background.discard)


async def watch_pending(store: Any, callback: PendingCallback, *, interval: float = 0.5) -> None:
    """Call ``callback`` for every call that starts waiting in ``store`` (any process), until cancelled.

    Calls already waiting when the watch starts are not announced. Runs forever;
    a store error is logged and the watch starts again.
    """
    seen: set[tuple[str, str, str]] = set()
    while True:
        try:
            events = subscribe(store, interval=interval)
            async for event in events:
                if event.type == "subscribed":
                    rows, _ = await store.list_suspended(per_page=1000)
                    seen.update((r.run.run_id, c.tool_call_id, c.kind) for r in rows for c in r.calls)
                    continue
                if event.type != "suspended" or event.run_id is None:
                    continue
                row = await store.get_suspended(event.run_id)
                if row is None or row.error is not None:
                    continue
                fresh = [c for c in row.calls if (row.run.run_id, c.tool_call_id, c.kind) not in seen]
                for c in fresh:
                    seen.add((row.run.run_id, c.tool_call_id, c.kind))
                notify([callback], [PendingNotice.from_rows(row.run, c) for c in fresh])
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("watching the store for pending calls failed; watching again")
            await asyncio.sleep(max(interval, 1.0))
