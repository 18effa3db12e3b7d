"""``WardenClient``: the async client of a Warden server (httpx + httpx-sse)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import EventSource

from agent_core.chunks import Chunk
from agent_core.stream import GenerateResult
from agent_core.views import SuspendedRun, SuspendedRunList
from warden_client._common import (
    API,
    RUN_ID_HEADER,
    StreamState,
    StreamView,
    auth_headers,
    drop_none,
    generate_result,
    json_of,
    normalize_base_url,
    raise_for_status,
    stream_body,
    stream_timeout,
    suspended_run,
    suspended_run_list,
)
from warden_client.errors import ProtocolError

DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)


class RemoteAgentStream(StreamView):
    """An ``AgentStream`` read over HTTP: ``run_id`` (from the response header, so known
    before the first chunk), ``full_stream``, ``text_stream``, and after the end
    ``status``, ``finish_reason``, ``suspend_payload``, ``await text()``.

    Chunks are kept, so ``full_stream`` and ``text_stream`` can both be read.
    Use ``async with`` (or ``aclose()``) to drop the connection early; the
    server still runs the decision to its end.
    """

    def __init__(
        self, response: httpx.Response | None, run_id: str | None, chunks: Sequence[dict[str, Any]] = ()
    ) -> None:
        self._state = StreamState(run_id)
        self._response = response
        self._events = EventSource(response).aiter_sse() if response is not None else None
        self._lock = asyncio.Lock()
        for c in chunks:
            self._state.add(c)
        if response is None:
            self._state.end()

    async def _read_one(self) -> None:
        assert self._events is not None
        try:
            event = await self._events.__anext__()
        except StopAsyncIteration:
            await self.aclose()
            return
        except httpx.HTTPError:
            await self.aclose()
            raise
        if event.data == "[DONE]":
            # Read to the end of the body (immediate: the server ends it after [DONE]) so the
            # connection goes back to the pool instead of being closed.
            async for _ in self._events:
                pass
            await self.aclose()
            return
        if not event.data:
            return
        try:
            data = json.loads(event.data)
        except ValueError as exc:
            await self.aclose()
            raise ProtocolError(f"server sent an event that is not JSON: {event.data[:100]!r}") from exc
        self._state.add(data)

    async def _iter(self) -> AsyncIterator[Chunk]:
        i = 0
        while True:
            if i < len(self._state.chunks):
                yield self._state.chunks[i]
                i += 1
                continue
            if self._state.done:
                return
            async with self._lock:
                if i >= len(self._state.chunks) and not self._state.done:
                    await self._read_one()

    @property
    def full_stream(self) -> AsyncIterator[Chunk]:
        return self._iter()

    @property
    def text_stream(self) -> AsyncIterator[str]:
        async def gen() -> AsyncIterator[str]:
            async for chunk in self._iter():
                if chunk.type == "text-delta":
                    yield chunk.payload.text  # type: ignore[union-attr]

        return gen()

    async def consume(self) -> list[Chunk]:
        """Read to the end; return every chunk."""
        async for _ in self._iter():
            pass
        return list(self._state.chunks)

    async def text(self) -> str:
        return StreamState.text_of(await self.consume())

    async def chunks(self) -> list[Chunk]:
        """Wait for the end and return every chunk (as ``AgentStream.chunks``)."""
        return await self.consume()

    async def wait(self) -> RemoteAgentStream:
        await self.consume()
        return self

    async def result(self) -> GenerateResult:
        """The ``GenerateResult`` of this stream, read to its end (as ``AgentStream.result``)."""
        return GenerateResult.from_chunks(self.run_id, await self.consume(), self)  # type: ignore[arg-type]

    async def aclose(self) -> None:
        if self._response is not None:
            await self._response.aclose()
        self._state.end()

    async def __aenter__(self) -> RemoteAgentStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class RemoteAgent:
    """The same methods as ``agent_core.Agent``, executed by the server."""

    def __init__(self, client: WardenClient, agent_id: str) -> None:
        self._client = client
        self.id = agent_id
        self._path = f"{API}/{quote(agent_id, safe='')}"

    async def _sse(self, route: str, body: dict[str, Any]) -> RemoteAgentStream:
        http = self._client.http
        request = http.build_request(
            "POST",
            f"{self._path}/{route}",
            json=body,
            headers={"Accept": "text/event-stream"},
            timeout=stream_timeout(self._client.timeout),
        )
        response = await http.send(request, stream=True)
        if response.status_code >= 400:
            await response.aread()
            await response.aclose()
            raise_for_status(response)
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            await response.aclose()
            raise ProtocolError(f"{route}: expected text/event-stream, got {response.headers.get('content-type')}")
        return RemoteAgentStream(response, response.headers.get(RUN_ID_HEADER))

    async def _json(self, route: str, body: dict[str, Any]) -> Any:
        http = self._client.http
        return json_of(
            await http.post(f"{self._path}/{route}", json=body, timeout=stream_timeout(self._client.timeout))
        )

    async def stream(
        self,
        messages: str | Sequence[Any],
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        require_tool_approval: bool | None = None,
        max_steps: int | None = None,
        request_context: dict[str, Any] | None = None,
    ) -> RemoteAgentStream:
        return await self._sse(
            "stream",
            stream_body(
                messages,
                thread_id=thread_id,
                resource_id=resource_id,
                require_tool_approval=require_tool_approval,
                max_steps=max_steps,
                request_context=request_context,
            ),
        )

    async def generate(
        self,
        messages: str | Sequence[Any],
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        require_tool_approval: bool | None = None,
        max_steps: int | None = None,
        request_context: dict[str, Any] | None = None,
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                "generate",
                stream_body(
                    messages,
                    thread_id=thread_id,
                    resource_id=resource_id,
                    require_tool_approval=require_tool_approval,
                    max_steps=max_steps,
                    request_context=request_context,
                ),
            )
        )

    async def approve_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, fingerprint: str | None = None
    ) -> RemoteAgentStream:
        return await self._sse(
            "approve-tool-call",
            drop_none({"runId": run_id, "toolCallId": tool_call_id, "fingerprint": fingerprint}),
        )

    async def decline_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> RemoteAgentStream:
        return await self._sse(
            "decline-tool-call", drop_none({"runId": run_id, "toolCallId": tool_call_id, "reason": reason})
        )

    async def approve_tool_call_generate(
        self, *, run_id: str, tool_call_id: str | None = None, fingerprint: str | None = None
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                "approve-tool-call-generate",
                drop_none({"runId": run_id, "toolCallId": tool_call_id, "fingerprint": fingerprint}),
            )
        )

    async def decline_tool_call_generate(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                "decline-tool-call-generate",
                drop_none({"runId": run_id, "toolCallId": tool_call_id, "reason": reason}),
            )
        )

    async def resume_stream(
        self, resume_data: dict[str, Any], *, run_id: str, tool_call_id: str | None = None
    ) -> RemoteAgentStream:
        return await self._sse(
            "resume-stream",
            drop_none({"runId": run_id, "toolCallId": tool_call_id, "resumeData": resume_data}),
        )

    async def resume_generate(
        self, resume_data: dict[str, Any], *, run_id: str, tool_call_id: str | None = None
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                "resume-generate",
                drop_none({"runId": run_id, "toolCallId": tool_call_id, "resumeData": resume_data}),
            )
        )

    async def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> SuspendedRunList:
        params = drop_none({"threadId": thread_id, "resourceId": resource_id, "page": page, "perPage": per_page})
        return suspended_run_list(json_of(await self._client.http.get(f"{self._path}/suspended-runs", params=params)))

    async def send_tool_approval(
        self,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool,
        tool_call_id: str | None = None,
        run_id: str | None = None,
        resume_data: dict[str, Any] | None = None,
    ) -> RemoteAgentStream:
        """Decide the pending call of a thread. The server runs the run to its next stop and
        answers with its chunks, which the returned stream replays."""
        data = await self._json(
            "send-tool-approval",
            drop_none(
                {
                    "threadId": thread_id,
                    "resourceId": resource_id,
                    "approved": approved,
                    "toolCallId": tool_call_id,
                    "runId": run_id,
                    "resumeData": resume_data,
                }
            ),
        )
        return RemoteAgentStream(None, data.get("runId"), data.get("chunks") or [])


class WardenClient:
    """Async client: ``WardenClient("http://127.0.0.1:4111", token).agent("ops")``."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.http = httpx.AsyncClient(
            base_url=self.base_url, headers=auth_headers(token), timeout=self.timeout, transport=transport
        )

    def agent(self, agent_id: str) -> RemoteAgent:
        return RemoteAgent(self, agent_id)

    async def list_suspended_runs(
        self,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> SuspendedRunList:
        """Pending runs of every agent (or of ``agent_id``), like ``Runtime.list_suspended_runs``."""
        params = drop_none(
            {"agentId": agent_id, "threadId": thread_id, "resourceId": resource_id, "page": page, "perPage": per_page}
        )
        return suspended_run_list(json_of(await self.http.get("/api/suspended-runs", params=params)))

    async def get_suspended_run(self, run_id: str) -> SuspendedRun:
        """One pending run, like ``Runtime.get_suspended_run`` (``SnapshotNotFound`` if none)."""
        return suspended_run(json_of(await self.http.get(f"/api/suspended-runs/{quote(run_id, safe='')}")))

    async def list_agents(self) -> dict[str, Any]:
        return json_of(await self.http.get("/api/agents"))

    async def health(self) -> dict[str, Any]:
        return json_of(await self.http.get("/health"))

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> WardenClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
