"""``warden_server.fastpath``: the API's requests served without Starlette's per-request layers
give the answers Starlette's whole stack gives (status, headers, body) for successes and for every
refusal on the way (token, body limits, malformed body, unknown agent or run, wrong method, no
route, Studio's error form, an unexpected error); and they really skip the stack."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import InMemoryStore
from warden_server.app import create_app
from warden_server.fastpath import WardenApp

TOKEN = "fast-" + "t" * 32


class RecordIn(BaseModel):
    id: str


async def _delete(inp: RecordIn, ctx: Any) -> dict[str, str]:
    if inp.id == "explode":
        raise RuntimeError("tool failed")
    return {"deleted": inp.id}


def _model(messages: Any, info: Any) -> ModelResponse:
    last = messages[-1]
    if last.role == "tool":
        return ModelResponse(text="ok")
    return ModelResponse(tool_calls=[ToolCall(name="delete_tool", args={"id": last.content})])


def _runtime() -> Runtime:
    tool = create_tool(
        id="delete-record", description="Delete", input_schema=RecordIn, require_approval=True, execute=_delete
    )
    agent = Agent(id="bench", name="Bench", instructions="", model=FunctionModel(_model), tools={"delete_tool": tool})
    return Runtime(agents={"bench": agent}, storage=InMemoryStore())


async def _call(
    app: Any, method: str, path: str, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None
) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    hdrs = [(b"host", b"testserver")] + (
        headers if headers is not None else [(b"authorization", b"Bearer " + TOKEN.encode())]
    )
    if body:
        hdrs += [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
    path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 4111),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "method": method,
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": hdrs,
        "state": {},
    }
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    try:
        await app(scope, receive, send)
    except RuntimeError as exc:  # re-raised after the 500 was sent, for the server to log
        assert str(exc) == "boom"
    start = sent[0]
    return start["status"], list(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


async def _requests(app: Any, run_ids: list[tuple[str, str]]) -> list[tuple[int, list[tuple[bytes, bytes]], bytes]]:
    (run_a, _), (run_b, call_b) = run_ids
    big = b'{"runId": "' + b"x" * 5000 + b'"}'
    studio = [(b"authorization", b"Bearer " + TOKEN.encode()), (b"x-mastra-client-type", b"studio")]
    return [
        await _call(app, "GET", "/health", headers=[]),
        await _call(app, "GET", f"/api/suspended-runs/{run_a}"),
        await _call(app, "GET", "/api/agents/bench/suspended-runs?perPage=1"),
        await _call(app, "GET", "/api/suspended-runs?perPage=zero"),  # 422 for the query
        await _call(app, "GET", f"/api/suspended-runs/{run_a}", headers=[]),  # 401, no token
        await _call(app, "GET", f"/api/suspended-runs/{run_a}", headers=[(b"authorization", b"Bearer nope")]),
        await _call(app, "GET", "/api/suspended-runs/no-such-run"),  # 404 typed
        await _call(app, "GET", "/api/suspended-runs/no-such-run", headers=studio),  # Mastra's error form
        await _call(app, "POST", "/api/agents/bench/approve-tool-call", big),  # 413
        await _call(app, "POST", "/api/agents/bench/approve-tool-call", b"{not json"),  # 422 malformed
        await _call(app, "POST", "/api/agents/bench/approve-tool-call", b'{"runId": 5}'),  # 422 validation
        await _call(app, "POST", "/api/agents/nobody/approve-tool-call", b'{"runId": "r", "toolCallId": "c"}'),
        await _call(app, "DELETE", "/api/agents/bench/approve-tool-call"),  # 405
        await _call(app, "GET", "/api/no/such/route"),  # 404
        await _call(app, "POST", "/api/agents/bench/generate", b'{"messages": "boom"}'),  # 500, re-raised
        await _call(
            app,
            "POST",
            "/api/agents/bench/approve-tool-call",
            json.dumps({"runId": run_b, "toolCallId": call_b}).encode(),
        ),
    ]


async def _serve(fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    runtime = _runtime()
    app = create_app(runtime, token=TOKEN, max_body_bytes=1000, manage_runtime=False)
    assert isinstance(app, WardenApp) and app.fast is not None
    if not fast:
        app.fast = None
    async with runtime:
        agent = runtime.get_agent("bench")
        ids = []
        for text in ("a", "b"):
            s = await agent.stream(text)
            async for _ in s.full_stream:
                pass
            ids.append((s.run_id, s.suspend_payload.tool_call_id))

        def boom(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("boom")

        monkeypatch.setattr(type(agent), "generate", boom)
        out = await _requests(app, ids)
        monkeypatch.undo()
        # ids differ between the two apps' runs: compare with them taken out
        text = [(s, h, b.replace(ids[0][0].encode(), b"RUN").replace(ids[1][0].encode(), b"RUN")) for s, h, b in out]
    return text


def _scrub(rows: list[Any]) -> list[Any]:
    """Ids, times and lengths differ between two apps' runs: the rest must not."""
    out = []
    for status, headers, body in rows:
        body = re.sub(rb"call_[0-9a-f]+", b"CALL", body)
        body = re.sub(rb"\d{4}-\d\d-\d\dT[0-9:.]+Z", b"TIME", body)
        headers = [(k, b"ID" if k in (b"content-length", b"x-warden-run-id") else v) for k, v in headers]
        out.append((status, headers, body))
    return out


async def test_the_fast_path_answers_as_starlettes_whole_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = await _serve(True, monkeypatch)
    slow = await _serve(False, monkeypatch)
    statuses = [s for s, _, _ in fast]
    assert statuses == [200, 200, 200, 422, 401, 401, 404, 404, 413, 422, 422, 404, 405, 404, 500, 200]
    assert _scrub(fast) == _scrub(slow)
    assert b"data: [DONE]" in fast[-1][2]
    assert json.loads(fast[7][2])["error"] == json.loads(slow[7][2])["error"]  # Studio's form: a string
    assert isinstance(json.loads(fast[7][2])["error"], str)


async def test_api_requests_skip_starlettes_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = _runtime()
    app = create_app(runtime, token=TOKEN, manage_runtime=False)
    async with runtime:
        assert (await _call(app, "GET", "/api/agents/bench/suspended-runs"))[0] == 200
        assert (await _call(app, "GET", "/api/suspended-runs/none", headers=[]))[0] == 401
        assert app.middleware_stack is None  # Starlette builds its stack on the first request it serves
        assert (await _call(app, "GET", "/api/no/such/route"))[0] == 404
        assert app.middleware_stack is not None


async def test_a_middleware_added_later_sees_every_request() -> None:
    seen: list[str] = []

    class Spy:
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            seen.append(scope.get("path", ""))
            await self.app(scope, receive, send)

    runtime = _runtime()
    app = create_app(runtime, token=TOKEN, manage_runtime=False)
    app.add_middleware(Spy)
    async with runtime:
        assert (await _call(app, "GET", "/api/agents/bench/suspended-runs"))[0] == 200
    assert seen == ["/api/agents/bench/suspended-runs"]
