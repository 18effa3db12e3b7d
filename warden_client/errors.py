"""HTTP error answers -> the same ``WardenError`` subclasses the runtime raises, chosen by ``code``."""

from __future__ import annotations

import agent_core.errors as core_errors
from agent_core import wire
from agent_core.errors import WardenError


class Unauthorized(WardenError):
    """401: no bearer token, or not the right one."""

    code = wire.UNAUTHORIZED


class Forbidden(WardenError):
    """403: the token is valid but its role does not allow this (nothing was changed)."""

    code = wire.FORBIDDEN


class RequestTooLarge(WardenError):
    """413: the request body is over the server's limit."""

    code = wire.REQUEST_TOO_LARGE


# The runtime's own class (same code) when it has one, so one ``except`` catches both.
InvalidRequest: type[WardenError] = getattr(core_errors, "InvalidRequest", None) or type(
    "InvalidRequest",
    (WardenError,),
    {"code": wire.INVALID_REQUEST, "__doc__": "422: the body or query does not validate."},
)


class RouteNotFound(WardenError):
    """404 on a path the server does not serve (not an unknown agent or run: those have their own codes)."""

    code = wire.NOT_FOUND


class ServerError(WardenError):
    """5xx without a more specific code."""

    code = wire.INTERNAL_ERROR


class ProtocolError(WardenError):
    """The server answered something that is not Warden's API (wrong content type, bad JSON)."""

    code = "CLIENT_PROTOCOL_ERROR"


def _subclasses(cls: type[WardenError]) -> list[type[WardenError]]:
    out: list[type[WardenError]] = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def _registry() -> dict[str, type[WardenError]]:
    reg: dict[str, type[WardenError]] = {}
    # Warden's own classes first (agent_core.errors re-exports storage's), then any others.
    for name in getattr(core_errors, "__all__", ()):
        cls = getattr(core_errors, name, None)
        if isinstance(cls, type) and issubclass(cls, WardenError):
            reg.setdefault(cls.code, cls)
    for cls in (Unauthorized, RequestTooLarge, InvalidRequest, RouteNotFound, ServerError, ProtocolError):
        reg.setdefault(cls.code, cls)
    for cls in _subclasses(WardenError):
        reg.setdefault(cls.code, cls)
    return reg


def error_class(code: str) -> type[WardenError]:
    return _registry().get(code, WardenError)


def error_from_response(status: int, content: bytes) -> WardenError:
    """Build the exception for a non-2xx answer; ``.status_code`` and ``.details`` are attached."""
    code, message, details = wire.decode_error_body(content)
    if not code:
        code = wire.code_for_status(status)
    if not message:
        message = f"HTTP {status}: {content[:200].decode('utf-8', 'replace')}"
    cls = error_class(code)
    exc: WardenError
    try:
        if cls is core_errors.ResumeDataInvalid:
            exc = cls(message, errors=details if isinstance(details, list) else None)
        elif cls is WardenError:
            exc = WardenError(message, code=code)
        else:
            exc = cls(message)
    except TypeError:
        exc = WardenError(message, code=code)
    exc.status_code = status  # type: ignore[attr-defined]
    exc.details = details  # type: ignore[attr-defined]
    return exc


__all__ = [
    "InvalidRequest",
    "ProtocolError",
    "RequestTooLarge",
    "RouteNotFound",
    "ServerError",
    "Unauthorized",
    "error_class",
    "error_from_response",
]
