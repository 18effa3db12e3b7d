"""Issue #11: inputs that gave HTTP 500 (or held a worker), blank tokens, and internals in error answers.

Raw HTTP (httpx, and raw sockets for the slow body) against a real ``python -m warden_server``;
in-process (ASGI) for the storage-error mapping, which needs a store that fails on demand.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from agent_core.errors import SnapshotNotFound, StoreCorrupt, StoreUnavailable, UnstorableText
from tests.server.helpers import TOKEN, error_of, raw, sse_post
from tests.server.procs import REPO, ServerFactory, ServerProc
from warden_server import create_app

BODY_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    factory = ServerFactory(tmp_path_factory.mktemp("hardening"))
    server = factory.start("h", extra_args=("--body-timeout", str(BODY_TIMEOUT)))
    yield server
    factory.stop_all()
    assert "Traceback" not in server.log(), server.log()[-4000:]


def post_raw(server: ServerProc, path: str, content: bytes) -> httpx.Response:
    with raw(server.url) as c:
        return c.post(path, content=content, headers={"Content-Type": "application/json"})


def assert_422(r: httpx.Response, *words: str) -> str:
    assert r.status_code == 422, r.text
    err = error_of(r)
    assert err["code"] == "INVALID_REQUEST", err
    for w in words:
        assert w in err["message"], err["message"]
    return err["message"]


# ------------------------------------------------------------------------------------------------
# bodies that gave 500


@pytest.mark.parametrize("path", ["/api/agents/ops/stream", "/api/agents/ops/approve-tool-call"])
def test_deep_nesting_is_422(live: ServerProc, path: str) -> None:
    assert_422(post_raw(live, path, b"[" * 2048), "nested too deeply")
    body = b'{"messages": "hi", "requestContext": ' + b'{"a": ' * 3000 + b"1" + b"}" * 3000 + b"}"
    assert_422(post_raw(live, path, body), "nested too deeply")
    # deep but parseable: still refused, naming where
    body = b'{"messages": "hi", "requestContext": ' + b"[" * 200 + b"]" * 200 + b"}"
    assert_422(post_raw(live, path, body), "nested too deeply", "requestContext")


def test_huge_integer_literal_is_422_naming_the_field(live: ServerProc) -> None:
    body = b'{"runId": "r", "resumeData": {"n": ' + b"9" * 5000 + b"}}"
    assert_422(post_raw(live, "/api/agents/ops/resume-stream", body), "resumeData.n", "5000 digits")


@pytest.mark.parametrize(
    "path,body,field",
    [
        ("/api/agents/ops/approve-tool-call", '{"runId": "r", "toolCallId": "\\ud800"}', "toolCallId"),
        ("/api/agents/ops/stream", '{"messages": "hi \\udfff"}', "messages"),
        ("/api/agents/ops/stream", '{"messages": [{"role": "user", "content": "\\ud800"}]}', "messages[0].content"),
        ("/api/agents/ops/decline-tool-call", '{"runId": "r", "reason": "\\udc00x"}', "reason"),
    ],
)
def test_lone_surrogate_is_422_naming_the_field(live: ServerProc, path: str, body: str, field: str) -> None:
    assert_422(post_raw(live, path, body.encode()), field, "surrogate")


def test_non_finite_numbers_are_422(live: ServerProc) -> None:
    for lit in (b"NaN", b"Infinity", b"1e999"):
        body = b'{"messages": "hi", "requestContext": {"x": ' + lit + b"}}"
        assert_422(post_raw(live, "/api/agents/ops/generate", body), "requestContext.x")


@pytest.mark.parametrize(
    "query,field",
    [
        ("page=99999999999999999999", "page"),
        ("page=-1", "page"),
        ("perPage=0", "perPage"),
        ("perPage=10001", "perPage"),
    ],
)
def test_out_of_range_paging_is_422(live: ServerProc, query: str, field: str) -> None:
    with raw(live.url) as c:
        for path in ("/api/agents/ops/suspended-runs", "/api/suspended-runs"):
            assert_422(c.get(f"{path}?{query}"), field)


def test_memory_thread_needs_an_id_in_the_schema_too(live: ServerProc) -> None:
    with raw(live.url) as c:
        r = c.post("/api/agents/ops/generate", json={"messages": "hi", "memory": {"thread": {"title": "x"}}})
        assert_422(r, "memory.thread")
        doc = c.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    assert schemas["ThreadRef"]["required"] == ["id"]
    send = schemas["SendToolApprovalBody"]
    assert {"required": ["threadId"], "properties": {"threadId": {"type": "string"}}} in send["anyOf"]
    with raw(live.url) as c:
        r = c.post("/api/agents/ops/send-tool-approval", json={"approved": True})
        assert_422(r, "threadId")


def test_openapi_documents_errors_and_sse_events(live: ServerProc) -> None:
    with raw(live.url) as c:
        doc = c.get("/openapi.json").json()
    stream = doc["paths"]["/api/agents/{agentId}/stream"]["post"]["responses"]
    assert {"401", "404", "408", "413", "422", "503"} <= set(stream)
    event = stream["200"]["content"]["text/event-stream"]["itemSchema"]
    assert event["properties"]["data"]["anyOf"][1]["contentSchema"] == {"$ref": "#/components/schemas/Chunk"}
    approve = doc["paths"]["/api/agents/{agentId}/approve-tool-call"]["post"]["responses"]
    assert {"409", "412"} <= set(approve)
    for ops in doc["paths"].values():
        for op in ops.values():
            for status, resp in op["responses"].items():
                if status != "200":
                    assert resp["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}


# ------------------------------------------------------------------------------------------------
# slow and short bodies


def _raw_request(server: ServerProc, head: bytes, body: bytes, *, trickle: float = 0.0) -> tuple[float, bytes]:
    u = urlparse(server.url)
    sock = socket.create_connection((u.hostname, u.port), timeout=30)
    try:
        start = time.monotonic()
        sock.sendall(head)
        if trickle:
            for b in body:
                try:
                    sock.sendall(bytes([b]))
                except OSError:  # the server answered and closed: stop sending, read the answer
                    break
                time.sleep(trickle)
        else:
            sock.sendall(body)
        data = b""
        while True:
            try:
                part = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not part:
                break
            data += part
        return time.monotonic() - start, data
    finally:
        sock.close()


def _head(length: int) -> bytes:
    return (
        f"POST /api/agents/ops/generate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def test_short_body_times_out_with_408_and_closes(live: ServerProc) -> None:
    elapsed, data = _raw_request(live, _head(100), b'{"messages"')
    assert data.startswith(b"HTTP/1.1 408"), data[:200]
    assert b"REQUEST_TIMEOUT" in data
    assert BODY_TIMEOUT - 0.5 <= elapsed < BODY_TIMEOUT + 3, elapsed  # answered, and the connection closed


def test_trickled_body_times_out(live: ServerProc) -> None:
    body = b'{"messages": "hi hi hi hi hi"}'
    elapsed, data = _raw_request(live, _head(len(body)), body, trickle=0.2)
    assert b" 408 " in data.split(b"\r\n")[0], data[:200]
    assert elapsed < BODY_TIMEOUT + len(body) * 0.2 + 3


def test_default_body_deadline_is_a_few_seconds() -> None:
    from warden_server.app import DEFAULT_BODY_TIMEOUT_SECONDS

    assert 1 <= DEFAULT_BODY_TIMEOUT_SECONDS <= 10


# ------------------------------------------------------------------------------------------------
# no server internals over HTTP


def _assert_no_internals(text: str, server: ServerProc) -> None:
    for secret in ("SqliteStore", "InMemoryStore", str(server.db), server.db.name, "Traceback"):
        assert secret not in text, (secret, text)


def test_unknown_run_and_repeated_decision_reveal_no_store(live: ServerProc) -> None:
    with raw(live.url) as c:
        r = c.post("/api/agents/ops/approve-tool-call", json={"runId": "no-such-run"})
        assert r.status_code == 404 and error_of(r)["code"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
        assert "no-such-run" in error_of(r)["message"]
        _assert_no_internals(r.text, live)
        r = c.get("/api/suspended-runs/no-such-run")
        assert r.status_code == 404
        _assert_no_internals(r.text, live)

        r, chunks = sse_post(c, "/api/agents/ops/stream", {"messages": "delete 42"})
        approval = next(ch for ch in chunks if ch["type"] == "tool-call-approval")
        run_id, call_id = approval["runId"], approval["payload"]["toolCallId"]
        body = {"runId": run_id, "toolCallId": call_id}
        r, _ = sse_post(c, "/api/agents/ops/approve-tool-call", body)
        assert r.status_code == 200
        r = c.post("/api/agents/ops/approve-tool-call", json=body)
        assert r.status_code == 409 and error_of(r)["code"] == "AGENT_TOOL_CALL_ALREADY_DECIDED", r.text
        _assert_no_internals(r.text, live)
        r = c.post("/api/agents/other/decline-tool-call", json={"runId": run_id})
        assert r.status_code in (404, 409)
        _assert_no_internals(r.text, live)


class _FailingRuntime:
    """A runtime whose store fails: enough of ``Runtime`` for the routes used below."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.agents: dict[str, Any] = {}
        self.store = type("S", (), {"name": "SqliteStore('/srv/secret/warden.db')", "path": "/srv/secret/warden.db"})()

    async def get_suspended_run(self, run_id: str) -> Any:
        raise self.exc

    async def list_suspended_runs(self, **kw: Any) -> Any:
        raise self.exc


@pytest.mark.parametrize(
    "exc,status,code",
    [
        (StoreUnavailable("SqliteStore('/srv/secret/warden.db') cannot be opened: permission denied"), 503, None),
        (StoreCorrupt("SqliteStore('/srv/secret/warden.db') is not a Warden database"), 503, None),
        (UnstorableText("cannot store '\\ud800' in SqliteStore('/srv/secret/warden.db')"), 422, None),
        (SnapshotNotFound("no suspended run 'r' in SqliteStore('/srv/secret/warden.db')"), 404, None),
        (RuntimeError("boom at /srv/secret/warden.db"), 500, "INTERNAL_ERROR"),
    ],
)
async def test_storage_errors_map_to_safe_answers(exc: Exception, status: int, code: str | None) -> None:
    app = create_app(_FailingRuntime(exc), manage_runtime=False)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        for path in ("/api/suspended-runs/r", "/api/suspended-runs"):
            r = await c.get(path)
            assert r.status_code == status, r.text
            err = error_of(r)
            assert err["code"] == (code or exc.code), err
            assert "/srv/secret" not in r.text and "SqliteStore" not in r.text and "warden.db" not in r.text


# ------------------------------------------------------------------------------------------------
# tokens


@pytest.mark.parametrize("how", ["flag-blank", "flag-empty", "env-blank", "env-empty"])
def test_blank_token_is_refused_at_start(how: str) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    env.pop("WARDEN_API_TOKEN", None)
    args = [sys.executable, "-m", "warden_server", "--app", "tests.server.warden_test_app:runtime", "--port", "0"]
    value = "   " if how.endswith("blank") else ""
    if how.startswith("flag"):
        args += ["--token", value]
    else:
        env["WARDEN_API_TOKEN"] = value
    p = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "token" in lines[0] and "blank" in lines[0], p.stderr
    assert "listening" not in p.stdout


def test_create_app_refuses_a_blank_token() -> None:
    for bad in ("", "   ", " padded ", "a\nb"):
        with pytest.raises(ValueError):
            create_app(_FailingRuntime(RuntimeError()), token=bad, manage_runtime=False)


def test_parse_limits_unit() -> None:
    from warden_server.limits import InvalidBody, parse_json_body

    assert parse_json_body(b'{"a": [1, 2.5, "x"]}') == {"a": [1, 2.5, "x"]}
    for bad in (b"[" * 100_000, b'{"\\ud800": 1}', b"[" + b"1" * 1001 + b"]"):
        with pytest.raises(InvalidBody):
            parse_json_body(bad)
    json.dumps(parse_json_body(b'{"n": ' + b"1" * 1000 + b"}"))  # at the limit: accepted
