"""Failure behaviour of both HTTP providers: retries, backoff, broken streams, timeouts, cancellation."""

from __future__ import annotations

import asyncio
import email.utils
import time

import httpx
import pytest

from agent_core.errors import ModelError
from agent_core.models import LanguageModel, ModelRequestInfo, TextDelta
from agent_core.providers import AnthropicModel, HTTPModelError, OpenAIModel, RetryPolicy
from agent_core.providers.http import parse_retry_after

from .common import ASK, RUN, collect
from .conftest import FAST, SleepLog
from .loopback import LoopbackServer, Reply

PROVIDERS = ["openai", "anthropic"]
# Gives up on a stream that sends nothing for this long; connect/write keep a generous bound.
STALL = httpx.Timeout(10.0, read=0.5)


@pytest.fixture(params=PROVIDERS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def model(kind: str, request: pytest.FixtureRequest) -> LanguageModel:
    return request.getfixturevalue(f"{kind}_model")


def error_reply(kind: str, status: int, headers: dict[str, str] | None = None) -> Reply:
    if kind == "openai":
        body = {
            "error": {
                "message": "Rate limit reached for gpt-4o-mini",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        }
    else:
        body = {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "Number of request tokens has exceeded your per-minute rate limit",
            },
        }
    return Reply.json(status, body, headers)


async def test_429_with_retry_after_then_success(
    kind: str, model: LanguageModel, server: LoopbackServer, sleeps: SleepLog
) -> None:
    server.script(error_reply(kind, 429, {"retry-after": "2"}), Reply.sse(f"{kind}/text.sse"))
    deltas, done = await collect(model, [ASK], ModelRequestInfo())
    assert done.response.text == "Hello there! How can I help?" == "".join(deltas)
    assert sleeps == [2.0]  # the server's Retry-After, not the computed backoff
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


async def test_500_then_success_backs_off(
    kind: str, model: LanguageModel, server: LoopbackServer, sleeps: SleepLog
) -> None:
    server.script(Reply.json(500, {"error": {"message": "internal"}}), Reply.sse(f"{kind}/text.sse"))
    _, done = await collect(model, [ASK], ModelRequestInfo())
    assert done.response.text == "Hello there! How can I help?"
    assert len(sleeps) == 1 and FAST.initial_delay * (1 - FAST.jitter) <= sleeps[0] <= FAST.initial_delay
    assert len(server.requests) == 2


async def test_retries_are_bounded(kind: str, model: LanguageModel, server: LoopbackServer, sleeps: SleepLog) -> None:
    server.script(*[Reply.json(503, {"error": {"message": "upstream busy"}}) for _ in range(5)])
    with pytest.raises(HTTPModelError) as info:
        await collect(model, [ASK], ModelRequestInfo())
    assert info.value.status_code == 503
    assert "HTTP 503" in str(info.value) and "upstream busy" in str(info.value)
    assert "gave up after 3 attempts" in str(info.value)
    assert len(server.requests) == 3 and len(sleeps) == 2
    assert sleeps[1] > FAST.initial_delay * (1 - FAST.jitter)  # exponential: second wait grows


async def test_should_retry_header_false_is_honoured(kind: str, model: LanguageModel, server: LoopbackServer) -> None:
    server.script(Reply.json(500, {"error": {"message": "do not retry"}}, {"x-should-retry": "false"}))
    with pytest.raises(ModelError, match="do not retry"):
        await collect(model, [ASK], ModelRequestInfo())
    assert len(server.requests) == 1


async def test_stream_cut_after_text_is_an_error_and_not_retried(
    kind: str, model: LanguageModel, server: LoopbackServer
) -> None:
    server.script(Reply.sse(f"{kind}/text.sse", cut_after=4), Reply.sse(f"{kind}/text.sse"))
    seen: list[str] = []
    with pytest.raises(ModelError, match="connection failed in the middle of the answer"):
        async for event in model.stream([ASK], ModelRequestInfo()):
            assert isinstance(event, TextDelta)
            seen.append(event.text)
    assert seen and "".join(seen) in "Hello there! How can I help?"
    assert len(server.requests) == 1  # a retry would have repeated text the caller already has


async def test_stream_cut_before_any_output_is_retried(kind: str, model: LanguageModel, server: LoopbackServer) -> None:
    # The tool-call stream yields nothing before its end (no text), so a cut there is safe to retry.
    fixture = f"{kind}/parallel_tool_calls.sse"
    server.script(Reply.sse(fixture, cut_after=6), Reply.sse(fixture))
    deltas, done = await collect(model, [ASK], RUN)
    assert deltas == [] and len(done.response.tool_calls) == 2
    assert len(server.requests) == 2


async def test_stream_ending_early_without_error_is_detected(
    kind: str, model: LanguageModel, server: LoopbackServer
) -> None:
    """A body that ends cleanly but without the terminal event is still an incomplete answer."""
    events = Reply.sse(f"{kind}/text.sse").chunks[:4]
    server.script(Reply(200, {"content-type": "text/event-stream"}, events))
    with pytest.raises(ModelError, match="ended before the answer was complete"):
        await collect(model, [ASK], ModelRequestInfo())
    assert len(server.requests) == 1


async def test_connection_refused_is_retried_then_reported(kind: str, sleeps: SleepLog) -> None:
    dead = await LoopbackServer().start()
    url = dead.url
    await dead.close()
    model: LanguageModel = (
        OpenAIModel("m", base_url=url, retry=FAST, sleep=sleeps)
        if kind == "openai"
        else AnthropicModel("m", base_url=url, api_key="k", retry=FAST, sleep=sleeps)
    )
    try:
        with pytest.raises(ModelError, match="connection failed before the answer") as info:
            await collect(model, [ASK], ModelRequestInfo())
    finally:
        await model.aclose()
    assert "ConnectError" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert len(sleeps) == 2


async def test_read_timeout_before_output_is_retried(kind: str, server: LoopbackServer, sleeps: SleepLog) -> None:
    stall = asyncio.Event()
    server.script(Reply.sse(f"{kind}/text.sse", hold_after=0, hold=stall), Reply.sse(f"{kind}/text.sse"))
    model = _model(kind, server, sleeps, timeout=STALL)
    try:
        _, done = await collect(model, [ASK], ModelRequestInfo())
    finally:
        stall.set()
        await model.aclose()
    assert done.response.text == "Hello there! How can I help?"
    assert len(server.requests) == 2 and len(sleeps) == 1


async def test_read_timeout_after_output_is_an_error(kind: str, server: LoopbackServer, sleeps: SleepLog) -> None:
    stall = asyncio.Event()
    server.script(Reply.sse(f"{kind}/text.sse", hold_after=4, hold=stall))
    model = _model(kind, server, sleeps, timeout=STALL)
    try:
        with pytest.raises(ModelError, match=r"timed out .*after the answer had started streaming"):
            await collect(model, [ASK], ModelRequestInfo())
    finally:
        stall.set()
        await model.aclose()
    assert len(server.requests) == 1 and sleeps == []


async def test_closing_the_stream_closes_the_connection(
    kind: str, model: LanguageModel, server: LoopbackServer
) -> None:
    never = asyncio.Event()
    server.script(Reply.sse(f"{kind}/text.sse", hold_after=4, hold=never))
    stream = model.stream([ASK], ModelRequestInfo())
    first = await anext(stream)
    assert isinstance(first, TextDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    await asyncio.wait_for(server.disconnected.wait(), 10)  # a hang guard, not a timing assertion


async def test_cancelling_the_consumer_closes_the_connection(
    kind: str, model: LanguageModel, server: LoopbackServer
) -> None:
    never = asyncio.Event()
    server.script(Reply.sse(f"{kind}/text.sse", hold_after=4, hold=never))
    got_text = asyncio.Event()

    async def consume() -> None:
        stream = model.stream([ASK], ModelRequestInfo())
        try:
            async for _ in stream:
                got_text.set()
        finally:
            await stream.aclose()  # type: ignore[attr-defined]

    task = asyncio.create_task(consume())
    await got_text.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(server.disconnected.wait(), 10)


def _model(kind: str, server: LoopbackServer, sleeps: SleepLog, *, timeout: httpx.Timeout) -> LanguageModel:
    if kind == "openai":
        return OpenAIModel("m", base_url=server.url, retry=FAST, timeout=timeout, sleep=sleeps)
    return AnthropicModel("m", base_url=server.url, api_key="k", retry=FAST, timeout=timeout, sleep=sleeps)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    future = email.utils.formatdate(time.time() + 3600, usegmt=True)
    assert 3000 < (parse_retry_after({"retry-after": future}) or 0) <= 3600


def test_backoff_is_exponential_capped_and_jittered() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=5.0, multiplier=2.0, jitter=0.25, max_retry_after=30)
    for attempt, base in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (9, 5.0)]:
        for _ in range(50):
            assert base * 0.75 <= policy.delay(attempt) <= base
    assert policy.delay(0, retry_after=12) == 12
    assert policy.delay(0, retry_after=120) <= 1.0  # an unreasonable Retry-After falls back to backoff
