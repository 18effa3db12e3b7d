"""The API's requests served without Starlette's per-request layers, with the same answers.

Through Starlette's stack every request passes the error middleware, Studio's error rewriter,
the bearer-token check, the body reader, the exception middleware, the router, the route's
``request_response`` wrapper and a second exception wrapper: eight awaits deep, two ``send``
wrappers, before the handler runs (docs/performance.md, "Server"). ``WardenApp`` serves a request
that fully matches one of the API's routes in one function doing the same things in the same
order: the token (``BearerAuthMiddleware.admit``: 401 here), the body limits
(``BodySizeLimitMiddleware.read``: 413 / 408 here), the handler, and the app's exception handlers
exactly as Starlette applies them (the typed errors; an unexpected exception answered 500 and
re-raised for the server to log). Everything else takes Starlette's whole stack unchanged: no
route or another method (404, 405, slash redirects), the browser UI, Studio's requests (their
errors are rewritten), a browser's cross-origin request when CORS is configured, websockets,
the lifespan.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette._utils import get_route_path
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Message, Receive, Scope, Send

from warden_server.middleware import BearerAuthMiddleware, BodySizeLimitMiddleware, replaying
from warden_server.routing import IndexedRouter
from warden_server.studio_errors import CLIENT_TYPE_HEADER

_ORIGIN = b"origin"
_BODYLESS = frozenset(("GET", "HEAD", "OPTIONS"))
Handler = Callable[[Request, Exception], Awaitable[Response]]


class FastPath:
    """What ``WardenApp`` needs to serve an API request itself (built by ``create_app``)."""

    def __init__(
        self,
        router: IndexedRouter,
        routes: list[Route],
        auth: BearerAuthMiddleware | None,
        body: BodySizeLimitMiddleware,
        exception_handlers: dict[Any, Handler],
        cors: bool,
    ) -> None:
        self.router = router
        self.route_ids = frozenset(map(id, routes))  # the API's own routes (not the UI's mount; Route is unhashable)
        self.auth = auth
        self.body = body
        self.cors = cors
        self.status_handlers = {k: v for k, v in exception_handlers.items() if isinstance(k, int) and k != 500}
        # as Starlette splits them: 500 / Exception for its ServerErrorMiddleware, the rest for its ExceptionMiddleware
        self.handlers = {k: v for k, v in exception_handlers.items() if not isinstance(k, int) and k is not Exception}
        self.fallback: Handler | None = exception_handlers.get(500) or exception_handlers.get(Exception)

    def match(self, scope: Scope) -> tuple[Route, dict[str, Any]] | None:
        """The API route this request fully matches and its child scope, or None (Starlette's stack then)."""
        for name, _ in scope["headers"]:
            if name == CLIENT_TYPE_HEADER or (name == _ORIGIN and self.cors):
                return None  # Studio's error form, or CORS headers: the middleware's work
        for route in self.router.candidates(get_route_path(scope)):
            match, child = route.matches(scope)
            if match is Match.FULL:  # the first full match is the one Starlette serves
                return (route, child) if id(route) in self.route_ids else None  # type: ignore[return-value]
        return None  # no route, or another method's (405): as Starlette answers

    async def serve(
        self, app: Starlette, route: Route, child: Scope, scope: Scope, receive: Receive, send: Send
    ) -> None:
        scope["app"] = app
        if self.auth is not None and not await self.auth.admit(scope, send):
            return
        if scope["method"] not in _BODYLESS:
            body = await self.body.read(scope, receive, send)
            if body is None:
                return
            receive = replaying(body, receive)
        scope["router"] = self.router
        scope["route"] = route
        scope.update(child)
        started = False

        async def sender(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        request = Request(scope, receive, sender)
        try:
            response = await route.endpoint(request)
            await response(scope, receive, sender)
        except Exception as exc:
            handler = self.status_handlers.get(exc.status_code) if isinstance(exc, HTTPException) else None
            handler = handler or next((self.handlers[c] for c in type(exc).__mro__ if c in self.handlers), None)
            if handler is not None:  # Starlette's ExceptionMiddleware
                if started:
                    raise RuntimeError("Caught handled exception, but response already started.") from exc
                await (await handler(request, exc))(scope, receive, sender)
                exc.__traceback__ = None
                return
            if not started and self.fallback is not None:  # Starlette's ServerErrorMiddleware: answer, then re-raise
                await (await self.fallback(request, exc))(scope, receive, send)
            raise


class WardenApp(Starlette):
    """``Starlette`` whose API requests take ``FastPath`` (set by ``create_app``; None: all go the whole stack)."""

    fast: FastPath | None = None

    def add_middleware(self, middleware_class: Any, *args: Any, **kwargs: Any) -> None:
        """A middleware added later must see every request: the fast path is turned off."""
        super().add_middleware(middleware_class, *args, **kwargs)
        self.fast = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        fast = self.fast
        if fast is not None and scope["type"] == "http":
            found = fast.match(scope)
            if found is not None:
                await fast.serve(self, found[0], found[1], scope, receive, send)
                return
        await super().__call__(scope, receive, send)
