"""``GET /openapi.json``: an OpenAPI 3.1 document built from the route table and the body models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

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

_ERRORS = {
    "401": "Missing or invalid bearer token (UNAUTHORIZED)",
    "404": "Unknown agent, or no such run for this agent (AGENT_NOT_FOUND, AGENT_RESUME_NO_SNAPSHOT_FOUND)",
    "409": "The call was already decided or is not pending (AGENT_TOOL_CALL_ALREADY_DECIDED, ...)",
    "412": "Fingerprint does not match the pending call (AGENT_APPROVAL_FINGERPRINT_MISMATCH)",
    "413": "Request body too large (REQUEST_TOO_LARGE)",
    "422": "Invalid body, query or resume data (INVALID_REQUEST, AGENT_RESUME_DATA_INVALID)",
}


def _schema(model: type[BaseModel], components: dict[str, Any]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
    for name, sub in schema.pop("$defs", {}).items():
        components[name] = sub
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
                params.append({"name": pname, "in": "query", "required": False, "schema": pschema})
        if "{runId}" in spec.path:
            params.append({"name": "runId", "in": "path", "required": True, "schema": {"type": "string"}})
        if params:
            op["parameters"] = params
        if spec.body is not None:
            op["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": _schema(spec.body, components)}},
            }
        if spec.response == "sse":
            ok = {
                "description": "Server-sent events: one `data: <chunk JSON>` per chunk, then `data: [DONE]`. "
                "Header X-Warden-Run-Id carries the run id.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        else:
            ok = {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}
        responses: dict[str, Any] = {"200": ok}
        for status, desc in _ERRORS.items():
            if status == "401" and not spec.auth:
                continue
            responses[status] = {
                "description": desc,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
        op["responses"] = responses
        if spec.auth:
            op["security"] = [{"bearer": []}]
        paths.setdefault(spec.path, {})[spec.method.lower()] = op
    return {
        "openapi": "3.1.0",
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
