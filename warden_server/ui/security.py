"""Response headers of every UI page: a strict Content-Security-Policy and no framing.

The pages run no script at all (the queue refreshes with ``<meta http-equiv=refresh>``),
load only this server's stylesheet, and post forms only to this server.
``Referrer-Policy: same-origin`` keeps an approval link's token out of other sites' logs (and lets
this server's own forms send their ``Origin``, which ``no-referrer`` would turn into ``null``);
``Cache-Control: no-store`` keeps pending calls out of shared caches.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds ``HEADERS`` to every response of the wrapped app (replacing any of the same name)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        names = {name for name, _ in HEADERS}

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(n, v) for n, v in message.get("headers", []) if n.lower() not in names]
                message = {**message, "headers": [*kept, *HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


__all__ = ["CSP", "HEADERS", "SecurityHeaders"]
