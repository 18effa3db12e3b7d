"""Error answers Mastra Studio can show: ``{"error": "<message>", "code": ...}`` for Studio's requests.

Warden's error body is ``{"error": {"code", "message"}}``; Mastra's server sends
``{"error": "<message>"}`` and Studio renders ``body.error`` as text, so an
object there breaks its pages. Studio marks every request with
``x-mastra-client-type: studio``; for those requests only, a JSON error body is
rewritten to Mastra's form, keeping the code (and details) beside it. Every
other client keeps Warden's typed body.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CLIENT_TYPE_HEADER = b"x-mastra-client-type"
STUDIO_CLIENT = b"studio"


def is_studio(scope: Scope) -> bool:
    return any(
        name == CLIENT_TYPE_HEADER and value.strip().lower() == STUDIO_CLIENT
        for name, value in scope.get("headers", ())
    )


def mastra_error_body(body: bytes) -> bytes | None:
    """Warden's typed error ``body`` in Mastra's form, or None when it is not one."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    err = data.get("error") if isinstance(data, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("message"), str):
        return None
    out: dict[str, Any] = {"error": err["message"], "code": err.get("code")}
    if "details" in err:
        out["details"] = err["details"]
    return json.dumps(out, ensure_ascii=False).encode()


class StudioErrorMiddleware:
    """Rewrites JSON error answers (status >= 400) of Studio's requests; streams and successes pass through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_studio(scope):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers", ())).get(b"content-type", b"")
                if message["status"] >= 400 and kind.startswith(b"application/json"):
                    start = message
                    return
                await send(message)
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            new = mastra_error_body(body) or body
            kept = [(k, v) for k, v in start.get("headers", ()) if k != b"content-length"]
            await send({**start, "headers": [*kept, (b"content-length", str(len(new)).encode())]})
            await send({"type": "http.response.body", "body": new})

        await self.app(scope, receive, capture)
