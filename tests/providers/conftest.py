from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agent_core.providers import AnthropicModel, OpenAIModel, RetryPolicy

from .loopback import LoopbackServer

# Tiny backoff so retry tests stay fast; sleeps are recorded, not timed.
FAST = RetryPolicy(max_retries=2, initial_delay=0.001, max_delay=0.01, jitter=0.5)


class SleepLog(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
async def server() -> AsyncIterator[LoopbackServer]:
    srv = await LoopbackServer().start()
    yield srv
    await srv.close()


@pytest.fixture
def sleeps() -> SleepLog:
    return SleepLog()


@pytest.fixture
async def openai_model(server: LoopbackServer, sleeps: SleepLog) -> AsyncIterator[OpenAIModel]:
    model = OpenAIModel(
        "gpt-4o-mini",
        base_url=f"{server.url}/v1",
        api_key="sk-test-123",
        retry=FAST,
        max_retries=FAST.max_retries,
        timeout=5.0,
        sleep=sleeps,
    )
    yield model
    await model.aclose()


@pytest.fixture
async def anthropic_model(server: LoopbackServer, sleeps: SleepLog) -> AsyncIterator[AnthropicModel]:
    model = AnthropicModel(
        "claude-sonnet-4-5",
        base_url=server.url,
        api_key="sk-ant-test-456",
        retry=FAST,
        max_retries=FAST.max_retries,
        timeout=5.0,
        sleep=sleeps,
    )
    yield model
    await model.aclose()
