"""Warden extensions the headless CLI needs to do over HTTP what it does on a local store
(``warden runs ... --server URL``):

- ``GET /api/resolve?prefix=3f9a2c&kind=run`` (or ``kind=call&runId=...``): the full id a
  shortened one names (``agent_core.id_prefix``: 6+ characters, unique; ambiguous is 409
  ``AGENT_AMBIGUOUS_ID_PREFIX`` listing the candidates). Not under ``/api/runs/{runId}``, whose
  run ids may contain slashes.
- ``POST /api/recover``: crash recovery now (``Runtime.recover``); the server also runs it periodically.
- ``GET /api/audit/verify``: check the audit trail's hash chain (``Runtime.verify_audit``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_core.errors import InvalidRequest
from warden_server.schemas import Id, _Body

RESOLVE = "/api/resolve"
RECOVER = "/api/recover"
AUDIT_VERIFY = "/api/audit/verify"


class ResolveQuery(_Body):
    """``GET /api/resolve``: ``prefix`` of a run id (``kind=run``) or of a tool-call id of ``runId``."""

    prefix: Id
    kind: Literal["run", "call"] = "run"
    run_id: Id | None = Field(default=None, alias="runId")


async def resolve(request: Request) -> Response:
    q = ResolveQuery.model_validate(dict(request.query_params))
    if q.kind == "call" and q.run_id is None:
        raise InvalidRequest("kind=call needs runId: tool-call ids are unique within their run")
    run_id = q.run_id if q.kind == "call" else None
    found = await request.app.state.runtime.resolve_id(q.prefix, run_id=run_id)
    return JSONResponse({"id": found, "kind": q.kind})


async def recover(request: Request) -> Response:
    return JSONResponse({"recovered": await request.app.state.runtime.recover()})


async def verify_audit(request: Request) -> Response:
    report = await request.app.state.runtime.verify_audit()
    return JSONResponse(
        {
            "ok": report.ok,
            "checked": report.checked,
            "unsealed": report.unsealed,
            "brokenSeq": report.broken_seq,
            "problem": report.problem,
        }
    )


__all__ = ["AUDIT_VERIFY", "RECOVER", "RESOLVE", "ResolveQuery", "recover", "resolve", "verify_audit"]
