"""Shared HTTP machinery of the providers: the client, retries, and the SSE stream driver.

Retrying a streamed model call is only safe while the caller has seen nothing:
once a text delta has been yielded, a second attempt would repeat (or worse,
change) text the user already saw. ``stream_events`` therefore retries
connection errors, timeouts, 408/409/429/5xx answers and streams that break
*before* the first event is yielded, and turns every later failure into a
``ModelError``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from agent_core.errors import ModelError, ProviderConfigError
from agent_core.models import LanguageModel, ModelDone, ModelEvent, ModelResponse

__all__ = [
    "HTTPModel",
    "HTTPModelError",
    "HttpSettings",
    "RetryPolicy",
    "StreamParser",
    "parse_retry_after",
    "stream_events",
]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


class HTTPModelError(ModelError):
    """A provider answered with an error status, or the connection failed.

    ``status_code`` is None for transport errors; ``retryable`` says whether
    trying again could help (it did not, or retries were not allowed).
    """

    def __init__(
        self, message: str, *, status_code: int | None = None, retryable: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter.

    Attempt ``n`` (0-based) waits ``min(max_delay, initial_delay * multiplier**n)``
    scaled by a random factor in ``[1 - jitter, 1]``; a server's ``Retry-After``
    (or ``retry-after-ms``) replaces that when it is at most ``max_retry_after``.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    multiplier: float = 2.0
    jitter: float = 0.25
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after:
            return retry_after
        base = min(self.max_delay, self.initial_delay * (self.multiplier**attempt))
        return base * (1 - self.jitter * random.random())


@dataclass
class HttpSettings:
    """Connection settings shared by the providers (one per provider object)."""

    timeout: httpx.Timeout
    retry: RetryPolicy
    http_client: httpx.AsyncClient | None = None
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep


def make_timeout(timeout: float | httpx.Timeout | None) -> httpx.Timeout:
    """``timeout`` seconds bound each read (a stalled stream) and the connect."""
    if isinstance(timeout, httpx.Timeout):
        return timeout
    if timeout is None:
        return httpx.Timeout(None, connect=10.0)
    return httpx.Timeout(timeout, connect=min(10.0, timeout))


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_detail(body: bytes) -> str:
    """The ``error.message`` of an OpenAI/Anthropic error body, else a bounded excerpt."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail")
            kind = err.get("type") or err.get("code")
            if msg:
                return f"{msg} ({kind})" if kind else str(msg)
        elif isinstance(err, str):
            return err
    return text[:500]


class StreamParser(Protocol):
    """Turns one attempt's SSE events into model events; a new parser per attempt."""

    def feed(self, event: ServerSentEvent) -> list[ModelEvent]:
        """Events to yield now; raise ``ModelError`` for an error event in the stream."""

    @property
    def done(self) -> bool:
        """True once the stream's terminal event arrived."""

    def finish(self) -> ModelResponse:
        """The complete response; raise ``ModelError`` if the stream ended too early."""


def _status_error(provider: str, response: httpx.Response, body: bytes) -> HTTPModelError:
    status = response.status_code
    should = response.headers.get("x-should-retry")
    retryable = should == "true" if should in ("true", "false") else status in RETRYABLE_STATUS
    hint = ""
    if status == 401:
        hint = " (check the API key)"
    elif status == 404:
        hint = " (check the model name and the base URL)"
    return HTTPModelError(
        f"{provider} returned HTTP {status} for {response.request.method} {response.request.url}"
        f"{hint}: {_error_detail(body)}",
        status_code=status,
        retryable=retryable,
        retry_after=parse_retry_after(response.headers),
    )


async def stream_events(
    *,
    provider: str,
    client: httpx.AsyncClient,
    settings: HttpSettings,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    new_parser: Callable[[], StreamParser],
) -> AsyncIterator[ModelEvent]:
    """POST ``body`` and stream the answer through a parser, retrying while nothing was yielded.

    Yields the parser's events, then one ``ModelDone``. The response is closed
    on every exit, including the caller closing the generator or cancellation.
    """
    policy = settings.retry
    attempt = 0
    while True:
        yielded = False
        parser = new_parser()
        try:
            async with client.stream("POST", url, headers=headers, json=body, timeout=settings.timeout) as response:
                if response.status_code >= 400:
                    raise _status_error(provider, response, await response.aread())
                try:
                    async for sse in EventSource(response).aiter_sse():
                        for event in parser.feed(sse):
                            yielded = True
                            yield event
                        if parser.done:
                            break
                except SSEError as exc:
                    detail = _error_detail(await response.aread()) if not yielded else ""
                    raise HTTPModelError(
                        f"{provider} did not answer with an event stream ({exc})" + (f": {detail}" if detail else "")
                    ) from exc
                final = parser.finish()
            yield ModelDone(response=final)
            return
        except HTTPModelError as exc:
            error: HTTPModelError = exc
        except httpx.TimeoutException as exc:
            error = HTTPModelError(
                f"{provider} timed out ({type(exc).__name__}) calling {url}"
                + (" after the answer had started streaming" if yielded else ""),
                retryable=True,
            )
            error.__cause__ = exc
        except httpx.TransportError as exc:
            where = "in the middle of the answer" if yielded else "before the answer"
            error = HTTPModelError(
                f"{provider} connection failed {where} ({type(exc).__name__}: {exc or 'no detail'}) calling {url}",
                retryable=True,
            )
            error.__cause__ = exc
        except httpx.HTTPError as exc:  # e.g. a body that cannot be decoded: retrying will not help
            raise HTTPModelError(f"{provider} sent an unreadable answer ({type(exc).__name__}: {exc})") from exc
        if not error.retryable or yielded or attempt >= policy.max_retries:
            if error.retryable and not yielded and attempt:
                raise HTTPModelError(
                    f"{error} (gave up after {attempt + 1} attempts)", status_code=error.status_code
                ) from error
            raise error
        await settings.sleep(policy.delay(attempt, error.retry_after))
        attempt += 1


class HTTPModel(LanguageModel):
    """Base of the HTTP providers: settings, and an ``httpx.AsyncClient`` per event loop.

    A client passed in is used as is and never closed here. Otherwise the model
    makes its own, and a new one when used from another event loop (pooled
    connections belong to the loop that opened them), e.g. successive
    ``asyncio.run`` calls or per-test loops.
    """

    provider: str = "http"

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None,
        timeout: float | httpx.Timeout | None,
        max_retries: int | None,
        retry: RetryPolicy | None,
        http_client: httpx.AsyncClient | None,
        headers: Mapping[str, str] | None,
        extra_body: Mapping[str, Any] | None,
        sleep: Callable[[float], Awaitable[Any]] | None,
    ) -> None:
        if not model:
            raise ProviderConfigError(f"{self.provider}: a model name is required")
        self.model = model
        self.model_id = f"{self.provider}/{model}"
        if not base_url.startswith(("http://", "https://")):
            raise ProviderConfigError(
                f"{self.provider}: base URL {base_url!r} must start with http:// or https:// "
                "(e.g. http://localhost:11434/v1)"
            )
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        policy = retry or RetryPolicy()
        if max_retries is not None and max_retries != policy.max_retries:
            policy = dataclasses.replace(policy, max_retries=max_retries)
        self.settings = HttpSettings(
            timeout=make_timeout(timeout),
            retry=policy,
            http_client=http_client,
            sleep=sleep if sleep is not None else asyncio.sleep,
        )
        self.extra_headers = dict(headers or {})
        self.extra_body = dict(extra_body or {})
        self._own_client: httpx.AsyncClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None

    def client(self) -> httpx.AsyncClient:
        if self.settings.http_client is not None:
            return self.settings.http_client
        loop = asyncio.get_running_loop()
        if self._own_client is None or self._own_loop is not loop or self._own_client.is_closed:
            self._own_client = httpx.AsyncClient(timeout=self.settings.timeout)
            self._own_loop = loop
        return self._own_client

    async def aclose(self) -> None:
        client, self._own_client = self._own_client, None
        if client is not None and self._own_loop is asyncio.get_running_loop():
            await client.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"
