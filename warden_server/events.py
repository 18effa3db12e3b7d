"""``GET /api/events``: live updates of the pending set as server-sent events.

Every event of the runtime's store subscription (``storage.subscribe``:
LISTEN/NOTIFY on PostgreSQL, polling on SQLite and in memory) becomes one SSE
event ``event: <type>`` + ``data: <JSON>``: ``subscribed`` first (list now),
then ``suspended``, ``decided``, ``ended``, ``changed`` with ``run_id`` (and
``tool_call_id`` / ``decision`` when known). A decision taken through any
server instance on one PostgreSQL database reaches the consoles of every
instance. A comment line every ``PING_SECONDS`` of silence keeps proxies from
closing the stream.

A graceful stop ends every open stream at once (``close_streams``, called by
``warden serve`` as soon as it begins stopping): uvicorn waits for open
connections before it exits, and a live feed would otherwise hold the stop for
the whole grace period. Clients reconnect (the SDK does, with ``Last-Event-ID``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from agent_core import wire
from storage.events import subscribe
from warden_server.sse import PING_SECONDS, dumps
from warden_types.events import StoreEvent

log = logging.getLogger("warden.server")

EVENTS = f"{wire.API}/events"


def frame(event: StoreEvent) -> bytes:
    """One SSE frame; ``data`` is the event in the wire's camelCase (``runId``, ``toolCallId``, ...)."""
    data = {k: v for k, v in wire.camel(event).items() if v is not None}
    return f"event: {event.type}\ndata: {dumps(data)}\n\n".encode("ascii")


def closing(app: Any) -> asyncio.Event:
    """The app's "stopping" signal: set once, every open event stream ends."""
    event = getattr(app.state, "events_closing", None)
    if event is None:
        event = app.state.events_closing = asyncio.Event()
    return event


def close_streams(app: Any) -> None:
    """End every open ``GET /api/events`` stream of ``app`` now (a graceful stop began)."""
    closing(app).set()


async def _frames(store: object, stop: asyncio.Event) -> AsyncIterator[bytes]:
    events = subscribe(store)
    pending: asyncio.Task[StoreEvent] | None = None
    stopping = asyncio.ensure_future(stop.wait())
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({pending, stopping}, timeout=PING_SECONDS, return_when=asyncio.FIRST_COMPLETED)
            if stopping in done:
                return
            if not done:
                yield b": ping\n\n"
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                return
            except Exception as exc:  # the store went away: say so in-band, then end the stream
                log.warning("event subscription ended: %s", exc)
                code = getattr(exc, "code", "INTERNAL_ERROR")
                yield f"event: error\ndata: {dumps({'code': code, 'message': str(exc)})}\n\n".encode("ascii")
                return
            pending = None
            yield frame(event)
    finally:
        stopping.cancel()
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]


async def stream_events(request: Request) -> Response:
    store = request.app.state.runtime.store
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(_frames(store, closing(request.app)), media_type=wire.SSE_MEDIA_TYPE, headers=headers)
