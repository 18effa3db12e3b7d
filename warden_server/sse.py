"""Server-sent events in the framing ``@mastra/client-js`` parses.

Each chunk is one event ``data: <chunk JSON>`` followed by a blank line
(``\\n\\n``: the client splits on exactly that), and the stream ends with
``data: [DONE]``. The JSON is ASCII-only, so no line separator of any kind can
appear inside an event.

The agent's stream is drained by a background task, not by the response: a
decision accepted by the server runs to its end even when the HTTP client
goes away (page refresh, dropped connection); the application's lifespan
waits for those tasks before closing the runtime.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from starlette.responses import Response, StreamingResponse

from agent_core import wire
from agent_core.errors import WardenError
from warden_server.errors import client_message

log = logging.getLogger("warden.server")

RUN_ID_HEADER = wire.RUN_ID_HEADER
_DONE = object()
_DONE_FRAME = f"data: {wire.SSE_DONE}\n\n".encode("ascii")
PING_SECONDS = 15.0


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)


def dumps(value: Any) -> str:
    # One encoder for all chunks: json.dumps with non-default options builds a new one per call.
    return _ENCODER.encode(value)


class StreamPump:
    """Reads an ``AgentStream``'s ``full_stream`` to the end in its own task."""

    def __init__(self, stream: Any, pumps: set[StreamPump], secrets: Sequence[str] = ()) -> None:
        self.stream = stream
        self.secrets = secrets
        self.run_id: str = getattr(stream, "run_id", "") or ""
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.task = asyncio.create_task(self._run(), name=f"warden-stream-{self.run_id}")
        pumps.add(self)
        self.task.add_done_callback(lambda _t: pumps.discard(self))

    async def _run(self) -> None:
        try:
            async for chunk in self.stream.full_stream:
                self.queue.put_nowait(wire.encode_chunk(chunk))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the runtime failed mid-stream: tell the client, in-band
            log.exception("stream of run %s failed", self.run_id)
            # the client learns the code and a message without server internals (see errors.client_message)
            if isinstance(exc, WardenError):
                code, message = exc.code, client_message(exc, self.secrets)
            else:
                code, message = wire.INTERNAL_ERROR, "internal server error"
            self.queue.put_nowait(wire.encode_error_chunk(self.run_id, message, code))
        finally:
            self.queue.put_nowait(_DONE)

    async def frames(self) -> AsyncIterator[bytes]:
        """SSE bytes: every chunk already produced goes out in one write (fewer syscalls and
        wake-ups under load); a comment line every ``PING_SECONDS`` of silence keeps
        proxies from closing an idle stream (client-js and httpx-sse ignore it)."""
        while True:
            try:
                item = self.queue.get_nowait()  # already there: no wait_for (a task and a timer)
            except asyncio.QueueEmpty:
                try:
                    item = await asyncio.wait_for(self.queue.get(), PING_SECONDS)
                except TimeoutError:
                    yield b": ping\n\n"
                    continue
            parts: list[bytes] = []
            while True:
                if item is _DONE:
                    parts.append(_DONE_FRAME)
                    yield b"".join(parts)
                    return
                parts.append(b"data: " + dumps(item).encode("ascii") + b"\n\n")
                try:
                    item = self.queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
            yield b"".join(parts)

    async def wait(self) -> None:
        """Wait for the run's stream to end, without cancelling it if this waiter is cancelled."""
        await asyncio.shield(self.task)


def sse_response(pump: StreamPump) -> Response:
    headers = {RUN_ID_HEADER: pump.run_id, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(pump.frames(), media_type=wire.SSE_MEDIA_TYPE, headers=headers)
