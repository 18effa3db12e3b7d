"""The UI's ASGI application over a real SQLite store, with named tokens (no browser)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from agent_core import Agent, Runtime
from agent_core.approval_links import LinkSigner
from storage import SqliteStore
from tests.server import warden_test_app as w
from warden_server import ui
from warden_server.app import create_app
from warden_server.tokens import TokenSet, digest

SECRET = "whsec-ui-tests-0123456789"
TOKENS = {"alice": "alice-token-0123456789", "vic": "viewer-token-0123456789"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    agent = Agent(id="ops", name="Ops", instructions="", model=w.make_model("ops"), tools=w.TOOLS)
    runtime = Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "ui.db"))
    tokens = TokenSet([("alice", "approver", digest(TOKENS["alice"])), ("vic", "viewer", digest(TOKENS["vic"]))])
    app = create_app(runtime, tokens=tokens)
    ui.configure_links(app, LinkSigner(SECRET, "http://127.0.0.1"))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def start_run(client: TestClient, message: str = "delete rec-1") -> tuple[str, str]:
    r = client.post(
        "/api/agents/ops/generate", json={"messages": message}, headers={"Authorization": f"Bearer {TOKENS['alice']}"}
    )
    assert r.status_code == 200, r.text
    return r.json()["runId"], r.json()["suspendPayload"]["toolCallId"]


def sign_in(client: TestClient, who: str = "alice") -> str:
    """Sign in; the CSRF token of the session."""
    r = client.post("/ui/signin", data={"token": TOKENS[who]}, follow_redirects=False)
    assert r.status_code == 303, r.text
    page = client.get("/ui/").text
    marker = 'name="csrf" value="'
    return page[page.index(marker) + len(marker) :].split('"', 1)[0]
