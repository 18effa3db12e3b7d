"""``SyncWardenClient``: the blocking client (scripts, notebooks, threads)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote

import httpx
from httpx_sse import EventSource

from agent_core.chunks import Chunk
from agent_core.stream import GenerateResult
from agent_core.views import SuspendedRun, SuspendedRunList
from warden_client._async import DEFAULT_TIMEOUT
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


class SyncAgentStream(StreamView):
    """Blocking twin of ``RemoteAgentStream``: iterate ``full_stream`` / ``text_stream``."""

    def __init__(
        self, response: httpx.Response | None, run_id: str | None, chunks: Sequence[dict[str, Any]] = ()
    ) -> None:
        self._state = StreamState(run_id)
        self._response = response
        self._events = EventSource(response).iter_sse() if response is not None else None
        self._lock = threading.Lock()
        for c in chunks:
            self._state.add(c)
        if response is None:
            self._state.end()

    def _read_one(self) -> None:
        assert self._events is not None
        try:
            event = next(self._events)
        except StopIteration:
            self.close()
            return
        except httpx.HTTPError:
            self.close()
            raise
        if event.data == "[DONE]":
            # Read to the end of the body so the connection goes back to the pool.
            for _ in self._events:
                pass
            self.close()
            return
        if not event.data:
            return
        try:
            data = json.loads(event.data)
        except ValueError as exc:
            self.close()
            raise ProtocolError(f"server sent an event that is not JSON: {event.data[:100]!r}") from exc
        self._state.add(data)

    def _iter(self) -> Iterator[Chunk]:
        i = 0
        while True:
            if i < len(self._state.chunks):
                yield self._state.chunks[i]
                i += 1
                continue
            if self._state.done:
                return
            with self._lock:
                if i >= len(self._state.chunks) and not self._state.done:
                    self._read_one()

    @property
    def full_stream(self) -> Iterator[Chunk]:
        return self._iter()

    @property
    def text_stream(self) -> Iterator[str]:
        return (c.payload.text for c in self._iter() if c.type == "text-delta")  # type: ignore[union-attr]

    def consume(self) -> list[Chunk]:
        for _ in self._iter():
            pass
        return list(self._state.chunks)

    def text(self) -> str:
        return StreamState.text_of(self.consume())

    def chunks(self) -> list[Chunk]:
        """Wait for the end and return every chunk."""
        return self.consume()

    def wait(self) -> SyncAgentStream:
        self.consume()
        return self

    def result(self) -> GenerateResult:
        return GenerateResult.from_chunks(self.run_id, self.consume(), self)  # type: ignore[arg-type]

    def close(self) -> None:
        if self._response is not None:
            self._response.close()
        self._state.end()

    def __enter__(self) -> SyncAgentStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncRemoteAgent:
    def __init__(self, client: SyncWardenClient, agent_id: str) -> None:
        self._client = client
        self.id = agent_id
        self._path = f"{API}/{quote(agent_id, safe='')}"

    def _sse(self, route: str, body: dict[str, Any]) -> SyncAgentStream:
        http = self._client.http
        request = http.build_request(
            "POST",
            f"{self._path}/{route}",
            json=body,
            headers={"Accept": "text/event-stream"},
            timeout=stream_timeout(self._client.timeout),
        )
        response = http.send(request, stream=True)
        if response.status_code >= 400:
            response.read()
            response.close()
            raise_for_status(response)
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            response.close()
            raise ProtocolError(f"{route}: expected text/event-stream, got {response.headers.get('content-type')}")
        return SyncAgentStream(response, response.headers.get(RUN_ID_HEADER))

    def _json(self, route: str, body: dict[str, Any]) -> Any:
        http = self._client.http
        return json_of(http.post(f"{self._path}/{route}", json=body, timeout=stream_timeout(self._client.timeout)))

    def stream(
        self,
        messages: str | Sequence[Any],
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        require_tool_approval: bool | None = None,
        max_steps: int | None = None,
        request_context: dict[str, Any] | None = None,
    ) -> SyncAgentStream:
        return self._sse(
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

    def generate(
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
            self._json(
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

    def approve_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, fingerprint: str | None = None
    ) -> SyncAgentStream:
        return self._sse(
            "approve-tool-call",
            drop_none({"runId": run_id, "toolCallId": tool_call_id, "fingerprint": fingerprint}),
        )

    def decline_tool_call(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> SyncAgentStream:
        return self._sse(
            "decline-tool-call", drop_none({"runId": run_id, "toolCallId": tool_call_id, "reason": reason})
        )

    def approve_tool_call_generate(
        self, *, run_id: str, tool_call_id: str | None = None, fingerprint: str | None = None
    ) -> GenerateResult:
        return generate_result(
            self._json(
                "approve-tool-call-generate",
                drop_none({"runId": run_id, "toolCallId": tool_call_id, "fingerprint": fingerprint}),
            )
        )

    def decline_tool_call_generate(
        self, *, run_id: str, tool_call_id: str | None = None, reason: str | None = None
    ) -> GenerateResult:
        return generate_result(
            self._json(
                "decline-tool-call-generate",
                drop_none({"runId": run_id, "toolCallId": tool_call_id, "reason": reason}),
            )
        )

    def resume_stream(
        self, resume_data: dict[str, Any], *, run_id: str, tool_call_id: str | None = None
    ) -> SyncAgentStream:
        return self._sse(
            "resume-stream",
            drop_none({"runId": run_id, "toolCallId": tool_call_id, "resumeData": resume_data}),
        )

    def resume_generate(
        self, resume_data: dict[str, Any], *, run_id: str, tool_call_id: str | None = None
    ) -> GenerateResult:
        return generate_result(
            self._json(
                "resume-generate",
                drop_none({"runId": run_id, "toolCallId": tool_call_id, "resumeData": resume_data}),
            )
        )

    def list_suspended_runs(
        self,
        *,
        thread_id: str | None = None,
        resource_id: str | None = None,
        page: int = 0,
        per_page: int = 50,
    ) -> SuspendedRunList:
        params = drop_none({"threadId": thread_id, "resourceId": resource_id, "page": page, "perPage": per_page})
        return suspended_run_list(json_of(self._client.http.get(f"{self._path}/suspended-runs", params=params)))

    def send_tool_approval(
        self,
        *,
        thread_id: str,
        resource_id: str | None = None,
        approved: bool,
        tool_call_id: str | None = None,
        run_id: str | None = None,
        resume_data: dict[str, Any] | None = None,
    ) -> SyncAgentStream:
        data = self._json(
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
        return SyncAgentStream(None, data.get("runId"), data.get("chunks") or [])


class SyncWardenClient:
    """Blocking client: ``SyncWardenClient("http://127.0.0.1:4111", token).agent("ops")``."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.http = httpx.Client(
            base_url=self.base_url, headers=auth_headers(token), timeout=self.timeout, transport=transport
        )

    def agent(self, agent_id: str) -> SyncRemoteAgent:
        return SyncRemoteAgent(self, agent_id)

    def list_suspended_runs(
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
        return suspended_run_list(json_of(self.http.get("/api/suspended-runs", params=params)))

    def get_suspended_run(self, run_id: str) -> SuspendedRun:
        """One pending run, like ``Runtime.get_suspended_run`` (``SnapshotNotFound`` if none)."""
        return suspended_run(json_of(self.http.get(f"/api/suspended-runs/{quote(run_id, safe='')}")))

    def list_agents(self) -> dict[str, Any]:
        return json_of(self.http.get("/api/agents"))

    def health(self) -> dict[str, Any]:
        return json_of(self.http.get("/health"))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> SyncWardenClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
