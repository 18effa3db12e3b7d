"""The browser UI of ``warden serve``, under ``/ui/`` (see docs/server.md, "The browser UI").

``install(app, tokens)`` adds its routes to the API's application; the API's
bearer-token middleware leaves ``/ui`` to the UI's own sessions (``session``).
Approval links (``links``) are served when ``configure_links`` gave a signer.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agent_core.approval_links import LINK_ACTOR, LinkSigner
from warden_server.tokens import TokenSet
from warden_server.ui import decide, guards, links, pages
from warden_server.ui.security import SecurityHeaders
from warden_server.ui.session import SessionKeeper

UI_PREFIX = "/ui"
STATIC = Path(__file__).resolve().parent / "static"


def routes() -> list[Route | Mount]:
    return [
        Route("/", pages.queue, methods=["GET"], name="ui-queue"),
        Route("/signin", pages.signin_form, methods=["GET"], name="ui-signin-form"),
        Route("/signin", pages.signin, methods=["POST"], name="ui-signin"),
        Route("/signout", pages.signout, methods=["POST"], name="ui-signout"),
        Route("/call", pages.call_page, methods=["GET"], name="ui-call"),
        Route("/decide", decide.decide, methods=["POST"], name="ui-decide"),
        Route("/links/{token}", links.link_page, methods=["GET"], name="ui-link"),
        Route("/links/{token}", links.link_decide, methods=["POST"], name="ui-link-decide"),
        Mount("/static", app=StaticFiles(directory=STATIC), name="ui-static"),
    ]


def install(app: Starlette, tokens: TokenSet | None) -> None:
    """Serve the UI under ``/ui/`` of ``app``; ``tokens``: who may sign in (None: no auth, loopback)."""
    app.state.ui = guards.UiState(SessionKeeper(), tokens)
    app.state.links = None
    app.router.routes.append(Mount(UI_PREFIX, routes=routes(), middleware=[Middleware(SecurityHeaders)]))


def configure_links(app: Starlette, signer: LinkSigner | None, actor: str | None = None) -> None:
    """Let ``app`` decide through the approval links ``signer`` issues, audited as ``actor``."""
    app.state.links = None if signer is None else links.LinkConfig(signer, actor or LINK_ACTOR)


def is_ui_path(path: str) -> bool:
    return path == UI_PREFIX or path.startswith(UI_PREFIX + "/")


__all__ = ["UI_PREFIX", "configure_links", "install", "is_ui_path", "routes"]
