"""What the async and the blocking clients share: HTTP helpers and the stream state.

The wire format itself (routes, headers, request bodies, decoding) is ``agent_core.wire``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any, get_args

import httpx

from agent_core import fold, wire
from agent_core.chunks import Chunk
from agent_core.models import Usage
from agent_core.stream import GenerateResult
from agent_core.views import SuspendedRun, SuspendedRunList
from warden_client.errors import ProtocolError, error_from_response
from warden_types.events import EventType, StoreEvent

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
#: ``GET /api/events``: live updates of the pending set (server-sent events).
EVENTS = f"{wire.API}/events"
_EVENT_TYPES = frozenset(get_args(EventType))


async def asleep(seconds: float) -> None:
    """``asyncio.sleep`` under the name the blocking client's ``sleep`` is generated from."""
    await asyncio.sleep(seconds)


def sleep(seconds: float) -> None:
    time.sleep(seconds)


def store_event(kind: str, data: str) -> StoreEvent | None:
    """One ``GET /api/events`` frame -> the store's own ``StoreEvent``; None for a type this client does not know."""
    if kind not in _EVENT_TYPES:
        return None  # forward compatible: newer servers may send more
    try:
        body = json.loads(data) if data else {}
    except ValueError as exc:
        raise ProtocolError(f"server sent an event that is not JSON: {data[:100]!r}") from exc
    if not isinstance(body, dict):
        raise ProtocolError(f"server sent an event that is not an object: {data[:100]!r}")
    return StoreEvent(
        type=kind,  # type: ignore[arg-type]
        run_id=body.get("runId"),
        tool_call_id=body.get("toolCallId"),
        decision=body.get("decision"),
        agent_id=body.get("agentId"),
    )


def stream_timeout(t: httpx.Timeout) -> httpx.Timeout:
    """A stream may wait long between chunks (a slow model): no read timeout."""
    return httpx.Timeout(connect=t.connect, read=None, write=t.write, pool=t.pool)


def raise_for_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise error_from_response(response.status_code, response.content)


def json_of(response: httpx.Response) -> Any:
    raise_for_status(response)
    try:
        return response.json()
    except ValueError as exc:
        raise ProtocolError(f"server answered {response.status_code} with a body that is not JSON") from exc


def generate_result(data: dict[str, Any]) -> GenerateResult:
    return wire.decode_generate_result(data)


def suspended_run(data: Any) -> SuspendedRun:
    try:
        return wire.decode_suspended_run(data)
    except ValueError as exc:
        raise ProtocolError(f"suspended run answer does not match SuspendedRun: {exc}") from exc


def suspended_run_list(data: Any) -> SuspendedRunList:
    """The JSON of ``GET .../suspended-runs`` -> the runtime's own ``SuspendedRunList``."""
    try:
        return wire.decode_suspended_run_list(data)
    except ValueError as exc:
        raise ProtocolError(f"suspended-runs answer does not match SuspendedRunList: {exc}") from exc


class StreamState:
    """Chunks read so far and what they say about the run (``fold.StreamFold``)."""

    def __init__(self, run_id: str | None) -> None:
        self.run_id: str = run_id or ""
        self.chunks: list[Chunk] = []
        self.done = False
        self.fold = fold.StreamFold()

    def add(self, data: dict[str, Any]) -> None:
        chunk = wire.decode_chunk(data)
        if chunk is None:
            return  # a chunk type this client does not know: skip it (forward compatible)
        if not self.run_id:
            self.run_id = chunk.run_id
        self.fold.observe(chunk)
        self.chunks.append(chunk)

    def end(self) -> None:
        if not self.done:
            self.done = True
            self.fold.end(unterminated="failed")  # no finish, error or suspension: the stream was cut

    @staticmethod
    def text_of(chunks: Sequence[Chunk]) -> str:
        return "".join(c.payload.text for c in chunks if c.type == "text-delta")  # type: ignore[union-attr]


class StreamView:
    """The ``AgentStream`` attributes of a remote stream, read from its ``StreamState``.

    Shared by the async and the blocking stream classes, which differ only in how they read.
    """

    _state: StreamState

    @property
    def run_id(self) -> str:
        return self._state.run_id

    @property
    def status(self) -> str | None:
        """``None`` until the stream has ended, then "finished", "suspended" or "failed"."""
        return self._state.fold.status if self._state.done else None

    @property
    def finish_reason(self) -> str | None:
        return self._state.fold.finish_reason

    @property
    def suspend_payload(self) -> Any:
        return self._state.fold.suspend_payload

    @property
    def error(self) -> str | None:
        return self._state.fold.error

    @property
    def usage(self) -> Usage:
        return self._state.fold.usage

    @property
    def received(self) -> list[Chunk]:
        """Chunks received so far (without waiting for more)."""
        return list(self._state.chunks)
