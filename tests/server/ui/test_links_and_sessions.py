"""Approval-link tokens and UI sessions: what verifies, what is refused and why; the start-up
refusals of ``warden serve`` (unsigned webhooks, links without a secret); the escaping of
untrusted text into HTML."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from agent_core.approval_links import MAX_AGE_SECONDS, LinkExpired, LinkInvalid, LinkSigner
from tests.server.procs import REPO
from tests.server.ui.conftest import SECRET, sign_in, start_run
from warden_server.tokens import Identity
from warden_server.ui.render import json_for_editing, json_html, untrusted
from warden_server.ui.session import SessionKeeper


def test_a_link_verifies_with_its_claims_and_expires_within_24h() -> None:
    signer = LinkSigner(SECRET, "https://warden.example/")
    now = time.time()
    token = signer.token("approve", "run-1", "call-1", "sha256:ab", now=now)
    claims = signer.verify(token, now=now)
    assert (claims.action, claims.run_id, claims.tool_call_id, claims.fingerprint) == (
        "approve",
        "run-1",
        "call-1",
        "sha256:ab",
    )
    assert claims.expires_at == int(now + MAX_AGE_SECONDS)
    with pytest.raises(LinkExpired):
        signer.verify(token, now=now + MAX_AGE_SECONDS + 1)
    far = signer.token("approve", "run-1", "call-1", "sha256:ab", deadline=now + 10 * MAX_AGE_SECONDS, now=now)
    assert signer.verify(far, now=now).expires_at == int(now + MAX_AGE_SECONDS)  # capped at 24 h
    soon = signer.token("decline", "run-1", "call-1", "sha256:ab", deadline=now + 60, now=now)
    assert signer.verify(soon, now=now).expires_at == int(now + 60)  # the call's deadline
    links = signer.links("run-1", "call-1", "sha256:ab")
    assert links["view"].startswith("https://warden.example/ui/links/")


@pytest.mark.parametrize("mangle", ["flip-mac", "flip-claims", "other-secret", "non-ascii", "no-dot", "empty"])
def test_a_tampered_link_is_invalid(mangle: str) -> None:
    signer = LinkSigner(SECRET, "http://x")
    token = signer.token("approve", "run-1", "call-1", "sha256:ab")
    payload, mac = token.split(".")
    bad = {
        "flip-mac": f"{payload}.{mac[:-1]}{'A' if mac[-1] != 'A' else 'B'}",
        "flip-claims": f"{payload[:-2]}xx.{mac}",
        "other-secret": LinkSigner("other", "http://x").token("approve", "run-1", "call-1", "sha256:ab"),
        "non-ascii": f"{payload}é.{mac}",
        "no-dot": payload,
        "empty": "",
    }[mangle]
    with pytest.raises(LinkInvalid):
        signer.verify(bad)


def test_sessions_are_signed_and_expire() -> None:
    keeper = SessionKeeper(lifetime=3600)
    session, cookie = keeper.issue(Identity("alice", "approver"))
    assert keeper.read(cookie) == session and session.allows("approver") and not session.allows("admin")
    payload, mac = cookie.split(".")
    assert keeper.read(f"{payload}.{mac[::-1]}") is None
    assert SessionKeeper().read(cookie) is None  # another server process's key
    assert keeper.read(None) is None and keeper.read("é") is None
    assert keeper.check_csrf(session, keeper.csrf(session))
    other, _ = keeper.issue(Identity("bob", "approver"))
    assert not keeper.check_csrf(session, keeper.csrf(other)) and not keeper.check_csrf(session, None)
    keeper.revoke(session)  # signed out: the same cookie is refused from now on
    assert keeper.read(cookie) is None and keeper.read(keeper.issue(None)[1]) is not None
    late = SessionKeeper(lifetime=-1)
    _, old = late.issue(None)
    assert late.read(old) is None


def test_untrusted_text_is_escaped_and_hidden_characters_shown() -> None:
    html = str(untrusted("<b>x</b>\x1b[2J\u202e\u200b\U000e0041"))
    assert html == (
        "&lt;b&gt;x&lt;/b&gt;"
        '<span class="esc">\\x1b</span>[2J<span class="esc">\\u202e</span>'
        '<span class="esc">\\u200b</span><span class="esc">\\U000e0041</span>'
    )
    assert str(json_html({"k": "\x07"})) == '{\n  &#34;k&#34;: &#34;<span class="esc">\\u0007</span>&#34;\n}'
    edited = json_for_editing({"k": "a\u202eb\U000e0041"})
    assert "\u202e" not in edited and "\\u202e" in edited and "\\udb40\\udc41" in edited
    assert json.loads(edited) == {"k": "a\u202eb\U000e0041"}  # edits back to exactly the same value


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "warden_server", "--app", "tests.server.warden_test_app:runtime", "--port", "0", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "WARDEN_WEBHOOK_SECRET": ""},
    )


def test_serve_refuses_unsigned_webhooks_and_unsigned_links(tmp_path: Path) -> None:
    db = ["--log-level", "warning"]
    r = _serve("--webhook", "http://127.0.0.1:9/hook", *db)
    assert (
        r.returncode == 2 and "webhooks without a secret are refused" in r.stderr and "--webhook-unsigned" in r.stderr
    )
    r = _serve("--public-url", "http://127.0.0.1:4111", *db)
    assert r.returncode == 2 and "approval links are signed with the webhook secret" in r.stderr
    r = _serve("--public-url", "ftp://x", "--webhook-secret", "s", *db)
    assert r.returncode == 2 and "expected an http:// or https:// URL" in r.stderr
    r = _serve("--link-actor", "bob", *db)
    assert r.returncode == 2 and "needs --public-url" in r.stderr
    # the same through `warden serve`
    r = subprocess.run(
        [str(Path(sys.executable).with_name("warden")), "serve", "--webhook", "http://127.0.0.1:9/h"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "WARDEN_WEBHOOK_SECRET": "", "WARDEN_DB": str(tmp_path / "demo.db")},
    )
    assert r.returncode == 2 and "webhooks without a secret are refused" in r.stderr, r.stderr


def test_ui_pages_carry_the_security_headers(client: TestClient) -> None:
    for path in ("/ui/signin", "/ui/static/ui.css", "/ui/links/nope"):
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp and "frame-ancestors 'none'" in csp
        assert r.headers["x-frame-options"] == "DENY" and r.headers["referrer-policy"] == "same-origin"


def test_the_api_still_needs_its_bearer_token(client: TestClient) -> None:
    sign_in(client)  # a UI session cookie is no API credential
    assert client.get("/api/agents").status_code == 401
    run_id, _ = start_run(client)
    assert client.get(f"/api/suspended-runs/{run_id}").status_code == 401


def test_under_a_root_path_every_address_has_the_prefix(client: TestClient) -> None:
    prefixed = TestClient(client.app, base_url="http://127.0.0.1", root_path="/warden")
    r = prefixed.get("/warden/ui/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/warden/ui/signin"
    from tests.server.ui.conftest import TOKENS

    r = prefixed.post("/warden/ui/signin", data={"token": TOKENS["alice"]}, follow_redirects=False)
    assert r.headers["location"] == "/warden/ui/" and "Path=/warden/ui/" in r.headers["set-cookie"]
    page = prefixed.get("/warden/ui/").text
    assert 'href="/warden/ui/static/ui.css"' in page and 'action="/warden/ui/signout"' in page


def test_without_tokens_the_local_operator_decides_and_other_host_names_are_refused(tmp_path: Path) -> None:
    from agent_core import Agent, Runtime
    from storage import SqliteStore
    from tests.server import warden_test_app as w
    from warden_server.app import create_app

    agent = Agent(id="ops", name="Ops", instructions="", model=w.make_model("ops"), tools=w.TOOLS)
    runtime = Runtime(agents={"ops": agent}, storage=SqliteStore(tmp_path / "open.db"), actor="local-op")
    with TestClient(create_app(runtime), base_url="http://127.0.0.1:4111") as local:
        r = local.post("/api/agents/ops/generate", json={"messages": "delete rec-9"})
        run_id, call_id = r.json()["runId"], r.json()["suspendPayload"]["toolCallId"]
        page = local.get("/ui/")
        assert page.status_code == 200 and "delete_tool" in page.text and "Sign out" not in page.text
        marker = 'name="csrf" value="'
        call_page = local.get(f"/ui/call?run={run_id}&call={call_id}").text
        csrf = call_page[call_page.index(marker) + len(marker) :].split('"', 1)[0]
        # a page of another name re-pointed at this address (DNS rebinding) gets nothing
        assert local.get("/ui/", headers={"host": "evil.example:4111"}).status_code == 403
        r = local.post(
            "/ui/decide",
            data={"csrf": csrf, "run": run_id, "call": call_id, "action": "approve"},
            headers={"host": "evil.example:4111", "origin": "http://evil.example:4111"},
        )
        assert r.status_code == 403
        assert local.get(f"/api/suspended-runs/{run_id}").status_code == 200
        r = local.post("/ui/decide", data={"csrf": csrf, "run": run_id, "call": call_id, "action": "approve"})
        assert r.status_code == 200 and "Approved" in r.text
        entries = local.get("/api/audit", params={"runId": run_id}).json()["entries"]
        assert [(e["decision"], e["actor"]) for e in entries] == [("approved", "local-op")]
