"""The routes Mastra Studio reads, in Mastra's shapes, from a real server (with and without a token)."""

from __future__ import annotations

import json

from tests.server.helpers import raw

STUDIO = {"x-mastra-client-type": "studio", "x-mastra-dev-playground": "true"}


def test_studio_routes_in_mastras_shapes(server):
    with raw(server.url, token=None) as anon:
        # public, as in Mastra: Studio asks before it sends anything else
        assert anon.get("/api/auth/capabilities").json() == {"enabled": False, "login": None}
        assert anon.get("/").status_code == 200
        assert anon.get("/api/agents/ops").status_code == 401
        assert anon.get("/api/tools").status_code == 401
        assert anon.get("/api/editor/builder/settings").status_code == 401  # requiresAuth in Mastra too
    with raw(server.url) as c:
        detail = c.get("/api/agents/ops", headers=STUDIO).json()
        assert detail["id"] == "ops" and detail["name"] == "Ops"
        assert detail["supportsMemory"] is False  # Studio stays on stream + approve/decline-tool-call
        assert detail["instructions"] == "You operate records."
        tool = detail["tools"]["delete_tool"]
        assert tool["id"] == "delete-record" and tool["requireApproval"] is True
        schema = json.loads(tool["inputSchema"])["json"]  # superjson text, as Mastra sends it
        assert schema["properties"]["id"]["type"] == "string"
        assert detail["workflows"] == {} and detail["provider"]
        assert c.get("/api/memory/status", params={"agentId": "ops"}).json() == {"result": False}
        providers = c.get("/api/agents/providers").json()["providers"]
        assert providers and all(p["connected"] is True for p in providers)
        tools = c.get("/api/tools").json()
        assert {"delete-record", "lookup", "ask-user", "progress"} <= set(tools)
        assert c.get("/api/tools/lookup").json()["description"] == "Look something up"
        # Studio's panels for what Warden has none of: empty, in Mastra's shapes (not 404s it retries)
        assert c.get("/api/memory/config", params={"agentId": "ops"}).json() == {"config": None}
        assert c.get("/api/workflows").json() == {} and c.get("/api/scores/scorers").json() == {}
        assert c.get("/api/processors").json() == {}
        assert c.get("/api/mcp/v0/servers").json() == {"servers": [], "total_count": 0, "next": None}
        # no agent builder and no model policy, as Mastra without an editor (Studio's chat reads it)
        assert c.get("/api/editor/builder/settings").json() == {"enabled": False, "modelPolicy": {"active": False}}
        openapi = c.get("/openapi.json").json()["paths"]
        for path in (
            "/",
            "/api/auth/capabilities",
            "/api/agents/{agentId}",
            "/api/memory/status",
            "/api/agents/providers",
            "/api/tools",
            "/api/tools/{toolId}",
            "/api/workflows",
            "/api/memory/config",
            "/api/mcp/v0/servers",
            "/api/editor/builder/settings",
        ):
            assert "get" in openapi[path], path
        assert "security" not in openapi["/api/auth/capabilities"]["get"]


def test_errors_are_typed_for_warden_clients_and_text_for_studio(server):
    with raw(server.url) as c:
        # Warden's own clients: {"error": {"code", "message"}}
        r = c.get("/api/agents/nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "AGENT_NOT_FOUND"
        r = c.get("/api/tools/nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "TOOL_NOT_FOUND"
        # Studio: Mastra's {"error": "<message>"}, the code beside it (Studio renders body.error as text)
        r = c.get("/api/agents/nope", headers=STUDIO)
        assert r.status_code == 404
        body = r.json()
        assert isinstance(body["error"], str) and "nope" in body["error"] and body["code"] == "AGENT_NOT_FOUND"
        assert int(r.headers["content-length"]) == len(r.content)
        r = c.get("/api/observability/traces", headers=STUDIO)  # a Studio page Warden does not serve
        assert r.status_code == 404 and r.json()["code"] == "NOT_FOUND" and isinstance(r.json()["error"], str)
        r = c.post("/api/agents/ops/approve-tool-call", content=b"{not json", headers=STUDIO)
        assert r.status_code == 422 and r.json()["code"] == "INVALID_REQUEST" and isinstance(r.json()["error"], str)
        # streams of Studio's requests pass through untouched
        r = c.post("/api/agents/ops/stream", json={"messages": "lookup a"}, headers=STUDIO)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert '"tool-result"' in r.text


def test_agents_list_names_each_models_provider(server):
    """Studio's agents table reads ``provider`` from ``GET /api/agents`` (a dash without it)."""
    with raw(server.url) as c:
        listed = c.get("/api/agents", headers=STUDIO).json()
        detail = c.get("/api/agents/ops", headers=STUDIO).json()
        providers = {p["id"] for p in c.get("/api/agents/providers").json()["providers"]}
    assert listed["ops"]["modelId"] == "function" and listed["ops"]["provider"] == "function"
    assert detail["provider"] == listed["ops"]["provider"]
    assert {info["provider"] for info in listed.values()} == providers
