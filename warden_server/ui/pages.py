"""The pages of ``/ui/`` that show: sign-in, the queue of pending calls, and a page per call.

A call's page shows what the console's approval dialog shows (``call_view``); its forms post
to ``warden_server.ui.decide``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agent_core import wire
from agent_core.decision_context import run_context
from agent_core.errors import SnapshotNotFound, ToolCallNotSuspended, WardenError
from agent_core.resume_fields import FormField, fields_from_schema
from agent_core.untrusted_text import scan, summarize
from warden_server.ui.forms import FormInvalid, read_form
from warden_server.ui.guards import (
    base,
    deciding,
    message,
    page_context,
    same_origin,
    set_session_cookie,
    ui_state,
    viewing,
)
from warden_server.ui.render import json_for_editing, page
from warden_server.ui.session import SESSION_COOKIE, Session

REFRESH_SECONDS = 5
PER_PAGE = 50


# ---------------------------------------------------------------------------------------------
# sign-in


async def signin_form(request: Request) -> Response:
    if ui_state(request).tokens is None:
        return RedirectResponse(base(request) + "/", status_code=303)
    return page("signin.html", **page_context(request, None, error=None))


async def signin(request: Request) -> Response:
    state = ui_state(request)
    if state.tokens is None:
        return RedirectResponse(base(request) + "/", status_code=303)
    try:
        form = await read_form(request)
    except FormInvalid as exc:
        return page("signin.html", 400, **page_context(request, None, error=exc.message))
    if not same_origin(request):
        return page("signin.html", 403, **page_context(request, None, error="This form was not sent by this server."))
    token = form.get("token", "").strip()
    identity = state.tokens.lookup(token.encode("utf-8")) if token else None
    if identity is None:
        return page("signin.html", 401, **page_context(request, None, error="Unknown token."))
    _, cookie = state.keeper.issue(identity)
    response = RedirectResponse(base(request) + "/", status_code=303)
    set_session_cookie(response, request, cookie, state.keeper.lifetime)
    return response


@deciding("viewer")
async def signout(request: Request, session: Session, form: dict[str, str]) -> Response:
    ui_state(request).keeper.revoke(session)
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
        **page_context(
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


async def find_call(request: Request, run_id: str, call_id: str) -> tuple[Any, Any]:
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


def not_pending(request: Request, session: Session | None, exc: WardenError) -> Response:
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
        run, call = await find_call(request, run_id, call_id)
    except (SnapshotNotFound, ToolCallNotSuspended) as exc:
        return not_pending(request, session, exc)
    view = await call_view(request, run, call)
    return page("call.html", **page_context(request, session, **view, fields=form_fields(call), values={}, errors={}))


def form_fields(call: Any) -> list[FormField]:
    return fields_from_schema(call.resume_schema) if call.kind == "suspend" else []


__all__ = ["PER_PAGE", "REFRESH_SECONDS", "call_page", "call_view", "find_call", "form_fields", "queue", "signin"]
