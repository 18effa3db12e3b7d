"""CORS for browser UIs (``warden serve --cors-origin ORIGIN``), Mastra Studio among them.

Studio calls the API from its own origin with ``credentials: "include"`` and
Mastra's own request headers on every request, so a preflight must allow
exactly those, and the answer must name the one origin (a wildcard is never
sent with credentials: origins are listed, each checked here).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from agent_core import wire
from agent_core.errors import WardenError

#: what Mastra's server allows (``@mastra/deployer`` DEFAULT_CORS_ALLOW_HEADERS); Studio sends
#: ``x-mastra-client-type: studio`` always, and ``x-mastra-dev-playground: true`` towards loopback.
ALLOW_HEADERS = (
    "Content-Type",
    wire.AUTHORIZATION,
    "A2A-Version",
    "x-mastra-client-type",
    "x-mastra-dev-playground",
)
#: preflights for methods Warden has no route for still pass, so the browser shows the typed 404/405.
ALLOW_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
EXPOSE_HEADERS = (wire.RUN_ID_HEADER, "Content-Length")
MAX_AGE_SECONDS = 600


class InvalidCorsOrigin(WardenError):
    """A ``--cors-origin`` that no browser sends as ``Origin`` (so it would allow nothing, or everything)."""

    code = "SERVER_CORS_ORIGIN_INVALID"


def check_origins(origins: Iterable[str]) -> list[str]:
    """The origins as given, each a ``scheme://host[:port]`` a browser would send, else ``InvalidCorsOrigin``.

    ``*`` is refused: credentials (the bearer token Studio keeps) must go to named origins only.
    A trailing ``/`` is dropped (browsers never send one); a path, query or user part is an error.
    """
    out: list[str] = []
    for raw in origins:
        origin = raw[:-1] if raw.endswith("/") and raw.count("/") == 3 else raw
        if origin == "*":
            raise InvalidCorsOrigin(
                "--cors-origin '*' is refused: browsers send credentials, so name each origin "
                "(e.g. http://localhost:3000 for mastra studio)"
            )
        if not origin.isprintable() or origin != origin.strip():
            raise InvalidCorsOrigin(f"--cors-origin {raw!r} has whitespace or control characters")
        parts = urlsplit(origin)
        try:
            parts.port  # noqa: B018 (a malformed port raises here)
        except ValueError:
            raise InvalidCorsOrigin(f"--cors-origin {raw!r} has an invalid port") from None
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path
            or parts.query
            or parts.fragment
            or "@" in parts.netloc
        ):
            raise InvalidCorsOrigin(
                f"--cors-origin {raw!r} is not an origin: give scheme://host[:port], e.g. http://localhost:3000"
            )
        if origin not in out:
            out.append(origin)
    return out


def cors_middleware(origins: Iterable[str]) -> Middleware:
    """Starlette's CORS middleware for ``origins`` (checked), with credentials and Mastra's headers."""
    return Middleware(
        CORSMiddleware,
        allow_origins=check_origins(origins),
        allow_credentials=True,
        allow_methods=list(ALLOW_METHODS),
        allow_headers=list(ALLOW_HEADERS),
        expose_headers=list(EXPOSE_HEADERS),
        max_age=MAX_AGE_SECONDS,
    )
