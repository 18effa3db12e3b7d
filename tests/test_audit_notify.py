"""Identity on decisions (library), the audit trail's chain, on_pending and signed webhooks."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent_core import Agent, Runtime
from agent_core.notify import PendingNotice
from agent_core.webhooks import SIGNATURE_HEADER, WebhookNotifier, verify_signature
from tests.helpers import drain, recording_tool, script

SECRET = "whsec-test-0123456789"


def runtime(**kw) -> tuple[Runtime, Agent]:
    agent = Agent(
        id="a",
        name="A",
        instructions="",
        model=script([("delete", {"id": "x" * 900}, "c1")], [("delete", {"id": "y"}, "c2")], "done"),
        tools={"delete": recording_tool([])},
    )
    return Runtime({"a": agent}, **kw), agent


async def test_actor_from_the_call_else_the_runtime_and_the_chain_verifies():
    rt, agent = runtime(actor="ops-bot")
    async with rt:
        s = await agent.stream("go")
        await drain(s)
        await drain(await agent.approve_tool_call(run_id=s.run_id, actor="ann"))
        await drain(await rt.decline_tool_call(run_id=s.run_id, reason="no"))
        page = await rt.audit_log()
        assert [(e.decision, e.actor) for e in page.entries] == [("approved", "ann"), ("declined", "ops-bot")]
        assert page.entries[1].reason == "no" and page.entries[1].prev_hash == page.entries[0].hash
        assert (await rt.audit_log(actor="ann")).entries[0].tool_call_id == "c1"
        first = await rt.audit_log(limit=1)
        assert first.next_after == 1 and [e.seq for e in (await rt.audit_log(after=1)).entries] == [2]
        assert (await rt.verify_audit()).ok


async def test_on_pending_is_told_of_each_call_that_starts_waiting():
    seen: list[PendingNotice] = []
    rt, agent = runtime(on_pending=seen.append)
    async with rt:
        s = await agent.stream("go")
        await drain(s)
        await asyncio.sleep(0.05)
        assert [(n.tool_call_id, n.kind, n.tool_name, n.agent_path) for n in seen] == [
            ("c1", "approval", "delete", ["a"])
        ]
        assert len(seen[0].args_summary) <= 500 and seen[0].args_summary.endswith("…")
        await drain(await agent.approve_tool_call(run_id=s.run_id))
        await asyncio.sleep(0.05)
        assert [n.tool_call_id for n in seen] == ["c1", "c2"]


async def test_a_raising_listener_never_fails_the_run():
    def boom(notice):
        raise RuntimeError("listener down")

    rt, agent = runtime(on_pending=boom)
    async with rt:
        s = await agent.stream("go")
        await drain(s)
        assert s.status == "suspended"


class Receiver:
    """A loopback HTTP server that checks signatures; answers 500 to the first ``fail`` requests."""

    def __init__(self, fail: int = 0) -> None:
        self.fail, self.requests, self.verified = fail, 0, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests += 1
                ok = verify_signature(SECRET, self.headers.get(SIGNATURE_HEADER, ""), body)
                if outer.requests <= outer.fail or not ok:
                    self.send_response(500 if ok else 401)
                else:
                    outer.verified.append((json.loads(body), self.headers["Warden-Delivery"]))
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


async def wait_for(cond, timeout=5.0):
    for _ in range(int(timeout / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


async def test_webhook_is_signed_and_a_failing_receiver_gets_retries_until_it_recovers():
    receiver = Receiver(fail=2)
    rt, agent = runtime()
    try:
        async with rt, WebhookNotifier([receiver.url], SECRET, store=rt.store, backoff=0.05) as hooks:
            rt.add_pending_listener(hooks)
            s = await agent.stream("go")
            await drain(s)
            await wait_for(lambda: receiver.verified)
            body, _ = receiver.verified[0]
            assert receiver.requests == 3, "two failures, then the retry that succeeded"
            assert body["runId"] == s.run_id and body["toolCallId"] == "c1" and body["toolName"] == "delete"
            assert body["fingerprint"].startswith("sha256:") and body["agentPath"] == ["a"]
            assert "expiresAt" in body and not hooks.failures
    finally:
        receiver.close()


async def test_a_delivery_that_fails_for_good_is_logged_in_the_audit_trail():
    receiver = Receiver(fail=100)
    rt, agent = runtime()
    try:
        async with rt, WebhookNotifier([receiver.url], SECRET, store=rt.store, backoff=0.01, attempts=3) as hooks:
            rt.add_pending_listener(hooks)
            await drain(await agent.stream("go"))
            await wait_for(lambda: hooks.failures)
            await asyncio.sleep(0.1)
            entries = (await rt.audit_log(decision="notification-failed")).entries
            assert receiver.requests == 3 and len(entries) == 1
            assert entries[0].actor == "warden-webhook" and "HTTP 500 after 3 attempts" in (entries[0].reason or "")
    finally:
        receiver.close()
