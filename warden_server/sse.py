"""Server-sent events in the framing ``@mastra/client-js`` parses.

Each chunk is one event ``data: <chunk JSON>`` followed by a blank line
(``\\n\\n``: the client splits on exactly that), and the stream ends with
``data: [DONE]``. The JSON is ASCII-only, so no line separator of any kind can
appear inside an event.

The agent's stream is drained by a background task, not by the response: a
decision accepted by the server runs to its end even when the HTTP client
goes away (page refresh, dropped connection); the application's lifespan
waits for those tasks before closing the runtime.

The response is plain ASGI (``SseResponse``), not Starlette's ``StreamingResponse``: that one
runs the body and a disconnect listener in an anyio task group per response, and sends an
empty closing message of its own; here the last frame closes the body, and one small task
watches for the disconnect once the answer has streamed for ``WATCH_AFTER_SECONDS`` (an
approval's answer is usually complete long before: no task at all; docs/performance.md, "Server").
Both that delay and the pings of an idle answer are timed by one ``_Clock`` per event loop that
ticks every ``TICK_SECONDS`` while answers are open, not by a timer per answer and per wait
(uvloop's ``call_later`` and its ``cancel``: ~6k instructions, 2-3 of them per approval).
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections import deque
from collections.abc import AsyncIterator, Sequence
from json.encoder import encode_basestring_ascii as _quote
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaSerializer
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agent_core import wire
from agent_core.chunks import PAYLOAD_TYPES, Chunk
from agent_core.errors import WardenError
from warden_server.errors import client_message

log = logging.getLogger("warden.server")

RUN_ID_HEADER = wire.RUN_ID_HEADER
_DONE = object()
_DONE_FRAME = f"data: {wire.SSE_DONE}\n\n".encode("ascii")
_PING_FRAME = b": ping\n\n"
PING_SECONDS = 15.0
#: how long an answer streams before a task starts watching for its client's disconnect.
WATCH_AFTER_SECONDS = 1.0
#: the clock's period: a watcher starts, a ping goes out, up to this much after its due time.
TICK_SECONDS = 0.25


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)


def dumps(value: Any) -> str:
    # One encoder for all chunks: json.dumps with non-default options builds a new one per call.
    return _ENCODER.encode(value)


_CHUNK_FIELDS = ("type", "run_id", "from_", "payload")
#: the payload types a ``Chunk`` declares, each with its own serializer once built (``_serializer``).
_PAYLOADS: dict[type[BaseModel], SchemaSerializer | None] = (
    dict.fromkeys(PAYLOAD_TYPES.values()) if tuple(Chunk.model_fields) == _CHUNK_FIELDS else {}
)


def _serializer(cls: type[BaseModel]) -> SchemaSerializer | None:
    """The payload class's own serializer (built on first use: payloads defer theirs)."""
    if cls not in _PAYLOADS:
        return None
    ser = _PAYLOADS[cls]
    if ser is None:
        if not cls.__pydantic_complete__:
            cls.model_rebuild()
        ser = _PAYLOADS[cls] = cls.__pydantic_serializer__
    return ser


def _chunk_json(chunk: Chunk) -> bytes | None:
    """A ``Chunk``'s JSON with the envelope written here and the payload by its own class's serializer:
    the same bytes as ``Chunk``'s serializer, without its pass over the payload union (half an event's
    cost: docs/performance.md, "Server"). None for what this does not cover (the general path then)."""
    payload = chunk.payload
    ser = _serializer(type(payload))
    if ser is None:
        return None
    try:
        head = f'{{"type":{_quote(chunk.type)},"runId":{_quote(chunk.run_id)},"from":{_quote(chunk.from_)},"payload":'
    except TypeError:  # a field that is not text: the model's own serializer says what it makes of it
        return None
    return head.encode("ascii") + ser.to_json(payload, by_alias=True, ensure_ascii=True) + b"}"


def encode_event(item: Any) -> bytes:
    """One ``data:`` event: a chunk in one pass of pydantic's JSON encoder (the same JSON as
    ``wire.encode_chunk`` then ``json``, ASCII only, DEL escaped as ``json`` does), or a dict."""
    data = _chunk_json(item) if type(item) is Chunk else None
    if data is None:
        dump = getattr(item, "model_dump_json", None)
        data = (dumps(item) if dump is None else dump(by_alias=True, ensure_ascii=True)).encode("ascii")
    if b"\x7f" in data:  # the one control character pydantic leaves raw
        data = data.replace(b"\x7f", b"\\u007f")
    return b"data: " + data + b"\n\n"


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class StreamPump:
    """Reads an ``AgentStream``'s ``full_stream`` to the end in its own task.

    The encoded chunks wait in a deque for the one response that reads ``frames()``; a future
    (not an ``asyncio.Queue`` and ``wait_for``, a task and a timer per wait) wakes it.
    """

    def __init__(self, stream: Any, pumps: set[StreamPump], secrets: Sequence[str] = ()) -> None:
        self.stream = stream
        self.secrets = secrets
        self.run_id: str = getattr(stream, "run_id", "") or ""
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None
        #: the loop time ``frames()`` began waiting (a ping is due ``PING_SECONDS`` after it).
        self._idle_since = 0.0
        #: the response's client went away: ``frames()`` stops (the run goes on).
        self._gone = False
        self.task = asyncio.create_task(self._run(), name=f"warden-stream-{self.run_id}")
        pumps.add(self)
        self.task.add_done_callback(lambda _t: pumps.discard(self))

    def _put(self, item: Any) -> None:
        self._items.append(item)
        waiter, self._waiter = self._waiter, None
        _wake(waiter)

    async def _run(self) -> None:
        try:
            async for chunk in self.stream.full_stream:
                self._put(chunk)  # encoded by the response that sends it (``encode_event``)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the runtime failed mid-stream: tell the client, in-band
            log.exception("stream of run %s failed", self.run_id)
            # the client learns the code and a message without server internals (see errors.client_message)
            if isinstance(exc, WardenError):
                code, message = exc.code, client_message(exc, self.secrets)
            else:
                code, message = wire.INTERNAL_ERROR, "internal server error"
            self._put(wire.encode_error_chunk(self.run_id, message, code))
        finally:
            self._put(_DONE)

    def hang_up(self) -> None:
        """The client is gone: ``frames()`` ends at its next step; the run itself is not touched."""
        self._gone = True
        waiter, self._waiter = self._waiter, None
        _wake(waiter)

    def _unencodable(self) -> dict[str, Any]:
        """The in-band error that replaces a chunk the encoder refused (and ends the answer)."""
        log.exception("a chunk of run %s could not be encoded", self.run_id)
        return wire.encode_error_chunk(self.run_id, "internal server error", wire.INTERNAL_ERROR)

    def chunks(self) -> list[dict[str, Any]]:
        """The encoded chunks produced so far, taken (for an answer sent whole, after ``wait()``)."""
        out: list[dict[str, Any]] = []
        for item in self._items:
            if item is _DONE:
                break
            try:
                out.append(item if isinstance(item, dict) else wire.encode_chunk(item))
            except Exception:
                out.append(self._unencodable())
                break
        self._items.clear()
        return out

    async def frames(self) -> AsyncIterator[tuple[bytes, bool]]:
        """``(SSE bytes, last)``: every chunk already produced goes out in one write (fewer syscalls
        and wake-ups under load), the last with ``data: [DONE]``; a comment line every
        ``PING_SECONDS`` of silence keeps proxies from closing an idle stream (client-js and
        httpx-sse ignore it: the reader's clock calls ``tick``, see ``SseResponse``). Ends early,
        without ``[DONE]``, once ``hang_up()`` was called."""
        loop = asyncio.get_running_loop()
        items = self._items
        while not self._gone:
            if not items:
                waiter = self._waiter = loop.create_future()
                self._idle_since = loop.time()
                await waiter
                if self._gone:
                    return
                if not items:
                    yield _PING_FRAME, False
                    continue
            parts: list[bytes] = []
            while items:
                item = items.popleft()
                if item is _DONE:
                    parts.append(_DONE_FRAME)
                    yield b"".join(parts), True
                    return
                try:
                    parts.append(encode_event(item))
                except Exception:  # as when the pump encoded: the client learns it in-band, the stream ends
                    parts += [encode_event(self._unencodable()), _DONE_FRAME]
                    yield b"".join(parts), True
                    return
            yield b"".join(parts), False

    def tick(self, now: float) -> None:
        """Wake ``frames()`` (to ping) once it has waited ``PING_SECONDS`` (``now``: the loop's time)."""
        if self._waiter is not None and now - self._idle_since >= PING_SECONDS:
            waiter, self._waiter = self._waiter, None
            _wake(waiter)

    async def wait(self) -> None:
        """Wait for the run's stream to end, without cancelling it if this waiter is cancelled."""
        await asyncio.shield(self.task)


class SseResponse(Response):
    """The pump's frames as ``text/event-stream``; the last frame ends the body (no extra empty message).

    A disconnect (seen by a watcher task reading ``receive``, started after ``WATCH_AFTER_SECONDS``) ends the
    response, not the run. While it streams, the loop's ``_Clock`` calls ``tick``: the watcher's start, and
    the pump's pings.
    """

    media_type = wire.SSE_MEDIA_TYPE

    def __init__(self, pump: StreamPump) -> None:
        self.pump = pump
        self.status_code = 200
        self.background = None
        # what ``init_headers`` makes of them, the constant part built once (_SSE_HEADERS)
        self.raw_headers = [(_RUN_ID_HEADER_RAW, pump.run_id.encode("latin-1")), *_SSE_HEADERS]

    _receive: Receive | None = None
    _watcher: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        loop = asyncio.get_running_loop()
        # A run that ends within WATCH_AFTER_SECONDS (an approval's usually does, in milliseconds) needs no
        # watcher task: frames sent to a client that left are dropped by the server. A longer one gets it.
        self._receive, self._since = receive, loop.time()
        clock = _clock(loop)
        clock.add(self)
        try:
            async for data, last in self.pump.frames():
                await send({"type": "http.response.body", "body": data, "more_body": not last})
                if last:
                    return
            await send({"type": "http.response.body", "body": b"", "more_body": False})  # hung up
        finally:
            clock.discard(self)
            if self._watcher is not None:
                self._watcher.cancel()

    def tick(self, loop: asyncio.AbstractEventLoop, now: float) -> None:
        """The clock's tick: the disconnect watcher once due, and the pump's ping."""
        if self._watcher is None and self._receive is not None and now - self._since >= WATCH_AFTER_SECONDS:
            self._watcher = loop.create_task(self._watch(self._receive))
        self.pump.tick(now)

    async def _watch(self, receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.pump.hang_up()
                return


_RUN_ID_HEADER_RAW = RUN_ID_HEADER.lower().encode("latin-1")
_SSE_HEADERS = [
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
    (b"content-type", f"{wire.SSE_MEDIA_TYPE}; charset=utf-8".encode("latin-1")),
]


class _Clock:
    """Ticks every ``TICK_SECONDS`` while answers are open on its loop, calling each one's ``tick``;
    idle (no timer at all) once none is."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = weakref.ref(loop)  # the clocks are keyed by their loop, weakly: no reference back
        self._open: dict[SseResponse, None] = {}  # in order: ticks visit the oldest answer first
        self._timer: asyncio.TimerHandle | None = None

    def add(self, response: SseResponse) -> None:
        self._open[response] = None
        if self._timer is None:
            loop = self._loop()
            if loop is not None:
                self._timer = loop.call_later(TICK_SECONDS, self._tick)

    def discard(self, response: SseResponse) -> None:
        self._open.pop(response, None)

    def _tick(self) -> None:
        self._timer = None
        loop = self._loop()
        if not self._open or loop is None:
            return
        now = loop.time()
        for response in list(self._open):
            try:
                response.tick(loop, now)
            except Exception:  # one answer's failure must not stop the others' clock
                log.exception("SSE answer tick failed")
        self._timer = loop.call_later(TICK_SECONDS, self._tick)


_CLOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Clock] = weakref.WeakKeyDictionary()
_last: _Clock | None = None


def _clock(loop: asyncio.AbstractEventLoop) -> _Clock:
    """This loop's clock (the last one found is kept at hand: one loop serves the server)."""
    global _last
    clock = _last
    if clock is not None and clock._loop() is loop:
        return clock
    clock = _CLOCKS.get(loop)
    if clock is None:
        clock = _CLOCKS[loop] = _Clock(loop)
    _last = clock
    return clock


def sse_response(pump: StreamPump) -> Response:
    return SseResponse(pump)
