"""Typed JSON errors: ``{"error": {"code", "message"}}`` with an HTTP status per error code."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse

from agent_core.errors import (
    AgentNotFound,
    AlreadyDecided,
    AmbiguousToolCall,
    CorruptSnapshot,
    FingerprintMismatch,
    InvalidRequest,
    ResumeDataInvalid,
    SnapshotNotFound,
    StoreClosed,
    ToolCallNotSuspended,
    WardenError,
    WrongDecisionKind,
)

log = logging.getLogger("warden.server")

# Codes of errors that exist only at the HTTP layer (the client maps them to its own classes).
UNAUTHORIZED = "UNAUTHORIZED"
REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
INVALID_REQUEST = "INVALID_REQUEST"
NOT_FOUND = "NOT_FOUND"
METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
INTERNAL_ERROR = "INTERNAL_ERROR"

#: Most specific class first; ``status_for`` walks the MRO.
STATUS_BY_CLASS: dict[type[WardenError], int] = {
    AgentNotFound: 404,
    SnapshotNotFound: 404,
    ToolCallNotSuspended: 409,
    AlreadyDecided: 409,
    WrongDecisionKind: 409,
    AmbiguousToolCall: 409,
    FingerprintMismatch: 412,
    ResumeDataInvalid: 422,
    InvalidRequest: 422,
    CorruptSnapshot: 500,
    StoreClosed: 503,
}


def status_for(exc: WardenError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS_BY_CLASS:
            return STATUS_BY_CLASS[cls]
    return 500


def error_response(
    status: int, code: str, message: str, *, details: Any = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    err: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        err["details"] = details
    return JSONResponse({"error": err}, status_code=status, headers=headers)


def warden_error_response(exc: WardenError) -> JSONResponse:
    status = status_for(exc)
    if status >= 500:
        log.error("request failed with %s: %s", exc.code, exc.message)
    details = getattr(exc, "errors", None) or None
    return error_response(status, exc.code, exc.message, details=_jsonable(details))


def validation_error_response(exc: ValidationError, where: str = "body") -> JSONResponse:
    details = [
        {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
        for e in exc.errors(include_url=False, include_input=False)
    ]
    first = details[0] if details else {"loc": [], "msg": "invalid"}
    loc = ".".join(str(p) for p in first["loc"]) or where
    return error_response(422, INVALID_REQUEST, f"invalid request {where}: {loc}: {first['msg']}", details=details)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)
