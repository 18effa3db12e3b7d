"""Warden's wire protocol, written once: what the HTTP server sends and the client SDK reads.

Routes (Mastra's paths), header names, the error-code -> HTTP-status map and the
error body, the camelCase encoding of results, chunks and listings and their
decoding; the fold of chunks into a stream's outcome lives in ``agent_core.fold`` ,
which ``AgentStream``, the remote streams and ``GenerateResult.from_chunks`` share.

Plain pydantic: this module imports neither Starlette nor httpx (an import
contract checks it), so the server, the client and the console can all use it.

Field *names* of Warden's models become camelCase (``run_id`` -> ``runId``);
keys of plain dicts (tool args, results, payloads: user data) are kept as they are.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any, Unpack
from urllib.parse import quote

from pydantic import BaseModel
from pydantic.alias_generators import to_camel
from pydantic_core import to_jsonable_python

from agent_core.chunks import PAYLOAD_TYPES, Chunk, ToolCallPayload, ToolResultPayload
from agent_core.errors import (
    AgentNotFound,
    AlreadyDecided,
    AmbiguousIdPrefix,
    AmbiguousToolCall,
    ApprovalExpired,
    CorruptRecord,
    CorruptSnapshot,
    EditNotSupported,
    FingerprintMismatch,
    GrantNotAllowed,
    GrantNotFound,
    InvalidRequest,
    ResumeDataInvalid,
    SchemaTooNew,
    SnapshotNotFound,
    StorageError,
    StoreClosed,
    StoreCorrupt,
    StoreReadOnly,
    StoreUnavailable,
    ToolArgsInvalid,
    ToolCallNotSuspended,
    UnstorableText,
    WardenError,
    WrongDecisionKind,
)
from agent_core.fold import StepSummary
from agent_core.models import Message, Usage
from agent_core.options import ListFilters, SentRunOptions, check_options
from agent_core.stream import GenerateResult
from agent_core.views import SuspendedRun, SuspendedRunList

# ---------------------------------------------------------------------------------------------
# routes (Mastra's paths; ``{agentId}`` and ``{runId}`` are filled by ``path``)

HEALTH = "/health"
OPENAPI = "/openapi.json"
API = "/api"
AGENTS = "/api/agents"
AGENT = "/api/agents/{agentId}"
STREAM = f"{AGENT}/stream"
GENERATE = f"{AGENT}/generate"
APPROVE_TOOL_CALL = f"{AGENT}/approve-tool-call"
DECLINE_TOOL_CALL = f"{AGENT}/decline-tool-call"
RESUME_STREAM = f"{AGENT}/resume-stream"
APPROVE_TOOL_CALL_GENERATE = f"{AGENT}/approve-tool-call-generate"
DECLINE_TOOL_CALL_GENERATE = f"{AGENT}/decline-tool-call-generate"
RESUME_GENERATE = f"{AGENT}/resume-generate"
SEND_TOOL_APPROVAL = f"{AGENT}/send-tool-approval"
AGENT_SUSPENDED_RUNS = f"{AGENT}/suspended-runs"
SUSPENDED_RUNS = "/api/suspended-runs"  # Warden extension: every agent's pending runs
AUDIT = "/api/audit"  # Warden extension: the audit trail, filtered and paged
SUSPENDED_RUN = "/api/suspended-runs/{runId}"  # Warden extension: one pending run
SWEEP = "/api/sweep"  # Warden extension: expire overdue approvals now
GRANTS = "/api/grants"  # Warden extension: GET lists live grants, POST creates one
GRANT_REVOKE = "/api/grants/{grantId}/revoke"  # Warden extension: revoke a grant


def path(route: str, **params: str) -> str:
    """``path(STREAM, agentId="ops")`` -> ``/api/agents/ops/stream`` (each value percent-encoded)."""
    return route.format(**{k: quote(v, safe="") for k, v in params.items()})


def normalize_base_url(base_url: str) -> str:
    """A base URL may end in ``/api`` or not; the routes above include it."""
    base = base_url.rstrip("/")
    return base[: -len(API)] if base.endswith(API) else base


# ---------------------------------------------------------------------------------------------
# headers and server-sent events

RUN_ID_HEADER = "X-Warden-Run-Id"  # the run id of a streamed answer, known before the first chunk
AUTHORIZATION = "Authorization"
WWW_AUTHENTICATE = "WWW-Authenticate"
SSE_MEDIA_TYPE = "text/event-stream"
SSE_DONE = "[DONE]"  # the data of the last event of a stream


def bearer(token: str | None) -> dict[str, str]:
    return {AUTHORIZATION: f"Bearer {token}"} if token else {}


# ---------------------------------------------------------------------------------------------
# errors: ``{"error": {"code", "message", "details"?}}`` with an HTTP status per code

# Codes of errors that exist only at the HTTP layer (the client maps them to its own classes).
UNAUTHORIZED = "UNAUTHORIZED"
FORBIDDEN = "FORBIDDEN"  # the token is valid but its role does not allow the action
REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
REQUEST_TIMEOUT = "REQUEST_TIMEOUT"  # the request body did not arrive within the server's deadline
INVALID_REQUEST = InvalidRequest.code
NOT_FOUND = "NOT_FOUND"
METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
INTERNAL_ERROR = "INTERNAL_ERROR"
HTTP_ERROR = "HTTP_ERROR"  # the client's code for a 4xx without a typed body

STATUS_BY_CODE: dict[str, int] = {
    AgentNotFound.code: 404,
    SnapshotNotFound.code: 404,
    ToolCallNotSuspended.code: 409,
    AlreadyDecided.code: 409,
    WrongDecisionKind.code: 409,
    AmbiguousToolCall.code: 409,
    AmbiguousIdPrefix.code: 409,
    FingerprintMismatch.code: 412,
    ResumeDataInvalid.code: 422,
    ToolArgsInvalid.code: 422,
    EditNotSupported.code: 422,
    ApprovalExpired.code: 409,
    GrantNotAllowed.code: 403,
    GrantNotFound.code: 404,
    InvalidRequest.code: 422,
    CorruptSnapshot.code: 503,
    # storage: bad input is the client's (422); a store that cannot serve is the server's (503, never 500)
    UnstorableText.code: 422,
    StorageError.code: 503,
    StoreClosed.code: 503,
    StoreUnavailable.code: 503,
    StoreCorrupt.code: 503,
    StoreReadOnly.code: 503,
    SchemaTooNew.code: 503,
    CorruptRecord.code: 503,
    UNAUTHORIZED: 401,
    FORBIDDEN: 403,
    NOT_FOUND: 404,
    METHOD_NOT_ALLOWED: 405,
    REQUEST_TIMEOUT: 408,
    REQUEST_TOO_LARGE: 413,
    INTERNAL_ERROR: 500,
}

#: The code a client assumes when an error answer carries none (a proxy's page, Mastra's ``{"error": str}``).
CODE_BY_STATUS: dict[int, str] = {
    401: UNAUTHORIZED,
    403: FORBIDDEN,
    404: NOT_FOUND,
    408: REQUEST_TIMEOUT,
    413: REQUEST_TOO_LARGE,
    422: INVALID_REQUEST,
}


def status_for(exc: WardenError) -> int:
    """HTTP status of a runtime error: the code of its class, or of the nearest base class that has one."""
    for cls in type(exc).__mro__:
        code = vars(cls).get("code")
        if isinstance(code, str) and code in STATUS_BY_CODE:
            return STATUS_BY_CODE[code]
    return 500


def code_for_status(status: int) -> str:
    return CODE_BY_STATUS.get(status, INTERNAL_ERROR if status >= 500 else HTTP_ERROR)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        err["details"] = details
    return {"error": err}


def decode_error_body(content: bytes) -> tuple[str | None, str | None, Any]:
    """``(code, message, details)`` of an error answer; ``None`` where the body does not say."""
    try:
        data: Any = json.loads(content) if content else None
    except (ValueError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        err = data["error"]
        return err.get("code"), err.get("message"), err.get("details")
    if isinstance(data, dict) and isinstance(data.get("error"), str):  # Mastra's own form
        return None, data["error"], None
    return None, None, None


# ---------------------------------------------------------------------------------------------
# encoding (server side)


def camel(obj: Any) -> Any:
    """JSON-ready form of ``obj`` with camelCase field names for models and dataclasses."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, Chunk):
        return obj.to_json()
    if isinstance(obj, Usage):
        return {
            "inputTokens": obj.input_tokens,
            "outputTokens": obj.output_tokens,
            "totalTokens": obj.total_tokens,
        }
    if isinstance(obj, BaseModel):
        out: dict[str, Any] = {}
        for name, field in type(obj).model_fields.items():
            key = field.serialization_alias or (field.alias if field.alias and field.alias != name else None)
            out[key or to_camel(name)] = camel(getattr(obj, name))
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {to_camel(f.name): camel(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): camel(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [camel(v) for v in obj]
    if isinstance(obj, _dt.datetime):
        if obj.tzinfo is None:
            obj = obj.replace(tzinfo=_dt.UTC)
        return obj.isoformat()
    if isinstance(obj, enum.Enum):
        return camel(obj.value)
    return to_jsonable_python(obj, fallback=str)


def encode_chunk(chunk: Chunk) -> dict[str, Any]:
    return chunk.to_json()


def encode_error_chunk(run_id: str, error: str, code: str) -> dict[str, Any]:
    """The in-band ``error`` chunk of a stream whose producer failed (built without validation)."""
    return {"type": "error", "runId": run_id, "from": "AGENT", "payload": {"error": error, "code": code}}


_GENERATE_FIELDS = (
    "text",
    "finish_reason",
    "suspend_payload",
    "run_id",
    "steps",
    "tool_calls",
    "tool_results",
    "usage",
)


def _usage_json(u: Any) -> Any:
    if isinstance(u, dict) and "input_tokens" in u:
        i, o = u.get("input_tokens") or 0, u.get("output_tokens") or 0
        return {"inputTokens": i, "outputTokens": o, "totalTokens": i + o}
    return u


def encode_generate_result(result: Any) -> dict[str, Any]:
    """``GenerateResult`` -> ``{text, finishReason, suspendPayload, suspendType, runId, steps, toolCalls, ...}``.

    Serialised by pydantic (its Rust core); only field names of the result, of its steps and of
    ``usage`` are renamed here (the payload models already have camelCase aliases).
    """
    if isinstance(result, BaseModel):
        dumped = result.model_dump(mode="json", by_alias=True)
        out = {to_camel(k): v for k, v in dumped.items()}
        out["steps"] = [
            {to_camel(k): v for k, v in step.items()} if isinstance(step, dict) else step
            for step in out.get("steps") or []
        ]
        out["usage"] = _usage_json(out.get("usage"))
    else:
        out = {to_camel(name): camel(getattr(result, name)) for name in _GENERATE_FIELDS if hasattr(result, name)}
    payload = getattr(result, "suspend_payload", None)
    if payload is not None:
        # Tell clients which payload model it is (approval or suspension) without guessing.
        out["suspendType"] = "tool-call-approval" if hasattr(payload, "fingerprint") else "tool-call-suspended"
    return out


def encode_suspended_run(run: Any) -> dict[str, Any]:
    out = run.model_dump(mode="json", by_alias=True) if isinstance(run, BaseModel) else camel(run)
    out.setdefault("status", "suspended")
    return out


def encode_suspended_run_list(result: Any) -> dict[str, Any]:
    runs = getattr(result, "runs", None)
    if runs is None and isinstance(result, dict):
        runs = result.get("runs", [])
    total = getattr(result, "total", None)
    if total is None and isinstance(result, dict):
        total = result.get("total", len(runs or []))
    out: dict[str, Any] = {"runs": [encode_suspended_run(r) for r in runs or []], "total": int(total or 0)}
    for name in ("page", "per_page"):
        if getattr(result, name, None) is not None:
            out[to_camel(name)] = getattr(result, name)
    counts = getattr(result, "counts", None)
    if counts is not None:  # asked for with ``withCounts=true``
        out["counts"] = dict(counts)
    unreadable = getattr(result, "unreadable", None)
    if unreadable:  # runs whose stored rows are corrupt: reported, never hiding the others
        out["unreadable"] = [u.model_dump(mode="json", by_alias=True) for u in unreadable]
    return out


def _tool_info(name: str, tool: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"id": getattr(tool, "id", name), "description": getattr(tool, "description", "")}
    req = getattr(tool, "require_approval", None)
    if req is not None:
        info["requireApproval"] = req
    if getattr(tool, "allow_grants", True) is False:
        info["allowGrants"] = False  # the console's grant key says so before asking
    schema = getattr(tool, "input_schema", None)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        info["inputSchema"] = schema.model_json_schema()
    elif isinstance(schema, dict):
        info["inputSchema"] = schema
    return info


def model_provider(model_id: str | None) -> str:
    """The provider of a ``provider/model`` id (an id without ``/`` is its own provider): Mastra's
    agent listing names it, and Mastra Studio shows it in its agents table."""
    if not model_id:
        return "unknown"
    return model_id.split("/", 1)[0]


def encode_agents(agents: Mapping[str, Any]) -> dict[str, Any]:
    """The agents of a runtime, keyed by their key: ``{id, name, instructions, provider, modelId, tools, agents}``."""
    out: dict[str, Any] = {}
    for key, agent in agents.items():
        tools = getattr(agent, "tools", None) or {}
        if not isinstance(tools, dict):
            tools = {getattr(t, "id", str(i)): t for i, t in enumerate(tools)}
        subagents = getattr(agent, "agents", None) or {}
        model = getattr(agent, "model", None)
        model_id = getattr(model, "model_id", model if isinstance(model, str) else None)
        out[key] = {
            "id": getattr(agent, "id", key),
            "name": getattr(agent, "name", None) or key,
            "instructions": getattr(agent, "instructions", None),
            "provider": model_provider(model_id),
            "modelId": model_id,
            "tools": {name: _tool_info(name, t) for name, t in tools.items()},
            "agents": {
                name: {"id": getattr(a, "id", name), "name": getattr(a, "name", name)}
                for name, a in (subagents.items() if isinstance(subagents, dict) else [])
            },
        }
    return out


# ---------------------------------------------------------------------------------------------
# requests (client side; the server validates them with warden_server.schemas)


def _message_json(m: Any) -> Any:
    if isinstance(m, Message):
        return {"role": m.role, "content": m.content}
    return m


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def stream_request(messages: str | Sequence[Any], **options: Unpack[SentRunOptions]) -> dict[str, Any]:
    """Body of ``stream`` / ``generate``; an option that cannot be sent raises ``InvalidRequest``."""
    check_options(options, SentRunOptions, "stream over HTTP")
    thread_id, resource_id = options.get("thread_id"), options.get("resource_id")
    require_tool_approval = options.get("require_tool_approval")
    if require_tool_approval is not None and not isinstance(require_tool_approval, bool):
        raise TypeError("over HTTP require_tool_approval is True, False or None (a policy function cannot be sent)")
    body: dict[str, Any] = {
        "messages": messages if isinstance(messages, str) else [_message_json(m) for m in messages],
    }
    if require_tool_approval is not None:
        body["requireToolApproval"] = require_tool_approval
    if options.get("max_steps") is not None:
        body["maxSteps"] = options["max_steps"]
    if thread_id is not None:
        body["threadId"] = thread_id
        body["memory"] = {"thread": thread_id, **({"resource": resource_id} if resource_id else {})}
    if resource_id is not None:
        body["resourceId"] = resource_id
    if options.get("request_context") is not None:
        body["requestContext"] = options["request_context"]
    if options.get("approval_timeout") is not None:
        body["approvalTimeout"] = options["approval_timeout"]
    if options.get("actor") is not None:
        body["actor"] = options["actor"]
    return body


def approve_request(
    run_id: str, tool_call_id: str | None, fingerprint: str | None, args: dict[str, Any] | None = None
) -> dict[str, Any]:
    return drop_none({"runId": run_id, "toolCallId": tool_call_id, "fingerprint": fingerprint, "args": args})


def grant_request(
    tool_name: str,
    *,
    scope: str,
    scope_id: str | None,
    agent_id: str | None,
    args_match: dict[str, Any] | None,
    expires_in: float | None,
    command_match: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Body of ``POST /api/grants`` (``expiresIn: null`` asks for a grant until revoked)."""
    body = drop_none(
        {
            "toolName": tool_name,
            "scope": scope,
            "scopeId": scope_id,
            "agentId": agent_id,
            "argsMatch": args_match,
            "commandMatch": command_match,
        }
    )
    body["expiresIn"] = expires_in
    return body


def decline_request(run_id: str, tool_call_id: str | None, reason: str | None) -> dict[str, Any]:
    return drop_none({"runId": run_id, "toolCallId": tool_call_id, "reason": reason})


def resume_request(resume_data: dict[str, Any], run_id: str, tool_call_id: str | None) -> dict[str, Any]:
    return drop_none({"runId": run_id, "toolCallId": tool_call_id, "resumeData": resume_data})


def send_tool_approval_request(
    *,
    thread_id: str,
    resource_id: str | None,
    approved: bool,
    tool_call_id: str | None,
    run_id: str | None,
    resume_data: dict[str, Any] | None,
) -> dict[str, Any]:
    return drop_none(
        {
            "threadId": thread_id,
            "resourceId": resource_id,
            "approved": approved,
            "toolCallId": tool_call_id,
            "runId": run_id,
            "resumeData": resume_data,
        }
    )


def suspended_runs_query(*, agent_id: str | None = None, **filters: Unpack[ListFilters]) -> dict[str, Any]:
    """Query string of a listing (the server's ``SuspendedRunsQuery``); defaults are left out."""
    check_options(filters, ListFilters, "list_suspended_runs")
    sort = filters.get("sort")
    return drop_none(
        {
            "agentId": agent_id,
            "threadId": filters.get("thread_id"),
            "resourceId": filters.get("resource_id"),
            "page": filters.get("page", 0),
            "perPage": filters.get("per_page", 50),
            "q": filters.get("query") or None,
            "toolName": filters.get("tool_name"),
            "kind": filters.get("kind"),
            "sort": None if sort in (None, "age") else sort,
            "withCounts": "true" if filters.get("with_counts") else None,
        }
    )


# ---------------------------------------------------------------------------------------------
# decoding (client side)


def decode_chunk(data: dict[str, Any]) -> Chunk | None:
    """A chunk's JSON -> ``Chunk``; ``None`` for a chunk type this side does not know (forward compatible)."""
    if data.get("type") not in PAYLOAD_TYPES:
        return None
    return Chunk.from_json(data)


def decode_generate_result(data: dict[str, Any]) -> GenerateResult:
    """The JSON of a ``/generate``-style route -> the runtime's own ``GenerateResult``."""
    payload = data.get("suspendPayload")
    kind = data.get("suspendType")
    suspend_payload = None
    if isinstance(payload, dict):
        if kind not in ("tool-call-approval", "tool-call-suspended"):
            kind = "tool-call-approval" if "fingerprint" in payload else "tool-call-suspended"
        suspend_payload = PAYLOAD_TYPES[kind].model_validate(payload)
    usage = data.get("usage") or {}
    steps = [
        StepSummary(
            step=s.get("step", 0),
            text=s.get("text", ""),
            finish_reason=s.get("finishReason"),
            tool_calls=[ToolCallPayload.model_validate(c) for c in s.get("toolCalls") or []],
        )
        for s in data.get("steps") or []
    ]
    return GenerateResult(
        run_id=data.get("runId", ""),
        text=data.get("text", ""),
        finish_reason=data.get("finishReason") or "stop",
        suspend_payload=suspend_payload,
        steps=steps,
        tool_calls=[ToolCallPayload.model_validate(c) for c in data.get("toolCalls") or []],
        tool_results=[ToolResultPayload.model_validate(c) for c in data.get("toolResults") or []],
        usage=Usage(input_tokens=usage.get("inputTokens", 0) or 0, output_tokens=usage.get("outputTokens", 0) or 0),
        error=data.get("error"),
        status=data.get("status") or "finished",
    )


def decode_suspended_run(data: Any) -> SuspendedRun:
    return SuspendedRun.model_validate(data)


def decode_suspended_run_list(data: Any) -> SuspendedRunList:
    return SuspendedRunList.model_validate(data)
