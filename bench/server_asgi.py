"""The server application's own CPU per request, in process: no uvicorn, no sockets, one request at a time.

``create_app``'s ASGI app is called directly (scope, receive, send) on ``server_load_app``'s agent
over an ``InMemoryStore``, with a bearer token, as uvicorn would call it. Printed, in µs of CPU
(``time.process_time``) per request: ``GET /health`` (the framework and middleware alone),
``GET /api/suspended-runs/{runId}``, approve-tool-call with its SSE answer read to the end, and
the runtime's own ``approve_tool_call`` for as many runs (what the server adds is the difference).
Steadier than ``server_load.py`` on a shared machine (nothing else in the measured process).

``--compare DIR`` runs the same in a child process on another checkout's code (``git worktree
add DIR <commit>``), in turns with this one.

    python bench/server_asgi.py --runs 1500 --repeat 3 --compare ../base-server
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TOKEN = "bench-" + "t" * 32
MAX_RUNS = 20_000


async def _call(app: Any, method: str, path: str, body: bytes = b"") -> list[dict[str, Any]]:
    headers = [
        (b"host", b"127.0.0.1:4111"),
        (b"accept", b"*/*"),
        (b"accept-encoding", b"gzip, deflate"),
        (b"connection", b"keep-alive"),
        (b"user-agent", b"python-httpx/0.28.1"),
        (b"authorization", b"Bearer " + TOKEN.encode()),
    ]
    if body:
        headers += [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 4111),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "method": method,
        "root_path": "",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": headers,
        "state": {},
    }
    sent: list[dict[str, Any]] = []
    done = asyncio.Event()
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    await app(scope, receive, send)
    return sent


async def _suspend(agent: Any, n: int, tag: str) -> list[tuple[str, str]]:
    out = []
    for i in range(n):
        s = await agent.stream(f"{tag}-{i}")
        async for _ in s.full_stream:
            pass
        out.append((s.run_id, s.suspend_payload.tool_call_id))
    return out


async def measure(runs: int) -> dict[str, float]:
    """µs of CPU per request of each kind (this process's code: ``sys.path`` decides which checkout)."""
    os.environ["WARDEN_BENCH_SYNC"] = "memory"
    import server_load_app

    from warden_server.app import create_app

    runtime = server_load_app.runtime
    app = create_app(runtime, token=TOKEN, manage_runtime=False)
    async with runtime:
        agent = runtime.get_agent("bench")
        pending = await _suspend(agent, runs, "http")
        for _ in range(200):
            await _call(app, "GET", "/health")
        out: dict[str, float] = {}
        t0 = time.process_time()
        for _ in range(runs):
            await _call(app, "GET", "/health")
        out["health"] = time.process_time() - t0
        t0 = time.process_time()
        for run_id, _ in pending:
            await _call(app, "GET", f"/api/suspended-runs/{run_id}")
        out["get_run"] = time.process_time() - t0
        t0 = time.process_time()
        for run_id, call_id in pending:
            body = json.dumps({"runId": run_id, "toolCallId": call_id}).encode()
            sent = await _call(app, "POST", "/api/agents/bench/approve-tool-call", body)
            assert sent[0]["status"] == 200, sent[:2]
        out["approve_sse"] = time.process_time() - t0
        direct = await _suspend(agent, runs, "direct")
        t0 = time.process_time()
        for run_id, call_id in direct:
            s = await agent.approve_tool_call(run_id=run_id, tool_call_id=call_id)
            async for _ in s.full_stream:
                pass
            assert s.status == "finished", s.status
        out["runtime_approve"] = time.process_time() - t0
    return {k: v / runs * 1e6 for k, v in out.items()}


def _child(code: Path, runs: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "bench"), str(code)]))
    done = subprocess.run(
        [sys.executable, __file__, "--runs", str(runs), "--child"], cwd=code, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"{code}: {done.stderr.strip()[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=1500, help=f"requests of each kind (1..{MAX_RUNS})")
    p.add_argument("--repeat", type=int, default=1, help="measurements of each checkout (1..20)")
    p.add_argument("--compare", type=Path, default=None, help="another checkout, measured in turns with this one")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if not (1 <= a.runs <= MAX_RUNS and 1 <= a.repeat <= 20):
        raise SystemExit(f"--runs must be 1..{MAX_RUNS} and --repeat 1..20")
    if a.child:
        print(json.dumps(asyncio.run(measure(a.runs))))
        return
    if a.compare is not None and not (a.compare / "warden_server" / "__init__.py").is_file():
        raise SystemExit(f"--compare {a.compare}: no warden_server there (give a checkout of this repository)")
    codes = [(a.compare.resolve().name, a.compare.resolve())] if a.compare is not None else []
    codes.append(("this", REPO))
    print(f"server_asgi: {a.runs} requests of each kind, in process, InMemoryStore, µs of CPU per request")
    for _ in range(a.repeat):
        for label, code in codes:
            r = _child(code, a.runs)
            print(
                f"  {label:<12} health {r['health']:5.0f}   GET run {r['get_run']:5.0f}   "
                f"approve (SSE) {r['approve_sse']:5.0f}   runtime approve alone {r['runtime_approve']:5.0f}   "
                f"server's share of an approve {r['approve_sse'] - r['runtime_approve']:5.0f}",
                flush=True,
            )
    print(f"  machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
