"""The decisions of ``/ui/``: approve, edit then approve, decline, resume with a form's data.

They go through the same path as the API's decision routes (``warden_server.handover.decider``:
the hosted agent, or the handover recorder), with the signed-in token's name as the actor; the
run then continues in the server (``StreamPump``) whether or not the browser waits.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agent_core import wire
from agent_core.errors import SnapshotNotFound, ToolCallNotSuspended, WardenError
from agent_core.resume_fields import FormField, coerce, errors_by_field
from warden_server import handover
from warden_server.sse import StreamPump
from warden_server.ui.forms import FormInvalid
from warden_server.ui.guards import deciding, message, page_context
from warden_server.ui.pages import call_view, find_call, form_fields, not_pending
from warden_server.ui.render import page
from warden_server.ui.session import Session


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
        run, call = await find_call(request, run_id, call_id)
    except (SnapshotNotFound, ToolCallNotSuspended) as exc:
        return not_pending(request, session, exc)
    fields = form_fields(call)
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
        if action == "edit":  # the operator's edit, shown again (open) with what was wrong with it
            view.update(args_json=form.get("args", ""), edit_open=True)
        return page(
            "call.html",
            status,
            **page_context(
                request,
                session,
                **view,
                fields=fields,
                values={k[2:]: v for k, v in form.items() if k.startswith("f.")},
                errors=per_field,
                error="Check the fields below."
                if per_field and not general
                else f"{exc.code}: {general or exc.message}",
            ),
        )
    return page(
        "decided.html",
        **page_context(request, session, done=DONE[action], call=call, run=run, reason=form.get("reason", "").strip()),
    )


__all__ = ["DONE", "apply_decision", "decide", "resume_data"]
