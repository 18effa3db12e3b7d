"""HTTP routes of external calls (``warden_server.external``): what ``warden mcp-proxy --server`` uses.

* ``POST /api/mcp/agents/{agentId}/calls``: register a gated call (``agentId`` is ``mcp:<name>``);
  answers when it waits (``pending``, with its fingerprint and deadline), already runs (``execute``:
  a grant covered it) or failed (``error``: arguments that fail the tool's schema). The answer
  carries a ``secret``: the other routes need it, so only the registering proxy drives its call.
* ``POST /api/mcp/calls/{toolCallId}/poll``: the call's state; also tells the server the proxy is
  still there (a call nobody polls is withdrawn after the server's ``stale_seconds``).
* ``POST /api/mcp/calls/{toolCallId}/result``: the upstream's ``CallToolResult`` once the call was
  ``execute``; the run ends (``done``).
* ``POST /api/mcp/calls/{toolCallId}/withdraw``: the MCP client cancelled (declined, audited).

Decisions themselves go through the usual routes (``/api/agents/mcp:<name>/approve-tool-call`` ...,
see ``warden_server.handover``), the console or the CLI.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from warden_server.external import ExternalCalls
from warden_server.limits import InvalidBody, parse_json_body


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class McpToolDefinition(_Body):
    """The MCP tool as the upstream lists it (``tools/list``): its JSON Schema validates the arguments."""

    name: str = Field(min_length=1, max_length=256)
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=dict, alias="inputSchema")


class RegisterMcpCallBody(_Body):
    tool: McpToolDefinition
    arguments: dict[str, Any] = Field(default_factory=dict)
    approval_timeout: float | None = Field(default=None, alias="approvalTimeout", gt=0)
    #: how the proxy names its upstream (shown to operators); default: the agent id's name
    server: str | None = Field(default=None, max_length=1024)


class McpCallSecretBody(_Body):
    secret: str = Field(min_length=1, max_length=256)


class McpCallResultBody(McpCallSecretBody):
    #: the upstream's MCP ``CallToolResult`` (``content``, ``structuredContent``, ``isError``)
    result: dict[str, Any]


MCP_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["toolCallId", "runId", "agentId", "toolName", "status"],
    "properties": {
        "toolCallId": {"type": "string"},
        "runId": {"type": "string"},
        "agentId": {"type": "string"},
        "toolName": {"type": "string"},
        "status": {"enum": ["pending", "execute", "declined", "expired", "done", "error"]},
        "fingerprint": {"type": "string"},
        "expiresAt": {"type": "number"},
        "args": {"type": "object"},
        "reason": {"type": "string"},
        "error": {"type": "string"},
        "secret": {"type": "string"},
    },
}
#: the JSON answers of these routes, by operation id (``warden_server.openapi``)
RESPONSES = {name: MCP_CALL_SCHEMA for name in ("registerMcpCall", "pollMcpCall", "completeMcpCall", "withdrawMcpCall")}


def _calls(request: Request) -> ExternalCalls:
    calls: ExternalCalls = request.app.state.external
    return calls


async def _body(request: Request, model: type[Any]) -> Any:
    data = parse_json_body(await request.body())
    if not isinstance(data, dict):
        raise InvalidBody("request body must be a JSON object")
    return model.model_validate(data)


async def register_call(request: Request) -> Response:
    body: RegisterMcpCallBody = await _body(request, RegisterMcpCallBody)
    call = await _calls(request).register(
        request.path_params["agentId"],
        body.tool.model_dump(by_alias=True),
        body.arguments,
        approval_timeout=body.approval_timeout,
        server=body.server,
    )
    return JSONResponse({**call.to_json(), "secret": call.secret})


async def poll_call(request: Request) -> Response:
    body: McpCallSecretBody = await _body(request, McpCallSecretBody)
    return JSONResponse(_calls(request).get(request.path_params["toolCallId"], body.secret).to_json())


async def complete_call(request: Request) -> Response:
    body: McpCallResultBody = await _body(request, McpCallResultBody)
    call = await _calls(request).complete(request.path_params["toolCallId"], body.secret, body.result)
    return JSONResponse(call.to_json())


async def withdraw_call(request: Request) -> Response:
    body: McpCallSecretBody = await _body(request, McpCallSecretBody)
    call = await _calls(request).withdraw(request.path_params["toolCallId"], body.secret)
    return JSONResponse(call.to_json())


def routes(spec: Any) -> list[tuple[Any, Any]]:
    """The route table entries, built with ``warden_server.app.RouteSpec`` (passed in: no import cycle)."""
    return [
        (
            spec(
                "POST",
                "/api/mcp/agents/{agentId}/calls",
                "registerMcpCall",
                "Register a gated MCP call of a remote warden mcp-proxy",
                RegisterMcpCallBody,
                role="approver",
            ),
            register_call,
        ),
        (
            spec(
                "POST",
                "/api/mcp/calls/{toolCallId}/poll",
                "pollMcpCall",
                "An external call's state",
                McpCallSecretBody,
                role="approver",
            ),
            poll_call,
        ),
        (
            spec(
                "POST",
                "/api/mcp/calls/{toolCallId}/result",
                "completeMcpCall",
                "The upstream's result of an approved external call",
                McpCallResultBody,
                role="approver",
            ),
            complete_call,
        ),
        (
            spec(
                "POST",
                "/api/mcp/calls/{toolCallId}/withdraw",
                "withdrawMcpCall",
                "Withdraw an external call (the MCP client cancelled)",
                McpCallSecretBody,
                role="approver",
            ),
            withdraw_call,
        ),
    ]
