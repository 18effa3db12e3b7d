"""The agent that ``bench/chaos.py`` kills processes around: importable as ``--app bench.chaos_app:build``.

One gated tool, ``act``, that records every execution (run, call, pid) in a
separate SQLite file before it returns, and sleeps a little so kills land
inside it too. The model calls ``act`` once or twice (``CHAOS_CALLS``) on a
user turn and, after the tool results, answers "done" and records that the run
reached its final model step. Paths and the lease come from the environment
(``CHAOS_DB``: a SQLite path or a ``postgresql://`` URL, ``CHAOS_EXEC``, ``CHAOS_LEASE``) so the CLI
and ``warden serve --app bench.chaos_app:build`` (``bench/chaos_instances.py``) can load it too.
The execution log is written with ``synchronous = FULL``: each row is fsynced before the tool returns.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from typing import Any

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, Message, ModelRequestInfo, ModelResponse, ToolCall
from storage import open_store


class ActIn(BaseModel):
    n: int


def _exec_db(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")  # fsynced before the tool returns: the log outlives any kill
    db.execute("CREATE TABLE IF NOT EXISTS executions (run_id TEXT, call_id TEXT, pid INTEGER, at REAL)")
    db.execute("CREATE TABLE IF NOT EXISTS finished (run_id TEXT, pid INTEGER, at REAL)")
    return db


def build_agent(exec_path: str, calls: int) -> Agent:
    async def act(inp: ActIn, ctx: Any) -> dict[str, Any]:
        db = _exec_db(exec_path)
        db.execute(
            "INSERT INTO executions VALUES (?, ?, ?, ?)", (ctx.run_id, ctx.tool_call_id, os.getpid(), time.time())
        )
        db.close()
        time.sleep(random.uniform(0, 0.01))
        return {"acted": inp.n}

    def model(messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        if messages[-1].role == "user":
            return ModelResponse(tool_calls=[ToolCall(name="act", args={"n": i}, id=f"c{i}") for i in range(calls)])
        db = _exec_db(exec_path)
        db.execute("INSERT INTO finished VALUES (?, ?, ?)", (info.run_id, os.getpid(), time.time()))
        db.close()
        return ModelResponse(text="done")

    tool = create_tool(id="act", description="A side effect", input_schema=ActIn, execute=act, require_approval=True)
    return Agent(id="chaos", model=FunctionModel(model), tools={"act": tool})


def build() -> Runtime:
    """The runtime, from the environment (``--app bench.chaos_app:build``)."""
    lease = float(os.environ.get("CHAOS_LEASE", "2"))
    agent = build_agent(os.environ["CHAOS_EXEC"], int(os.environ.get("CHAOS_CALLS", "1")))
    return Runtime(agents={"chaos": agent}, storage=open_store(os.environ["CHAOS_DB"]), lease_seconds=lease)
