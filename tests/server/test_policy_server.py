"""Four eyes over HTTP (a real server process): the token that started the run never counts,
a vote that leaves the quorum short re-emits the approval with its votes, the second person runs it."""

from __future__ import annotations

import pytest

from tests.server.helpers import error_of, first, raw, sse_post, types
from tests.server.test_routes_raw import A, suspend_delete
from warden_client import SyncWardenClient
from warden_server.tokens import add_token

POLICY = """
[[rules]]
id = "deletes"
tools = ["delete*"]
decision = "ask"
approvers = 2
reason = "deletes need two people"
"""


def test_quorum_over_http(servers, tmp_path, monkeypatch):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    monkeypatch.setenv("WARDEN_POLICY", str(policy))  # the server process loads it with its --app
    tokens = tmp_path / "tokens.json"
    bob, alice, carol = (add_token(tokens, name, "approver") for name in ("bob", "alice", "carol"))
    server = servers.start("a", token=None, extra_args=("--tokens-file", str(tokens)))
    with raw(server.url, token=bob) as b, raw(server.url, token=alice) as a, raw(server.url, token=carol) as c:
        approval = suspend_delete(b, "r1")
        assert approval["payload"]["policyRule"] == "deletes"
        assert (approval["payload"]["approversRequired"], approval["payload"]["approvals"]) == (2, [])
        run_id = approval["runId"]
        r = b.post(f"{A}/approve-tool-call", json={"runId": run_id})
        assert error_of(r)["code"] == "AGENT_SELF_APPROVAL"
        r, chunks = sse_post(a, f"{A}/approve-tool-call", {"runId": run_id})
        assert r.status_code == 200, r.text
        again = first(chunks, "tool-call-approval")
        assert [v["actor"] for v in again["payload"]["approvals"]] == ["alice"]
        assert "tool-result" not in types(chunks) and servers.executions("delete-record") == []
        r = a.post(f"{A}/approve-tool-call", json={"runId": run_id})
        assert error_of(r)["code"] == "AGENT_ALREADY_VOTED"
        context = a.get(f"/api/runs/{run_id}/context").json()["calls"][approval["payload"]["toolCallId"]]
        assert (context["policyRule"], context["approversRequired"]) == ("deletes", 2)
        assert [v["actor"] for v in context["approvals"]] == ["alice"]
        [listed] = a.get("/api/suspended-runs").json()["runs"]  # every listed call shows them too
        assert listed["requestedBy"] == "bob"
        [call] = listed["toolCalls"]
        assert (call["policyRule"], call["approversRequired"]) == ("deletes", 2)
        assert [v["actor"] for v in call["approvals"]] == ["alice"]
        with SyncWardenClient(server.url, token=alice) as client:
            [run] = client.list_suspended_runs().runs
        assert run.requested_by == "bob" and [v["actor"] for v in run.tool_calls[0].approvals] == ["alice"]
        assert (run.tool_calls[0].policy_rule, run.tool_calls[0].approvers_required) == ("deletes", 2)
        r, chunks = sse_post(c, f"{A}/approve-tool-call", {"runId": run_id})
        assert r.status_code == 200 and "tool-result" in types(chunks)
        assert len(servers.executions("delete-record")) == 1
        entries = a.get("/api/audit").json()["entries"]
        assert [(e["actor"], e["decision"]) for e in entries] == [
            ("alice", "vote"),
            ("carol", "vote"),
            ("carol", "approved"),
        ]
        assert {e["policyRule"] for e in entries} == {"deletes"}
        assert all(e["policyVersion"].startswith("sha256:") for e in entries)


def test_the_client_sends_who_starts_a_run(servers, tmp_path):
    """``stream(actor=)`` through the client SDK: recorded as the run's ``requested_by`` without auth;
    with tokens it must be the token's name (another name is ``InvalidRequest``, nothing started)."""
    from agent_core.errors import InvalidRequest

    tokens = tmp_path / "tokens.json"
    bob = add_token(tokens, "bob", "approver")
    open_server = servers.start("open", token=None)
    with SyncWardenClient(open_server.url) as client:
        stream = client.agent("ops").stream("delete o1", actor="dave")
        list(stream.full_stream)
        assert stream.status == "suspended"
        [run] = [r for r in client.list_suspended_runs().runs if r.run_id == stream.run_id]
        assert run.requested_by == "dave"
    guarded = servers.start("guarded", token=None, extra_args=("--tokens-file", str(tokens)))
    with SyncWardenClient(guarded.url, token=bob) as client:
        before = client.list_suspended_runs().total
        with pytest.raises(InvalidRequest) as error:
            client.agent("ops").stream("delete o2", actor="mallory")
        assert "mallory" in str(error.value) and "bob" in str(error.value)
        assert client.list_suspended_runs().total == before and servers.executions("delete-record") == []
        stream = client.agent("ops").stream("delete o3", actor="bob")
        list(stream.full_stream)
        [run] = [r for r in client.list_suspended_runs().runs if r.run_id == stream.run_id]
        assert run.requested_by == "bob"
