"""The pages behind signed approval links: ``/ui/links/{token}``.

A GET only shows the call (and, for an approve or decline link, a confirm
button): link previewers and mail scanners fetch links, and must not decide.
The POST decides, audited with the link actor (``approval-link``, or
``--link-actor NAME``). What a link can no longer do, it says, and decides
nothing: altered → 403, expired → 410, used / decided by someone else / the
call's arguments changed (another fingerprint) → 409.

No session or CSRF token is needed: the signed token is the credential, and
only whoever holds the link has it (pages send ``Referrer-Policy: same-origin``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agent_core import wire
from agent_core.approval_links import LINK_ACTOR, LinkClaims, LinkExpired, LinkInvalid, LinkSigner, LinkSpent
from agent_core.errors import (
    AlreadyDecided,
    ApprovalExpired,
    FingerprintMismatch,
    SnapshotNotFound,
    ToolCallNotSuspended,
    WardenError,
)
from warden_server.ui.decide import apply_decision
from warden_server.ui.forms import FormInvalid, read_form
from warden_server.ui.guards import base, message
from warden_server.ui.pages import call_view
from warden_server.ui.render import page

_STATUS = {LinkInvalid.code: 403, LinkExpired.code: 410, LinkSpent.code: 409}


@dataclass
class LinkConfig:
    signer: LinkSigner
    actor: str = LINK_ACTOR


def _config(request: Request) -> LinkConfig | None:
    config: LinkConfig | None = getattr(request.app.state, "links", None)
    return config


def _refused(request: Request, exc: WardenError) -> Response:
    titles = {LinkInvalid.code: "Invalid link", LinkExpired.code: "Link expired", LinkSpent.code: "Link used up"}
    return message(request, _STATUS[exc.code], titles[exc.code], exc.message, code=exc.code)


async def _spent(request: Request, claims: LinkClaims, actor: str) -> WardenError:
    """Why a call a link names is no longer pending: expired (410), or this link (or its sibling)
    was used, or who decided it (409)."""
    runtime = request.app.state.runtime
    decided = [a for a in await runtime.store.audit_log(claims.run_id) if a.tool_call_id == claims.tool_call_id]
    decisions = [a for a in decided if a.decision != "notification-failed"]
    if not decisions:
        return LinkSpent("this link was already used, or the call is no longer pending")
    last = decisions[-1]
    if last.decision == "expired":
        return LinkExpired("this link has expired: the call's deadline passed and it was declined")
    if last.actor == actor:
        return LinkSpent(f"this link was already used: the call was {last.decision} through an approval link")
    return LinkSpent(f"the call was already decided ({last.decision}) by {last.actor or 'another operator'}")


async def _pending(request: Request, claims: LinkClaims, config: LinkConfig) -> tuple[Any, Any]:
    """The run and call a link names, still pending with the link's fingerprint; else ``LinkSpent``."""
    try:
        run = await request.app.state.runtime.get_suspended_run(claims.run_id)
        call = next((c for c in run.tool_calls if c.tool_call_id == claims.tool_call_id), None)
    except SnapshotNotFound:
        call = None
    if call is None:
        raise await _spent(request, claims, config.actor)
    if call.kind != "approval":  # input requests and interrupted calls are answered from the queue
        raise LinkSpent(f"this call is not waiting for an approval ({call.kind}): open it from the queue")
    if call.fingerprint != claims.fingerprint:
        raise LinkSpent("the call's arguments changed since this link was sent (stale fingerprint); open the queue")
    return run, call


async def _check(request: Request) -> tuple[LinkConfig, LinkClaims, Any, Any]:
    config = _config(request)
    if config is None:
        raise LinkInvalid("this server issues no approval links (it was started without --public-url)")
    claims = config.signer.verify(request.path_params["token"])
    run, call = await _pending(request, claims, config)
    return config, claims, run, call


async def link_page(request: Request) -> Response:
    try:
        _, claims, run, call = await _check(request)
    except (LinkInvalid, LinkExpired, LinkSpent) as exc:
        return _refused(request, exc)
    view = await call_view(request, run, call)
    return page("link.html", **view, base=base(request), session=None, action=claims.action, auth=False)


async def link_decide(request: Request) -> Response:
    try:
        config, claims, run, call = await _check(request)
        if claims.action == "view":
            raise LinkInvalid("a view link decides nothing")
        form = await read_form(request)
    except (LinkInvalid, LinkExpired, LinkSpent) as exc:
        return _refused(request, exc)
    except FormInvalid as exc:
        return message(request, 400, "Bad form", exc.message, code=exc.code)
    reason = form.get("reason", "").strip() or None
    try:
        await apply_decision(
            request,
            run.agent_id,
            claims.action,
            run_id=claims.run_id,
            tool_call_id=claims.tool_call_id,
            fingerprint=claims.fingerprint,
            actor=config.actor,
            reason=reason if claims.action == "decline" else None,
        )
    except WardenError as exc:  # decided in between (compare-and-set), or the fingerprint moved
        if isinstance(exc, ApprovalExpired):
            return _refused(request, LinkExpired(f"this link has expired: {exc.message}"))
        if isinstance(exc, ToolCallNotSuspended | AlreadyDecided | FingerprintMismatch):
            return _refused(request, await _spent(request, claims, config.actor))
        status = wire.STATUS_BY_CODE.get(exc.code, 409)
        return message(request, status, "Not decided", exc.message, code=exc.code)
    done = "Approved" if claims.action == "approve" else "Declined"
    return page("decided.html", base=base(request), session=None, auth=False, done=done, call=call, reason=reason)


__all__ = ["LinkConfig", "link_decide", "link_page"]
