"""Route resolution by the path's first two segments, with Starlette's answer unchanged.

Starlette's ``Router`` tries every route in order, a regular expression each, until one
matches: with some forty routes (the API, Studio's, the browser UI's) a decision request paid
for about fifteen of them, the largest single cost of the server's own code per request
(docs/performance.md, "Server"). ``IndexedRouter`` tries only the routes that can match the
request's first two path segments, in their original order; a request none of them fully or
partially matches goes through Starlette's own full scan (its 404, 405 and slash redirects).

A route's key is the first two segments of its path before any ``{parameter}``; a route with
a parameter or a mount point within those is tried for every request of its first segment
(or for every request at all).
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette._utils import get_route_path
from starlette.routing import BaseRoute, Match, Mount, Route, Router
from starlette.types import Receive, Scope, Send

Key = tuple[str, str]


def route_key(route: BaseRoute) -> Key | str | None:
    """``(first, second)`` segment for a route that only matches paths starting with both, ``first``
    for one that only needs its first segment, None for one that may match any path."""
    if not isinstance(route, Route | Mount):  # a Host, a WebSocketRoute, ...: tried for every path
        return None
    literal, has_param, _ = route.path.partition("{")  # a Mount's path is its prefix, no parameter
    parts = literal.split("/")[1:]  # "/api/agents/" -> ["api", "agents", ""]
    complete = parts[:-1] if has_param else parts  # the last one may be cut by the parameter
    if len(complete) >= 2:
        return complete[0], complete[1]
    if len(complete) == 1 and complete[0]:
        return complete[0]
    return None


class IndexedRouter(Router):
    """``Router`` that tries only the routes whose key fits the request path (see the module)."""

    _index_size = -1
    _by_key: dict[Key, list[BaseRoute]]
    _by_first: dict[str, list[BaseRoute]]
    _anywhere: list[BaseRoute]

    def _reindex(self) -> None:
        keyed: dict[Key, list[int]] = {}
        first: dict[str, list[int]] = {}
        anywhere: list[int] = []
        for i, route in enumerate(self.routes):
            key = route_key(route)
            if key is None:
                anywhere.append(i)
            elif isinstance(key, str):
                first.setdefault(key, []).append(i)
            else:
                keyed.setdefault(key, []).append(i)
        routes = self.routes

        def pick(*groups: Sequence[int]) -> list[BaseRoute]:
            return [routes[i] for i in sorted(set().union(*groups))]  # the original order

        self._by_key = {k: pick(v, first.get(k[0], ()), anywhere) for k, v in keyed.items()}
        self._by_first = {k: pick(v, anywhere) for k, v in first.items()}
        self._anywhere = pick(anywhere)
        self._index_size = len(routes)

    def candidates(self, path: str) -> list[BaseRoute]:
        """The routes that can match ``path``, in order (the index is rebuilt when routes were added)."""
        if self._index_size != len(self.routes):
            self._reindex()
        parts = path.split("/", 3)
        one = parts[1] if len(parts) > 1 else ""
        if len(parts) > 2:
            found = self._by_key.get((one, parts[2]))
            if found is not None:
                return found
        return self._by_first.get(one, self._anywhere)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().app(scope, receive, send)
            return
        if "router" not in scope:
            scope["router"] = self
        partial = None
        partial_scope: Scope = {}
        for route in self.candidates(get_route_path(scope)):
            match, child_scope = route.matches(scope)
            if match is Match.FULL:
                scope["route"] = route
                scope.update(child_scope)
                await route.handle(scope, receive, send)
                return
            if match is Match.PARTIAL and partial is None:
                partial, partial_scope = route, child_scope
        if partial is not None:  # a route for this path, not this method: its 405
            scope["route"] = partial
            scope.update(partial_scope)
            await partial.handle(scope, receive, send)
            return
        await super().app(scope, receive, send)  # nothing here: Starlette's full scan (404, slash redirect)
