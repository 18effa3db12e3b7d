"""``GET /api/runs/{runId}/context``: what an operator needs beside a pending call (Warden extension).

The stored run's calls with their context (``agent_core.decision_context``:
the user's request, the model's text before the call, the other calls of the
step, the tool's description), its conversation (a reopened run is replayed
from it) and the audit log's decisions on the run (who decided what). A run
without a snapshot (finished) answers with its decisions only. The console's
``RemoteBackend.run_context`` reads it (``tui.context.RunContext.from_json``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_core.decision_context import call_context, transcript
from agent_core.snapshot import RunState

PATH = "/api/runs/{runId}/context"


def _call_ids(state: RunState) -> list[str]:
    out: list[str] = []
    for call in state.calls:
        out.append(call.id)
        if call.child is not None:
            out.extend(_call_ids(call.child))
    return out


def _describer(runtime: Any) -> Any:
    def describe(agent_path: list[str], tool_name: str) -> str | None:
        try:
            owner = runtime.get_agent(agent_path[0]).descendant(agent_path)
            tool = owner.tools.get(tool_name) if owner else None
        except Exception:  # an agent or tool this runtime does not know
            return None
        return getattr(tool, "description", None) if tool else None

    return describe


async def get_run_context(request: Request) -> Response:
    runtime = request.app.state.runtime
    run_id = request.path_params["runId"]
    store = runtime.store
    decisions = [
        {
            "toolCallId": a.tool_call_id,
            "toolName": a.tool_name,
            "decision": a.decision,
            "actor": a.actor,
            "reason": a.reason,
            "decidedAt": a.decided_at,
        }
        for a in await store.audit_log(run_id)
    ]
    out: dict[str, Any] = {"runId": run_id, "calls": {}, "transcript": [], "decisions": decisions}
    row = await store.get_run(run_id)
    if row is not None and row.snapshot:
        state = RunState.from_json(row.snapshot, run_id=run_id, store=store.name)
        describe = _describer(runtime)
        for call_id in _call_ids(state):
            ctx = call_context(state, call_id, describe_tool=describe)
            if ctx is not None:
                out["calls"][call_id] = ctx.model_dump(mode="json", by_alias=True)
        out["transcript"] = [t.model_dump(mode="json", by_alias=True) for t in transcript(state)]
    return JSONResponse(out)


__all__ = ["PATH", "get_run_context"]
