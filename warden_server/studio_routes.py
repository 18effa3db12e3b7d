"""The routes Mastra Studio (``mastra studio``) reads before and around a chat, in Mastra's shapes.

Studio opens with ``GET /`` (any 2xx means "a server is there"), asks
``/api/auth/capabilities`` (public in Mastra), then the agent's detail, memory
status and the model providers; a 404 on any of those either stops it or
makes it retry in a loop. Shapes follow ``@mastra/server``'s handlers
(``formatAgent``, ``GET_MEMORY_STATUS_ROUTE``, ``GET_PROVIDERS_ROUTE``,
``LIST_TOOLS_ROUTE``, ``GET_EDITOR_BUILDER_SETTINGS_ROUTE``). Every agent says ``supportsMemory: false`` and memory
status ``result: false``: Studio then drives a chat with ``stream`` and
``approve-tool-call`` / ``decline-tool-call`` only, which Warden serves; its
thread views (``/api/memory/threads...``) are not served. The agent builder's settings say
``enabled: false`` and no active model policy, as Mastra's server without an editor: a 404
there made Studio's chat show "Unable to verify model policy" above the prompt.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from agent_core import wire
from warden_server.errors import error_response

ROOT = "/"
AUTH_CAPABILITIES = "/api/auth/capabilities"
PROVIDERS = "/api/agents/providers"
MEMORY_STATUS = "/api/memory/status"
TOOLS = "/api/tools"
TOOL = "/api/tools/{toolId}"
BUILDER_SETTINGS = "/api/editor/builder/settings"
#: Studio's panels for things Warden has none of, answered empty in Mastra's shapes rather than 404
#: (route name, path, the empty answer, what it lists).
NONE_OF: list[tuple[str, str, dict[str, Any], str]] = [
    ("getMemoryConfig", "/api/memory/config", {"config": None}, "Memory configuration: none"),
    ("listWorkflows", "/api/workflows", {}, "Workflows: none (Warden runs agents)"),
    ("listScorers", "/api/scores/scorers", {}, "Scorers: none"),
    ("listProcessors", "/api/processors", {}, "Processors: none"),
    ("listMcpServers", "/api/mcp/v0/servers", {"servers": [], "total_count": 0, "next": None}, "MCP servers: none"),
]
#: paths that answer without a token, as in Mastra (Studio asks them before it knows about auth).
PUBLIC_PATHS = (ROOT, AUTH_CAPABILITIES)

_WELCOME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Warden API</title></head>
<body><h1>Warden API</h1>
<p>Human-in-the-loop approval for agents, on Mastra's routes under <code>/api</code>.</p>
<p>The routes: <a href="/openapi.json">/openapi.json</a>. Liveness: <a href="/health">/health</a>.</p>
</body></html>
"""


#: the code of a 404 on ``GET /api/tools/{toolId}`` (no hosted agent has that tool).
TOOL_NOT_FOUND = "TOOL_NOT_FOUND"


async def root(request: Request) -> Response:
    """What Mastra's server answers at ``/`` without a bundled Studio: a short static page."""
    return HTMLResponse(_WELCOME)


async def auth_capabilities(request: Request) -> Response:
    """``enabled: false`` even with a token: Mastra's ``enabled: true`` asks Studio for a sign-in
    (its own user session), which Warden has not; a token instead goes in every request's
    ``Authorization`` header (``?auth_header=Bearer%20<token>`` or Settings -> Headers)."""
    return JSONResponse({"enabled": False, "login": None})


def _superjson(value: Any) -> str:
    """A schema as Mastra sends it: superjson's ``stringify`` of a plain JSON value."""
    return json.dumps({"json": value}, ensure_ascii=False)


def _tool(name: str, info: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": info.get("id") or name, "description": info.get("description") or ""}
    if "inputSchema" in info:
        out["inputSchema"] = _superjson(info["inputSchema"])
    if "requireApproval" in info:
        out["requireApproval"] = bool(info["requireApproval"]) if not callable(info["requireApproval"]) else True
    return out


def _tools(encoded: dict[str, Any]) -> dict[str, Any]:
    return {name: _tool(name, info) for name, info in (encoded.get("tools") or {}).items()}


def _detail(key: str, agent: Any, encoded: dict[str, Any]) -> dict[str, Any]:
    model_id = encoded.get("modelId")
    return {
        "id": encoded.get("id", key),
        "name": encoded.get("name") or key,
        "description": getattr(agent, "description", "") or "",
        "instructions": encoded.get("instructions") or "",
        "tools": _tools(encoded),
        "agents": encoded.get("agents") or {},
        "workflows": {},
        "skills": [],
        "workspaceTools": [],
        "browserTools": [],
        "hasBrowser": False,
        "inputProcessors": [],
        "outputProcessors": [],
        "provider": encoded["provider"],
        "modelId": model_id or "",
        # Studio then chats with stream + approve-tool-call / decline-tool-call (see the module doc).
        "supportsMemory": False,
        "defaultOptions": {},
        "source": "code",
    }


def _encoded(request: Request) -> dict[str, Any]:
    return wire.encode_agents(request.app.state.runtime.agents)


async def agent_detail(request: Request) -> Response:
    key = request.path_params["agentId"]
    agent = request.app.state.runtime.get_agent(key)  # raises AgentNotFound
    return JSONResponse(_detail(key, agent, wire.encode_agents({key: agent})[key]))


async def memory_status(request: Request) -> Response:
    """``result: false``: Warden keeps no Mastra-style memory threads for Studio to browse."""
    return JSONResponse({"result": False})


async def providers(request: Request) -> Response:
    """The providers of the hosted agents' models (Warden configures models in code, not in Studio)."""
    models: dict[str, set[str]] = {}
    for info in _encoded(request).values():
        model_id = info.get("modelId")
        if model_id:
            provider = wire.model_provider(model_id)
            models.setdefault(provider, set()).add(model_id.split("/", 1)[-1])
    return JSONResponse(
        {
            "providers": [
                {
                    "id": provider,
                    "name": provider,
                    "label": provider,
                    "description": "",
                    "connected": True,
                    "models": sorted(names),
                }
                for provider, names in sorted(models.items())
            ]
        }
    )


def _all_tools(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for encoded in _encoded(request).values():
        for tool in _tools(encoded).values():
            out.setdefault(tool["id"], tool)
    return out


async def list_tools(request: Request) -> Response:
    """Every tool of every hosted agent, keyed by tool id (the first agent's, when ids repeat)."""
    return JSONResponse(_all_tools(request))


async def get_tool(request: Request) -> Response:
    tool_id = request.path_params["toolId"]
    tool = _all_tools(request).get(tool_id)
    if tool is None:
        return error_response(404, TOOL_NOT_FOUND, f"no hosted agent has a tool {tool_id!r}")
    return JSONResponse(tool)


async def builder_settings(request: Request) -> Response:
    """What Mastra's server answers without an editor (``GET_EDITOR_BUILDER_SETTINGS_ROUTE``): no
    agent builder, no model policy. Studio's chat reads ``modelPolicy`` to choose which models its
    picker may offer; Warden's agents have their models in code (and Warden's own policies gate
    tool calls, not models)."""
    return JSONResponse({"enabled": False, "modelPolicy": {"active": False}})


def _empty(answer: dict[str, Any]) -> Any:
    async def handler(request: Request) -> Response:
        return JSONResponse(answer)

    return handler


_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["id", "description"],
    "properties": {
        "id": {"type": "string"},
        "description": {"type": "string"},
        "inputSchema": {"type": "string", "description": 'superjson text: {"json": <JSON Schema>}'},
        "requireApproval": {"type": "boolean"},
    },
}
#: response schemas for ``/openapi.json`` (``warden_server.openapi``), by route name.
RESPONSES: dict[str, dict[str, Any]] = {
    "getAuthCapabilities": {
        "type": "object",
        "required": ["enabled", "login"],
        "properties": {"enabled": {"type": "boolean"}, "login": {"type": "null"}},
    },
    "getAgent": {
        "type": "object",
        "required": ["id", "name", "tools", "supportsMemory"],
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "tools": {"type": "object", "additionalProperties": _TOOL_SCHEMA},
            "supportsMemory": {"const": False},
        },
    },
    "getMemoryStatus": {"type": "object", "required": ["result"], "properties": {"result": {"type": "boolean"}}},
    "listProviders": {
        "type": "object",
        "required": ["providers"],
        "properties": {"providers": {"type": "array", "items": {"type": "object"}}},
    },
    "listTools": {"type": "object", "additionalProperties": _TOOL_SCHEMA},
    "getTool": _TOOL_SCHEMA,
    "getBuilderSettings": {
        "type": "object",
        "required": ["enabled", "modelPolicy"],
        "properties": {
            "enabled": {"const": False},
            "modelPolicy": {
                "type": "object",
                "required": ["active"],
                "properties": {"active": {"const": False}},
            },
        },
    },
    "getMemoryConfig": {"type": "object", "required": ["config"], "properties": {"config": {"type": "null"}}},
    "listWorkflows": {"type": "object", "maxProperties": 0},
    "listScorers": {"type": "object", "maxProperties": 0},
    "listProcessors": {"type": "object", "maxProperties": 0},
    "listMcpServers": {
        "type": "object",
        "required": ["servers", "total_count", "next"],
        "properties": {
            "servers": {"type": "array", "maxItems": 0},
            "total_count": {"const": 0},
            "next": {"type": "null"},
        },
    },
}


def routes(spec: Any) -> list[tuple[Any, Any]]:
    """The route table entries, built with ``warden_server.app.RouteSpec`` (passed in: no import cycle).

    ``/api/agents/providers`` comes before ``/api/agents/{agentId}``, which would match it.
    """
    return [
        (
            spec(
                "GET",
                ROOT,
                "root",
                "A short page saying this is Warden's API; no token needed",
                response="html",
                auth=False,
            ),
            root,
        ),
        (
            spec(
                "GET", AUTH_CAPABILITIES, "getAuthCapabilities", "Whether a token is needed (Mastra Studio)", auth=False
            ),
            auth_capabilities,
        ),
        (spec("GET", PROVIDERS, "listProviders", "The providers of the agents' models (Mastra Studio)"), providers),
        (spec("GET", wire.AGENT, "getAgent", "One agent's detail, in Mastra's shape"), agent_detail),
        (
            spec("GET", MEMORY_STATUS, "getMemoryStatus", "Memory status: none for Studio (Mastra Studio)"),
            memory_status,
        ),
        (spec("GET", TOOLS, "listTools", "Every tool of the hosted agents, by id"), list_tools),
        (spec("GET", TOOL, "getTool", "One tool, by id"), get_tool),
        (
            spec("GET", BUILDER_SETTINGS, "getBuilderSettings", "No agent builder, no model policy (Mastra Studio)"),
            builder_settings,
        ),
        *((spec("GET", path, name, summary), _empty(answer)) for name, path, answer, summary in NONE_OF),
    ]
