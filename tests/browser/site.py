"""A real ``warden serve`` process with named tokens, approval links and a webhook receiver.

The server is ``python -m warden_server`` on loopback (``tests.server.procs``); runs
are started through its HTTP API with an admin token, then decided from Chromium.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from agent_core.webhooks import SIGNATURE_HEADER, verify_signature
from tests.server.procs import ServerFactory, ServerProc
from warden_server.tokens import add_token

WEBHOOK_SECRET = "whsec-browser-tests-0123456789"
#: a safety net for things that happen in the background (a webhook delivery); not a speed claim.
WAIT_GUARD_SECONDS = 60
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE = {"width": 390, "height": 844}


class Receiver:
    """An HTTP endpoint on loopback that keeps every webhook body whose signature checks out."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.bad: list[bytes] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                if verify_signature(WEBHOOK_SECRET, self.headers.get(SIGNATURE_HEADER, ""), raw):
                    outer.bodies.append(json.loads(raw))
                else:
                    outer.bad.append(raw)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def body_for(self, tool_call_id: str) -> dict[str, Any]:
        guard = time.monotonic() + WAIT_GUARD_SECONDS
        while time.monotonic() < guard:
            for body in self.bodies:
                if body.get("toolCallId") == tool_call_id:
                    return body
            time.sleep(0.05)
        raise AssertionError(f"no signed webhook for call {tool_call_id} (unsigned or bad: {len(self.bad)})")

    def close(self) -> None:
        self.server.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Site:
    server: ServerProc
    factory: ServerFactory
    receiver: Receiver
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.tokens['root']}"}, timeout=60)

    def start_run(self, message: str, agent: str = "ops", **options: Any) -> tuple[str, str]:
        """Start a run that stops at a pending call; its run id and tool call id."""
        with self.api() as api:
            r = api.post(f"/api/agents/{agent}/generate", json={"messages": message, **options})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["finishReason"] == "suspended", body
        return body["runId"], body["suspendPayload"]["toolCallId"]

    def pending(self, run_id: str) -> bool:
        with self.api() as api:
            return api.get(f"/api/suspended-runs/{run_id}").status_code == 200

    def audit(self, run_id: str) -> list[dict[str, Any]]:
        with self.api() as api:
            r = api.get("/api/audit", params={"runId": run_id})
        assert r.status_code == 200, r.text
        return list(r.json()["entries"])


def start_site(tmp: Path, *, link_actor: str | None = None) -> Site:
    tokens_file = tmp / "tokens.json"
    tokens = {
        "alice": add_token(tokens_file, "alice", "approver"),
        "vic": add_token(tokens_file, "vic", "viewer"),
        "root": add_token(tokens_file, "root", "admin"),
    }
    receiver = Receiver()
    port = free_port()
    factory = ServerFactory(tmp)
    args = [
        "--tokens-file",
        str(tokens_file),
        "--port",
        str(port),
        "--public-url",
        f"http://127.0.0.1:{port}",
        "--webhook",
        receiver.url,
        "--webhook-secret",
        WEBHOOK_SECRET,
    ]
    if link_actor:
        args += ["--link-actor", link_actor]
    server = factory.start("ui", token=None, extra_args=tuple(args))
    return Site(server, factory, receiver, tokens)
