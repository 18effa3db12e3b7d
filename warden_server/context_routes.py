"""``GET /api/runs/{runId}/context``: what an operator needs beside a pending call (Warden extension).

The stored run's calls with their context (``agent_core.decision_context``:
the user's request, the model's text before the call, the other calls of the
step, the tool's description), its conversation (a reopened run is replayed
from it) and the audit log's decisions on the run (who decided what). A run
without a snapshot (finished) answers with its decisions only. The console's
``RemoteBackend.run_context`` reads it (``agent_core.decision_context.RunContextView.from_json``).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_core.decision_context import run_context

PATH = "/api/runs/{runId}/context"


async def get_run_context(request: Request) -> Response:
    run_id = request.path_params["runId"]
    return JSONResponse((await run_context(request.app.state.runtime, run_id)).to_json())


__all__ = ["PATH", "get_run_context"]
