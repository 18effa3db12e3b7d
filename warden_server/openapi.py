"""``GET /openapi.json``: an OpenAPI 3.2 document built from the route table and the pydantic models.

Request bodies and query strings come from the same models the server
validates with (``warden_server.schemas``); chunks from ``agent_core.chunks``;
listings from ``agent_core.views``. Each route lists the error answers it can
give (``_errors_for``), all in the ``Error`` form. ``tests/server/test_schemathesis.py``
fuzzes a live server against this document.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from agent_core import wire
from agent_core.chunks import Chunk
from agent_core.decision_context import CallContext, TranscriptEntry
from agent_core.views import AuditPage, Grant, SuspendedRun, UnreadableRun
from warden_server import external_routes, studio_routes

_ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "details": {}},
        }
    },
}

# Every error answer a route can give, by status: the route table says which apply to a route.
_ERRORS = {
    "401": "Missing or invalid bearer token (UNAUTHORIZED)",
    "403": "The token's role does not allow this (FORBIDDEN); nothing was changed",
    "404": "Unknown agent, or no such run for this agent (AGENT_NOT_FOUND, AGENT_RESUME_NO_SNAPSHOT_FOUND)",
    "408": "The request body did not arrive within the server's deadline (REQUEST_TIMEOUT)",
    "409": "The call was already decided or is not pending (AGENT_TOOL_CALL_ALREADY_DECIDED, ...)",
    "412": "Fingerprint does not match the pending call (AGENT_APPROVAL_FINGERPRINT_MISMATCH)",
    "413": "Request body too large (REQUEST_TOO_LARGE)",
    "422": "Invalid body or query: not JSON, nested too deeply, an integer too long, a lone surrogate, a field "
    "out of range, or resume data that does not validate (INVALID_REQUEST, AGENT_RESUME_DATA_INVALID, "
    "STORAGE_TEXT_INVALID)",
    "503": "The server's store cannot serve the request: unavailable, damaged, read-only, or a record "
    "unreadable (STORAGE_*, AGENT_SNAPSHOT_CORRUPT)",
}


def _errors_for(spec: Any) -> list[str]:
    statuses = ["503"] if spec.path.startswith("/api/") else []
    if spec.auth:
        statuses.append("401")
    if getattr(spec, "role", "viewer") != "viewer":
        statuses.append("403")
    if "{" in spec.path or spec.query is not None:
        statuses.append("404")  # an unknown agent, run or grant (a listing's agentId filter included)
    if spec.query is not None or spec.body is not None:
        statuses.append("422")
    if spec.name == "resolveId":
        statuses.append("409")  # an ambiguous prefix
    if spec.body is not None:
        statuses += ["408", "413"]
        if spec.name not in ("stream", "generate"):
            statuses += ["409", "412"]
    return sorted(set(statuses))


def _non_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter's schema without pydantic's ``null`` branch (a query string has no null)."""
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        rest = [b for b in branches if b != {"type": "null"}]
        if len(rest) == 1:
            out = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
            out.update(rest[0])
            return out
    return {k: v for k, v in schema.items() if k != "default" or v is not None}


def _schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
    for name, sub in schema.pop("$defs", {}).items():
        components[name] = sub
    components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _response_schema(spec: Any, components: dict[str, Any]) -> dict[str, Any]:
    """The JSON answer of a route, as far as the wire encoding fixes it (see ``agent_core.wire``)."""
    if spec.name == "health":
        return {"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}}
    if spec.name in external_routes.RESPONSES:
        return external_routes.RESPONSES[spec.name]
    if spec.name in studio_routes.RESPONSES:
        return studio_routes.RESPONSES[spec.name]
    if spec.name == "openapi":
        return {"type": "object", "required": ["openapi", "paths"]}
    if spec.name == "listAgents":
        agent = {
            "type": "object",
            "required": ["id", "name", "tools", "agents"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "tools": {"type": "object"},
                "agents": {"type": "object"},
            },
        }
        return {"type": "object", "additionalProperties": agent}
    if spec.name == "listAudit":
        return _view_schema(AuditPage, components)
    if spec.name == "getSuspendedRun":
        return _view_schema(SuspendedRun, components)
    if spec.name in ("listSuspendedRuns", "listAllSuspendedRuns"):
        components["SuspendedRunList"] = {
            "type": "object",
            "required": ["runs", "total"],
            "properties": {
                "runs": {"type": "array", "items": _view_schema(SuspendedRun, components)},
                "total": {"type": "integer", "minimum": 0},
                "page": {"type": "integer", "minimum": 0},
                "perPage": {"type": "integer", "minimum": 1},
                "unreadable": {"type": "array", "items": _view_schema(UnreadableRun, components)},
                "counts": {
                    "type": "object",
                    "description": "pending calls per kind under the same filters (withCounts=true)",
                    "required": ["approval", "input"],
                    "properties": {
                        "approval": {"type": "integer", "minimum": 0},
                        "input": {"type": "integer", "minimum": 0},
                    },
                },
            },
        }
        return {"$ref": "#/components/schemas/SuspendedRunList"}
    if spec.name == "sweep":
        return {"type": "object", "required": ["expired"], "properties": {"expired": {"type": "integer"}}}
    if spec.name == "listGrants":
        grant = _view_schema(Grant, components)
        return {"type": "object", "required": ["grants"], "properties": {"grants": {"type": "array", "items": grant}}}
    if spec.name == "createGrant":
        return _view_schema(Grant, components)
    if spec.name == "revokeGrant":
        return {"type": "object", "required": ["revoked"], "properties": {"revoked": {"type": "string"}}}
    if spec.name == "resolveId":
        return {
            "type": "object",
            "required": ["id", "kind"],
            "properties": {"id": {"type": "string"}, "kind": {"type": "string", "enum": ["run", "call"]}},
        }
    if spec.name == "recover":
        return {"type": "object", "required": ["recovered"], "properties": {"recovered": {"type": "integer"}}}
    if spec.name == "verifyAudit":
        nullable_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
        nullable_str = {"anyOf": [{"type": "string"}, {"type": "null"}]}
        return {
            "type": "object",
            "required": ["ok", "checked", "unsealed", "brokenSeq", "problem"],
            "properties": {
                "ok": {"type": "boolean"},
                "checked": {"type": "integer"},
                "unsealed": {"type": "integer"},
                "brokenSeq": nullable_int,
                "problem": nullable_str,
            },
        }
    if spec.name == "getRunContext":
        return {
            "type": "object",
            "required": ["runId", "calls", "transcript", "decisions"],
            "properties": {
                "runId": {"type": "string"},
                "calls": {"type": "object", "additionalProperties": _view_schema(CallContext, components)},
                "transcript": {"type": "array", "items": _view_schema(TranscriptEntry, components)},
                "decisions": {"type": "array", "items": {"type": "object"}},
            },
        }
    if spec.name == "sendToolApproval":
        return {
            "type": "object",
            "required": ["accepted", "runId", "chunks"],
            "properties": {
                "accepted": {"type": "boolean"},
                "runId": {"type": "string"},
                "status": {"type": ["string", "null"]},
                "toolCallId": {"type": "string"},
                "chunks": {"type": "array", "items": {"$ref": "#/components/schemas/Chunk"}},
            },
        }
    # generate and the *-generate decisions: a GenerateResult
    components["GenerateResult"] = {
        "type": "object",
        "required": ["text", "finishReason", "runId"],
        "properties": {
            "text": {"type": "string"},
            "finishReason": {"type": "string"},
            "runId": {"type": "string"},
            "suspendPayload": {"type": ["object", "null"]},
            "suspendType": {"enum": ["tool-call-approval", "tool-call-suspended"]},
            "steps": {"type": "array"},
            "toolCalls": {"type": "array"},
            "toolResults": {"type": "array"},
        },
    }
    return {"$ref": "#/components/schemas/GenerateResult"}


def _view_schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    if model.__name__ not in components:
        schema = model.model_json_schema(
            by_alias=True, mode="serialization", ref_template="#/components/schemas/{model}"
        )
        for name, sub in schema.pop("$defs", {}).items():
            components.setdefault(name, sub)
        components[model.__name__] = schema
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def build_openapi(routes: list[tuple[Any, Any]]) -> dict[str, Any]:
    components: dict[str, Any] = {"Error": _ERROR_SCHEMA}
    paths: dict[str, Any] = {}
    for spec, _handler in routes:
        op: dict[str, Any] = {"operationId": spec.name, "summary": spec.summary}
        params = []
        if "{agentId}" in spec.path:
            params.append({"name": "agentId", "in": "path", "required": True, "schema": {"type": "string"}})
        if spec.query is not None:
            qschema = spec.query.model_json_schema(by_alias=True)
            for pname, pschema in qschema.get("properties", {}).items():
                params.append({"name": pname, "in": "query", "required": False, "schema": _non_null(pschema)})
        for name in re.findall(r"{(\w+)}", spec.path):
            if name != "agentId":
                params.append({"name": name, "in": "path", "required": True, "schema": {"type": "string"}})
        if params:
            op["parameters"] = params
        if spec.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": _schema(spec.body, components)}},
            }
        if spec.response == "sse":
            # OpenAPI 3.2: ``itemSchema`` describes each event of a sequential media type. Each event's
            # ``data`` is a chunk's JSON (``Chunk``), the last one ``[DONE]``.
            event = {
                "type": "object",
                "required": ["data"],
                "properties": {
                    "event": {"type": "string"},
                    "data": {
                        "anyOf": [
                            {"const": wire.SSE_DONE},
                            {
                                "type": "string",
                                "contentMediaType": "application/json",
                                "contentSchema": _schema(Chunk, components),
                            },
                        ]
                    },
                },
            }
            ok = {
                "description": "Server-sent events: one `data: <chunk JSON>` per chunk (a `Chunk`), then "
                "`data: [DONE]`; comment lines (`: ping`) keep an idle stream open. Header X-Warden-Run-Id "
                "carries the run id.",
                "headers": {wire.RUN_ID_HEADER: {"schema": {"type": "string"}, "description": "the run id"}},
                "content": {wire.SSE_MEDIA_TYPE: {"itemSchema": event}},
            }
        elif spec.response == "events":
            store_event = {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": {"enum": ["subscribed", "suspended", "decided", "ended", "changed"]},
                    "runId": {"type": "string"},
                    "toolCallId": {"type": "string"},
                    "decision": {"type": "string"},
                    "agentId": {"type": "string"},
                },
            }
            components["StoreEvent"] = store_event
            event = {
                "type": "object",
                "required": ["data"],
                "properties": {
                    "event": {"type": "string"},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": {"$ref": "#/components/schemas/StoreEvent"},
                    },
                },
            }
            ok = {
                "description": "Server-sent events of the pending set: `subscribed` first, then `suspended`, "
                "`decided`, `ended` or `changed` (a `StoreEvent` each, camelCase keys); comment lines keep "
                "an idle stream open. The stream does not end by itself.",
                "content": {wire.SSE_MEDIA_TYPE: {"itemSchema": event}},
            }
        elif spec.response == "html":
            ok = {"description": "A static HTML page", "content": {"text/html": {"schema": {"type": "string"}}}}
        else:
            ok = {"description": "OK", "content": {"application/json": {"schema": _response_schema(spec, components)}}}
        responses: dict[str, Any] = {"200": ok}
        for status in _errors_for(spec):
            desc = _ERRORS[status]
            responses[status] = {
                "description": desc,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
        op["responses"] = responses
        if spec.auth:
            op["security"] = [{"bearer": []}]
        paths.setdefault(spec.path, {})[spec.method.lower()] = op
    return {
        "openapi": "3.2.0",
        "info": {
            "title": "Warden API",
            "version": "1",
            "description": "Human-in-the-loop approval for agents; routes compatible with Mastra's server.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
