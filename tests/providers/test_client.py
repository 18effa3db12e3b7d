"""Who owns the httpx client, and across which event loops."""

from __future__ import annotations

import asyncio

import httpx

from agent_core.providers import AnthropicModel, OpenAIModel


def test_own_client_is_remade_for_a_new_event_loop() -> None:
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1")

    async def grab() -> httpx.AsyncClient:
        first = model.client()
        assert model.client() is first  # one client per loop, reused
        return first

    a = asyncio.run(grab())
    b = asyncio.run(grab())
    assert a is not b  # pooled connections of a finished loop are never reused


async def test_given_client_is_used_and_left_open() -> None:
    async with httpx.AsyncClient() as client:
        model = AnthropicModel("m", api_key="k", http_client=client)
        assert model.client() is client
        await model.aclose()
        assert not client.is_closed


async def test_aclose_closes_own_client() -> None:
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1")
    client = model.client()
    await model.aclose()
    assert client.is_closed
    assert model.client() is not client


def test_timeout_and_retry_settings() -> None:
    model = OpenAIModel("m", timeout=12.5, max_retries=5)
    assert model.settings.timeout.read == 12.5 and model.settings.timeout.connect == 10.0
    assert model.settings.retry.max_retries == 5
    custom = httpx.Timeout(3.0, connect=1.0)
    assert AnthropicModel("m", api_key="k", timeout=custom, max_retries=0).settings.timeout is custom


def test_retry_policy_and_max_retries_combine() -> None:
    from agent_core.providers import RetryPolicy

    policy = RetryPolicy(max_retries=5, initial_delay=0.1)
    assert OpenAIModel("m", retry=policy).settings.retry is policy
    assert OpenAIModel("m", retry=policy, max_retries=1).settings.retry == RetryPolicy(max_retries=1, initial_delay=0.1)
    assert OpenAIModel("m").settings.retry.max_retries == 2
