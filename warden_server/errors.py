"""Typed JSON errors: ``{"error": {"code", "message"}}`` with an HTTP status per error code."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse

from agent_core import wire
from agent_core.errors import StorageError, UnstorableText, WardenError

log = logging.getLogger("warden.server")

# The codes and the status of each error code are part of the wire protocol (agent_core.wire).
UNAUTHORIZED = wire.UNAUTHORIZED
REQUEST_TOO_LARGE = wire.REQUEST_TOO_LARGE
REQUEST_TIMEOUT = wire.REQUEST_TIMEOUT
INVALID_REQUEST = wire.INVALID_REQUEST
NOT_FOUND = wire.NOT_FOUND
METHOD_NOT_ALLOWED = wire.METHOD_NOT_ALLOWED
INTERNAL_ERROR = wire.INTERNAL_ERROR
status_for = wire.status_for


def error_response(
    status: int, code: str, message: str, *, details: Any = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(wire.error_body(code, message, details), status_code=status, headers=headers)


# What a client is told for errors whose library message may name server-side things (the
# store and its file, a path, a stored row). The code stays the library's, so programs still
# know what happened; the detailed message goes to the server's log.
_SAFE_MESSAGES: dict[str, str] = {
    UnstorableText.code: "the request contains text that cannot be stored (a lone surrogate such as \\ud800)",
    "STORAGE_CLOSED": "the server's store is closed; try again later",
    "STORAGE_UNAVAILABLE": "the server's store is unavailable; try again later",
    "STORAGE_CORRUPT": "the server's store is damaged; an operator must repair it",
    "STORAGE_READ_ONLY": "the server's store is read-only; nothing was changed",
    "STORAGE_SCHEMA_TOO_NEW": "the server's store was written by a newer Warden; nothing was changed",
    "STORAGE_RECORD_CORRUPT": "a stored record is unreadable; an operator must repair or delete it",
    "AGENT_SNAPSHOT_CORRUPT": "the stored snapshot of this run is unreadable; an operator must repair or delete it",
}
_GENERIC_5XX = "internal server error"
# A store's name as the storage layer prints it (``SqliteStore('/srv/warden.db')``), whatever the class.
_STORE_NAME = re.compile(r"\b[A-Z][A-Za-z]*Store\((?:'[^']*'|\"[^\"]*\"|[^()]*)\)")


def client_message(exc: WardenError, secrets: Iterable[str] = ()) -> str:
    """The message of ``exc`` that is safe to send to any client.

    Storage errors and server-side failures get a fixed message per code; the
    runtime's other errors keep their message (it names the client's own run and
    call ids) with every store name and each of ``secrets`` (the store's name,
    its path) cut out.
    """
    code = exc.code
    if code in _SAFE_MESSAGES:
        return _SAFE_MESSAGES[code]
    if isinstance(exc, StorageError) or status_for(exc) >= 500:
        return _GENERIC_5XX if status_for(exc) >= 500 else "the request could not be stored"
    return scrub(exc.message, secrets)


def scrub(message: str, secrets: Iterable[str] = ()) -> str:
    for secret in sorted((s for s in secrets if s and len(s) >= 3), key=len, reverse=True):
        message = message.replace(f" in {secret}", "").replace(secret, "the store")
    message = _STORE_NAME.sub("the store", message)
    return message.replace(" in the store", "")


def warden_error_response(exc: WardenError, secrets: Iterable[str] = ()) -> JSONResponse:
    status = status_for(exc)
    safe = client_message(exc, secrets)
    if status >= 500:
        log.error("request failed with %s: %s", exc.code, exc.message)
    elif safe != exc.message:
        log.info("request refused with %s: %s", exc.code, exc.message)
    details = getattr(exc, "errors", None) or None
    return error_response(status, exc.code, safe, details=_jsonable(details))


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
