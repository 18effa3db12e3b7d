"""The Starlette application: Mastra-compatible agent routes under ``/api``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent_core import wire
from agent_core.errors import AgentNotFound, InvalidRequest, WardenError
from agent_core.notify import watch_pending
from agent_core.options import SentRunOptions
from agent_core.webhooks import WebhookNotifier
from warden_server import (
    context_routes,
    events,
    external_routes,
    handover,
    resolve_routes,
    studio_routes,
    ui,
    views_json,
)
from warden_server import errors as E
from warden_server.cors import cors_middleware
from warden_server.external import ExternalCalls
from warden_server.fastpath import FastPath, WardenApp
from warden_server.limits import InvalidBody, parse_json_body
from warden_server.middleware import BearerAuthMiddleware, BodySizeLimitMiddleware
from warden_server.routing import IndexedRouter
from warden_server.schemas import (
    AllSuspendedRunsQuery,
    ApproveBody,
    AuditQuery,
    DeclineBody,
    GrantBody,
    ResumeBody,
    SendToolApprovalBody,
    StreamBody,
    SuspendedRunsQuery,
)
from warden_server.sse import StreamPump, sse_response
from warden_server.studio_errors import StudioErrorMiddleware
from warden_server.tokens import Identity, Role, TokenSet

log = logging.getLogger("warden.server")

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_BODY_TIMEOUT_SECONDS = 5.0
SHUTDOWN_GRACE_SECONDS = 30.0

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class RouteSpec:
    """One API route; also the source of ``/openapi.json``."""

    method: str
    path: str
    name: str
    summary: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: str = "json"  # "json" | "sse" (a run's chunks) | "events" (store events) | "html"
    auth: bool = True
    #: the least role a named token needs (``warden_server.tokens``): viewer, approver or admin.
    role: Role = "viewer"


# ---------------------------------------------------------------------------------------------
# helpers


def _starlette_path(route: str) -> str:
    """A ``wire`` route as Starlette matches it: a run id may contain slashes."""
    return route.replace("{runId}", "{runId:path}")


def _runtime(request: Request) -> Any:
    return request.app.state.runtime


def _agent(request: Request) -> tuple[str, Any]:
    key = request.path_params["agentId"]
    runtime = _runtime(request)
    agent = runtime.get_agent(key)  # raises AgentNotFound
    if agent is None:  # defensive: a runtime that returns None instead of raising
        raise AgentNotFound(f"no agent {key!r} in this runtime")
    return key, agent


async def _body(request: Request, model: type[M]) -> M:
    data = parse_json_body(await request.body())  # depth, integer size, lone surrogates: 422
    if not isinstance(data, dict):
        raise InvalidBody("request body must be a JSON object")
    return model.model_validate(data)


def _stream_response(request: Request, stream: Any) -> Response:
    return sse_response(StreamPump(stream, request.app.state.stream_pumps, request.app.state.secrets))


# ---------------------------------------------------------------------------------------------
# handlers


async def health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def list_agents(request: Request) -> Response:
    return JSONResponse(wire.encode_agents(_runtime(request).agents))


async def stream(request: Request) -> Response:
    _, agent = _agent(request)
    body = await _body(request, StreamBody)
    s = await agent.stream(body.messages_arg(), **_run_options(request, body))
    return _stream_response(request, s)


async def generate(request: Request) -> Response:
    _, agent = _agent(request)
    body = await _body(request, StreamBody)
    result = await agent.generate(body.messages_arg(), **_run_options(request, body))
    return JSONResponse(wire.encode_generate_result(result))


def _run_options(request: Request, body: StreamBody) -> SentRunOptions:
    """The run's options; with auth its ``actor`` (the run's ``requested_by``, who never counts toward
    a four-eyes quorum on it) is the token's name: a body naming someone else is ``InvalidRequest``,
    nothing started. Without auth the body's ``actor`` (or the runtime's)."""
    options = body.options()
    name = _actor(request)
    if name:
        given = options.get("actor")
        if given is not None and given != name:
            raise InvalidRequest(
                f"actor {given!r} is not the name of this request's token ({name!r}); nothing was started"
            )
        options["actor"] = name
    return options


def _actor(request: Request) -> str | None:
    """The name of the token that authenticated the request (None without auth: the runtime's actor)."""
    identity = request.scope.get("state", {}).get("identity")
    return identity.name if isinstance(identity, Identity) else None


def _guard(handler: Callable[[Request], Awaitable[Response]], role: Role) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` behind a role check: 403 (nothing done) when the token's role is below ``role``."""
    if role == "viewer":
        return handler

    async def guarded(request: Request) -> Response:
        identity = request.scope.get("state", {}).get("identity")
        if isinstance(identity, Identity) and not identity.allows(role):
            return E.error_response(
                403, wire.FORBIDDEN, f"token {identity.name!r} has role {identity.role!r}; this needs {role!r}"
            )
        return await handler(request)

    return guarded


async def _approve(request: Request, method: str) -> Any:
    agent = handover.decider(_runtime(request), request.path_params["agentId"], request.app.state.external)
    body = await _body(request, ApproveBody)
    edit = {"args": body.args} if body.args is not None else {}
    return await getattr(agent, method)(
        run_id=body.run_id,
        tool_call_id=body.tool_call_id,
        fingerprint=body.fingerprint,
        actor=_actor(request),
        **edit,
    )


async def _decline(request: Request, method: str) -> Any:
    agent = handover.decider(_runtime(request), request.path_params["agentId"], request.app.state.external)
    body = await _body(request, DeclineBody)
    return await getattr(agent, method)(
        run_id=body.run_id, tool_call_id=body.tool_call_id, reason=body.reason, actor=_actor(request)
    )


async def _resume(request: Request, method: str) -> Any:
    agent = handover.decider(_runtime(request), request.path_params["agentId"], request.app.state.external)
    body = await _body(request, ResumeBody)
    return await getattr(agent, method)(
        body.resume_data, run_id=body.run_id, tool_call_id=body.tool_call_id, actor=_actor(request)
    )


async def approve_tool_call(request: Request) -> Response:
    return _stream_response(request, await _approve(request, "approve_tool_call"))


async def decline_tool_call(request: Request) -> Response:
    return _stream_response(request, await _decline(request, "decline_tool_call"))


async def resume_stream(request: Request) -> Response:
    return _stream_response(request, await _resume(request, "resume_stream"))


async def approve_tool_call_generate(request: Request) -> Response:
    return JSONResponse(wire.encode_generate_result(await _approve(request, "approve_tool_call_generate")))


async def decline_tool_call_generate(request: Request) -> Response:
    return JSONResponse(wire.encode_generate_result(await _decline(request, "decline_tool_call_generate")))


async def resume_generate(request: Request) -> Response:
    return JSONResponse(wire.encode_generate_result(await _resume(request, "resume_generate")))


async def send_tool_approval(request: Request) -> Response:
    _, agent = _agent(request)
    body = await _body(request, SendToolApprovalBody)
    s = await agent.send_tool_approval(
        thread_id=body.resolved_thread_id(),
        resource_id=body.resolved_resource_id(),
        approved=body.approved,
        tool_call_id=body.tool_call_id,
        run_id=body.run_id,
        resume_data=body.resume_data,
        reason=body.reason,
        actor=_actor(request),
    )
    pump = StreamPump(s, request.app.state.stream_pumps, request.app.state.secrets)
    await pump.wait()  # the run continues even if this request is dropped
    chunks = pump.chunks()
    out: dict[str, Any] = {
        "accepted": True,
        "runId": pump.run_id,
        "status": wire.camel(getattr(s, "status", None)),
    }
    if body.tool_call_id:
        out["toolCallId"] = body.tool_call_id
    out["chunks"] = chunks
    return JSONResponse(out)


async def suspended_runs(request: Request) -> Response:
    await handover.check_listed(_runtime(request), request.path_params["agentId"])
    agent = handover.decider(_runtime(request), request.path_params["agentId"])
    q = SuspendedRunsQuery.model_validate(dict(request.query_params))
    result = await agent.list_suspended_runs(**q.filters())
    return _run_list_response(result)


async def all_suspended_runs(request: Request) -> Response:
    q = AllSuspendedRunsQuery.model_validate(dict(request.query_params))
    runtime = _runtime(request)
    if q.agent_id is not None:
        await handover.check_listed(runtime, q.agent_id)  # 404 for an unknown agent rather than an empty list
    result = await runtime.list_suspended_runs(agent_id=q.agent_id, **q.filters())
    return _run_list_response(result)


def _run_list_response(result: Any) -> Response:
    data = views_json.suspended_run_list(result)  # one pass of the views' serializers
    if data is None:
        return JSONResponse(wire.encode_suspended_run_list(result))
    return Response(data, media_type=JSONResponse.media_type)


async def get_suspended_run(request: Request) -> Response:
    run = await _runtime(request).get_suspended_run(request.path_params["runId"])
    data = views_json.suspended_run(run)  # one pass of the view's serializer
    if data is None:
        return JSONResponse(wire.encode_suspended_run(run))
    return Response(data, media_type=JSONResponse.media_type)


async def audit(request: Request) -> Response:
    q = AuditQuery.model_validate(dict(request.query_params))
    page = await _runtime(request).audit_log(
        run_id=q.run_id,
        agent_id=q.agent_id,
        actor=q.actor,
        since=None if q.since is None else q.since.timestamp(),
        decision=q.decision,
        after=q.after,
        limit=q.limit,
    )
    return JSONResponse(page.model_dump(mode="json", by_alias=True))


async def sweep(request: Request) -> Response:
    return JSONResponse({"expired": await _runtime(request).sweep()})


async def list_grants(request: Request) -> Response:
    grants = await _runtime(request).list_grants()
    return JSONResponse({"grants": [g.model_dump(mode="json", by_alias=True) for g in grants]})


async def create_grant(request: Request) -> Response:
    body = await _body(request, GrantBody)
    grant = await _runtime(request).grant(
        body.tool_name,
        scope=body.scope,
        scope_id=body.scope_id,
        agent_id=body.agent_id,
        args_match=body.args_match,
        expires_in=body.expires_in,
        actor=_actor(request),
        command_match=body.command_match,
    )
    return JSONResponse(grant.model_dump(mode="json", by_alias=True), status_code=201)


async def revoke_grant(request: Request) -> Response:
    await _runtime(request).revoke_grant(request.path_params["grantId"])
    return JSONResponse({"revoked": request.path_params["grantId"]})


async def openapi(request: Request) -> Response:
    from warden_server.openapi import build_openapi

    return JSONResponse(build_openapi(ROUTES))


# ---------------------------------------------------------------------------------------------
# routes

ROUTES: list[tuple[RouteSpec, Callable[[Request], Awaitable[Response]]]] = [
    (RouteSpec("GET", wire.HEALTH, "health", "Liveness; no token needed", auth=False), health),
    (RouteSpec("GET", wire.OPENAPI, "openapi", "This document"), openapi),
    (RouteSpec("GET", wire.AGENTS, "listAgents", "Agents of the runtime, keyed by agent id"), list_agents),
    (
        RouteSpec("GET", events.EVENTS, "events", "Live updates of pending runs (SSE)", response="events"),
        events.stream_events,
    ),
    (
        RouteSpec(
            "POST",
            wire.STREAM,
            "stream",
            "Start a run; server-sent chunks",
            StreamBody,
            response="sse",
            role="approver",
        ),
        stream,
    ),
    (
        RouteSpec("POST", wire.GENERATE, "generate", "Start a run; the whole result", StreamBody, role="approver"),
        generate,
    ),
    (
        RouteSpec(
            "POST",
            wire.APPROVE_TOOL_CALL,
            "approveToolCall",
            "Approve a pending call; chunks",
            ApproveBody,
            response="sse",
            role="approver",
        ),
        approve_tool_call,
    ),
    (
        RouteSpec(
            "POST",
            wire.DECLINE_TOOL_CALL,
            "declineToolCall",
            "Decline a pending call; chunks",
            DeclineBody,
            response="sse",
            role="approver",
        ),
        decline_tool_call,
    ),
    (
        RouteSpec(
            "POST",
            wire.RESUME_STREAM,
            "resumeStream",
            "Resume a suspended tool with data; chunks",
            ResumeBody,
            response="sse",
            role="approver",
        ),
        resume_stream,
    ),
    (
        RouteSpec(
            "POST",
            wire.APPROVE_TOOL_CALL_GENERATE,
            "approveToolCallGenerate",
            "Approve a pending call; the whole result",
            ApproveBody,
            role="approver",
        ),
        approve_tool_call_generate,
    ),
    (
        RouteSpec(
            "POST",
            wire.DECLINE_TOOL_CALL_GENERATE,
            "declineToolCallGenerate",
            "Decline a pending call; the whole result",
            DeclineBody,
            role="approver",
        ),
        decline_tool_call_generate,
    ),
    (
        RouteSpec(
            "POST",
            wire.RESUME_GENERATE,
            "resumeGenerate",
            "Resume a suspended tool with data; the whole result",
            ResumeBody,
            role="approver",
        ),
        resume_generate,
    ),
    (
        RouteSpec(
            "POST",
            wire.SEND_TOOL_APPROVAL,
            "sendToolApproval",
            "Decide the pending call of a thread; runs it to its next stop",
            SendToolApprovalBody,
            role="approver",
        ),
        send_tool_approval,
    ),
    (
        RouteSpec(
            "GET",
            wire.SUSPENDED_RUNS,
            "listAllSuspendedRuns",
            "Pending runs of every agent (or of agentId), paged (Warden extension)",
            query=AllSuspendedRunsQuery,
        ),
        all_suspended_runs,
    ),
    (
        RouteSpec("GET", wire.SUSPENDED_RUN, "getSuspendedRun", "One pending run (Warden extension)"),
        get_suspended_run,
    ),
    (
        RouteSpec("POST", wire.SWEEP, "sweep", "Expire overdue approvals now (Warden extension)", role="approver"),
        sweep,
    ),
    (RouteSpec("GET", wire.GRANTS, "listGrants", "Live grants (Warden extension)"), list_grants),
    (
        RouteSpec(
            "POST",
            wire.GRANTS,
            "createGrant",
            "Grant a tool in a scope (Warden extension)",
            GrantBody,
            role="approver",
        ),
        create_grant,
    ),
    (
        RouteSpec("POST", wire.GRANT_REVOKE, "revokeGrant", "Revoke a grant (Warden extension)", role="approver"),
        revoke_grant,
    ),
    (
        RouteSpec("GET", context_routes.PATH, "getRunContext", "A run's context and decisions"),
        context_routes.get_run_context,
    ),
    (
        RouteSpec(
            "GET",
            resolve_routes.RESOLVE,
            "resolveId",
            "The full run or tool-call id a unique prefix (6+ characters) names (Warden extension)",
            query=resolve_routes.ResolveQuery,
        ),
        resolve_routes.resolve,
    ),
    (
        RouteSpec("POST", resolve_routes.RECOVER, "recover", "Crash recovery now (Warden extension)", role="approver"),
        resolve_routes.recover,
    ),
    (
        RouteSpec(
            "GET", resolve_routes.AUDIT_VERIFY, "verifyAudit", "Check the audit trail's hash chain (Warden extension)"
        ),
        resolve_routes.verify_audit,
    ),
    (
        RouteSpec(
            "GET",
            wire.AUDIT,
            "listAudit",
            "The audit trail: who decided what, in order, filtered; page on with nextAfter (Warden extension)",
            query=AuditQuery,
        ),
        audit,
    ),
    (
        RouteSpec(
            "GET",
            wire.AGENT_SUSPENDED_RUNS,
            "listSuspendedRuns",
            "Pending runs of the agent, paged",
            query=SuspendedRunsQuery,
        ),
        suspended_runs,
    ),
]
ROUTES += external_routes.routes(RouteSpec)  # warden mcp-proxy --server (warden_server.external)
ROUTES += studio_routes.routes(RouteSpec)  # what Mastra Studio reads besides the routes above


# ---------------------------------------------------------------------------------------------
# exception handlers


async def _on_warden_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WardenError)
    return E.warden_error_response(exc, request.app.state.secrets)


async def _on_validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ValidationError)
    where = "query" if request.method == "GET" else "body"
    return E.validation_error_response(exc, where)


async def _on_invalid_body(request: Request, exc: Exception) -> Response:
    return E.error_response(wire.STATUS_BY_CODE[E.INVALID_REQUEST], E.INVALID_REQUEST, str(exc))


async def _on_http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: E.NOT_FOUND, 405: E.METHOD_NOT_ALLOWED}.get(exc.status_code, E.INVALID_REQUEST)
    return E.error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)


async def _on_exception(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return E.error_response(wire.STATUS_BY_CODE[E.INTERNAL_ERROR], E.INTERNAL_ERROR, "internal server error")


def check_token(token: str | None) -> None:
    """A token given must be usable: not empty, not blank, no surrounding whitespace or control characters."""
    if token is None:
        return
    if not token.strip():
        raise ValueError("the API token is empty or blank: give a long random one, or none at all")
    if token != token.strip() or any(ord(c) < 0x20 or ord(c) == 0x7F for c in token):
        raise ValueError("the API token has surrounding whitespace or control characters: no client could send it")


def _store_secrets(runtime: Any) -> list[str]:
    """Server-side names never sent to clients: the store's name, repr and file path."""
    store = getattr(runtime, "store", None)
    if store is None:
        return []
    out = [str(getattr(store, "name", "") or ""), repr(store)]
    path = getattr(store, "path", None)
    if path is not None and str(path) not in ("", ":memory:"):
        out.append(str(path))
        with contextlib.suppress(OSError, ValueError):
            out.append(os.path.abspath(str(path)))
    return [s for s in out if s]


async def _recover_periodically(runtime: Any, interval: float = 10.0) -> None:
    """Crash recovery (``runtime.recover()``) and the deadline sweep (``runtime.sweep()``) at start,
    then every ``interval`` seconds."""
    recover = getattr(runtime, "recover", None)
    sweep = getattr(runtime, "sweep", None)
    while recover is not None or sweep is not None:
        for what, fn in (("crash recovery", recover), ("deadline sweep", sweep)):
            if fn is None:
                continue
            try:
                await fn()
            except Exception:  # a store error now is retried at the next tick
                logging.getLogger("warden.server").exception("%s failed", what)
        await asyncio.sleep(interval)


def create_app(
    runtime: Any,
    token: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    *,
    manage_runtime: bool = True,
    cors_origins: list[str] | None = None,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_SECONDS,
    tokens: TokenSet | None = None,
    webhooks: WebhookNotifier | None = None,
) -> Starlette:
    """Build the ASGI application serving ``runtime``.

    ``token``: when set, every route but ``/health`` needs ``Authorization:
    Bearer <token>``; an empty or blank one is a ``ValueError``.
    ``max_body_bytes``: larger request bodies get 413; ``body_timeout``: a body
    not all received within that many seconds gets 408.
    ``cors_origins``: browser origins allowed to call the API with credentials (``warden_server.cors``;
    preflights need no token); a malformed one or ``*`` is ``InvalidCorsOrigin``.
    ``manage_runtime``: enter ``runtime`` (``async with``) for the app's
    lifetime; pass False when the caller already owns it.
    ``tokens``: named tokens with roles (``warden_server.tokens``); with ``token`` too, both are accepted.
    A token whose role is below a route's gets 403; decisions record the token's name as the actor.
    ``webhooks``: told of every call that starts waiting in the runtime's store (any process).
    The browser UI is served under ``/ui/`` (``warden_server.ui``; sign-in with these tokens).
    """

    check_token(token)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if manage_runtime:
                await stack.enter_async_context(runtime)
            recovering = asyncio.get_running_loop().create_task(_recover_periodically(runtime))
            watching = None
            if webhooks is not None:
                await webhooks.start()
                if webhooks.store is None:
                    webhooks.store = runtime.store
                stack.push_async_callback(webhooks.aclose)
                watching = asyncio.get_running_loop().create_task(watch_pending(runtime.store, webhooks))
            try:
                yield
            finally:
                recovering.cancel()
                await app.state.external.aclose()
                if watching is not None:
                    watching.cancel()
                await _drain(app.state.stream_pumps)

    middleware = []
    if cors_origins:
        middleware.append(cors_middleware(cors_origins))  # outermost: preflights need no token
    if token:
        tokens = TokenSet.single(token) if tokens is None else tokens.merged(TokenSet.single(token))
    middleware.append(Middleware(StudioErrorMiddleware))  # Mastra's error form for Studio's requests only
    auth_options: dict[str, Any] = {
        "tokens": tokens,
        "public_paths": (wire.HEALTH, *studio_routes.PUBLIC_PATHS),
        "public_prefixes": (ui.UI_PREFIX,),
    }
    if tokens is not None:
        middleware.append(Middleware(BearerAuthMiddleware, **auth_options))
    limits: dict[str, Any] = {"max_body_bytes": max_body_bytes, "body_timeout": body_timeout}
    middleware.append(Middleware(BodySizeLimitMiddleware, **limits))
    routes = [
        Route(_starlette_path(spec.path), _guard(handler, spec.role), methods=[spec.method], name=spec.name)
        for spec, handler in ROUTES
    ]
    handlers: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        WardenError: _on_warden_error,
        ValidationError: _on_validation_error,
        InvalidBody: _on_invalid_body,
        HTTPException: _on_http_exception,
        Exception: _on_exception,
    }
    app = WardenApp(routes=routes, middleware=middleware, exception_handlers=handlers, lifespan=lifespan)
    # the same routes and lifespan, resolved by their first path segments (warden_server.routing)
    app.router = IndexedRouter(routes, lifespan=lifespan)
    # the API's requests without Starlette's per-request layers, the same middleware's work (warden_server.fastpath)
    app.fast = FastPath(
        app.router,
        routes,
        BearerAuthMiddleware(app.router, **auth_options) if tokens is not None else None,
        BodySizeLimitMiddleware(app.router, **limits),
        handlers,
        cors=bool(cors_origins),
    )
    app.state.runtime = runtime
    app.state.external = ExternalCalls(runtime)
    app.state.stream_pumps = set()
    app.state.auth_required = tokens is not None
    app.state.secrets = _store_secrets(runtime)
    ui.install(app, tokens)  # the browser UI under /ui/ (its own sign-in: warden_server.ui)
    return app


async def _drain(pumps: set[StreamPump]) -> None:
    """On shutdown, let runs whose decision was accepted finish (bounded); then cancel the rest
    through the runtime (``AgentStream.cancel``: a decision whose tool had not started goes back
    to pending), so nothing is left half-applied."""
    running = [p for p in pumps if not p.task.done()]
    if not running:
        return
    log.info("waiting for %d running stream(s) to finish", len(running))
    _, still = await asyncio.wait([p.task for p in running], timeout=SHUTDOWN_GRACE_SECONDS)
    for p in running:
        if p.task in still:
            cancel = getattr(p.stream, "cancel", None)
            if cancel is not None:
                with contextlib.suppress(Exception):
                    await cancel()
            p.task.cancel()
    if still:
        await asyncio.gather(*still, return_exceptions=True)
