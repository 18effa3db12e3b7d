"""A scripted HTTP/1.1 server on 127.0.0.1 for provider tests.

It is a real socket server (``asyncio.start_server``), so the providers run
their whole httpx stack. Each request pops the next scripted ``Reply`` and is
recorded (method, path, headers, JSON body) for assertions. Bodies are sent
with chunked transfer encoding, one chunk per piece, which lets a reply stop
in the middle of a stream (``cut=True``: the connection closes without the
terminating chunk, as when a proxy or the provider drops it).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def sse_events(name: str) -> list[bytes]:
    """The events of a fixture transcript, each with its terminating blank line."""
    text = (FIXTURES / name).read_text()
    events = [e.strip("\n") for e in text.split("\n\n") if e.strip()]
    return [(e + "\n\n").encode() for e in events]


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    #: close the connection after ``chunks`` without ending the body
    cut: bool = False
    #: wait for this event after sending ``chunks`` (and before ending the body)
    hold: asyncio.Event | None = None

    @classmethod
    def sse(
        cls,
        fixture: str,
        *,
        cut_after: int | None = None,
        split: int | None = None,
        hold_after: int | None = None,
        hold: asyncio.Event | None = None,
    ) -> Reply:
        """Replay a fixture transcript: whole events, or ``split``-byte pieces across event boundaries."""
        events = sse_events(fixture)
        cut = cut_after is not None
        if cut_after is not None:
            events = events[:cut_after]
        if hold_after is not None:
            events = events[:hold_after]
        chunks = events
        if split:
            blob = b"".join(events)
            chunks = [blob[i : i + split] for i in range(0, len(blob), split)]
        return cls(
            200,
            {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"},
            chunks,
            cut=cut,
            hold=hold,
        )

    @classmethod
    def json(cls, status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
        head = {"content-type": "application/json", **(headers or {})}
        return cls(status, head, [json.dumps(body).encode()])


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class LoopbackServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.disconnected = asyncio.Event()
        self._server: asyncio.Server | None = None

    async def start(self) -> LoopbackServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await reader.readline()
            if not request_line:
                return
            method, path, _ = request_line.decode().split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                line = await reader.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Received(method, path, headers, body))
            reply = (
                self.replies.popleft()
                if self.replies
                else Reply.json(500, {"error": {"message": "the test server has no scripted reply left"}})
            )
            reason = HTTPStatus(reply.status).phrase
            head = [f"HTTP/1.1 {reply.status} {reason}", "transfer-encoding: chunked", "connection: close"]
            head += [f"{k}: {v}" for k, v in reply.headers.items()]
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            for chunk in reply.chunks:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
            if reply.hold is not None:
                # The client closing the response shows up as EOF on our side.
                hold = asyncio.ensure_future(reply.hold.wait())
                eof = asyncio.ensure_future(reader.read(1))
                done, _ = await asyncio.wait({hold, eof}, return_when=asyncio.FIRST_COMPLETED)
                for task in (hold, eof):
                    task.cancel()
                if eof in done:
                    self.disconnected.set()
                    return
            if not reply.cut:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnected.set()
        finally:
            writer.close()
