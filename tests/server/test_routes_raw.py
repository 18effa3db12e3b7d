"""Every route over raw HTTP (httpx, no SDK) against a real server process."""

from __future__ import annotations

import httpx

from tests.server.helpers import TOKEN, error_of, first, raw, sse_post, types

A = "/api/agents/ops"


def suspend_delete(c: httpx.Client, record: str = "r1", thread: str = "t1", resource: str = "u1") -> dict:
    """Start a run that stops on an approval (tool with require_approval=True); return its approval chunk."""
    r, chunks = sse_post(
        c, f"{A}/stream", {"messages": f"delete {record}", "memory": {"thread": thread, "resource": resource}}
    )
    assert r.status_code == 200, r.text
    approval = first(chunks, "tool-call-approval")
    assert "finish" not in types(chunks)
    assert r.headers["x-warden-run-id"] == approval["runId"]
    return approval


def pending(c: httpx.Client, **params) -> dict:
    r = c.get(f"{A}/suspended-runs", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_health_is_public_and_everything_else_needs_the_token(server, servers):
    with raw(server.url, token=None) as anon:
        assert anon.get("/health").json()["status"] == "ok"
        for method, path in [
            ("GET", "/api/agents"),
            ("GET", "/openapi.json"),
            ("GET", f"{A}/suspended-runs"),
            ("POST", f"{A}/stream"),
            ("POST", f"{A}/approve-tool-call"),
        ]:
            r = anon.request(method, path, json={"messages": "hi"})
            assert r.status_code == 401, (path, r.text)
            assert error_of(r)["code"] == "UNAUTHORIZED"
            assert r.headers["www-authenticate"].startswith("Bearer")
    with raw(server.url, token="wrong-" + TOKEN) as bad:
        r = bad.get("/api/agents")
        assert r.status_code == 401 and error_of(r)["code"] == "UNAUTHORIZED"
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Basic {TOKEN}"}) as basic:
        assert basic.get("/api/agents").status_code == 401
    # a refused stream request started nothing
    assert servers.executions() == []
    with raw(server.url) as c:
        assert pending(c)["total"] == 0


def test_list_agents_and_openapi(server):
    with raw(server.url) as c:
        agents = c.get("/api/agents").json()
        assert set(agents) == {"ops", "other", "guarded", "boss"}
        assert agents["ops"]["name"] == "Ops"
        assert agents["ops"]["tools"]["delete_tool"]["requireApproval"] is True
        assert "id" in agents["ops"]["tools"]["delete_tool"]["inputSchema"]["properties"]
        doc = c.get("/openapi.json").json()
        assert doc["openapi"].startswith("3.")
        paths = doc["paths"]
        for route in [
            "stream",
            "generate",
            "approve-tool-call",
            "decline-tool-call",
            "resume-stream",
            "approve-tool-call-generate",
            "decline-tool-call-generate",
            "resume-generate",
            "send-tool-approval",
        ]:
            assert "post" in paths[f"/api/agents/{{agentId}}/{route}"], route
        assert "get" in paths["/api/agents/{agentId}/suspended-runs"]
        assert {"/health", "/api/agents", "/openapi.json"} <= set(paths)
        body = doc["components"]["schemas"]["ApproveBody"]
        assert "runId" in body["properties"] and "toolCallId" in body["properties"]


def test_stream_sse_framing_and_camel_case(server):
    with raw(server.url) as c:
        r, chunks = sse_post(c, f"{A}/stream", {"messages": "hello there"})
        assert r.status_code == 200
        assert types(chunks)[0] == "start" and types(chunks)[-1] == "finish"
        assert "".join(ch["payload"]["text"] for ch in chunks if ch["type"] == "text-delta") == "hello from ops"
        assert all(ch["runId"] == r.headers["x-warden-run-id"] and ch["from"] == "AGENT" for ch in chunks)
        assert first(chunks, "finish")["payload"]["finishReason"] == "stop"

        approval = suspend_delete(c, "abc-123")
        p = approval["payload"]
        assert p["toolName"] == "delete_tool" and p["args"] == {"id": "abc-123"}
        assert p["toolCallId"] and p["fingerprint"].startswith("sha256:")
        assert p["agentPath"] == ["ops"]


def test_stream_messages_forms_and_require_tool_approval(server, servers):
    with raw(server.url) as c:
        # a list of {role, content}, top-level threadId/resourceId, requireToolApproval gates an ungated tool
        r, chunks = sse_post(
            c,
            f"{A}/stream",
            {
                "messages": [{"role": "user", "content": "lookup cats"}],
                "threadId": "t-list",
                "resourceId": "u-list",
                "requireToolApproval": True,
            },
        )
        assert r.status_code == 200
        approval = first(chunks, "tool-call-approval")
        assert approval["payload"]["toolName"] == "lookup"
        assert servers.executions() == []
        listed = pending(c, threadId="t-list")
        assert listed["total"] == 1
        run = listed["runs"][0]
        assert run["threadId"] == "t-list" and run["resourceId"] == "u-list" and run["status"] == "suspended"
        # content given as parts, and a memory.thread object
        r, chunks = sse_post(
            c,
            f"{A}/stream",
            {
                "messages": [{"role": "user", "content": [{"type": "text", "text": "lookup dogs"}]}],
                "memory": {"thread": {"id": "t-obj"}, "resource": "u-obj"},
            },
        )
        assert r.status_code == 200
        assert first(chunks, "tool-result")["payload"]["result"] == {"found": "dogs"}
        assert [e[0] for e in servers.executions()] == ["lookup"]


def test_suspended_runs_filters_and_pages(server):
    with raw(server.url) as c:
        ids = [suspend_delete(c, f"rec{i}", thread="tp", resource="up")["runId"] for i in range(3)]
        suspend_delete(c, "elsewhere", thread="tq", resource="uq")
        assert pending(c)["total"] == 4
        tp = pending(c, threadId="tp")
        assert tp["total"] == 3 and {r["runId"] for r in tp["runs"]} == set(ids)
        assert pending(c, resourceId="uq")["total"] == 1
        page0 = pending(c, threadId="tp", page=0, perPage=2)
        page1 = pending(c, threadId="tp", page=1, perPage=2)
        assert page0["total"] == page1["total"] == 3
        assert (page1["page"], page1["perPage"]) == (1, 2)
        assert len(page0["runs"]) == 2 and len(page1["runs"]) == 1
        assert {r["runId"] for r in page0["runs"] + page1["runs"]} == set(ids)
        call = tp["runs"][0]["toolCalls"][0]
        assert set(call) >= {
            "toolCallId",
            "toolName",
            "args",
            "requiresApproval",
            "suspendPayload",
            "fingerprint",
            "agentPath",
        }
        assert call["requiresApproval"] is True
        assert c.get("/api/agents/other/suspended-runs").json()["total"] == 0


def test_suspended_runs_query_params_filter_sort_and_count_in_the_store(server):
    """``q``, ``toolName``, ``kind``, ``sort`` and ``withCounts`` (the picker's queue) over raw HTTP."""
    from warden_client import SyncWardenClient

    with raw(server.url) as c:
        ana = suspend_delete(c, "mail-to-ana", thread="tf1")["runId"]
        bob = suspend_delete(c, "mail-to-bob", thread="tf2")["runId"]
        r, chunks = sse_post(c, f"{A}/stream", {"messages": "ask colour?", "memory": {"thread": "tf3"}})
        asked = first(chunks, "tool-call-suspended")["runId"]

        def listed(**params) -> dict:
            r = c.get("/api/suspended-runs", params=params)
            assert r.status_code == 200, r.text
            return r.json()

        got = listed(q="ANA")
        assert [x["runId"] for x in got["runs"]] == [ana] and got["total"] == 1 and "counts" not in got
        assert [x["runId"] for x in listed(q="mail-to")["runs"]] == [bob, ana]  # newest first
        assert [x["runId"] for x in listed(q="tf3")["runs"]] == [asked]  # thread
        assert [x["runId"] for x in listed(toolName="ask_user")["runs"]] == [asked]
        assert [x["runId"] for x in listed(kind="input")["runs"]] == [asked]
        assert [x["runId"] for x in listed(kind="approval", agentId="ops")["runs"]] == [bob, ana]
        assert [x["runId"] for x in listed(sort="tool")["runs"]] == [asked, bob, ana]  # ask_user < delete_tool
        assert listed(withCounts="true")["counts"] == {"approval": 2, "input": 1}
        assert listed(q="bob", withCounts="true")["counts"] == {"approval": 1, "input": 0}
        one = c.get(f"{A}/suspended-runs", params={"q": "ana", "withCounts": "true"}).json()
        assert [x["runId"] for x in one["runs"]] == [ana] and one["counts"] == {"approval": 1, "input": 0}
        for bad in ({"sort": "size"}, {"kind": "maybe"}, {"withCounts": "perhaps"}):
            r = c.get("/api/suspended-runs", params=bad)
            assert r.status_code == 422, (bad, r.text)
    with SyncWardenClient(server.url, token=TOKEN) as client:
        result = client.list_suspended_runs(query="bob", with_counts=True)
        assert [x.run_id for x in result.runs] == [bob] and result.counts == {"approval": 1, "input": 0}
        assert [x.run_id for x in client.agent("ops").list_suspended_runs(kind="input").runs] == [asked]


def test_approve_tool_call_stream(server, servers):
    with raw(server.url) as c:
        a = suspend_delete(c, "r-approve")
        run_id, call_id = a["runId"], a["payload"]["toolCallId"]
        r, chunks = sse_post(c, f"{A}/approve-tool-call", {"runId": run_id, "toolCallId": call_id})
        assert r.status_code == 200, r.text
        assert r.headers["x-warden-run-id"] == run_id
        result = first(chunks, "tool-result")["payload"]
        assert result["toolCallId"] == call_id and result["result"] == {"deleted": "r-approve"}
        assert types(chunks)[-1] == "finish"
        assert servers.executions("delete-record") == [
            ("delete-record", call_id, '{"id": "r-approve"}', servers.executions()[0][3])
        ]
        assert pending(c)["total"] == 0
        # a second decision on the same call: 409, nothing runs again
        r, _ = sse_post(c, f"{A}/approve-tool-call", {"runId": run_id, "toolCallId": call_id})
        assert r.status_code == 409 and error_of(r)["code"] == "AGENT_TOOL_CALL_ALREADY_DECIDED"
        assert len(servers.executions()) == 1


def test_approve_with_fingerprint(server, servers):
    with raw(server.url) as c:
        a = suspend_delete(c, "r-fp")
        run_id, call_id, fp = a["runId"], a["payload"]["toolCallId"], a["payload"]["fingerprint"]
        r, _ = sse_post(
            c, f"{A}/approve-tool-call", {"runId": run_id, "toolCallId": call_id, "fingerprint": "sha256:" + "0" * 64}
        )
        assert r.status_code == 412 and error_of(r)["code"] == "AGENT_APPROVAL_FINGERPRINT_MISMATCH"
        assert servers.executions() == [] and pending(c)["total"] == 1
        r, chunks = sse_post(c, f"{A}/approve-tool-call", {"runId": run_id, "toolCallId": call_id, "fingerprint": fp})
        assert r.status_code == 200 and "tool-result" in types(chunks)
        assert len(servers.executions()) == 1


def test_decline_tool_call_stream(server, servers):
    with raw(server.url) as c:
        a = suspend_delete(c, "r-decline")
        r, chunks = sse_post(
            c,
            f"{A}/decline-tool-call",
            {"runId": a["runId"], "toolCallId": a["payload"]["toolCallId"], "reason": "not today"},
        )
        assert r.status_code == 200, r.text
        denied = first(chunks, "tool-output-denied")["payload"]
        assert denied["reason"] == "not today" and denied["toolCallId"] == a["payload"]["toolCallId"]
        assert types(chunks)[-1] == "finish"
        assert servers.executions() == [] and pending(c)["total"] == 0


def test_generate_routes(server, servers):
    with raw(server.url) as c:
        r = c.post(f"{A}/generate", json={"messages": "hi"})
        assert r.status_code == 200 and r.json()["text"] == "hello from ops"
        assert r.json()["finishReason"] == "stop"

        g = c.post(f"{A}/generate", json={"messages": "delete g1", "threadId": "tg"}).json()
        assert g["finishReason"] == "suspended" and g["runId"]
        sp = g["suspendPayload"]
        assert sp["toolName"] == "delete_tool" and sp["args"] == {"id": "g1"} and sp["fingerprint"]
        r = c.post(f"{A}/approve-tool-call-generate", json={"runId": g["runId"], "toolCallId": sp["toolCallId"]})
        assert r.status_code == 200, r.text
        done = r.json()
        assert done["finishReason"] == "stop" and done["text"] == 'done: {"deleted": "g1"}'
        assert done["toolResults"][0]["result"] == {"deleted": "g1"}
        assert set(done["usage"]) == {"inputTokens", "outputTokens", "totalTokens"}

        g2 = c.post(f"{A}/generate", json={"messages": "delete g2"}).json()
        r = c.post(
            f"{A}/decline-tool-call-generate",
            json={"runId": g2["runId"], "toolCallId": g2["suspendPayload"]["toolCallId"]},
        )
        assert r.status_code == 200 and r.json()["finishReason"] == "stop"
        assert [e[2] for e in servers.executions()] == ['{"id": "g1"}']


def test_resume_stream_and_resume_generate(server, servers):
    with raw(server.url) as c:
        r, chunks = sse_post(c, f"{A}/stream", {"messages": "ask favourite colour?", "threadId": "ta"})
        s = first(chunks, "tool-call-suspended")
        assert s["payload"]["suspendPayload"] == {"question": "favourite colour?"}
        assert s["payload"]["resumeSchema"]["properties"]["answer"]["type"] == "string"
        run_id, call_id = s["runId"], s["payload"]["toolCallId"]
        listed = pending(c, threadId="ta")["runs"][0]["toolCalls"][0]
        assert listed["requiresApproval"] is False and listed["suspendPayload"] == {"question": "favourite colour?"}

        # resume data that fails resume_schema: 422 with details, nothing changed
        r, _ = sse_post(c, f"{A}/resume-stream", {"runId": run_id, "toolCallId": call_id, "resumeData": {"answer": 7}})
        assert r.status_code == 422
        err = error_of(r)
        assert err["code"] == "AGENT_RESUME_DATA_INVALID" and err["details"][0]["loc"] == ["answer"]
        # approving a call that waits for data is the wrong kind of decision
        r, _ = sse_post(c, f"{A}/approve-tool-call", {"runId": run_id, "toolCallId": call_id})
        assert r.status_code == 409 and error_of(r)["code"] == "AGENT_WRONG_DECISION_KIND"
        assert pending(c, threadId="ta")["total"] == 1 and servers.executions() == []

        r, chunks = sse_post(
            c, f"{A}/resume-stream", {"runId": run_id, "toolCallId": call_id, "resumeData": {"answer": "blue"}}
        )
        assert r.status_code == 200, r.text
        assert first(chunks, "tool-result")["payload"]["result"] == {"answer": "blue"}
        assert types(chunks)[-1] == "finish"

        g = c.post(f"{A}/generate", json={"messages": "ask size?"}).json()
        assert g["finishReason"] == "suspended" and g["suspendPayload"]["suspendPayload"] == {"question": "size?"}
        r = c.post(f"{A}/resume-generate", json={"runId": g["runId"], "resumeData": {"answer": "L"}})
        assert r.status_code == 200, r.text
        assert r.json()["text"] == 'done: {"answer": "L"}'
        assert sorted(e[2] for e in servers.executions("ask-user")) == ['{"answer": "L"}', '{"answer": "blue"}']


def test_send_tool_approval(server, servers):
    with raw(server.url) as c:
        suspend_delete(c, "s1", thread="ts", resource="us")
        r = c.post(f"{A}/send-tool-approval", json={"threadId": "ts", "resourceId": "us", "approved": True})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["accepted"] is True and body["runId"] and body["status"] == "finished"
        assert "tool-result" in types(body["chunks"])
        assert len(servers.executions()) == 1 and pending(c, threadId="ts")["total"] == 0

        a = suspend_delete(c, "s2", thread="ts2")
        r = c.post(
            f"{A}/send-tool-approval",
            json={
                "memory": {"thread": "ts2"},
                "approved": False,
                "toolCallId": a["payload"]["toolCallId"],
                "reason": "no",
            },
        )
        assert r.status_code == 200 and "tool-output-denied" in types(r.json()["chunks"])
        assert len(servers.executions()) == 1
        r = c.post(f"{A}/send-tool-approval", json={"threadId": "nothing-here", "approved": True})
        assert r.status_code == 404 and error_of(r)["code"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"


def test_not_found_errors(server, servers):
    with raw(server.url) as c:
        r, _ = sse_post(c, "/api/agents/nobody/stream", {"messages": "hi"})
        assert r.status_code == 404 and error_of(r)["code"] == "AGENT_NOT_FOUND"
        r = c.get("/api/agents/nobody/suspended-runs")
        assert r.status_code == 404 and error_of(r)["code"] == "AGENT_NOT_FOUND"
        r, _ = sse_post(c, f"{A}/approve-tool-call", {"runId": "no-such-run", "toolCallId": "x"})
        assert r.status_code == 404 and error_of(r)["code"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
        r = c.post(f"{A}/resume-generate", json={"runId": "no-such-run", "resumeData": {}})
        assert r.status_code == 404
        r = c.get("/api/nothing")
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
        r = c.get(f"{A}/approve-tool-call")
        assert r.status_code == 405 and error_of(r)["code"] == "METHOD_NOT_ALLOWED"


def test_a_run_is_decided_only_under_its_own_agent(server, servers):
    with raw(server.url) as c:
        a = suspend_delete(c, "mine")
        body = {"runId": a["runId"], "toolCallId": a["payload"]["toolCallId"]}
        for route in ["approve-tool-call", "decline-tool-call"]:
            r, _ = sse_post(c, f"/api/agents/other/{route}", body)
            assert r.status_code == 404, (route, r.text)
            assert error_of(r)["code"] == "AGENT_RESUME_NO_SNAPSHOT_FOUND"
        for route in ["approve-tool-call-generate", "decline-tool-call-generate"]:
            assert c.post(f"/api/agents/other/{route}", json=body).status_code == 404
        assert c.post("/api/agents/other/resume-generate", json={**body, "resumeData": {}}).status_code == 404
        assert servers.executions() == [] and pending(c)["total"] == 1
        r, chunks = sse_post(c, f"{A}/approve-tool-call", body)
        assert r.status_code == 200 and "tool-result" in types(chunks)


def test_malformed_bodies_are_422_and_change_nothing(server, servers):
    with raw(server.url) as c:
        a = suspend_delete(c, "keep")
        run_id, call_id = a["runId"], a["payload"]["toolCallId"]
        before = pending(c)
        cases = [
            (f"{A}/stream", b"{not json"),
            (f"{A}/stream", b"[1, 2]"),
            (f"{A}/stream", b""),
            (f"{A}/stream", {"messages": 42}),
            (f"{A}/stream", {"messages": [{"role": "wizard", "content": "x"}]}),
            (f"{A}/stream", {"messages": "delete z", "requireToolApproval": "yes"}),
            (f"{A}/stream", {"messages": "hi", "memory": {"thread": {"noid": 1}}}),
            (f"{A}/stream", {"messages": "hi", "maxSteps": 0}),
            (f"{A}/generate", {}),
            (f"{A}/approve-tool-call", {"toolCallId": call_id}),
            (f"{A}/approve-tool-call", {"runId": 12, "toolCallId": call_id}),
            (f"{A}/approve-tool-call", {"runId": "", "toolCallId": call_id}),
            (f"{A}/approve-tool-call-generate", {"runId": run_id, "toolCallId": ["x"]}),
            (f"{A}/decline-tool-call", {"runId": run_id, "toolCallId": call_id, "reason": {"a": 1}}),
            (f"{A}/decline-tool-call-generate", b"null"),
            (f"{A}/resume-stream", {"runId": run_id, "toolCallId": call_id}),
            (f"{A}/resume-stream", {"runId": run_id, "toolCallId": call_id, "resumeData": "blue"}),
            (f"{A}/resume-generate", {"runId": run_id, "resumeData": [1]}),
            (f"{A}/send-tool-approval", {"threadId": "t1"}),
            (f"{A}/send-tool-approval", {"approved": True}),
            (f"{A}/send-tool-approval", {"threadId": "t1", "approved": "true"}),
        ]
        for path, body in cases:
            if isinstance(body, bytes):
                r = c.post(path, content=body, headers={"content-type": "application/json"})
            else:
                r = c.post(path, json=body)
            assert r.status_code == 422, (path, body, r.status_code, r.text)
            assert error_of(r)["code"] == "INVALID_REQUEST", (path, body)
        for q in [{"page": "-1"}, {"perPage": "0"}, {"page": "two"}]:
            r = c.get(f"{A}/suspended-runs", params=q)
            assert r.status_code == 422 and error_of(r)["code"] == "INVALID_REQUEST", q
        assert servers.executions() == []
        assert pending(c) == before


def test_request_size_limit(servers):
    server = servers.start("small", extra_args=("--max-body-bytes", "2048"))
    with raw(server.url) as c:
        r = c.post(f"{A}/stream", json={"messages": "x" * 5000})
        assert r.status_code == 413 and error_of(r)["code"] == "REQUEST_TOO_LARGE"

        def chunked():
            for _ in range(10):
                yield b" " * 1000

        r = c.post(f"{A}/stream", content=chunked(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and error_of(r)["code"] == "REQUEST_TOO_LARGE"
        r = c.post(f"{A}/generate", json={"messages": "hi"})
        assert r.status_code == 200
        assert c.get(f"{A}/suspended-runs").json()["total"] == 0


def test_agent_default_options_apply_unless_the_request_says_otherwise(server, servers):
    with raw(server.url) as c:
        # guarded has default_options require_tool_approval=True: the ungated lookup stops ...
        r, chunks = sse_post(c, "/api/agents/guarded/stream", {"messages": "lookup a"})
        assert r.status_code == 200 and types(chunks)[-1] == "tool-call-approval"
        # ... unless the request says requireToolApproval: false
        r, chunks = sse_post(c, "/api/agents/guarded/stream", {"messages": "lookup b", "requireToolApproval": False})
        assert first(chunks, "tool-result")["payload"]["result"] == {"found": "b"}
        # the agent's default max_steps (1) applies too: no second model call
        assert "text-delta" not in types(chunks) and first(chunks, "finish")["payload"]["finishReason"] == "length"
        # and ops (no default) gates it only when asked
        r, chunks = sse_post(c, f"{A}/stream", {"messages": "lookup c"})
        assert "tool-result" in types(chunks)
        assert sorted(e[2] for e in servers.executions()) == ['{"q": "b"}', '{"q": "c"}']


def test_cors_for_browser_uis(servers):
    server = servers.start("cors", extra_args=("--cors-origin", "http://ui.example"))
    pre = {
        "Origin": "http://ui.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    with raw(server.url, token=None) as anon:
        r = anon.options(f"{A}/approve-tool-call", headers=pre)  # a preflight carries no token
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "http://ui.example"
        assert "authorization" in r.headers["access-control-allow-headers"].lower()
        r = anon.options(f"{A}/approve-tool-call", headers={**pre, "Origin": "http://evil.example"})
        assert r.status_code == 400 and "access-control-allow-origin" not in r.headers
        assert anon.get("/api/agents", headers={"Origin": "http://ui.example"}).status_code == 401
    with raw(server.url) as c:
        r = c.post(f"{A}/stream", json={"messages": "hi"}, headers={"Origin": "http://ui.example"})
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "http://ui.example"
        assert "x-warden-run-id" in r.headers["access-control-expose-headers"].lower()


def test_a_failing_run_is_an_error_chunk_not_an_http_error(server):
    with raw(server.url) as c:
        r, chunks = sse_post(c, f"{A}/stream", {"messages": "boom"})
        assert r.status_code == 200
        err = first(chunks, "error")
        assert "model exploded" in err["payload"]["error"]
        assert "finish" not in types(chunks)
        g = c.post(f"{A}/generate", json={"messages": "boom"})
        assert g.status_code == 200
        assert g.json()["finishReason"] == "error" and "model exploded" in g.json()["error"]
        assert c.get(f"{A}/suspended-runs").json()["total"] == 0


def test_supervisor_approval_through_http(server, servers):
    """An approval inside a sub-agent surfaces in the supervisor's stream and is decided on the supervisor."""
    with raw(server.url) as c:
        r, chunks = sse_post(c, "/api/agents/boss/stream", {"messages": "delegate delete deep-1", "threadId": "tb"})
        assert r.status_code == 200
        approval = first(chunks, "tool-call-approval")
        assert approval["payload"]["agentPath"] == ["boss", "ops"]
        assert approval["payload"]["toolName"] == "delete_tool"
        listed = c.get("/api/agents/boss/suspended-runs").json()
        assert listed["total"] == 1 and listed["runs"][0]["runId"] == approval["runId"]
        assert c.get(f"{A}/suspended-runs").json()["total"] == 0  # only the top run is listed
        body = {"runId": approval["runId"], "toolCallId": approval["payload"]["toolCallId"]}
        r, _ = sse_post(c, f"{A}/approve-tool-call", body)  # not under the sub-agent's own route
        assert r.status_code == 404
        r, chunks = sse_post(c, "/api/agents/boss/approve-tool-call", body)
        assert r.status_code == 200, r.text
        assert types(chunks)[-1] == "finish"
        text = "".join(ch["payload"]["text"] for ch in chunks if ch["type"] == "text-delta")
        assert text.startswith("boss done:") and "deep-1" in text
        assert [e[2] for e in servers.executions()] == ['{"id": "deep-1"}']
