"""Pure ASGI middleware: bearer-token auth, and a request body size limit and read deadline.

Both answer with the typed JSON error form before the route runs, so a
refused request never reaches the runtime.
"""

from __future__ import annotations

import asyncio
import json
import types
from collections.abc import Generator, Iterable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_core import wire
from agent_core.wire import REQUEST_TIMEOUT, REQUEST_TOO_LARGE, STATUS_BY_CODE, UNAUTHORIZED
from warden_server.tokens import TokenSet

_AUTHORIZATION = wire.AUTHORIZATION.lower().encode("ascii")  # ASGI header names are lower-case bytes
_WWW_AUTHENTICATE = wire.WWW_AUTHENTICATE.lower().encode("ascii")
_CLOSE = [(b"connection", b"close")]  # the rest of an unread body cannot be skipped: drop the connection


async def _send_json(
    send: Send, status: int, code: str, message: str, extra_headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps(wire.error_body(code, message)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *extra_headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BearerAuthMiddleware:
    """Requires ``Authorization: Bearer <token>`` on every path except ``public_paths``.

    ``tokens``: the named tokens accepted (``warden_server.tokens``); ``token``: one
    admin token. ``public_prefixes``: subtrees that authenticate themselves.
    The comparison is constant-time (``hmac.compare_digest`` over
    SHA-256 digests). The token's ``Identity`` goes in ``scope["state"]["identity"]``.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str | None = None,
        public_paths: Iterable[str] = ("/health",),
        *,
        tokens: TokenSet | None = None,
        public_prefixes: Iterable[str] = (),
    ) -> None:
        if tokens is None:
            if not token:
                raise ValueError("BearerAuthMiddleware needs a non-empty token")
            tokens = TokenSet.single(token)
        self.app = app
        self.tokens = tokens
        self.public_paths = frozenset(public_paths)
        #: subtrees with their own authentication (the browser UI's sessions: ``warden_server.ui``).
        self.public_prefixes = tuple(public_prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or await self.admit(scope, send):
            await self.app(scope, receive, send)

    async def admit(self, scope: Scope, send: Send) -> bool:
        """True when the request may go on (a public path, or a known token: its ``Identity`` put in
        ``scope["state"]["identity"]``); else the 401 is sent here and False returned."""
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):  # as Starlette routes it: the path below the mount point
            path = path[len(root) :]
        if path in self.public_paths or any(path == p or path.startswith(p + "/") for p in self.public_prefixes):
            return True
        supplied = b""
        for name, value in scope.get("headers", ()):
            if name == _AUTHORIZATION:
                scheme, _, credentials = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    supplied = credentials.strip()
                break
        # compare_digest runs in time independent of where the bytes differ.
        identity = self.tokens.lookup(supplied) if supplied else None
        if identity is None:
            msg = "missing bearer token" if not supplied else "invalid bearer token"
            await _send_json(
                send, STATUS_BY_CODE[UNAUTHORIZED], UNAUTHORIZED, msg, [(_WWW_AUTHENTICATE, b'Bearer realm="warden"')]
            )
            return False
        scope.setdefault("state", {})["identity"] = identity
        return True


class BodySizeLimitMiddleware:
    """Answers 413 when a request body exceeds ``max_body_bytes``, 408 when it is not
    all there within ``body_timeout`` seconds.

    A declared ``Content-Length`` over the limit is refused before reading; a
    chunked body is read up to the limit, then refused. The whole body must
    arrive within ``body_timeout`` of the route starting to read it (a client
    that declares 100 bytes and sends 10, or trickles them, is answered 408
    and disconnected instead of holding a worker). A body within both limits
    is replayed to the application unchanged.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int, body_timeout: float = 5.0) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body = await self.read(scope, receive, send)
        if body is not None:
            await self.app(scope, replaying(body, receive), send)

    async def read(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body within both limits; None when the answer (413, 408) was sent here or the
        client went away."""
        limit = self.max_body_bytes
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limit:
                    await _send_json(
                        send,
                        STATUS_BY_CODE[REQUEST_TOO_LARGE],
                        REQUEST_TOO_LARGE,
                        f"request body of {declared} bytes exceeds the limit of {limit} bytes",
                        _CLOSE,
                    )
                    return None
        # The usual body came with the headers: ``receive()`` has it without waiting, and the deadline
        # (``asyncio.timeout``: ~28k instructions, a third of the body's read) bounds no wait at all.
        ready, first = _start(receive())
        if ready and first["type"] == "http.request" and not first.get("more_body", False):
            body: bytes = first.get("body", b"")
            if len(body) <= limit:
                return body
        chunks: list[bytes] = []
        size = 0
        started = True
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    if started:  # the first message: taken above, or its wait resumed here
                        message = first if ready else await first
                        started = False
                    else:
                        message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        await _send_json(
                            send,
                            STATUS_BY_CODE[REQUEST_TOO_LARGE],
                            REQUEST_TOO_LARGE,
                            f"request body exceeds the limit of {limit} bytes",
                            _CLOSE,
                        )
                        return None
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await _send_json(
                send,
                STATUS_BY_CODE[REQUEST_TIMEOUT],
                REQUEST_TIMEOUT,
                f"the request body did not arrive within {self.body_timeout:g} s "
                f"({size} bytes received); send it whole, promptly",
                _CLOSE,
            )
            return None
        return b"".join(chunks)


def _start(awaitable: Any) -> tuple[bool, Any]:
    """``(True, result)`` when the coroutine ``awaitable`` finishes without waiting; else ``(False, rest)``,
    ``rest`` an awaitable of what it goes on to return (it has started: await ``rest``, never it)."""
    if type(awaitable) is not types.CoroutineType:
        return False, awaitable  # another kind of awaitable: awaited as it is
    try:
        waits_on = awaitable.send(None)
    except StopIteration as done:
        return True, done.value
    return False, _resume(awaitable, waits_on)


@types.coroutine
def _resume(coro: Any, waits_on: Any) -> Generator[Any, Any, Any]:
    """The rest of ``coro``, which yielded ``waits_on`` (what its task must wait for) and was not resumed
    since: what ``await coro`` would have done from there on (results sent in and exceptions thrown in,
    a cancellation among them, are passed on to ``coro``)."""
    value = waits_on
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                value = coro.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                value = coro.send(sent)
            except StopIteration as done:
                return done.value


def replaying(body: bytes, receive: Receive) -> Receive:
    """``receive`` that gives ``body`` whole first, then whatever ``receive`` gives (the disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
