"""``BodySizeLimitMiddleware.read``: a body already in is taken without starting the read deadline;
one that must be waited for is waited for under it (408 when late), and a cancellation while
waiting reaches the server's ``receive`` as an ``await`` would have passed it on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from warden_server import middleware
from warden_server.middleware import BodySizeLimitMiddleware

LIMIT = 100


def _reader(timeout: float = 5.0) -> BodySizeLimitMiddleware:
    return BodySizeLimitMiddleware(app=None, max_body_bytes=LIMIT, body_timeout=timeout)  # type: ignore[arg-type]


def _scope() -> dict[str, Any]:
    return {"type": "http", "method": "POST", "headers": []}


class Sent:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    @property
    def status(self) -> int | None:
        return self.messages[0]["status"] if self.messages else None


async def test_a_body_already_in_is_read_without_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_deadline(*_a: Any) -> Any:
        raise AssertionError("the deadline was started for a body that was already in")

    monkeypatch.setattr(middleware.asyncio, "timeout", no_deadline)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b'{"a":1}', "more_body": False}

    sent = Sent()
    assert await _reader().read(_scope(), receive, sent) == b'{"a":1}'
    assert sent.messages == []


async def test_a_body_in_parts_and_a_body_waited_for_are_read_whole() -> None:
    arrived = asyncio.Event()
    parts = [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.request", "body": b"cd"}]

    async def receive() -> dict[str, Any]:
        await arrived.wait()  # the first message is not there yet: read() waits for it
        return parts.pop(0)

    asyncio.get_running_loop().call_later(0.05, arrived.set)
    sent = Sent()
    assert await _reader().read(_scope(), receive, sent) == b"abcd"
    assert sent.messages == []


async def test_a_body_already_in_but_too_large_is_413() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"x" * (LIMIT + 1), "more_body": False}

    sent = Sent()
    assert await _reader().read(_scope(), receive, sent) is None
    assert sent.status == 413


async def test_a_disconnect_at_once_reads_nothing() -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    sent = Sent()
    assert await _reader().read(_scope(), receive, sent) is None
    assert sent.messages == []


def _never(waiting: asyncio.Event, cancelled: asyncio.Event) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A ``receive`` whose message never comes: sets ``waiting`` when called, ``cancelled`` when cancelled."""

    async def receive() -> dict[str, Any]:
        waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("not reached")

    return receive


async def test_a_first_message_that_does_not_come_is_408_and_its_wait_is_cancelled() -> None:
    cancelled = asyncio.Event()
    receive = _never(asyncio.Event(), cancelled)

    sent = Sent()
    assert await _reader(timeout=0.05).read(_scope(), receive, sent) is None
    assert sent.status == 408
    assert cancelled.is_set()


async def test_cancelling_the_reader_while_it_waits_cancels_the_wait() -> None:
    waiting, cancelled = asyncio.Event(), asyncio.Event()
    receive = _never(waiting, cancelled)

    task = asyncio.create_task(_reader().read(_scope(), receive, Sent()))
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


async def test_a_receive_returning_another_awaitable_is_awaited() -> None:
    loop = asyncio.get_running_loop()

    def receive() -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = loop.create_future()
        loop.call_soon(fut.set_result, {"type": "http.request", "body": b"ok", "more_body": False})
        return fut

    assert await _reader().read(_scope(), receive, Sent()) == b"ok"  # type: ignore[arg-type]


async def test_an_error_raised_while_waiting_comes_out_of_read() -> None:
    async def receive() -> dict[str, Any]:
        await asyncio.sleep(0)
        raise OSError("gone")

    with pytest.raises(OSError, match="gone"):
        await _reader().read(_scope(), receive, Sent())
