"""What every page of ``/ui/`` needs: the UI's state, its address, the session, and the guards.

``viewing`` wraps a GET page (a session, or the sign-in page); ``deciding`` wraps a POST
(a session of the role needed, a same-origin request, a valid CSRF token: else 403 and
nothing done; a malformed body: 400). On a server without tokens (loopback only), pages
asked for under another host name are refused (DNS rebinding).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agent_core import wire
from warden_server.addresses import host_header_is_loopback
from warden_server.tokens import Role, TokenSet
from warden_server.ui.forms import FormInvalid, read_form
from warden_server.ui.render import page
from warden_server.ui.session import SESSION_COOKIE, Session, SessionKeeper


@dataclass
class UiState:
    keeper: SessionKeeper
    #: the tokens that may sign in; None: the server has no authentication (loopback only).
    tokens: TokenSet | None


def ui_state(request: Request) -> UiState:
    state: UiState = request.app.state.ui
    return state


def base(request: Request) -> str:
    """The UI's own prefix as the browser sees it (``/ui``, or ``/proxy/ui`` under a ``root_path``)."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def set_session_cookie(response: Response, request: Request, value: str, max_age: int) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=max_age,
        path=base(request) + "/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def page_context(request: Request, session: Session | None, **extra: Any) -> dict[str, Any]:
    state = ui_state(request)
    return {
        "base": base(request),
        "session": session,
        "csrf": state.keeper.csrf(session) if session is not None else "",
        "can_decide": session is not None and session.allows("approver"),
        "auth": state.tokens is not None,
        **extra,
    }


def message(
    request: Request, status: int, title: str, text: str, session: Session | None = None, code: str | None = None
) -> Response:
    return page("message.html", status, **page_context(request, session, title=title, text=text, code=code))


def session_of(request: Request) -> Session | None:
    return ui_state(request).keeper.read(request.cookies.get(SESSION_COOKIE))


Handler = Callable[[Request, Session], Awaitable[Response]]


def _rebound(request: Request) -> Response | None:
    """On a server without tokens (loopback only), a page asked for under another host name: refused."""
    if ui_state(request).tokens is None and not host_header_is_loopback(request.headers.get("host", "")):
        return message(request, 403, "Refused", "Without API tokens this UI answers only on a loopback address.", None)
    return None


def viewing(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """A GET page for any signed-in role; without a session: the sign-in page (or, on a server
    without tokens, a fresh session for the local operator)."""

    async def wrapped(request: Request) -> Response:
        refused = _rebound(request)
        if refused is not None:
            return refused
        session = session_of(request)
        if session is not None:
            return await handler(request, session)
        state = ui_state(request)
        if state.tokens is not None:
            return RedirectResponse(base(request) + "/signin", status_code=303)
        session, cookie = state.keeper.issue(None)
        response = await handler(request, session)
        set_session_cookie(response, request, cookie, state.keeper.lifetime)
        return response

    return wrapped


def same_origin(request: Request) -> bool:
    """A browser's ``Origin`` (when sent) names this server: a defence beside SameSite and CSRF."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = request.headers.get("host", "")
    return origin.split("://", 1)[-1] == host


def deciding(role: Role = "approver") -> Callable[[Callable[..., Awaitable[Response]]], Any]:
    """A POST: a session of ``role`` or above, a same-origin request and a valid CSRF token;
    else 403 and nothing done. A malformed body is 400."""

    def wrap(handler: Callable[[Request, Session, dict[str, str]], Awaitable[Response]]) -> Any:
        async def wrapped(request: Request) -> Response:
            refused = _rebound(request)
            if refused is not None:
                return refused
            session = session_of(request)
            if session is None:
                return message(request, 403, "Not signed in", "Sign in with an API token first.", code=wire.FORBIDDEN)
            if not session.allows(role):
                return message(
                    request,
                    403,
                    "Not allowed",
                    f"Your token ({session.name}) has the role {session.role}; deciding needs {role}.",
                    session,
                    wire.FORBIDDEN,
                )
            try:
                form = await read_form(request)
            except FormInvalid as exc:
                return message(request, 400, "Bad form", exc.message, session, exc.code)
            if not same_origin(request) or not ui_state(request).keeper.check_csrf(session, form.get("csrf")):
                return message(
                    request,
                    403,
                    "Refused",
                    "This form was not sent by a page of this server (missing or invalid CSRF token). "
                    "Nothing was changed; reload the page and try again.",
                    session,
                    wire.FORBIDDEN,
                )
            return await handler(request, session, form)

        return wrapped

    return wrap


__all__ = [
    "UiState",
    "base",
    "deciding",
    "message",
    "page_context",
    "same_origin",
    "session_of",
    "set_session_cookie",
    "ui_state",
    "viewing",
]
