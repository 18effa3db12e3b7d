"""``IndexedRouter`` resolves every request to the route Starlette's full scan picks (or to its fallback).

The paths are made from the app's own route table (every API, Studio and browser-UI route) with
sample parameters, slashes inside run ids, trailing slashes, unknown suffixes and every method, so
a route added later is covered without editing this test.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from starlette.routing import BaseRoute, Match, Mount, Route

from agent_core import Agent, Runtime
from agent_core.models import FunctionModel, ModelResponse
from storage import InMemoryStore
from warden_server import create_app
from warden_server.routing import IndexedRouter, route_key

METHODS = ("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS")


def _runtime() -> Runtime:
    model = FunctionModel(lambda messages, info: ModelResponse(text="hi"))
    return Runtime(agents={"ops": Agent(id="ops", name="Ops", instructions="", model=model)}, storage=InMemoryStore())


def _scope(method: str, path: str) -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "headers": [], "query_string": b""}


def _full_scan(routes: list[BaseRoute], scope: dict[str, Any]) -> tuple[str, BaseRoute | None]:
    """What Starlette's ``Router.app`` picks: the first full match, else the first partial one."""
    partial = None
    for route in routes:
        match, _ = route.matches(scope)
        if match is Match.FULL:
            return "full", route
        if match is Match.PARTIAL and partial is None:
            partial = route
    return ("partial", partial) if partial is not None else ("none", None)


def _indexed(router: IndexedRouter, scope: dict[str, Any]) -> tuple[str, BaseRoute | None]:
    kind, route = _full_scan(router.candidates(scope["path"]), scope)
    return (kind, route) if kind != "none" else ("none", None)  # none: the router falls back to the full scan


def _paths(routes: list[BaseRoute]) -> set[str]:
    out = {
        "/",
        "",
        "/api",
        "/api/",
        "/api/nothing",
        "/ui",
        "/ui/",
        "//",
        "/api//health",
        "//health",
        "/health/",
        "/x/y/z",
    }
    for route in routes:
        assert isinstance(route, Route | Mount), route
        template = route.path
        for value in ("r1", "run/with/slashes", "ab%2Fcd", ""):
            path = re.sub(r"\{[^}]+\}", value, template)
            out |= {path, path + "/", path.rstrip("/") or "/", path + "/extra", path + "x"}
        if isinstance(route, Mount):
            out |= {template, template + "/", template + "/static/app.css", template + "/nothing"}
    return out


def test_every_request_resolves_as_the_full_scan_does() -> None:
    app = create_app(_runtime(), token="t" * 32, manage_runtime=False)
    router = app.router
    assert isinstance(router, IndexedRouter)
    routes = list(router.routes)
    assert len(routes) > 30  # the API, Studio's routes and the UI mount are all there
    checked = 0
    for path in sorted(_paths(routes)):
        for method in METHODS:
            scope = _scope(method, path)
            assert _indexed(router, scope) == _full_scan(routes, scope), (method, path)
            checked += 1
    assert checked > 1000


def test_overlapping_shapes_keep_the_order_of_the_table() -> None:
    """Keyed, first-segment and anywhere routes over the same paths: the first in the table wins."""

    async def ok(request: Any) -> Any:
        raise AssertionError

    routes: list[BaseRoute] = [
        Route("/{any}/a/b", ok, methods=["PUT"]),
        Route("/api/{x}/b", ok, methods=["GET"]),
        Route("/api/a/b", ok, methods=["GET", "POST"]),
        Mount("/api", routes=[Route("/a/c", ok)]),
        Route("/api/a/{rest:path}", ok, methods=["DELETE"]),
        Route("/{whole:path}", ok, methods=["PATCH"]),
    ]
    router = IndexedRouter(list(routes))
    paths = ["/api/a/b", "/api/z/b", "/api/a/c", "/api/a/x/y", "/x/a/b", "/api", "/api/", "/", "/api/a"]
    for path in paths:
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            scope = _scope(method, path)
            assert _indexed(router, scope) == _full_scan(routes, scope), (method, path)
    assert _indexed(router, _scope("PUT", "/api/a/b"))[1] is routes[0]  # an "anywhere" route listed first
    assert _indexed(router, _scope("GET", "/api/a/b"))[1] is routes[1]  # a first-segment route before a keyed one


def test_keys_of_route_shapes() -> None:
    async def ok(request: Any) -> Any:
        raise AssertionError

    assert route_key(Route("/api/agents/{agentId}/stream", ok)) == ("api", "agents")
    assert route_key(Route("/api/health", ok)) == ("api", "health")
    assert route_key(Route("/health", ok)) == "health"
    assert route_key(Route("/api/{x}/y", ok)) == "api"
    assert route_key(Route("/{x}", ok)) is None
    assert route_key(Route("/", ok)) is None
    assert route_key(Mount("/ui", routes=[])) == "ui"
    assert route_key(Mount("/a/b", routes=[])) == ("a", "b")


def test_routes_added_after_the_first_request_are_found() -> None:
    async def first(request: Any) -> Any:
        from starlette.responses import PlainTextResponse

        return PlainTextResponse("first")

    router = IndexedRouter([Route("/api/a", first)])
    assert [r.path for r in router.candidates("/api/b")] == []  # type: ignore[attr-defined]
    router.routes.append(Route("/api/b", first))
    assert [r.path for r in router.candidates("/api/b")] == ["/api/b"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/health", 200, None),
        ("GET", "/api/agents", 200, None),
        ("POST", "/health", 405, "METHOD_NOT_ALLOWED"),  # a route for the path, not the method
        ("GET", "/api/nothing-here", 404, "NOT_FOUND"),
        ("GET", "/nothing/at/all", 404, "NOT_FOUND"),
        # a run id with slashes reaches its route, which says the run is not there
        ("GET", "/api/suspended-runs/no/such/run", 404, "AGENT_RESUME_NO_SNAPSHOT_FOUND"),
    ],
)
async def test_answers_through_the_app(method: str, path: str, status: int, code: str | None) -> None:
    app = create_app(_runtime(), manage_runtime=False)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        r = await c.request(method, path)
    assert r.status_code == status, r.text
    if code is not None:
        assert r.json()["error"]["code"] == code, r.text
