"""The ``module:runtime`` that ``bench/server_load.py`` serves: one agent, one gated no-op tool.

``$WARDEN_BENCH_DB``: a SQLite file, or a ``postgresql://`` URL (``PostgresStore``).
"""

from __future__ import annotations

import os

from pydantic import BaseModel

from agent_core import Agent, Runtime, create_tool
from agent_core.models import FunctionModel, ModelResponse, ToolCall
from storage import InMemoryStore, PostgresStore, SqliteStore


class RecordIn(BaseModel):
    id: str


async def delete(inp: RecordIn, ctx) -> dict:
    return {"deleted": inp.id}


delete_tool = create_tool(
    id="delete-record", description="Delete a record", input_schema=RecordIn, require_approval=True, execute=delete
)


def model(messages, info):
    last = messages[-1]
    if last.role == "tool":
        return ModelResponse(text="ok")
    return ModelResponse(tool_calls=[ToolCall(name="delete_tool", args={"id": last.content})])


agent = Agent(id="bench", name="Bench", instructions="", model=FunctionModel(model), tools={"delete_tool": delete_tool})
db = os.environ.get("WARDEN_BENCH_DB", "")
if os.environ.get("WARDEN_BENCH_SYNC") == "memory":
    store = InMemoryStore()
elif db.startswith(("postgresql://", "postgres://")):
    store = PostgresStore(db)
else:
    store = SqliteStore(db, synchronous=os.environ.get("WARDEN_BENCH_SYNC", "NORMAL"))
runtime = Runtime(agents={"bench": agent}, storage=store)


def _profile_on_signal(out: str) -> None:
    """``$WARDEN_BENCH_CPROFILE=FILE``: cProfile the server's event-loop thread from SIGUSR1 to SIGUSR2
    (``server_load.py --cprofile FILE`` sends them around the timed phase), stats written to FILE."""
    import cProfile
    import signal

    profiler = cProfile.Profile()
    signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())

    def stop(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR2, stop)


if os.environ.get("WARDEN_BENCH_CPROFILE"):
    _profile_on_signal(os.environ["WARDEN_BENCH_CPROFILE"])


def _gc_time(out: str) -> None:
    """``$WARDEN_BENCH_GC=FILE``: the time the server spends in the garbage collector, per generation,
    from SIGUSR1 to SIGUSR2 (``server_load.py --gc FILE`` sends them around the timed phase)."""
    import gc
    import json
    import signal
    import time

    spent = [0.0, 0.0, 0.0]
    counts = [0, 0, 0]
    started: list[float] = []

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            started[:] = [time.perf_counter()]
        elif started:
            spent[info["generation"]] += time.perf_counter() - started[0]
            counts[info["generation"]] += 1

    def write(*_: object) -> None:
        gc.callbacks.remove(on_gc)
        with open(out, "w") as f:
            json.dump({"seconds": spent, "collections": counts}, f)

    signal.signal(signal.SIGUSR1, lambda *_: gc.callbacks.append(on_gc))
    signal.signal(signal.SIGUSR2, write)


if os.environ.get("WARDEN_BENCH_GC"):
    _gc_time(os.environ["WARDEN_BENCH_GC"])
