"""Webhooks: POST a signed JSON body to each URL when a call starts waiting.

Signing, in the style of Stripe's: the header ``Warden-Signature:
t=<unix seconds>,v1=<hex>`` where ``hex`` is HMAC-SHA256, keyed with the
shared secret, over ``"<t>." + body``. A receiver recomputes it
(``verify_signature``) and refuses old timestamps (replays).
``Warden-Delivery`` is the same id on every retry of one delivery (for dedupe).

Deliveries never block or fail a run: notices go on a bounded queue drained
by a background task; each delivery is retried with exponential backoff.
With approval links (``links=``, from ``agent_core.approval_links``), the body
gains ``links = {view, approve, decline}``.
A delivery that fails for good (or a notice dropped on a full queue) is
logged and written to the audit trail as ``notification-failed``.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import hmac
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from agent_core.notify import PendingNotice
from storage.records import AuditRow

log = logging.getLogger("warden.webhooks")

SIGNATURE_HEADER = "Warden-Signature"
DELIVERY_HEADER = "Warden-Delivery"
EVENT_HEADER = "Warden-Event"
#: the actor of ``notification-failed`` audit entries.
WEBHOOK_ACTOR = "warden-webhook"


def sign(secret: str, body: bytes, timestamp: int | None = None) -> str:
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def verify_signature(secret: str, header: str, body: bytes, *, tolerance: float = 300.0) -> bool:
    """True when ``header`` signs ``body`` with ``secret`` and its timestamp is within ``tolerance`` seconds."""
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        key, _, value = item.strip().partition("=")
        parts.setdefault(key, []).append(value)
    try:
        t = int(parts["t"][0])
    except (KeyError, ValueError):
        return False
    if abs(time.time() - t) > tolerance:
        return False
    expected = sign(secret, body, t).split("v1=", 1)[1]
    return any(hmac.compare_digest(expected, v) for v in parts.get("v1", []))


class WebhookNotifier:
    """A pending-call listener (``runtime.add_pending_listener(notifier)``) that POSTs to ``urls``.

    ``await notifier.start()`` before use (or ``async with``), ``await notifier.aclose()`` after.
    ``store``: where ``notification-failed`` entries go (None: logged only).
    """

    def __init__(
        self,
        urls: list[str],
        secret: str | None = None,
        *,
        store: Any = None,
        max_queue: int = 1000,
        attempts: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        timeout: float = 10.0,
        concurrency: int = 8,
        links: Callable[[PendingNotice], dict[str, str] | None] | None = None,
    ) -> None:
        self.urls = list(urls)
        #: signed approval links added to each body as ``links`` (``agent_core.approval_links``).
        self.links = links
        self.secret = secret
        self.store = store
        self.attempts, self.backoff, self.max_backoff, self.timeout = attempts, backoff, max_backoff, timeout
        self._queue: asyncio.Queue[PendingNotice] | None = None
        self._max_queue = max_queue
        self._slots = asyncio.Semaphore(concurrency)
        self._worker: asyncio.Task[None] | None = None
        self._deliveries: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None
        #: recent final failures (url, run id, call id, error), newest last: for a console to show.
        self.failures: collections.deque[tuple[str, str, str, str]] = collections.deque(maxlen=100)
        self.delivered = 0

    async def __aenter__(self) -> WebhookNotifier:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        if self._worker is None:
            self._queue = asyncio.Queue(self._max_queue)
            self._client = httpx.AsyncClient(timeout=self.timeout)
            self._worker = asyncio.get_running_loop().create_task(self._drain())

    async def aclose(self, *, grace: float = 5.0) -> None:
        """Stop: deliveries under way get ``grace`` seconds, then are cancelled."""
        if self._worker is not None:
            self._worker.cancel()
        if self._deliveries:
            _, late = await asyncio.wait(set(self._deliveries), timeout=grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
        self._worker = self._client = None

    def __call__(self, notice: PendingNotice) -> None:
        if self._queue is None:
            raise RuntimeError("WebhookNotifier is not started: await notifier.start() first")
        try:
            self._queue.put_nowait(notice)
        except asyncio.QueueFull:
            for url in self.urls:
                self._failed(url, notice, f"queue full ({self._max_queue} notices waiting): dropped")

    async def _drain(self) -> None:
        assert self._queue is not None
        while True:
            notice = await self._queue.get()
            for url in self.urls:
                await self._slots.acquire()
                task = asyncio.get_running_loop().create_task(self._deliver(url, notice))
                self._deliveries.add(task)
                task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._deliveries.discard(task)
        self._slots.release()

    async def _deliver(self, url: str, notice: PendingNotice) -> None:
        assert self._client is not None
        doc = notice.to_json()
        links = self.links(notice) if self.links is not None else None
        if links:
            doc["links"] = links
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
        delivery = uuid.uuid4().hex
        error = ""
        for attempt in range(self.attempts):
            headers = {"Content-Type": "application/json", DELIVERY_HEADER: delivery, EVENT_HEADER: notice.event}
            if self.secret:
                headers[SIGNATURE_HEADER] = sign(self.secret, body)
            try:
                response = await self._client.post(url, content=body, headers=headers)
                if response.status_code < 300:
                    self.delivered += 1
                    return
                error = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            log.info("webhook %s: attempt %d for call %s failed (%s)", url, attempt + 1, notice.tool_call_id, error)
            if attempt + 1 < self.attempts:
                await asyncio.sleep(min(self.max_backoff, self.backoff * 2**attempt))
        self._failed(url, notice, f"{error} after {self.attempts} attempts")

    def _failed(self, url: str, notice: PendingNotice, error: str) -> None:
        log.warning(
            "webhook %s: delivery for call %s of run %s failed: %s", url, notice.tool_call_id, notice.run_id, error
        )
        self.failures.append((url, notice.run_id, notice.tool_call_id, error))
        if self.store is None:
            return
        row = AuditRow(
            run_id=notice.run_id,
            tool_call_id=notice.tool_call_id,
            agent_id=notice.agent_id,
            tool_name=notice.tool_name,
            decision="notification-failed",
            fingerprint=notice.fingerprint,
            reason=f"webhook {url}: {error}",
            decided_at=time.time(),
            actor=WEBHOOK_ACTOR,
        )
        task = asyncio.get_running_loop().create_task(self._record(row))
        self._deliveries.add(task)
        task.add_done_callback(self._deliveries.discard)

    async def _record(self, row: AuditRow) -> None:
        try:
            await self.store.append_audit([row])
        except Exception:
            log.exception("could not write the failed delivery to the audit trail")
