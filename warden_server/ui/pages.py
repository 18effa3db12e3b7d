"""The pages of ``/ui/``: sign-in, the queue of pending calls, a page per call, and its decisions.

Decisions go through the same path as the API's decision routes
(``warden_server.handover.decider``: the hosted agent, or the handover
recorder), with the signed-in token's name as the actor; the run then
continues in the server (``StreamPump``) whether or not the browser waits.
A POST is refused (403, nothing decided) when its session's role is below
``approver`` or its CSRF token is missing or wrong.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agent_core import wire
from agent_core.decision_context import run_context
from agent_core.errors import SnapshotNotFound, ToolCallNotSuspended, WardenError
from agent_core.resume_fields import FormField, coerce, errors_by_field, fields_from_schema
from agent_core.untrusted_text import scan, summarize
from warden_server import handover
from warden_server.addresses import host_header_is_loopback
from warden_server.sse import StreamPump
from warden_server.tokens import Role, TokenSet
from warden_server.ui.forms import FormInvalid, read_form
from warden_server.ui.render import json_for_editing, page
from warden_server.ui.session import SESSION_COOKIE, Session, SessionKeeper

#: seconds between refreshes of the queue page.
REFRESH_SECONDS = 5
PER_PAGE = 50


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


def _cookie(response: Response, request: Request, value: str, max_age: int) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=max_age,
        path=base(request) + "/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def _common(request: Request, session: Session | None, **extra: Any) -> dict[str, Any]:
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
    return page("message.html", status, **_common(request, session, title=title, text=text, code=code))


def _session(request: Request) -> Session | None:
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
        session = _session(request)
        if session is not None:
            return await handler(request, session)
        state = ui_state(request)
        if state.tokens is not None:
            return RedirectResponse(base(request) + "/signin", status_code=303)
        session, cookie = state.keeper.issue(None)
        response = await handler(request, session)
        _cookie(response, request, cookie, state.keeper.lifetime)
        return response

    return wrapped


def _same_origin(request: Request) -> bool:
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
            session = _session(request)
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
            if not _same_origin(request) or not ui_state(request).keeper.check_csrf(session, form.get("csrf")):
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


# ---------------------------------------------------------------------------------------------
# sign-in


async def signin_form(request: Request) -> Response:
    if ui_state(request).tokens is None:
        return RedirectResponse(base(request) + "/", status_code=303)
    return page("signin.html", **_common(request, None, error=None))


async def signin(request: Request) -> Response:
    state = ui_state(request)
    if state.tokens is None:
        return RedirectResponse(base(request) + "/", status_code=303)
    try:
        form = await read_form(request)
    except FormInvalid as exc:
        return page("signin.html", 400, **_common(request, None, error=exc.message))
    if not _same_origin(request):
        return page("signin.html", 403, **_common(request, None, error="This form was not sent by this server."))
    token = form.get("token", "").strip()
    identity = state.tokens.lookup(token.encode("utf-8")) if token else None
    if identity is None:
        return page("signin.html", 401, **_common(request, None, error="Unknown token."))
    _, cookie = state.keeper.issue(identity)
    response = RedirectResponse(base(request) + "/", status_code=303)
    _cookie(response, request, cookie, state.keeper.lifetime)
    return response


@deciding("viewer")
async def signout(request: Request, session: Session, form: dict[str, str]) -> Response:
    response = RedirectResponse(base(request) + ("/signin" if ui_state(request).tokens else "/"), status_code=303)
    response.delete_cookie(SESSION_COOKIE, path=base(request) + "/")
    return response


# ---------------------------------------------------------------------------------------------
# the queue and a call


def _extra(call: Any, name: str) -> Any:
    """A field a listed call carries only when another feature sets it (``policy_rule``, ``votes``)."""
    value = getattr(call, name, None)
    if value is None:
        value = (getattr(call, "model_extra", None) or {}).get(name)
    return value


@viewing
async def queue(request: Request, session: Session) -> Response:
    try:
        page_no = max(0, int(request.query_params.get("page", "0")))
    except ValueError:
        page_no = 0
    runtime = request.app.state.runtime
    result = await runtime.list_suspended_runs(page=page_no, per_page=PER_PAGE)
    rows = [
        {
            "run": run,
            "call": call,
            "votes": _extra(call, "votes"),
            "hidden": bool(scan({"tool": call.tool_name, "args": call.args})),
        }
        for run in result.runs
        for call in run.tool_calls
    ]
    more = (page_no + 1) * PER_PAGE < result.total
    return page(
        "queue.html",
        **_common(
            request,
            session,
            rows=rows,
            total=result.total,
            unreadable=result.unreadable,
            page_no=page_no,
            more=more,
            refresh=REFRESH_SECONDS,
        ),
    )


async def _find_call(request: Request, run_id: str, call_id: str) -> tuple[Any, Any]:
    run = await request.app.state.runtime.get_suspended_run(run_id)  # SnapshotNotFound: gone
    for call in run.tool_calls:
        if call.tool_call_id == call_id:
            return run, call
    raise ToolCallNotSuspended(f"the call {call_id!r} of run {run_id!r} is not pending")


async def call_view(request: Request, run: Any, call: Any) -> dict[str, Any]:
    """What a call's page shows: the call, its run, its context (request, model text, description)."""
    context = await run_context(request.app.state.runtime, run.run_id)
    ctx = context.calls.get(call.tool_call_id)
    findings = scan(
        {
            "tool": call.tool_name,
            "args": call.args,
            "payload": call.suspend_payload,
            "request": getattr(ctx, "request", None),
            "modelText": getattr(ctx, "model_text", None),
        }
    )
    return {
        "run": run,
        "call": call,
        "ctx": ctx,
        "hidden": summarize(findings) if findings else None,
        "policy_rule": _extra(call, "policy_rule"),
        "votes": _extra(call, "votes"),
        "args_json": json_for_editing(call.args),
    }


def _not_pending(request: Request, session: Session | None, exc: WardenError) -> Response:
    return message(
        request,
        wire.STATUS_BY_CODE.get(exc.code, 404),
        "Not pending",
        f"This call is not waiting any more: {exc.message}",
        session,
        exc.code,
    )


@viewing
async def call_page(request: Request, session: Session) -> Response:
    run_id, call_id = request.query_params.get("run", ""), request.query_params.get("call", "")
    if not run_id or not call_id:
        return message(request, 400, "Bad address", "A call's page needs ?run=RUN&call=CALL.", session)
    try:
        run, call = await _find_call(request, run_id, call_id)
    except (SnapshotNotFound, ToolCallNotSuspended) as exc:
        return _not_pending(request, session, exc)
    view = await call_view(request, run, call)
    return page("call.html", **_common(request, session, **view, fields=_fields(call), values={}, errors={}))


def _fields(call: Any) -> list[FormField]:
    return fields_from_schema(call.resume_schema) if call.kind == "suspend" else []


# ---------------------------------------------------------------------------------------------
# decisions


def resume_data(fields: list[FormField], form: dict[str, str]) -> dict[str, Any]:
    """The data of a resume form: empty inputs left out (defaults apply, or the runtime says
    "required"); a checkbox absent is False; an enum's option is the index of its choice."""
    data: dict[str, Any] = {}
    for f in fields:
        raw = form.get(f"f.{f.name}")
        if f.kind == "boolean":
            data[f.name] = raw is not None
        elif f.kind == "enum":
            if raw is not None and raw.isdigit() and int(raw) < len(f.choices):
                data[f.name] = f.choices[int(raw)]
        elif raw is not None and raw.strip() != "":
            data[f.name] = coerce(f, raw)
    return data


def _parse_args(text: str) -> dict[str, Any]:
    from warden_server.limits import InvalidBody, parse_json_body

    try:
        value = parse_json_body(text.encode("utf-8"))
    except InvalidBody as exc:
        raise FormInvalid(f"the edited arguments are not valid JSON: {exc.message}") from None
    if not isinstance(value, dict):
        raise FormInvalid("the edited arguments must be a JSON object")
    return value


async def apply_decision(
    request: Request,
    agent_id: str,
    action: str,
    *,
    run_id: str,
    tool_call_id: str,
    fingerprint: str | None,
    actor: str | None,
    reason: str | None = None,
    args: dict[str, Any] | None = None,
    data: Any = None,
) -> None:
    """Record ``action`` on the call (the API's path) and let the run continue in the server."""
    app = request.app
    agent = handover.decider(app.state.runtime, agent_id, app.state.external)
    if action == "approve":
        edit = {"args": args} if args is not None else {}
        stream = await agent.approve_tool_call(
            run_id=run_id, tool_call_id=tool_call_id, fingerprint=fingerprint, actor=actor, **edit
        )
    elif action == "decline":
        stream = await agent.decline_tool_call(run_id=run_id, tool_call_id=tool_call_id, reason=reason, actor=actor)
    else:
        stream = await agent.resume_stream(data, run_id=run_id, tool_call_id=tool_call_id, actor=actor)
    StreamPump(stream, app.state.stream_pumps, app.state.secrets)


DONE = {"approve": "Approved", "edit": "Approved with edited arguments", "decline": "Declined", "resume": "Sent"}


@deciding("approver")
async def decide(request: Request, session: Session, form: dict[str, str]) -> Response:
    action = form.get("action", "")
    run_id, call_id = form.get("run", ""), form.get("call", "")
    if action not in DONE or not run_id or not call_id:
        return message(request, 400, "Bad form", "The form names no call or no known action.", session)
    try:
        run, call = await _find_call(request, run_id, call_id)
    except (SnapshotNotFound, ToolCallNotSuspended) as exc:
        return _not_pending(request, session, exc)
    fields = _fields(call)
    data = resume_data(fields, form) if action == "resume" else None
    try:
        args = _parse_args(form.get("args", "")) if action == "edit" else None
        await apply_decision(
            request,
            run.agent_id,
            "approve" if action == "edit" else action,
            run_id=run_id,
            tool_call_id=call_id,
            fingerprint=form.get("fingerprint") or None,
            actor=session.name,
            reason=form.get("reason", "").strip() or None,
            args=args,
            data=data,
        )
    except WardenError as exc:
        status = 422 if isinstance(exc, FormInvalid) else wire.STATUS_BY_CODE.get(exc.code, 409)
        per_field, general = errors_by_field(exc) if action == "resume" else ({}, "")
        view = await call_view(request, run, call)
        return page(
            "call.html",
            status,
            **_common(
                request,
                session,
                **view,
                fields=fields,
                values={k[2:]: v for k, v in form.items() if k.startswith("f.")},
                errors=per_field,
                error=f"{exc.code}: {general or exc.message}",
            ),
        )
    return page(
        "decided.html",
        **_common(request, session, done=DONE[action], call=call, run=run, reason=form.get("reason", "").strip()),
    )


__all__ = ["REFRESH_SECONDS", "UiState", "apply_decision", "call_page", "call_view", "decide", "queue", "signin"]
