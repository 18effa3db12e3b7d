"""Typed JSON errors: ``{"error": {"code", "message"}}`` with an HTTP status per error code."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse

from agent_core import wire
from agent_core.errors import WardenError

log = logging.getLogger("warden.server")

# The codes and the status of each error code are part of the wire protocol (agent_core.wire).
UNAUTHORIZED = wire.UNAUTHORIZED
REQUEST_TOO_LARGE = wire.REQUEST_TOO_LARGE
INVALID_REQUEST = wire.INVALID_REQUEST
NOT_FOUND = wire.NOT_FOUND
METHOD_NOT_ALLOWED = wire.METHOD_NOT_ALLOWED
INTERNAL_ERROR = wire.INTERNAL_ERROR
status_for = wire.status_for


def error_response(
    status: int, code: str, message: str, *, details: Any = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(wire.error_body(code, message, details), status_code=status, headers=headers)


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
    return error_response(
        wire.STATUS_BY_CODE[INVALID_REQUEST],
        INVALID_REQUEST,
        f"invalid request {where}: {loc}: {first['msg']}",
        details=details,
    )


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)
