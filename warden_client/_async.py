"""``WardenClient``: the async client of a Warden server (httpx + httpx-sse).

The blocking client (``_sync.py``) is generated from this file by ``scripts/gen_sync_client.py``
(unasync); a test checks that it is current. Edit this file, then run the script.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any, Unpack

import httpx
from httpx_sse import EventSource

from agent_core import wire
from agent_core.chunks import Chunk
from agent_core.options import ListFilters, SentRunOptions
from agent_core.stream import GenerateResult
from agent_core.views import AuditPage, Grant, SuspendedRun, SuspendedRunList
from warden_client._common import (
    DEFAULT_TIMEOUT,
    EVENTS,
    StreamState,
    StreamView,
    asleep,
    generate_result,
    json_of,
    raise_for_status,
    store_event,
    stream_timeout,
    suspended_run,
    suspended_run_list,
)
from warden_client.errors import ProtocolError
from warden_types.audit import ChainReport
from warden_types.events import StoreEvent


class RemoteAgentStream(StreamView):
    """An ``AgentStream`` read over HTTP: ``run_id`` (from the response header, so known
    before the first chunk), ``full_stream``, ``text_stream``, and after the end
    ``status``, ``finish_reason``, ``suspend_payload``, ``text()``.

    Chunks are kept, so ``full_stream`` and ``text_stream`` can both be read.
    Use it as a context manager (or close it) to drop the connection early; the
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
        if event.data == wire.SSE_DONE:
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
        return GenerateResult.from_chunks(self.run_id, await self.consume(), self)

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

    def _url(self, route: str) -> str:
        return wire.path(route, agentId=self.id)

    async def _sse(self, route: str, body: dict[str, Any]) -> RemoteAgentStream:
        http = self._client.http
        request = http.build_request(
            "POST",
            self._url(route),
            json=body,
            headers={"Accept": wire.SSE_MEDIA_TYPE},
            timeout=stream_timeout(self._client.timeout),
        )
        response = await http.send(request, stream=True)
        if response.status_code >= 400:
            await response.aread()
            await response.aclose()
            raise_for_status(response)
        if not response.headers.get("content-type", "").startswith(wire.SSE_MEDIA_TYPE):
            await response.aclose()
            got = response.headers.get("content-type")
            raise ProtocolError(f"{route.rsplit('/', 1)[-1]}: expected {wire.SSE_MEDIA_TYPE}, got {got}")
        return RemoteAgentStream(response, response.headers.get(wire.RUN_ID_HEADER))

    async def _json(self, route: str, body: dict[str, Any]) -> Any:
        http = self._client.http
        return json_of(await http.post(self._url(route), json=body, timeout=stream_timeout(self._client.timeout)))

    async def stream(self, messages: str | Sequence[Any], **options: Unpack[SentRunOptions]) -> RemoteAgentStream:
        """Start a run on the server (options: ``agent_core.options.SentRunOptions``)."""
        return await self._sse(wire.STREAM, wire.stream_request(messages, **options))

    async def generate(self, messages: str | Sequence[Any], **options: Unpack[SentRunOptions]) -> GenerateResult:
        return generate_result(await self._json(wire.GENERATE, wire.stream_request(messages, **options)))

    async def approve_tool_call(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        args: dict[str, Any] | None = None,
    ) -> RemoteAgentStream:
        """``args``: run the call with these (edited) arguments, validated by the server first."""
        return await self._sse(
            wire.APPROVE_TOOL_CALL,
            wire.approve_request(run_id, tool_call_id, fingerprint, args),
        )

    async def decline_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> RemoteAgentStream:
        return await self._sse(wire.DECLINE_TOOL_CALL, wire.decline_request(run_id, tool_call_id, reason))

    async def approve_tool_call_generate(
        self,
        *,
        run_id: str,
        tool_call_id: str | None = None,
        fingerprint: str | None = None,
        args: dict[str, Any] | None = None,
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                wire.APPROVE_TOOL_CALL_GENERATE,
                wire.approve_request(run_id, tool_call_id, fingerprint, args),
            )
        )

    async def decline_tool_call_generate(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                wire.DECLINE_TOOL_CALL_GENERATE,
                wire.decline_request(run_id, tool_call_id, reason),
            )
        )

    async def resume_stream(
        self, resume_data: dict[str, Any], *, run_id: str, tool_call_id: str | None = None
    ) -> RemoteAgentStream:
        return await self._sse(
            wire.RESUME_STREAM,
            wire.resume_request(resume_data, run_id, tool_call_id),
        )

    async def resume_generate(
        self, resume_data: dict[str, Any], *, run_id: str, tool_call_id: str | None = None
    ) -> GenerateResult:
        return generate_result(
            await self._json(
                wire.RESUME_GENERATE,
                wire.resume_request(resume_data, run_id, tool_call_id),
            )
        )

    async def list_suspended_runs(self, **filters: Unpack[ListFilters]) -> SuspendedRunList:
        """This agent's pending runs, filtered and ordered by the server's store (see the runtime's)."""
        params = wire.suspended_runs_query(**filters)
        url = self._url(wire.AGENT_SUSPENDED_RUNS)
        return suspended_run_list(json_of(await self._client.http.get(url, params=params)))

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
            wire.SEND_TOOL_APPROVAL,
            wire.send_tool_approval_request(
                thread_id=thread_id,
                resource_id=resource_id,
                approved=approved,
                tool_call_id=tool_call_id,
                run_id=run_id,
                resume_data=resume_data,
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
        self.base_url = wire.normalize_base_url(base_url)
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.http = httpx.AsyncClient(
            base_url=self.base_url, headers=wire.bearer(token), timeout=self.timeout, transport=transport
        )

    def agent(self, agent_id: str) -> RemoteAgent:
        return RemoteAgent(self, agent_id)

    async def list_suspended_runs(
        self, *, agent_id: str | None = None, **filters: Unpack[ListFilters]
    ) -> SuspendedRunList:
        """Pending runs of every agent (or of ``agent_id``), like ``Runtime.list_suspended_runs``:
        ``query`` words, ``tool_name``, ``kind`` and ``sort`` are applied by the server's store."""
        params = wire.suspended_runs_query(agent_id=agent_id, **filters)
        return suspended_run_list(json_of(await self.http.get(wire.SUSPENDED_RUNS, params=params)))

    async def audit_log(
        self,
        *,
        run_id: str | None = None,
        agent_id: str | None = None,
        actor: str | None = None,
        decision: str | None = None,
        since: datetime | None = None,
        after: int = 0,
        limit: int = 100,
    ) -> AuditPage:
        """Audit entries in order, like ``Runtime.audit_log``; ``page.next_after`` pages on (needs a viewer token)."""
        params: dict[str, Any] = {"after": after, "limit": limit}
        for key, value in (("runId", run_id), ("agentId", agent_id), ("actor", actor), ("decision", decision)):
            if value is not None:
                params[key] = value
        if since is not None:
            params["since"] = since.isoformat()
        return AuditPage.model_validate(json_of(await self.http.get(wire.AUDIT, params=params)))

    async def get_suspended_run(self, run_id: str) -> SuspendedRun:
        """One pending run, like ``Runtime.get_suspended_run`` (``SnapshotNotFound`` if none)."""
        return suspended_run(json_of(await self.http.get(wire.path(wire.SUSPENDED_RUN, runId=run_id))))

    async def get_run_context(self, run_id: str) -> dict[str, Any]:
        """A run's calls with their context, its conversation and its decisions
        (``GET /api/runs/{runId}/context``, Warden extension)."""
        return json_of(await self.http.get(wire.path("/api/runs/{runId}/context", runId=run_id)))

    async def resolve_id(self, prefix: str, *, run_id: str | None = None) -> str:
        """The full run id (or, with ``run_id``, that run's tool-call id) a unique prefix of 6+
        characters names, like ``Runtime.resolve_id`` (``GET /api/resolve``, Warden extension)."""
        params = (
            {"prefix": prefix, "kind": "run"} if run_id is None else {"prefix": prefix, "kind": "call", "runId": run_id}
        )
        return str(json_of(await self.http.get("/api/resolve", params=params))["id"])

    async def recover(self) -> int:
        """Crash recovery now, like ``Runtime.recover``; how many runs advanced (``POST /api/recover``)."""
        return int(json_of(await self.http.post("/api/recover"))["recovered"])

    async def verify_audit(self) -> ChainReport:
        """Check the audit trail's hash chain, like ``Runtime.verify_audit`` (``GET /api/audit/verify``)."""
        data = json_of(await self.http.get("/api/audit/verify"))
        return ChainReport(
            ok=bool(data["ok"]),
            checked=int(data["checked"]),
            unsealed=int(data.get("unsealed") or 0),
            broken_seq=data.get("brokenSeq"),
            problem=data.get("problem"),
        )

    async def sweep(self) -> int:
        """Expire overdue approvals now, like ``Runtime.sweep``; how many expired."""
        return int(json_of(await self.http.post(wire.SWEEP))["expired"])

    async def grant(
        self,
        tool_name: str,
        *,
        scope: str,
        scope_id: str | None = None,
        agent_id: str | None = None,
        args_match: dict[str, Any] | None = None,
        expires_in: float | None = 3600,
        command_match: dict[str, Any] | None = None,
    ) -> Grant:
        """Like ``Runtime.grant`` (the server's token name, if any, is the creator)."""
        body = wire.grant_request(
            tool_name,
            scope=scope,
            scope_id=scope_id,
            agent_id=agent_id,
            args_match=args_match,
            expires_in=expires_in,
            command_match=command_match,
        )
        return Grant.model_validate(json_of(await self.http.post(wire.GRANTS, json=body)))

    async def list_grants(self) -> list[Grant]:
        return [Grant.model_validate(g) for g in json_of(await self.http.get(wire.GRANTS))["grants"]]

    async def revoke_grant(self, grant_id: str) -> None:
        json_of(await self.http.post(wire.path(wire.GRANT_REVOKE, grantId=grant_id)))

    async def events(self, *, reconnect: bool = True, retry_seconds: float = 1.0) -> AsyncIterator[StoreEvent]:
        """Live updates of the pending set (``GET /api/events``), as the store's ``StoreEvent``, until you stop.

        Every connection starts with a ``subscribed`` event: list the pending runs then
        (events of a gap are not replayed). A dropped connection (network, a server
        restarting or stopping, the store going away) is opened again after
        ``retry_seconds`` (or the server's ``retry:``), sending ``Last-Event-ID`` when
        the server numbers its events; ``reconnect=False`` ends the iteration instead.
        Answers no retry can fix (401, 403, 404) are raised.
        """
        last_id: str | None = None
        delay = retry_seconds
        while True:
            headers = {"Accept": wire.SSE_MEDIA_TYPE}
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            try:
                async with self.http.stream(
                    "GET", EVENTS, headers=headers, timeout=stream_timeout(self.timeout)
                ) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        if not reconnect or response.status_code < 500:
                            raise_for_status(response)
                    else:
                        async for sse in EventSource(response).aiter_sse():
                            if sse.id:
                                last_id = sse.id
                            if sse.retry:
                                delay = sse.retry / 1000
                            if sse.event == "error":  # the server's store went away: the server ends the stream
                                break
                            event = store_event(sse.event, sse.data)
                            if event is not None:
                                yield event
            except httpx.TransportError:
                if not reconnect:
                    raise
            if not reconnect:
                return
            await asleep(delay)

    async def list_agents(self) -> dict[str, Any]:
        return json_of(await self.http.get(wire.AGENTS))

    # -- external MCP calls (``warden mcp-proxy --server``; see docs/mcp.md) --------------------------
    async def register_mcp_call(
        self,
        agent_id: str,
        tool: dict[str, Any],
        arguments: dict[str, Any],
        *,
        approval_timeout: float | None = None,
        server: str | None = None,
    ) -> dict[str, Any]:
        """Register a gated MCP call of agent ``mcp:<name>``; its state, with the ``secret`` the other
        ``*_mcp_call`` methods need (``pending``, ``execute`` when a grant covered it, or ``error``)."""
        body: dict[str, Any] = {"tool": tool, "arguments": arguments}
        if approval_timeout is not None:
            body["approvalTimeout"] = approval_timeout
        if server is not None:
            body["server"] = server
        url = wire.path("/api/mcp/agents/{agentId}/calls", agentId=agent_id)
        return json_of(await self.http.post(url, json=body))

    async def poll_mcp_call(self, tool_call_id: str, secret: str) -> dict[str, Any]:
        """An external call's state (``pending``, ``execute`` with ``args``, ``declined``, ``expired``, ...)."""
        url = wire.path("/api/mcp/calls/{toolCallId}/poll", toolCallId=tool_call_id)
        return json_of(await self.http.post(url, json={"secret": secret}))

    async def complete_mcp_call(self, tool_call_id: str, secret: str, result: dict[str, Any]) -> dict[str, Any]:
        """Post the upstream's ``CallToolResult`` (JSON) of a call in state ``execute``; the run ends."""
        url = wire.path("/api/mcp/calls/{toolCallId}/result", toolCallId=tool_call_id)
        return json_of(await self.http.post(url, json={"secret": secret, "result": result}))

    async def withdraw_mcp_call(self, tool_call_id: str, secret: str) -> dict[str, Any]:
        """The MCP client cancelled: decline the call if it still waits (audited)."""
        url = wire.path("/api/mcp/calls/{toolCallId}/withdraw", toolCallId=tool_call_id)
        return json_of(await self.http.post(url, json={"secret": secret}))

    async def health(self) -> dict[str, Any]:
        return json_of(await self.http.get(wire.HEALTH))

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> WardenClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
