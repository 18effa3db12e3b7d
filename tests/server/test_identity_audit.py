"""Named tokens and roles, actors from token names, GET /api/audit, `warden audit` (a real server process)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.server.helpers import error_of, raw, sse_post, types
from tests.server.test_routes_raw import A, suspend_delete
from warden_server.tokens import add_token

REPO = Path(__file__).resolve().parents[2]


def warden(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.pop("WARDEN_ACTOR", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "warden_cli", *args], cwd=REPO, env=full, capture_output=True, text=True, timeout=120
    )


def test_tokens_add_prints_the_secret_once_and_stores_only_its_hash(tmp_path):
    f = tmp_path / "tokens.json"
    out = warden("tokens", "add", "ann", "--role", "viewer", "--file", str(f))
    assert out.returncode == 0, out.stderr
    secret = out.stdout.strip()
    assert secret.startswith("wdn_") and secret not in f.read_text()
    assert json.loads(f.read_text())["tokens"][0]["role"] == "viewer"
    assert oct(f.stat().st_mode & 0o777) == "0o600"
    bad = warden("tokens", "add", "bob", "--role", "root", "--file", str(f))
    assert bad.returncode == 2 and "role" in bad.stderr


def test_roles_actors_and_the_audit_route(servers, tmp_path):
    f = tmp_path / "tokens.json"
    viewer, approver = add_token(f, "vera", "viewer"), add_token(f, "ann", "approver")
    server = servers.start("a", token=None, extra_args=("--tokens-file", str(f)))
    with raw(server.url, token=approver) as ann, raw(server.url, token=viewer) as vera:
        approval = suspend_delete(ann, "r1")
        run_id = approval["runId"]
        # a viewer may look but not decide: 403, and the call is still pending, nothing ran
        assert vera.get(f"{A}/suspended-runs").status_code == 200
        r = vera.post(f"{A}/approve-tool-call", json={"runId": run_id})
        assert r.status_code == 403 and error_of(r)["code"] == "FORBIDDEN" and "viewer" in error_of(r)["message"]
        assert vera.post(f"{A}/stream", json={"messages": "hi"}).status_code == 403
        assert servers.executions("delete-record") == []
        assert [x["runId"] for x in vera.get(f"{A}/suspended-runs").json()["runs"]] == [run_id]
        assert vera.get("/api/audit").json()["entries"] == []
        # an approver decides; the audit names the token
        r, chunks = sse_post(ann, f"{A}/approve-tool-call", {"runId": run_id})
        assert r.status_code == 200 and "tool-result" in types(chunks)
        second = suspend_delete(ann, "r2", thread="t2")
        r, _ = sse_post(ann, f"{A}/decline-tool-call", {"runId": second["runId"], "reason": "not that one"})
        assert r.status_code == 200
        suspend_delete(ann, "r3", thread="t3")
        r = ann.post(f"{A}/send-tool-approval", json={"threadId": "t3", "approved": False})
        assert r.status_code == 200, r.text
        page = vera.get("/api/audit").json()
        assert [(e["actor"], e["decision"], e["runId"]) for e in page["entries"]][:2] == [
            ("ann", "approved", run_id),
            ("ann", "declined", second["runId"]),
        ]
        assert [(e["actor"], e["decision"]) for e in page["entries"][2:]] == [("ann", "declined")]
        assert page["entries"][1]["reason"] == "not that one" and page["entries"][1]["prevHash"]
        assert page["nextAfter"] is None
        one = vera.get("/api/audit", params={"limit": 1}).json()
        assert len(one["entries"]) == 1 and one["nextAfter"] == 1
        rest = vera.get("/api/audit", params={"after": 1}).json()["entries"]
        assert [e["seq"] for e in rest] == [2, 3]
        assert vera.get("/api/audit", params={"runId": run_id}).json()["entries"][0]["decision"] == "approved"
        assert vera.get("/api/audit", params={"actor": "nobody"}).json()["entries"] == []
        assert vera.get("/api/audit", params={"since": "2999-01-01T00:00:00Z"}).json()["entries"] == []
        assert vera.get("/api/audit", params={"limit": 0}).status_code == 422
    with raw(server.url, token="wdn_not-a-token") as nobody:
        assert nobody.get("/api/audit").status_code == 401


def test_cli_actor_audit_json_and_verify_detects_an_edited_row(servers, tmp_path):
    server = servers.start("a")  # the server's store is the CLI's --db
    db = str(servers.db)
    with raw(server.url) as c:
        first_run = suspend_delete(c, "r1")["runId"]
        second_run = suspend_delete(c, "r2", thread="t2")["runId"]
    app = "tests.server.warden_test_app:runtime"
    env = {"WARDEN_TEST_DB": db, "WARDEN_TEST_COUNTER_DB": str(servers.counter_db), "PYTHONPATH": str(REPO)}
    out = warden("runs", "decline", first_run, "--reason", "no", "--app", app, "--actor", "carol", env=env)
    assert out.returncode == 0, out.stderr
    out = warden("runs", "decline", second_run, "--app", app, env={**env, "WARDEN_ACTOR": "dave"})
    assert out.returncode == 0, out.stderr
    listed = warden("audit", "--json", "--db", db, env=env)
    assert listed.returncode == 0, listed.stderr
    entries = json.loads(listed.stdout)
    assert [(e["actor"], e["decision"], e["runId"]) for e in entries] == [
        ("carol", "declined", first_run),
        ("dave", "declined", second_run),
    ]
    lines = warden("audit", "--jsonl", "--actor", "dave", "--db", db, env=env).stdout.splitlines()
    assert [json.loads(x)["runId"] for x in lines] == [second_run]
    table = warden("audit", "--since", "1h", "--db", db, env=env).stdout
    assert "carol" in table and "declined" in table
    ok = warden("audit", "verify", "--db", db, env=env)
    assert ok.returncode == 0 and "2 entries verified" in ok.stdout, ok.stdout + ok.stderr
    con = sqlite3.connect(db)
    with con:
        con.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = 1")
    con.close()
    broken = warden("audit", "verify", "--db", db, env=env)
    assert broken.returncode == 1 and "entry 1" in broken.stderr, broken.stdout + broken.stderr


def test_cli_records_the_os_user_by_default(servers):
    import getpass

    server = servers.start("a")
    with raw(server.url) as c:
        run_id = suspend_delete(c, "r1")["runId"]
    app = "tests.server.warden_test_app:runtime"
    env = {"WARDEN_TEST_DB": str(servers.db), "WARDEN_TEST_COUNTER_DB": str(servers.counter_db)}
    assert warden("runs", "decline", run_id, "--app", app, env=env).returncode == 0
    out = json.loads(warden("audit", "--json", "--db", str(servers.db), env=env).stdout)
    assert out[0]["actor"] == getpass.getuser()


def test_serve_webhook_posts_a_signed_notice_when_a_call_waits(servers):
    import time

    from tests.test_audit_notify import SECRET, Receiver

    receiver = Receiver(fail=1)
    try:
        server = servers.start("a", extra_args=("--webhook", receiver.url, "--webhook-secret", SECRET))
        with raw(server.url) as c:
            run_id = suspend_delete(c, "r1")["runId"]
        deadline = time.monotonic() + 20
        while not receiver.verified and time.monotonic() < deadline:
            time.sleep(0.05)
        body, delivery = receiver.verified[0]
        assert body["runId"] == run_id and body["toolName"] == "delete_tool" and body["kind"] == "approval"
        assert receiver.requests == 2 and delivery, "retried after the first failure, same delivery id"
    finally:
        receiver.close()


def test_sdk_reads_the_audit_and_a_viewer_gets_forbidden(servers, tmp_path):
    import asyncio

    from warden_client import Forbidden, SyncWardenClient, WardenClient

    f = tmp_path / "tokens.json"
    viewer, approver = add_token(f, "vera", "viewer"), add_token(f, "ann", "approver")
    server = servers.start("a", token=None, extra_args=("--tokens-file", str(f)))
    with SyncWardenClient(server.url, token=approver) as ann, SyncWardenClient(server.url, token=viewer) as vera:
        with raw(server.url, token=approver) as c:
            run_id = suspend_delete(c, "r1")["runId"]
        try:
            vera.agent("ops").approve_tool_call(run_id=run_id).consume()
            raise AssertionError("a viewer decided")
        except Forbidden:
            pass
        ann.agent("ops").decline_tool_call(run_id=run_id, reason="no").consume()
        page = vera.audit_log()
        assert [(e.actor, e.decision, e.run_id) for e in page.entries] == [("ann", "declined", run_id)]

    async def read() -> list[str | None]:
        async with WardenClient(server.url, token=viewer) as client:
            return [e.actor for e in (await client.audit_log(actor="ann")).entries]

    assert asyncio.run(read()) == ["ann"]
